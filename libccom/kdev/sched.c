// SPDX-License-Identifier: MIT
/*
 * sched.c - descriptor schedules of the direct intra-host algorithms on the
 * nccom engine (kdev/ layer).
 *
 * Every collective runs in the same three-phase shape on every rank, with
 * this rank's timeline semaphore advanced to three values per collective
 * (v1 < v2 < v3, derived from the exchange sequence, so identical on all
 * ranks):
 *
 *   exchange  grant packets to/from every local peer (grant.c): peers'
 *             input buffers are ready and visible through imports;
 *   phase A   work that reads only peers' INPUT buffers: AllReduce/Reduce
 *             reduce this rank's slice (1/n of the elements) from every
 *             rank's input; ReduceScatter reduces this rank's block;
 *             AllGather/AlltoAll/Broadcast copy straight from peers' inputs
 *             into this rank's output (one copy, no staging);
 *   SIGNAL v1 (phase A done: my slice is ready, I stopped reading inputs)
 *   phase B   AllReduce (and the Reduce root) wait for each peer's v1 and
 *             copy that peer's reduced slice out of its output buffer;
 *             an in-place AlltoAll trades blocks pairwise (alltoall_inplace_a/b);
 *   SIGNAL v2 (I stopped reading peers' buffers)
 *   WAIT every peer >= v2  (nobody returns while others still read its memory)
 *   SIGNAL v3 (collective complete: the host thread sleeps on this one value)
 *
 * Reductions are chunked (CCOM_KDEV_RCHUNK bytes of output per descriptor
 * group) so that the n-1 passes over a chunk hit the cache.  ccomAvg is
 * reduced as a sum on the engine and divided on the CPU between phase A
 * and v1.  Dtypes the engine does not reduce (no NCCOM_FEAT_REDUCE_FP)
 * fall back to coll/'s shm path, decided identically on every rank.
 *
 * Failures: a descriptor that fails stops the queue; its cookie names the
 * peer involved.  A semaphore wait failing with -EPIPE means the peer's
 * /dev/nccom file is gone (died, aborted, destroyed): the error names it.
 * Abort, CCOM_OP_TIMEOUT and dead/broken local peers (transport/shm.c's
 * checks) are polled between sleeps of at most 20 ms.  On any error the
 * queue and semaphore are destroyed (ccom_kdev_cancel): queued descriptors
 * are cancelled and every peer waiting on this rank fails at once.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "coll/coll.h"
#include "coll/reduce.h"
#include "init/comm.h"
#include "kdev/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define KDEV_RCHUNK (256u << 10)
#define KDEV_SLICE_ALIGN 64	/* elements */
#define WAIT_SLICE_US 20000
/* Larger collectives keep the engines busy for long: sleep at once, leave them the CPUs. */
#define KDEV_SPIN_MAX_BYTES (1u << 20)

/* Cookies: kdev.h. */
#define W_COPY CCOM_KDEV_W_COPY
#define W_REDUCE CCOM_KDEV_W_REDUCE
#define W_SIGNAL CCOM_KDEV_W_SIGNAL
#define W_WAIT CCOM_KDEV_W_WAIT
#define COOKIE(what, l) CCOM_KDEV_COOKIE(what, l)
#define NO_PEER CCOM_KDEV_NO_PEER

struct kplan {
	struct ccom_kdev *kd;
	struct ccomComm *comm;
	struct ccom_op *op;
	int n, me;
	size_t esz;
	uint8_t ndt, nop;
	bool avg;
	struct ccom_kdev_view *v;	/* [n * NPUB]: [l*2] input, [l*2+1] output */
	uint32_t dst_h;			/* my output registration */
	uint64_t dst_off;
	char *dst;			/* my output, CPU address */
	uint32_t tmp_h;			/* scratch (in-place AlltoAll) */
	uint64_t tmp_off;
	uint64_t v1, v2, v3;
	int err;
};

