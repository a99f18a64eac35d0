// SPDX-License-Identifier: MIT
/*
 * kdev_mapped.c - every collective of the kdev schedule (kdev_sched.c) on
 * user buffers straight from the local peers' pages mapped through their
 * nccom grants (coll/, CCOM_KDEV_MAP=1): the mapped single-copy path,
 * XPMEM-style.
 *
 * It keeps kdev_sched.c's three-phase shape and semaphore values, with the
 * CPU doing what the engine's descriptors would, on the same buffers:
 *
 *   phase A   AllReduce/Reduce: reduce my slice from every rank's input
 *             (peers' through the read-only mappings, AVX kernels of
 *             reduce/) into my output (a non-root Reduce: the scratch);
 *             ReduceScatter: my block; AllGather/AlltoAll/Broadcast: copy
 *             from peers' inputs into my output (an AlltoAll whose buffers
 *             overlap: into the scratch; in place: the pairwise trade of
 *             kdev_sched.c's alltoall_inplace_a);
 *   SIGNAL v1 (SEM_SIGNAL ioctl)
 *   phase B   AllReduce and the Reduce root: for each peer, wait for its
 *             v1 and copy its reduced slice out of its output (mapped);
 *             AlltoAll: the scratch into place;
 *   SIGNAL v2; WAIT every peer >= v2; SIGNAL v3
 *
 * Reductions go in the engine's order (mine first, then the peers in
 * rank order), and each element is computed by one rank only, so a rank
 * on this path and a peer on the engine interoperate and every rank gets
 * the same answer.  The grants were validated by the registration
 * cache's probe of this collective (a buffer unmapped or remapped since
 * is registered and granted again, and its old mapping dropped).  A peer
 * that aborts and frees its buffers, or exits, while this rank reads them
 * revokes the mapping (the driver zaps it): every copy from a peer runs
 * under util/fault_guard.h, so this rank fails with the peer's abort or
 * death named instead of dying of SIGBUS.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "coll/algo.h"
#include "coll/channels.h"
#include "coll/coll.h"
#include "coll/kdev_mapped.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/wait.h"
#include "reduce/reduce.h"
#include "transport/kdev/kdev.h"
#include "tune/kdev_race.h"
#include "util/err.h"
#include "util/log.h"

#define MAPPED_BLOCK (64u << 10)	/* bytes reduced per pass: the n passes hit the cache */
#define MAPPED_SLICE_ALIGN 64		/* elements, as kdev_sched.c's slices */
#define MAPPED_WAIT_SLICE_NS 20000000ull

struct mplan {
	struct ccomComm *comm;
	struct ccom_kdev *kd;
	const struct ccom_op *op;
	const struct ccom_kdev_view *v;	/* [l * NPUB]: input, [l * NPUB + 1]: output/scratch */
	char *dst, *tmp;
	int n, me;
	size_t esz, bytes;		/* element size; bytes of one block (count elements) */
	bool nt;			/* outputs this large are written with streaming stores */
	uint64_t v1;			/* peers' phase A done */
	struct ccom_wait w;
};

bool ccom_kdev_mapped_serves(enum ccom_coll_kind kind)
{
	return ccom_kpath_mapped_serves(kind);
}

/* View @i of local rank @l is mapped over at least @len bytes. */
static bool mapped(const struct ccom_kdev_view *v, int l, int i, uint64_t len)
{
	const struct ccom_kdev_view *x = &v[l * CCOM_KDEV_NPUB + i];

	return x->cpu && x->cpu_len >= len;
}

bool ccom_kdev_mapped_usable(const struct ccom_kdev *kd, const struct ccom_op *op,
			     const struct ccom_kdev_view *v)
{
	uint64_t bytes = (uint64_t)op->count * ccom_dtype_size(op->dtype);
	uint64_t all = bytes * (uint64_t)kd->nlocal;
	int l, root;

	if (!kd->map || kd->map_skip || !ccom_kdev_mapped_serves(op->kind) || !bytes)
		return false;
	switch (op->kind) {
	case CCOM_COLL_BROADCAST:
		root = kd->comm->rank_to_local[op->root];
		return (root == kd->me && op->sendbuff == op->recvbuff) || mapped(v, root, 0, bytes);
	case CCOM_COLL_ALLTOALL:
		/* In place (a scratch published): phase B reads the lower ranks' scratch. */
		for (l = 0; l < kd->nlocal; l++)
			if (!mapped(v, l, 0, all) ||
			    (l < kd->me && v[l * CCOM_KDEV_NPUB + 1].handle && !mapped(v, l, 1, all)))
				return false;
		return true;
	case CCOM_COLL_REDUCESCATTER:
		bytes = all;
		break;
	default:
		break;
	}
	for (l = 0; l < kd->nlocal; l++) {
		if (!mapped(v, l, 0, bytes))
			return false;
		/* Phase B of AllReduce and of the Reduce root reads the peers' outputs. */
		if (l != kd->me && (op->kind == CCOM_COLL_ALLREDUCE ||
				    (op->kind == CCOM_COLL_REDUCE &&
				     kd->comm->rank_to_local[op->root] == kd->me)) &&
		    !mapped(v, l, 1, bytes))
			return false;
	}
	return true;
}

