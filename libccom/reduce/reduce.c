// SPDX-License-Identifier: MIT
/*
 * reduce.c - element-wise reduction kernels (coll/ layer).
 *
 * One plain C loop per dtype x op, written so that gcc vectorizes it
 * (compiled at O3 for this file): the data-path bottleneck is memory
 * bandwidth, and a vectorized loop keeps up with it.  Signed integers are
 * added and multiplied as unsigned (wrap-around, no undefined behaviour);
 * fp16 and bf16 are computed in float and rounded back to nearest-even.
 */
#pragma GCC optimize("O3")
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "reduce/reduce.h"

typedef _Float16 ccom_f16;

static inline float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline uint16_t float_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)	/* NaN: keep it quiet and a NaN */
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/*
 * The element-wise kernels are built three times, for AVX-512, AVX2 and
 * the baseline, and the loader picks the widest the CPU has (the results
 * are the same bits: one operation per element, no reassociation).  With
 * 64-byte vectors the reduction of a staged slice, whose inputs come from
 * another core's cache, keeps more lines in flight (2 ranks, 256 MiB:
 * about 10% faster than SSE2 here).
 */
#if defined(__x86_64__)
#define CCOM_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CCOM_WIDE
#endif

/*
 * Kernel generators: T is the storage type, U the type arithmetic is done
 * in (unsigned for signed integers, so overflow wraps).
 */
#define DEF_INT_KERNELS(name, T, U)						\
CCOM_WIDE static void sum_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = (T)((U)a[i] + (U)b[i]);					\
}										\
CCOM_WIDE static void prod_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = (T)((U)a[i] * (U)b[i]);					\
}										\
CCOM_WIDE static void max_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] > b[i] ? a[i] : b[i];				\
}										\
CCOM_WIDE static void min_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] < b[i] ? a[i] : b[i];				\
}										\
static void div_##name(T *d, size_t n, int k)					\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = (T)(d[i] / (int64_t)k);					\
}

/* 32-bit (uint32_t) products promote to int: do them as uint64 then cut. */
DEF_INT_KERNELS(i8, int8_t, uint32_t)
DEF_INT_KERNELS(u8, uint8_t, uint32_t)
DEF_INT_KERNELS(i32, int32_t, uint64_t)
DEF_INT_KERNELS(u32, uint32_t, uint64_t)
DEF_INT_KERNELS(i64, int64_t, uint64_t)
DEF_INT_KERNELS(u64, uint64_t, uint64_t)

#define DEF_FLT_KERNELS(name, T, F)						\
CCOM_WIDE static void sum_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] + b[i];						\
}										\
CCOM_WIDE static void prod_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] * b[i];						\
}										\
CCOM_WIDE static void max_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] > b[i] ? a[i] : b[i];				\
}										\
CCOM_WIDE static void min_##name(T *d, const T *a, const T *b, size_t n)	\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = a[i] < b[i] ? a[i] : b[i];				\
}										\
static void div_##name(T *d, size_t n, int k)					\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = (T)((F)d[i] / (F)k);						\
}

DEF_FLT_KERNELS(f32, float, float)
DEF_FLT_KERNELS(f64, double, double)
DEF_FLT_KERNELS(f16, ccom_f16, float)

/* bf16 has no C type: compute in float, round back. */
static float bf16_apply(float x, float y, ccomRedOp_t op)
{
	switch (op) {
	case ccomProd:
		return x * y;
	case ccomMax:
		return x > y ? x : y;
	case ccomMin:
		return x < y ? x : y;
	default:
		return x + y;
	}
}

static void reduce_bf16(uint16_t *d, const uint16_t *a, const uint16_t *b, size_t n,
			ccomRedOp_t op)
{
	for (size_t i = 0; i < n; i++)
		d[i] = float_to_bf16(bf16_apply(bf16_to_float(a[i]), bf16_to_float(b[i]), op));
}

