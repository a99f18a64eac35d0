// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommAbort() while this rank's collective is blocked on
 * a peer that has not called it yet returns promptly (the progress thread
 * honours the abort flag; CCOM_OP_TIMEOUT=120 would otherwise hold it), and
 * the peer's later collective fails with ccomRemoteError naming the
 * aborted rank instead of hanging.  Then: ccomCommAbort() from a second
 * thread while the main thread is blocked in ccomCommSynchronize() makes
 * that call return an error promptly.
 */
#include "fail_util.h"

static int thread_abort_rank(int rank, int n, void *arg)
{
	float buf[64] = { 0 };

	(void)n;
	return ct_abort_absent_peer(arg, rank, buf, 64, 2, "ccomCommSynchronize");
}

static int abort_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	ccomResult_t res;
	float buf[64] = { 0 };
	double t0;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "120", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	T_CCOM(ccomAllReduce(buf, buf, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == 0) {
		T_CCOM(ccomAllReduce(buf, buf, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		usleep(200000);		/* the progress thread now waits for rank 1 */
		t0 = t_now();
		T_CCOM(ccomCommAbort(comm), ccomSuccess);
		printf("rank 0: ccomCommAbort returned after %.3f s\n", t_now() - t0);
		T_CHECK(t_now() - t0 < 60, "abort waited for the op timeout");
		return T_PASS;
	}
	sleep(1);
	/* The first may complete from data rank 0 published before aborting. */
	for (int i = 0; i < 2; i++) {
		T_CCOM(ccomAllReduce(buf, buf, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		res = ccomCommSynchronize(comm);
		if (res != ccomSuccess)
			break;
	}
	printf("rank 1: collective after the peer's abort: %s: %s\n", ccomGetErrorString(res),
	       ccomGetLastError(comm));
	if (ct_check_aborted_by_rank0(comm, rank, res))
		return T_FAIL;
	ccomCommDestroy(comm);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	if (ct_run(&j, 2, abort_rank, 100))
		return T_FAIL;
	return ct_run(&j, 2, thread_abort_rank, 100);
}