static const char *in_cpu(const struct mplan *mp, int l)
{
	return mp->v[l * CCOM_KDEV_NPUB].cpu;
}

static const char *out_cpu(const struct mplan *mp, int l)
{
	return mp->v[l * CCOM_KDEV_NPUB + 1].cpu;
}

static void mslice(size_t len, int n, int p, size_t *lo, size_t *hi)
{
	size_t a = MAPPED_SLICE_ALIGN;

	*lo = p == 0 ? 0 : (len * (size_t)p / (size_t)n) / a * a;
	*hi = p == n - 1 ? len : (len * (size_t)(p + 1) / (size_t)n) / a * a;
	if (*hi < *lo)
		*hi = *lo;
}

/* Publishes everything written before it: streaming stores are fenced first. */
static int sem_signal(struct ccom_kdev *kd, uint64_t value)
{
	struct nccom_sem_signal ss = { .size = sizeof(ss), .handle = kd->sem, .value = value };

	ccom_copy_stream_fence();
	return ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_SIGNAL, &ss);
}

/* Wait for local peer @l's semaphore to reach @value; abort and CCOM_OP_TIMEOUT apply. */
static int sem_wait_peer(struct mplan *mp, int l, uint64_t value)
{
	struct ccom_kdev *kd = mp->kd;
	struct nccom_sem_wait sw = { .size = sizeof(sw), .handle = kd->peer_sem[l], .value = value };
	struct timespec ts;
	int err;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sw.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
				MAPPED_WAIT_SLICE_NS;
		err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_WAIT, &sw);
		if (!err && sw.out_value >= value)
			return 0;
		if (err == -EPIPE) {
			ccom_set_last_error("kdev: rank %d: local peer rank %d is gone (its /dev/nccom file closed) during a mapped %s",
					    kd->comm->rank, kd->comm->local_to_rank[l],
					    ccom_coll_kind_name(mp->op->kind));
			return err;
		}
		if (err && err != -ETIMEDOUT && err != -EINTR)
			return err;
		err = ccom_wait_check(&mp->w);
		if (err)
			return err;
	}
}

/* 0, or -EFAULT when a peer's grant was revoked under the copy (channels.h). */
static int copy(struct mplan *mp, char *dst, const char *src, size_t len)
{
	return len ? ccom_ch_copy_mapped(mp->comm->coll->channels, dst, src, len, mp->nt) : 0;
}

/*
 * dst[0..count) = mine OP peer 0 OP peer 1 ... over every rank's input
 * at byte offset @in_off, block by block so that the n - 1 passes over a
 * block hit the cache.  In place (@dst is my input there), each element
 * is read before it is written.
 */
static int reduce_range(struct mplan *mp, size_t in_off, char *dst, size_t count)
{
	struct ccom_channels *ch = mp->comm->coll->channels;
	const struct ccom_op *op = mp->op;
	size_t per = MAPPED_BLOCK / mp->esz, off, len, b;
	int l, first, err;

	for (off = 0; off < count; off += len) {
		len = count - off < per ? count - off : per;
		b = off * mp->esz;
		first = 1;
		for (l = 0; l < mp->n; l++) {
			if (l == mp->me)
				continue;
			err = ccom_ch_reduce2_mapped(ch, dst + b,
						     first ? in_cpu(mp, mp->me) + in_off + b : dst + b,
						     in_cpu(mp, l) + in_off + b, len, op->dtype, op->op);
			if (err)
				return err;
			first = 0;
		}
		ccom_reduce_finish(dst + b, len, op->dtype, op->op, mp->comm->nranks);
	}
	return 0;
}

/* kdev_sched.c's alltoall_inplace_a: stage my blocks p > me, take block me of each p. */
static int alltoall_inplace_a(struct mplan *mp)
{
	size_t bytes = mp->bytes;
	int p, err = 0;

	for (p = mp->me + 1; !err && p < mp->n; p++) {
		err = copy(mp, mp->tmp + (size_t)p * bytes, mp->dst + (size_t)p * bytes, bytes);
		if (!err)
			err = copy(mp, mp->dst + (size_t)p * bytes,
				   in_cpu(mp, p) + (size_t)mp->me * bytes, bytes);
	}
	return err;
}

