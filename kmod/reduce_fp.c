// SPDX-License-Identifier: GPL-2.0
/*
 * nccom floating-point reductions. This file is compiled with SSE enabled
 * and must only be entered between kernel_fpu_begin() and kernel_fpu_end()
 * (see nccom_reduce()). fp16 and bf16 elements are widened to fp32, combined
 * in fp32 and rounded back to nearest-even. min/max return the second
 * operand unless the first compares smaller/larger (NaN behaviour follows).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/kernel.h>
#include <linux/types.h>

#include "nccom_private.h"

union nccom_f32 {
	float f;
	u32 u;
};

static float nccom_f16_to_f32(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16;
	u32 exp = (h >> 10) & 0x1f;
	u32 mant = h & 0x3ff;
	union nccom_f32 v;

	if (exp == 0x1f) {
		v.u = sign | 0x7f800000 | (mant << 13);
	} else if (exp) {
		v.u = sign | ((exp + 112) << 23) | (mant << 13);
	} else {
		/* Zero or subnormal: mant * 2^-24. */
		v.f = (float)mant * (1.0f / 16777216.0f);
		v.u |= sign;
	}
	return v.f;
}

static u16 nccom_f32_to_f16(float f)
{
	union nccom_f32 v = { .f = f };
	u32 sign = (v.u >> 16) & 0x8000;
	u32 exp = (v.u >> 23) & 0xff;
	u32 mant = v.u & 0x7fffff;
	u32 hm, rem, half, shift;
	int e;

	if (exp == 0xff)
		return sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0);
	e = (int)exp - 112;
	if (e >= 0x1f)
		return sign | 0x7c00;
	if (e <= 0) {
		if (e < -10)
			return sign;
		mant |= 0x800000;
		shift = 14 - e;
		hm = mant >> shift;
		rem = mant & ((1U << shift) - 1);
		half = 1U << (shift - 1);
		if (rem > half || (rem == half && (hm & 1)))
			hm++;
		return sign | hm;
	}
	hm = sign | ((u32)e << 10) | (mant >> 13);
	rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
		hm++;
	return hm;
}

static float nccom_bf16_to_f32(u16 h)
{
	union nccom_f32 v = { .u = (u32)h << 16 };

	return v.f;
}

static u16 nccom_f32_to_bf16(float f)
{
	union nccom_f32 v = { .f = f };

	if ((v.u & 0x7f800000) == 0x7f800000 && (v.u & 0x7fffff))
		return (v.u >> 16) | 0x40;
	v.u += 0x7fff + ((v.u >> 16) & 1);
	return v.u >> 16;
}

static float nccom_op_f32(u8 op, float a, float b)
{
	switch (op) {
	case NCCOM_REDOP_SUM:
		return a + b;
	case NCCOM_REDOP_PROD:
		return a * b;
	case NCCOM_REDOP_MIN:
		return a < b ? a : b;
	default:
		return a > b ? a : b;
	}
}

static double nccom_op_f64(u8 op, double a, double b)
{
	switch (op) {
	case NCCOM_REDOP_SUM:
		return a + b;
	case NCCOM_REDOP_PROD:
		return a * b;
	case NCCOM_REDOP_MIN:
		return a < b ? a : b;
	default:
		return a > b ? a : b;
	}
}

static void nccom_reduce_half(u8 dtype, u8 op, u16 *d, const u16 *a,
			      const u16 *b, size_t n)
{
	bool bf = dtype == NCCOM_DTYPE_BF16;
	size_t i;

	for (i = 0; i < n; i++) {
		float x = bf ? nccom_bf16_to_f32(a[i]) : nccom_f16_to_f32(a[i]);
		float y = bf ? nccom_bf16_to_f32(b[i]) : nccom_f16_to_f32(b[i]);
		float r = nccom_op_f32(op, x, y);

		d[i] = bf ? nccom_f32_to_bf16(r) : nccom_f32_to_f16(r);
	}
}

/*
 * fp32 and fp64 sums and products work on whole SSE registers (the GCC
 * vector extension, four registers per iteration) with a scalar tail: one
 * vector instruction does the work of two or four scalar ones, which
 * matters as much under emulation as on hardware. Loads and stores are
 * unaligned (elements are only naturally aligned); all loads of an
 * iteration come before its stores, so @d may be @a or @b itself. Min and
 * max stay scalar (nccom_op_f32()).
 */
#define NCCOM_VLEN	16

