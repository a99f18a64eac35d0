// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommRegister on the nccom engine (CCOM_KDEV=1, 2
 * ranks, CCOM_KDEV_CACHE=8).  Registering a 4 MiB buffer nobody used yet
 * pins its 1024 pages at once (the driver's pinned-page counter grows by
 * that much before any operation); the range then survives AllReduces on
 * 12 other buffers, more than the cache holds (an unpinned entry would be
 * evicted: the counter would fall back); every collective of the matrix
 * runs on the registered buffers (float32/sum, in and out of place, 7,
 * 1023 and 256 Ki + 3 elements) checked against the reference; after
 * ccomCommDeregister the range is an ordinary entry again; and the driver
 * counters return to zero after the job.  SKIPs without /dev/nccom (run it
 * with selftests/libccom/kdev/run-vm).
 */
#include <sys/mman.h>

#include "coll_matrix.h"
#include "kdev_util.h"

#define REG_BYTES (4u << 20)
#define OTHERS 12
#define OTHER_BYTES (64u << 10)

static int64_t kr_pinned(void)
{
	struct nccom_info info = { .size = sizeof(info) };
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = ioctl(fd, NCCOM_IOC_GET_INFO, &info);
	close(fd);
	return rc ? -1 : (int64_t)info.out_pinned_pages;
}

static int kr_rank(int rank, int n, void *arg)
{
	static float sync_buf[16];
	ccomComm_t comm;
	char *sb, *rb, *other[OTHERS];
	void *hs, *hr;
	int64_t p0, p1, p2;
	struct ct_case c;
	int k, ip, ci, i;
	static const size_t counts[] = { 7, 1023, (256u << 10) + 3 };

	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	sb = mmap(NULL, REG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		  -1, 0);
	rb = mmap(NULL, REG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		  -1, 0);
	T_CHECK(sb != MAP_FAILED && rb != MAP_FAILED, "mmap: %s", strerror(errno));
	/* Both ranks' engine state is set up and idle after this; then rank 0 alone registers. */
	if (ct_allreduce_ok(comm, rank, n, sync_buf, 16))
		return T_FAIL;
	if (rank == 0) {
		p0 = kr_pinned();
		T_CCOM(ccomCommRegister(comm, sb, REG_BYTES, &hs), ccomSuccess);
		p1 = kr_pinned();
		printf("rank 0: pinned pages %lld before ccomCommRegister, %lld after\n",
		       (long long)p0, (long long)p1);
		T_CHECK(p0 >= 0 && p1 - p0 >= REG_BYTES / 4096,
			"ccomCommRegister of %u bytes pinned %lld pages, want at least %u (pinned up front)",
			REG_BYTES, (long long)(p1 - p0), REG_BYTES / 4096);
	}
	if (ct_allreduce_ok(comm, rank, n, sync_buf, 16))
		return T_FAIL;
	if (rank == 1)
		T_CCOM(ccomCommRegister(comm, sb, REG_BYTES, &hs), ccomSuccess);
	T_CCOM(ccomCommRegister(comm, rb, REG_BYTES, &hr), ccomSuccess);
	if (ct_allreduce_ok(comm, rank, n, sync_buf, 16))
		return T_FAIL;
	/* More buffers than the cache holds: the registered ranges must stay pinned. */
	for (i = 0; i < OTHERS; i++) {
		other[i] = malloc(OTHER_BYTES);
		T_CHECK(other[i], "malloc");
		if (ct_allreduce_ok(comm, rank, n, (float *)other[i], OTHER_BYTES / sizeof(float)))
			return T_FAIL;
	}
	p2 = kr_pinned();
	printf("rank %d: pinned pages after %d other buffers: %lld\n", rank, OTHERS, (long long)p2);
	T_CHECK(p2 >= 4 * (REG_BYTES / 4096),
		"%lld pages pinned after AllReduces on %d other buffers; the 4 registered ranges alone are %u (evicted?)",
		(long long)p2, OTHERS, 4 * (REG_BYTES / 4096));
	for (k = 0; k < K_N; k++)
		for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++)
			for (ci = 0; ci < 3; ci++) {
				c = (struct ct_case){ k, ip, (int)(counts[ci] % (size_t)n), ccomFloat32,
						      ccomSum, counts[ci] };
				if (ct_case_run(comm, &c, rank, n, sb, rb, REG_BYTES))
					return T_FAIL;
			}
	T_CCOM(ccomCommDeregister(comm, hs), ccomSuccess);
	T_CCOM(ccomCommDeregister(comm, hr), ccomSuccess);
	T_CCOM(ccomCommDeregister(comm, hr), ccomInvalidArgument);
	if (ct_allreduce_ok(comm, rank, n, (float *)rb, 1024))
		return T_FAIL;
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	for (i = 0; i < OTHERS; i++)
		free(other[i]);
	munmap(sb, REG_BYTES);
	munmap(rb, REG_BYTES);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .env = { "CCOM_KDEV=1", "CCOM_KDEV_CACHE=8" } };
	double t0 = t_now();

	KT_REQUIRE(2);
	if (ct_run(&j, 2, kr_rank, 400))
		return T_FAIL;
	printf("kdev registration passed in %.1f s\n", t_now() - t0);
	return kt_counters_zero("after the job");
}