static int phase_a(struct mplan *mp)
{
	const struct ccom_op *op = mp->op;
	size_t esz = mp->esz, bytes = mp->bytes, lo, hi;
	int l, root, err = 0;

	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
	case CCOM_COLL_REDUCE:
		mslice(op->count, mp->n, mp->me, &lo, &hi);
		return reduce_range(mp, lo * esz, mp->dst + lo * esz, hi - lo);
	case CCOM_COLL_REDUCESCATTER:
		return reduce_range(mp, (size_t)mp->me * bytes, mp->dst, op->count);
	case CCOM_COLL_BROADCAST:
		root = mp->comm->rank_to_local[op->root];
		if (mp->me != root || op->sendbuff != op->recvbuff)
			err = copy(mp, mp->dst, in_cpu(mp, root), bytes);
		break;
	case CCOM_COLL_ALLGATHER:
		for (l = 0; !err && l < mp->n; l++)
			if (l != mp->me || (const char *)op->sendbuff != mp->dst + (size_t)l * bytes)
				err = copy(mp, mp->dst + (size_t)l * bytes, in_cpu(mp, l), bytes);
		break;
	case CCOM_COLL_ALLTOALL:
		if (mp->tmp && op->sendbuff == op->recvbuff)
			return alltoall_inplace_a(mp);
		for (l = 0; !err && l < mp->n; l++)
			err = copy(mp, (mp->tmp ? mp->tmp : mp->dst) + (size_t)l * bytes,
				   in_cpu(mp, l) + (size_t)mp->me * bytes, bytes);
		break;
	default:
		break;
	}
	return err;
}

static int phase_b(struct mplan *mp)
{
	const struct ccom_op *op = mp->op;
	size_t esz = mp->esz, bytes = mp->bytes, lo, hi;
	int l, err = 0;

	if (op->kind == CCOM_COLL_ALLREDUCE ||
	    (op->kind == CCOM_COLL_REDUCE && mp->comm->rank_to_local[op->root] == mp->me)) {
		for (l = 0; !err && l < mp->n; l++) {
			if (l == mp->me)
				continue;
			mslice(op->count, mp->n, l, &lo, &hi);
			if (hi == lo)
				continue;
			err = sem_wait_peer(mp, l, mp->v1);
			if (!err)
				err = copy(mp, mp->dst + lo * esz, out_cpu(mp, l) + lo * esz,
					   (hi - lo) * esz);
		}
	} else if (op->kind == CCOM_COLL_ALLTOALL && mp->tmp && op->sendbuff == op->recvbuff) {
		/* The higher rank of each pair: l staged my block in its scratch before its v1. */
		for (l = 0; !err && l < mp->me; l++) {
			err = sem_wait_peer(mp, l, mp->v1);
			if (!err)
				err = copy(mp, mp->dst + (size_t)l * bytes,
					   out_cpu(mp, l) + (size_t)mp->me * bytes, bytes);
		}
	} else if (op->kind == CCOM_COLL_ALLTOALL && mp->tmp) {
		/* Partly overlapping buffers: peers read my input until their v1. */
		for (l = 0; !err && l < mp->n; l++)
			if (l != mp->me)
				err = sem_wait_peer(mp, l, mp->v1);
		if (!err)
			err = copy(mp, mp->dst, mp->tmp, bytes * (size_t)mp->n);
	}
	return err;
}

int ccom_kdev_mapped_run(struct ccomComm *comm, struct ccom_kdev *kd, struct ccom_op *op,
			 const struct ccom_kdev_view *v, char *dst, char *tmp, uint64_t v1,
			 uint64_t v2, uint64_t v3)
{
	struct mplan mp = { .comm = comm, .kd = kd, .op = op, .v = v, .dst = dst, .tmp = tmp,
			    .n = kd->nlocal, .me = kd->me, .esz = ccom_dtype_size(op->dtype), .v1 = v1 };
	int l, err;

	mp.bytes = op->count * mp.esz;
	mp.nt = mp.bytes >= CCOM_STREAM_COPY_MIN;
	ccom_wait_begin(&mp.w, comm);
	err = phase_a(&mp);
	if (!err)
		err = sem_signal(kd, v1);
	if (!err)
		err = phase_b(&mp);
	if (!err)
		err = sem_signal(kd, v2);
	/* Nobody returns while a peer still reads its buffers. */
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = sem_wait_peer(&mp, l, v2);
	if (!err)
		err = sem_signal(kd, v3);
	if (err == -EFAULT)
		err = ccom_kdev_grant_revoked(kd, &mp.w, -1, ccom_coll_kind_name(op->kind));
	ccom_wait_end(&mp.w);
	return err;
}
