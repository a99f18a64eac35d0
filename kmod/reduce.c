// SPDX-License-Identifier: GPL-2.0
/*
 * nccom reductions: element-wise inout = in op inout for every dtype and
 * operation. Integer types are handled here without the FPU (wrapping
 * arithmetic for sum and prod). Floating-point types are handed to
 * reduce_fp.c, the only file built with SSE enabled, inside one
 * kernel_fpu_begin()/kernel_fpu_end() section per call; callers pass at most
 * a few KiB per call so preemption is never off for long.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/kernel.h>
#include <linux/types.h>
#include <asm/fpu/api.h>

#include "nccom_private.h"

static const u8 nccom_dtype_sizes[NCCOM_DTYPE_COUNT] = {
	[NCCOM_DTYPE_INT8] = 1,
	[NCCOM_DTYPE_UINT8] = 1,
	[NCCOM_DTYPE_INT32] = 4,
	[NCCOM_DTYPE_UINT32] = 4,
	[NCCOM_DTYPE_INT64] = 8,
	[NCCOM_DTYPE_UINT64] = 8,
	[NCCOM_DTYPE_FP16] = 2,
	[NCCOM_DTYPE_BF16] = 2,
	[NCCOM_DTYPE_FP32] = 4,
	[NCCOM_DTYPE_FP64] = 8,
};

/**
 * nccom_dtype_size() - size of one element
 * @dtype: &enum nccom_dtype
 *
 * Return: the size in bytes, 1 for an invalid dtype (never used for it).
 */
size_t nccom_dtype_size(u8 dtype)
{
	return dtype < NCCOM_DTYPE_COUNT ? nccom_dtype_sizes[dtype] : 1;
}

/*
 * One function per integer type, d[i] = a[i] op b[i]; d may be a or b
 * itself (each element is read before it is written). Sum and product wrap
 * (the kernel is built with -fno-strict-overflow), min and max compare in
 * the element's type.
 */
#define NCCOM_DEFINE_INT_REDUCE(_name, _ptr, _cptr)			\
static void _name(u8 op, _ptr d, _cptr a, const void *bv, size_t n)	\
{									\
	typeof(a) b = bv;						\
	size_t i;							\
									\
	switch (op) {							\
	case NCCOM_REDOP_SUM:						\
		for (i = 0; i < n; i++)					\
			d[i] = a[i] + b[i];				\
		break;							\
	case NCCOM_REDOP_PROD:						\
		for (i = 0; i < n; i++)					\
			d[i] = a[i] * b[i];				\
		break;							\
	case NCCOM_REDOP_MIN:						\
		for (i = 0; i < n; i++)					\
			d[i] = a[i] < b[i] ? a[i] : b[i];		\
		break;							\
	default:							\
		for (i = 0; i < n; i++)					\
			d[i] = a[i] > b[i] ? a[i] : b[i];		\
		break;							\
	}								\
}

NCCOM_DEFINE_INT_REDUCE(nccom_reduce_s8, s8 *, const s8 *)
NCCOM_DEFINE_INT_REDUCE(nccom_reduce_u8, u8 *, const u8 *)
NCCOM_DEFINE_INT_REDUCE(nccom_reduce_s32, s32 *, const s32 *)
NCCOM_DEFINE_INT_REDUCE(nccom_reduce_u32, u32 *, const u32 *)
NCCOM_DEFINE_INT_REDUCE(nccom_reduce_s64, s64 *, const s64 *)
NCCOM_DEFINE_INT_REDUCE(nccom_reduce_u64, u64 *, const u64 *)

/**
 * nccom_reduce3() - dst[i] = a[i] op b[i]
 * @dtype: &enum nccom_dtype (validated by the caller)
 * @op: &enum nccom_redop (validated by the caller)
 * @dst: result; may be @a or @b itself, must not overlap them otherwise
 * @a: first operand (the one min/max return on a strict comparison)
 * @b: second operand
 * @n: number of elements; n * element size must stay within a few KiB
 *
 * All three are naturally aligned.
 */
void nccom_reduce3(u8 dtype, u8 op, void *dst, const void *a, const void *b,
		   size_t n)
{
	switch (dtype) {
	case NCCOM_DTYPE_INT8:
		nccom_reduce_s8(op, dst, a, b, n);
		break;
	case NCCOM_DTYPE_UINT8:
		nccom_reduce_u8(op, dst, a, b, n);
		break;
	case NCCOM_DTYPE_INT32:
		nccom_reduce_s32(op, dst, a, b, n);
		break;
	case NCCOM_DTYPE_UINT32:
		nccom_reduce_u32(op, dst, a, b, n);
		break;
	case NCCOM_DTYPE_INT64:
		nccom_reduce_s64(op, dst, a, b, n);
		break;
	case NCCOM_DTYPE_UINT64:
		nccom_reduce_u64(op, dst, a, b, n);
		break;
	default:
		/* Bounded by the caller's chunk size (NCCOM_REDUCE_CHUNK). */
		kernel_fpu_begin();
		nccom_reduce3_fp(dtype, op, dst, a, b, n);
		kernel_fpu_end();
		break;
	}
}

/**
 * nccom_reduce() - inout[i] = in[i] op inout[i]
 * @dtype: &enum nccom_dtype (validated by the caller)
 * @op: &enum nccom_redop (validated by the caller)
 * @inout: first operand and result, naturally aligned
 * @in: second operand, naturally aligned
 * @n: number of elements; n * element size must stay within a few KiB
 */
void nccom_reduce(u8 dtype, u8 op, void *inout, const void *in, size_t n)
{
	nccom_reduce3(dtype, op, inout, in, inout, n);
}
