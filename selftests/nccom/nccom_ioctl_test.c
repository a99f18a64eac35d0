// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the ioctl contract of /dev/nccom: GET_INFO, the size
 * protocol of every command (TEST_LENGTH), unknown commands, unknown flags,
 * non-zero reserved members, invalid / closed / wrong-type / foreign
 * handles, and zero, unaligned, wrapping and out-of-range arguments of
 * registration, import, queue creation and mmap.
 */
#include <stdlib.h>

#include "nccom_utils.h"

FIXTURE(nccom) {
	int fd;
	struct nccom_info base;
	void *buf;
	size_t buflen;
	uint32_t mem;
	uint32_t sem;
	struct nccom_queue_create q;
};

FIXTURE_SETUP(nccom)
{
	self->fd = nccom_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s (is nccom.ko loaded?)",
				      NCCOM_DEV, strerror(errno));
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, &self->base));
	self->buflen = 4 * PAGE_SZ;
	self->buf = nccom_alloc(self->buflen);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0x5a, self->buflen);
	test_cmd_mem_register(NCCOM_MEM_READ | NCCOM_MEM_WRITE, self->buf,
			      self->buflen, &self->mem);
	test_cmd_sem_create(0, &self->sem);
	test_cmd_queue_create(0, 8, &self->q);
}

FIXTURE_TEARDOWN(nccom)
{
	struct nccom_info info;

	close(self->fd);
	nccom_free(self->buf, self->buflen);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects,
					 self->base.out_pinned_pages, &info))
		TH_LOG("leak: %llu objects, %llu pinned pages after close",
		       (unsigned long long)info.out_objects,
		       (unsigned long long)info.out_pinned_pages);
}

TEST_F(nccom, get_info)
{
	struct nccom_info info;

	test_cmd_get_info(&info);
	EXPECT_EQ(NCCOM_ABI_VERSION, info.out_abi_version);
	EXPECT_EQ(NCCOM_COMPAT_ID, info.out_compat_id);
	EXPECT_LE(1, info.dev_count);
	EXPECT_EQ(sizeof(struct nccom_desc), info.out_desc_size);
	EXPECT_EQ(64, info.out_desc_size);
	EXPECT_EQ(sizeof(struct nccom_cqe), info.out_cqe_size);
	EXPECT_LE(1024, info.out_max_queue_depth);
	EXPECT_EQ(0, info.out_max_queue_depth & (info.out_max_queue_depth - 1));
	EXPECT_LE(self->buflen, info.out_max_reg_size);
	EXPECT_NE(0, info.out_features & NCCOM_FEAT_MEM_REGISTER);
	/* Three objects made by the fixture, four pages pinned. */
	EXPECT_EQ(3, info.out_fd_objects);
	EXPECT_EQ(4, info.out_fd_pinned_pages);
	EXPECT_LE(4, info.out_pinned_pages);
	EXPECT_LE(3, info.out_objects);
	test_cmd_destroy(self->mem);
	test_cmd_get_info(&info);
	EXPECT_EQ(2, info.out_fd_objects);
	EXPECT_EQ(0, info.out_fd_pinned_pages);
}

TEST_F(nccom, get_info_devices)
{
	struct nccom_info info;
	struct nccom_dev_info *devs;
	uint32_t n, i;
	struct {
		struct nccom_dev_info di;
		uint64_t extra;
	} *big;

	test_cmd_get_info(&info);
	n = info.dev_count;
	devs = calloc(n, sizeof(*devs));
	big = calloc(n, sizeof(*big));
	ASSERT_NE(NULL, devs);
	ASSERT_NE(NULL, big);

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.dev_count = n;
	info.devs_uptr = (uintptr_t)devs;
	info.dev_entry_size = sizeof(*devs);
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));
	EXPECT_EQ(n, info.dev_count);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(i, devs[i].index);
		EXPECT_LE(1, devs[i].nengines);
	}
	/* The fixture's queue lives on device 0. */
	EXPECT_LE(1, devs[0].nqueues);

	/* A larger entry than the kernel knows: the tail is zero-filled. */
	memset(big, 0xff, n * sizeof(*big));
	info.dev_count = n;
	info.devs_uptr = (uintptr_t)big;
	info.dev_entry_size = sizeof(*big);
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(i, big[i].di.index);
		EXPECT_EQ(0, big[i].extra);
	}

	/* Entries smaller than 8 bytes are refused. */
	info.dev_entry_size = 4;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));

	/* Too small an array: -EMSGSIZE and the needed count. */
	if (n > 1) {
		info.dev_entry_size = sizeof(*devs);
		info.dev_count = n - 1;
		EXPECT_ERRNO(EMSGSIZE, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));
		EXPECT_EQ(n, info.dev_count);
	}

	/* An unwritable array: -EFAULT. */
	info.dev_entry_size = sizeof(*devs);
	info.dev_count = n;
	info.devs_uptr = 8;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));
	free(devs);
	free(big);
}

