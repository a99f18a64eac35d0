/* SPDX-License-Identifier: MIT */
/*
 * perf.h - ccom-perf, nccl-tests-style benchmarks of libccom's collectives.
 */
#ifndef CCOM_PERF_H
#define CCOM_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "ccom.h"

enum perf_coll {
	PERF_ALLREDUCE, PERF_BROADCAST, PERF_REDUCE, PERF_ALLGATHER, PERF_REDUCESCATTER,
	PERF_ALLTOALL, PERF_SENDRECV, PERF_GATHER, PERF_SCATTER, PERF_NCOLLS
};

struct perf_opts {
	enum perf_coll coll;
	int nranks;		/* -n: fork this many local ranks; 0: launcher mode */
	size_t minbytes, maxbytes;
	double factor;
	ccomDataType_t dtype;
	ccomRedOp_t op;
	int root;
	int warmup, iters;	/* -1: automatic (scaled by size) */
	int check;
	int memalloc;		/* -m: buffers from ccomMemAlloc */
	int bind;		/* -B: with -n, one CPU per rank when ranks <= CPUs */
	int roof;		/* -R: memory roofline per row (roof.c) */
	int hosts;		/* -H: with -n, the ranks as this many simulated hosts (main.c) */
	int reg;		/* -G: buffers registered with ccomCommRegister (main.c) */
};

/* roof.c's models of an operation's memory traffic (collectives.rst, "The roofline"). */
enum perf_model {
	PERF_MODEL_STAGED, PERF_MODEL_SINGLE, PERF_MODEL_ZCOPY, PERF_MODEL_CMA, PERF_NMODELS,
	PERF_MODEL_AUTO = PERF_NMODELS	/* the path is the tuner's choice: the least bound */
};

struct perf_ctx {
	const struct perf_opts *o;
	ccomComm_t comm;
	int rank, nranks;
	char *send, *recv;
	void *hsend, *hrecv;	/* -G: their ccomCommRegister handles */
	size_t bufbytes;
	int64_t wrong_total;
	double busbw_sum;
	int nresults;
	char *probe;		/* -R: two source buffers of probe_half bytes */
	size_t probe_half;
	double roof_sum;	/* -R: sum of the out-of-place percentages */
	int nroof;
	struct perf_sync *sync;	/* -n: the harness agrees through it (hostsync.c), else NULL */
	unsigned int sync_round;
};

/* check.c */
size_t perf_dtype_size(ccomDataType_t dt);
double perf_input(int rank, size_t idx, ccomRedOp_t op);
void perf_fill(void *buf, size_t n, ccomDataType_t dt, int rank, size_t base, ccomRedOp_t op);
int64_t perf_check(const struct perf_ctx *c, size_t count, void *out);

/* bench.c */
int perf_run(struct perf_ctx *c);
double perf_now_s(void);
int perf_barrier(struct perf_ctx *c);
int perf_agree_max(struct perf_ctx *c, double *v);
void perf_fmt_bw(char *buf, size_t len, double gbs);

/*
 * hostsync.c: with -n, the harness's barrier and agreements between the
 * forked ranks, outside libccom.  perf_sync_create() before the fork;
 * perf_sync_abort() (the parent) when a rank died; perf_sync_agree():
 * *@v becomes the sum or maximum over the ranks (int32, int64, double),
 * 0 or -1 with the reason on stderr.
 */
struct perf_sync *perf_sync_create(int nranks);
void perf_sync_abort(struct perf_sync *s);
int perf_sync_agree(struct perf_sync *s, int rank, unsigned int *round, void *v,
		    ccomDataType_t dt, ccomRedOp_t op);

/* roof.c */
int perf_roof_alloc(struct perf_ctx *c);
/* Aggregate read + write bytes/s over the ranks at one working set (roof.c). */
struct perf_rates {
	double copy, add, read;
	double best;		/* the largest of the three: the rate a bound may assume */
};
int perf_roof_probe(struct perf_ctx *c, size_t bytes, struct perf_rates *r);
enum perf_model perf_roof_model(const struct perf_ctx *c, size_t count);
const char *perf_model_name(enum perf_model m);
void perf_model_traffic(enum perf_model m, enum perf_coll coll, int nranks, int inplace,
			double *mem, double *chunk);
double perf_roof_tmin_us(const struct perf_ctx *c, enum perf_model m, size_t bytes, int inplace,
			 double bm, double bk);
size_t perf_roof_chunk(const struct perf_ctx *c);

/* Sizes: per-rank element count of the API call and the "size" column for @bytes. */
size_t perf_count(const struct perf_opts *o, size_t bytes, int nranks);

#endif