static const uint8_t dt_map[ccomNumTypes] = {
	[ccomInt8] = NCCOM_DTYPE_INT8, [ccomUint8] = NCCOM_DTYPE_UINT8,
	[ccomInt32] = NCCOM_DTYPE_INT32, [ccomUint32] = NCCOM_DTYPE_UINT32,
	[ccomInt64] = NCCOM_DTYPE_INT64, [ccomUint64] = NCCOM_DTYPE_UINT64,
	[ccomFloat16] = NCCOM_DTYPE_FP16, [ccomFloat32] = NCCOM_DTYPE_FP32,
	[ccomFloat64] = NCCOM_DTYPE_FP64, [ccomBfloat16] = NCCOM_DTYPE_BF16,
};

static const uint8_t op_map[ccomNumOps] = {
	[ccomSum] = NCCOM_REDOP_SUM, [ccomProd] = NCCOM_REDOP_PROD, [ccomMax] = NCCOM_REDOP_MAX,
	[ccomMin] = NCCOM_REDOP_MIN, [ccomAvg] = NCCOM_REDOP_SUM,
};

static bool is_float(ccomDataType_t dt)
{
	return dt == ccomFloat16 || dt == ccomFloat32 || dt == ccomFloat64 || dt == ccomBfloat16;
}

static bool is_reduction(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_ALLREDUCE || k == CCOM_COLL_REDUCE || k == CCOM_COLL_REDUCESCATTER;
}

/*
 * The automatic choice (CCOM_KDEV unset): the smallest ccom_op_bytes()
 * from which the engine measured faster than shm in bench-vm, per
 * collective, for 2 local ranks and for more (the table and the numbers
 * behind it are in Documentation/libccom/kdev.rst); SIZE_MAX: never.
 * CCOM_KDEV_MIN_BYTES raises every threshold.  Every input (collective,
 * size, local rank count, CCOM_KDEV_MIN_BYTES, checked equal at init) is
 * the same on every rank, so the answer is too.
 */
static const size_t kdev_auto_table[CCOM_COLL_ALLTOALL + 1][2] = {
	/*				2 ranks		3 or more (measured on 4) */
	[CCOM_COLL_ALLREDUCE]	  = { 256u << 10,	512u << 10 },
	[CCOM_COLL_BROADCAST]	  = { 4u << 20,		4u << 20 },
	[CCOM_COLL_REDUCE]	  = { 256u << 10,	1u << 20 },
	[CCOM_COLL_ALLGATHER]	  = { 256u << 10,	1u << 20 },
	/* 2 ranks: 0.58-0.91x of shm from 1 to 16 MiB, no size measured a clear gain */
	[CCOM_COLL_REDUCESCATTER] = { SIZE_MAX,		256u << 10 },
	[CCOM_COLL_ALLTOALL]	  = { 128u << 10,	512u << 10 },
};

static size_t kdev_auto_min(const struct ccom_kdev *kd, enum ccom_coll_kind kind)
{
	size_t t = kdev_auto_table[kind][kd->nlocal > 2];
	size_t floor = kd->min_bytes > 0 ? (size_t)kd->min_bytes : 0;

	return t > floor ? t : floor;
}

bool ccom_kdev_wants(struct ccomComm *comm, const struct ccom_op *op)
{
	struct ccom_kdev *kd = comm->coll->kdev;

	if (op->kind > CCOM_COLL_ALLTOALL || kd->p2p_only)
		return false;	/* send/recv: ccom_kdev_p2p_wants() (p2p.c); several hosts */
	if (is_reduction(op->kind) && is_float(op->dtype) &&
	    !(kd->info.out_features & NCCOM_FEAT_REDUCE_FP)) {
		if (!kd->warned_fallback)
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: the driver cannot reduce floating point (no NCCOM_FEAT_REDUCE_FP); those reductions use shm");
		kd->warned_fallback = true;
		return false;
	}
	if (kd->forced)
		return true;
	return ccom_op_bytes(comm, op) >= kdev_auto_min(kd, op->kind);
}

/* ---- completion ---- */

/*
 * Grace period for the root cause: a peer's semaphore failed, its pidfd or
 * broken flag (transport/shm.c) tells whether it died or aborted.
 */
