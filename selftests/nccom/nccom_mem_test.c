// SPDX-License-Identifier: GPL-2.0
/*
 * Description: memory: pinned-page accounting, cross-process single copy
 * through a DMA-buf grant sent over SCM_RIGHTS (process A registers and
 * exports, B imports and copies/reduces between its memory and A's, data
 * checked byte for byte on both sides), exports outliving their handle,
 * registration invalidation (munmap, MAP_FIXED remap, MADV_DONTNEED, mremap:
 * a descriptor on it completes with -EFAULT and the kernel stays healthy),
 * DMA-buf import from real exporters (/dev/udmabuf, /dev/dma_heap/system),
 * and RLIMIT_MEMLOCK for an unprivileged user.
 */
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "nccom_utils.h"

#define LEN (256 * 1024)

FIXTURE(mem) {
	int fd;
	struct nccom_info base;
	struct nccom_ring r;
};

FIXTURE_SETUP(mem)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 16, &self->r));
}

FIXTURE_TEARDOWN(mem)
{
	struct nccom_info info;

	munmap(self->r.map, self->r.map_size);
	close(self->fd);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

/* Runs one descriptor on the fixture's ring; returns its status. */
static int run1(FIXTURE_DATA(mem) *self, struct nccom_desc d)
{
	struct nccom_cqe c;
	int rc = nccom_ring_run(&self->r, &d, 1, &c, 60000);

	if (rc != 1)
		return rc < 0 ? rc : -EIO;
	return c.status;
}

TEST_F(mem, pinned_accounting)
{
	uint8_t *a = nccom_alloc(LEN);
	struct nccom_info info;
	uint32_t h1, h2;

	ASSERT_NE(NULL, a);
	memset(a, 1, LEN);
	test_cmd_mem_register(NCCOM_MEM_READ, a, LEN, &h1);
	/* The same range twice is two registrations. */
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, a, LEN, &h2);
	test_cmd_get_info(&info);
	EXPECT_EQ(2 * LEN / PAGE_SZ, info.out_fd_pinned_pages);
	EXPECT_EQ(self->base.out_pinned_pages + 2 * LEN / PAGE_SZ, info.out_pinned_pages);
	test_cmd_destroy(h1);
	test_cmd_get_info(&info);
	EXPECT_EQ(LEN / PAGE_SZ, info.out_fd_pinned_pages);
	test_cmd_destroy(h2);
	test_cmd_get_info(&info);
	EXPECT_EQ(0, info.out_fd_pinned_pages);
	EXPECT_EQ(self->base.out_pinned_pages, info.out_pinned_pages);
	nccom_free(a, LEN);
}

/*
 * Register a never-touched buffer read-only, then fill it: the engine must
 * see the new bytes. (A read-only pin of an untouched anonymous page pins
 * the shared zero page on kernels whose GUP does not unshare it; the first
 * write then replaces the page and the registration must not go stale or
 * turn into -EFAULT.)
 */
TEST_F(mem, readonly_registration_then_write)
{
	uint8_t *a = nccom_alloc(LEN), *b = nccom_alloc(LEN);
	uint32_t ha, hb;
	int st;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(b, 0, LEN);
	test_cmd_mem_register(NCCOM_MEM_READ, a, LEN, &ha);
	test_cmd_mem_register(NCCOM_MEM_WRITE, b, LEN, &hb);
	fill_pattern(a, LEN, 77);
	st = run1(self, desc_copy(hb, 0, ha, 0, LEN, 1));
	EXPECT_EQ(0, st) TH_LOG("copy from a read-only registration written after registering: %s",
				strerror(-st));
	EXPECT_EQ(0, memcmp(a, b, LEN));
	nccom_free(a, LEN);
	nccom_free(b, LEN);
}

/*
 * Process A (child) owns src (pattern) and dst (zeros), exports both and
 * sends the fds; B (parent) imports them, copies A.src -> B.local and
 * B.local' -> A.dst, reduces int32 sum A.src + B.other -> A.dst2, and A
 * checks its memory byte for byte.
 */
