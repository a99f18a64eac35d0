// SPDX-License-Identifier: MIT
/*
 * cma.c - the CMA path (coll/ layer): collectives between the ranks of
 * one host that read (and write) the peers' own buffers with
 * process_vm_readv/writev, one kernel copy instead of the staged path's
 * copy in and copy out, on any memory (malloc'd buffers included).
 *
 * At init (collective over the host's ranks, whatever CCOM_CMA says, so
 * that every rank passes the same barriers) each rank publishes a probe
 * word and reads every peer's with process_vm_readv.  Whatever stops one
 * read (Yama ptrace_scope, another uid, a seccomp filter, a kernel
 * without CONFIG_CROSS_MEMORY_ATTACH, another pid namespace) turns the
 * path off for every rank of the communicator before its first operation,
 * with the reason at INFO: an operation never fails for want of
 * permission.  Under Yama ptrace_scope 1 a rank declares its one peer as
 * its tracer (PR_SET_PTRACER) when there are two local ranks; with more,
 * one declared tracer per process is not enough and the path is off.
 *
 * An operation: each rank writes its send and receive addresses into its
 * line of the segment (struct ccom_shm_cdesc), a host barrier publishes
 * them, every rank checks its peers called the same collective, does its
 * part, and a second barrier keeps every buffer alive until no peer uses
 * it.  AllReduce, Reduce, ReduceScatter: rank r reduces slice r of every
 * input (read through the kernel into a cache-sized bounce buffer, 256 KiB
 * at a time, in rank order, so every rank gets bitwise the same result)
 * and writes it into every output (Reduce: the root's).  AllGather,
 * Broadcast, AlltoAll: every rank reads what it needs straight into its
 * own output.  Gather: every rank writes its block into the root's output;
 * Scatter: every rank reads its block of the root's input (the n - 1
 * copies run at once, one per rank, rather than one after another in the
 * root).  Send/Recv: cma_p2p.c.  Only rank r writes slice r of any output, and reads a
 * peer's input only where no one writes before the last barrier, so
 * in-place calls are safe, mixed across ranks too; AlltoAll, where an
 * in-place rank's input is overwritten by its own reads, runs staged if
 * any rank calls it in place.
 *
 * CCOM_CMA=1 forces the path for every collective it serves from
 * CMA_MIN_BYTES per rank; auto (the default) measures it against the
 * staged path on the operations themselves (tune/race.c): per collective
 * and power of two of the size, turns of a few consecutive operations of
 * each path alternate (timed on every rank, the first of each turn
 * dropped), and the next one (run to its first barrier, where every rank
 * publishes its medians) keeps the path whose slowest rank's median is
 * lower.  A kept path that runs clearly slower than its price (either
 * path: a staged verdict passes the barrier every CMA_CHECKIN operations
 * to hear such requests) is measured again.  Calls where every rank is in
 * place get a race of their own (coll/cma_auto.c says why and how the
 * ranks agree on it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "coll/cma.h"
#include "coll/cma_auto.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "mem/mem.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "publish/publish.h"
#include "reduce/reduce.h"
#include "transport/shm.h"
#include "tune/cma_cache.h"
#include "tune/race.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/log.h"
#include "util/params.h"

#define CMA_MIN_BYTES (64u << 10)	/* per rank; below, two barriers cost more */
#define CMA_BLOCK (256u << 10)		/* bytes reduced per step, in cache */
/*
 * A staged verdict passes the barriers once per CMA_CHECKIN ops, every op
 * from CMA_CHECKIN_ALL_BYTES per rank, where two barriers (a few us) are
 * noise beside the operation (0.5 ms and more): there an in-place call is
 * seen, and raced apart, at once (ccom-perf runs 11 AllReduces of 64 MiB
 * in place: a check-in after 16 never came).
 */
#define CMA_CHECKIN 16
#define CMA_CHECKIN_ALL_BYTES (4u << 20)
#define CMA_MODE_DRIVER 3		/* published at init: /dev/nccom is in use, CMA stays off */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static pid_t peer_pid(struct ccomComm *comm, int l)
{
	return comm->peers[comm->local_to_rank[l]].pid;
}