static int root_cause(struct ccom_kdev *kd)
{
	struct ccom_wait w;
	int i, err = 0;

	ccom_wait_begin(&w, kd->comm, kd->comm->coll->shm);
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
	struct ccom_shm *shm = comm->coll->shm;
	int peer = comm->local_to_rank[l], err = root_cause(kd);

	if (err)
		return err;
	if (shm) {
		shm->culprit = peer;
		shm->reason = CCOM_SHM_DIED;
	}
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
		ccom_set_last_error("rank %d: the communicator was aborted", comm->rank);
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
	struct ccom_shm *shm = kd->comm->coll->shm;

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
static int drain(struct ccom_kdev *kd, uint32_t until, uint64_t sem_value, bool spin)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct ccom_kdev_spin sp;
	struct ccom_wait w;
	uint32_t head;
	int err = 0;

	ccom_kdev_spin_reset(&sp);
	ccom_wait_begin(&w, kd->comm, kd->comm->coll->shm);
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
		err = drain(kd, kd->ring.sq_tail, 0, true);
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
			*err = drain(kd, kd->ring.cq_head + 1, 0, false);
		if (*err)
			return NULL;
	}
	return d;
}

int ccom_kdev_fail(struct ccom_kdev *kd, int err)
{
	return fail(kd, err);
}

