// SPDX-License-Identifier: GPL-2.0
/*
 * Description: REDUCE descriptors for every dtype x op against a userspace
 * reference, out of place (dst = src op src2) and in place (dst op= src),
 * with element counts whose byte sizes are not multiples of a page or of a
 * vector width and with unaligned byte offsets. Integer ops wrap; fp32/fp64
 * must match exactly, fp16/bf16 within one unit in the last place.
 */
#include <math.h>
#include <stdlib.h>

#include "nccom_utils.h"

#define RBUF (48 * 1024)

static const size_t dsize[NCCOM_DTYPE_COUNT] = {
	[NCCOM_DTYPE_INT8] = 1, [NCCOM_DTYPE_UINT8] = 1,
	[NCCOM_DTYPE_INT32] = 4, [NCCOM_DTYPE_UINT32] = 4,
	[NCCOM_DTYPE_INT64] = 8, [NCCOM_DTYPE_UINT64] = 8,
	[NCCOM_DTYPE_FP16] = 2, [NCCOM_DTYPE_BF16] = 2,
	[NCCOM_DTYPE_FP32] = 4, [NCCOM_DTYPE_FP64] = 8,
};

static float bf16_to_f(uint16_t h)
{
	uint32_t b = (uint32_t)h << 16;
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static uint16_t f_to_bf16(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	b += 0x7fff + ((b >> 16) & 1);	/* round to nearest even */
	return b >> 16;
}

#define INT_OP(T, U, op, a, b)                                                  \
	((op) == NCCOM_REDOP_SUM ? (T)((U)(a) + (U)(b)) :                       \
	 (op) == NCCOM_REDOP_PROD ? (T)((U)(a) * (U)(b)) :                      \
	 (op) == NCCOM_REDOP_MIN ? ((a) < (b) ? (a) : (b)) : ((a) > (b) ? (a) : (b)))

#define FLT_OP(op, a, b)                                                        \
	((op) == NCCOM_REDOP_SUM ? (a) + (b) : (op) == NCCOM_REDOP_PROD ? (a) * (b) : \
	 (op) == NCCOM_REDOP_MIN ? ((a) < (b) ? (a) : (b)) : ((a) > (b) ? (a) : (b)))

#define REF_INT(T, U)                                                           \
	do {                                                                    \
		const T *px = x, *py = y;                                       \
		T *po = out;                                                    \
		for (i = 0; i < n; i++) {                                       \
			T a, b;                                                 \
			memcpy(&a, px + i, sizeof(T));                          \
			memcpy(&b, py + i, sizeof(T));                          \
			a = INT_OP(T, U, op, a, b);                             \
			memcpy(po + i, &a, sizeof(T));                          \
		}                                                               \
	} while (0)

/* out[i] = x[i] op y[i]; x, y, out may be unaligned. */
static void reference(int dt, int op, const void *x, const void *y, void *out, size_t n)
{
	size_t i;

	switch (dt) {
	case NCCOM_DTYPE_INT8: REF_INT(int8_t, uint8_t); break;
	case NCCOM_DTYPE_UINT8: REF_INT(uint8_t, uint8_t); break;
	case NCCOM_DTYPE_INT32: REF_INT(int32_t, uint32_t); break;
	case NCCOM_DTYPE_UINT32: REF_INT(uint32_t, uint32_t); break;
	case NCCOM_DTYPE_INT64: REF_INT(int64_t, uint64_t); break;
	case NCCOM_DTYPE_UINT64: REF_INT(uint64_t, uint64_t); break;
	case NCCOM_DTYPE_FP32: {
		for (i = 0; i < n; i++) {
			float a, b, r;

			memcpy(&a, (const char *)x + 4 * i, 4);
			memcpy(&b, (const char *)y + 4 * i, 4);
			r = FLT_OP(op, a, b);
			memcpy((char *)out + 4 * i, &r, 4);
		}
		break;
	}
	case NCCOM_DTYPE_FP64: {
		for (i = 0; i < n; i++) {
			double a, b, r;

			memcpy(&a, (const char *)x + 8 * i, 8);
			memcpy(&b, (const char *)y + 8 * i, 8);
			r = FLT_OP(op, a, b);
			memcpy((char *)out + 8 * i, &r, 8);
		}
		break;
	}
	case NCCOM_DTYPE_FP16: {
		for (i = 0; i < n; i++) {
			_Float16 a, b, r;

			memcpy(&a, (const char *)x + 2 * i, 2);
			memcpy(&b, (const char *)y + 2 * i, 2);
			r = (_Float16)FLT_OP(op, (float)a, (float)b);
			memcpy((char *)out + 2 * i, &r, 2);
		}
		break;
	}
	case NCCOM_DTYPE_BF16: {
		for (i = 0; i < n; i++) {
			uint16_t a, b, r;

			memcpy(&a, (const char *)x + 2 * i, 2);
			memcpy(&b, (const char *)y + 2 * i, 2);
			r = f_to_bf16(FLT_OP(op, bf16_to_f(a), bf16_to_f(b)));
			memcpy((char *)out + 2 * i, &r, 2);
		}
		break;
	}
	}
}

/* Values that keep every op finite and non-NaN: small, non-zero. */
static void fill_values(int dt, void *buf, size_t n, uint32_t seed)
{
	uint32_t s = seed * 7919u + 17;
	size_t i;

	for (i = 0; i < n; i++) {
		int k;

		s = s * 1664525u + 1013904223u;
		k = (int)((s >> 8) % 63) - 31;
		if (k == 0)
			k = 1;
		switch (dt) {
		case NCCOM_DTYPE_FP32: {
			float f = k / 4.0f;

			memcpy((char *)buf + 4 * i, &f, 4);
			break;
		}
		case NCCOM_DTYPE_FP64: {
			double d = k / 8.0 + (s & 0xff) / 4096.0;

			memcpy((char *)buf + 8 * i, &d, 8);
			break;
		}
		case NCCOM_DTYPE_FP16: {
			_Float16 h = (_Float16)(k / 4.0f + (s & 0xf) / 64.0f);

			memcpy((char *)buf + 2 * i, &h, 2);
			break;
		}
		case NCCOM_DTYPE_BF16: {
			uint16_t h = f_to_bf16(k / 4.0f + (s & 0xf) / 64.0f);

			memcpy((char *)buf + 2 * i, &h, 2);
			break;
		}
		default:
			/* Full-range bits for integers: exercises wrapping. */
			memcpy((char *)buf + dsize[dt] * i, &s, dsize[dt] < 4 ? dsize[dt] : 4);
			if (dsize[dt] == 8) {
				uint32_t hi = s ^ 0x9e3779b9u;

				memcpy((char *)buf + 8 * i + 4, &hi, 4);
			}
		}
	}
}

/* Number of elements that differ (beyond 1 ulp for 16-bit floats). */
static size_t mismatches(int dt, const void *got, const void *want, size_t n)
{
	size_t i, bad = 0;

	if (dt != NCCOM_DTYPE_FP16 && dt != NCCOM_DTYPE_BF16)
		return memcmp(got, want, n * dsize[dt]) ? n : 0;
	for (i = 0; i < n; i++) {
		int16_t a, b;

		memcpy(&a, (const char *)got + 2 * i, 2);
		memcpy(&b, (const char *)want + 2 * i, 2);
		bad += abs((int)a - (int)b) > 1;
	}
	return bad;
}

FIXTURE(reduce) {
	int fd;
	struct nccom_info base;
	uint8_t *a, *b, *d, *want, *orig;
	uint32_t ha, hb, hd;
	struct nccom_ring r;
};

FIXTURE_VARIANT(reduce) {
	int dtype;
};

FIXTURE_VARIANT_ADD(reduce, int8) { .dtype = NCCOM_DTYPE_INT8 };
FIXTURE_VARIANT_ADD(reduce, uint8) { .dtype = NCCOM_DTYPE_UINT8 };
FIXTURE_VARIANT_ADD(reduce, int32) { .dtype = NCCOM_DTYPE_INT32 };
FIXTURE_VARIANT_ADD(reduce, uint32) { .dtype = NCCOM_DTYPE_UINT32 };
FIXTURE_VARIANT_ADD(reduce, int64) { .dtype = NCCOM_DTYPE_INT64 };
FIXTURE_VARIANT_ADD(reduce, uint64) { .dtype = NCCOM_DTYPE_UINT64 };
FIXTURE_VARIANT_ADD(reduce, fp16) { .dtype = NCCOM_DTYPE_FP16 };
FIXTURE_VARIANT_ADD(reduce, bf16) { .dtype = NCCOM_DTYPE_BF16 };
FIXTURE_VARIANT_ADD(reduce, fp32) { .dtype = NCCOM_DTYPE_FP32 };
FIXTURE_VARIANT_ADD(reduce, fp64) { .dtype = NCCOM_DTYPE_FP64 };

FIXTURE_SETUP(reduce)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	self->a = nccom_alloc(RBUF);
	self->b = nccom_alloc(RBUF);
	self->d = nccom_alloc(RBUF);
	self->want = malloc(RBUF);
	self->orig = malloc(RBUF);
	ASSERT_TRUE(self->a && self->b && self->d && self->want && self->orig);
	/* Touched first: see mem.readonly_registration_then_write. */
	memset(self->a, 0, RBUF);
	memset(self->b, 0, RBUF);
	memset(self->d, 0, RBUF);
	test_cmd_mem_register(NCCOM_MEM_READ, self->a, RBUF, &self->ha);
	test_cmd_mem_register(NCCOM_MEM_READ, self->b, RBUF, &self->hb);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, self->d, RBUF, &self->hd);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 8, &self->r));
}

