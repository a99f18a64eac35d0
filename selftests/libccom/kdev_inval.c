// SPDX-License-Identifier: MIT
/*
 * Description: the kdev registration cache never reads a stale buffer.
 * With CCOM_KDEV=1 on 2 and 3 ranks, between two collectives on the same
 * address each rank (a) munmaps its buffer and maps new memory at the same
 * address (MAP_FIXED), (b) drops its pages with madvise(MADV_DONTNEED),
 * (c) frees a large malloc'd send buffer and mallocs it again (glibc gives
 * back the same address), (d) does the same with the receive buffer, and
 * writes new values each time; every allreduce/allgather result must be
 * computed from the new contents (a stale registration would read the old
 * pinned pages and leave the new buffer untouched).  After (a), (b) and
 * (c) the same buffer is also the input of a ReduceScatter, an AlltoAll,
 * a Reduce and a Broadcast, so that each collective the kdev path serves
 * meets a re-registered buffer.  (e) Changes that keep the pages (the
 * split of a transparent huge page by madvise() of a neighbouring page
 * and by fork()) must neither fail a collective nor make it read a stale
 * page.  run-vm runs this test again with
 * CCOM_KDEV_MAP=1, where a stale grant would be a stale mapping in the
 * peers.  Afterwards the driver's counters must be zero.  SKIPs without
 * /dev/nccom.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kdev_util.h"

#define N (1u << 20)		/* int32 elements: 4 MiB */

static int32_t val(int rank, size_t i, int gen)
{
	return (int32_t)((i * 7 + (size_t)rank * 13 + (size_t)gen * 5) % 1000);
}

static void fill(int32_t *b, int rank, int gen)
{
	for (size_t i = 0; i < N; i++)
		b[i] = val(rank, i, gen);
}

static int check_sum(const int32_t *b, int n, int gen, const char *what)
{
	for (size_t i = 0; i < N; i++) {
		int32_t want = 0;

		for (int r = 0; r < n; r++)
			want += val(r, i, gen);
		T_CHECK(b[i] == want, "%s: element %zu is %d, want %d (stale registration?)", what,
			i, b[i], want);
	}
	return T_PASS;
}

