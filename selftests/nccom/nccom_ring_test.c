// SPDX-License-Identifier: GPL-2.0
/*
 * Description: rings and the progress engine: ordering of completions,
 * wrap-around many times, a full ring, 100k descriptors, copies at
 * unaligned offsets, a bad descriptor in the middle of good ones (error
 * state, later descriptors held, other queues unaffected, reset and reset
 * with discard), a SEM_WAIT that parks only its own queue, queue teardown
 * with work pending, two processes' queues progressing concurrently, and
 * copies split between a doorbell's own budget and the engine.
 */
#include <pthread.h>
#include <stdlib.h>

#include "nccom_utils.h"

#define BUFSZ (64 * 1024)

/* Two fixtures share this layout: "ring" and "bad" (with variants). */
#define RING_FIELDS                                     \
	int fd;                                         \
	struct nccom_info base;                         \
	uint8_t *src, *dst, *ro;                        \
	uint32_t hsrc, hdst, hro, sem;                  \
	struct nccom_ring r

FIXTURE(ring) {
	RING_FIELDS;
};

static void ringfx_setup(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	self->src = nccom_alloc(BUFSZ);
	self->dst = nccom_alloc(BUFSZ);
	self->ro = nccom_alloc(BUFSZ);
	ASSERT_NE(NULL, self->src);
	ASSERT_NE(NULL, self->dst);
	ASSERT_NE(NULL, self->ro);
	fill_pattern(self->src, BUFSZ, 1);
	memset(self->dst, 0, BUFSZ);
	memset(self->ro, 0x11, BUFSZ);
	test_cmd_mem_register(NCCOM_MEM_READ, self->src, BUFSZ, &self->hsrc);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, self->dst, BUFSZ,
			      &self->hdst);
	test_cmd_mem_register(NCCOM_MEM_READ, self->ro, BUFSZ, &self->hro);
	test_cmd_sem_create(0, &self->sem);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 16, &self->r));
}

static void ringfx_teardown(struct __test_metadata *_metadata, FIXTURE_DATA(ring) *self)
{
	struct nccom_info info;

	if (self->r.map)
		munmap(self->r.map, self->r.map_size);
	close(self->fd);
	nccom_free(self->src, BUFSZ);
	nccom_free(self->dst, BUFSZ);
	nccom_free(self->ro, BUFSZ);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

FIXTURE_SETUP(ring)
{
	ringfx_setup(_metadata, self);
}

FIXTURE_TEARDOWN(ring)
{
	ringfx_teardown(_metadata, self);
}

TEST_F(ring, nop_ordering)
{
	struct nccom_desc d[16];
	struct nccom_cqe c[16];
	struct nccom_queue_get_state st;
	int i;

	for (i = 0; i < 16; i++)
		d[i] = desc_nop(1000 + i);
	ASSERT_EQ(16, nccom_ring_run(&self->r, d, 16, c, 60000));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(1000 + i, c[i].cookie);
		EXPECT_EQ(0, c[i].status);
	}
	test_cmd_queue_get_state(self->r.handle, &st);
	EXPECT_EQ(NCCOM_QUEUE_ACTIVE, st.out_state);
	EXPECT_EQ(0, st.out_error);
	EXPECT_EQ(16, st.out_sq_head);
	EXPECT_EQ(16, st.out_completed);
	EXPECT_EQ(16, self->r.kh->cq_tail);
}

TEST_F(ring, copy_unaligned)
{
	static const struct { uint64_t so, doff, len; } cases[] = {
		{ 0, 0, BUFSZ }, { 1, 3, 1 }, { 3, 4093, 5000 }, { 4095, 1, 4097 },
		{ 7, 8190, 12345 }, { BUFSZ - 1, 0, 1 }, { 0, BUFSZ - 1, 1 },
	};
	struct nccom_desc d;
	struct nccom_cqe c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(self->dst, 0xee, BUFSZ);
		d = desc_copy(self->hdst, cases[i].doff, self->hsrc, cases[i].so,
			      cases[i].len, i);
		ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
		EXPECT_EQ(0, c.status);
		EXPECT_EQ(0, memcmp(self->dst + cases[i].doff, self->src + cases[i].so,
				    cases[i].len)) TH_LOG("case %u", i);
		/* Nothing outside the destination range was written. */
		if (cases[i].doff)
			EXPECT_EQ(0xee, self->dst[cases[i].doff - 1]);
		if (cases[i].doff + cases[i].len < BUFSZ)
			EXPECT_EQ(0xee, self->dst[cases[i].doff + cases[i].len]);
	}
}

