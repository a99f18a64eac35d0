/* SPDX-License-Identifier: MIT */
/*
 * coll_util.h - helpers of the coll_* and stream_* tests: the input
 * pattern, reading/writing every dtype, the reference results, a forked
 * job with one communicator per rank, and the collective matrix.
 *
 * Inputs are small integers (1..5; 1..2 for prod) depending on rank and
 * index, so every exact result is representable in every dtype: integer
 * results must match exactly, floating-point ones within a relative 1e-3
 * (fp16/bf16) or 1e-6 (fp32/fp64), which only allows for the rounding of
 * avg's division.
 */
#ifndef CCOM_COLL_UTIL_H
#define CCOM_COLL_UTIL_H

#include <math.h>
#include <stdint.h>

#include "test_util.h"

struct ct_job {
	ccomUniqueId id;
	int nranks;
	const char *env[4];	/* "NAME=value" set in every rank before init */
	int big;		/* run the 1 Mi + 3 counts too */
	size_t count;		/* element count, for tests that take one */
	void (*at_init)(int rank);	/* called in ct_init() before init, or NULL */
	int reg;		/* matrices: ccomCommRegister the buffers first */
};

static inline size_t ct_size(ccomDataType_t dt)
{
	static const size_t sz[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 };

	return sz[dt];
}

static inline int ct_is_float(ccomDataType_t dt)
{
	return dt == ccomFloat16 || dt == ccomFloat32 || dt == ccomFloat64 || dt == ccomBfloat16;
}

static inline double ct_in(int rank, size_t idx, ccomRedOp_t op)
{
	return 1.0 + (double)((idx * 7 + (size_t)rank * 3) % (op == ccomProd ? 2 : 5));
}

static inline void ct_put(void *b, size_t i, ccomDataType_t dt, double v)
{
	uint32_t u;
	float f;

	switch (dt) {
	case ccomInt8: ((int8_t *)b)[i] = (int8_t)(int64_t)v; break;
	case ccomUint8: ((uint8_t *)b)[i] = (uint8_t)(int64_t)v; break;
	case ccomInt32: ((int32_t *)b)[i] = (int32_t)(int64_t)v; break;
	case ccomUint32: ((uint32_t *)b)[i] = (uint32_t)(int64_t)v; break;
	case ccomInt64: ((int64_t *)b)[i] = (int64_t)v; break;
	case ccomUint64: ((uint64_t *)b)[i] = (uint64_t)(int64_t)v; break;
	case ccomFloat16: ((_Float16 *)b)[i] = (_Float16)v; break;
	case ccomFloat32: ((float *)b)[i] = (float)v; break;
	case ccomFloat64: ((double *)b)[i] = v; break;
	default:
		f = (float)v;
		memcpy(&u, &f, 4);
		u += 0x7fffu + ((u >> 16) & 1);
		((uint16_t *)b)[i] = (uint16_t)(u >> 16);
		break;
	}
}

static inline double ct_get(const void *b, size_t i, ccomDataType_t dt)
{
	uint32_t u;
	float f;

	switch (dt) {
	case ccomInt8: return ((const int8_t *)b)[i];
	case ccomUint8: return ((const uint8_t *)b)[i];
	case ccomInt32: return ((const int32_t *)b)[i];
	case ccomUint32: return ((const uint32_t *)b)[i];
	case ccomInt64: return (double)((const int64_t *)b)[i];
	case ccomUint64: return (double)((const uint64_t *)b)[i];
	case ccomFloat16: return ((const _Float16 *)b)[i];
	case ccomFloat32: return ((const float *)b)[i];
	case ccomFloat64: return ((const double *)b)[i];
	default:
		u = (uint32_t)((const uint16_t *)b)[i] << 16;
		memcpy(&f, &u, 4);
		return f;
	}
}

/* Reference reduction of element @idx over @n ranks, as @dt stores it. */
static inline double ct_reduce(int n, size_t idx, ccomDataType_t dt, ccomRedOp_t op)
{
	double acc = ct_in(0, idx, op), v;
	char tmp[8];
	int r;

	for (r = 1; r < n; r++) {
		v = ct_in(r, idx, op);
		acc = op == ccomProd ? acc * v : op == ccomMax ? fmax(acc, v) :
		      op == ccomMin ? fmin(acc, v) : acc + v;
	}
	if (op == ccomAvg)
		acc = ct_is_float(dt) ? (dt == ccomFloat64 ? acc / n : (double)((float)acc / (float)n)) :
		      (double)((int64_t)acc / n);
	ct_put(tmp, 0, dt, acc);	/* wrap / round as the dtype does */
	return ct_get(tmp, 0, dt);
}

static inline int ct_same(double got, double want, ccomDataType_t dt)
{
	double tol = (dt == ccomFloat16 || dt == ccomBfloat16) ? 1e-3 : 1e-6;

	if (!ct_is_float(dt))
		return got == want;
	return fabs(got - want) <= tol * fabs(want);
}

/* setenv() the job's "NAME=value" strings. */
static inline void ct_setenv(const struct ct_job *j)
{
	t_setenvs(j->env, 4);
}

static inline int ct_init(const struct ct_job *j, int rank, ccomComm_t *comm)
{
	ccomResult_t res;

	ct_setenv(j);
	if (j->at_init)
		j->at_init(rank);
	res = ccomCommInitRank(comm, j->nranks, j->id, rank);
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: init failed: %s: %s\n", rank, ccomGetErrorString(res),
			ccomGetLastError(NULL));
		return T_FAIL;
	}
	return T_PASS;
}

/* Run @fn on @n forked ranks with a fresh unique id; T_PASS if all passed. */
static inline int ct_run(struct ct_job *j, int n, t_rank_fn fn, int timeout_s)
{
	int codes[64], bad, r;

	j->nranks = n;
	/* Fork first, then create the id: no libccom thread exists at fork time. */
	bad = t_fork_ranks_id(n, fn, j, codes, timeout_s, &j->id);
	for (r = 0; r < n && bad; r++)
		if (codes[r])
			fprintf(stderr, "  %d ranks: rank %d exited with %d\n", n, r, codes[r]);
	return bad ? T_FAIL : T_PASS;
}

/* pthread body: abort communicator @comm after 300 ms (abort-during-work tests). */
static inline void *ct_aborter(void *comm)
{
	usleep(300000);
	ccomCommAbort(comm);
	return NULL;
}

/* One AllReduce of @count floats (rank + 1 each) on @comm of @n ranks, result checked. */
static inline int ct_allreduce_ok(ccomComm_t comm, int rank, int n, float *buf, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = (float)(rank + 1);
	T_CCOM(ccomAllReduce(buf, buf, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		T_CHECK(buf[i] == (float)(n * (n + 1) / 2), "rank %d: element %zu is %g, want %d",
			rank, i, buf[i], n * (n + 1) / 2);
	return T_PASS;
}

#endif
