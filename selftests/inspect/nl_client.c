// SPDX-License-Identifier: MIT
/*
 * Description: test helper for the driver's netlink family: a /dev/nccom
 * client with work in flight.  It creates two queues and a semaphore,
 * parks queue 1 on a SEM_WAIT descriptor that is never satisfied (one
 * descriptor in flight), makes queue 2 fail (COPY to an unknown handle:
 * a queue-error event), lets a SEM_WAIT ioctl time out (a sem-timeout
 * event), prints "ready CLIENT_QUEUE1 QUEUE2 SEM" and sleeps until killed.
 *
 * Exit: 1 on any setup failure (with the failing call named), 77 if
 * /dev/nccom is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/nccom.h>

struct ring {
	uint32_t handle;
	struct nccom_ring_hdr *hdr;
	struct nccom_desc *sq;
};

static int fail(const char *what)
{
	fprintf(stderr, "nl_client: %s: %s\n", what, strerror(errno));
	return 1;
}

static int ring_create(int fd, struct ring *r)
{
	struct nccom_queue_create qc = { .size = sizeof(qc), .dev_index = 0, .depth = 8 };
	void *map;

	if (ioctl(fd, NCCOM_IOC_QUEUE_CREATE, &qc))
		return fail("QUEUE_CREATE");
	map = mmap(NULL, qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)qc.out_mmap_offset);
	if (map == MAP_FAILED)
		return fail("mmap of the queue");
	r->handle = qc.out_handle;
	r->hdr = map;
	r->sq = (struct nccom_desc *)((char *)map + qc.out_sq_offset);
	return 0;
}

static int ring_submit(int fd, struct ring *r, const struct nccom_desc *d)
{
	struct nccom_queue_doorbell db = { .size = sizeof(db), .handle = r->handle };
	uint32_t tail = r->hdr->sq_tail;

	r->sq[tail & r->hdr->mask] = *d;
	__atomic_store_n(&r->hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (ioctl(fd, NCCOM_IOC_QUEUE_DOORBELL, &db))
		return fail("QUEUE_DOORBELL");
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	struct nccom_sem_create sc = { .size = sizeof(sc) };
	struct nccom_sem_wait sw = { .size = sizeof(sw) };
	struct nccom_desc d;
	struct ring q1, q2;
	int fd, i;

	fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 77 : fail("open /dev/nccom");
	if (ring_create(fd, &q1) || ring_create(fd, &q2))
		return 1;
	if (ioctl(fd, NCCOM_IOC_SEM_CREATE, &sc))
		return fail("SEM_CREATE");
	memset(&d, 0, sizeof(d));
	d.opcode = NCCOM_OP_SEM_WAIT;
	d.sem_handle = sc.out_handle;
	d.value = 1;
	d.cookie = 1;
	if (ring_submit(fd, &q1, &d))
		return 1;
	memset(&d, 0, sizeof(d));
	d.opcode = NCCOM_OP_COPY;
	d.dst_handle = 0x7fff0000;
	d.src_handle = 0x7fff0001;
	d.length = 8;
	d.cookie = 2;
	if (ring_submit(fd, &q2, &d))
		return 1;
	/* Wait (bounded) until the engine failed queue 2. */
	for (i = 0; i < 500 && __atomic_load_n(&q2.hdr->state, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(10000);
	if (q2.hdr->state != NCCOM_QUEUE_ERROR) {
		fprintf(stderr, "nl_client: queue 2 did not fail\n");
		return 1;
	}
	sw.handle = sc.out_handle;
	sw.value = 5;
	sw.timeout_ns = now_ns() + 20000000ull;
	if (ioctl(fd, NCCOM_IOC_SEM_WAIT, &sw) == 0 || errno != ETIMEDOUT)
		return fail("SEM_WAIT should time out");
	printf("ready %u %u %u\n", q1.handle, q2.handle, sc.out_handle);
	fflush(stdout);
	for (;;)
		pause();
}