/* Copy @len bytes between this process and local rank @l's address space @raddr: 0 or -errno. */
static int cma_copy(struct ccomComm *comm, int l, void *local, uint64_t raddr, size_t len,
		    bool write)
{
	pid_t pid = peer_pid(comm, l);
	struct iovec li, ri;
	ssize_t n;

	if (l == comm->shm->me || pid == getpid()) {
		if (write)
			memcpy((void *)(uintptr_t)raddr, local, len);
		else
			memcpy(local, (const void *)(uintptr_t)raddr, len);
		return 0;
	}
	while (len) {
		li.iov_base = local;
		li.iov_len = len;
		ri.iov_base = (void *)(uintptr_t)raddr;
		ri.iov_len = len;
		n = write ? process_vm_writev(pid, &li, 1, &ri, 1, 0) :
			    process_vm_readv(pid, &li, 1, &ri, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		local = (char *)local + n;
		raddr += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* cma_copy() within an operation: a failure fails it, with the reason. */
static int cma_move(struct ccomComm *comm, int l, void *local, uint64_t raddr, size_t len,
		    bool write)
{
	struct ccom_shm *s = comm->shm;
	int err = cma_copy(comm, l, local, raddr, len, write), i, e;

	/*
	 * A peer that is exiting loses its memory a moment before its pidfd
	 * says it died: give the liveness check (the same report as the
	 * staged path's waits: ccomRemoteError naming the rank) 200 ms.
	 */
	for (i = 0; err && i < 200; i++) {
		e = s->wait_src.ops->check_peers(s->wait_src.ctx);
		if (e)
			return e;
		if (err != -ESRCH && err != -EFAULT && err != -ENOMEM)
			break;
		usleep(1000);
	}
	if (err)
		ccom_set_last_error("rank %d: process_vm_%s of %zu bytes of local rank %d (pid %d) failed: %s (it worked at init: the peer's buffer is not mapped, or the peer is gone)",
				    comm->rank, write ? "writev" : "readv", len, l,
				    (int)peer_pid(comm, l), strerror(-err));
	return err;
}

int ccom_cma_move(struct ccomComm *comm, int rank, void *local, uint64_t raddr, size_t len,
		  bool write)
{
	return cma_move(comm, comm->rank_to_local[rank], local, raddr, len, write);
}

static const char *deny_hint(int err, int scope, int nlocal)
{
	if (err == EPERM && scope == 1 && nlocal > 2)
		return "Yama ptrace_scope is 1 and a process can declare one tracer, not one per peer: set kernel.yama.ptrace_scope=0 to use CMA, or CCOM_CMA=0 to skip the check";
	if (err == EPERM && scope >= 2)
		return "Yama ptrace_scope is 2 or 3 (only CAP_SYS_PTRACE or no one may read another process): nothing to fix unless the host's policy changes; CCOM_CMA=0 skips the check";
	if (err == EPERM)
		return "the ranks run as different users, lack CAP_SYS_PTRACE, or a seccomp filter denies process_vm_readv; CCOM_CMA=0 skips the check";
	if (err == ENOSYS)
		return "the kernel lacks CONFIG_CROSS_MEMORY_ATTACH or a seccomp filter denies process_vm_readv; CCOM_CMA=0 skips the check";
	if (err == ESRCH || err == EBADMSG)
		return "the peer's pid names another process here (another pid namespace?); CCOM_CMA=0 skips the check";
	return "CCOM_CMA=0 skips the check";
}

/* Read every local peer's probe word: 0, or the errno met and the peer in *@peer. */
static int probe_peers(struct ccomComm *comm, int *peer)
{
	struct ccom_shm *s = comm->shm;
	uint64_t v;
	int l, err;

	for (l = 0; l < s->nlocal; l++) {
		const struct ccom_shm_cdesc *d = &s->hdr->cdesc[l];

		if (l == s->me)
			continue;
		v = 0;
		err = cma_copy(comm, l, &v, d->probe, sizeof(v), false);
		if (!err && v != d->probe_val)
			err = -EBADMSG;
		if (err) {
			*peer = l;
			return -err;
		}
	}
	return 0;
}

static int mode_of(const char *v)
{
	if (!v || !*v || !strcmp(v, "auto"))
		return 2;
	if (!strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1"))
		return 1;
	return -1;
}

static void cma_state_free(struct ccom_cma *c)
{
	if (!c)
		return;
	free(c->buf);
	free(c);
}

/*
 * Collective over the local ranks of a one-host communicator with a host
 * segment: two barriers whatever CCOM_CMA says.  Leaves comm->coll->cma
 * NULL when the path is off.
 */
static int cma_init(struct ccomComm *comm)
{
	struct ccom_shm *s = comm->shm;
	struct ccom_cma *c;
	struct ccom_shm_cdesc *me;
	int mode, scope, l, err, peer = -1, bad = -1, bad_peer = -1, bad_err = 0, off_by = -1;

	if (!s || comm->nnodes != 1 || s->nlocal != comm->nranks)
		return 0;
	mode = mode_of(ccom_param_str("CCOM_CMA"));
	if (mode > 0 && comm->kdev)
		mode = CMA_MODE_DRIVER;
	if (mode < 0) {
		ccom_set_last_error("rank %d: CCOM_CMA=%s is not 0, 1 or auto", comm->rank,
				    ccom_param_str("CCOM_CMA"));
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	scope = yama_scope();
	if (mode && scope == 1 && s->nlocal == 2 && peer_pid(comm, 1 - s->me) != getpid() &&
	    prctl(PR_SET_PTRACER, (unsigned long)peer_pid(comm, 1 - s->me), 0, 0, 0))
		ccom_info(CCOM_SUBSYS_COLL, "rank %d: PR_SET_PTRACER for local peer pid %d: %s",
			  comm->rank, (int)peer_pid(comm, 1 - s->me), strerror(errno));
	c->probe_word = ((uint64_t)getpid() << 32) ^ now_ns() ^ 0x636d61u;
	me = &s->hdr->cdesc[s->me];
	me->probe = (uint64_t)(uintptr_t)&c->probe_word;
	me->probe_val = c->probe_word;
	me->addr[0] = (uint64_t)mode;	/* the mode travels in the first barrier */
	me->recheck = 0;
	if (s->me == 0 && mode == 2 &&
	    ccom_tune_cma_load(s->nlocal, (struct ccom_tune_cma_table *)&s->hdr->cma_verdict))
		memset(&s->hdr->cma_verdict, 0, sizeof(s->hdr->cma_verdict));
	err = ccom_shm_barrier(s);
	if (err)
		goto fail;
	for (l = 0; l < s->nlocal; l++)
		if ((s->hdr->cdesc[l].addr[0] == 0 || s->hdr->cdesc[l].addr[0] == CMA_MODE_DRIVER) &&
		    off_by < 0)
			off_by = l;
	for (l = 0; l < s->nlocal; l++)
		if (s->hdr->cdesc[l].addr[0] == 2)
			mode = 2;
	atomic_store(&me->err, off_by >= 0 ? 0 : probe_peers(comm, &peer));
	me->err_peer = peer;
	err = ccom_shm_barrier(s);
	if (err)
		goto fail;
	for (l = 0; l < s->nlocal && bad < 0; l++)
		if (atomic_load(&s->hdr->cdesc[l].err)) {
			bad = l;
			bad_err = atomic_load(&s->hdr->cdesc[l].err);
			bad_peer = s->hdr->cdesc[l].err_peer;
		}
	if (off_by >= 0) {
		snprintf(c->why, sizeof(c->why), "off: local rank %d %s", off_by,
			 s->hdr->cdesc[off_by].addr[0] ? "uses the nccom driver (its single-copy paths)" :
			 "has CCOM_CMA=0");
		ccom_info(CCOM_SUBSYS_COLL, "rank %d: CMA %s", comm->rank, c->why);
	} else if (bad >= 0) {
		snprintf(c->why, sizeof(c->why), "off: local rank %d could not read local rank %d with process_vm_readv: %s",
			 bad, bad_peer, strerror(bad_err));
		char yama[48] = "no Yama";

		if (scope >= 0)
			snprintf(yama, sizeof(yama), "Yama ptrace_scope %d", scope);
		ccom_info(CCOM_SUBSYS_COLL, "rank %d: CMA %s (%s; %s); collectives stage through the host segment",
			  comm->rank, c->why, yama, deny_hint(bad_err, scope, s->nlocal));
	} else {
		c->mode = mode;
		c->on = true;
		if (mode == 2)
			ccom_cma_auto_cache_take(c, s);
		snprintf(c->why, sizeof(c->why), "%s", mode == 1 ? "forced (CCOM_CMA=1)" :
			 "auto: measured against the staged path per collective and size");
		ccom_info(CCOM_SUBSYS_COLL, "rank %d: CMA (process_vm_readv) between the %d local ranks: %s",
			  comm->rank, s->nlocal, c->why);
	}
	comm->coll->cma = c;
	return 0;
fail:
	cma_state_free(c);
	return err;
}

int ccom_cma_init(struct ccomComm *comm)
{
	int err = cma_init(comm);

	if (!err && comm->coll->cma) {
		int64_t v = ccom_param_int("CCOM_CMA_P2P_MIN_BYTES");

		/* Negative: no Send/Recv on the path. */
		comm->coll->cma->p2p_min = v < 0 ? SIZE_MAX : (size_t)v;
		ccom_cma_p2p_auto_init(comm);
	}
	/* What `ccomctl comm show` prints for this rank. */
	if (!err)
		ccom_publish_cma(comm->publish, ccom_cma_describe(comm));
	return err;
}

void ccom_cma_fini(struct ccomComm *comm)
{
	if (!comm->coll)
		return;
	cma_state_free(comm->coll->cma);
	comm->coll->cma = NULL;
}

int ccom_cma_cached(const struct ccomComm *comm)
{
	return comm->coll && comm->coll->cma ? comm->coll->cma->cached : 0;
}

uint64_t ccom_cma_decided(const struct ccomComm *comm)
{
	return comm->coll && comm->coll->cma ? comm->coll->cma->decided : 0;
}

bool ccom_cma_kept(const struct ccomComm *comm, enum ccom_coll_kind kind, size_t bytes,
		   bool inplace)
{
	const struct ccom_cma_trial *pair;

	if (!comm->coll || !comm->coll->cma || kind >= CCOM_COLL_NKINDS)
		return false;
	pair = comm->coll->cma->trial[kind][ccom_cma_bucket(bytes)];
	if (inplace && !pair[1].open)
		return false;
	return ccom_race_state(&pair[inplace].race) == CCOM_RACE_KEPT;
}

uint64_t ccom_cma_ops(const struct ccomComm *comm)
{
	return comm->coll && comm->coll->cma ? comm->coll->cma->ops : 0;
}

uint64_t ccom_cma_p2p_ops(const struct ccomComm *comm)
{
	return comm->coll && comm->coll->cma ? comm->coll->cma->p2p_ops : 0;
}

const char *ccom_cma_describe(const struct ccomComm *comm)
{
	const struct ccom_cma *c = comm->coll ? comm->coll->cma : NULL;

	return c ? c->why : "off: not a one-host communicator with a host segment";
}

/* Slice p of @len elements split over @n ranks, 16-element aligned (as coll/direct.c's). */
static void slice(size_t len, int n, int p, size_t *lo, size_t *hi)
{
	*lo = p == 0 ? 0 : ((len * (size_t)p / (size_t)n) & ~(size_t)15);
	*hi = p == n - 1 ? len : ((len * (size_t)(p + 1) / (size_t)n) & ~(size_t)15);
	if (*hi < *lo)
		*hi = *lo;
}

/*
 * Elements [e0, e1) of every rank's input at byte offset @in_off, reduced
 * in rank order block by block, written at byte offset @out_off of the
 * outputs of ranks [d0, d1).
 */
static int reduce_range(struct ccomComm *comm, const struct ccom_op *op, size_t e0, size_t e1,
			size_t in_off, size_t out_off, int d0, int d1)
{
	struct ccom_shm *s = comm->shm;
	struct ccom_cma *c = comm->coll->cma;
	size_t esz = ccom_dtype_size(op->dtype), per = CMA_BLOCK / esz, e, len, b;
	char *bounce[2] = { c->buf, c->buf + CMA_BLOCK }, *acc = c->buf + 2 * CMA_BLOCK, *src[2];
	int p, err;

	for (e = e0; e < e1; e += len) {
		len = e1 - e < per ? e1 - e : per;
		b = (e - e0) * esz;
		for (p = 0; p < s->nlocal; p++) {
			uint64_t at = s->hdr->cdesc[p].addr[0] + in_off + e * esz;
			int k = p == 0 ? 0 : 1;

			if (p == s->me) {
				src[k] = (char *)(uintptr_t)at;
			} else {
				src[k] = bounce[k];
				err = cma_move(comm, p, src[k], at, len * esz, false);
				if (err)
					return err;
			}
			if (p == 1)
				ccom_reduce2(acc, src[0], src[1], len, op->dtype, op->op);
			else if (p > 1)
				ccom_reduce2(acc, acc, src[1], len, op->dtype, op->op);
		}
		ccom_reduce_finish(acc, len, op->dtype, op->op, comm->nranks);
		for (p = d0; p < d1; p++) {
			err = cma_move(comm, p, acc, s->hdr->cdesc[p].addr[1] + out_off + b, len * esz,
				       true);
			if (err)
				return err;
		}
	}
	return 0;
}

/* This rank's part of @op, every rank's addresses published. */
static int cma_work(struct ccomComm *comm, const struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), bytes = op->count * esz, lo, hi;
	char *out = op->recvbuff;
	int n = s->nlocal, me = s->me, p, err = 0;
	uint64_t in;

	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
	case CCOM_COLL_REDUCE:
		slice(op->count, n, me, &lo, &hi);
		if (op->kind == CCOM_COLL_ALLREDUCE)
			return reduce_range(comm, op, lo, hi, 0, lo * esz, 0, n);
		return reduce_range(comm, op, lo, hi, 0, lo * esz, op->root, op->root + 1);
	case CCOM_COLL_REDUCESCATTER:
		return reduce_range(comm, op, 0, op->count, (size_t)me * bytes, 0, me, me + 1);
	case CCOM_COLL_BROADCAST:
		in = s->hdr->cdesc[op->root].addr[0];
		if (me == op->root && (uint64_t)(uintptr_t)out == in)
			return 0;
		return cma_move(comm, op->root, out, in, bytes, false);
	case CCOM_COLL_ALLGATHER:
		for (p = 0; p < n && !err; p++)
			if (out + (size_t)p * bytes != (char *)(uintptr_t)s->hdr->cdesc[p].addr[0] ||
			    p != me)
				err = cma_move(comm, p, out + (size_t)p * bytes,
					       s->hdr->cdesc[p].addr[0], bytes, false);
		return err;
	case CCOM_COLL_ALLTOALL:
		for (p = 0; p < n && !err; p++)
			err = cma_move(comm, p, out + (size_t)p * bytes,
				       s->hdr->cdesc[p].addr[0] + (size_t)me * bytes, bytes, false);
		return err;
	case CCOM_COLL_GATHER:
		/* Each rank writes its block into the root's output: n - 1 copies at once. */
		in = s->hdr->cdesc[op->root].addr[1] + (size_t)me * bytes;
		if (me != op->root)
			return cma_move(comm, op->root, (void *)(uintptr_t)op->sendbuff, in, bytes, true);
		if ((uint64_t)(uintptr_t)op->sendbuff != in)
			memmove(out + (size_t)me * bytes, op->sendbuff, bytes);
		return 0;
	case CCOM_COLL_SCATTER:
		/* Each rank reads its block of the root's input. */
		in = s->hdr->cdesc[op->root].addr[0] + (size_t)me * bytes;
		if (me != op->root)
			return cma_move(comm, op->root, out, in, bytes, false);
		if ((uint64_t)(uintptr_t)out != in)
			memmove(out, (const char *)(uintptr_t)in, bytes);
		return 0;
	default:
		return -EINVAL;
	}
}

static bool serves(const struct ccom_op *op)
{
	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE: case CCOM_COLL_REDUCE: case CCOM_COLL_REDUCESCATTER:
	case CCOM_COLL_BROADCAST: case CCOM_COLL_ALLGATHER: case CCOM_COLL_ALLTOALL:
	case CCOM_COLL_GATHER: case CCOM_COLL_SCATTER:
		return true;
	default:
		return false;
	}
}

/*
 * Are this rank's buffers ccomMemAlloc memory of a collective the
 * zero-copy path (coll/direct.c) serves?  If every rank's are, that path
 * (no kernel copy at all) runs instead.
 */
static int32_t zcopy_buffers(struct ccomComm *comm, const struct ccom_op *op)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype), sb = bytes, rb = bytes;
	struct ccom_mem_ref ref;

	if (comm->shm->nlocal > 8)
		return 0;
	if (op->kind == CCOM_COLL_ALLGATHER)
		rb *= (size_t)comm->shm->nlocal;
	else if (op->kind == CCOM_COLL_REDUCESCATTER)
		sb *= (size_t)comm->shm->nlocal;
	else if (op->kind != CCOM_COLL_ALLREDUCE)
		return 0;
	return ccom_mem_lookup(op->sendbuff, sb, &ref) && ccom_mem_lookup(op->recvbuff, rb, &ref);
}

