/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: shared helpers for the nccom.ko selftests: one
 * _test_cmd_x / test_cmd_x / test_err_x triple per ioctl (the iommufd
 * selftest convention), the TEST_LENGTH size probe, ring helpers (submit,
 * reap, wait), descriptor builders, memory and fd-passing helpers, and the
 * leak check run by every fixture's teardown.
 *
 * _test_cmd_x(fd, ...) returns ioctl()'s result (0, or -1 with errno set).
 * test_cmd_x(...) asserts success on self->fd; test_err_x(errno, ...)
 * expects failure with that errno. Helpers that are not ioctl wrappers
 * return 0 or -errno.
 */
#ifndef NCCOM_UTILS_H
#define NCCOM_UTILS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/nccom.h>

/* The harness ignores a handler argument; non-test programs skip its main. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define NCCOM_DEV "/dev/nccom"
#define PAGE_SZ 4096UL
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

#ifndef offsetofend
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
#endif

/* ioctl() must fail with @expected: kselftest-only macro, uses _metadata. */
#define EXPECT_ERRNO(expected, cmd)                                     \
	({                                                              \
		int __rc = (cmd);                                       \
		EXPECT_EQ(-1, __rc);                                    \
		if (__rc == -1)                                         \
			EXPECT_EQ(expected, errno);                     \
	})

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline uint64_t deadline_ms(uint64_t ms)
{
	return now_ns() + ms * NSEC_PER_MSEC;
}

static inline int nccom_open(void)
{
	return open(NCCOM_DEV, O_RDWR | O_CLOEXEC);
}

/* ---- ioctl wrappers ------------------------------------------------ */

static inline int _test_cmd_get_info(int fd, struct nccom_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, NCCOM_IOC_GET_INFO, info);
}
#define test_cmd_get_info(info) \
	ASSERT_EQ(0, _test_cmd_get_info(self->fd, info)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))

static inline int _test_cmd_destroy(int fd, uint32_t handle)
{
	struct nccom_destroy cmd = { .size = sizeof(cmd), .handle = handle };

	return ioctl(fd, NCCOM_IOC_DESTROY, &cmd);
}
#define test_cmd_destroy(h) ASSERT_EQ(0, _test_cmd_destroy(self->fd, h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_destroy(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_destroy(self->fd, h))

