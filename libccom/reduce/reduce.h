/* SPDX-License-Identifier: MIT */
/*
 * reduce.h - element-wise reduction kernels of every dtype x op, used by
 * every algorithm.  Pure functions over host memory, no state.
 */
#ifndef CCOM_REDUCE_REDUCE_H
#define CCOM_REDUCE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "ccom.h"

/*
 * Element sizes, 4 bits per ccomDataType_t value: inline, because every
 * op asks several times (validation, the mismatch signature, the tuner,
 * the protocol), a call each on the 8-byte path before.
 */
#define CCOM_DTYPE_NIBBLE(t, n) ((uint64_t)(n) << (4 * (t)))
#define CCOM_DTYPE_SIZES							\
	(CCOM_DTYPE_NIBBLE(ccomInt8, 1) | CCOM_DTYPE_NIBBLE(ccomUint8, 1) |	\
	 CCOM_DTYPE_NIBBLE(ccomInt32, 4) | CCOM_DTYPE_NIBBLE(ccomUint32, 4) |	\
	 CCOM_DTYPE_NIBBLE(ccomInt64, 8) | CCOM_DTYPE_NIBBLE(ccomUint64, 8) |	\
	 CCOM_DTYPE_NIBBLE(ccomFloat16, 2) | CCOM_DTYPE_NIBBLE(ccomFloat32, 4) |	\
	 CCOM_DTYPE_NIBBLE(ccomFloat64, 8) | CCOM_DTYPE_NIBBLE(ccomBfloat16, 2))
_Static_assert(ccomNumTypes <= 16, "CCOM_DTYPE_SIZES holds 16 types");

/* Size in bytes of one element of @dt (0 for an invalid type). */
static inline size_t ccom_dtype_size(ccomDataType_t dt)
{
	if ((unsigned int)dt >= ccomNumTypes)
		return 0;
	return (size_t)((CCOM_DTYPE_SIZES >> (4 * (unsigned int)dt)) & 0xf);
}
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