#define DOORBELL_PARAM "/sys/module/nccom/parameters/doorbell_bytes"

/* Read (and, if @set >= 0, write) the doorbell_bytes module parameter. */
static long doorbell_bytes(long set)
{
	FILE *f = fopen(DOORBELL_PARAM, "r");
	long old = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &old) != 1)
		old = -1;
	fclose(f);
	if (set >= 0) {
		f = fopen(DOORBELL_PARAM, "w");
		if (!f)
			return -1;
		fprintf(f, "%ld\n", set);
		if (fclose(f))
			return -1;
	}
	return old;
}

/*
 * A doorbell runs up to doorbell_bytes itself and leaves the rest to the
 * engine, also in the middle of one descriptor: off (0), 1 byte (every
 * copy is split between the caller and the engine), a budget that ends
 * inside the second page, and the default; the same copies must land.
 */
TEST_F(ring, doorbell_budget_split)
{
	static const long budgets[] = { 0, 1, 5000, 4096 };
	/* Disjoint pieces that together cover the buffer: every one must land. */
	static const uint64_t lens[] = { 1, 4096, 5000, BUFSZ - 1 - 4096 - 5000 };
	struct nccom_desc d[ARRAY_SIZE(lens)];
	struct nccom_cqe c[ARRAY_SIZE(lens)];
	long orig = doorbell_bytes(-1);
	unsigned int b, i;
	uint64_t off;

	ASSERT_LE(0, orig) TH_LOG("%s not readable", DOORBELL_PARAM);
	for (b = 0; b < ARRAY_SIZE(budgets); b++) {
		ASSERT_EQ(orig, doorbell_bytes(budgets[b])) TH_LOG("cannot write %s", DOORBELL_PARAM);
		memset(self->dst, 0xee, BUFSZ);
		for (i = 0, off = 0; i < ARRAY_SIZE(lens); off += lens[i], i++)
			d[i] = desc_copy(self->hdst, off, self->hsrc, off, lens[i], i);
		ASSERT_EQ(ARRAY_SIZE(lens), nccom_ring_run(&self->r, d, ARRAY_SIZE(lens), c, 60000));
		for (i = 0; i < ARRAY_SIZE(lens); i++)
			EXPECT_EQ(0, c[i].status) TH_LOG("budget %ld, copy %u", budgets[b], i);
		EXPECT_EQ(0, memcmp(self->dst, self->src, BUFSZ)) TH_LOG("budget %ld", budgets[b]);
		doorbell_bytes(orig);
	}
	EXPECT_EQ(orig, doorbell_bytes(-1));
}

/* Depth 4, thousands of descriptors: the indices wrap around many times. */
TEST_F_TIMEOUT(ring, wrap_around, 180)
{
	const uint32_t n = 4000;
	struct nccom_desc *d = calloc(n, sizeof(*d));
	struct nccom_cqe *c = calloc(n, sizeof(*c));
	struct nccom_ring r4;
	uint32_t i;

	ASSERT_NE(NULL, d);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 4, &r4));
	for (i = 0; i < n; i++)
		d[i] = desc_copy(self->hdst, i % BUFSZ, self->hsrc, (i * 7) % BUFSZ, 1, i);
	ASSERT_EQ(n, nccom_ring_run(&r4, d, n, c, 60000));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(i, c[i].cookie);
		ASSERT_EQ(0, c[i].status);
		ASSERT_EQ(self->src[(i * 7) % BUFSZ], self->dst[i % BUFSZ]);
	}
	EXPECT_EQ(n, r4.kh->sq_head);
	nccom_ring_destroy(&r4);
	free(d);
	free(c);
}

/*
 * A parked queue fills up; nothing is lost once it moves again. The engine
 * may or may not take the SEM_WAIT itself out of the ring while parked, so
 * the ring is topped up until a submission is refused; while parked the
 * engine consumes at most that one descriptor.
 */