static void nccom_vreduce_f32(bool prod, float *d, const float *a,
			      const float *b, size_t n)
{
	float __attribute__((vector_size(NCCOM_VLEN))) a0, a1, a2, a3;
	float __attribute__((vector_size(NCCOM_VLEN))) b0, b1, b2, b3;
	const size_t per = NCCOM_VLEN / sizeof(*d);
	size_t i;

	for (i = 0; i + 4 * per <= n; i += 4 * per) {
		__builtin_memcpy(&a0, a + i, NCCOM_VLEN);
		__builtin_memcpy(&a1, a + i + per, NCCOM_VLEN);
		__builtin_memcpy(&a2, a + i + 2 * per, NCCOM_VLEN);
		__builtin_memcpy(&a3, a + i + 3 * per, NCCOM_VLEN);
		__builtin_memcpy(&b0, b + i, NCCOM_VLEN);
		__builtin_memcpy(&b1, b + i + per, NCCOM_VLEN);
		__builtin_memcpy(&b2, b + i + 2 * per, NCCOM_VLEN);
		__builtin_memcpy(&b3, b + i + 3 * per, NCCOM_VLEN);
		if (prod) {
			b0 = a0 * b0;
			b1 = a1 * b1;
			b2 = a2 * b2;
			b3 = a3 * b3;
		} else {
			b0 = a0 + b0;
			b1 = a1 + b1;
			b2 = a2 + b2;
			b3 = a3 + b3;
		}
		__builtin_memcpy(d + i, &b0, NCCOM_VLEN);
		__builtin_memcpy(d + i + per, &b1, NCCOM_VLEN);
		__builtin_memcpy(d + i + 2 * per, &b2, NCCOM_VLEN);
		__builtin_memcpy(d + i + 3 * per, &b3, NCCOM_VLEN);
	}
	for (; i < n; i++)
		d[i] = prod ? a[i] * b[i] : a[i] + b[i];
}

static void nccom_vreduce_f64(bool prod, double *d, const double *a,
			      const double *b, size_t n)
{
	double __attribute__((vector_size(NCCOM_VLEN))) a0, a1, a2, a3;
	double __attribute__((vector_size(NCCOM_VLEN))) b0, b1, b2, b3;
	const size_t per = NCCOM_VLEN / sizeof(*d);
	size_t i;

	for (i = 0; i + 4 * per <= n; i += 4 * per) {
		__builtin_memcpy(&a0, a + i, NCCOM_VLEN);
		__builtin_memcpy(&a1, a + i + per, NCCOM_VLEN);
		__builtin_memcpy(&a2, a + i + 2 * per, NCCOM_VLEN);
		__builtin_memcpy(&a3, a + i + 3 * per, NCCOM_VLEN);
		__builtin_memcpy(&b0, b + i, NCCOM_VLEN);
		__builtin_memcpy(&b1, b + i + per, NCCOM_VLEN);
		__builtin_memcpy(&b2, b + i + 2 * per, NCCOM_VLEN);
		__builtin_memcpy(&b3, b + i + 3 * per, NCCOM_VLEN);
		if (prod) {
			b0 = a0 * b0;
			b1 = a1 * b1;
			b2 = a2 * b2;
			b3 = a3 * b3;
		} else {
			b0 = a0 + b0;
			b1 = a1 + b1;
			b2 = a2 + b2;
			b3 = a3 + b3;
		}
		__builtin_memcpy(d + i, &b0, NCCOM_VLEN);
		__builtin_memcpy(d + i + per, &b1, NCCOM_VLEN);
		__builtin_memcpy(d + i + 2 * per, &b2, NCCOM_VLEN);
		__builtin_memcpy(d + i + 3 * per, &b3, NCCOM_VLEN);
	}
	for (; i < n; i++)
		d[i] = prod ? a[i] * b[i] : a[i] + b[i];
}

/**
 * nccom_reduce3_fp() - floating-point part of nccom_reduce3()
 * @dtype: FP16, BF16, FP32 or FP64
 * @op: &enum nccom_redop
 * @dst: result, may be @a or @b itself
 * @a: first operand
 * @b: second operand
 * @n: number of elements
 *
 * Context: between kernel_fpu_begin() and kernel_fpu_end().
 */
void nccom_reduce3_fp(u8 dtype, u8 op, void *dst, const void *a,
		      const void *b, size_t n)
{
	bool vec = op == NCCOM_REDOP_SUM || op == NCCOM_REDOP_PROD;
	size_t i;

	if (dtype == NCCOM_DTYPE_FP32 && vec) {
		nccom_vreduce_f32(op == NCCOM_REDOP_PROD, dst, a, b, n);
	} else if (dtype == NCCOM_DTYPE_FP64 && vec) {
		nccom_vreduce_f64(op == NCCOM_REDOP_PROD, dst, a, b, n);
	} else if (dtype == NCCOM_DTYPE_FP32) {
		const float *x = a, *y = b;
		float *d = dst;

		for (i = 0; i < n; i++)
			d[i] = nccom_op_f32(op, x[i], y[i]);
	} else if (dtype == NCCOM_DTYPE_FP64) {
		const double *x = a, *y = b;
		double *d = dst;

		for (i = 0; i < n; i++)
			d[i] = nccom_op_f64(op, x[i], y[i]);
	} else {
		nccom_reduce_half(dtype, op, dst, a, b, n);
	}
}

/**
 * nccom_reduce_fp() - floating-point part of nccom_reduce()
 * @dtype: FP16, BF16, FP32 or FP64
 * @op: &enum nccom_redop
 * @inout: first operand and result
 * @in: second operand
 * @n: number of elements
 *
 * Context: between kernel_fpu_begin() and kernel_fpu_end().
 */
void nccom_reduce_fp(u8 dtype, u8 op, void *inout, const void *in, size_t n)
{
	nccom_reduce3_fp(dtype, op, inout, in, inout, n);
}
