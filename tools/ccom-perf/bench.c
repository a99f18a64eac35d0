// SPDX-License-Identifier: MIT
/*
 * bench.c - ccom-perf's measurement loop: for each size, out-of-place then
 * in-place: one checked run, warm-up, timed iterations (counts agreed by an
 * allreduce so that every rank runs the same number), time = max over
 * ranks, and one nccl-tests row printed by rank 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

static const double busbw_num[PERF_NCOLLS] = { 2, 1, 1, 1, 1, 1, 1, 1, 1 };

/* Monotonic seconds (perf.h). */
double perf_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t perf_count(const struct perf_opts *o, size_t bytes, int nranks)
{
	size_t n = bytes / perf_dtype_size(o->dtype);

	if (o->coll == PERF_ALLGATHER || o->coll == PERF_REDUCESCATTER ||
	    o->coll == PERF_ALLTOALL || o->coll == PERF_GATHER || o->coll == PERF_SCATTER)
		n /= (size_t)nranks;
	return n;
}

static double bus_factor(const struct perf_ctx *c)
{
	double n = c->nranks;

	switch (c->o->coll) {
	case PERF_ALLREDUCE:
		return busbw_num[PERF_ALLREDUCE] * (n - 1) / n;
	case PERF_ALLGATHER:
	case PERF_REDUCESCATTER:
	case PERF_ALLTOALL:
	case PERF_GATHER:	/* nccl-tests: the root's link carries (n - 1) / n of the size */
	case PERF_SCATTER:
		return (n - 1) / n;
	default:
		return 1;
	}
}

/* Issue one operation of the benchmark. */
static ccomResult_t issue(struct perf_ctx *c, const void *s, void *r, size_t count)
{
	const struct perf_opts *o = c->o;
	int n = c->nranks;

	switch (o->coll) {
	case PERF_ALLREDUCE:
		return ccomAllReduce(s, r, count, o->dtype, o->op, c->comm, NULL);
	case PERF_BROADCAST:
		return ccomBroadcast(s, r, count, o->dtype, o->root, c->comm, NULL);
	case PERF_REDUCE:
		return ccomReduce(s, r, count, o->dtype, o->op, o->root, c->comm, NULL);
	case PERF_ALLGATHER:
		return ccomAllGather(s, r, count, o->dtype, c->comm, NULL);
	case PERF_REDUCESCATTER:
		return ccomReduceScatter(s, r, count, o->dtype, o->op, c->comm, NULL);
	case PERF_ALLTOALL:
		return ccomAlltoAll(s, r, count, o->dtype, c->comm, NULL);
	case PERF_SENDRECV:
		ccomGroupStart();
		ccomSend(s, count, o->dtype, (c->rank + 1) % n, c->comm, NULL);
		ccomRecv(r, count, o->dtype, (c->rank + n - 1) % n, c->comm, NULL);
		return ccomGroupEnd();
	case PERF_GATHER:
		return ccomGather(s, r, count, o->dtype, o->root, c->comm, NULL);
	case PERF_SCATTER:
		return ccomScatter(s, r, count, o->dtype, o->root, c->comm, NULL);
	default:
		return ccomInvalidArgument;
	}
}

/* Send/recv buffers of one mode; in-place shares the recv buffer as NCCL defines it. */
static void buffers(struct perf_ctx *c, size_t count, int inplace, char **s, char **r)
{
	size_t esz = perf_dtype_size(c->o->dtype);

	*s = c->send;
	*r = c->recv;
	if (!inplace)
		return;
	switch (c->o->coll) {
	case PERF_ALLGATHER:
		*s = c->recv + (size_t)c->rank * count * esz;
		break;
	case PERF_REDUCESCATTER:
	case PERF_SCATTER:
		*r = c->send + (size_t)c->rank * count * esz;
		break;
	case PERF_GATHER:
		*s = c->recv + (size_t)c->rank * count * esz;
		break;
	default:
		*s = c->recv;
		break;
	}
}

static size_t input_elems(const struct perf_ctx *c, size_t count)
{
	if (c->o->coll == PERF_REDUCESCATTER || c->o->coll == PERF_ALLTOALL ||
	    c->o->coll == PERF_SCATTER)
		return count * (size_t)c->nranks;
	return count;
}