TEST_F(nccom, lengths)
{
	TEST_LENGTH(nccom_info, NCCOM_IOC_GET_INFO, out_fd_pinned_pages);
	TEST_LENGTH(nccom_destroy, NCCOM_IOC_DESTROY, __reserved);
	TEST_LENGTH(nccom_mem_register, NCCOM_IOC_MEM_REGISTER, __reserved);
	TEST_LENGTH(nccom_mem_export_dmabuf, NCCOM_IOC_MEM_EXPORT_DMABUF, out_fd);
	TEST_LENGTH(nccom_mem_import_dmabuf, NCCOM_IOC_MEM_IMPORT_DMABUF, out_length);
	TEST_LENGTH(nccom_queue_create, NCCOM_IOC_QUEUE_CREATE, out_mmap_size);
	TEST_LENGTH(nccom_queue_doorbell, NCCOM_IOC_QUEUE_DOORBELL, __reserved);
	TEST_LENGTH(nccom_queue_get_state, NCCOM_IOC_QUEUE_GET_STATE, out_completed);
	TEST_LENGTH(nccom_queue_reset, NCCOM_IOC_QUEUE_RESET, __reserved);
	TEST_LENGTH(nccom_queue_wait, NCCOM_IOC_QUEUE_WAIT, __reserved);
	TEST_LENGTH(nccom_sem_create, NCCOM_IOC_SEM_CREATE, __reserved);
	TEST_LENGTH(nccom_sem_signal, NCCOM_IOC_SEM_SIGNAL, value);
	TEST_LENGTH(nccom_sem_read, NCCOM_IOC_SEM_READ, out_value);
	TEST_LENGTH(nccom_sem_wait, NCCOM_IOC_SEM_WAIT, out_value);
	TEST_LENGTH(nccom_sem_export, NCCOM_IOC_SEM_EXPORT, out_fd);
	TEST_LENGTH(nccom_sem_import, NCCOM_IOC_SEM_IMPORT, out_handle);
	TEST_LENGTH(nccom_comm_register, NCCOM_IOC_COMM_REGISTER, out_handle);
}

/* Exact size with a valid request succeeds; size + 1 with a zero tail too. */
TEST_F(nccom, length_exact_and_zero_tail_succeed)
{
	struct {
		struct nccom_sem_read cmd;
		uint8_t extra;
	} __attribute__((packed)) c;

	test_cmd_sem_signal(self->sem, 7);
	memset(&c, 0, sizeof(c));
	c.cmd.size = sizeof(c.cmd);
	c.cmd.handle = self->sem;
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_SEM_READ, &c));
	EXPECT_EQ(7, c.cmd.out_value);
	memset(&c, 0, sizeof(c));
	c.cmd.size = sizeof(c.cmd) + 1;
	c.cmd.handle = self->sem;
	ASSERT_EQ(0, ioctl(self->fd, NCCOM_IOC_SEM_READ, &c));
	EXPECT_EQ(7, c.cmd.out_value);
	/* The kernel never writes past the size it knows. */
	EXPECT_EQ(0, c.extra);
}