TEST_F(ring, full_ring)
{
	struct nccom_desc d[32];
	struct nccom_cqe c[32];
	struct nccom_queue_get_state st;
	uint32_t n, room, tries;
	int i, rc = 0;

	d[0] = desc_sem(NCCOM_OP_SEM_WAIT, self->sem, 1, 0);
	for (i = 1; i < 32; i++)
		d[i] = desc_copy(self->hdst, i * 100, self->hsrc, i * 100, 100, i);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, d, 16));
	n = 16;
	for (tries = 0; tries < 20; tries++) {
		usleep(20000);
		room = nccom_ring_space(&self->r);
		if (room) {
			ASSERT_GE(32, n + room);
			ASSERT_EQ(0, nccom_ring_submit(&self->r, d + n, room));
			n += room;
			continue;
		}
		rc = nccom_ring_submit(&self->r, d + n, 1);
		if (rc == -EAGAIN)
			break;
	}
	EXPECT_EQ(-EAGAIN, rc);
	EXPECT_GE(17, n);
	EXPECT_GE(1, self->r.kh->sq_head);
	/* Parked on the semaphore: nothing completes. */
	EXPECT_EQ(-ETIMEDOUT, nccom_ring_reap(&self->r, c, 1, 16, 200));
	test_cmd_queue_get_state(self->r.handle, &st);
	EXPECT_EQ(0, st.out_completed);
	EXPECT_EQ(0, self->dst[100]);
	test_cmd_sem_signal(self->sem, 1);
	ASSERT_EQ(n, nccom_ring_reap(&self->r, c, n, n, 60000));
	for (i = 0; i < (int)n; i++) {
		EXPECT_EQ(i, c[i].cookie);
		EXPECT_EQ(0, c[i].status);
	}
	EXPECT_EQ(0, memcmp(self->dst + 100, self->src + 100, 100 * (n - 1)));
	EXPECT_EQ(16, nccom_ring_space(&self->r));
}

TEST_F_TIMEOUT(ring, descriptors_100k, 300)
{
	const uint32_t n = 100000;
	struct nccom_desc *d = calloc(n, sizeof(*d));
	struct nccom_cqe *c = calloc(n, sizeof(*c));
	struct nccom_queue_get_state st;
	struct nccom_ring big;
	uint32_t i, bad = 0;

	ASSERT_NE(NULL, d);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 1024, &big));
	for (i = 0; i < n; i++) {
		if (i % 2)
			d[i] = desc_nop(i);
		else
			d[i] = desc_copy(self->hdst, (i * 64) % BUFSZ, self->hsrc,
					 (i * 64 + 64) % BUFSZ, 64, i);
	}
	ASSERT_EQ(n, nccom_ring_run(&big, d, n, c, 240000));
	for (i = 0; i < n; i++)
		bad += c[i].cookie != i || c[i].status != 0;
	EXPECT_EQ(0, bad);
	test_cmd_queue_get_state(big.handle, &st);
	EXPECT_EQ(n, st.out_completed);
	EXPECT_EQ(NCCOM_QUEUE_ACTIVE, st.out_state);
	/* The last copies to each slot came from the expected source bytes. */
	for (i = n - BUFSZ / 64 * 2; i < n; i += 2)
		ASSERT_EQ(0, memcmp(self->dst + (i * 64) % BUFSZ,
				    self->src + (i * 64 + 64) % BUFSZ, 64));
	nccom_ring_destroy(&big);
	free(d);
	free(c);
}

/* ---- a bad descriptor in the middle: one variant per kind of bad ---- */

enum bad_kind {
	BAD_OPCODE, BAD_RESERVED, BAD_FLAGS, BAD_HANDLE, BAD_TYPE, BAD_DST_OFF,
	BAD_WRAP, BAD_LEN, BAD_RO_DST, BAD_DTYPE, BAD_REDOP, BAD_COUNT,
	BAD_NOP_FIELDS, BAD_SEM_HANDLE, BAD_ZERO_HANDLE,
};

FIXTURE(bad) {
	RING_FIELDS;
};

FIXTURE_VARIANT(bad) {
	enum bad_kind kind;
	int err;
};

FIXTURE_SETUP(bad)
{
	ringfx_setup(_metadata, (FIXTURE_DATA(ring) *)self);
}

FIXTURE_TEARDOWN(bad)
{
	ringfx_teardown(_metadata, (FIXTURE_DATA(ring) *)self);
}

