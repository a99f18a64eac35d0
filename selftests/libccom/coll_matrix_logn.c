// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with the log(n)-step
 * algorithms used between hosts for small messages: CCOM_ALGO=rd
 * (recursive-doubling AllReduce, Bruck AllGather) and CCOM_ALGO=tree (binomial-tree
 * Broadcast and Reduce, every root); the collectives they do not cover run
 * their ring algorithms.  Each on 2, 3, 5, 6 and 8 ranks over the shm
 * transport's FIFOs (powers of two, and the fold of 1, 2 and 1 extra ranks
 * or uneven subtrees), then on 3 ranks over TCP (CCOM_TRANSPORT=net);
 * every result is compared with a reference computed here.
 */
#include "coll_matrix.h"

int main(void)
{
	static const char *const algos[] = { "CCOM_ALGO=rd", "CCOM_ALGO=tree" };
	static const int sizes[] = { 2, 3, 5, 6, 8, 3 };
	struct ct_job j = { 0 };
	double t0;
	int a, i;

	for (a = 0; a < 2; a++) {
		j.env[0] = algos[a];
		for (i = 0; i < 6; i++) {
			j.env[1] = i == 5 ? "CCOM_TRANSPORT=net" : NULL;
			j.big = !t_sanitizer() || sizes[i] <= 4;
			t0 = t_now();
			if (ct_run(&j, sizes[i], ct_matrix_rank, 280))
				return T_FAIL;
			printf("%s, %d ranks%s: matrix passed in %.1f s\n", algos[a], sizes[i],
			       i == 5 ? " over TCP" : "", t_now() - t0);
			fflush(stdout);
		}
	}
	return T_PASS;
}
