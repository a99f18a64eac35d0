// SPDX-License-Identifier: MIT
/*
 * ring.c - the ring interface of the kdev room: what the schedules of
 * coll/ (kdev_sched.c, kdev_p2p.c) emit goes through here, and so does
 * completion: reaping the completion ring, draining it (spin, then sleep
 * on QUEUE_WAIT or on this rank's semaphore), turning a failed completion
 * into an error that names its cause and the peer involved, and the
 * cancel after a failure so that the peers stop at once.
 *
 * Abort, CCOM_OP_TIMEOUT and dead/broken local peers are polled between
 * sleeps of at most WAIT_SLICE_US (the wait policy of proxy/wait.h, with
 * the host segment's liveness checks).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/comm.h"
#include "proxy/proxy.h"
#include "proxy/wait.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/misc.h"

#define WAIT_SLICE_US 20000

/* Cookies: kdev.h. */
#define W_COPY CCOM_KDEV_W_COPY
#define W_REDUCE CCOM_KDEV_W_REDUCE
#define W_SIGNAL CCOM_KDEV_W_SIGNAL
#define W_WAIT CCOM_KDEV_W_WAIT
#define COOKIE(what, l) CCOM_KDEV_COOKIE(what, l)

/*
 * Grace period for the root cause: a peer's semaphore failed, its pidfd or
 * broken flag (transport/shm.c) tells whether it died or aborted.
 */
static int root_cause(struct ccom_kdev *kd)
{
	struct ccom_wait w;
	int i, err = 0;

	ccom_wait_begin(&w, kd->comm);
	for (i = 0; i < 100 && !err; i++) {
		w.next_check_us = 1;	/* due now: check the peers' pidfds and flags */
		err = ccom_wait_check(&w);
		if (!err)
			ccom_sleep_us(5000, NULL);
	}
	ccom_wait_end(&w);
	return err;
}

static int blame_peer(struct ccom_kdev *kd, int l, const char *what)
{
	struct ccomComm *comm = kd->comm;
	struct ccom_shm *shm = comm->shm;
	int peer = comm->local_to_rank[l], err = root_cause(kd);

	if (err)
		return err;
	if (shm) {
		shm->culprit = peer;
		shm->reason = CCOM_SHM_DIED;
	}
	ccom_proxy_note_failed(comm, peer);
	ccom_set_last_error("rank %d: peer rank %d (pid %d) is gone: %s (its /dev/nccom file was closed: it died or destroyed the communicator during the operation)",
			    comm->rank, peer, comm->peers[peer].pid, what);
	return -ECONNRESET;
}

static int cqe_error(struct ccom_kdev *kd, const struct nccom_cqe *cqe)
{
	struct ccomComm *comm = kd->comm;
	int l = (int)(cqe->cookie & 0xffff), what = (int)((cqe->cookie >> 16) & 0xff);
	int peer = l < kd->nlocal ? comm->local_to_rank[l] : -1;

	if (cqe->status == -EPIPE && what == W_WAIT && peer >= 0)
		return blame_peer(kd, l, "waiting on its semaphore failed with EPIPE");
	if (cqe->status == -ECANCELED && ccom_comm_aborted(comm)) {
		ccom_set_last_error("rank %d: the communicator %s", comm->rank,
				    ccom_comm_stop_reason(comm));
		return -ECANCELED;
	}
	if (cqe->status == -EFAULT) {
		int err = peer >= 0 && peer != comm->rank ? root_cause(kd) : 0;

		if (err)	/* the peer died: its registrations died with it */
			return err;
		if (peer >= 0 && peer != comm->rank)
			ccom_set_last_error("rank %d: a buffer of this rank or of peer rank %d was freed or remapped while the collective ran (the driver invalidated its registration); keep buffers alive until the collective completes",
					    comm->rank, peer);
		else
			ccom_set_last_error("rank %d: a buffer of this rank was freed or remapped while the collective ran (the driver invalidated its registration)",
					    comm->rank);
		return -EFAULT;
	}
	ccom_set_last_error("rank %d: the nccom engine failed a %s descriptor%s%.0d: %s",
			    comm->rank,
			    what == W_COPY ? "copy" : what == W_REDUCE ? "reduce" :
			    what == W_SIGNAL ? "signal" : "wait",
			    peer >= 0 ? " involving peer rank " : "", peer >= 0 ? peer : 0,
			    strerror(-cqe->status));
	return cqe->status == -EPIPE ? -ECONNRESET : (cqe->status ? cqe->status : -EIO);
}