static int allreduce(ccomComm_t comm, const void *s, void *r)
{
	T_CCOM(ccomAllReduce(s, r, N, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	return T_PASS;
}

/* Values of @b (generation @gen) reach every other collective's output, sampled every 61st. */
static int other_colls(ccomComm_t comm, int rank, int n, int32_t *b, int32_t *out, int gen,
		       const char *what)
{
	size_t cnt = N / (size_t)n, i;
	int root = gen % n, p;
	int32_t want;

	fill(b, rank, gen);
	T_CCOM(ccomReduceScatter(b, out, cnt, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < cnt; i += 61) {
		for (want = 0, p = 0; p < n; p++)
			want += val(p, (size_t)rank * cnt + i, gen);
		T_CHECK(out[i] == want, "reducescatter %s: element %zu is %d, want %d", what, i,
			out[i], want);
	}
	T_CCOM(ccomAlltoAll(b, out, cnt, ccomInt32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (p = 0; p < n; p++)
		for (i = 0; i < cnt; i += 61)
			T_CHECK(out[(size_t)p * cnt + i] == val(p, (size_t)rank * cnt + i, gen),
				"alltoall %s: block %d element %zu", what, p, i);
	T_CCOM(ccomReduce(b, out, N, ccomInt32, ccomSum, root, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; rank == root && i < N; i += 61) {
		for (want = 0, p = 0; p < n; p++)
			want += val(p, i, gen);
		T_CHECK(out[i] == want, "reduce %s: element %zu is %d, want %d", what, i, out[i],
			want);
	}
	T_CCOM(ccomBroadcast(b, out, N, ccomInt32, root, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < N; i += 61)
		T_CHECK(out[i] == val(root, i, gen), "broadcast %s: element %zu is %d, want %d",
			what, i, out[i], val(root, i, gen));
	return T_PASS;
}

#define HUGE_SZ (2ul << 20)

/*
 * (e) Changes that keep the pages: the buffer starts one page into a
 * transparent huge page; dropping that first page splits the PMD, and so
 * does a fork (the DataLoader workers of a training job). The kernel
 * notifies the whole huge page, the pinned pages stay mapped, and the next
 * collective must neither fail nor read a stale page.
 */
static int spurious(ccomComm_t comm, int rank, int n)
{
	size_t bytes = N * sizeof(int32_t), area = bytes + 3 * HUGE_SZ;
	char *a = mmap(NULL, area, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *h;
	int32_t *b;
	pid_t pid;
	int st;

	T_CHECK(a != MAP_FAILED, "mmap");
	h = (char *)(((uintptr_t)a + HUGE_SZ - 1) & ~(HUGE_SZ - 1));
	madvise(h, bytes + HUGE_SZ, MADV_HUGEPAGE);
	memset(h, 1, 4096);
	b = (int32_t *)(h + 4096);
	fill(b, rank, 11);
	if (allreduce(comm, b, b) || check_sum(b, n, 11, "allreduce on a huge page"))
		return T_FAIL;
	T_CHECK(madvise(h, 4096, MADV_DONTNEED) == 0, "madvise");
	fill(b, rank, 12);
	if (allreduce(comm, b, b) || check_sum(b, n, 12, "allreduce after a split of its huge page"))
		return T_FAIL;
	pid = fork();
	T_CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(0);
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "child");
	fill(b, rank, 13);
	if (allreduce(comm, b, b) || check_sum(b, n, 13, "allreduce after a fork"))
		return T_FAIL;
	munmap(a, area);
	return T_PASS;
}

static int inval_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t bytes = N * sizeof(int32_t);
	int32_t *b, *b2, *s, *r, *ag;
	ccomComm_t comm;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_CHECK(b != MAP_FAILED, "mmap");
	fill(b, rank, 1);
	if (allreduce(comm, b, b) || check_sum(b, n, 1, "first allreduce"))
		return T_FAIL;

	/* (a) unmap, map new memory at the same address */
	T_CHECK(munmap(b, bytes) == 0, "munmap");
	b2 = mmap(b, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	T_CHECK(b2 == b, "mmap MAP_FIXED at the old address");
	fill(b, rank, 2);
	if (allreduce(comm, b, b) || check_sum(b, n, 2, "allreduce after munmap + mmap"))
		return T_FAIL;
	ag = malloc(bytes * (size_t)n);
	T_CHECK(ag, "malloc");
	fill(b, rank, 5);
	T_CCOM(ccomAllGather(b, ag, N, ccomInt32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (int p = 0; p < n; p++)
		for (size_t i = 0; i < N; i += 997)
			T_CHECK(ag[(size_t)p * N + i] == val(p, i, 5), "allgather block %d element %zu", p, i);
	if (other_colls(comm, rank, n, b, ag, 8, "after munmap + mmap"))
		return T_FAIL;

	/* (b) pages dropped: the same range now maps fresh zero pages */
	T_CHECK(madvise(b, bytes, MADV_DONTNEED) == 0, "madvise");
	fill(b, rank, 3);
	if (allreduce(comm, b, b) || check_sum(b, n, 3, "allreduce after MADV_DONTNEED"))
		return T_FAIL;
	T_CHECK(madvise(b, bytes, MADV_DONTNEED) == 0, "madvise");
	if (other_colls(comm, rank, n, b, ag, 9, "after MADV_DONTNEED"))
		return T_FAIL;
	munmap(b, bytes);

	/* (c) free and malloc the send buffer again (out of place) */
	s = malloc(bytes);
	r = malloc(bytes);
	T_CHECK(s && r, "malloc");
	fill(s, rank, 4);
	if (allreduce(comm, s, r) || check_sum(r, n, 4, "out-of-place allreduce"))
		return T_FAIL;
	free(s);
	s = malloc(bytes);
	T_CHECK(s, "malloc");
	fill(s, rank, 6);
	if (allreduce(comm, s, r) || check_sum(r, n, 6, "allreduce after free + malloc of the send buffer"))
		return T_FAIL;
	free(s);
	s = malloc(bytes);
	T_CHECK(s, "malloc");
	if (other_colls(comm, rank, n, s, ag, 10, "after free + malloc of the send buffer"))
		return T_FAIL;

	/* (d) the same with the receive buffer */
	free(r);
	r = malloc(bytes);
	T_CHECK(r, "malloc");
	memset(r, 0xee, bytes);
	fill(s, rank, 7);
	if (allreduce(comm, s, r) || check_sum(r, n, 7, "allreduce after free + malloc of the receive buffer"))
		return T_FAIL;
	if (spurious(comm, rank, n))
		return T_FAIL;
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	free(s);
	free(r);
	free(ag);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .env = { "CCOM_KDEV=1", "CCOM_DEBUG=INFO", "CCOM_DEBUG_SUBSYS=KDEV" } };

	KT_REQUIRE(3);
	for (int n = 2; n <= 3; n++) {
		if (ct_run(&j, n, inval_rank, 300))
			return T_FAIL;
		printf("%d ranks: results correct after unmap/remap, MADV_DONTNEED, free/malloc, THP split and fork\n", n);
		if (kt_counters_zero("after the invalidation cases"))
			return T_FAIL;
	}
	return T_PASS;
}