static struct nccom_desc *next_desc(struct kplan *kp)
{
	return kp->err ? NULL : ccom_kdev_next_desc(kp->kd, &kp->err);
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

static void emit_copy(struct kplan *kp, uint32_t dh, uint64_t doff, uint32_t sh, uint64_t soff,
		      uint64_t len, int l)
{
	if (!kp->err)
		kp->err = ccom_kdev_emit_copy(kp->kd, dh, doff, sh, soff, len, l);
}

static void emit_reduce(struct kplan *kp, uint32_t dh, uint64_t doff, uint32_t sh, uint64_t soff,
			uint32_t s2h, uint64_t s2off, uint64_t count, int l)
{
	struct nccom_desc *d;

	if (!count || !(d = next_desc(kp)))
		return;
	d->opcode = NCCOM_OP_REDUCE;
	d->dtype = kp->ndt;
	d->op = kp->nop;
	d->cookie = COOKIE(W_REDUCE, l);
	d->dst_handle = dh;
	d->dst_offset = doff;
	d->src_handle = sh;
	d->src_offset = soff;
	d->src2_handle = s2h;
	d->src2_offset = s2h ? s2off : 0;
	d->count = count;
}

static void emit_sem(struct kplan *kp, int opcode, uint32_t sem, uint64_t value, int l)
{
	if (!kp->err)
		kp->err = ccom_kdev_emit_sem(kp->kd, opcode, sem, value, l);
}

static struct ccom_kdev_view *in_view(struct kplan *kp, int l)
{
	return &kp->v[l * CCOM_KDEV_NPUB];
}

static struct ccom_kdev_view *out_view(struct kplan *kp, int l)
{
	return &kp->v[l * CCOM_KDEV_NPUB + 1];
}

/*
 * dst[0..count) = reduction over every rank l of input l at byte offset
 * @in_off (+ the view's own offset), chunk by chunk.
 */
static void reduce_all(struct kplan *kp, uint64_t in_off, uint64_t dst_off, size_t count)
{
	size_t per = KDEV_RCHUNK / kp->esz, off, len;
	struct ccom_kdev_view *mine = in_view(kp, kp->me);
	/* In place: my input already sits in dst, reduce the peers into it. */
	bool inplace = kp->dst + dst_off == (const char *)kp->op->sendbuff + in_off;
	int l, first;

	for (off = 0; off < count; off += len) {
		uint64_t b = off * kp->esz;

		len = count - off < per ? count - off : per;
		first = !inplace;
		for (l = 0; l < kp->n; l++) {
			struct ccom_kdev_view *p = in_view(kp, l);

			if (l == kp->me)
				continue;
			if (first)
				emit_reduce(kp, kp->dst_h, kp->dst_off + dst_off + b, mine->handle,
					    mine->off + in_off + b, p->handle, p->off + in_off + b,
					    len, l);
			else
				emit_reduce(kp, kp->dst_h, kp->dst_off + dst_off + b, p->handle,
					    p->off + in_off + b, 0, 0, len, l);
			first = 0;
		}
	}
}

/* Slice @p of @len elements over @n ranks (aligned starts, the last takes the rest). */
static void slice(size_t len, int n, int p, size_t *lo, size_t *hi)
{
	size_t a = KDEV_SLICE_ALIGN;

	*lo = p == 0 ? 0 : (len * (size_t)p / (size_t)n) / a * a;
	*hi = p == n - 1 ? len : (len * (size_t)(p + 1) / (size_t)n) / a * a;
	if (*hi < *lo)
		*hi = *lo;
}

/* ccomAvg: the engine summed; divide this rank's part on the CPU. */
static void finish_avg(struct kplan *kp, char *cpu, size_t count)
{
	if (!kp->avg || !count || kp->err)
		return;
	kp->err = ccom_kdev_complete(kp->kd);
	if (!kp->err)
		ccom_reduce_finish(cpu, count, kp->op->dtype, ccomAvg, kp->comm->nranks);
}

/*
 * In-place AlltoAll, pairwise: blocks (l, p) of rank l and (p, l) of rank p
 * trade places.  For each pair the lower rank l stages its block p in its
 * scratch, then copies block l of rank p's buffer straight into its block p
 * (phase A, before l's v1); the higher rank p waits for l's v1 (l no
 * longer reads p's block l) and copies l's staged block into its block l
 * (phase B).  Three block copies per pair instead of four, nothing written
 * outside this rank's own buffers.  My own block stays where it is.
 */
static void alltoall_inplace_a(struct kplan *kp, size_t bytes)
{
	int p;

	for (p = kp->me + 1; p < kp->n; p++)
		emit_copy(kp, kp->tmp_h, kp->tmp_off + (uint64_t)p * bytes, kp->dst_h,
			  kp->dst_off + (uint64_t)p * bytes, bytes, NO_PEER);
	for (p = kp->me + 1; p < kp->n; p++)
		emit_copy(kp, kp->dst_h, kp->dst_off + (uint64_t)p * bytes, in_view(kp, p)->handle,
			  in_view(kp, p)->off + (uint64_t)kp->me * bytes, bytes, p);
}

static void alltoall_inplace_b(struct kplan *kp, size_t bytes)
{
	int l;

	for (l = 0; l < kp->me; l++) {
		emit_sem(kp, NCCOM_OP_SEM_WAIT, kp->kd->peer_sem[l], kp->v1, l);
		emit_copy(kp, kp->dst_h, kp->dst_off + (uint64_t)l * bytes, out_view(kp, l)->handle,
			  out_view(kp, l)->off + (uint64_t)kp->me * bytes, bytes, l);
	}
}

static void phase_a(struct kplan *kp)
{
	struct ccom_op *op = kp->op;
	size_t esz = kp->esz, bytes = op->count * esz, lo, hi;
	int l, n = kp->n, me = kp->me;

	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
	case CCOM_COLL_REDUCE:
		slice(op->count, n, me, &lo, &hi);
		reduce_all(kp, lo * esz, lo * esz, hi - lo);
		finish_avg(kp, kp->dst + lo * esz, hi - lo);
		break;
	case CCOM_COLL_REDUCESCATTER:
		reduce_all(kp, (uint64_t)me * bytes, 0, op->count);
		finish_avg(kp, kp->dst, op->count);
		break;
	case CCOM_COLL_BROADCAST: {
		int root = kp->comm->rank_to_local[op->root];

		if (me != root || op->sendbuff != op->recvbuff)
			emit_copy(kp, kp->dst_h, kp->dst_off, in_view(kp, root)->handle,
				  in_view(kp, root)->off, bytes, root);
		break;
	}
	case CCOM_COLL_ALLGATHER:
		for (l = 0; l < n; l++)
			if (l != me || (const char *)op->sendbuff != kp->dst + (size_t)me * bytes)
				emit_copy(kp, kp->dst_h, kp->dst_off + (uint64_t)l * bytes,
					  in_view(kp, l)->handle, in_view(kp, l)->off, bytes, l);
		break;
	case CCOM_COLL_ALLTOALL:
		if (kp->tmp_h && op->sendbuff == op->recvbuff) {
			alltoall_inplace_a(kp, bytes);
			break;
		}
		for (l = 0; l < n; l++) {
			uint32_t h = kp->tmp_h ? kp->tmp_h : kp->dst_h;
			uint64_t o = kp->tmp_h ? kp->tmp_off : kp->dst_off;

			emit_copy(kp, h, o + (uint64_t)l * bytes, in_view(kp, l)->handle,
				  in_view(kp, l)->off + (uint64_t)me * bytes, bytes, l);
		}
		break;
	default:
		break;
	}
}