/* Consume ready completions; the first failure is returned (with its cause). */
static int reap(struct ccom_kdev *kd)
{
	struct ccom_kdev_ring *r = &kd->ring;
	uint32_t ready = ccom_kdev_cq_ready(r), i;
	int err = 0;

	for (i = 0; i < ready && !err; i++) {
		struct nccom_cqe *cqe = ccom_kdev_cqe(r, i);

		if (cqe->status)
			err = cqe_error(kd, cqe);
	}
	ccom_kdev_cq_advance(r, i);
	return err;
}

/* After a failure: peers and our own queue stop at once. */
static int fail(struct ccom_kdev *kd, int err)
{
	struct ccom_shm *shm = kd->comm->shm;

	/* Broken flag first, so that peers woken by the cancel find the cause. */
	ccom_shm_mark_broken(shm, err == -ECANCELED ? CCOM_SHM_ABORTED : CCOM_SHM_FAILED);
	ccom_kdev_cancel(kd);
	return err;
}

/*
 * Sleep until completions arrive (QUEUE_WAIT), reaping them.  @until: stop
 * when cq_head reaches it; with @sem_value non-zero, sleep on this rank's
 * semaphore instead (one wakeup for the whole collective) as long as the
 * completion ring cannot fill.
 */
int ccom_kdev_drain(struct ccom_kdev *kd, uint32_t until, uint64_t sem_value, bool spin)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct ccom_kdev_spin sp;
	struct ccom_wait w;
	uint32_t head;
	int err = 0;

	ccom_kdev_spin_reset(&sp);
	ccom_wait_begin(&w, kd->comm);
	for (;;) {
		head = r->cq_head;
		err = reap(kd);
		if (err || r->cq_head == until)
			break;
		if (r->cq_head != head)
			ccom_kdev_spin_reset(&sp);
		err = ccom_wait_check(&w);
		if (err)
			break;
		if (__atomic_load_n(&r->khdr->state, __ATOMIC_ACQUIRE) == NCCOM_QUEUE_ERROR) {
			/* The failing cqe is written before the state: reap it next pass. */
			err = reap(kd);
			if (err)
				break;
			if (!ccom_kdev_cq_ready(r)) {
				ccom_set_last_error("rank %d: the nccom queue entered the error state (%d) without a failing completion",
						    kd->comm->rank, r->khdr->error);
				err = -EIO;
				break;
			}
			continue;
		}
		if (spin && ccom_kdev_spin(&sp))
			continue;
		if (sem_value && until - r->cq_head <= r->depth) {
			struct timespec ts;
			struct nccom_sem_wait sw = { .size = sizeof(sw), .handle = kd->sem,
						     .value = sem_value };

			clock_gettime(CLOCK_MONOTONIC, &ts);
			sw.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
					WAIT_SLICE_US * 1000ull;
			err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_WAIT, &sw);
			if (err == -ETIMEDOUT || err == -EINTR)
				err = 0;
			if (!err && sw.out_value >= sem_value)
				sem_value = 0;	/* reached: the last cqes follow at once */
		} else {
			err = ccom_kdev_wait_cq(kd, WAIT_SLICE_US);
		}
		if (err)
			break;
	}
	ccom_wait_end(&w);
	return err;
}

int ccom_kdev_complete(struct ccom_kdev *kd)
{
	int err = ccom_kdev_publish(kd);

	if (!err)
		err = ccom_kdev_drain(kd, kd->ring.sq_tail, 0, true);
	return err ? fail(kd, err) : 0;
}

/* ---- emission ---- */

struct nccom_desc *ccom_kdev_next_desc(struct ccom_kdev *kd, int *err)
{
	struct nccom_desc *d;

