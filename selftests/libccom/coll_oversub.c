// SPDX-License-Identifier: MIT
/*
 * Description: 8 ranks on this host (more ranks than cores on the 2-CPU
 * test machines) run 10,000 8-byte allreduces, each synchronized, and
 * check the last result.  A hang detector, not a speed test: the only
 * bound is the generous timeout of the forked job.
 */
#include "coll_util.h"

#define ITERS 10000

static int loop_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	int32_t in[2], out[2] = { 0 };
	double t0 = t_now();
	int i;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (i = 0; i < ITERS; i++) {
		in[0] = rank + i;
		in[1] = 1;
		T_CCOM(ccomAllReduce(in, out, 2, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(out[0] == n * (n - 1) / 2 + n * i && out[1] == n,
			"iteration %d: got %d %d", i, out[0], out[1]);
	}
	if (rank == 0)
		printf("%d ranks: %d synchronized 8-byte allreduces in %.2f s\n", n, ITERS,
		       t_now() - t0);
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	return ct_run(&j, 8, loop_rank, 240);
}
