// SPDX-License-Identifier: MIT
/*
 * roof.c - ccom-perf -R: the memory roofline of each row.
 *
 * For each size S, every rank at once (as the ranks of the benchmark run,
 * with the same CPU binding) times a memcpy of S bytes and a streaming
 * reduction c = a + b of S bytes (float32), each over its own buffers.
 * Their aggregate traffic rates (read + write bytes per second, summed
 * over the ranks; the time is the slowest rank's, best of 3 trials) are
 * the machine's rates at that working set: Bc for copies, Br for
 * reductions.
 *
 * An algorithm's operation moves, over all ranks together, C*S bytes of
 * copy traffic and R*S bytes of reduction traffic (read + write; the
 * coefficients are perf_model_traffic()'s, derived in collectives.rst),
 * so it cannot take less than  t_min = (C + R) * S / max(Bc, Br)  and its
 * busbw cannot exceed busbw_factor * S / t_min.  The row shows that bound
 * and t_min / t as a percentage for out-of-place and in-place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "perf.h"

#define PROBE_TRAFFIC (64u << 20)	/* bytes each rank reads + writes per trial */
#define PROBE_TRIALS 3			/* best of, as STREAM reports its best time */

typedef float v4f __attribute__((vector_size(16)));

static const char *const model_names[PERF_NMODELS] = { "staged", "single", "zcopy" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Streaming c = a + b over @bytes (multiple of 4), 64 bytes per iteration. */
static void probe_add(char *c, const char *a, const char *b, size_t bytes)
{
	size_t i = 0, n = bytes / sizeof(float);
	float *fc = (float *)c;
	const float *fa = (const float *)a, *fb = (const float *)b;

	for (; i + 16 <= n; i += 16) {
		v4f x0, x1, x2, x3, y0, y1, y2, y3;

		memcpy(&x0, fa + i, 16); memcpy(&x1, fa + i + 4, 16);
		memcpy(&x2, fa + i + 8, 16); memcpy(&x3, fa + i + 12, 16);
		memcpy(&y0, fb + i, 16); memcpy(&y1, fb + i + 4, 16);
		memcpy(&y2, fb + i + 8, 16); memcpy(&y3, fb + i + 12, 16);
		x0 += y0; x1 += y1; x2 += y2; x3 += y3;
		memcpy(fc + i, &x0, 16); memcpy(fc + i + 4, &x1, 16);
		memcpy(fc + i + 8, &x2, 16); memcpy(fc + i + 12, &x3, 16);
	}
	for (; i < n; i++)
		fc[i] = fa[i] + fb[i];
}

/*
 * Time @iters passes of one probe on every rank at once: the slowest
 * rank's time of a trial, the best of PROBE_TRIALS trials.
 */
static int probe_time(struct perf_ctx *c, int add, size_t bytes, int iters, double *best)
{
	double t0, t;
	int i, k;

	*best = 0;
	for (k = 0; k < PROBE_TRIALS; k++) {
		if (perf_barrier(c))
			return -1;
		t0 = now_s();
		for (i = 0; i < iters; i++) {
			if (add)
				probe_add(c->recv, c->probe, c->probe + c->probe_half, bytes);
			else
				memcpy(c->recv, c->probe, bytes);
			__asm__ __volatile__("" ::: "memory");
		}
		t = now_s() - t0;
		if (perf_agree_max(c, &t))
			return -1;
		if (k == 0 || t < *best)
			*best = t;
	}
	return 0;
}

/*
 * Bc and Br (aggregate bytes/s of read + write traffic) at working set
 * @bytes per rank.  The sources are the rank's two probe buffers (1.0f,
 * never a denormal), the destination its receive buffer (the row's
 * values are refilled by the next checked run).
 */
int perf_roof_probe(struct perf_ctx *c, size_t bytes, double *bc, double *br)
{
	size_t b = bytes & ~(size_t)63;
	long it;
	double t;

	if (b < 64)
		b = 64;
	it = (long)(PROBE_TRAFFIC / (3 * b));
	it = it < 3 ? 3 : it > 100000 ? 100000 : it;
	/* One untimed pass of each, then the timed ones. */
	memcpy(c->recv, c->probe, b);
	probe_add(c->recv, c->probe, c->probe + c->probe_half, b);
	if (probe_time(c, 0, b, (int)it, &t))
		return -1;
	*bc = t > 0 ? 2.0 * (double)b * (double)it * c->nranks / t : 0;
	if (probe_time(c, 1, b, (int)it, &t))
		return -1;
	*br = t > 0 ? 3.0 * (double)b * (double)it * c->nranks / t : 0;
	return 0;
}

/*
 * The model of the path this row takes: the nccom engine (CCOM_KDEV=1,
 * or /dev/nccom present and CCOM_KDEV unset: the engine may be chosen,
 * so the higher single-copy bound) moves every byte once; ccomMemAlloc
 * buffers (-m) take the zero-copy path for AllReduce, AllGather and
 * ReduceScatter from 64 KiB per rank on up to 8 ranks; the rest is
 * staged through the host segment.
 */
enum perf_model perf_roof_model(const struct perf_ctx *c, size_t count)
{
	const char *kdev = getenv("CCOM_KDEV");
	size_t per = count * perf_dtype_size(c->o->dtype);
	struct stat st;

	if ((kdev && !strcmp(kdev, "1")) || (!kdev && !stat("/dev/nccom", &st)) ||
	    (!kdev && !stat("/dev/nccom0", &st)))
		return PERF_MODEL_SINGLE;
	if (c->o->memalloc && c->nranks <= 8 && per >= (64u << 10) &&
	    (c->o->coll == PERF_ALLREDUCE || c->o->coll == PERF_ALLGATHER ||
	     c->o->coll == PERF_REDUCESCATTER))
		return c->o->coll == PERF_ALLREDUCE ? PERF_MODEL_ZCOPY : PERF_MODEL_SINGLE;
	return PERF_MODEL_STAGED;
}

const char *perf_model_name(enum perf_model m)
{
	return model_names[m];
}

/*
 * Traffic of one operation over all ranks, in units of S (the size
 * column): *copy of copies, *red of reductions (every input read once,
 * the output written once).  Documented with their derivation in
 * Documentation/libccom/collectives.rst ("The roofline").
 */
void perf_model_traffic(enum perf_model m, enum perf_coll coll, int nranks, int inplace,
			double *copy, double *red)
{
	double n = nranks, own = inplace ? 0 : 2;	/* the own block's local copy */

	*copy = 0;
	*red = 0;
	if (nranks == 1) {	/* a local copy out-of-place, nothing in-place */
		*copy = own;
		return;
	}
	if (m == PERF_MODEL_STAGED) {
		switch (coll) {
		case PERF_ALLREDUCE: *copy = 4 * n - 2; *red = n + 1; break;
		case PERF_REDUCE: *copy = 2 * n; *red = n + 1; break;
		case PERF_BROADCAST: *copy = 2 * n + own; break;
		case PERF_ALLGATHER: *copy = 2 * n + own; break;
		case PERF_REDUCESCATTER: *copy = 2 * (n - 1); *red = n + 1; break;
		case PERF_ALLTOALL: *copy = 4 * (n - 1) + own; break;
		case PERF_SENDRECV: *copy = 4 * n; break;
		case PERF_GATHER:	/* the root's blocks only: S / n each */
		case PERF_SCATTER: *copy = (4 * (n - 1) + own) / n; break;
		default: break;
		}
		return;
	}
	if (m == PERF_MODEL_ZCOPY && coll == PERF_ALLREDUCE) {
		*copy = n - 1;	/* from the block in cache: the writes only */
		*red = n + 1;
		return;
	}
	switch (coll) {
	case PERF_ALLREDUCE: *copy = 2 * (n - 1); *red = n + 1; break;
	case PERF_REDUCE: *red = n + 1; break;
	case PERF_BROADCAST: *copy = 2 * (n - 1) + own; break;
	case PERF_ALLGATHER: *copy = 2 * (n - 1) + own; break;
	case PERF_REDUCESCATTER: *red = n + 1; break;
	case PERF_ALLTOALL: *copy = 2 * (n - 1) + own; break;
	case PERF_SENDRECV: *copy = 2 * n; break;
	case PERF_GATHER:
	case PERF_SCATTER: *copy = (2 * (n - 1) + own) / n; break;
	default: break;
	}
}

/*
 * The least time (us) of one operation of @bytes under model @m: its
 * traffic at the better of the two probe rates.  Not copies at Bc plus
 * reductions at Br: the staged engine reduces chunks that the copy-in has
 * just put in cache, faster than a streaming reduction from DRAM (2 ranks,
 * 128 MiB: 137% of such a bound).
 */
double perf_roof_tmin_us(const struct perf_ctx *c, enum perf_model m, size_t bytes, int inplace,
			 double bc, double br)
{
	double copy, red, rate = bc > br ? bc : br;

	perf_model_traffic(m, c->o->coll, c->nranks, inplace, &copy, &red);
	return rate > 0 ? (copy + red) * (double)bytes / rate * 1e6 : 0;
}

/* Two source buffers of the receive buffer's size, filled with 1.0f. */
int perf_roof_alloc(struct perf_ctx *c)
{
	size_t half = (c->bufbytes + 4095) & ~(size_t)4095, i;
	float *f;

	c->probe = aligned_alloc(4096, 2 * half);
	if (!c->probe)
		return -1;
	c->probe_half = half;
	f = (float *)c->probe;
	for (i = 0; i < 2 * half / sizeof(float); i++)
		f[i] = 1.0f;
	return 0;
}