static void div_bf16(uint16_t *d, size_t n, int k)
{
	for (size_t i = 0; i < n; i++)
		d[i] = float_to_bf16(bf16_to_float(d[i]) / (float)k);
}

const char *ccom_dtype_name(ccomDataType_t dt)
{
	static const char *const names[ccomNumTypes] = {
		[ccomInt8] = "int8", [ccomUint8] = "uint8", [ccomInt32] = "int32",
		[ccomUint32] = "uint32", [ccomInt64] = "int64", [ccomUint64] = "uint64",
		[ccomFloat16] = "half", [ccomFloat32] = "float", [ccomFloat64] = "double",
		[ccomBfloat16] = "bfloat16",
	};

	if ((unsigned int)dt >= ccomNumTypes)
		return "invalid";
	return names[dt];
}

const char *ccom_op_name(ccomRedOp_t op)
{
	static const char *const names[ccomNumOps] = {
		[ccomSum] = "sum", [ccomProd] = "prod", [ccomMax] = "max",
		[ccomMin] = "min", [ccomAvg] = "avg",
	};

	if (op == CCOM_OP_PREMULSUM)
		return "premulsum";
	if ((unsigned int)op >= ccomNumOps)
		return "invalid";
	return names[op];
}

#define DISPATCH_OP(name, T)							\
	do {									\
		T *d_ = dst;							\
		const T *a_ = a, *b_ = b;					\
		switch (op) {							\
		case ccomProd: prod_##name(d_, a_, b_, n); break;		\
		case ccomMax: max_##name(d_, a_, b_, n); break;			\
		case ccomMin: min_##name(d_, a_, b_, n); break;			\
		default: sum_##name(d_, a_, b_, n); break;			\
		}								\
	} while (0)

void ccom_reduce2(void *dst, const void *a, const void *b, size_t n, ccomDataType_t dt,
		  ccomRedOp_t op)
{
	switch (dt) {
	case ccomInt8: DISPATCH_OP(i8, int8_t); break;
	case ccomUint8: DISPATCH_OP(u8, uint8_t); break;
	case ccomInt32: DISPATCH_OP(i32, int32_t); break;
	case ccomUint32: DISPATCH_OP(u32, uint32_t); break;
	case ccomInt64: DISPATCH_OP(i64, int64_t); break;
	case ccomUint64: DISPATCH_OP(u64, uint64_t); break;
	case ccomFloat16: DISPATCH_OP(f16, ccom_f16); break;
	case ccomFloat32: DISPATCH_OP(f32, float); break;
	case ccomFloat64: DISPATCH_OP(f64, double); break;
	case ccomBfloat16: reduce_bf16(dst, a, b, n, op); break;
	default: break;
	}
}

void ccom_reduce_finish(void *buf, size_t n, ccomDataType_t dt, ccomRedOp_t op, int nranks)
{
	if (op != ccomAvg || nranks <= 1)
		return;
	switch (dt) {
	case ccomInt8: div_i8(buf, n, nranks); break;
	case ccomUint8: div_u8(buf, n, nranks); break;
	case ccomInt32: div_i32(buf, n, nranks); break;
	case ccomUint32: div_u32(buf, n, nranks); break;
	case ccomInt64: div_i64(buf, n, nranks); break;
	case ccomUint64: div_u64(buf, n, nranks); break;
	case ccomFloat16: div_f16(buf, n, nranks); break;
	case ccomFloat32: div_f32(buf, n, nranks); break;
	case ccomFloat64: div_f64(buf, n, nranks); break;
	case ccomBfloat16: div_bf16(buf, n, nranks); break;
	default: break;
	}
}

/*
 * PreMulSum's first half: one product per element, rounded to the dtype.
 * fp16 and bf16 products of two such values are exact in float, so the
 * one rounding back is the correctly rounded product NCCL's kernels give.
 */