FIXTURE_VARIANT_ADD(bad, opcode) { .kind = BAD_OPCODE, .err = EINVAL };
FIXTURE_VARIANT_ADD(bad, reserved) { .kind = BAD_RESERVED, .err = EINVAL };
FIXTURE_VARIANT_ADD(bad, flags) { .kind = BAD_FLAGS, .err = EINVAL };
FIXTURE_VARIANT_ADD(bad, unknown_handle) { .kind = BAD_HANDLE, .err = ENOENT };
FIXTURE_VARIANT_ADD(bad, zero_handle) { .kind = BAD_ZERO_HANDLE, .err = ENOENT };
FIXTURE_VARIANT_ADD(bad, sem_as_mem) { .kind = BAD_TYPE, .err = ENOENT };
FIXTURE_VARIANT_ADD(bad, mem_as_sem) { .kind = BAD_SEM_HANDLE, .err = ENOENT };
FIXTURE_VARIANT_ADD(bad, dst_offset) { .kind = BAD_DST_OFF, .err = EOVERFLOW };
FIXTURE_VARIANT_ADD(bad, wrapping) { .kind = BAD_WRAP, .err = EOVERFLOW };
FIXTURE_VARIANT_ADD(bad, length) { .kind = BAD_LEN, .err = EOVERFLOW };
FIXTURE_VARIANT_ADD(bad, readonly_dst) { .kind = BAD_RO_DST, .err = EACCES };
FIXTURE_VARIANT_ADD(bad, dtype) { .kind = BAD_DTYPE, .err = EINVAL };
FIXTURE_VARIANT_ADD(bad, redop) { .kind = BAD_REDOP, .err = EINVAL };
FIXTURE_VARIANT_ADD(bad, count) { .kind = BAD_COUNT, .err = EOVERFLOW };
FIXTURE_VARIANT_ADD(bad, nop_fields) { .kind = BAD_NOP_FIELDS, .err = EINVAL };

static struct nccom_desc make_bad(FIXTURE_DATA(ring) *self, enum bad_kind k)
{
	struct nccom_desc d = desc_copy(self->hdst, 0, self->hsrc, 0, 64, 77);

	switch (k) {
	case BAD_OPCODE: d.opcode = 200; break;
	case BAD_RESERVED: d.__reserved0 = 1; break;
	case BAD_FLAGS: d.flags = 1; break;
	case BAD_HANDLE: d.src_handle = 0xdead; break;
	case BAD_ZERO_HANDLE: d.dst_handle = 0; break;
	case BAD_TYPE: d.src_handle = self->sem; break;
	case BAD_SEM_HANDLE: d = desc_sem(NCCOM_OP_SEM_SIGNAL, self->hdst, 1, 77); break;
	case BAD_DST_OFF: d.dst_offset = BUFSZ; d.length = 1; break;
	case BAD_WRAP: d.src_offset = ~0ULL - 10; break;
	case BAD_LEN: d.dst_offset = 8; d.length = BUFSZ; break;
	case BAD_RO_DST: d.dst_handle = self->hro; break;
	case BAD_DTYPE:
		d = desc_reduce(NCCOM_DTYPE_COUNT, NCCOM_REDOP_SUM, self->hdst, 0,
				self->hsrc, 0, 0, 0, 4, 77);
		break;
	case BAD_REDOP:
		d = desc_reduce(NCCOM_DTYPE_INT32, NCCOM_REDOP_COUNT, self->hdst, 0,
				self->hsrc, 0, 0, 0, 4, 77);
		break;
	case BAD_COUNT:
		d = desc_reduce(NCCOM_DTYPE_INT64, NCCOM_REDOP_SUM, self->hdst, 0,
				self->hsrc, 0, 0, 0, 1ULL << 61, 77);
		break;
	case BAD_NOP_FIELDS: d = desc_nop(77); d.src_handle = self->hsrc; break;
	}
	return d;
}

TEST_F(bad, descriptor_in_middle)
{
	struct nccom_desc d[5];
	struct nccom_cqe c[5];
	struct nccom_queue_get_state st;
	struct nccom_ring other;
	struct nccom_desc od;
	struct nccom_cqe oc;
	int n;

	d[0] = desc_copy(self->hdst, 1000, self->hsrc, 1000, 100, 1);
	d[1] = desc_copy(self->hdst, 2000, self->hsrc, 2000, 100, 2);
	d[2] = make_bad((FIXTURE_DATA(ring) *)self, variant->kind);
	d[3] = desc_copy(self->hdst, 3000, self->hsrc, 3000, 100, 3);
	d[4] = desc_copy(self->hdst, 4000, self->hsrc, 4000, 100, 4);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, d, 5));
	n = nccom_ring_reap(&self->r, c, 3, 5, 60000);
	ASSERT_EQ(3, n);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(0, c[1].status);
	EXPECT_EQ(77, c[2].cookie);
	EXPECT_EQ(-variant->err, c[2].status);
	/* Error state: nothing after the bad descriptor ran. */
	EXPECT_EQ(-ETIMEDOUT, nccom_ring_reap(&self->r, c + 3, 1, 2, 200));
	test_cmd_queue_get_state(self->r.handle, &st);
	EXPECT_EQ(NCCOM_QUEUE_ERROR, st.out_state);
	EXPECT_EQ(-variant->err, st.out_error);
	EXPECT_EQ(77, st.out_error_cookie);
	EXPECT_EQ(NCCOM_QUEUE_ERROR, self->r.kh->state);
	EXPECT_EQ(-variant->err, self->r.kh->error);
	EXPECT_EQ(0, memcmp(self->dst + 2000, self->src + 2000, 100));
	EXPECT_EQ(0, self->dst[3000]);
	test_err_queue_doorbell(EIO, self->r.handle);
	/* Another queue of the same fd is unaffected. */
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 4, &other));
	od = desc_copy(self->hdst, 5000, self->hsrc, 5000, 100, 9);
	ASSERT_EQ(1, nccom_ring_run(&other, &od, 1, &oc, 60000));
	EXPECT_EQ(0, oc.status);
	EXPECT_EQ(0, memcmp(self->dst + 5000, self->src + 5000, 100));
	nccom_ring_destroy(&other);
	/* Reset: execution resumes after the failed descriptor. */
	test_cmd_queue_reset(self->r.handle, 0);
	test_err_queue_reset(EBUSY, self->r.handle, 0);
	test_cmd_queue_doorbell(self->r.handle);
	ASSERT_EQ(2, nccom_ring_reap(&self->r, c + 3, 2, 2, 60000));
	EXPECT_EQ(3, c[3].cookie);
	EXPECT_EQ(0, c[3].status);
	EXPECT_EQ(4, c[4].cookie);
	EXPECT_EQ(0, c[4].status);
	EXPECT_EQ(0, memcmp(self->dst + 3000, self->src + 3000, 100));
	test_cmd_queue_get_state(self->r.handle, &st);
	EXPECT_EQ(NCCOM_QUEUE_ACTIVE, st.out_state);
	EXPECT_EQ(0, st.out_error);
}

