// SPDX-License-Identifier: GPL-2.0
/*
 * Description: nccom.ko benchmark (not a pass/fail test). In one boot:
 *  - cross-process COPY bandwidth through the engine (process A registers
 *    and exports its buffer, B imports it and copies A -> B) for 64 KiB,
 *    1 MiB, 16 MiB and 256 MiB, next to a userspace memcpy of the same size
 *    in the same guest;
 *  - REDUCE fp32 sum bandwidth (dst = A's src + B's src) next to a plain
 *    userspace loop;
 *  - the same copy and reduction done by B in userspace straight from A's
 *    pages mapped through the grant (mmap of the dma-buf: the mapped
 *    single-copy path), when the driver has NCCOM_FEAT_DMABUF_MMAP;
 *  - signal -> wait round-trip latency between two processes (semaphore
 *    ping-pong through the ioctls), next to a pipe ping-pong.
 * Every figure is the median of several repetitions. Needs ~1 GiB free for
 * the 256 MiB size (tools/vm/run --mem 2048).
 *
 * usage: nccom_bench [-m max_bytes] [-r reps]
 */
#include <stdio.h>
#include <stdlib.h>

#include "nccom_utils.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static double gbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / (double)ns : 0.0;
}

static int die(const char *what)
{
	fprintf(stderr, "nccom_bench: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Times one descriptor from submit to completion; 0 on error. */
static uint64_t time_desc(struct nccom_ring *r, struct nccom_desc d)
{
	struct nccom_cqe c;
	uint64_t t0 = now_ns();

	if (nccom_ring_run(r, &d, 1, &c, 600000) != 1 || c.status) {
		fprintf(stderr, "nccom_bench: descriptor failed: %d\n", c.status);
		return 0;
	}
	return now_ns() - t0;
}

static void __attribute__((noinline)) add_f32(float *d, const float *a, const float *b,
					      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = a[i] + b[i];
}

/* More repetitions for the small sizes, whose timings are noisiest. */
static int reps_for(size_t len, int reps)
{
	if (len >= (64u << 20))
		return reps < 5 ? reps : 5;
	if (len <= (1u << 20))
		return reps * 3 < 63 ? reps * 3 : 63;
	return reps;
}

static int bench_bw(int fd, uint32_t hremote, const uint8_t *view,
		    size_t max, int reps)
{
	static const size_t sizes[] = { 64 << 10, 1 << 20, 16 << 20, 256 << 20 };
	uint8_t *dst = nccom_alloc(max), *loc = nccom_alloc(max);
	uint64_t te_v[64], tm_v[64], tr_v[64], tl_v[64], te, tm, tr, tl;
	uint64_t tvc_v[64], tvr_v[64], tvc = 0, tvr = 0;
	uint32_t hdst, hloc;
	struct nccom_ring r;
	unsigned int s;
	int i, n;

	if (!dst || !loc)
		return die("alloc");
	memset(dst, 0, max);
	fill_pattern(loc, max, 3);
	if (_test_cmd_mem_register(fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, dst, max, &hdst) ||
	    _test_cmd_mem_register(fd, NCCOM_MEM_READ, loc, max, &hloc) ||
	    nccom_ring_create(fd, 0, 8, &r))
		return die("register/queue");
	printf("%-10s %14s %14s %14s %14s %14s %14s\n", "bytes", "engine GB/s",
	       "memcpy GB/s", "reduce GB/s", "loop GB/s", "map-copy GB/s",
	       "map-red GB/s");
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		size_t len = sizes[s];

		if (len > max)
			break;
		n = reps_for(len, reps);
		/* warm up both paths once */
		time_desc(&r, desc_copy(hdst, 0, hremote, 0, len, 0));
		memcpy(dst, loc, len);
		/*
		 * The four measurements are interleaved rep by rep, so that
		 * noise from other load on the host hits all of them alike.
		 */
		for (i = 0; i < n; i++) {
			uint64_t t0;

			te_v[i] = time_desc(&r, desc_copy(hdst, 0, hremote, 0, len, i));
			t0 = now_ns();
			memcpy(dst, loc, len);
			__asm__ __volatile__("" : : "r"(dst) : "memory");
			tm_v[i] = now_ns() - t0;
			tr_v[i] = time_desc(&r, desc_reduce(NCCOM_DTYPE_FP32, NCCOM_REDOP_SUM,
							    hdst, 0, hremote, 0, hloc, 0,
							    len / 4, i));
			t0 = now_ns();
			add_f32((float *)dst, (const float *)dst, (const float *)loc, len / 4);
			tl_v[i] = now_ns() - t0;
			tvc_v[i] = tvr_v[i] = 0;
			if (view) {
				t0 = now_ns();
				memcpy(dst, view, len);
				__asm__ __volatile__("" : : "r"(dst) : "memory");
				tvc_v[i] = now_ns() - t0;
				t0 = now_ns();
				add_f32((float *)dst, (const float *)view,
					(const float *)loc, len / 4);
				tvr_v[i] = now_ns() - t0;
			}
			if (!te_v[i] || !tr_v[i])
				return 1;
		}
		te = median(te_v, n);
		tm = median(tm_v, n);
		tr = median(tr_v, n);
		tl = median(tl_v, n);
		if (view) {
			tvc = median(tvc_v, n);
			tvr = median(tvr_v, n);
		}
		printf("%-10zu %14.3f %14.3f %14.3f %14.3f %14.3f %14.3f\n", len,
		       gbps(len, te), gbps(len, tm), gbps(len, tr), gbps(len, tl),
		       gbps(len, tvc), gbps(len, tvr));
		fflush(stdout);
	}
	nccom_ring_destroy(&r);
	_test_cmd_destroy(fd, hdst);
	_test_cmd_destroy(fd, hloc);
	nccom_free(dst, max);
	nccom_free(loc, max);
	return 0;
}

/* Semaphore ping-pong: B signals ping=k and waits pong>=k; A mirrors. */
static int bench_latency(int fd, int sock, uint32_t ping, uint32_t pong, int iters)
{
	uint64_t t[7], t0, k = 0;
	int b, i;

	for (b = 0; b < 7; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++) {
			k++;
			if (_test_cmd_sem_signal(fd, ping, k) ||
			    _test_cmd_sem_wait(fd, pong, k, deadline_ms(10000), NULL))
				return die("sem ping-pong");
		}
		t[b] = (now_ns() - t0) / iters;
	}
	printf("signal->wait round trip (2 processes, ioctls): %.2f us median of 7x%d\n",
	       median(t, 7) / 1000.0, iters);
	(void)sock;
	return 0;
}

