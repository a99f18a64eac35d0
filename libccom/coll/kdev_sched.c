// SPDX-License-Identifier: MIT
/*
 * sched.c - descriptor schedules of the direct intra-host algorithms on the
 * nccom engine (coll/): what descriptors each collective becomes, emitted
 * through the kdev room's ring interface (transport/kdev/ring.c).
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

#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/kdev_mapped.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "reduce/reduce.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define KDEV_RCHUNK (256u << 10)
#define KDEV_SLICE_ALIGN 64	/* elements */
/* Larger collectives keep the engines busy for long: sleep at once, leave them the CPUs. */
#define KDEV_SPIN_MAX_BYTES (1u << 20)

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

static bool is_reduction(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_ALLREDUCE || k == CCOM_COLL_REDUCE || k == CCOM_COLL_REDUCESCATTER;
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
	if (!kp->err)
		kp->err = ccom_kdev_emit_reduce(kp->kd, kp->ndt, kp->nop, dh, doff, sh, soff, s2h,
						s2off, count, l);
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
 * An AlltoAll where some ranks are in place and others are not cannot run
 * on the engine: the in-place schedule (alltoall_inplace_a/b) trades blocks
 * with in-place peers only, and an out-of-place rank copies the blocks an
 * in-place peer overwrites in its own phase A (measured with CCOM_KDEV=1 in
 * a 6.12 guest: 19 and 25 of 40 wrong results on the out-of-place rank).
 * Every rank sees in the exchange which ranks published an in-place scratch
 * (out_view), so every rank takes shm for the same collectives.
 */
static bool alltoall_mixed_inplace(struct kplan *kp)
{
	int l, nin = 0;

	if (kp->op->kind != CCOM_COLL_ALLTOALL)
		return false;
	for (l = 0; l < kp->n; l++)
		nin += out_view(kp, l)->handle != 0;
	return nin > 0 && nin < kp->n;
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
	struct ccom_kdev *kd = comm->kdev;
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
	if (ccom_tune_engine_prefers_shm(comm, op)) {
		vote = CCOM_KDEV_VOTE_SHM;
		err = 0;
	} else {
		err = plan_buffers(&kp, reqs, &nreq);
		if (!err)
			err = ccom_kdev_cache_get(kd, reqs, nreq);
		vote = err ? CCOM_KDEV_VOTE_FAIL : CCOM_KDEV_VOTE_OK;
	}
	if (err == -ECANCELED || err == -ETIMEDOUT || err == -ECONNRESET)
		return ccom_kdev_fail(kd, err);
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
		return ccom_kdev_fail(kd, err);
	if (all == CCOM_KDEV_VOTE_SHM) {
		ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu: a rank runs an in-place AlltoAll of 2 ranks below 16 MiB: shm for every rank (automatic choice)",
			   (unsigned long long)kd->coll_seq);
		return 1;
	}
	if (all != CCOM_KDEV_VOTE_OK)
		return kdev_fallback(comm, kd);
	if (alltoall_mixed_inplace(&kp)) {
		ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu: an AlltoAll in place on some ranks only: shm for every rank",
			   (unsigned long long)kd->coll_seq);
		return 1;
	}
	kp.dst_h = reqs[0].reg->handle;
	kp.dst_off = (uintptr_t)reqs[0].addr - reqs[0].reg->start;
	if (nreq == 3) {
		kp.tmp_h = reqs[2].reg->handle;
		kp.tmp_off = (uintptr_t)reqs[2].addr - reqs[2].reg->start;
	}
	kp.v3 = kd->coll_seq * 3;	/* coll_seq >= 1 after the exchange */
	kp.v2 = kp.v3 - 1;
	kp.v1 = kp.v3 - 2;
	if (ccom_kdev_mapped_usable(kd, op, views)) {
		ccom_flight_algo(comm->proxy->flight, op, ccom_flight_mapped, ccom_flight_kdev);
		err = ccom_kdev_mapped_run(comm, kd, op, views, kp.dst,
					   nreq == 3 ? (char *)reqs[2].addr : NULL, kp.v1, kp.v2, kp.v3);
		ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu %s %zu elements from mapped grants: registrations %lld us, exchange %lld us, copies %lld us",
			   (unsigned long long)kd->coll_seq, ccom_coll_kind_name(op->kind), op->count,
			   (long long)(t1 - t0), (long long)(t2 - t1), (long long)(ccom_now_us() - t2));
		return err ? ccom_kdev_fail(kd, err) : 0;
	}
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
		err = ccom_kdev_drain(kd, kd->ring.sq_tail, kp.v3,
				      ccom_op_bytes(comm, op) <= KDEV_SPIN_MAX_BYTES);
	ccom_trace(CCOM_SUBSYS_KDEV, "kdev: op %llu kind %d %zu elements: registrations %lld us, exchange %lld us, engine %lld us",
		   (unsigned long long)kd->coll_seq, op->kind, op->count, (long long)(t1 - t0),
		   (long long)(t2 - t1), (long long)(ccom_now_us() - t2));
	return err ? ccom_kdev_fail(kd, err) : 0;
}
