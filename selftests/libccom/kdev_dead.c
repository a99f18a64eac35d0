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
#include "fail_util.h"
#include "kdev_util.h"

#define VICTIM 2
#define COUNT (4u << 20)	/* floats: 16 MiB */

static int dead_rank(int rank, int n, void *arg)
{
	ccomComm_t comm;
	float *buf;

	(void)n;
	if (ct_queue_work(arg, rank, "60", COUNT, COUNT, 4, &comm, &buf))
		return T_FAIL;
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

	KT_REQUIRE(4);
	if (ct_run_with_victim(&j, 4, dead_rank, 200, VICTIM))
		return T_FAIL;
	printf("every survivor failed with ccomRemoteError naming rank 2\n");
	return kt_counters_zero("after the kill-a-peer test");
}
