// SPDX-License-Identifier: MIT
/*
 * roof.c - ccom-perf -R: the memory roofline of each row.
 *
 * For each size S, every rank at once (as the ranks of the benchmark run,
 * with the same CPU binding) times a memcpy of S bytes and a streaming
 * reduction c = a + b of S bytes (float32), each over its own buffers,
 * and the same on one staging chunk of the host segment (or S, if
 * smaller).  Their aggregate traffic rates (read + write bytes per
 * second, summed over the ranks; the time is the slowest rank's, best of
 * 3 trials) are the machine's rates at those working sets: Bm (the
 * better of copy and reduction on S-byte buffers) and Bk (on a chunk).
 *
 * An operation under a path's model moves, over all ranks together, M*S
 * bytes on buffers of the operation's size (at least every input read
 * and every output written once) and K*S bytes on staging chunks (the
 * coefficients are perf_model_traffic()'s, derived in collectives.rst),
 * so it cannot take less than  t_min = max(M*S / Bm, K*S / Bk)  and its
 * busbw cannot exceed busbw_factor * S / t_min.  The row shows that bound
 * and t_min / t as a percentage for out-of-place and in-place.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "perf.h"

#define PROBE_TRAFFIC (64u << 20)	/* bytes each rank reads + writes per trial */
#define PROBE_TRIALS 3			/* best of, as STREAM reports its best time */
#define PROBE_PIECE (256u << 10)	/* piece of the chunked memcpy probe */

enum probe_kind { PROBE_COPY, PROBE_COPY_PIECES, PROBE_ADD, PROBE_READ };

typedef float v4f __attribute__((vector_size(16)));

static const char *const model_names[PERF_NMODELS + 1] = {
	"staged", "single", "zcopy", "cma", "auto"
};

/*
 * The probe's clock: this thread's CPU time, so that the time other jobs
 * hold the CPU does not lower the rates (and so the bound); the ranks
 * still stream at once, sharing the memory as the collective does.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* Streaming read of @bytes (multiple of 4): a float sum the compiler cannot drop. */
static float probe_read(const char *a, size_t bytes)
{
	size_t i = 0, n = bytes / sizeof(float);
	const float *fa = (const float *)a;
	v4f s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, x;

	for (; i + 16 <= n; i += 16) {
		memcpy(&x, fa + i, 16); s0 += x;
		memcpy(&x, fa + i + 4, 16); s1 += x;
		memcpy(&x, fa + i + 8, 16); s2 += x;
		memcpy(&x, fa + i + 12, 16); s3 += x;
	}
	s0 += s1 + s2 + s3;
	return s0[0] + s0[1] + s0[2] + s0[3];
}

/* memcpy in pieces of PROBE_PIECE: ordinary stores, as the paths' chunked copies make. */
static void probe_copy_pieces(char *dst, const char *src, size_t bytes)
{
	size_t off, len;

	for (off = 0; off < bytes; off += len) {
		len = bytes - off < PROBE_PIECE ? bytes - off : PROBE_PIECE;
		memcpy(dst + off, src + off, len);
	}
}

static volatile float probe_sink;

static void probe_pass(struct perf_ctx *c, enum probe_kind kind, size_t bytes)
{
	switch (kind) {
	case PROBE_COPY: memcpy(c->recv, c->probe, bytes); break;
	case PROBE_COPY_PIECES: probe_copy_pieces(c->recv, c->probe, bytes); break;
	case PROBE_ADD: probe_add(c->recv, c->probe, c->probe + c->probe_half, bytes); break;
	case PROBE_READ: probe_sink = probe_read(c->probe, bytes); break;
	}
}

/*
 * Time @iters passes of one probe on every rank at once: the slowest
 * rank's CPU time of a trial, the best of PROBE_TRIALS trials.
 */