TEST_F(ring, reset_discard)
{
	struct nccom_desc d[4];
	struct nccom_cqe c[4];
	int i;

	d[0] = desc_copy(self->hdst, 0, 0xbad, 0, 8, 0);
	for (i = 1; i < 4; i++)
		d[i] = desc_copy(self->hdst, i * 100, self->hsrc, i * 100, 8, i);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, d, 4));
	ASSERT_EQ(1, nccom_ring_reap(&self->r, c, 1, 1, 60000));
	EXPECT_EQ(-ENOENT, c[0].status);
	test_err_queue_reset(EINVAL, self->r.handle, 1u << 7);
	test_cmd_queue_reset(self->r.handle, NCCOM_QUEUE_RESET_DISCARD);
	ASSERT_EQ(3, nccom_ring_reap(&self->r, c + 1, 3, 3, 60000));
	for (i = 1; i < 4; i++) {
		EXPECT_EQ(i, c[i].cookie);
		EXPECT_EQ(-ECANCELED, c[i].status);
	}
	EXPECT_EQ(0, self->dst[100]);
	/* The queue works afterwards. */
	d[0] = desc_copy(self->hdst, 100, self->hsrc, 100, 8, 5);
	ASSERT_EQ(1, nccom_ring_run(&self->r, d, 1, c, 60000));
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(0, memcmp(self->dst + 100, self->src + 100, 8));
}

/* A SEM_WAIT parks its queue only; a SEM_SIGNAL on another queue frees it. */
TEST_F_TIMEOUT(ring, sem_wait_parks_only_its_queue, 120)
{
	struct nccom_ring q2;
	struct nccom_desc d[2], e[3];
	struct nccom_cqe c[3];
	uint64_t v;

	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 8, &q2));
	d[0] = desc_sem(NCCOM_OP_SEM_WAIT, self->sem, 5, 1);
	d[1] = desc_copy(self->hdst, 0, self->hsrc, 0, 4096, 2);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, d, 2));
	e[0] = desc_copy(self->hdst, 8192, self->hsrc, 8192, 4096, 10);
	e[1] = desc_sem(NCCOM_OP_SEM_SIGNAL, self->sem, 3, 11);
	ASSERT_EQ(2, nccom_ring_run(&q2, e, 2, c, 60000));
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(0, c[1].status);
	EXPECT_EQ(0, memcmp(self->dst + 8192, self->src + 8192, 4096));
	test_cmd_sem_read(self->sem, &v, NULL);
	EXPECT_EQ(3, v);
	/* 3 < 5: still parked. */
	EXPECT_EQ(-ETIMEDOUT, nccom_ring_reap(&self->r, c, 1, 2, 200));
	EXPECT_EQ(0, self->dst[0] == self->src[0] && self->dst[1] == self->src[1] &&
		     self->dst[2] == self->src[2] && self->dst[3] == self->src[3]);
	e[2] = desc_sem(NCCOM_OP_SEM_SIGNAL, self->sem, 5, 12);
	ASSERT_EQ(1, nccom_ring_run(&q2, e + 2, 1, c, 60000));
	EXPECT_EQ(0, c[0].status);
	ASSERT_EQ(2, nccom_ring_reap(&self->r, c, 2, 2, 60000));
	EXPECT_EQ(1, c[0].cookie);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(0, c[1].status);
	EXPECT_EQ(0, memcmp(self->dst, self->src, 4096));
	/* Signalling backwards from a descriptor is a descriptor error. */
	e[0] = desc_sem(NCCOM_OP_SEM_SIGNAL, self->sem, 4, 13);
	ASSERT_EQ(1, nccom_ring_run(&q2, e, 1, c, 60000));
	EXPECT_EQ(-EINVAL, c[0].status);
	nccom_ring_destroy(&q2);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* QUEUE_WAIT: returns at once on a stale tail, times out, is interruptible. */