TEST_F(nccom, unknown_command)
{
	uint32_t arg[16] = { sizeof(arg) };

	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(NCCOM_TYPE, NCCOM_CMD_BASE - 1), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(NCCOM_TYPE, NCCOM_CMD_COMM_REGISTER + 1), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(NCCOM_TYPE, 0xff), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(NCCOM_TYPE, 0), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(NCCOM_TYPE + 1, NCCOM_CMD_GET_INFO), arg));
	/* Right number, wrong direction/size bits. */
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOWR(NCCOM_TYPE, NCCOM_CMD_GET_INFO,
						   struct nccom_info), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, TCGETS, arg));
}

TEST_F(nccom, bad_user_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, NCCOM_IOC_GET_INFO, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, NCCOM_IOC_SEM_READ, (void *)8));
}

/* Every "Must be 0" flags member, with otherwise valid arguments. */
TEST_F(nccom, unknown_flags)
{
	const uint32_t bad = 1u << 31;
	struct nccom_info info = { .size = sizeof(info), .flags = bad };
	struct nccom_destroy d = { .size = sizeof(d), .flags = bad, .handle = self->sem };
	struct nccom_mem_export_dmabuf ex = { .size = sizeof(ex), .flags = bad,
					      .handle = self->mem };
	struct nccom_queue_create qc = { .size = sizeof(qc), .flags = bad, .depth = 8 };
	struct nccom_queue_doorbell db = { .size = sizeof(db), .flags = bad,
					   .handle = self->q.out_handle };
	struct nccom_queue_get_state gs = { .size = sizeof(gs), .flags = bad,
					    .handle = self->q.out_handle };
	struct nccom_queue_reset rs = { .size = sizeof(rs), .flags = 1u << 30,
					.handle = self->q.out_handle };
	struct nccom_queue_wait qw = { .size = sizeof(qw), .flags = bad,
				       .handle = self->q.out_handle };
	struct nccom_sem_create sc = { .size = sizeof(sc), .flags = bad };
	struct nccom_sem_signal ss = { .size = sizeof(ss), .flags = bad,
				       .handle = self->sem, .value = 1 };
	struct nccom_sem_read sr = { .size = sizeof(sr), .flags = bad, .handle = self->sem };
	struct nccom_sem_wait sw = { .size = sizeof(sw), .flags = bad, .handle = self->sem };
	struct nccom_sem_export se = { .size = sizeof(se), .flags = bad, .handle = self->sem };
	struct nccom_sem_import si = { .size = sizeof(si), .flags = bad };
	uint64_t v;
	int semfd;

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_GET_INFO, &info));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_DESTROY, &d));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &ex));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_CREATE, &qc));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_DOORBELL, &db));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_GET_STATE, &gs));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_RESET, &rs));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_WAIT, &qw));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_CREATE, &sc));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_SIGNAL, &ss));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_READ, &sr));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_WAIT, &sw));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_EXPORT, &se));
	test_cmd_sem_export(self->sem, &semfd);
	si.fd = semfd;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_IMPORT, &si));
	/* Registration and import flags: none, or unknown bits. */
	test_err_mem_register(EINVAL, 0, self->buf, PAGE_SZ);
	test_err_mem_register(EINVAL, NCCOM_MEM_READ | (1u << 2), self->buf, PAGE_SZ);
	test_err_mem_register(EINVAL, NCCOM_MEM_READ | bad, self->buf, PAGE_SZ);
	/* Nothing above had a side effect. */
	test_cmd_sem_read(self->sem, &v, NULL);
	EXPECT_EQ(0, v);
	close(semfd);
}

