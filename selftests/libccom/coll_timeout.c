// SPDX-License-Identifier: MIT
/*
 * Description: a collective whose peer stays alive but never joins fails
 * with ccomTimeout after CCOM_OP_TIMEOUT (set to 2 s here) with a message
 * naming CCOM_OP_TIMEOUT, on the LL path (small) and the direct engine
 * (large); ccomCommGetAsyncError then reports the timeout.
 */
#include "coll_util.h"

static int timeout_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t count = j->count;
	ccomResult_t res, async;
	ccomComm_t comm;
	float *buf;
	double t0;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "2", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	buf = calloc(count, sizeof(float));
	T_CHECK(buf, "out of memory");
	if (rank == 1) {
		sleep(6);	/* alive, but never joins */
		ccomCommAbort(comm);
		free(buf);
		return T_PASS;
	}
	t0 = t_now();
	T_CCOM(ccomAllReduce(buf, buf, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	printf("rank 0: %zu floats: %s after %.2f s: %s\n", count, ccomGetErrorString(res),
	       t_now() - t0, ccomGetLastError(comm));
	T_CHECK(res == ccomTimeout, "got %s, want ccomTimeout", ccomGetErrorString(res));
	T_CHECK(strstr(ccomGetLastError(comm), "CCOM_OP_TIMEOUT"), "message does not name CCOM_OP_TIMEOUT");
	T_CHECK(t_now() - t0 >= 1.9, "timed out before CCOM_OP_TIMEOUT");
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomTimeout, "async error %s", ccomGetErrorString(async));
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	j.count = 16;
	if (ct_run(&j, 2, timeout_rank, 60))
		return T_FAIL;
	j.count = 4 << 20;
	return ct_run(&j, 2, timeout_rank, 60);
}
