// SPDX-License-Identifier: GPL-2.0
/*
 * Description: NCCOM_IOC_COMM_REGISTER: the feature bit, the size protocol
 * (min - 1, exact, zero and non-zero tail), flags, rank/nranks, the state
 * block's size, alignment and page rules, bad pointers (NULL, unmapped,
 * PROT_NONE, kernel, wrapping), accounting (objects and pinned pages per fd
 * and globally), destroy and double destroy, cleanup on close and on
 * SIGKILL, and the memory kinds the block may live in (shared anonymous,
 * private anonymous written first, a file mapping).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nccom_utils.h"

#define STATE_SZ ((uint32_t)sizeof(struct nccom_comm_state))

FIXTURE(comm) {
	int fd;
	struct nccom_info base;
	void *page;		/* MAP_SHARED | MAP_ANONYMOUS, 2 pages */
};

FIXTURE_SETUP(comm)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s (is nccom.ko loaded?)",
				      NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	self->page = mmap(NULL, 2 * PAGE_SZ, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	memset(self->page, 0, 2 * PAGE_SZ);
}

FIXTURE_TEARDOWN(comm)
{
	struct nccom_info info;

	close(self->fd);
	munmap(self->page, 2 * PAGE_SZ);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_F(comm, feature_and_layout)
{
	EXPECT_NE(0, self->base.out_features & NCCOM_FEAT_COMM_REGISTER);
	EXPECT_EQ(384, sizeof(struct nccom_comm_state));
	EXPECT_EQ(40, sizeof(struct nccom_comm_register));
	/* The two counters on cache lines of their own. */
	EXPECT_EQ(256, offsetof(struct nccom_comm_state, ops_issued));
	EXPECT_EQ(320, offsetof(struct nccom_comm_state, ops_completed));
}

TEST_F(comm, length)
{
	TEST_LENGTH(nccom_comm_register, NCCOM_IOC_COMM_REGISTER, out_handle);
}

/* A valid request at the exact size and with a zero tail; a non-zero tail is E2BIG. */
TEST_F(comm, length_valid_request)
{
	struct {
		struct nccom_comm_register cmd;
		uint64_t extra;
	} c;
	uint32_t h1, h2;

	memset(&c, 0, sizeof(c));
	c.cmd.size = sizeof(c.cmd);
	c.cmd.comm_hash = 0xabcdef;
	c.cmd.nranks = 2;
	c.cmd.rank = 1;
	c.cmd.state_uptr = (uintptr_t)self->page;
	c.cmd.state_size = STATE_SZ;
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, &c));
	h1 = c.cmd.out_handle;
	EXPECT_NE(0, h1);
	c.cmd.size = sizeof(c);
	c.cmd.out_handle = 0;
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, &c));
	h2 = c.cmd.out_handle;
	EXPECT_NE(h1, h2);
	EXPECT_EQ(0, c.extra);
	c.extra = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, &c));
	c.cmd.size = offsetofend(struct nccom_comm_register, out_handle) - 1;
	c.extra = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, &c));
	test_cmd_destroy(h1);
	test_cmd_destroy(h2);
}

TEST_F(comm, flags_and_ranks)
{
	struct nccom_comm_register cmd = {
		.size = sizeof(cmd),
		.nranks = 4,
		.state_uptr = (uintptr_t)self->page,
		.state_size = STATE_SZ,
	};
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		cmd.flags = 1u << bit;
		EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, &cmd));
	}
	test_err_comm_register(EINVAL, 1, 0, 0, self->page, STATE_SZ);
	test_err_comm_register(EINVAL, 1, 4, 4, self->page, STATE_SZ);
	test_err_comm_register(EINVAL, 1, 0xffffffff, 4, self->page, STATE_SZ);
	test_err_comm_register(EINVAL, 1, 0xffffffff, 0xffffffff, self->page, STATE_SZ);
}

TEST_F(comm, state_block_rules)
{
	char *p = self->page;

	/* Smaller than the first version. */
	test_err_comm_register(EINVAL, 1, 0, 1, p, 0);
	test_err_comm_register(EINVAL, 1, 0, 1, p, STATE_SZ - 1);
	/* Not 64-byte aligned. */
	test_err_comm_register(EINVAL, 1, 0, 1, p + 8, STATE_SZ);
	test_err_comm_register(EINVAL, 1, 0, 1, p + 1, STATE_SZ);
	/* Crossing into the next page, or larger than a page. */
	test_err_comm_register(EINVAL, 1, 0, 1, p + PAGE_SZ - 256, STATE_SZ);
	test_err_comm_register(EINVAL, 1, 0, 1, p, PAGE_SZ + 64);
	/* The last fitting offset and a larger size the kernel does not know are fine. */
	EXPECT_EQ(0, _test_cmd_comm_register(self->fd, 1, 0, 1, p + PAGE_SZ - 384, STATE_SZ,
					     NULL));
	EXPECT_EQ(0, _test_cmd_comm_register(self->fd, 1, 0, 1, p, PAGE_SZ, NULL));
}