TEST_F(nccom, reserved_nonzero)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = self->sem, .__reserved = 1 };
	struct nccom_mem_register mr = { .size = sizeof(mr), .flags = NCCOM_MEM_READ,
					 .addr = (uintptr_t)self->buf,
					 .length = PAGE_SZ, .__reserved = 1 };
	struct nccom_queue_create qc = { .size = sizeof(qc), .depth = 8, .__reserved = 1 };
	struct nccom_queue_doorbell db = { .size = sizeof(db), .__reserved = 1,
					   .handle = self->q.out_handle };
	struct nccom_queue_reset rs = { .size = sizeof(rs), .__reserved = 1,
					.handle = self->q.out_handle };
	struct nccom_queue_wait qw = { .size = sizeof(qw), .__reserved = 1,
				       .handle = self->q.out_handle };
	struct nccom_sem_create sc = { .size = sizeof(sc), .__reserved = 1 };
	struct nccom_sem_signal ss = { .size = sizeof(ss), .handle = self->sem,
				       .value = 1, .__reserved = 1 };
	struct nccom_sem_wait sw = { .size = sizeof(sw), .handle = self->sem,
				     .__reserved = 1 };
	struct nccom_mem_import_dmabuf im = { .size = sizeof(im), .flags = NCCOM_MEM_READ };
	struct nccom_info info;
	int dbfd;

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_DESTROY, &d));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_MEM_REGISTER, &mr));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_CREATE, &qc));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_DOORBELL, &db));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_RESET, &rs));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_QUEUE_WAIT, &qw));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_CREATE, &sc));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_SIGNAL, &ss));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_SEM_WAIT, &sw));
	test_cmd_mem_export(self->mem, &dbfd);
	im.fd = dbfd;
	im.__reserved = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_MEM_IMPORT_DMABUF, &im));
	im.__reserved = 0;
	im.__reserved2 = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, NCCOM_IOC_MEM_IMPORT_DMABUF, &im));
	close(dbfd);
	/* No object was created or destroyed by the refused calls. */
	test_cmd_get_info(&info);
	EXPECT_EQ(3, info.out_fd_objects);
}

TEST_F(nccom, invalid_handles)
{
	const uint32_t bad[] = { 0, 0xffffffff, 0x7fffffff, 1000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		test_err_destroy(ENOENT, bad[i]);
		test_err_mem_export(ENOENT, bad[i]);
		test_err_queue_doorbell(ENOENT, bad[i]);
		test_err_queue_get_state(ENOENT, bad[i]);
		test_err_queue_reset(ENOENT, bad[i], 0);
		test_err_queue_wait(ENOENT, bad[i], 0, 0);
		test_err_sem_signal(ENOENT, bad[i], 1);
		test_err_sem_read(ENOENT, bad[i]);
		test_err_sem_wait(ENOENT, bad[i], 0, 0);
		test_err_sem_export(ENOENT, bad[i]);
	}
}

/* A handle of another type is not found as the expected type. */
TEST_F(nccom, wrong_type_handles)
{
	uint32_t q = self->q.out_handle;

	test_err_mem_export(ENOENT, self->sem);
	test_err_mem_export(ENOENT, q);
	test_err_queue_doorbell(ENOENT, self->sem);
	test_err_queue_doorbell(ENOENT, self->mem);
	test_err_queue_get_state(ENOENT, self->mem);
	test_err_queue_reset(ENOENT, self->sem, 0);
	test_err_queue_wait(ENOENT, self->mem, 0, 0);
	test_err_sem_signal(ENOENT, self->mem, 1);
	test_err_sem_signal(ENOENT, q, 1);
	test_err_sem_read(ENOENT, q);
	test_err_sem_wait(ENOENT, self->mem, 0, 0);
	test_err_sem_export(ENOENT, q);
}

TEST_F(nccom, closed_handles)
{
	uint32_t q = self->q.out_handle;

	test_cmd_destroy(self->mem);
	test_cmd_destroy(self->sem);
	test_cmd_destroy(q);
	test_err_destroy(ENOENT, self->mem);
	test_err_destroy(ENOENT, self->sem);
	test_err_destroy(ENOENT, q);
	test_err_mem_export(ENOENT, self->mem);
	test_err_queue_doorbell(ENOENT, q);
	test_err_queue_get_state(ENOENT, q);
	test_err_sem_signal(ENOENT, self->sem, 1);
	test_err_sem_read(ENOENT, self->sem);
	/* Handles are not reused right away: a new object gets a new id. */
	test_cmd_sem_create(0, &self->sem);
	test_err_queue_doorbell(ENOENT, q);
}

