// SPDX-License-Identifier: MIT
/*
 * Description: 5,000 allreduces queued on two streams, alternating, each
 * reading the previous one's output (A[k] -> A[k+1]), run in issue order:
 * every link of the chain has the exact value only if op k ran after op
 * k-1.  5,000 records outnumber both the block allocated at start and
 * CCOM_OP_RECORDS_KEEP (proxy/stream.h), so records of both kinds are
 * recycled and the surplus freed (ASan checks the frees).  ccomStreamQuery reports ccomInProgress or ccomSuccess (never an
 * error) while queued and ccomSuccess after ccomStreamSynchronize; argument
 * errors of the stream API are checked.  2 and 3 ranks.
 */
#include "coll_util.h"

#define NOPS 5000
#define W 4

static int order_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomStream_t s[2];
	ccomComm_t comm;
	ccomResult_t q;
	uint64_t (*a)[W] = calloc(NOPS + 1, sizeof(*a)), want;
	int k, e;

	if (!a || ct_init(j, rank, &comm))
		return T_FAIL;
	for (e = 0; e < W; e++)
		a[0][e] = (uint64_t)rank + 1 + (uint64_t)e;
	T_CCOM(ccomStreamCreate(comm, &s[0]), ccomSuccess);
	T_CCOM(ccomStreamCreate(comm, &s[1]), ccomSuccess);
	for (k = 0; k < NOPS; k++)
		T_CCOM(ccomAllReduce(a[k], a[k + 1], W, ccomUint64, ccomSum, comm, s[k & 1]),
		       ccomSuccess);
	q = ccomStreamQuery(s[1]);
	T_CHECK(q == ccomInProgress || q == ccomSuccess, "query while queued: %s",
		ccomGetErrorString(q));
	T_CCOM(ccomStreamSynchronize(s[0]), ccomSuccess);
	T_CCOM(ccomStreamSynchronize(s[1]), ccomSuccess);
	T_CCOM(ccomStreamQuery(s[0]), ccomSuccess);
	T_CCOM(ccomStreamQuery(s[1]), ccomSuccess);
	for (e = 0; e < W; e++) {
		want = 0;
		for (int r = 0; r < n; r++)
			want += (uint64_t)r + 1 + (uint64_t)e;
		for (k = 1; k <= NOPS; k++) {
			T_CHECK(a[k][e] == want, "rank %d: op %d element %d is %llu, want %llu", rank,
				k, e, (unsigned long long)a[k][e], (unsigned long long)want);
			want *= (uint64_t)n;
		}
	}
	T_CCOM(ccomStreamSynchronize(NULL), ccomInvalidArgument);
	T_CCOM(ccomStreamQuery(NULL), ccomInvalidArgument);
	T_CCOM(ccomStreamCreate(comm, NULL), ccomInvalidArgument);
	T_CCOM(ccomStreamDestroy(s[0]), ccomSuccess);
	T_CCOM(ccomStreamDestroy(s[1]), ccomSuccess);
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	free(a);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	if (ct_run(&j, 2, order_rank, 120) || ct_run(&j, 3, order_rank, 120))
		return T_FAIL;
	printf("1000 queued ops ran in order on 2 and 3 ranks\n");
	return T_PASS;
}