static int sync_all(struct perf_ctx *c)
{
	ccomResult_t res = ccomCommSynchronize(c->comm);

	if (res != ccomSuccess) {
		fprintf(stderr, "ccom-perf: rank %d: %s: %s\n", c->rank, ccomGetErrorString(res),
			ccomGetLastError(c->comm));
		return -1;
	}
	return 0;
}

/* Every rank gets the sum or maximum of *@v: hostsync.c with -n, else libccom. */
static int agree(struct perf_ctx *c, void *v, ccomDataType_t dt, ccomRedOp_t op)
{
	if (c->sync)
		return perf_sync_agree(c->sync, c->rank, &c->sync_round, v, dt, op);
	if (ccomAllReduce(v, v, 1, dt, op, c->comm, NULL) != ccomSuccess)
		return -1;
	return sync_all(c);
}

/* Every rank returns only once every rank has called it. */
int perf_barrier(struct perf_ctx *c)
{
	int one = 1;

	return agree(c, &one, ccomInt32, ccomSum);
}

int perf_agree_max(struct perf_ctx *c, double *v)
{
	return agree(c, v, ccomFloat64, ccomMax);
}

/*
 * A bandwidth (GB/s) with at least 3 significant digits and at least 2
 * decimals, never in exponent form (12.34, 4.56, 0.145, 0.0123): one
 * numeric token, so scripts that split the columns keep working.
 */
void perf_fmt_bw(char *buf, size_t len, double gbs)
{
	int dec = 2;

	if (gbs > 0 && gbs < 1)
		dec = 2 - (int)floor(log10(gbs));
	if (dec > 9)
		dec = 9;
	snprintf(buf, len, "%.*f", dec, gbs);
}

/* One checked run: fill inputs, run, compare.  Returns wrong elements or -1. */
static int64_t checked_run(struct perf_ctx *c, size_t count, int inplace)
{
	char *s, *r;
	size_t esz = perf_dtype_size(c->o->dtype);

	buffers(c, count, inplace, &s, &r);
	memset(c->recv, 0, c->bufbytes);
	if (!(c->o->coll == PERF_BROADCAST && inplace && c->rank != c->o->root))
		perf_fill(s, input_elems(c, count), c->o->dtype, c->rank, 0, c->o->op);
	if (issue(c, s, r, count) != ccomSuccess || sync_all(c))
		return -1;
	(void)esz;
	return perf_check(c, count, r);
}

static int timed(struct perf_ctx *c, size_t count, int inplace, int iters, int warmup,
		 double *us)
{
	char *s, *r;
	double t0;
	int i;

	buffers(c, count, inplace, &s, &r);
	for (i = 0; i < warmup; i++)
		if (issue(c, s, r, count) != ccomSuccess)
			return -1;
	if (sync_all(c))
		return -1;
	t0 = perf_now_s();
	for (i = 0; i < iters; i++)
		if (issue(c, s, r, count) != ccomSuccess)
			return -1;
	if (sync_all(c))
		return -1;
	*us = (perf_now_s() - t0) * 1e6 / iters;
	return agree(c, us, ccomFloat64, ccomMax);
}

static void choose_iters(struct perf_ctx *c, size_t bytes, int *iters, int *warmup)
{
	long it = bytes ? (long)((512L << 20) / (long)bytes) : 1000;

	if (it > 1000)
		it = 1000;
	if (it < 5)
		it = 5;
	*iters = c->o->iters > 0 ? c->o->iters : (int)it;
	*warmup = c->o->warmup >= 0 ? c->o->warmup : (*iters / 4 < 2 ? 2 : *iters / 4 > 50 ? 50 : *iters / 4);
	/* Every rank must run the same counts: agree on the maximum. */
	agree(c, iters, ccomInt32, ccomMax);
	agree(c, warmup, ccomInt32, ccomMax);
}