static void latency_peer(int fd, uint32_t ping, uint32_t pong, uint64_t total)
{
	uint64_t k;

	for (k = 1; k <= total; k++) {
		if (_test_cmd_sem_wait(fd, ping, k, deadline_ms(10000), NULL) ||
		    _test_cmd_sem_signal(fd, pong, k))
			_exit(1);
	}
}

static void pipe_latency(int iters)
{
	int ab[2], ba[2], b, i;
	uint64_t t[7], t0;
	char c = 0;
	pid_t pid;

	if (pipe(ab) || pipe(ba))
		return;
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 7 * iters; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (b = 0; b < 7; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				return;
		t[b] = (now_ns() - t0) / iters;
	}
	waitpid(pid, NULL, 0);
	printf("pipe round trip (2 processes, reference):     %.2f us median of 7x%d\n",
	       median(t, 7) / 1000.0, iters);
}

int main(int argc, char **argv)
{
	size_t max = 256 << 20;
	int reps = 11, opt, sv[2], fd, rfd, iters = 2000, status;
	uint32_t hr, ping, pong, tag;
	struct nccom_info info;
	uint8_t *view = NULL;
	pid_t pid;

	while ((opt = getopt(argc, argv, "m:r:i:")) != -1) {
		if (opt == 'm')
			max = strtoull(optarg, NULL, 0);
		else if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'i')
			iters = atoi(optarg);
	}
	if (reps < 1 || reps > 64)
		reps = 11;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return die("socketpair");
	pid = fork();
	if (pid == 0) {
		/* Process A: owns the source memory and the pong semaphore. */
		uint8_t *src = nccom_alloc(max);
		uint32_t hs, hping, hpong;
		int dfd, s1, s2, afd = nccom_open();
		char go;

		if (afd < 0 || !src)
			_exit(2);
		fill_pattern(src, max, 1);
		if (_test_cmd_mem_register(afd, NCCOM_MEM_READ, src, max, &hs) ||
		    _test_cmd_mem_export(afd, hs, &dfd) || send_fd(sv[1], dfd, 0))
			_exit(3);
		if (_test_cmd_sem_create(afd, 0, &hpong) || _test_cmd_sem_export(afd, hpong, &s2) ||
		    send_fd(sv[1], s2, 2))
			_exit(4);
		s1 = recv_fd(sv[1], &tag);
		if (s1 < 0 || _test_cmd_sem_import(afd, s1, &hping))
			_exit(5);
		latency_peer(afd, hping, hpong, 7ULL * iters);
		if (read_full(sv[1], &go, 1))
			_exit(6);
		_exit(0);
	}
	fd = nccom_open();
	if (fd < 0)
		return die("open " NCCOM_DEV);
	rfd = recv_fd(sv[0], &tag);
	if (rfd < 0 || _test_cmd_mem_import(fd, NCCOM_MEM_READ, rfd, 0, 0, &hr, NULL))
		return die("import A's buffer");
	printf("# nccom_bench: COPY and REDUCE(fp32 sum) A->B across processes, "
	       "median of %d reps (x3 up to 1 MiB, 5 from 64 MiB up); GB/s = destination bytes / ns\n", reps);
	/* The mapped single-copy path: A's pages in B's address space. */
	if (!_test_cmd_get_info(fd, &info) &&
	    (info.out_features & NCCOM_FEAT_DMABUF_MMAP)) {
		view = mmap(NULL, max, PROT_READ, MAP_SHARED, rfd, 0);
		if (view == MAP_FAILED)
			return die("mmap of A's grant");
	} else {
		printf("# no NCCOM_FEAT_DMABUF_MMAP: map-copy/map-red columns are 0\n");
	}
	if (bench_bw(fd, hr, view, max, reps))
		return 1;
	if (view)
		munmap(view, max);
	{
		int s2 = recv_fd(sv[0], &tag), s1;

		if (s2 < 0 || _test_cmd_sem_import(fd, s2, &pong) ||
		    _test_cmd_sem_create(fd, 0, &ping) || _test_cmd_sem_export(fd, ping, &s1) ||
		    send_fd(sv[0], s1, 1))
			return die("semaphores");
	}
	if (bench_latency(fd, sv[0], ping, pong, iters))
		return 1;
	pipe_latency(iters);
	if (write_full(sv[0], "x", 1) || waitpid(pid, &status, 0) != pid || !child_ok(status))
		return die("peer process");
	close(fd);
	return 0;
}
