// SPDX-License-Identifier: MIT
/*
 * kdev_mapped.c - AllReduce on user buffers straight from the local peers'
 * pages mapped through their nccom grants (coll/, CCOM_KDEV_MAP=1): the
 * mapped single-copy path, XPMEM-style.
 *
 * It keeps kdev_sched.c's three-phase shape and semaphore values, with the
 * CPU doing what the engine's descriptors would:
 *
 *   phase A   reduce my slice from every rank's input (peers' through the
 *             read-only mappings, AVX kernels of reduce/) into my output;
 *   SIGNAL v1 (SEM_SIGNAL ioctl)
 *   phase B   for each peer: wait for its v1, copy its reduced slice out of
 *             its output (mapped) into mine;
 *   SIGNAL v2; WAIT every peer >= v2; SIGNAL v3
 *
 * Both paths read and write the same buffers at the same values, so a rank
 * on this path and a peer on the engine interoperate.  The grants were
 * validated by the registration cache's probe of this collective; an owner
 * that unmaps a buffer while a collective on it is running gets its peers a
 * SIGBUS (the driver revokes the mapping), which is that owner's bug, as
 * with any buffer freed during an operation.
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
#include "util/err.h"
#include "util/log.h"

#define MAPPED_BLOCK (64u << 10)	/* bytes reduced per pass: the n passes hit the cache */
#define MAPPED_SLICE_ALIGN 64		/* elements, as kdev_sched.c's slices */
#define MAPPED_WAIT_SLICE_NS 20000000ull

bool ccom_kdev_mapped_usable(const struct ccom_kdev *kd, const struct ccom_op *op,
			     const struct ccom_kdev_view *v)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	int l, i;

	if (!kd->map || kd->map_skip || op->kind != CCOM_COLL_ALLREDUCE || !bytes)
		return false;
	for (l = 0; l < kd->nlocal; l++)
		for (i = 0; i < CCOM_KDEV_NPUB; i++)
			if (!v[l * CCOM_KDEV_NPUB + i].cpu ||
			    v[l * CCOM_KDEV_NPUB + i].cpu_len < bytes)
				return false;
	return true;
}

static void mslice(size_t len, int n, int p, size_t *lo, size_t *hi)
{
	size_t a = MAPPED_SLICE_ALIGN;

	*lo = p == 0 ? 0 : (len * (size_t)p / (size_t)n) / a * a;
	*hi = p == n - 1 ? len : (len * (size_t)(p + 1) / (size_t)n) / a * a;
	if (*hi < *lo)
		*hi = *lo;
}

static int sem_signal(struct ccom_kdev *kd, uint64_t value)
{
	struct nccom_sem_signal ss = { .size = sizeof(ss), .handle = kd->sem, .value = value };

	return ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_SIGNAL, &ss);
}

/* Wait for local peer @l's semaphore to reach @value; abort and CCOM_OP_TIMEOUT apply. */
static int sem_wait_peer(struct ccom_kdev *kd, int l, uint64_t value, struct ccom_wait *w)
{
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
			ccom_set_last_error("kdev: rank %d: local peer rank %d is gone (its /dev/nccom file closed) during a mapped AllReduce",
					    kd->comm->rank, kd->comm->local_to_rank[l]);
			return err;
		}
		if (err && err != -ETIMEDOUT && err != -EINTR)
			return err;
		err = ccom_wait_check(w);
		if (err)
			return err;
	}
}

/* My slice: dst = in[0] OP in[1] OP ... (rank order), block by block. */
static void phase_a(struct ccomComm *comm, const struct ccom_op *op, const struct ccom_kdev_view *v,
		    int n, char *dst, size_t lo, size_t hi)
{
	struct ccom_channels *ch = comm->coll->channels;
	size_t esz = ccom_dtype_size(op->dtype), per = MAPPED_BLOCK / esz, off, len, b;
	char *acc;
	int p;

	for (off = lo; off < hi; off += len) {
		len = hi - off < per ? hi - off : per;
		b = off * esz;
		/* Two ranks: each element is read from both inputs before it is written (in place is safe). */
		acc = n == 2 ? dst + b : comm->coll->tmp;
		ccom_ch_reduce2(ch, acc, v[0].cpu + b, v[CCOM_KDEV_NPUB].cpu + b, len, op->dtype,
				op->op);
		for (p = 2; p < n; p++)
			ccom_ch_reduce2(ch, acc, acc, v[p * CCOM_KDEV_NPUB].cpu + b, len, op->dtype,
					op->op);
		ccom_reduce_finish(acc, len, op->dtype, op->op, comm->nranks);
		if (acc != dst + b)
			ccom_ch_copy(ch, dst + b, acc, len * esz, false);
	}
}

int ccom_kdev_mapped_allreduce(struct ccomComm *comm, struct ccom_kdev *kd, struct ccom_op *op,
			       const struct ccom_kdev_view *v, uint64_t v1, uint64_t v2, uint64_t v3)
{
	size_t esz = ccom_dtype_size(op->dtype), lo, hi;
	char *dst = op->recvbuff;
	struct ccom_wait w;
	int l, err;

	mslice(op->count, kd->nlocal, kd->me, &lo, &hi);
	phase_a(comm, op, v, kd->nlocal, dst, lo, hi);
	err = sem_signal(kd, v1);
	ccom_wait_begin(&w, comm);
	for (l = 0; !err && l < kd->nlocal; l++) {
		if (l == kd->me)
			continue;
		mslice(op->count, kd->nlocal, l, &lo, &hi);
		if (hi == lo)
			continue;
		err = sem_wait_peer(kd, l, v1, &w);
		if (!err)
			ccom_ch_copy(comm->coll->channels, dst + lo * esz,
				     v[l * CCOM_KDEV_NPUB + 1].cpu + lo * esz, (hi - lo) * esz, false);
	}
	if (!err)
		err = sem_signal(kd, v2);
	/* Nobody returns while a peer still reads its buffers. */
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = sem_wait_peer(kd, l, v2, &w);
	if (!err)
		err = sem_signal(kd, v3);
	ccom_wait_end(&w);
	return err;
}
