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
	PERF_ALLTOALL, PERF_SENDRECV, PERF_NCOLLS
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
};

struct perf_ctx {
	const struct perf_opts *o;
	ccomComm_t comm;
	int rank, nranks;
	char *send, *recv;
	size_t bufbytes;
	int64_t wrong_total;
	double busbw_sum;
	int nresults;
};

/* check.c */
size_t perf_dtype_size(ccomDataType_t dt);
double perf_input(int rank, size_t idx, ccomRedOp_t op);
void perf_fill(void *buf, size_t n, ccomDataType_t dt, int rank, size_t base, ccomRedOp_t op);
int64_t perf_check(const struct perf_ctx *c, size_t count, void *out);

/* bench.c */
int perf_run(struct perf_ctx *c);

/* Sizes: per-rank element count of the API call and the "size" column for @bytes. */
size_t perf_count(const struct perf_opts *o, size_t bytes, int nranks);

#endif