/* Handles of one fd mean nothing in another fd or another process. */
TEST_F(nccom, foreign_handles)
{
	int fd2 = nccom_open();
	uint64_t v = 1;
	int status;
	pid_t pid;

	ASSERT_LE(0, fd2);
	EXPECT_ERRNO(ENOENT, _test_cmd_destroy(fd2, self->mem));
	EXPECT_ERRNO(ENOENT, _test_cmd_sem_read(fd2, self->sem, NULL, NULL));
	EXPECT_ERRNO(ENOENT, _test_cmd_queue_doorbell(fd2, self->q.out_handle));
	EXPECT_ERRNO(ENOENT, _test_cmd_mem_export(fd2, self->mem, NULL));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int cfd = nccom_open();
		int bad = 0;

		if (cfd < 0)
			_exit(2);
		bad |= _test_cmd_sem_signal(cfd, self->sem, 5) != -1 || errno != ENOENT;
		bad |= _test_cmd_destroy(cfd, self->q.out_handle) != -1 || errno != ENOENT;
		bad |= _test_cmd_mem_export(cfd, self->mem, NULL) != -1 || errno != ENOENT;
		_exit(bad ? 1 : 0);
	}
	ASSERT_EQ(0, wait_child(pid, &status, 30000));
	EXPECT_TRUE(child_ok(status));
	/* The owner's objects are untouched. */
	test_cmd_sem_read(self->sem, &v, NULL);
	EXPECT_EQ(0, v);
	close(fd2);
}

TEST_F(nccom, mem_register_ranges)
{
	struct nccom_info info;
	char *hole;
	uint32_t h;
	int memfd;

	test_cmd_get_info(&info);
	/* Zero and unaligned lengths and addresses. */
	test_err_mem_register(EINVAL, NCCOM_MEM_READ, self->buf, 0);
	test_err_mem_register(EINVAL, NCCOM_MEM_READ, self->buf, 100);
	test_err_mem_register(EINVAL, NCCOM_MEM_READ, self->buf, PAGE_SZ + 1);
	test_err_mem_register(EINVAL, NCCOM_MEM_READ, (char *)self->buf + 8, PAGE_SZ);
	/* Wrapping and beyond the user address space. */
	test_err_mem_register(EOVERFLOW, NCCOM_MEM_READ,
			      (void *)(uintptr_t)(~0ULL & ~(PAGE_SZ - 1)), 2 * PAGE_SZ);
	test_err_mem_register(EOVERFLOW, NCCOM_MEM_READ,
			      (void *)(uintptr_t)0xffff800000000000ULL, PAGE_SZ);
	/* Larger than the driver's limit. */
	if (info.out_max_reg_size < (1ULL << 46)) {
		test_err_mem_register(EINVAL, NCCOM_MEM_READ, self->buf,
				      (info.out_max_reg_size + 2 * PAGE_SZ) & ~(PAGE_SZ - 1));
	}
	/* Not mapped: the NULL page and a hole punched with munmap. */
	test_err_mem_register(EFAULT, NCCOM_MEM_READ, NULL, PAGE_SZ);
	hole = nccom_alloc(3 * PAGE_SZ);
	ASSERT_NE(NULL, hole);
	ASSERT_EQ(0, munmap(hole + PAGE_SZ, PAGE_SZ));
	test_err_mem_register(EFAULT, NCCOM_MEM_READ, hole, 3 * PAGE_SZ);
	munmap(hole, PAGE_SZ);
	munmap(hole + 2 * PAGE_SZ, PAGE_SZ);
	/* A read-only shared mapping: readable registration only. */
	memfd = memfd_create("nccom-ro", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, PAGE_SZ));
	hole = mmap(NULL, PAGE_SZ, PROT_READ, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, hole);
	(void)*(volatile char *)hole;
	test_err_mem_register(EFAULT, NCCOM_MEM_WRITE, hole, PAGE_SZ);
	ASSERT_EQ(0, _test_cmd_mem_register(self->fd, NCCOM_MEM_READ, hole, PAGE_SZ, &h))
		TH_LOG("read-only registration of a PROT_READ memfd mapping: %s",
		       strerror(errno));
	test_cmd_destroy(h);
	munmap(hole, PAGE_SZ);
	close(memfd);
	/* Nothing leaked by the failures. */
	test_cmd_get_info(&info);
	EXPECT_EQ(4, info.out_fd_pinned_pages);
	EXPECT_EQ(3, info.out_fd_objects);
}

