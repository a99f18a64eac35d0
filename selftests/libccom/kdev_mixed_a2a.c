// SPDX-License-Identifier: MIT
/*
 * Description: an AlltoAll of 2 ranks where only one rank is in place,
 * with CCOM_KDEV=1 (the engine forced, so no automatic vote steers it):
 * every result is checked, 20 times in each direction (rank 0 in place
 * and rank 1 not, then the other way round).  The engine's in-place
 * schedule trades blocks with in-place peers only; before the mixed case
 * was sent to shm (coll/kdev_sched.c) the out-of-place rank got the wrong
 * block in 19-25 of 40 runs in a 6.12 guest.  Skips (77) without a usable
 * /dev/nccom.
 */
#include "kdev_util.h"

#define PER (128 * 1024)	/* floats per block: 1 MiB per rank */
#define ITERS 20

/* Block p of rank r's input: r * 100 + p + (i % 7) / 2. */
static void fill(float *b, int rank)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < PER; i++)
			b[p * PER + i] = (float)(rank * 100 + p) + (float)(i % 7) / 2;
}

static int check(const float *b, int rank, int inplace_rank, int it)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < PER; i++)
			T_CHECK(b[p * PER + i] == (float)(p * 100 + rank) + (float)(i % 7) / 2,
				"rank %d (rank %d in place), run %d: block %d [%zu] = %g", rank,
				inplace_rank, it, p, i, b[p * PER + i]);
	return T_PASS;
}

static int mixed_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	float *a = malloc(2 * PER * sizeof(float)), *b = malloc(2 * PER * sizeof(float));
	ccomComm_t comm;
	int in, it;

	(void)n;
	T_CHECK(a && b, "malloc");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (in = 0; in < 2; in++) {
		for (it = 0; it < ITERS; it++) {
			float *out = rank == in ? a : b;

			fill(a, rank);
			memset(b, 0, 2 * PER * sizeof(float));
			T_CCOM(ccomAlltoAll(a, out, PER, ccomFloat32, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			if (check(out, rank, in, it))
				return T_FAIL;
		}
	}
	ccomCommDestroy(comm);
	free(a);
	free(b);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .nranks = 2, .env = { "CCOM_KDEV=1" } };
	int codes[2];

	KT_REQUIRE(2);
	T_CHECK(t_fork_ranks_id(2, mixed_rank, &j, codes, 300, &j.id) == 0,
		"ranks exited with %d %d", codes[0], codes[1]);
	return T_PASS;
}