TEST_F_TIMEOUT(ring, queue_wait, 90)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct nccom_desc d = desc_nop(1);
	struct nccom_cqe c;
	uint64_t deadline;
	uint32_t tail = 99;
	int status;
	pid_t pid;

	/* Nothing pending: times out (0 = do not wait; a real deadline). */
	test_err_queue_wait(ETIMEDOUT, self->r.handle, 0, 0);
	deadline = deadline_ms(100);
	test_err_queue_wait(ETIMEDOUT, self->r.handle, 0, deadline);
	EXPECT_LE(deadline, now_ns());
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	/* The caller's tail is stale: returns at once with the real one. */
	ASSERT_EQ(0, _test_cmd_queue_wait(self->fd, self->r.handle, 0, deadline_ms(60000),
					  &tail));
	EXPECT_EQ(1, tail);
	/* Interrupted by a caught signal: -EINTR. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		sigaction(SIGUSR1, &sa, NULL);
		if (_test_cmd_queue_wait(self->fd, self->r.handle, 1, deadline_ms(60000),
					 NULL) == -1 && errno == EINTR)
			_exit(0);
		_exit(1);
	}
	usleep(300000);
	kill(pid, SIGUSR1);
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
}

/*
 * Fairness: a huge copy on one queue does not hold back a small one on
 * another queue of the same device. Both queues are released at the same
 * moment by one semaphore; the small queue then copies the last bytes of
 * the huge copy's destination into a probe. Round-robin with a bounded turn
 * means the probe runs long before the huge copy reaches its end, so the
 * probe must see the old bytes. The evidence is taken by the engine itself,
 * so a slow or descheduled test process cannot change the outcome.
 */
TEST_F_TIMEOUT(ring, no_starvation, 120)
{
	const size_t big = 64 << 20;
	uint8_t *a = nccom_alloc(big), *b = nccom_alloc(big);
	struct nccom_desc da[2], db[3];
	struct nccom_cqe c[3];
	struct nccom_ring q2;
	uint32_t ha, hb, go;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 1, big);
	memset(b, 0, big);
	memset(self->dst, 0xee, 16);
	test_cmd_mem_register(NCCOM_MEM_READ, a, big, &ha);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, big, &hb);
	test_cmd_sem_create(0, &go);
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 4, &q2));
	da[0] = desc_sem(NCCOM_OP_SEM_WAIT, go, 1, 0);
	da[1] = desc_copy(hb, 0, ha, 0, big, 1);
	db[0] = desc_sem(NCCOM_OP_SEM_WAIT, go, 1, 10);
	db[1] = desc_copy(self->hdst, 4096, self->hsrc, 0, 4096, 11);
	db[2] = desc_copy(self->hdst, 0, hb, big - 16, 16, 12);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, da, 2));
	ASSERT_EQ(0, nccom_ring_submit(&q2, db, 3));
	test_cmd_sem_signal(go, 1);
	ASSERT_EQ(3, nccom_ring_reap(&q2, c, 3, 3, 60000));
	EXPECT_EQ(0, c[1].status);
	EXPECT_EQ(0, c[2].status);
	ASSERT_EQ(2, nccom_ring_reap(&self->r, c, 2, 2, 60000));
	EXPECT_EQ(0, c[1].status);
	EXPECT_EQ(1, b[big - 1]);
	/* The probe saw the huge copy's tail still unwritten. */
	EXPECT_EQ(0, self->dst[0]) TH_LOG("a 4 KiB copy waited for a 64 MiB copy on another queue");
	EXPECT_EQ(0, self->dst[15]);
	nccom_ring_destroy(&q2);
	nccom_free(a, big);
	nccom_free(b, big);
}

struct flipper {
	volatile struct nccom_desc *slots;
	uint32_t n;
	struct nccom_desc good, bad;
	volatile int stop;
};

