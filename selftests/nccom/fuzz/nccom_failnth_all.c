// SPDX-License-Identifier: GPL-2.0
/*
 * Description: systematic fault injection over every ioctl of /dev/nccom,
 * run in the guest after the fuzzer. For each ioctl a fresh fd gets the
 * objects the call needs (without injection); then, for N = 1, 2, ...,
 * the driver's test knob /sys/module/nccom/parameters/fail_nth is set to N
 * and the call is issued, until it succeeds with the knob still armed (it
 * made fewer than N injectable allocations). Every injected failure must
 * be ENOMEM, must leave the fd's and the driver's object and pinned-page
 * counters where they were before the call, and everything must be back to
 * zero once the fd and the returned fds are closed. The knob covers every
 * call site of nccom_should_fail() in the driver (object allocation; more
 * sites make more points here, nothing else changes).
 *
 * Prints "nccom_failnth_all: N ioctls, N injection points, N findings".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "../nccom_failnth.h"

#define DEV "/dev/nccom"
#define PG 4096UL
#define BUFPAGES 8
#define MAXN 64

static int findings;

#define FINDING(...)                                        \
	do {                                                \
		printf("FINDING: " __VA_ARGS__);            \
		printf("\n");                               \
		findings++;                                 \
	} while (0)

static int info(int fd, struct nccom_info *i)
{
	memset(i, 0, sizeof(*i));
	i->size = sizeof(*i);
	return ioctl(fd, NCCOM_IOC_GET_INFO, i);
}

/* Global counters: wait until they are at most these (releases are async). */
static int wait_global(uint64_t objects, uint64_t pinned, struct nccom_info *out)
{
	int i, fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (i = 0; i < 500; i++) {
		if (info(fd, out))
			break;
		/* This fd holds no objects: the numbers are everyone else's. */
		if (out->out_objects <= objects && out->out_pinned_pages <= pinned) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	close(fd);
	return -1;
}

/* What one test case has set up in its fd. */
struct ctx {
	int fd;
	uint8_t *buf;
	uint32_t mem, imp, q, sem, simp;
	int dbfd, sfd;
	struct nccom_queue_create qc;
	int outfd;	/* an fd the call under test returned, closed after it */
};

static int setup_mem(struct ctx *c)
{
	struct nccom_mem_register r = { .size = sizeof(r), .flags = 3 };

	r.addr = (uintptr_t)c->buf;
	r.length = BUFPAGES * PG;
	if (ioctl(c->fd, NCCOM_IOC_MEM_REGISTER, &r))
		return -1;
	c->mem = r.out_handle;
	return 0;
}

static int setup_export(struct ctx *c)
{
	struct nccom_mem_export_dmabuf e = { .size = sizeof(e) };

	if (setup_mem(c))
		return -1;
	e.handle = c->mem;
	if (ioctl(c->fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &e))
		return -1;
	c->dbfd = e.out_fd;
	return 0;
}

static int setup_queue(struct ctx *c)
{
	memset(&c->qc, 0, sizeof(c->qc));
	c->qc.size = sizeof(c->qc);
	c->qc.depth = 8;
	if (ioctl(c->fd, NCCOM_IOC_QUEUE_CREATE, &c->qc))
		return -1;
	c->q = c->qc.out_handle;
	return 0;
}

static int setup_sem(struct ctx *c)
{
	struct nccom_sem_create s = { .size = sizeof(s), .initial_value = 1 };

	if (ioctl(c->fd, NCCOM_IOC_SEM_CREATE, &s))
		return -1;
	c->sem = s.out_handle;
	return 0;
}

static int setup_sem_export(struct ctx *c)
{
	struct nccom_sem_export e = { .size = sizeof(e) };

	if (setup_sem(c))
		return -1;
	e.handle = c->sem;
	if (ioctl(c->fd, NCCOM_IOC_SEM_EXPORT, &e))
		return -1;
	c->sfd = e.out_fd;
	return 0;
}

static int setup_all(struct ctx *c)
{
	return setup_export(c) || setup_queue(c) || setup_sem_export(c);
}

static int setup_none(struct ctx *c)
{
	(void)c;
	return 0;
}

/* ---- the calls under test -------------------------------------------------- */

static int t_get_info(struct ctx *c)
{
	struct nccom_info i;

	return info(c->fd, &i);
}

static int t_destroy_mem(struct ctx *c)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = c->mem };

	return ioctl(c->fd, NCCOM_IOC_DESTROY, &d);
}