static int probe_time(struct perf_ctx *c, enum probe_kind kind, size_t bytes, int iters,
		      double *best)
{
	double t0, t;
	int i, k;

	*best = 0;
	for (k = 0; k < PROBE_TRIALS; k++) {
		if (perf_barrier(c))
			return -1;
		t0 = now_s();
		for (i = 0; i < iters; i++) {
			probe_pass(c, kind, bytes);
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
 * The rates (aggregate bytes/s of read + write traffic) at working set
 * @bytes per rank: r->copy the better of one memcpy and a memcpy in
 * pieces (glibc streams a large memcpy with non-temporal stores, the
 * paths copy in chunks with ordinary ones: either may be faster), r->add
 * c = a + b, r->read a streaming read.  The sources are the rank's two
 * probe buffers (1.0f, never a denormal), the destination its receive
 * buffer (the row's values are refilled by the next checked run).
 */
int perf_roof_probe(struct perf_ctx *c, size_t bytes, struct perf_rates *r)
{
	static const double traffic[] = { 2, 2, 3, 1 };	/* per byte of each probe kind */
	double rate[4], t;
	size_t b = bytes & ~(size_t)63;
	long it;
	int k;

	if (b < 64)
		b = 64;
	it = (long)(PROBE_TRAFFIC / (3 * b));
	it = it < 3 ? 3 : it > 100000 ? 100000 : it;
	for (k = 0; k < 4; k++) {
		probe_pass(c, (enum probe_kind)k, b);	/* one untimed pass */
		if (probe_time(c, (enum probe_kind)k, b, (int)it, &t))
			return -1;
		rate[k] = t > 0 ? traffic[k] * (double)b * (double)it * c->nranks / t : 0;
	}
	r->copy = rate[0] > rate[1] ? rate[0] : rate[1];
	r->add = rate[2];
	r->read = rate[3];
	r->best = r->copy > r->add ? r->copy : r->add;
	if (r->read > r->best)
		r->best = r->read;
	return 0;
}

/* Whether the CMA path (libccom/coll/cma.c) may carry this row: its collectives, 64 KiB per rank. */
static bool cma_serves(const struct perf_ctx *c, size_t per)
{
	switch (c->o->coll) {
	case PERF_ALLREDUCE: case PERF_REDUCE: case PERF_REDUCESCATTER:
	case PERF_BROADCAST: case PERF_ALLGATHER: case PERF_ALLTOALL:
		return per >= (64u << 10) && c->o->hosts <= 1;
	default:
		return false;
	}
}

/*
 * The model of the path this row takes: the nccom engine when forced
 * (CCOM_KDEV=1); CMA when forced (CCOM_CMA=1) on what it serves;
 * ccomMemAlloc buffers (-m) take the zero-copy path for AllReduce,
 * AllGather and ReduceScatter from 64 KiB per rank on up to 8 ranks; the
 * rest is staged through the host segment.  Where the tuner chooses
 * among several (/dev/nccom present and CCOM_KDEV unset; CCOM_CMA unset
 * or auto on what CMA serves), "auto": the least bound of the candidates
 * (perf_roof_tmin_us()).
 */
enum perf_model perf_roof_model(const struct perf_ctx *c, size_t count)
{
	const char *kdev = getenv("CCOM_KDEV"), *cma = getenv("CCOM_CMA");
	size_t per = count * perf_dtype_size(c->o->dtype);
	struct stat st;

	if (kdev && !strcmp(kdev, "1"))
		return PERF_MODEL_SINGLE;
	if (cma && !strcmp(cma, "1") && cma_serves(c, per))
		return PERF_MODEL_CMA;
	if (!kdev && (!stat("/dev/nccom", &st) || !stat("/dev/nccom0", &st)))
		return PERF_MODEL_AUTO;
	if (c->o->memalloc && c->nranks <= 8 && per >= (64u << 10) &&
	    (c->o->coll == PERF_ALLREDUCE || c->o->coll == PERF_ALLGATHER ||
	     c->o->coll == PERF_REDUCESCATTER))
		return c->o->coll == PERF_ALLREDUCE ? PERF_MODEL_ZCOPY : PERF_MODEL_SINGLE;
	if ((!cma || strcmp(cma, "0")) && cma_serves(c, per))
		return PERF_MODEL_AUTO;
	return PERF_MODEL_STAGED;
}

const char *perf_model_name(enum perf_model m)
{
	return model_names[m];
}

/*
 * The traffic every path must move through memory, over all ranks, in
 * units of S: each input read once and each output written once (a
 * reduction's inputs and the broadcast root's buffer read once, every
 * receiving rank's output written once).
 */
static double compulsory(enum perf_coll coll, double n, int inplace)
{
	double own = inplace ? 0 : 1;	/* the own block's write out-of-place */

	switch (coll) {
	case PERF_ALLREDUCE: return 2 * n;
	case PERF_REDUCE: return n + 1;
	case PERF_BROADCAST: return n + own;
	case PERF_ALLGATHER: return n + own;
	case PERF_REDUCESCATTER: return n + 1;
	case PERF_ALLTOALL: return inplace ? 2 * (n - 1) : 2 * n;
	case PERF_SENDRECV: return 2 * n;
	case PERF_GATHER:	/* the root's blocks only: S / n each */
	case PERF_SCATTER: return (2 * (n - 1) + 2 * own) / n;
	default: return 0;
	}
}

/* The staged path's traffic through the host segment's chunks (cache-sized), in units of S. */
static double staged_chunks(enum perf_coll coll, double n)
{
	switch (coll) {
	case PERF_ALLREDUCE: return 3 * n - 2;
	case PERF_REDUCE: return 2 * n - 1;
	case PERF_BROADCAST: return n;
	case PERF_ALLGATHER: return n;
	case PERF_REDUCESCATTER: return 2 * (n - 1);
	case PERF_ALLTOALL: return 2 * (n - 1);
	case PERF_SENDRECV: return 2 * n;
	case PERF_GATHER:
	case PERF_SCATTER: return 2 * (n - 1) / n;
	default: return 0;
	}
}

/* The single-copy paths' traffic (the engine, the zero-copy AllGather and ReduceScatter). */
static double single_mem(enum perf_coll coll, double n, int inplace)
{
	double own = inplace ? 0 : 2;

	switch (coll) {
	case PERF_ALLREDUCE: return 3 * n - 1;
	case PERF_REDUCE: return n + 1;
	case PERF_BROADCAST: return 2 * (n - 1) + own;
	case PERF_ALLGATHER: return 2 * (n - 1) + own;
	case PERF_REDUCESCATTER: return n + 1;
	case PERF_ALLTOALL: return 2 * (n - 1) + own;
	case PERF_SENDRECV: return 2 * n;
	case PERF_GATHER:
	case PERF_SCATTER: return (2 * (n - 1) + own) / n;
	default: return 0;
	}
}

/*
 * Traffic of one operation over all ranks, in units of S (the size
 * column): *mem on buffers of the operation's size (the users' buffers,
 * priced at the rates measured on S-byte buffers) and *chunk on the host
 * segment's staging chunks (priced at the rates measured on a chunk).
 * Documented with their derivation in Documentation/libccom/collectives.rst
 * ("The roofline").
 */
void perf_model_traffic(enum perf_model m, enum perf_coll coll, int nranks, int inplace,
			double *mem, double *chunk)
{
	double n = nranks;

	*mem = 0;
	*chunk = 0;
	if (nranks == 1) {	/* a local copy out-of-place, nothing in-place */
		*mem = inplace ? 0 : 2;
		return;
	}
	switch (m) {
	case PERF_MODEL_STAGED:
		*mem = compulsory(coll, n, inplace);
		*chunk = staged_chunks(coll, n);
		break;
	case PERF_MODEL_ZCOPY:	/* read every input once, write every output once */
		*mem = coll == PERF_ALLREDUCE ? 2 * n : single_mem(coll, n, inplace);
		break;
	case PERF_MODEL_CMA:	/* the kernel copies peers' slices into a chunk, reduced from there */
		*mem = compulsory(coll, n, inplace);
		*chunk = coll == PERF_ALLREDUCE || coll == PERF_REDUCESCATTER ? 2 * (n - 1) : 0;
		break;
	default:
		*mem = single_mem(coll, n, inplace);
		break;
	}
}

/*
 * The least time (us) of one operation of @bytes under model @m: each of
 * the two kinds of traffic at the better of the copy and reduction rates
 * measured at its working set (@bm on S-byte buffers, @bk on a chunk);
 * both must be carried, and the caches and the memory work in parallel,
 * so the larger of the two times.  Copies and reductions are not priced
 * apart: the staged engine reduces chunks that the copy-in has just put
 * in cache, faster than a streaming reduction from DRAM.
 */
double perf_roof_tmin_us(const struct perf_ctx *c, enum perf_model m, size_t bytes, int inplace,
			 double bm, double bk)
{
	double mem, chunk, tm, tk, t0, t1;

	if (m == PERF_MODEL_AUTO) {	/* whichever the tuner picks: the least bound */
		t0 = perf_roof_tmin_us(c, PERF_MODEL_STAGED, bytes, inplace, bm, bk);
		t1 = perf_roof_tmin_us(c, PERF_MODEL_SINGLE, bytes, inplace, bm, bk);
		t0 = t0 < t1 ? t0 : t1;
		t1 = perf_roof_tmin_us(c, PERF_MODEL_CMA, bytes, inplace, bm, bk);
		return t0 < t1 ? t0 : t1;
	}
	perf_model_traffic(m, c->o->coll, c->nranks, inplace, &mem, &chunk);
	tm = bm > 0 ? mem * (double)bytes / bm : 0;
	tk = bk > 0 ? chunk * (double)bytes / bk : 0;
	return (tm > tk ? tm : tk) * 1e6;
}

/*
 * The staging chunk per rank the host segment uses (transport/shm.c's
 * rule: CCOM_SHM_CHUNK, or 1 MiB for 2 local ranks, 512 KiB up to 4,
 * else 256 KiB), where the cache rate of -R is measured.
 */
size_t perf_roof_chunk(const struct perf_ctx *c)
{
	const char *e = getenv("CCOM_SHM_CHUNK");
	long long v = e ? atoll(e) : 0;

	if (v >= 4096 && v <= (64ll << 20))
		return (size_t)v & ~(size_t)4095;
	return c->nranks <= 2 ? (1u << 20) : c->nranks <= 4 ? (512u << 10) : (256u << 10);
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