static inline int _test_cmd_mem_register(int fd, uint32_t flags, void *addr,
					 uint64_t length, uint32_t *handle)
{
	struct nccom_mem_register cmd = {
		.size = sizeof(cmd),
		.flags = flags,
		.addr = (uintptr_t)addr,
		.length = length,
	};
	int rc = ioctl(fd, NCCOM_IOC_MEM_REGISTER, &cmd);

	if (!rc && handle)
		*handle = cmd.out_handle;
	return rc;
}
#define test_cmd_mem_register(flags, addr, len, h) \
	ASSERT_EQ(0, _test_cmd_mem_register(self->fd, flags, addr, len, h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_mem_register(_errno, flags, addr, len) \
	EXPECT_ERRNO(_errno, _test_cmd_mem_register(self->fd, flags, addr, len, NULL))

static inline int _test_cmd_mem_export(int fd, uint32_t handle, int *out_fd)
{
	struct nccom_mem_export_dmabuf cmd = {
		.size = sizeof(cmd), .handle = handle, .out_fd = -1,
	};
	int rc = ioctl(fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &cmd);

	if (!rc && out_fd)
		*out_fd = cmd.out_fd;
	return rc;
}
#define test_cmd_mem_export(h, out) \
	ASSERT_EQ(0, _test_cmd_mem_export(self->fd, h, out)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_mem_export(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_mem_export(self->fd, h, NULL))

static inline int _test_cmd_mem_import(int fd, uint32_t flags, int dbfd,
				       uint64_t offset, uint64_t length,
				       uint32_t *handle, uint64_t *out_length)
{
	struct nccom_mem_import_dmabuf cmd = {
		.size = sizeof(cmd),
		.flags = flags,
		.fd = dbfd,
		.offset = offset,
		.length = length,
	};
	int rc = ioctl(fd, NCCOM_IOC_MEM_IMPORT_DMABUF, &cmd);

	if (!rc && handle)
		*handle = cmd.out_handle;
	if (!rc && out_length)
		*out_length = cmd.out_length;
	return rc;
}
#define test_cmd_mem_import(flags, dbfd, off, len, h) \
	ASSERT_EQ(0, _test_cmd_mem_import(self->fd, flags, dbfd, off, len, h, NULL)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_mem_import(_errno, flags, dbfd, off, len) \
	EXPECT_ERRNO(_errno, _test_cmd_mem_import(self->fd, flags, dbfd, off, len, \
						  NULL, NULL))

static inline int _test_cmd_queue_create(int fd, uint32_t dev, uint32_t depth,
					 struct nccom_queue_create *out)
{
	struct nccom_queue_create cmd = {
		.size = sizeof(cmd), .dev_index = dev, .depth = depth,
	};
	int rc = ioctl(fd, NCCOM_IOC_QUEUE_CREATE, &cmd);

	if (!rc && out)
		*out = cmd;
	return rc;
}
#define test_cmd_queue_create(dev, depth, out) \
	ASSERT_EQ(0, _test_cmd_queue_create(self->fd, dev, depth, out)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_queue_create(_errno, dev, depth) \
	EXPECT_ERRNO(_errno, _test_cmd_queue_create(self->fd, dev, depth, NULL))

static inline int _test_cmd_queue_doorbell(int fd, uint32_t handle)
{
	struct nccom_queue_doorbell cmd = { .size = sizeof(cmd), .handle = handle };

	return ioctl(fd, NCCOM_IOC_QUEUE_DOORBELL, &cmd);
}
#define test_cmd_queue_doorbell(h) \
	ASSERT_EQ(0, _test_cmd_queue_doorbell(self->fd, h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_queue_doorbell(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_queue_doorbell(self->fd, h))

static inline int _test_cmd_queue_get_state(int fd, uint32_t handle,
					    struct nccom_queue_get_state *out)
{
	struct nccom_queue_get_state cmd = { .size = sizeof(cmd), .handle = handle };
	int rc = ioctl(fd, NCCOM_IOC_QUEUE_GET_STATE, &cmd);

	if (!rc && out)
		*out = cmd;
	return rc;
}
#define test_cmd_queue_get_state(h, out) \
	ASSERT_EQ(0, _test_cmd_queue_get_state(self->fd, h, out)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_queue_get_state(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_queue_get_state(self->fd, h, NULL))

static inline int _test_cmd_queue_reset(int fd, uint32_t handle, uint32_t flags)
{
	struct nccom_queue_reset cmd = {
		.size = sizeof(cmd), .flags = flags, .handle = handle,
	};

	return ioctl(fd, NCCOM_IOC_QUEUE_RESET, &cmd);
}
#define test_cmd_queue_reset(h, flags) \
	ASSERT_EQ(0, _test_cmd_queue_reset(self->fd, h, flags)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_queue_reset(_errno, h, flags) \
	EXPECT_ERRNO(_errno, _test_cmd_queue_reset(self->fd, h, flags))

static inline int _test_cmd_queue_wait(int fd, uint32_t handle, uint32_t cq_tail,
				       uint64_t timeout_ns, uint32_t *out_tail)
{
	struct nccom_queue_wait cmd = {
		.size = sizeof(cmd),
		.handle = handle,
		.cq_tail = cq_tail,
		.timeout_ns = timeout_ns,
	};
	int rc = ioctl(fd, NCCOM_IOC_QUEUE_WAIT, &cmd);

	if (!rc && out_tail)
		*out_tail = cmd.out_cq_tail;
	return rc;
}
#define test_err_queue_wait(_errno, h, tail, tmo) \
	EXPECT_ERRNO(_errno, _test_cmd_queue_wait(self->fd, h, tail, tmo, NULL))

static inline int _test_cmd_sem_create(int fd, uint64_t init, uint32_t *handle)
{
	struct nccom_sem_create cmd = { .size = sizeof(cmd), .initial_value = init };
	int rc = ioctl(fd, NCCOM_IOC_SEM_CREATE, &cmd);

	if (!rc && handle)
		*handle = cmd.out_handle;
	return rc;
}
#define test_cmd_sem_create(init, h) \
	ASSERT_EQ(0, _test_cmd_sem_create(self->fd, init, h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))

static inline int _test_cmd_sem_signal(int fd, uint32_t handle, uint64_t value)
{
	struct nccom_sem_signal cmd = {
		.size = sizeof(cmd), .handle = handle, .value = value,
	};

	return ioctl(fd, NCCOM_IOC_SEM_SIGNAL, &cmd);
}
#define test_cmd_sem_signal(h, v) \
	ASSERT_EQ(0, _test_cmd_sem_signal(self->fd, h, v)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_sem_signal(_errno, h, v) \
	EXPECT_ERRNO(_errno, _test_cmd_sem_signal(self->fd, h, v))

static inline int _test_cmd_sem_read(int fd, uint32_t handle, uint64_t *value,
				     uint32_t *alive)
{
	struct nccom_sem_read cmd = { .size = sizeof(cmd), .handle = handle };
	int rc = ioctl(fd, NCCOM_IOC_SEM_READ, &cmd);

	if (!rc && value)
		*value = cmd.out_value;
	if (!rc && alive)
		*alive = cmd.out_owner_alive;
	return rc;
}
#define test_cmd_sem_read(h, v, alive) \
	ASSERT_EQ(0, _test_cmd_sem_read(self->fd, h, v, alive)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_sem_read(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_sem_read(self->fd, h, NULL, NULL))

static inline int _test_cmd_sem_wait(int fd, uint32_t handle, uint64_t value,
				     uint64_t timeout_ns, uint64_t *out_value)
{
	struct nccom_sem_wait cmd = {
		.size = sizeof(cmd),
		.handle = handle,
		.value = value,
		.timeout_ns = timeout_ns,
	};
	int rc = ioctl(fd, NCCOM_IOC_SEM_WAIT, &cmd);

	if (out_value)
		*out_value = cmd.out_value;
	return rc;
}
#define test_cmd_sem_wait(h, v, tmo) \
	ASSERT_EQ(0, _test_cmd_sem_wait(self->fd, h, v, tmo, NULL)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_sem_wait(_errno, h, v, tmo) \
	EXPECT_ERRNO(_errno, _test_cmd_sem_wait(self->fd, h, v, tmo, NULL))

static inline int _test_cmd_sem_export(int fd, uint32_t handle, int *out_fd)
{
	struct nccom_sem_export cmd = {
		.size = sizeof(cmd), .handle = handle, .out_fd = -1,
	};
	int rc = ioctl(fd, NCCOM_IOC_SEM_EXPORT, &cmd);

	if (!rc && out_fd)
		*out_fd = cmd.out_fd;
	return rc;
}
#define test_cmd_sem_export(h, out) \
	ASSERT_EQ(0, _test_cmd_sem_export(self->fd, h, out)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_sem_export(_errno, h) \
	EXPECT_ERRNO(_errno, _test_cmd_sem_export(self->fd, h, NULL))

static inline int _test_cmd_sem_import(int fd, int semfd, uint32_t *handle)
{
	struct nccom_sem_import cmd = { .size = sizeof(cmd), .fd = semfd };
	int rc = ioctl(fd, NCCOM_IOC_SEM_IMPORT, &cmd);

	if (!rc && handle)
		*handle = cmd.out_handle;
	return rc;
}
#define test_cmd_sem_import(semfd, h) \
	ASSERT_EQ(0, _test_cmd_sem_import(self->fd, semfd, h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_sem_import(_errno, semfd) \
	EXPECT_ERRNO(_errno, _test_cmd_sem_import(self->fd, semfd, NULL))

static inline int _test_cmd_comm_register(int fd, uint64_t hash, uint32_t rank,
					  uint32_t nranks, void *state,
					  uint32_t state_size, uint32_t *handle)
{
	struct nccom_comm_register cmd = {
		.size = sizeof(cmd),
		.comm_hash = hash,
		.rank = rank,
		.nranks = nranks,
		.state_uptr = (uintptr_t)state,
		.state_size = state_size,
	};
	int rc = ioctl(fd, NCCOM_IOC_COMM_REGISTER, &cmd);

	if (!rc && handle)
		*handle = cmd.out_handle;
	return rc;
}
#define test_cmd_comm_register(hash, rank, nranks, state, h) \
	ASSERT_EQ(0, _test_cmd_comm_register(self->fd, hash, rank, nranks, state, \
					     sizeof(struct nccom_comm_state), h)) \
		TH_LOG("errno %d (%s)", errno, strerror(errno))
#define test_err_comm_register(_errno, hash, rank, nranks, state, size) \
	EXPECT_ERRNO(_errno, _test_cmd_comm_register(self->fd, hash, rank, nranks, \
						     state, size, NULL))

/*
 * TEST_LENGTH(struct, ioctl, last): the size protocol of one ioctl.
 * min_size - 1 → EINVAL; sizeof + 1 with a non-zero tail → E2BIG; sizeof + 1
 * with a zero tail behaves exactly like sizeof (same result or same errno).
 * The all-zero struct is used, so the exact-size call may fail with a
 * semantic errno (e.g. ENOENT for handle 0): the point is that the zero tail
 * changes nothing.
 */
#define TEST_LENGTH(_struct, _ioctl, _last)                                   \
	do {                                                                  \
		size_t __min = offsetofend(struct _struct, _last);            \
		struct {                                                      \
			struct _struct cmd;                                   \
			uint8_t extra;                                        \
		} __attribute__((packed)) __c;                                \
		int __rc, __err;                                              \
									      \
		memset(&__c, 0, sizeof(__c));                                 \
		__c.cmd.size = __min - 1;                                     \
		__c.extra = 0xaa;                                             \
		EXPECT_ERRNO(EINVAL, ioctl(self->fd, _ioctl, &__c));          \
		__c.cmd.size = sizeof(struct _struct) + 1;                    \
		EXPECT_ERRNO(E2BIG, ioctl(self->fd, _ioctl, &__c));           \
		memset(&__c, 0, sizeof(__c));                                 \
		__c.cmd.size = sizeof(struct _struct);                        \
		__rc = ioctl(self->fd, _ioctl, &__c);                         \
		__err = errno;                                                \
		nccom_cleanup_out(self->fd, _ioctl, &__c, __rc);              \
		memset(&__c, 0, sizeof(__c));                                 \
		__c.cmd.size = sizeof(struct _struct) + 1;                    \
		if (__rc) {                                                   \
			EXPECT_ERRNO(__err, ioctl(self->fd, _ioctl, &__c));   \
		} else {                                                      \
			EXPECT_EQ(0, ioctl(self->fd, _ioctl, &__c));          \
			nccom_cleanup_out(self->fd, _ioctl, &__c, 0);         \
		}                                                             \
	} while (0)

/* Release whatever a successful zero-argument ioctl created. */
static inline void nccom_cleanup_out(int fd, unsigned long cmd, void *arg, int rc)
{
	if (rc)
		return;
	if (cmd == NCCOM_IOC_SEM_CREATE)
		_test_cmd_destroy(fd, ((struct nccom_sem_create *)arg)->out_handle);
	else if (cmd == NCCOM_IOC_QUEUE_CREATE)
		_test_cmd_destroy(fd, ((struct nccom_queue_create *)arg)->out_handle);
	else if (cmd == NCCOM_IOC_MEM_REGISTER)
		_test_cmd_destroy(fd, ((struct nccom_mem_register *)arg)->out_handle);
}

/* ---- memory ---------------------------------------------------------- */

static inline void *nccom_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void nccom_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

static inline void fill_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = x >> 16;
	}
}

/* ---- fd passing over a Unix socket (SCM_RIGHTS) --------------------- */

static inline int send_fd(int sock, int fd, uint32_t tag)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &tag, .iov_len = sizeof(tag) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == sizeof(tag) ? 0 : -errno;
}

/* Returns the received fd or -errno; *tag gets the 4-byte payload. */
static inline int recv_fd(int sock, uint32_t *tag)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	uint32_t t = 0;
	struct iovec iov = { .iov_base = &t, .iov_len = sizeof(t) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != sizeof(t))
		return -EPROTO;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (tag)
		*tag = t;
	return fd;
}

static inline int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -EIO;
}

static inline int read_full(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len ? 0 : -EIO;
}

/* waitpid() with a deadline; returns 0 and the status, or -ETIMEDOUT. */
static inline int wait_child(pid_t pid, int *status, uint64_t timeout_ms)
{
	uint64_t end = deadline_ms(timeout_ms);
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0)
			return -errno;
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(2000);
	}
}

/* A child exit status that means "success" for the parent's checks. */
static inline bool child_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- rings ---------------------------------------------------------- */

/**
 * struct nccom_ring - a userspace view of one queue's mapping
 * @kh: the shared header (k prefix: the kernel writes parts of it)
 * @sq_tail: next submission index (mirrors kh->sq_tail)
 * @cq_head: next completion index to read (mirrors kh->cq_head)
 */
struct nccom_ring {
	int fd;
	uint32_t handle;
	uint32_t depth;
	uint32_t mask;
	void *map;
	size_t map_size;
	struct nccom_ring_hdr *kh;
	struct nccom_desc *ksq;
	struct nccom_cqe *kcq;
	uint32_t sq_tail;
	uint32_t cq_head;
};

/* Creates a queue and maps it; returns 0 or -errno. */
static inline int nccom_ring_create(int fd, uint32_t dev, uint32_t depth,
				    struct nccom_ring *r)
{
	struct nccom_queue_create qc;
	void *map;

	memset(r, 0, sizeof(*r));
	if (_test_cmd_queue_create(fd, dev, depth, &qc))
		return -errno;
	map = mmap(NULL, qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, qc.out_mmap_offset);
	if (map == MAP_FAILED) {
		int err = -errno;

		_test_cmd_destroy(fd, qc.out_handle);
		return err;
	}
	r->fd = fd;
	r->handle = qc.out_handle;
	r->depth = depth;
	r->mask = depth - 1;
	r->map = map;
	r->map_size = qc.out_mmap_size;
	r->kh = map;
	r->ksq = (struct nccom_desc *)((char *)map + qc.out_sq_offset);
	r->kcq = (struct nccom_cqe *)((char *)map + qc.out_cq_offset);
	r->sq_tail = r->kh->sq_tail;
	r->cq_head = r->kh->cq_head;
	return 0;
}

static inline void nccom_ring_destroy(struct nccom_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	if (r->handle)
		_test_cmd_destroy(r->fd, r->handle);
	memset(r, 0, sizeof(*r));
}

/* Free submission slots as seen from userspace. */
static inline uint32_t nccom_ring_space(struct nccom_ring *r)
{
	/* Pairs with the engine's release store of sq_head. */
	uint32_t head = __atomic_load_n(&r->kh->sq_head, __ATOMIC_ACQUIRE);

	return r->depth - (r->sq_tail - head);
}

/*
 * Writes @n descriptors if they fit (-EAGAIN otherwise), publishes the tail
 * and rings the doorbell. Returns 0 or -errno (the doorbell's errno).
 */
static inline int nccom_ring_submit(struct nccom_ring *r,
				    const struct nccom_desc *d, uint32_t n)
{
	uint32_t i;

	if (nccom_ring_space(r) < n)
		return -EAGAIN;
	for (i = 0; i < n; i++)
		r->ksq[(r->sq_tail + i) & r->mask] = d[i];
	r->sq_tail += n;
	/* Pairs with the engine's acquire load of sq_tail. */
	__atomic_store_n(&r->kh->sq_tail, r->sq_tail, __ATOMIC_RELEASE);
	return _test_cmd_queue_doorbell(r->fd, r->handle) ? -errno : 0;
}

/* Completions available now, without waiting. */
static inline uint32_t nccom_ring_ready(struct nccom_ring *r)
{
	/* Pairs with the engine's release store of cq_tail. */
	return __atomic_load_n(&r->kh->cq_tail, __ATOMIC_ACQUIRE) - r->cq_head;
}

/*
 * Reaps up to @max completions into @out, waiting until at least @min are
 * there or @timeout_ms passes. Returns the number reaped or -errno
 * (-ETIMEDOUT if fewer than @min arrived; what arrived is still reaped).
 */
static inline int nccom_ring_reap(struct nccom_ring *r, struct nccom_cqe *out,
				  uint32_t min, uint32_t max, uint64_t timeout_ms)
{
	uint64_t end = deadline_ms(timeout_ms);
	uint32_t got = 0, avail, i;
	int err = 0;

	for (;;) {
		avail = nccom_ring_ready(r);
		for (i = 0; i < avail && got < max; i++, got++)
			out[got] = r->kcq[(r->cq_head++) & r->mask];
		/* Pairs with the engine's acquire load of cq_head. */
		__atomic_store_n(&r->kh->cq_head, r->cq_head, __ATOMIC_RELEASE);
		if (got >= min || got >= max)
			break;
		if (now_ns() >= end) {
			err = -ETIMEDOUT;
			break;
		}
		if (_test_cmd_queue_wait(r->fd, r->handle, r->cq_head, end, NULL) &&
		    errno != ETIMEDOUT && errno != EINTR) {
			err = -errno;
			break;
		}
		if (nccom_ring_ready(r) == 0 &&
		    __atomic_load_n(&r->kh->state, __ATOMIC_ACQUIRE) == NCCOM_QUEUE_ERROR &&
		    r->kh->sq_head == r->sq_tail) {
			err = -EIO;
			break;
		}
	}
	return got ? (int)got : err;
}

/*
 * Submits @n descriptors (in chunks that fit) and reaps @n completions into
 * @out (may be NULL). Returns the number reaped or -errno.
 */
static inline int nccom_ring_run(struct nccom_ring *r, const struct nccom_desc *d,
				 uint32_t n, struct nccom_cqe *out,
				 uint64_t timeout_ms)
{
	uint64_t end = deadline_ms(timeout_ms);
	struct nccom_cqe tmp[64];
	uint32_t sent = 0, done = 0, chunk;
	int rc;

	while (done < n) {
		chunk = nccom_ring_space(r);
		if (chunk > n - sent)
			chunk = n - sent;
		if (chunk) {
			rc = nccom_ring_submit(r, d + sent, chunk);
			if (rc)
				return rc;
			sent += chunk;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		rc = nccom_ring_reap(r, out ? out + done : tmp, 1,
				     out ? n - done : (n - done < 64 ? n - done : 64),
				     (end - now_ns()) / NSEC_PER_MSEC + 1);
		if (rc < 0)
			return rc;
		done += rc;
	}
	return done;
}

/* ---- descriptor builders ------------------------------------------- */

static inline struct nccom_desc desc_nop(uint64_t cookie)
{
	struct nccom_desc d = { .opcode = NCCOM_OP_NOP, .cookie = cookie };

	return d;
}

static inline struct nccom_desc desc_copy(uint32_t dst, uint64_t dst_off,
					  uint32_t src, uint64_t src_off,
					  uint64_t len, uint64_t cookie)
{
	struct nccom_desc d = {
		.opcode = NCCOM_OP_COPY, .cookie = cookie,
		.dst_handle = dst, .src_handle = src,
		.dst_offset = dst_off, .src_offset = src_off, .length = len,
	};

	return d;
}

static inline struct nccom_desc desc_reduce(uint8_t dtype, uint8_t op,
					    uint32_t dst, uint64_t dst_off,
					    uint32_t src, uint64_t src_off,
					    uint32_t src2, uint64_t src2_off,
					    uint64_t count, uint64_t cookie)
{
	struct nccom_desc d = {
		.opcode = NCCOM_OP_REDUCE, .dtype = dtype, .op = op,
		.cookie = cookie, .dst_handle = dst, .src_handle = src,
		.src2_handle = src2, .dst_offset = dst_off,
		.src_offset = src_off, .src2_offset = src2_off, .count = count,
	};

	return d;
}

static inline struct nccom_desc desc_sem(uint8_t opcode, uint32_t sem,
					 uint64_t value, uint64_t cookie)
{
	struct nccom_desc d = {
		.opcode = opcode, .cookie = cookie, .sem_handle = sem,
		.value = value,
	};

	return d;
}

/* ---- leak check ------------------------------------------------------ */

/*
 * Waits (up to 5 s: teardown of a closed fd may finish on an engine thread)
 * until the driver's global object and pinned-page counters are back to at
 * most the given baseline. Returns 0 or -ETIMEDOUT; *info has the last read.
 */
static inline int nccom_wait_counters(uint64_t objects, uint64_t pinned,
				      struct nccom_info *info)
{
	uint64_t end = deadline_ms(5000);
	int fd = nccom_open();
	int rc = -ETIMEDOUT;

	if (fd < 0)
		return -errno;
	do {
		if (_test_cmd_get_info(fd, info)) {
			rc = -errno;
			break;
		}
		if (info->out_objects <= objects && info->out_pinned_pages <= pinned) {
			rc = 0;
			break;
		}
		usleep(10000);
	} while (now_ns() < end);
	close(fd);
	return rc;
}

#endif /* NCCOM_UTILS_H */