static int run_mode(struct perf_ctx *c, size_t bytes, size_t count, int inplace,
		    char *line, size_t len, double *us_out)
{
	int64_t wrong = 0;
	double us = 0, algbw, busbw;
	char a[32], b[32];
	int iters, warmup;

	*us_out = 0;
	if (c->o->coll == PERF_SENDRECV && inplace) {
		snprintf(line, len, "  %7s  %6s  %6s  %5s", "n/a", "n/a", "n/a", "n/a");
		return 0;
	}
	if (c->o->check) {
		wrong = checked_run(c, count, inplace);
		if (wrong < 0 || agree(c, &wrong, ccomInt64, ccomSum))
			return -1;
		c->wrong_total += wrong;
	}
	choose_iters(c, bytes, &iters, &warmup);
	if (timed(c, count, inplace, iters, warmup, &us))
		return -1;
	algbw = us > 0 ? (double)bytes / us / 1e3 : 0;
	busbw = algbw * bus_factor(c);
	c->busbw_sum += busbw;
	c->nresults++;
	*us_out = us;
	perf_fmt_bw(a, sizeof(a), algbw);
	perf_fmt_bw(b, sizeof(b), busbw);
	snprintf(line, len, "  %7.2f  %6s  %6s  %5lld", us, a, b,
		 c->o->check ? (long long)wrong : -1LL);
	return 0;
}

static const char *const coll_names[PERF_NCOLLS] = {
	"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall", "sendrecv",
	"gather", "scatter"
};

static const char *type_name(ccomDataType_t dt)
{
	static const char *const n[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
					 "half", "float", "double", "bfloat16" };

	return n[dt];
}

static const char *op_name(const struct perf_opts *o)
{
	static const char *const n[] = { "sum", "prod", "max", "min", "avg" };

	if (o->coll == PERF_BROADCAST || o->coll == PERF_ALLGATHER || o->coll == PERF_ALLTOALL ||
	    o->coll == PERF_SENDRECV || o->coll == PERF_GATHER || o->coll == PERF_SCATTER)
		return "none";
	return n[o->op];
}

static void print_roof_header(const struct perf_ctx *c)
{
	double m0, k0, m1, k1;
	int m;

	printf("# roofline (-R): t_min = max(M * S / Bm, K * S / Bk); Bc, Br, Brd: memcpy, float32\n"
	       "#   a + b and a read of S bytes timed on every rank at once (aggregate read + write\n"
	       "#   GB/s), Bm = max(Bc, Br, Brd); Bk the same on a staging chunk (%zu bytes); M, K: the\n"
	       "#   operation's traffic over all ranks on S-sized buffers and on chunks, in units of S:\n",
	       perf_roof_chunk(c));
	for (m = 0; m < PERF_NMODELS; m++) {
		perf_model_traffic((enum perf_model)m, c->o->coll, c->nranks, 0, &m0, &k0);
		perf_model_traffic((enum perf_model)m, c->o->coll, c->nranks, 1, &m1, &k1);
		printf("#   %-6s M %g K %g (in-place M %g K %g)\n", perf_model_name((enum perf_model)m),
		       m0, k0, m1, k1);
	}
	printf("#   bound = busbw at t_min; %%oop, %%ip = t_min / time\n");
}

static void print_header(const struct perf_ctx *c)
{
	const char *rh1 = c->o->roof ?
		"  model       Bc       Br      Brd       Bk   bound   %oop    %ip" : "";
	const char *rh2 = c->o->roof ? "         (GB/s)   (GB/s)   (GB/s)   (GB/s)  (GB/s)" : "";

	printf("# ccom-perf %s: %d ranks, type %s, redop %s, check %s\n", coll_names[c->o->coll],
	       c->nranks, type_name(c->o->dtype), op_name(c->o), c->o->check ? "on" : "off");
	if (c->o->roof)
		print_roof_header(c);
	printf("#%76s%34s\n", "out-of-place", "in-place");
	printf("# %10s  %12s  %8s  %6s  %4s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s%s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
	       "#wrong", rh1);
	printf("# %10s  %12s  %8s  %6s  %4s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s%s\n", "(B)",
	       "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
	       rh2);
	fflush(stdout);
}