static int t_destroy_queue(struct ctx *c)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = c->q };

	return ioctl(c->fd, NCCOM_IOC_DESTROY, &d);
}

static int t_destroy_sem(struct ctx *c)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = c->sem };

	return ioctl(c->fd, NCCOM_IOC_DESTROY, &d);
}

static int t_mem_register(struct ctx *c)
{
	return setup_mem(c);
}

static int t_mem_export(struct ctx *c)
{
	struct nccom_mem_export_dmabuf e = { .size = sizeof(e), .handle = c->mem };
	int rc = ioctl(c->fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &e);

	if (!rc)
		c->outfd = e.out_fd;
	return rc;
}

static int t_mem_import(struct ctx *c)
{
	struct nccom_mem_import_dmabuf i = { .size = sizeof(i), .flags = NCCOM_MEM_READ };

	i.fd = c->dbfd;
	i.offset = PG;
	return ioctl(c->fd, NCCOM_IOC_MEM_IMPORT_DMABUF, &i);
}

static int t_queue_create(struct ctx *c)
{
	return setup_queue(c);
}

static int t_queue_mmap(struct ctx *c)
{
	void *p = mmap(NULL, c->qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		       c->qc.out_mmap_offset);

	if (p == MAP_FAILED)
		return -1;
	munmap(p, c->qc.out_mmap_size);
	return 0;
}

static int t_doorbell(struct ctx *c)
{
	struct nccom_queue_doorbell d = { .size = sizeof(d), .handle = c->q };

	return ioctl(c->fd, NCCOM_IOC_QUEUE_DOORBELL, &d);
}

static int t_get_state(struct ctx *c)
{
	struct nccom_queue_get_state s = { .size = sizeof(s), .handle = c->q };

	return ioctl(c->fd, NCCOM_IOC_QUEUE_GET_STATE, &s);
}

static int t_reset(struct ctx *c)
{
	struct nccom_queue_reset r = { .size = sizeof(r), .handle = c->q };
	int rc = ioctl(c->fd, NCCOM_IOC_QUEUE_RESET, &r);

	/* An active queue: EBUSY is its documented success here. */
	return rc && errno == EBUSY ? 0 : rc;
}

static int t_queue_wait(struct ctx *c)
{
	struct nccom_queue_wait w = { .size = sizeof(w), .handle = c->q, .cq_tail = 1 };

	return ioctl(c->fd, NCCOM_IOC_QUEUE_WAIT, &w);
}

static int t_sem_create(struct ctx *c)
{
	return setup_sem(c);
}

static int t_sem_signal(struct ctx *c)
{
	struct nccom_sem_signal s = { .size = sizeof(s), .handle = c->sem, .value = 2 };

	return ioctl(c->fd, NCCOM_IOC_SEM_SIGNAL, &s);
}

static int t_sem_read(struct ctx *c)
{
	struct nccom_sem_read s = { .size = sizeof(s), .handle = c->sem };

	return ioctl(c->fd, NCCOM_IOC_SEM_READ, &s);
}

static int t_sem_wait(struct ctx *c)
{
	struct nccom_sem_wait s = { .size = sizeof(s), .handle = c->sem, .value = 1 };

	return ioctl(c->fd, NCCOM_IOC_SEM_WAIT, &s);
}

static int t_sem_export(struct ctx *c)
{
	struct nccom_sem_export e = { .size = sizeof(e), .handle = c->sem };
	int rc = ioctl(c->fd, NCCOM_IOC_SEM_EXPORT, &e);

	if (!rc)
		c->outfd = e.out_fd;
	return rc;
}

static int t_sem_import(struct ctx *c)
{
	struct nccom_sem_import i = { .size = sizeof(i), .fd = c->sfd };

	return ioctl(c->fd, NCCOM_IOC_SEM_IMPORT, &i);
}