TEST_F_TIMEOUT(mem, cross_process_single_copy, 120)
{
	int sv[2], status, fds[3], i;
	uint8_t *local = nccom_alloc(LEN), *other = nccom_alloc(LEN);
	uint32_t hl, ho, hs, hd, hd2, tag;
	char ok = 0;
	pid_t pid;

	ASSERT_NE(NULL, local);
	ASSERT_NE(NULL, other);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = nccom_open(), f[3];
		uint8_t *src = nccom_alloc(LEN), *dst = nccom_alloc(LEN);
		int32_t *dst2 = nccom_alloc(LEN), *exp2 = nccom_alloc(LEN);
		uint8_t *ref = nccom_alloc(LEN);
		uint32_t s, d, d2, j;
		char go;

		if (fd < 0 || !src || !dst || !dst2 || !exp2 || !ref)
			_exit(2);
		fill_pattern(src, LEN, 11);
		memset(dst, 0, LEN);
		memset(dst2, 0, LEN);
		if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, src, LEN, &s) ||
		    _test_cmd_mem_register(fd, NCCOM_MEM_WRITE, dst, LEN, &d) ||
		    _test_cmd_mem_register(fd, NCCOM_MEM_WRITE, dst2, LEN, &d2) ||
		    _test_cmd_mem_export(fd, s, &f[0]) || _test_cmd_mem_export(fd, d, &f[1]) ||
		    _test_cmd_mem_export(fd, d2, &f[2]))
			_exit(3);
		for (j = 0; j < 3; j++)
			if (send_fd(sv[1], f[j], j))
				_exit(4);
		/* Wait for B to finish, then check our memory. */
		if (read_full(sv[1], &go, 1))
			_exit(5);
		fill_pattern(ref, LEN, 22);
		if (memcmp(dst, ref, LEN))
			_exit(6);
		for (j = 0; j < LEN / 4; j++)
			exp2[j] = (int32_t)((uint32_t)((int32_t *)src)[j] +
					    (uint32_t)((int32_t *)ref)[j]);
		if (memcmp(dst2, exp2, LEN))
			_exit(7);
		_exit(0);
	}
	close(sv[1]);
	for (i = 0; i < 3; i++) {
		fds[i] = recv_fd(sv[0], &tag);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(i, tag);
	}
	test_cmd_mem_import(NCCOM_MEM_READ, fds[0], 0, 0, &hs);
	test_cmd_mem_import(NCCOM_MEM_WRITE, fds[1], 0, 0, &hd);
	test_cmd_mem_import(NCCOM_MEM_WRITE, fds[2], 0, 0, &hd2);
	/* The grant's rights are those of the registration. */
	test_err_mem_import(EINVAL, NCCOM_MEM_WRITE, fds[0], 0, 0);
	fill_pattern(other, LEN, 22);
	memset(local, 0, LEN);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, local, LEN, &hl);
	test_cmd_mem_register(NCCOM_MEM_READ, other, LEN, &ho);
	EXPECT_EQ(0, run1(self, desc_copy(hl, 0, hs, 0, LEN, 1)));
	EXPECT_EQ(0, run1(self, desc_copy(hd, 0, ho, 0, LEN, 2)));
	EXPECT_EQ(0, run1(self, desc_reduce(NCCOM_DTYPE_INT32, NCCOM_REDOP_SUM, hd2, 0,
					    hs, 0, ho, 0, LEN / 4, 3)));
	/* Access rights hold across the grant: A's src is read-only. */
	EXPECT_EQ(-EACCES, run1(self, desc_copy(hs, 0, hl, 0, 16, 4)));
	test_cmd_queue_reset(self->r.handle, 0);
	{
		uint8_t *ref = nccom_alloc(LEN);

		ASSERT_NE(NULL, ref);
		fill_pattern(ref, LEN, 11);
		EXPECT_EQ(0, memcmp(local, ref, LEN)) TH_LOG("B's copy of A's memory differs");
		nccom_free(ref, LEN);
	}
	ASSERT_EQ(0, write_full(sv[0], &ok, 1));
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status)) TH_LOG("A's check: status 0x%x", status);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(sv[0]);
	nccom_free(local, LEN);
	nccom_free(other, LEN);
}

