// SPDX-License-Identifier: MIT
/*
 * Description: a rank killed (SIGKILL) in the middle of a 64 MiB allreduce
 * makes every other rank's collective fail with ccomRemoteError whose
 * message names the dead rank (no hang: CCOM_OP_TIMEOUT=60 and the test's
 * own timeout bound it), ccomCommGetAsyncError reports the error, and a
 * later collective on the broken communicator fails at once.  Run on 4
 * ranks with the direct engine and again with CCOM_ALGO=ring (shm FIFOs).
 */
#include <signal.h>

#include "fail_util.h"

#define VICTIM 2
#define COUNT (16u << 20)	/* floats: 64 MiB */

static int dead_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	float *buf;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "60", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	buf = calloc(COUNT, sizeof(float));
	T_CHECK(buf, "out of memory");
	T_CCOM(ccomAllReduce(buf, buf, 1024, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	if (rank == VICTIM) {
		usleep(20000);
		raise(SIGKILL);
	}
	if (ct_sync_after_kill(comm, rank, VICTIM, "collective", 0.02))
		return T_FAIL;
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

static int run(struct ct_job *j)
{
	int codes[4], r;

	j->nranks = 4;
	t_fork_ranks_id(4, dead_rank, j, codes, 120, &j->id);
	for (r = 0; r < 4; r++) {
		int want = r == VICTIM ? 128 + SIGKILL : 0;

		if (codes[r] != want) {
			fprintf(stderr, "FAIL: rank %d exited with %d, want %d\n", r, codes[r], want);
			return T_FAIL;
		}
	}
	return T_PASS;
}

int main(void)
{
	struct ct_job direct = { 0 }, ring = { .env = { "CCOM_ALGO=ring" } };

	if (run(&direct))
		return T_FAIL;
	printf("direct engine: every survivor failed with ccomRemoteError naming rank 2\n");
	if (run(&ring))
		return T_FAIL;
	printf("ring over shm FIFOs: every survivor failed with ccomRemoteError naming rank 2\n");
	return T_PASS;
}