static int t_comm_register(struct ctx *c)
{
	struct nccom_comm_register r = { .size = sizeof(r), .comm_hash = 0x77, .nranks = 2,
					 .rank = 1 };

	r.state_uptr = (uintptr_t)c->buf + PG;
	r.state_size = sizeof(struct nccom_comm_state);
	return ioctl(c->fd, NCCOM_IOC_COMM_REGISTER, &r);
}

/* The descriptors run in the engine: inject while a REDUCE and a COPY complete. */
static int t_ring_reduce(struct ctx *c)
{
	void *p = mmap(NULL, c->qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		       c->qc.out_mmap_offset);
	struct nccom_queue_doorbell d = { .size = sizeof(d), .handle = c->q };
	struct nccom_queue_wait w = { .size = sizeof(w), .handle = c->q };
	struct nccom_ring_hdr *h = p;
	struct nccom_desc *sq;
	struct nccom_cqe *cq;
	struct timespec ts;
	int rc = 0, i;

	if (p == MAP_FAILED)
		return -1;
	sq = (struct nccom_desc *)((uint8_t *)p + h->sq_offset);
	cq = (struct nccom_cqe *)((uint8_t *)p + h->cq_offset);
	memset(&sq[0], 0, sizeof(sq[0]) * 2);
	sq[0].opcode = NCCOM_OP_REDUCE;
	sq[0].dtype = NCCOM_DTYPE_FP32;
	sq[0].dst_handle = c->mem;
	sq[0].src_handle = c->mem;
	sq[0].dst_offset = 0;
	sq[0].src_offset = 4 * PG;
	sq[0].count = 1024;
	sq[1].opcode = NCCOM_OP_COPY;
	sq[1].cookie = 1;
	sq[1].dst_handle = c->mem;
	sq[1].src_handle = c->mem;
	sq[1].src_offset = PG;
	sq[1].length = PG;
	__atomic_store_n(&h->sq_tail, 2, __ATOMIC_RELEASE);
	if (ioctl(c->fd, NCCOM_IOC_QUEUE_DOORBELL, &d)) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < 200 && __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE) < 2; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		w.cq_tail = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
		w.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec + 10000000;
		ioctl(c->fd, NCCOM_IOC_QUEUE_WAIT, &w);
		if (h->state == NCCOM_QUEUE_ERROR)
			break;
	}
	for (i = 0; i < (int)__atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE) && i < 2; i++)
		if (cq[i].status) {
			errno = -cq[i].status;
			rc = -1;
			break;
		}
	if (!rc && __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE) < 2) {
		errno = ETIMEDOUT;
		rc = -1;
	}
out:
	munmap(p, c->qc.out_mmap_size);
	return rc;
}

static int setup_mem_queue(struct ctx *c)
{
	return setup_mem(c) || setup_queue(c);
}

static const struct tcase {
	const char *name;
	int (*setup)(struct ctx *c);
	int (*call)(struct ctx *c);
} cases[] = {
	{ "GET_INFO", setup_all, t_get_info },
	{ "DESTROY(mem)", setup_all, t_destroy_mem },
	{ "DESTROY(queue)", setup_all, t_destroy_queue },
	{ "DESTROY(sem)", setup_all, t_destroy_sem },
	{ "MEM_REGISTER", setup_none, t_mem_register },
	{ "MEM_EXPORT_DMABUF", setup_mem, t_mem_export },
	{ "MEM_IMPORT_DMABUF", setup_export, t_mem_import },
	{ "QUEUE_CREATE", setup_none, t_queue_create },
	{ "mmap(queue)", setup_queue, t_queue_mmap },
	{ "QUEUE_DOORBELL", setup_queue, t_doorbell },
	{ "QUEUE_GET_STATE", setup_queue, t_get_state },
	{ "QUEUE_RESET", setup_queue, t_reset },
	{ "QUEUE_WAIT", setup_queue, t_queue_wait },
	{ "SEM_CREATE", setup_none, t_sem_create },
	{ "SEM_SIGNAL", setup_sem, t_sem_signal },
	{ "SEM_READ", setup_sem, t_sem_read },
	{ "SEM_WAIT", setup_sem, t_sem_wait },
	{ "SEM_EXPORT", setup_sem, t_sem_export },
	{ "SEM_IMPORT", setup_sem_export, t_sem_import },
	{ "COMM_REGISTER", setup_none, t_comm_register },
	{ "ring(REDUCE+COPY)", setup_mem_queue, t_ring_reduce },
};

