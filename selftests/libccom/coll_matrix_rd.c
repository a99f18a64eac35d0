// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_ALGO=rd:
 * recursive-doubling AllReduce (the other collectives run their ring
 * algorithms) on 2, 3, 5, 6 and 8 ranks over the shm transport's FIFOs,
 * so that both powers of two and the fold of 1, 2 and 1 extra ranks are
 * covered, then on 3 ranks over TCP (CCOM_TRANSPORT=net); every result is
 * compared with a reference computed here.
 */
#include "coll_matrix.h"

int main(void)
{
	static const int sizes[] = { 2, 3, 5, 6, 8 };
	struct ct_job j = { .env = { "CCOM_ALGO=rd" } };
	double t0;
	int i;

	for (i = 0; i < 6; i++) {
		int n = i < 5 ? sizes[i] : 3;

		if (i == 5)
			j.env[1] = "CCOM_TRANSPORT=net";
		j.big = !t_sanitizer() || n <= 4;
		t0 = t_now();
		if (ct_run(&j, n, ct_matrix_rank, 280))
			return T_FAIL;
		printf("%d ranks%s: matrix passed in %.1f s\n", n, i == 5 ? " over TCP" : "",
		       t_now() - t0);
		fflush(stdout);
	}
	return T_PASS;
}