/* Without the fd there is no way in: ids are per fd. */
TEST_F(mem, no_access_without_grant)
{
	int fd2 = nccom_open();
	uint8_t *a = nccom_alloc(LEN);
	uint32_t h, mine;
	uint8_t *b = nccom_alloc(PAGE_SZ);

	ASSERT_LE(0, fd2);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 3, LEN);
	ASSERT_EQ(0, _test_cmd_mem_register(fd2, NCCOM_MEM_READ, a, LEN, &h));
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, PAGE_SZ, &mine);
	/* h means nothing here (or names one of our own objects). */
	EXPECT_NE(0, run1(self, desc_copy(mine, 0, h == mine ? 0xbad : h, 0, 16, 1)));
	close(fd2);
	nccom_free(a, LEN);
	nccom_free(b, PAGE_SZ);
}

TEST_F(mem, export_outlives_handle)
{
	uint8_t *a = nccom_alloc(LEN), *b = nccom_alloc(LEN);
	struct nccom_info info;
	uint32_t ha, hb, hi;
	int dbfd;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill_pattern(a, LEN, 5);
	test_cmd_mem_register(NCCOM_MEM_READ, a, LEN, &ha);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, LEN, &hb);
	test_cmd_mem_export(ha, &dbfd);
	test_cmd_destroy(ha);
	test_cmd_mem_import(NCCOM_MEM_READ, dbfd, 0, 0, &hi);
	EXPECT_EQ(0, run1(self, desc_copy(hb, 0, hi, 0, LEN, 1)));
	EXPECT_EQ(0, memcmp(a, b, LEN));
	test_cmd_destroy(hi);
	test_cmd_get_info(&info);
	EXPECT_LE(self->base.out_pinned_pages + 2 * LEN / PAGE_SZ, info.out_pinned_pages);
	close(dbfd);
	test_cmd_destroy(hb);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects + 1,
					 self->base.out_pinned_pages, &info));
	nccom_free(a, LEN);
	nccom_free(b, LEN);
}

/* ---- invalidation ---------------------------------------------------- */

enum inval_kind { INV_MUNMAP, INV_REMAP, INV_DONTNEED, INV_MREMAP };

FIXTURE(inval) {
	int fd;
	struct nccom_info base;
	struct nccom_ring r;
};

FIXTURE_VARIANT(inval) {
	enum inval_kind kind;
};

FIXTURE_VARIANT_ADD(inval, munmap) { .kind = INV_MUNMAP };
FIXTURE_VARIANT_ADD(inval, mmap_fixed) { .kind = INV_REMAP };
FIXTURE_VARIANT_ADD(inval, madv_dontneed) { .kind = INV_DONTNEED };
FIXTURE_VARIANT_ADD(inval, mremap) { .kind = INV_MREMAP };

FIXTURE_SETUP(inval)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	ASSERT_EQ(0, nccom_ring_create(self->fd, 0, 8, &self->r));
}

FIXTURE_TEARDOWN(inval)
{
	struct nccom_info info;

	munmap(self->r.map, self->r.map_size);
	close(self->fd);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info));
}

