/* SPDX-License-Identifier: MIT */
/*
 * reduce.h - element-wise reduction kernels of every dtype x op, used by
 * every algorithm.  Pure functions over host memory, no state.
 */
#ifndef CCOM_REDUCE_REDUCE_H
#define CCOM_REDUCE_REDUCE_H

#include <stddef.h>

#include "ccom.h"

/* Size in bytes of one element of @dt (0 for an invalid type). */
size_t ccom_dtype_size(ccomDataType_t dt);
const char *ccom_dtype_name(ccomDataType_t dt);
const char *ccom_op_name(ccomRedOp_t op);

/*
 * The op code of a ccomRedOpCreatePreMulSum() op where one stands for all
 * of them (the mismatch check's signatures, messages): no API handle has
 * it (custom handles start above it, coll/redop.c).  ccom_op_name() names it.
 */
#define CCOM_OP_PREMULSUM ((ccomRedOp_t)ccomNumOps)

/*
 * dst[i] = src[i] * scalar for i < n, each product rounded to @dt (NCCL's
 * PreMulSum: multiply each input, then sum); integers wrap.  @scalar
 * points to one element of @dt.  @dst may alias @src exactly.
 */
void ccom_premul(void *dst, const void *src, size_t n, ccomDataType_t dt, const void *scalar);

/*
 * dst[i] = a[i] OP b[i] for i < n.  @dst may alias @a or @b exactly (same
 * pointer), not partially.  ccomAvg reduces as a sum here; the caller
 * finishes with ccom_reduce_finish().
 */
void ccom_reduce2(void *dst, const void *a, const void *b, size_t n, ccomDataType_t dt,
		  ccomRedOp_t op);

/*
 * Finish a reduction over @nranks contributions in place: divides by
 * @nranks for ccomAvg (integers truncate), nothing for the other ops.
 */
void ccom_reduce_finish(void *buf, size_t n, ccomDataType_t dt, ccomRedOp_t op, int nranks);

/*
 * Copy with non-temporal stores (the destination bypasses the caches):
 * for outputs far larger than the caches, it saves the read-for-ownership
 * of every destination line.  Call ccom_copy_stream_fence() before the
 * data is published to another thread or process.
 */
void ccom_copy_stream(void *dst, const void *src, size_t n);
void ccom_copy_stream_fence(void);

/* Outputs at least this large (bytes per rank) are written with streaming stores. */
#define CCOM_STREAM_COPY_MIN (4u << 20)

#endif