/* -R: the row's model, probe rates, bound and percentages (roof.c). */
static int roof_columns(struct perf_ctx *c, size_t bytes, size_t count, const double *us,
			char *line, size_t len)
{
	enum perf_model m = perf_roof_model(c, count);
	size_t chunk = perf_roof_chunk(c);
	struct perf_rates rm, rk;
	double t0, t1, bound;
	char sbc[32], sbr[32], sbd[32], sbk[32], sb[32], p0[16] = "n/a", p1[16] = "n/a";

	if (perf_roof_probe(c, bytes, &rm) ||
	    perf_roof_probe(c, bytes < chunk ? bytes : chunk, &rk))
		return -1;
	t0 = perf_roof_tmin_us(c, m, bytes, 0, rm.best, rk.best);
	t1 = perf_roof_tmin_us(c, m, bytes, 1, rm.best, rk.best);
	bound = t0 > 0 ? (double)bytes / t0 / 1e3 * bus_factor(c) : 0;
	if (us[0] > 0 && t0 > 0) {
		snprintf(p0, sizeof(p0), "%.1f", 100 * t0 / us[0]);
		c->roof_sum += 100 * t0 / us[0];
		c->nroof++;
	}
	if (us[1] > 0 && t1 > 0)
		snprintf(p1, sizeof(p1), "%.1f", 100 * t1 / us[1]);
	perf_fmt_bw(sbc, sizeof(sbc), rm.copy / 1e9);
	perf_fmt_bw(sbr, sizeof(sbr), rm.add / 1e9);
	perf_fmt_bw(sbd, sizeof(sbd), rm.read / 1e9);
	perf_fmt_bw(sbk, sizeof(sbk), rk.best / 1e9);
	perf_fmt_bw(sb, sizeof(sb), bound);
	snprintf(line, len, "  %6s  %7s  %7s  %7s  %7s  %6s  %5s  %5s", perf_model_name(m), sbc, sbr,
		 sbd, sbk, sb, p0, p1);
	return 0;
}

/* The "size" column: the total buffer of allgather, reducescatter, alltoall, gather, scatter. */
static size_t row_bytes(const struct perf_ctx *c, size_t count)
{
	return count * perf_dtype_size(c->o->dtype) *
	       (input_elems(c, 1) > 1 || c->o->coll == PERF_ALLGATHER ||
		c->o->coll == PERF_GATHER ? (size_t)c->nranks : 1);
}

int perf_run(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	char l1[256], l2[256], l3[256];
	double us[2];
	size_t bytes, count;
	int root = (o->coll == PERF_BROADCAST || o->coll == PERF_REDUCE || o->coll == PERF_GATHER ||
		    o->coll == PERF_SCATTER) ? o->root : -1;

	if (c->rank == 0)
		print_header(c);
	for (bytes = o->minbytes; bytes <= o->maxbytes;) {
		count = perf_count(o, bytes, c->nranks);
		if (run_mode(c, bytes, count, 0, l1, sizeof(l1), &us[0]) ||
		    run_mode(c, bytes, count, 1, l2, sizeof(l2), &us[1]))
			return -1;
		l3[0] = '\0';
		if (o->roof && roof_columns(c, row_bytes(c, count), count, us, l3, sizeof(l3)))
			return -1;
		if (c->rank == 0) {
			printf("  %10zu  %12zu  %8s  %6s  %4d%s%s%s\n", row_bytes(c, count),
			       count, type_name(o->dtype), op_name(o), root, l1, l2, l3);
			fflush(stdout);
		}
		if (o->factor <= 1.0 || bytes == o->maxbytes)
			break;
		bytes = (size_t)((double)bytes * o->factor);
		if (bytes > o->maxbytes)
			break;
	}
	if (c->rank == 0) {
		printf("# Out of bounds values : %lld %s\n", (long long)c->wrong_total,
		       c->wrong_total ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g\n",
		       c->nresults ? c->busbw_sum / c->nresults : 0.0);
		if (o->roof)
			printf("# Avg %% of roofline    : %.1f (out-of-place, time against t_min)\n",
			       c->nroof ? c->roof_sum / c->nroof : 0.0);
		printf("#\n");
		fflush(stdout);
	}
	return c->wrong_total ? 1 : 0;
}