static void *flip(void *p)
{
	struct flipper *f = p;
	uint32_t i = 0;

	while (!f->stop) {
		volatile struct nccom_desc *d = &f->slots[i++ % f->n];

		/* Only the fields that decide the range: offset and length. */
		d->length = f->bad.length;
		d->dst_offset = f->bad.dst_offset;
		d->length = f->good.length;
		d->dst_offset = f->good.dst_offset;
	}
	return NULL;
}

/*
 * The user rewrites descriptors while the engine reads them: only the length
 * flips, between a copy into the last page of dst (valid) and one a page
 * longer (out of range). The engine copies each descriptor once before
 * validating it, so every completion is 0 (and the last page holds the
 * source bytes) or -EOVERFLOW (nothing written). A double fetch would check
 * one length and copy the other, writing past the registration: that shows
 * up as a wrong status, a splat in dmesg (check-kmod greps it, SLUB debug
 * is on) or a crash.
 */
TEST_F_TIMEOUT(ring, hostile_rewrites_while_engine_reads, 120)
{
	struct flipper f = { .slots = self->r.ksq, .n = self->r.depth };
	struct nccom_cqe c[16];
	struct nccom_desc d[16];
	int i, round, rc, bad = 0, ok = 0;
	pthread_t th;

	f.good = desc_copy(self->hdst, BUFSZ - PAGE_SZ, self->hsrc, 0, PAGE_SZ, 0);
	f.bad = f.good;
	f.bad.length = 2 * PAGE_SZ;
	memset(self->dst, 0, BUFSZ);
	ASSERT_EQ(0, pthread_create(&th, NULL, flip, &f));
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 16; i++) {
			d[i] = f.good;
			d[i].cookie = i;
		}
		rc = nccom_ring_submit(&self->r, d, 16);
		if (rc == -EIO) {
			test_cmd_queue_reset(self->r.handle, NCCOM_QUEUE_RESET_DISCARD);
			nccom_ring_reap(&self->r, c, 16, 16, 1000);
			continue;
		}
		ASSERT_EQ(0, rc);
		rc = nccom_ring_reap(&self->r, c, 16, 16, 2000);
		if (rc < 16 && self->r.kh->state == NCCOM_QUEUE_ERROR) {
			/* A bad version failed and stopped the queue: drop the rest. */
			test_cmd_queue_reset(self->r.handle, NCCOM_QUEUE_RESET_DISCARD);
			rc += nccom_ring_reap(&self->r, c + rc, 16 - rc, 16 - rc, 60000);
		}
		ASSERT_EQ(16, rc);
		for (i = 0; i < 16; i++) {
			ok += c[i].status == 0;
			bad += c[i].status != 0 && c[i].status != -EOVERFLOW &&
			       c[i].status != -ECANCELED;
		}
	}
	f.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, bad);
	/* Only the last page was ever written, with the source's first page. */
	for (i = 0; i < (int)(BUFSZ - PAGE_SZ); i++)
		if (self->dst[i])
			break;
	EXPECT_EQ(BUFSZ - PAGE_SZ, i) TH_LOG("dst byte %d written", i);
	if (ok)
		EXPECT_EQ(0, memcmp(self->dst + BUFSZ - PAGE_SZ, self->src, PAGE_SZ));
}

/*
 * The user corrupts the ring indices: a submission tail more than depth
 * ahead, or a completion head beyond the tail. The queue must stop in the
 * error state without executing anything, other queues keep working, and a
 * reset brings it back to a usable state.
 */
