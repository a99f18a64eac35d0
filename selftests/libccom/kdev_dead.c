// SPDX-License-Identifier: MIT
/*
 * Description: kill-a-peer on the kdev path.  Four ranks with CCOM_KDEV=1
 * run a 16 MiB allreduce on the nccom engine; rank 2 SIGKILLs itself while
 * the collectives are queued.  Every survivor must fail with
 * ccomRemoteError whose message names rank 2 (the driver turns the dead
 * process's semaphores into -EPIPE for their waiters; CCOM_OP_TIMEOUT=60
 * means a ccomTimeout would show the detection did not work), report it
 * through ccomCommGetAsyncError, fail the next collective at once, and
 * after all ranks are gone the driver's counters must be zero.  The
 * detection time of each survivor is printed (the target is 2 s;
 * no timing assertion, the VM is emulated).  SKIPs without /dev/nccom.
 */
#include <signal.h>

#include "fail_util.h"
#include "kdev_util.h"

#define VICTIM 2
#define COUNT (4u << 20)	/* floats: 16 MiB */

static int dead_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	float *buf;
	int i;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "60", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	buf = calloc(COUNT, sizeof(float));
	T_CHECK(buf, "out of memory");
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < 4; i++)
		T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	if (rank == VICTIM) {
		usleep(50000);
		raise(SIGKILL);
	}
	if (ct_sync_after_kill(comm, rank, VICTIM, "collective", 0.05))
		return T_FAIL;
	ccomCommDestroy(comm);
	free(buf);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .env = { "CCOM_KDEV=1" } };
	int codes[4], r;

	KT_REQUIRE(4);
	j.nranks = 4;
	t_fork_ranks_id(4, dead_rank, &j, codes, 200, &j.id);
	for (r = 0; r < 4; r++) {
		int want = r == VICTIM ? 128 + SIGKILL : 0;

		if (codes[r] != want) {
			fprintf(stderr, "FAIL: rank %d exited with %d, want %d\n", r, codes[r], want);
			return T_FAIL;
		}
	}
	printf("every survivor failed with ccomRemoteError naming rank 2\n");
	return kt_counters_zero("after the kill-a-peer test");
}
