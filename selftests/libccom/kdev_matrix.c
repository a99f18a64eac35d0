// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c (every collective x
 * dtype x op x in/out-of-place x counts {0, 1, 7, 1023}, plus 1 Mi + 3
 * elements for float32/sum and int8/max) with the kdev transport forced on
 * (CCOM_KDEV=1: every collective runs through the nccom engine on the
 * user's malloc'd buffers; send/recv stay on shm) on 2, 3 and 4 ranks,
 * compared with the same reference; then the driver's counters must be
 * back to zero.  SKIPs without /dev/nccom (run it with
 * selftests/libccom/kdev/run-vm).
 */
#include "coll_matrix.h"
#include "kdev_util.h"

int main(void)
{
	static const int sizes[] = { 2, 3, 4 };
	struct ct_job j = { .env = { "CCOM_KDEV=1" }, .big = 1 };
	double t0;
	int i;

	(void)ct_matrix_main;	/* coll_matrix.h's 1..8-rank driver is not used here */
	KT_REQUIRE(4);
	for (i = 0; i < 3; i++) {
		t0 = t_now();
		if (ct_run(&j, sizes[i], ct_matrix_rank, 400))
			return T_FAIL;
		printf("%d ranks: kdev matrix passed in %.1f s\n", sizes[i], t_now() - t0);
		fflush(stdout);
		if (kt_counters_zero("after the matrix"))
			return T_FAIL;
	}
	return T_PASS;
}