TEST_F(nccom, mem_import_args)
{
	int dbfd, tmp;
	uint64_t len = 0;
	uint32_t h;

	test_cmd_mem_export(self->mem, &dbfd);
	/* Not a file / not a dma-buf. */
	test_err_mem_import(EBADF, NCCOM_MEM_READ, -1, 0, 0);
	test_err_mem_import(EBADF, NCCOM_MEM_READ, 1000, 0, 0);
	tmp = open("/proc/self/stat", O_RDONLY);
	ASSERT_LE(0, tmp);
	test_err_mem_import(EBADF, NCCOM_MEM_READ, tmp, 0, 0);
	close(tmp);
	test_err_mem_import(EBADF, NCCOM_MEM_READ, self->fd, 0, 0);
	/* Flags. */
	test_err_mem_import(EINVAL, 0, dbfd, 0, 0);
	test_err_mem_import(EINVAL, NCCOM_MEM_READ | (1u << 5), dbfd, 0, 0);
	/* Unaligned, out of range, wrapping windows. */
	test_err_mem_import(EINVAL, NCCOM_MEM_READ, dbfd, 100, 0);
	test_err_mem_import(EINVAL, NCCOM_MEM_READ, dbfd, 0, 100);
	test_err_mem_import(EOVERFLOW, NCCOM_MEM_READ, dbfd, self->buflen, 0);
	test_err_mem_import(EOVERFLOW, NCCOM_MEM_READ, dbfd, 0, self->buflen + PAGE_SZ);
	test_err_mem_import(EOVERFLOW, NCCOM_MEM_READ, dbfd, PAGE_SZ, self->buflen);
	test_err_mem_import(EOVERFLOW, NCCOM_MEM_READ, dbfd,
			    ~0ULL & ~(PAGE_SZ - 1), 2 * PAGE_SZ);
	/* A valid window. */
	ASSERT_EQ(0, _test_cmd_mem_import(self->fd, NCCOM_MEM_READ, dbfd, PAGE_SZ, 0,
					  &h, &len));
	EXPECT_EQ(self->buflen - PAGE_SZ, len);
	test_cmd_destroy(h);
	/* An import cannot be exported again: not a registration. */
	test_cmd_mem_import(NCCOM_MEM_READ, dbfd, 0, 0, &h);
	test_err_mem_export(EINVAL, h);
	test_cmd_destroy(h);
	close(dbfd);
}

TEST_F(nccom, mem_import_write_needs_writable_registration)
{
	uint32_t ro, h;
	int dbfd;

	test_cmd_mem_register(NCCOM_MEM_READ, self->buf, PAGE_SZ, &ro);
	test_cmd_mem_export(ro, &dbfd);
	test_err_mem_import(EINVAL, NCCOM_MEM_WRITE, dbfd, 0, 0);
	test_err_mem_import(EINVAL, NCCOM_MEM_READ | NCCOM_MEM_WRITE, dbfd, 0, 0);
	test_cmd_mem_import(NCCOM_MEM_READ, dbfd, 0, 0, &h);
	close(dbfd);
}

TEST_F(nccom, queue_create_args)
{
	struct nccom_info info;

	test_cmd_get_info(&info);
	test_err_queue_create(EINVAL, 0, 0);
	test_err_queue_create(EINVAL, 0, 1);
	test_err_queue_create(EINVAL, 0, 3);
	test_err_queue_create(EINVAL, 0, 1000);
	test_err_queue_create(EINVAL, 0, info.out_max_queue_depth * 2);
	test_err_queue_create(EINVAL, 0, 0x80000000u);
	test_err_queue_create(EINVAL, info.dev_count, 8);
	test_err_queue_create(EINVAL, 0xffffffff, 8);
}

