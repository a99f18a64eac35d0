// SPDX-License-Identifier: MIT
/*
 * Description: a rank killed (SIGKILL) in the middle of a 64 MiB allreduce
 * makes every other rank's collective fail with ccomRemoteError whose
 * message names the dead rank (no hang: CCOM_OP_TIMEOUT=60 and the test's
 * own timeout bound it), ccomCommGetAsyncError reports the error, and a
 * later collective on the broken communicator fails at once.  Run on 4
 * ranks with the direct engine and again with CCOM_ALGO=ring (shm FIFOs).
 */
#include "fail_util.h"

#define VICTIM 2
#define COUNT (16u << 20)	/* floats: 64 MiB */

static int dead_rank(int rank, int n, void *arg)
{
	ccomComm_t comm;
	float *buf;

	(void)n;
	if (ct_queue_work(arg, rank, "60", COUNT, 1024, 1, &comm, &buf))
		return T_FAIL;
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
	return ct_run_with_victim(j, 4, dead_rank, 120, VICTIM);
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
