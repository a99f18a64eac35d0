// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with the kdev
 * transport forced on (CCOM_KDEV=1: every collective runs through the nccom
 * engine on the user's malloc'd buffers; grouped send/recv stay on shm),
 * compared with the same reference (coll_matrix.h) and checked for
 * overruns.  2 ranks: the whole matrix (every collective x dtype x op x
 * in/out-of-place x counts {0, 1, 7, 1023}, plus 1 Mi + 3 elements for
 * float32/sum and int8/max).  3 and 4 ranks (uneven slices, more peers):
 * every collective x op x in/out-of-place x counts {1, 7, 1023} for six
 * dtypes covering every element size and float format, plus the 1 Mi + 3
 * cases -- the emulated VM is too slow for the full matrix three times.
 * After each job the driver's counters must be back to zero.
 * CCOM_TEST_MATRIX_RANKS (e.g. "2,3") runs only the jobs of those rank
 * counts: run-vm's re-run with CCOM_KDEV_MAP=1 leaves out the 4-rank job
 * (35-45 s per kernel in TCG) and names it kdev_matrix_map4.  SKIPs
 * without /dev/nccom (run it with selftests/libccom/kdev/run-vm).
 */
#include <stdbool.h>

#include "coll_matrix.h"
#include "kdev_util.h"

static int kt_matrix_subset(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz)
{
	static const ccomDataType_t dts[] = { ccomInt8, ccomUint32, ccomInt64, ccomFloat16,
					      ccomFloat64, ccomBfloat16 };
	static const size_t counts[] = { 1, 7, 1023 };
	struct ct_case c;
	int k, d, op, ip, ci;

	for (k = 0; k < K_N; k++)
		for (d = 0; d < 6; d++)
			for (op = 0; op < (ct_is_reduction(k) ? ccomNumOps : 1); op++)
				for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++)
					for (ci = 0; ci < 3; ci++) {
						c = (struct ct_case){ k, ip, (int)((counts[ci] + 1) % (size_t)n),
								      dts[d], (ccomRedOp_t)op, counts[ci] };
						if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
							return T_FAIL;
					}
	return T_PASS;
}

/* Two ranks run the whole matrix; three and four the subset above. */
static int kt_matrix_rank(int rank, int n, void *arg)
{
	return ct_matrix_rank_with(rank, n, arg, n == 2 ? ct_matrix_small : kt_matrix_subset);
}

/* Is @n in CCOM_TEST_MATRIX_RANKS (a comma-separated list; unset: all)? */
static bool kt_ranks_wanted(int n)
{
	const char *e = getenv("CCOM_TEST_MATRIX_RANKS");
	char *end;
	long v;

	if (!e || !*e)
		return true;
	while (*e) {
		v = strtol(e, &end, 10);
		if (end == e || (*end && *end != ',')) {
			fprintf(stderr, "CCOM_TEST_MATRIX_RANKS=%s: want rank counts separated by commas, e.g. 2,3\n",
				getenv("CCOM_TEST_MATRIX_RANKS"));
			exit(T_FAIL);
		}
		if (v == n)
			return true;
		e = *end ? end + 1 : end;
	}
	return false;
}

int main(void)
{
	static const int sizes[] = { 2, 3, 4 };
	struct ct_job j = { .env = { "CCOM_KDEV=1" }, .big = 1 };
	double t0;
	int i, ran = 0;

	KT_REQUIRE(4);
	for (i = 0; i < 3; i++) {
		if (!kt_ranks_wanted(sizes[i]))
			continue;
		ran++;
		t0 = t_now();
		if (ct_run(&j, sizes[i], kt_matrix_rank, 400))
			return T_FAIL;
		printf("%d ranks: kdev matrix passed in %.1f s\n", sizes[i], t_now() - t0);
		fflush(stdout);
		if (kt_counters_zero("after the matrix"))
			return T_FAIL;
	}
	if (!ran) {
		fprintf(stderr, "CCOM_TEST_MATRIX_RANKS=%s names none of 2, 3, 4\n",
			getenv("CCOM_TEST_MATRIX_RANKS"));
		return T_FAIL;
	}
	return T_PASS;
}