TEST_F(nccom, queue_mmap)
{
	struct nccom_queue_create *q = &self->q;
	struct nccom_ring_hdr *h;
	void *m;

	EXPECT_LE(sizeof(struct nccom_ring_hdr), q->out_sq_offset);
	EXPECT_LE(q->out_sq_offset + 8 * sizeof(struct nccom_desc), q->out_cq_offset);
	EXPECT_LE(q->out_cq_offset + 8 * sizeof(struct nccom_cqe), q->out_mmap_size);
	/* Partial, offset and wrong-offset mappings are refused. */
	m = mmap(NULL, q->out_mmap_size / 2 & ~(PAGE_SZ - 1) ? : PAGE_SZ,
		 PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, q->out_mmap_offset);
	if (q->out_mmap_size > PAGE_SZ) {
		EXPECT_EQ(MAP_FAILED, m);
	} else if (m != MAP_FAILED) {
		munmap(m, PAGE_SZ);
	}
	m = mmap(NULL, q->out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 q->out_mmap_offset + 1024 * PAGE_SZ);
	EXPECT_EQ(MAP_FAILED, m);
	m = mmap(NULL, q->out_mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd,
		 q->out_mmap_offset);
	EXPECT_EQ(MAP_FAILED, m);
	/* The right one works and shows the header. */
	m = mmap(NULL, q->out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 q->out_mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	h = m;
	EXPECT_EQ(NCCOM_RING_MAGIC, h->magic);
	EXPECT_EQ(NCCOM_RING_VERSION, h->version);
	EXPECT_EQ(8, h->depth);
	EXPECT_EQ(7, h->mask);
	EXPECT_EQ(q->out_sq_offset, h->sq_offset);
	EXPECT_EQ(q->out_cq_offset, h->cq_offset);
	EXPECT_EQ(NCCOM_QUEUE_ACTIVE, h->state);
	/* Producer and consumer indices sit on separate cache lines. */
	EXPECT_LE(64, offsetof(struct nccom_ring_hdr, sq_head) -
		      offsetof(struct nccom_ring_hdr, sq_tail));
	EXPECT_LE(64, offsetof(struct nccom_ring_hdr, cq_head) -
		      offsetof(struct nccom_ring_hdr, cq_tail));
	/* The mapping of a destroyed queue stays valid memory (no crash). */
	test_cmd_destroy(q->out_handle);
	(void)*(volatile uint32_t *)m;
	munmap(m, q->out_mmap_size);
}

TEST_F(nccom, sem_args)
{
	uint64_t v;
	int tmp;

	test_cmd_sem_signal(self->sem, 10);
	test_err_sem_signal(EINVAL, self->sem, 9);
	test_cmd_sem_signal(self->sem, 10);
	test_cmd_sem_read(self->sem, &v, NULL);
	EXPECT_EQ(10, v);
	test_err_sem_import(EBADF, -1);
	test_err_sem_import(EBADF, 999);
	tmp = open("/proc/self/stat", O_RDONLY);
	ASSERT_LE(0, tmp);
	test_err_sem_import(EBADF, tmp);
	close(tmp);
	test_err_sem_import(EBADF, self->fd);
	/* A dma-buf is not a semaphore and vice versa. */
	test_cmd_mem_export(self->mem, &tmp);
	test_err_sem_import(EBADF, tmp);
	close(tmp);
	test_cmd_sem_export(self->sem, &tmp);
	test_err_mem_import(EBADF, NCCOM_MEM_READ, tmp, 0, 0);
	close(tmp);
}

/* Closing a fd with live objects of every type releases everything. */
TEST_F(nccom, close_releases_everything)
{
	struct nccom_info info;
	int fd2 = nccom_open();
	struct nccom_ring r;
	uint32_t h, s;
	int dbfd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, _test_cmd_mem_register(fd2, NCCOM_MEM_READ, self->buf,
					    self->buflen, &h));
	ASSERT_EQ(0, _test_cmd_sem_create(fd2, 1, &s));
	ASSERT_EQ(0, nccom_ring_create(fd2, 0, 16, &r));
	ASSERT_EQ(0, _test_cmd_mem_export(fd2, h, &dbfd));
	munmap(r.map, r.map_size);
	close(fd2);
	/* The exported dma-buf keeps its pages until it is closed. */
	test_cmd_get_info(&info);
	EXPECT_LE(self->base.out_pinned_pages + 4 + 4, info.out_pinned_pages);
	close(dbfd);
	EXPECT_EQ(0, nccom_wait_counters(self->base.out_objects + 3,
					 self->base.out_pinned_pages + 4, &info));
}

TEST_HARNESS_MAIN