static void ctx_close(struct ctx *c)
{
	if (c->outfd >= 0)
		close(c->outfd);
	if (c->dbfd >= 0)
		close(c->dbfd);
	if (c->sfd >= 0)
		close(c->sfd);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = c->dbfd = c->sfd = c->outfd = -1;
}

int main(void)
{
	unsigned int k, n, points = 0, total_points;
	struct nccom_info before, after, fdinfo_b, fdinfo_a;
	uint8_t *buf;
	int rc, err;
	long left;

	if (access(KNOB, W_OK)) {
		printf("nccom_failnth_all: %s not writable: driver without the test knob\n", KNOB);
		printf("nccom_failnth_all: 0 ioctls, 0 injection points, 1 findings\n");
		return 1;
	}
	buf = mmap(NULL, BUFPAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 2;
	memset(buf, 0, BUFPAGES * PG);
	if (wait_global(0, 0, &before))
		FINDING("driver counters not zero before the sweep: objects=%llu pinned=%llu",
			(unsigned long long)before.out_objects,
			(unsigned long long)before.out_pinned_pages);
	total_points = 0;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct tcase *t = &cases[k];

		points = 0;
		for (n = 1; n <= MAXN; n++) {
			struct ctx c = { .fd = -1, .dbfd = -1, .sfd = -1, .outfd = -1, .buf = buf };

			knob_write(0);
			c.fd = open(DEV, O_RDWR | O_CLOEXEC);
			if (c.fd < 0 || t->setup(&c)) {
				FINDING("%s: setup failed without injection: %s", t->name,
					strerror(errno));
				ctx_close(&c);
				break;
			}
			wait_global(UINT64_MAX, UINT64_MAX, &before);
			info(c.fd, &fdinfo_b);
			knob_write(n);
			rc = t->call(&c);
			err = errno;
			left = knob_read();
			knob_write(0);
			info(c.fd, &fdinfo_a);
			if (rc) {
				points++;
				if (err != ENOMEM)
					FINDING("%s: injected failure %u returned %s, expected ENOMEM",
						t->name, n, strerror(err));
				if (left != 0)
					FINDING("%s: failed with %s at n=%u without reaching the injection (knob %ld)",
						t->name, strerror(err), n, left);
				if (fdinfo_a.out_fd_objects != fdinfo_b.out_fd_objects ||
				    fdinfo_a.out_fd_pinned_pages != fdinfo_b.out_fd_pinned_pages)
					FINDING("%s: injected failure %u left fd objects %llu -> %llu, pinned %llu -> %llu",
						t->name, n,
						(unsigned long long)fdinfo_b.out_fd_objects,
						(unsigned long long)fdinfo_a.out_fd_objects,
						(unsigned long long)fdinfo_b.out_fd_pinned_pages,
						(unsigned long long)fdinfo_a.out_fd_pinned_pages);
			}
			ctx_close(&c);
			if (wait_global(0, 0, &after))
				FINDING("%s (n=%u, %s): after close objects=%llu pinned=%llu remain",
					t->name, n, rc ? "injected" : "success",
					(unsigned long long)after.out_objects,
					(unsigned long long)after.out_pinned_pages);
			if (!rc)
				break;
		}
		if (n > MAXN)
			FINDING("%s: still failing after %u injections", t->name, MAXN);
		printf("# %-20s %u injection point(s)\n", t->name, points);
		total_points += points;
	}
	knob_write(0);
	printf("nccom_failnth_all: %zu ioctls, %u injection points, %d findings\n",
	       sizeof(cases) / sizeof(cases[0]), total_points, findings);
	return findings ? 1 : 0;
}