TEST_F(comm, bad_pointers)
{
	void *none;

	test_err_comm_register(EFAULT, 1, 0, 1, NULL, STATE_SZ);
	/* An unmapped page. */
	none = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	munmap(none, PAGE_SZ);
	test_err_comm_register(EFAULT, 1, 0, 1, none, STATE_SZ);
	/* A page that cannot be read. */
	none = mmap(NULL, PAGE_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	test_err_comm_register(EFAULT, 1, 0, 1, none, STATE_SZ);
	munmap(none, PAGE_SZ);
	/* Kernel addresses and wrap-around. */
	test_err_comm_register(EOVERFLOW, 1, 0, 1, (void *)0xffff888000000000ull, STATE_SZ);
	test_err_comm_register(EOVERFLOW, 1, 0, 1, (void *)0xffffffffffffffc0ull, STATE_SZ);
	/* The ioctl argument itself. */
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, NCCOM_IOC_COMM_REGISTER, (void *)8));
	/* Nothing was left behind by the failures. */
	{
		struct nccom_info info;

		test_cmd_get_info(&info);
		EXPECT_EQ(0, info.out_fd_objects);
		EXPECT_EQ(0, info.out_fd_pinned_pages);
	}
}

TEST_F(comm, accounting_and_destroy)
{
	struct nccom_info info;
	uint32_t h[3];
	int i;

	for (i = 0; i < 3; i++)
		test_cmd_comm_register(0x77, i, 3, (char *)self->page + 512 * i, &h[i]);
	test_cmd_get_info(&info);
	EXPECT_EQ(3, info.out_fd_objects);
	EXPECT_EQ(3, info.out_fd_pinned_pages);
	EXPECT_LE(self->base.out_objects + 3, info.out_objects);
	EXPECT_LE(self->base.out_pinned_pages + 3, info.out_pinned_pages);
	test_cmd_destroy(h[1]);
	test_err_destroy(ENOENT, h[1]);
	test_cmd_get_info(&info);
	EXPECT_EQ(2, info.out_fd_objects);
	EXPECT_EQ(2, info.out_fd_pinned_pages);
	test_cmd_destroy(h[0]);
	test_cmd_destroy(h[2]);
	test_err_destroy(ENOENT, h[0]);
	test_err_destroy(ENOENT, h[2]);
	test_cmd_get_info(&info);
	EXPECT_EQ(0, info.out_fd_objects);
	EXPECT_EQ(0, info.out_fd_pinned_pages);
}

/* A registration handle is not a memory, queue or semaphore handle. */
TEST_F(comm, wrong_type_handle)
{
	struct nccom_sem_read sr = { .size = sizeof(sr) };
	uint32_t h;

	test_cmd_comm_register(0x78, 0, 1, self->page, &h);
	sr.handle = h;
	EXPECT_ERRNO(ENOENT, ioctl(self->fd, NCCOM_IOC_SEM_READ, &sr));
	test_err_queue_doorbell(ENOENT, h);
	test_err_mem_export(ENOENT, h);
	/* Handles are per fd. */
	{
		int fd2 = nccom_open();

		ASSERT_LE(0, fd2);
		EXPECT_ERRNO(ENOENT, _test_cmd_destroy(fd2, h));
		close(fd2);
	}
	test_cmd_destroy(h);
}

TEST_F(comm, close_cleans_up)
{
	struct nccom_info info;
	int fd2, i;

	fd2 = nccom_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, _test_cmd_comm_register(fd2, 0x79, i, 8, (char *)self->page + 384 * i,
						     STATE_SZ, NULL));
	test_cmd_get_info(&info);
	EXPECT_LE(self->base.out_pinned_pages + 8, info.out_pinned_pages);
	close(fd2);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects, self->base.out_pinned_pages,
					 &info))
		TH_LOG("%llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_F(comm, sigkill_cleans_up)
{
	struct nccom_info info;
	int pfd[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = nccom_open();
		struct nccom_comm_state *st = self->page;

		if (fd < 0 || _test_cmd_comm_register(fd, 0x7a, 0, 2, st, STATE_SZ, NULL))
			_exit(1);
		/* Keep updating the block like libccom until killed. */
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			__atomic_store_n(&st->ops_issued, st->ops_issued + 1, __ATOMIC_RELAXED);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	test_cmd_get_info(&info);
	EXPECT_LE(self->base.out_objects + 1, info.out_objects);
	kill(pid, SIGKILL);
	ASSERT_EQ(0, wait_child(pid, &status, 10000));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects, self->base.out_pinned_pages,
					 &info))
		TH_LOG("%llu objects, %llu pinned pages after SIGKILL",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

/* Where the block may live: private anonymous memory written first, a file. */
TEST_F(comm, memory_kinds)
{
	char path[] = "/tmp/nccom_comm_XXXXXX";
	void *priv, *fmap;
	uint32_t h1, h2;
	int tfd;

	priv = nccom_alloc(PAGE_SZ);
	ASSERT_NE(NULL, priv);
	memset(priv, 0, PAGE_SZ);
	test_cmd_comm_register(0x7b, 0, 2, priv, &h1);
	tfd = mkstemp(path);
	ASSERT_LE(0, tfd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(tfd, PAGE_SZ));
	fmap = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	ASSERT_NE(MAP_FAILED, fmap);
	memset(fmap, 0, PAGE_SZ);
	test_cmd_comm_register(0x7b, 1, 2, fmap, &h2);
	/* A read-only mapping is enough: the driver only reads. */
	{
		void *ro = mmap(NULL, PAGE_SZ, PROT_READ, MAP_SHARED, tfd, 0);
		uint32_t h3;

		ASSERT_NE(MAP_FAILED, ro);
		test_cmd_comm_register(0x7b, 1, 2, ro, &h3);
		test_cmd_destroy(h3);
		munmap(ro, PAGE_SZ);
	}
	/* Unmapping the block while registered is harmless; destroy unpins. */
	munmap(priv, PAGE_SZ);
	test_cmd_destroy(h1);
	test_cmd_destroy(h2);
	munmap(fmap, PAGE_SZ);
	close(tfd);
}

TEST_HARNESS_MAIN