static void phase_b(struct kplan *kp)
{
	struct ccom_op *op = kp->op;
	size_t esz = kp->esz, lo, hi;
	int l;

	if (op->kind == CCOM_COLL_ALLREDUCE ||
	    (op->kind == CCOM_COLL_REDUCE && kp->comm->rank_to_local[op->root] == kp->me)) {
		for (l = 0; l < kp->n; l++) {
			if (l == kp->me)
				continue;
			slice(op->count, kp->n, l, &lo, &hi);
			if (hi == lo)
				continue;
			emit_sem(kp, NCCOM_OP_SEM_WAIT, kp->kd->peer_sem[l], kp->v1, l);
			emit_copy(kp, kp->dst_h, kp->dst_off + lo * esz, out_view(kp, l)->handle,
				  out_view(kp, l)->off + lo * esz, (hi - lo) * esz, l);
		}
	} else if (op->kind == CCOM_COLL_ALLTOALL && kp->tmp_h) {
		size_t bytes = op->count * esz;

		if (op->sendbuff == op->recvbuff) {
			alltoall_inplace_b(kp, bytes);
			return;
		}
		/* Partly overlapping buffers: peers read my input until their v1. */
		for (l = 0; l < kp->n; l++)
			if (l != kp->me)
				emit_sem(kp, NCCOM_OP_SEM_WAIT, kp->kd->peer_sem[l], kp->v1, l);
		emit_copy(kp, kp->dst_h, kp->dst_off, kp->tmp_h, kp->tmp_off,
			  bytes * (size_t)kp->n, NO_PEER);
	}
}

/* ---- buffers ---- */

static int scratch_get(struct ccom_kdev *kd, size_t size, void **out)
{
	size_t want = (size + 4095) & ~(size_t)4095;
	void *p;

	if (kd->scratch && kd->scratch_size >= want) {
		*out = kd->scratch;
		return 0;
	}
	if (kd->scratch) {
		ccom_kdev_cache_forget(kd, kd->scratch, kd->scratch_size);
		munmap(kd->scratch, kd->scratch_size);
		kd->scratch = NULL;
	}
	p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ccom_set_last_error("kdev: rank %d: cannot map %zu bytes of scratch", kd->comm->rank,
				    want);
		return -ENOMEM;
	}
	kd->scratch = p;
	kd->scratch_size = want;
	*out = p;
	return 0;
}

/*
 * Registrations of this collective: reqs[0] my output (dst), reqs[1] my
 * input, reqs[2] scratch (in-place AlltoAll).  pub[0] = input, pub[1] =
 * the output peers read in phase B.
 */