FIXTURE_TEARDOWN(reduce)
{
	struct nccom_info info;

	munmap(self->r.map, self->r.map_size);
	close(self->fd);
	nccom_free(self->a, RBUF);
	nccom_free(self->b, RBUF);
	nccom_free(self->d, RBUF);
	free(self->want);
	free(self->orig);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info));
}

TEST_F_TIMEOUT(reduce, every_op_and_size, 180)
{
	static const size_t counts[] = { 1, 3, 17, 1023, 4099 };
	static const char *const opname[] = { "sum", "prod", "min", "max" };
	const int dt = variant->dtype;
	const size_t es = dsize[dt];
	size_t ci, n, bad, bytes;
	int op, inplace;

	for (op = 0; op < NCCOM_REDOP_COUNT; op++) {
		for (ci = 0; ci < ARRAY_SIZE(counts); ci++) {
			for (inplace = 0; inplace < 2; inplace++) {
				/* Unaligned byte offsets on every other case. */
				uint64_t off = (ci & 1) ? 3 : 0;
				struct nccom_desc d;
				struct nccom_cqe c;

				n = counts[ci];
				bytes = n * es;
				fill_values(dt, self->a + off, n, 100 * op + ci);
				fill_values(dt, self->b + off, n, 1000 + 100 * op + ci);
				fill_values(dt, self->d + off, n, 5000 + ci);
				memset(self->d + off + bytes, 0xcd, 8);
				memcpy(self->orig, self->d + off, bytes);
				if (inplace) {
					reference(dt, op, self->orig, self->a + off, self->want, n);
					d = desc_reduce(dt, op, self->hd, off, self->ha, off,
							0, 0, n, op);
				} else {
					reference(dt, op, self->a + off, self->b + off,
						  self->want, n);
					d = desc_reduce(dt, op, self->hd, off, self->ha, off,
							self->hb, off, n, op);
				}
				ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
				ASSERT_EQ(0, c.status) TH_LOG("%s n=%zu inplace=%d",
							      opname[op], n, inplace);
				bad = mismatches(dt, self->d + off, self->want, n);
				EXPECT_EQ(0, bad) TH_LOG("%s n=%zu inplace=%d: %zu wrong",
							 opname[op], n, inplace, bad);
				/* Nothing written past the end. */
				EXPECT_EQ(0xcd, self->d[off + bytes]);
				EXPECT_EQ(0xcd, self->d[off + bytes + 7]);
			}
		}
	}
}

/* A reduce whose byte length runs past the object is refused whole. */
TEST_F(reduce, range_checked_in_elements)
{
	const int dt = variant->dtype;
	const size_t es = dsize[dt];
	struct nccom_desc d;
	struct nccom_cqe c;
	uint64_t n = RBUF / es;

	memset(self->d, 0x5a, RBUF);
	d = desc_reduce(dt, NCCOM_REDOP_MAX, self->hd, es, self->ha, 0, 0, 0, n, 1);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	EXPECT_EQ(-EOVERFLOW, c.status);
	EXPECT_EQ(0x5a, self->d[es]);
	test_cmd_queue_reset(self->r.handle, 0);
	d = desc_reduce(dt, NCCOM_REDOP_MAX, self->hd, 0, self->ha, 0, 0, 0, n, 2);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	EXPECT_EQ(0, c.status);
}

TEST_HARNESS_MAIN
