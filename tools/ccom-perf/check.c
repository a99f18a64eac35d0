// SPDX-License-Identifier: MIT
/*
 * check.c - ccom-perf's input pattern and result check.
 *
 * Inputs are small integers (1..5, or 1..2 for prod) that depend on the
 * rank and the element index, so every expected result is exactly
 * representable in every dtype; integer results are compared exactly,
 * floating-point ones with a relative tolerance of 1e-3 (fp16/bf16) or
 * 1e-6 (fp32/fp64) to be safe against a different summation order.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "perf.h"

size_t perf_dtype_size(ccomDataType_t dt)
{
	static const size_t sz[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 };

	return (unsigned int)dt < ccomNumTypes ? sz[dt] : 0;
}

double perf_input(int rank, size_t idx, ccomRedOp_t op)
{
	return 1.0 + (double)((idx * 7 + (size_t)rank * 3) % (op == ccomProd ? 2 : 5));
}

static void put(void *buf, size_t i, ccomDataType_t dt, double v)
{
	uint32_t u;
	float f;

	switch (dt) {
	case ccomInt8: ((int8_t *)buf)[i] = (int8_t)(int64_t)v; break;
	case ccomUint8: ((uint8_t *)buf)[i] = (uint8_t)(int64_t)v; break;
	case ccomInt32: ((int32_t *)buf)[i] = (int32_t)(int64_t)v; break;
	case ccomUint32: ((uint32_t *)buf)[i] = (uint32_t)(int64_t)v; break;
	case ccomInt64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case ccomUint64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
	case ccomFloat16: ((_Float16 *)buf)[i] = (_Float16)v; break;
	case ccomFloat32: ((float *)buf)[i] = (float)v; break;
	case ccomFloat64: ((double *)buf)[i] = v; break;
	case ccomBfloat16:
		f = (float)v;
		memcpy(&u, &f, 4);
		u += 0x7fffu + ((u >> 16) & 1);
		((uint16_t *)buf)[i] = (uint16_t)(u >> 16);
		break;
	default: break;
	}
}

static double get(const void *buf, size_t i, ccomDataType_t dt)
{
	uint32_t u;
	float f;

	switch (dt) {
	case ccomInt8: return ((const int8_t *)buf)[i];
	case ccomUint8: return ((const uint8_t *)buf)[i];
	case ccomInt32: return ((const int32_t *)buf)[i];
	case ccomUint32: return ((const uint32_t *)buf)[i];
	case ccomInt64: return (double)((const int64_t *)buf)[i];
	case ccomUint64: return (double)((const uint64_t *)buf)[i];
	case ccomFloat16: return ((const _Float16 *)buf)[i];
	case ccomFloat32: return ((const float *)buf)[i];
	case ccomFloat64: return ((const double *)buf)[i];
	case ccomBfloat16:
		u = (uint32_t)((const uint16_t *)buf)[i] << 16;
		memcpy(&f, &u, 4);
		return f;
	default: return 0;
	}
}

void perf_fill(void *buf, size_t n, ccomDataType_t dt, int rank, size_t base, ccomRedOp_t op)
{
	for (size_t i = 0; i < n; i++)
		put(buf, i, dt, perf_input(rank, base + i, op));
}

/* Reduction of element @idx of every rank's input, as the dtype stores it. */
static double expect_reduce(const struct perf_ctx *c, size_t idx)
{
	ccomRedOp_t op = c->o->op;
	double acc = perf_input(0, idx, op), v;
	int64_t iacc;
	int r;

	for (r = 1; r < c->nranks; r++) {
		v = perf_input(r, idx, op);
		if (op == ccomProd)
			acc *= v;
		else if (op == ccomMax)
			acc = v > acc ? v : acc;
		else if (op == ccomMin)
			acc = v < acc ? v : acc;
		else
			acc += v;
	}
	if (op == ccomAvg) {
		if (c->o->dtype == ccomFloat16 || c->o->dtype == ccomFloat32 ||
		    c->o->dtype == ccomBfloat16)
			return (float)acc / (float)c->nranks;
		if (c->o->dtype == ccomFloat64)
			return acc / c->nranks;
		iacc = (int64_t)acc;
		return (double)(iacc / c->nranks);
	}
	return acc;
}

static double expected(const struct perf_ctx *c, size_t count, size_t i)
{
	int r = c->rank, n = c->nranks, root = c->o->root;
	size_t blk = count ? i / count : 0, off = count ? i % count : 0;

	switch (c->o->coll) {
	case PERF_ALLREDUCE:
	case PERF_REDUCE:
		return expect_reduce(c, i);
	case PERF_BROADCAST:
		return perf_input(root, i, c->o->op);
	case PERF_ALLGATHER:
		return perf_input((int)blk, off, c->o->op);
	case PERF_REDUCESCATTER:
		return expect_reduce(c, (size_t)r * count + i);
	case PERF_ALLTOALL:
		return perf_input((int)blk, (size_t)r * count + off, c->o->op);
	case PERF_SENDRECV:
		return perf_input((r + n - 1) % n, i, c->o->op);
	case PERF_GATHER:
		return perf_input((int)blk, off, c->o->op);
	case PERF_SCATTER:
		return perf_input(root, (size_t)r * count + i, c->o->op);
	default:
		return 0;
	}
}

static size_t out_elems(const struct perf_ctx *c, size_t count)
{
	switch (c->o->coll) {
	case PERF_ALLGATHER:
	case PERF_ALLTOALL:
		return count * (size_t)c->nranks;
	case PERF_REDUCE:
		return c->rank == c->o->root ? count : 0;
	case PERF_GATHER:
		return c->rank == c->o->root ? count * (size_t)c->nranks : 0;
	default:
		return count;
	}
}

int64_t perf_check(const struct perf_ctx *c, size_t count, void *out)
{
	ccomDataType_t dt = c->o->dtype;
	size_t n = out_elems(c, count), i;
	double tol = (dt == ccomFloat16 || dt == ccomBfloat16) ? 1e-3 : 1e-6;
	char ref[8];
	int64_t wrong = 0;
	double e, g;

	for (i = 0; i < n; i++) {
		put(ref, 0, dt, expected(c, count, i));
		e = get(ref, 0, dt);
		g = get(out, i, dt);
		if (dt == ccomFloat16 || dt == ccomFloat32 || dt == ccomFloat64 ||
		    dt == ccomBfloat16) {
			if (!(fabs(g - e) <= tol * fabs(e)))
				wrong++;
		} else if (g != e) {
			wrong++;
		}
	}
	return wrong;
}