static int plan_buffers(struct kplan *kp, struct ccom_kdev_req *reqs, int *nreq)
{
	struct ccom_op *op = kp->op;
	struct ccom_kdev *kd = kp->kd;
	size_t bytes = op->count * kp->esz, inb = bytes, outb = bytes;
	bool root = op->root >= 0 && op->root < kp->comm->nranks && op->root == kp->comm->rank;
	void *dst = op->recvbuff, *tmp;
	const void *in = op->sendbuff;
	int err;

	switch (op->kind) {
	case CCOM_COLL_REDUCESCATTER:
		inb = bytes * (size_t)kp->n;
		break;
	case CCOM_COLL_ALLGATHER:
		outb = bytes * (size_t)kp->n;
		break;
	case CCOM_COLL_ALLTOALL:
		inb = outb = bytes * (size_t)kp->n;
		break;
	case CCOM_COLL_REDUCE:
		if (!root) {
			err = scratch_get(kd, bytes, &dst);
			if (err)
				return err;
		}
		break;
	case CCOM_COLL_BROADCAST:
		if (!root)
			in = NULL;
		break;
	default:
		break;
	}
	kp->dst = dst;
	*nreq = 0;
	reqs[(*nreq)++] = (struct ccom_kdev_req){ dst, outb, NCCOM_MEM_READ | NCCOM_MEM_WRITE, NULL };
	reqs[(*nreq)++] = (struct ccom_kdev_req){ in, in ? inb : 0, NCCOM_MEM_READ, NULL };
	if (op->kind == CCOM_COLL_ALLTOALL && (const char *)in < (const char *)dst + outb &&
	    (const char *)dst < (const char *)in + inb) {
		err = scratch_get(kd, outb, &tmp);
		if (err)
			return err;
		reqs[(*nreq)++] = (struct ccom_kdev_req){ tmp, outb,
							   NCCOM_MEM_READ | NCCOM_MEM_WRITE, NULL };
	}
	if (!in)
		reqs[1].len = 0;
	return 0;
}

/*
 * Automatic choice, the part that depends on this rank's call: an in-place
 * AlltoAll of 2 ranks below 16 MiB measured slower on the engine than on
 * shm (0.37x at 64 KiB, 0.84x at 1 MiB; 1.7x from 16 MiB on: it must
 * stage what the peer still reads).  Ranks may differ in being in place,
 * so this is a vote in the exchange, not part of ccom_kdev_wants().
 */
#define KDEV_A2A_INPLACE2_MIN (16u << 20)

static bool kdev_prefers_shm(const struct ccom_kdev *kd, const struct ccom_op *op)
{
	return !kd->forced && op->kind == CCOM_COLL_ALLTOALL && kd->nlocal == 2 &&
	       op->sendbuff == op->recvbuff &&
	       ccom_op_bytes(kd->comm, op) < KDEV_A2A_INPLACE2_MIN;
}

static int kdev_fallback(struct ccomComm *comm, struct ccom_kdev *kd)
{
	if (!kd->warned_fallback)
		ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d: a rank could not register its buffers (%s); this collective runs on shm",
			  comm->rank, ccom_last_error()[0] ? ccom_last_error() : "see that rank's log");
	kd->warned_fallback = true;
	ccom_clear_last_error();
	return 1;
}