/*
 * After the first barrier, the same answer on every rank: not when every
 * rank's buffers take the zero-copy path, nor an AlltoAll where a rank
 * is in place (its input would change under its peers' reads).
 */
static bool cma_applies(struct ccom_shm *s, const struct ccom_op *op)
{
	bool all_zcopy = true;
	int l;

	for (l = 0; l < s->nlocal; l++) {
		const struct ccom_shm_cdesc *d = &s->hdr->cdesc[l];

		if (!d->zcopy)
			all_zcopy = false;
		if (op->kind == CCOM_COLL_ALLTOALL && d->addr[0] == d->addr[1])
			return false;
	}
	return !all_zcopy;
}

/* auto: time this operation on the staged path (ccom_cma_staged_done()). */
static int staged_pending(struct ccom_cma *c, struct ccom_cma_trial *t, int idx, size_t bytes,
			  uint64_t t0)
{
	c->pending = t;
	c->pending_t0 = t0;
	c->pending_bytes = bytes;
	c->pending_idx = idx;
	return 1;
}

int ccom_cma_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_cma *c = comm->coll->cma;
	struct ccom_shm *s = comm->shm;
	struct ccom_shm_cdesc *me;
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	struct ccom_cma_trial *t = NULL, *pair = NULL, *mine;
	enum ccom_race_state st = CCOM_RACE_KEPT;
	bool staged = false, agree = false, ip = op->sendbuff == op->recvbuff;
	uint64_t t0;
	int err, idx = 0, b = ccom_cma_bucket(bytes), every_ip = 0;

	if (!c || !c->on || !serves(op) || bytes < CMA_MIN_BYTES)
		return 1;
	t0 = now_ns();	/* only past the check: no clock read on ops CMA does not serve */
	if (c->mode == 2) {
		pair = c->trial[op->kind][b];
		agree = ccom_cma_auto_agree(pair);
		/* Without agreement both races give one answer: time into this rank's. */
		t = &pair[pair[1].open && ip];
		idx = CCOM_CMA_RACE_IDX(op->kind, b, (int)(t - pair));
		st = ccom_race_state(&t->race);
		staged = !agree && st != CCOM_RACE_READY && ccom_race_next(&t->race) == 0;
		/* A staged trial, or a staged verdict between its check-ins: no barrier. */
		if (staged && (st == CCOM_RACE_TRIAL ||
			       (bytes < CMA_CHECKIN_ALL_BYTES && ++pair[0].staged_ops % CMA_CHECKIN)))
			return staged_pending(c, t, idx, bytes, t0);
	}
	if (!c->buf) {
		c->buf = aligned_alloc(64, 3 * CMA_BLOCK);
		if (!c->buf)
			return -ENOMEM;
	}
	me = &s->hdr->cdesc[s->me];
	me->addr[0] = (uint64_t)(uintptr_t)op->sendbuff;
	me->addr[1] = (uint64_t)(uintptr_t)op->recvbuff;
	me->zcopy = zcopy_buffers(comm, op);
	/* A race to decide: this rank's reports (used only if every rank's race is that one). */
	mine = agree ? &pair[ip] : t;
	if (mine && ccom_race_state(&mine->race) == CCOM_RACE_READY) {
		atomic_store(&me->best_ns[0], ccom_race_report(&mine->race, 0));
		atomic_store(&me->best_ns[1], ccom_race_report(&mine->race, 1));
	}
	err = ccom_shm_barrier(s);
	/* Every peer posted its call before the barrier: agree before touching their buffers. */
	if (!err)
		err = ccom_shm_sig_verify(s, true);
	if (err)
		return err;
	if (pair) {
		every_ip = ccom_cma_auto_all_in_place(s);
		if (agree) {
			t = &pair[every_ip == 1];
			idx = CCOM_CMA_RACE_IDX(op->kind, b, every_ip == 1);
			st = ccom_race_state(&t->race);
		}
		/* Ranks mixed in being in place published another race's medians: decide later. */
		if (st == CCOM_RACE_READY && (every_ip >= 0 || !pair[1].open))
			ccom_cma_auto_decide(comm, op, t, t == &pair[1]);
		st = ccom_race_state(&t->race);
		staged = st == CCOM_RACE_KEPT ? t->race.verdict == 0 : ccom_race_next(&t->race) == 0;
		/* Every rank in place under an out-of-place verdict: measure in place apart from now. */
		if (every_ip == 1 && !pair[1].open && ccom_race_state(&pair[0].race) == CCOM_RACE_KEPT)
			pair[1].open = true;
		ccom_cma_auto_recheck_take(comm, c);
		if (ccom_race_state(&t->race) == CCOM_RACE_TRIAL)
			staged = ccom_race_next(&t->race) == 0;	/* measured again from now */
	}
	if (staged || !cma_applies(s, op)) {
		/* Nobody rewrites its line before every rank has read it. */
		err = ccom_shm_barrier(s);
		if (!err)
			ccom_cma_auto_recheck_done(c, s);
		if (err || !staged)
			return err ? err : 1;
		/* Timed from here: the barriers of the agreement are not the staged path's. */
		return staged_pending(c, t, idx, bytes, now_ns());
	}
	ccom_flight_algo(comm->proxy->flight, op, ccom_algo_name(CCOM_ALGO_DIRECT),
			 ccom_flight_cma);
	err = cma_work(comm, op);
	if (err)
		return err;
	c->ops++;
	/* Nobody returns (and lets its buffers change) while a peer uses them. */
	err = ccom_shm_barrier(s);
	if (!err && t) {
		ccom_cma_auto_recheck_done(c, s);
		ccom_cma_auto_timed(s, t, idx, 1, bytes, now_ns() - t0);
	}
	return err;
}

void ccom_cma_staged_done(struct ccomComm *comm)
{
	struct ccom_cma *c = comm->coll->cma;
	struct ccom_cma_trial *t = c ? c->pending : NULL;

	if (!t)
		return;
	c->pending = NULL;
	ccom_cma_auto_timed(comm->shm, t, c->pending_idx, 0, c->pending_bytes, now_ns() - c->pending_t0);
}
