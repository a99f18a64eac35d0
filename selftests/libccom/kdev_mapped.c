// SPDX-License-Identifier: MIT
/*
 * Description: the mapped single-copy AllReduce (CCOM_KDEV=1
 * CCOM_KDEV_MAP=1) on malloc'd buffers, 2 and 3 ranks: int32 sum, fp32
 * max, fp64 avg, in and out of place, sizes that do not divide evenly
 * into the slices, every result checked; and proof that the path ran:
 * the engines' byte counter (GET_INFO) grows by less than 1/16 of the data
 * with the mapped path, and by at least the data with CCOM_KDEV_MAP=0 in
 * the same test (so the check can fail).  Afterwards the driver's
 * counters must be zero.  SKIPs without /dev/nccom or without
 * NCCOM_FEAT_DMABUF_MMAP.
 */
#include <math.h>
#include <stdbool.h>
#include <sys/ioctl.h>

#include "kdev_util.h"

#define COUNT ((1u << 20) + 77)	/* elements */
#define ITERS 3

/* Sum of the engines' destination bytes over every device. */
static long long engine_bytes(void)
{
	struct nccom_dev_info dev[16];
	struct nccom_info info = { .size = sizeof(info), .dev_count = 16,
				   .dev_entry_size = sizeof(dev[0]) };
	long long sum = 0;
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);

	info.devs_uptr = (uintptr_t)dev;
	if (fd < 0 || ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (unsigned int i = 0; i < info.dev_count && i < 16; i++)
		sum += (long long)dev[i].bytes;
	return sum;
}

static double in_val(int rank, size_t i)
{
	return (double)((i * 7 + (size_t)rank * 13) % 1000);
}

static int run_i32_sum(ccomComm_t comm, int rank, int n, bool inplace)
{
	int32_t *s = malloc(COUNT * sizeof(*s)), *r = inplace ? s : malloc(COUNT * sizeof(*r));

	T_CHECK(s && r, "malloc");
	for (size_t i = 0; i < COUNT; i++)
		s[i] = (int32_t)in_val(rank, i);
	T_CCOM(ccomAllReduce(s, r, COUNT, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (size_t i = 0; i < COUNT; i++) {
		int32_t want = 0;

		for (int p = 0; p < n; p++)
			want += (int32_t)in_val(p, i);
		T_CHECK(r[i] == want, "rank %d int32 sum%s: element %zu is %d, want %d", rank,
			inplace ? " in place" : "", i, r[i], want);
	}
	if (!inplace)
		free(r);
	free(s);
	return T_PASS;
}

static int run_f32_max(ccomComm_t comm, int rank, int n)
{
	float *s = malloc(COUNT * sizeof(*s)), *r = malloc(COUNT * sizeof(*r));

	T_CHECK(s && r, "malloc");
	for (size_t i = 0; i < COUNT; i++)
		s[i] = (float)in_val(rank, i) - 500.0f;
	T_CCOM(ccomAllReduce(s, r, COUNT, ccomFloat32, ccomMax, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (size_t i = 0; i < COUNT; i++) {
		float want = -1e9f;

		for (int p = 0; p < n; p++)
			want = fmaxf(want, (float)in_val(p, i) - 500.0f);
		T_CHECK(r[i] == want, "rank %d fp32 max: element %zu is %g, want %g", rank, i,
			r[i], want);
	}
	free(s);
	free(r);
	return T_PASS;
}

static int run_f64_avg(ccomComm_t comm, int rank, int n)
{
	double *b = malloc(COUNT * sizeof(*b));

	T_CHECK(b, "malloc");
	for (size_t i = 0; i < COUNT; i++)
		b[i] = in_val(rank, i);
	T_CCOM(ccomAllReduce(b, b, COUNT, ccomFloat64, ccomAvg, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (size_t i = 0; i < COUNT; i++) {
		double want = 0;

		for (int p = 0; p < n; p++)
			want += in_val(p, i);
		want /= n;
		T_CHECK(fabs(b[i] - want) < 1e-9, "rank %d fp64 avg: element %zu is %g, want %g",
			rank, i, b[i], want);
	}
	free(b);
	return T_PASS;
}

static int mapped_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (int it = 0; it < ITERS; it++)
		if (run_i32_sum(comm, rank, n, false) || run_i32_sum(comm, rank, n, true) ||
		    run_f32_max(comm, rank, n) || run_f64_avg(comm, rank, n))
			return T_FAIL;
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	return T_PASS;
}

/* Bytes of AllReduce output the ranks computed in one job. */
static long long job_bytes(int n)
{
	return (long long)ITERS * n * (long long)COUNT * (4 + 4 + 4 + 8);
}

int main(void)
{
	struct ct_job on = { .env = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=1", "CCOM_DEBUG=INFO",
				      "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct ct_job off = { .env = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=0" } };
	struct nccom_info info = { .size = sizeof(info) };
	long long b0, b1, b2;
	int fd;

	KT_REQUIRE(3);
	fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	T_CHECK(fd >= 0 && ioctl(fd, NCCOM_IOC_GET_INFO, &info) == 0, "GET_INFO");
	close(fd);
	if (!(info.out_features & NCCOM_FEAT_DMABUF_MMAP))
		return t_skip("nccom.ko has no NCCOM_FEAT_DMABUF_MMAP");
	for (int n = 2; n <= 3; n++) {
		b0 = engine_bytes();
		if (ct_run(&on, n, mapped_rank, 300))
			return T_FAIL;
		b1 = engine_bytes();
		if (ct_run(&off, n, mapped_rank, 300))
			return T_FAIL;
		b2 = engine_bytes();
		T_CHECK(b0 >= 0 && b1 >= 0 && b2 >= 0, "GET_INFO device counters");
		printf("%d ranks: results correct; engine bytes: %lld with CCOM_KDEV_MAP=1, %lld with 0, %lld bytes of output\n",
		       n, b1 - b0, b2 - b1, job_bytes(n));
		T_CHECK(b1 - b0 < job_bytes(n) / 16,
			"CCOM_KDEV_MAP=1: the engines copied %lld bytes for %lld bytes of output: the mapped path did not run",
			b1 - b0, job_bytes(n));
		T_CHECK(b2 - b1 >= job_bytes(n) / 2,
			"CCOM_KDEV_MAP=0: the engines copied only %lld bytes for %lld bytes of output: the counter cannot tell the paths apart",
			b2 - b1, job_bytes(n));
		if (kt_counters_zero("after the mapped AllReduces"))
			return T_FAIL;
	}
	return T_PASS;
}