TEST_F_TIMEOUT(inval, descriptor_fails_after_change, 120)
{
	uint8_t *a = nccom_alloc(LEN), *b = nccom_alloc(LEN), *m;
	struct nccom_queue_get_state st;
	struct nccom_desc d;
	struct nccom_cqe c;
	uint32_t ha, hb;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 7, LEN);
	memset(b, 0, LEN);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, a, LEN, &ha);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, b, LEN, &hb);
	d = desc_copy(hb, 0, ha, 0, LEN, 1);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	ASSERT_EQ(0, c.status);
	switch (variant->kind) {
	case INV_MUNMAP:
		ASSERT_EQ(0, munmap(a + PAGE_SZ, PAGE_SZ));
		break;
	case INV_REMAP:
		m = mmap(a, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		ASSERT_EQ(a, m);
		break;
	case INV_DONTNEED:
		ASSERT_EQ(0, madvise(a, LEN, MADV_DONTNEED));
		break;
	case INV_MREMAP:
		m = mremap(a, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, b + 0);
		(void)m;
		/* b's range is now a's pages; b's registration is stale too. */
		a = NULL;
		break;
	}
	/* Both directions fail with -EFAULT; the queue enters error state. */
	d = desc_copy(hb, 0, ha, 0, 64, 2);
	if (variant->kind == INV_MREMAP)
		d = desc_copy(ha, 0, hb, 0, 64, 2);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	EXPECT_EQ(-EFAULT, c.status);
	test_cmd_queue_get_state(self->r.handle, &st);
	EXPECT_EQ(NCCOM_QUEUE_ERROR, st.out_state);
	EXPECT_EQ(-EFAULT, st.out_error);
	test_cmd_queue_reset(self->r.handle, 0);
	/* The handles still need destroying; their pins go away then. */
	test_cmd_destroy(ha);
	test_cmd_destroy(hb);
	/* Healthy afterwards: a fresh registration works. */
	{
		uint8_t *x = nccom_alloc(LEN), *y = nccom_alloc(LEN);
		uint32_t hx, hy;

		ASSERT_NE(NULL, x);
		ASSERT_NE(NULL, y);
		fill_pattern(x, LEN, 9);
		test_cmd_mem_register(NCCOM_MEM_READ, x, LEN, &hx);
		test_cmd_mem_register(NCCOM_MEM_WRITE, y, LEN, &hy);
		d = desc_copy(hy, 0, hx, 0, LEN, 3);
		ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
		EXPECT_EQ(0, c.status);
		EXPECT_EQ(0, memcmp(x, y, LEN));
		nccom_free(x, LEN);
		nccom_free(y, LEN);
	}
	if (a)
		munmap(a, LEN);
	munmap(b, LEN);
}

/* An exported grant keeps the old pages: importers never see freed memory. */
TEST_F(inval, export_after_munmap_is_safe)
{
	uint8_t *a = nccom_alloc(LEN), *b = nccom_alloc(LEN);
	struct nccom_desc d;
	struct nccom_cqe c;
	uint32_t ha, hb, hi;
	int dbfd;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 9, LEN);
	test_cmd_mem_register(NCCOM_MEM_READ, a, LEN, &ha);
	test_cmd_mem_register(NCCOM_MEM_WRITE, b, LEN, &hb);
	test_cmd_mem_export(ha, &dbfd);
	test_cmd_mem_import(NCCOM_MEM_READ, dbfd, 0, 0, &hi);
	ASSERT_EQ(0, munmap(a, LEN));
	d = desc_copy(hb, 0, hi, 0, LEN, 1);
	ASSERT_EQ(1, nccom_ring_run(&self->r, &d, 1, &c, 60000));
	/* Either the grant follows the invalidation or it reads the old pages. */
	EXPECT_TRUE(c.status == -EFAULT || (c.status == 0 && b[0] == 9 && b[LEN - 1] == 9))
		TH_LOG("status %d", c.status);
	close(dbfd);
	munmap(b, LEN);
}

/* ---- real third-party exporters ------------------------------------- */

static int copy_through(FIXTURE_DATA(mem) *self, int dbfd, size_t len,
			uint8_t *pattern, uint8_t *back)
{
	uint8_t *a = nccom_alloc(len), *b = nccom_alloc(len);
	uint32_t ha, hb, hi;
	uint64_t olen = 0;
	int rc = -EIO;

	if (!a || !b)
		return -ENOMEM;
	memcpy(a, pattern, len);
	memset(b, 0, len);
	if (_test_cmd_mem_register(self->fd, NCCOM_MEM_READ, a, len, &ha) ||
	    _test_cmd_mem_register(self->fd, NCCOM_MEM_WRITE, b, len, &hb))
		return -errno;
	if (_test_cmd_mem_import(self->fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, dbfd, 0, 0,
				 &hi, &olen))
		return -errno;
	if (olen != len)
		return -ERANGE;
	/* registered -> dma-buf -> registered */
	rc = run1(self, desc_copy(hi, 0, ha, 0, len, 1));
	if (!rc)
		rc = run1(self, desc_copy(hb, 0, hi, 0, len, 2));
	if (!rc)
		memcpy(back, b, len);
	_test_cmd_destroy(self->fd, hi);
	_test_cmd_destroy(self->fd, ha);
	_test_cmd_destroy(self->fd, hb);
	nccom_free(a, len);
	nccom_free(b, len);
	return rc;
}

