// SPDX-License-Identifier: MIT
/*
 * Description: a collective mismatch on one of two simulated hosts
 * (CCOM_HOSTID, TCP over loopback between them) ends the communicator on
 * the other host too, without waiting for the mismatched ranks' processes
 * to go away.  2 x 2 and 2 x 3 ranks; the last rank calls AllReduce with
 * twice the count.  The ranks of its host must fail that op with
 * ccomInvalidUsage naming the calls.  A rank of the other host whose own
 * exchanges all matched may complete that op (its data was all matched
 * data), but then its next op must fail with ccomRemoteError within 2 s
 * while the mismatched host's ranks still hold their communicator (8 s):
 * the failing ranks revoke towards their network peers.
 */
#include "test_util.h"

#define COUNT 1024
#define HOLD_S 8

static ccomUniqueId id;

static int rank_main(int rank, int n, void *arg)
{
	float *buf = calloc(2 * COUNT, sizeof(float));
	int host = rank * 2 / n, odd = rank == n - 1;
	ccomComm_t comm;
	ccomResult_t res;
	char hid[32];
	double t0;

	(void)arg;
	T_CHECK(buf, "out of memory");
	snprintf(hid, sizeof(hid), "mmh-host-%d", host);
	setenv("CCOM_HOSTID", hid, 1);
	setenv("CCOM_OP_TIMEOUT", "60", 1);
	T_CCOM(ccomCommInitRank(&comm, n, id, rank), ccomSuccess);
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	t0 = t_now();
	T_CCOM(ccomAllReduce(buf, buf, odd ? 2 * COUNT : COUNT, ccomFloat32, ccomSum, comm, NULL),
	       ccomSuccess);
	res = ccomCommSynchronize(comm);
	printf("rank %d (host %d): mismatched op: %s after %.2f s: %s\n", rank, host,
	       ccomGetErrorString(res), t_now() - t0, ccomGetLastError(comm));
	fflush(stdout);
	if (host == 1) {
		T_CHECK(res == ccomInvalidUsage, "rank %d: got %s, want ccomInvalidUsage", rank,
			ccomGetErrorString(res));
		T_CHECK(t_has_words(ccomGetLastError(comm), "collective mismatch", "count 2048",
				    "count 1024", NULL), "rank %d: the message does not name both calls", rank);
		sleep(HOLD_S);		/* the comm stays: only the revoke can tell host 0 */
		ccomCommAbort(comm);
		free(buf);
		return T_PASS;
	}
	if (res == ccomSuccess) {
		t0 = t_now();
		T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		res = ccomCommSynchronize(comm);
		printf("rank %d (host 0): next op: %s after %.2f s: %s\n", rank, ccomGetErrorString(res),
		       t_now() - t0, ccomGetLastError(comm));
		fflush(stdout);
		T_CHECK(res == ccomRemoteError, "rank %d: next op got %s, want ccomRemoteError", rank,
			ccomGetErrorString(res));
	} else {
		T_CHECK(res == ccomInvalidUsage || res == ccomRemoteError,
			"rank %d: got %s, want ccomInvalidUsage or ccomRemoteError", rank,
			ccomGetErrorString(res));
	}
	T_CHECK(t_now() - t0 < 2, "rank %d: learnt of the mismatch after %.2f s, not from the revoke",
		rank, t_now() - t0);
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

int main(void)
{
	int codes[6], n;

	for (n = 4; n <= 6; n += 2) {
		T_CHECK(!t_fork_ranks_id(n, rank_main, NULL, codes, 60, &id),
			"%d ranks: a rank failed (codes %d %d %d %d ...)", n, codes[0], codes[1],
			codes[2], codes[3]);
		printf("%d ranks on 2 hosts: the mismatch ended the comm on both hosts\n", n);
	}
	return T_PASS;
}