	while (!(d = ccom_kdev_get_sqe(&kd->ring))) {
		/* Ring full: let the engine see what we wrote and wait for room. */
		*err = ccom_kdev_publish(kd);
		if (!*err)
			*err = ccom_kdev_drain(kd, kd->ring.cq_head + 1, 0, false);
		if (*err)
			return NULL;
	}
	return d;
}

int ccom_kdev_fail(struct ccom_kdev *kd, int err)
{
	return fail(kd, err);
}

int ccom_kdev_emit_copy(struct ccom_kdev *kd, uint32_t dh, uint64_t doff, uint32_t sh,
			uint64_t soff, uint64_t len, int l)
{
	struct nccom_desc *d;
	int err = 0;

	if (!len)
		return 0;
	d = ccom_kdev_next_desc(kd, &err);
	if (!d)
		return err;
	d->opcode = NCCOM_OP_COPY;
	d->cookie = COOKIE(W_COPY, l);
	d->dst_handle = dh;
	d->dst_offset = doff;
	d->src_handle = sh;
	d->src_offset = soff;
	d->length = len;
	return 0;
}

int ccom_kdev_emit_sem(struct ccom_kdev *kd, int opcode, uint32_t sem, uint64_t value, int l)
{
	struct nccom_desc *d;
	int err = 0;

	d = ccom_kdev_next_desc(kd, &err);
	if (!d)
		return err;
	d->opcode = (uint8_t)opcode;
	d->cookie = COOKIE(opcode == NCCOM_OP_SEM_WAIT ? W_WAIT : W_SIGNAL, l);
	d->sem_handle = sem;
	d->value = value;
	return 0;
}

int ccom_kdev_emit_reduce(struct ccom_kdev *kd, uint8_t dtype, uint8_t op, uint32_t dh,
			  uint64_t doff, uint32_t sh, uint64_t soff, uint32_t s2h, uint64_t s2off,
			  uint64_t count, int l)
{
	struct nccom_desc *d;
	int err = 0;

	if (!count)
		return 0;
	d = ccom_kdev_next_desc(kd, &err);
	if (!d)
		return err;
	d->opcode = NCCOM_OP_REDUCE;
	d->dtype = dtype;
	d->op = op;
	d->cookie = COOKIE(W_REDUCE, l);
	d->dst_handle = dh;
	d->dst_offset = doff;
	d->src_handle = sh;
	d->src_offset = soff;
	d->src2_handle = s2h;
	d->src2_offset = s2h ? s2off : 0;
	d->count = count;
	return 0;
}

bool ccom_kdev_spin(struct ccom_kdev_spin *s)
{
	int64_t now;

	if (++s->n < 64) {
		__builtin_ia32_pause();
		return true;
	}
	now = ccom_now_us();
	if (!s->until_us)
		s->until_us = now + CCOM_KDEV_SPIN_US;
	if (now >= s->until_us)
		return false;
	sched_yield();	/* let the engine threads and the peers run */
	return true;
}

int ccom_kdev_publish(struct ccom_kdev *kd)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_doorbell db = { .size = sizeof(db), .handle = r->handle };
	int err;

	if (r->sq_tail == r->sq_published)
		return 0;
	/* Release: the descriptor stores above happen before the engine sees the tail. */
	__atomic_store_n(&r->khdr->sq_tail, r->sq_tail, __ATOMIC_RELEASE);
	r->sq_published = r->sq_tail;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_DOORBELL, &db);
	if (err)
		ccom_set_last_error("kdev: rank %d: QUEUE_DOORBELL failed: %s%s", kd->comm->rank,
				    strerror(-err), err == -EIO ? " (the queue is in the error state)" : "");
	return err;
}

int ccom_kdev_wait_cq(struct ccom_kdev *kd, int64_t timeout_us)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_wait qw = { .size = sizeof(qw), .handle = r->handle };
	struct timespec ts;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	qw.cq_tail = r->cq_head + ccom_kdev_cq_ready(r);
	qw.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
			(uint64_t)timeout_us * 1000ull;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_WAIT, &qw);
	return err == -ETIMEDOUT || err == -EINTR ? 0 : err;
}