#define DEF_PREMUL(name, T, U, W)						\
CCOM_WIDE static void premul_##name(T *d, const T *a, size_t n, T s)		\
{										\
	for (size_t i = 0; i < n; i++)						\
		d[i] = (T)(U)((W)a[i] * (W)s);					\
}
DEF_PREMUL(i8, int8_t, uint8_t, uint32_t)
DEF_PREMUL(u8, uint8_t, uint8_t, uint32_t)
DEF_PREMUL(i32, int32_t, uint32_t, uint32_t)
DEF_PREMUL(u32, uint32_t, uint32_t, uint32_t)
DEF_PREMUL(i64, int64_t, uint64_t, uint64_t)
DEF_PREMUL(u64, uint64_t, uint64_t, uint64_t)
DEF_PREMUL(f16, ccom_f16, ccom_f16, float)
DEF_PREMUL(f32, float, float, float)
DEF_PREMUL(f64, double, double, double)

static void premul_bf16(uint16_t *d, const uint16_t *a, size_t n, uint16_t s)
{
	float fs = bf16_to_float(s);

	for (size_t i = 0; i < n; i++)
		d[i] = float_to_bf16(bf16_to_float(a[i]) * fs);
}

#define DISPATCH_PREMUL(name, T)						\
	do {									\
		T s_;								\
		memcpy(&s_, scalar, sizeof(s_));				\
		premul_##name(dst, src, n, s_);					\
	} while (0)

void ccom_premul(void *dst, const void *src, size_t n, ccomDataType_t dt, const void *scalar)
{
	switch (dt) {
	case ccomInt8: DISPATCH_PREMUL(i8, int8_t); break;
	case ccomUint8: DISPATCH_PREMUL(u8, uint8_t); break;
	case ccomInt32: DISPATCH_PREMUL(i32, int32_t); break;
	case ccomUint32: DISPATCH_PREMUL(u32, uint32_t); break;
	case ccomInt64: DISPATCH_PREMUL(i64, int64_t); break;
	case ccomUint64: DISPATCH_PREMUL(u64, uint64_t); break;
	case ccomFloat16: DISPATCH_PREMUL(f16, ccom_f16); break;
	case ccomFloat32: DISPATCH_PREMUL(f32, float); break;
	case ccomFloat64: DISPATCH_PREMUL(f64, double); break;
	case ccomBfloat16: DISPATCH_PREMUL(bf16, uint16_t); break;
	default: break;
	}
}

/*
 * The streaming copy's loops, for 64-byte aligned @d: one 64-byte store per
 * line where the CPU has AVX-512 (a whole line leaves the write-combining
 * buffer at once), else four 16-byte ones.
 */
__attribute__((target("avx512f")))
static void copy_stream512(char *d, const char *s, size_t n)
{
	for (; n >= 64; n -= 64, d += 64, s += 64)
		_mm512_stream_si512((void *)d, _mm512_loadu_si512(s));
	memcpy(d, s, n);
}

static void copy_stream128(char *d, const char *s, size_t n)
{
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	memcpy(d, s, n);
}

/* 0: not decided yet, 1: SSE2 stores, 2: AVX-512 stores. */
static _Atomic int copy_stream_kind;

void ccom_copy_stream(void *dst, const void *src, size_t n)
{
	int kind = atomic_load_explicit(&copy_stream_kind, memory_order_relaxed);
	char *d = dst;
	const char *s = src;
	size_t head = (64 - ((uintptr_t)d & 63)) & 63;

	if (n < 256) {
		memcpy(d, s, n);
		return;
	}
	if (!kind) {
		kind = __builtin_cpu_supports("avx512f") ? 2 : 1;
		atomic_store_explicit(&copy_stream_kind, kind, memory_order_relaxed);
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	if (kind == 2)
		copy_stream512(d, s, n);
	else
		copy_stream128(d, s, n);
}

void ccom_copy_stream_fence(void)
{
	_mm_sfence();
}