TEST_F_TIMEOUT(ring, corrupt_indices, 90)
{
	struct nccom_queue_get_state st;
	struct nccom_desc d = desc_copy(self->hdst, 0, self->hsrc, 0, 64, 5);
	struct nccom_cqe c;
	int which;

	for (which = 0; which < 2; which++) {
		uint32_t head = self->r.kh->sq_head;
		uint64_t end = deadline_ms(30000), done0;
		int found = 0, n, k;

		test_cmd_queue_get_state(self->r.handle, &st);
		done0 = st.out_completed;

		if (which == 0)
			__atomic_store_n(&self->r.kh->sq_tail, head + self->r.depth + 3,
					 __ATOMIC_RELEASE);
		else {
			__atomic_store_n(&self->r.kh->cq_head, self->r.kh->cq_tail + 1000,
					 __ATOMIC_RELEASE);
			self->r.ksq[self->r.sq_tail & self->r.mask] = d;
			__atomic_store_n(&self->r.kh->sq_tail, self->r.sq_tail + 1,
					 __ATOMIC_RELEASE);
		}
		_test_cmd_queue_doorbell(self->fd, self->r.handle);
		do {
			test_cmd_queue_get_state(self->r.handle, &st);
			if (st.out_state == NCCOM_QUEUE_ERROR)
				break;
			usleep(10000);
		} while (now_ns() < end);
		EXPECT_EQ(NCCOM_QUEUE_ERROR, st.out_state) TH_LOG("corruption %d", which);
		EXPECT_GT(0, st.out_error);
		EXPECT_EQ(done0, st.out_completed);
		EXPECT_EQ(head, self->r.kh->sq_head);
		test_err_queue_doorbell(EIO, self->r.handle);
		/*
		 * Reset resynchronises the indices; discarded descriptors may
		 * still complete with -ECANCELED; then the queue works again.
		 */
		test_cmd_queue_reset(self->r.handle, NCCOM_QUEUE_RESET_DISCARD);
		self->r.sq_tail = self->r.kh->sq_tail;
		self->r.cq_head = self->r.kh->cq_head;
		d.cookie = 777 + which;
		ASSERT_EQ(0, nccom_ring_submit(&self->r, &d, 1));
		for (k = 0; k < 64 && !found; k++) {
			n = nccom_ring_reap(&self->r, &c, 1, 1, 60000);
			ASSERT_EQ(1, n);
			if (c.cookie == d.cookie) {
				found = 1;
				EXPECT_EQ(0, c.status);
			} else {
				EXPECT_EQ(-ECANCELED, c.status);
			}
		}
		EXPECT_TRUE(found);
		test_cmd_queue_get_state(self->r.handle, &st);
		EXPECT_EQ(NCCOM_QUEUE_ACTIVE, st.out_state);
	}
	EXPECT_EQ(0, memcmp(self->dst, self->src, 64));
}

/* Destroying a queue with parked and pending work neither hangs nor leaks. */
TEST_F(ring, destroy_with_pending)
{
	struct nccom_desc d[8];
	int i;

	d[0] = desc_sem(NCCOM_OP_SEM_WAIT, self->sem, 1, 0);
	for (i = 1; i < 8; i++)
		d[i] = desc_copy(self->hdst, 0, self->hsrc, 0, BUFSZ, i);
	ASSERT_EQ(0, nccom_ring_submit(&self->r, d, 8));
	test_cmd_destroy(self->r.handle);
	self->r.handle = 0;
	test_cmd_sem_signal(self->sem, 1);
	EXPECT_EQ(0, self->dst[0] == self->src[0] && self->dst[1] == self->src[1] &&
		     self->dst[2] == self->src[2] && self->dst[3] == self->src[3]);
}

/* A registration stays valid in the parent across fork(). */
TEST_F(ring, registration_survives_fork)
{
	struct nccom_desc d;
	struct nccom_cqe c;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	d = desc_copy(self->hdst, 0, self->hsrc, 0, BUFSZ, 1);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(0, memcmp(self->dst, self->src, BUFSZ));
}

/* Each child: own fd, two queues, many verified copies. */
static int worker(uint32_t seed, uint32_t iters)
{
	int fd = nccom_open();
	uint8_t *a = nccom_alloc(BUFSZ), *b = nccom_alloc(BUFSZ);
	struct nccom_ring q[2];
	struct nccom_desc d;
	struct nccom_cqe c;
	uint32_t ha, hb, i, off, len;

	if (fd < 0 || !a || !b)
		return 2;
	fill_pattern(a, BUFSZ, seed);
	memset(b, 0, BUFSZ);
	if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, a, BUFSZ, &ha) ||
	    _test_cmd_mem_register(fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, BUFSZ, &hb) ||
	    nccom_ring_create(fd, 0, 8, &q[0]) || nccom_ring_create(fd, 0, 8, &q[1]))
		return 3;
	for (i = 0; i < iters; i++) {
		off = (i * 4099 + seed) % (BUFSZ / 2);
		len = 1 + (i * 131) % (BUFSZ / 2);
		d = desc_copy(hb, off, ha, off, len, i);
		if (nccom_ring_run(&q[i & 1], &d, 1, &c, 60000) != 1 || c.status)
			return 4;
		if (memcmp(a + off, b + off, len))
			return 5;
	}
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(ring, two_processes_concurrently, 120)
{
	pid_t pid[2];
	int status, i;

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0)
			_exit(worker(i + 1, 1500));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, wait_child(pid[i], &status, 100000));
		EXPECT_TRUE(child_ok(status)) TH_LOG("worker %d: status 0x%x", i, status);
	}
}

TEST_HARNESS_MAIN