TEST_F(mem, import_udmabuf)
{
	const size_t len = 16 * PAGE_SZ;
	struct udmabuf_create uc = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = len };
	uint8_t *pat = nccom_alloc(len), *back = nccom_alloc(len), *view;
	int dev, memfd, dbfd;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		SKIP(return, "/dev/udmabuf not available (CONFIG_UDMABUF not set on this kernel)");
	ASSERT_NE(NULL, pat);
	ASSERT_NE(NULL, back);
	memfd = memfd_create("nccom-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, len));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	uc.memfd = memfd;
	dbfd = ioctl(dev, UDMABUF_CREATE, &uc);
	ASSERT_LE(0, dbfd) TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	fill_pattern(pat, len, 33);
	ASSERT_EQ(0, copy_through(self, dbfd, len, pat, back));
	EXPECT_EQ(0, memcmp(pat, back, len));
	/* The bytes really landed in the memfd's pages. */
	view = mmap(NULL, len, PROT_READ, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, view);
	EXPECT_EQ(0, memcmp(view, pat, len));
	munmap(view, len);
	close(dbfd);
	close(memfd);
	close(dev);
	nccom_free(pat, len);
	nccom_free(back, len);
}

TEST_F(mem, import_dma_heap_system)
{
	const size_t len = 32 * PAGE_SZ;
	struct dma_heap_allocation_data ad = {
		.len = len, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	uint8_t *pat = nccom_alloc(len), *back = nccom_alloc(len), *view;
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	int heap;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0)
		SKIP(return, "/dev/dma_heap/system not available (CONFIG_DMABUF_HEAPS_SYSTEM not set)");
	ASSERT_NE(NULL, pat);
	ASSERT_NE(NULL, back);
	ASSERT_EQ(0, ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &ad)) TH_LOG("heap alloc: %s",
								    strerror(errno));
	fill_pattern(pat, len, 44);
	ASSERT_EQ(0, copy_through(self, ad.fd, len, pat, back));
	EXPECT_EQ(0, memcmp(pat, back, len));
	view = mmap(NULL, len, PROT_READ, MAP_SHARED, ad.fd, 0);
	ASSERT_NE(MAP_FAILED, view);
	ioctl(ad.fd, DMA_BUF_IOCTL_SYNC, &sync);
	EXPECT_EQ(0, memcmp(view, pat, len));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	ioctl(ad.fd, DMA_BUF_IOCTL_SYNC, &sync);
	munmap(view, len);
	close(ad.fd);
	close(heap);
	nccom_free(pat, len);
	nccom_free(back, len);
}

/* ---- RLIMIT_MEMLOCK for an unprivileged user ---------------------------- */

TEST_F(mem, memlock_limit_unprivileged)
{
	struct passwd *pw = getpwnam("nobody");
	int status;
	pid_t pid;

	if (!pw)
		SKIP(return, "no 'nobody' user to drop privileges to");
	if (geteuid() != 0)
		SKIP(return, "needs root to switch to 'nobody'");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { .rlim_cur = 64 * 1024, .rlim_max = 64 * 1024 };
		uint8_t *a = nccom_alloc(1 << 20);
		uint32_t h;
		int fd;

		if (!a || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(2);
		memset(a, 1, 1 << 20);
		if (setgid(pw->pw_gid) || setuid(pw->pw_uid))
			_exit(3);
		fd = nccom_open();
		if (fd < 0)
			_exit(4);	/* /dev/nccom must be usable by anyone */
		/* 1 MiB > 64 KiB: refused */
		if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, a, 1 << 20, &h) != -1 ||
		    (errno != ENOMEM && errno != EPERM))
			_exit(5);
		/* 32 KiB fits, twice does not fit a third time */
		if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, a, 32 * 1024, &h))
			_exit(6);
		if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, a, 32 * 1024, &h))
			_exit(7);
		if (_test_cmd_mem_register(fd, NCCOM_MEM_READ, a, 32 * 1024, &h) != -1 ||
		    (errno != ENOMEM && errno != EPERM))
			_exit(8);
		/* Destroying gives the budget back. */
		if (_test_cmd_destroy(fd, h) ||
		    _test_cmd_mem_register(fd, NCCOM_MEM_READ, a, 32 * 1024, &h))
			_exit(9);
		_exit(0);
	}
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status)) TH_LOG("unprivileged child failed at step %d",
					     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

TEST_HARNESS_MAIN