int ccom_kdev_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_kdev *kd = comm->coll->kdev;
	struct ccom_kdev_view views[CCOM_SHM_MAX_LOCAL * CCOM_KDEV_NPUB];
	struct ccom_kdev_req reqs[3] = { 0 };
	struct ccom_kdev_reg *pub[CCOM_KDEV_NPUB] = { NULL, NULL };
	uint64_t pub_off[CCOM_KDEV_NPUB] = { 0, 0 };
	struct ccom_kdev_sig sig = { .kind = op->kind, .dtype = op->dtype, .root = (uint32_t)op->root,
				     .count = op->count };
	struct kplan kp = { .kd = kd, .comm = comm, .op = op, .n = kd->nlocal, .me = kd->me,
			    .esz = ccom_dtype_size(op->dtype), .v = views };
	int nreq = 0, err, i, vote, all;
	int64_t t0 = ccom_now_us(), t1, t2;

	if (kd->dead) {
		ccom_set_last_error("rank %d: the kdev queue was cancelled by an earlier failure",
				    comm->rank);
		return -EIO;
	}
	if (is_reduction(op->kind))
		sig.op = op->op;
	else
		sig.root = op->kind == CCOM_COLL_BROADCAST ? (uint32_t)op->root : 0;
	kp.ndt = dt_map[op->dtype];
	kp.nop = is_reduction(op->kind) ? op_map[op->op] : 0;
	kp.avg = is_reduction(op->kind) && op->op == ccomAvg;
	if (kdev_prefers_shm(kd, op)) {
		vote = CCOM_KDEV_VOTE_SHM;
		err = 0;
	} else {
		err = plan_buffers(&kp, reqs, &nreq);
		if (!err)
			err = ccom_kdev_cache_get(kd, reqs, nreq);
		vote = err ? CCOM_KDEV_VOTE_FAIL : CCOM_KDEV_VOTE_OK;
	}
	if (err == -ECANCELED || err == -ETIMEDOUT || err == -ECONNRESET)
		return fail(kd, err);
	if (vote == CCOM_KDEV_VOTE_OK) {
		pub[0] = reqs[1].len ? reqs[1].reg : NULL;
		pub_off[0] = pub[0] ? (uintptr_t)reqs[1].addr - pub[0]->start : 0;
		/*
		 * Peers read my output only in phase B of AllReduce/Reduce, my
		 * scratch only in phase B of an in-place AlltoAll.
		 */
		if (op->kind == CCOM_COLL_ALLREDUCE || op->kind == CCOM_COLL_REDUCE) {
			pub[1] = reqs[0].reg;
			pub_off[1] = (uintptr_t)reqs[0].addr - pub[1]->start;
		} else if (op->kind == CCOM_COLL_ALLTOALL && nreq == 3 &&
			   op->sendbuff == op->recvbuff) {
			pub[1] = reqs[2].reg;
			pub_off[1] = (uintptr_t)reqs[2].addr - pub[1]->start;
		}
	}
	t1 = ccom_now_us();
	err = ccom_kdev_exchange(kd, &sig, vote, pub, pub_off, views, &all);
	t2 = ccom_now_us();
	if (err)
		return fail(kd, err);
	if (all == CCOM_KDEV_VOTE_SHM) {
		ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu: a rank runs an in-place AlltoAll of 2 ranks below 16 MiB: shm for every rank (automatic choice)",
			   (unsigned long long)kd->coll_seq);
		return 1;
	}
	if (all != CCOM_KDEV_VOTE_OK)
		return kdev_fallback(comm, kd);
	kp.dst_h = reqs[0].reg->handle;
	kp.dst_off = (uintptr_t)reqs[0].addr - reqs[0].reg->start;
	if (nreq == 3) {
		kp.tmp_h = reqs[2].reg->handle;
		kp.tmp_off = (uintptr_t)reqs[2].addr - reqs[2].reg->start;
	}
	kp.v3 = kd->coll_seq * 3;	/* coll_seq >= 1 after the exchange */
	kp.v2 = kp.v3 - 1;
	kp.v1 = kp.v3 - 2;
	phase_a(&kp);
	emit_sem(&kp, NCCOM_OP_SEM_SIGNAL, kd->sem, kp.v1, NO_PEER);
	phase_b(&kp);
	emit_sem(&kp, NCCOM_OP_SEM_SIGNAL, kd->sem, kp.v2, NO_PEER);
	for (i = 0; i < kp.n; i++)
		if (i != kp.me)
			emit_sem(&kp, NCCOM_OP_SEM_WAIT, kd->peer_sem[i], kp.v2, i);
	emit_sem(&kp, NCCOM_OP_SEM_SIGNAL, kd->sem, kp.v3, NO_PEER);
	err = kp.err;
	if (!err)
		err = ccom_kdev_publish(kd);
	if (!err)
		err = drain(kd, kd->ring.sq_tail, kp.v3,
			    ccom_op_bytes(comm, op) <= KDEV_SPIN_MAX_BYTES);
	ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu kind %d %zu elements: registrations %lld us, exchange %lld us, engine %lld us",
		   (unsigned long long)kd->coll_seq, op->kind, op->count, (long long)(t1 - t0),
		   (long long)(t2 - t1), (long long)(ccom_now_us() - t2));
	return err ? fail(kd, err) : 0;
}
