// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommAbort on the kdev path (CCOM_KDEV=1, 2 ranks).
 * (1) Rank 0 queues eight 16 MiB allreduces and aborts from a second
 * thread while they run on the engine: its ccomCommSynchronize must fail
 * promptly (the queue is destroyed: queued descriptors are cancelled), and
 * rank 1's collectives must fail with ccomRemoteError saying that rank 0
 * aborted (its semaphore waits fail instead of hanging; CCOM_OP_TIMEOUT=120
 * would give ccomTimeout).  (2) Rank 0 aborts while blocked in the grant
 * exchange of a collective rank 1 never joins.  After each case every
 * driver object and pin must be gone.  SKIPs without /dev/nccom.
 */
#include "fail_util.h"
#include "kdev_util.h"

#define COUNT (4u << 20)

static int running_rank(int rank, int n, void *arg)
{
	ccomComm_t comm;
	ccomResult_t res;
	float *buf;

	(void)n;
	if (ct_queue_work(arg, rank, "120", COUNT, COUNT, 8, &comm, &buf))
		return T_FAIL;
	res = ct_sync_under_abort(comm, rank, "synchronize");
	if (rank == 0) {
		T_CHECK(res != ccomSuccess, "eight 16 MiB allreduces finished within 0.3 s; the abort had nothing to cancel");
		free(buf);
		return T_PASS;
	}
	if (ct_check_aborted_by_rank0(comm, rank, res))
		return T_FAIL;
	ccomCommDestroy(comm);
	free(buf);
	return T_PASS;
}

static int exchange_rank(int rank, int n, void *arg)
{
	float buf[1024] = { 0 };

	(void)n;
	return ct_abort_absent_peer(arg, rank, buf, 1024, 3, "the grant exchange");
}

int main(void)
{
	struct ct_job j = { .env = { "CCOM_KDEV=1" } };

	KT_REQUIRE(2);
	if (ct_run(&j, 2, running_rank, 200) || kt_counters_zero("after abort during the engine's work"))
		return T_FAIL;
	if (ct_run(&j, 2, exchange_rank, 200) || kt_counters_zero("after abort in the exchange"))
		return T_FAIL;
	return T_PASS;
}
