// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommRevoke.  2 forked ranks; rank 0 queues a 256 MiB
 * AllReduce (in place) and two small ones, and waits in
 * ccomCommSynchronize while another thread revokes the comm 300 ms later
 * (rank 1 joins only once rank 0's wait has returned, so the AllReduce is
 * surely in flight and only the revoke can end the wait): the
 * wait returns ccomRemoteError naming the revoke (within 20 s of it, well
 * before the 60 s op timeout: the point is that the revoke ends it, not
 * how fast a loaded host runs), every queued op failed, a new collective
 * fails (within 20 s, without waiting for the op timeout), ccomCommFinalize is
 * refused, ccomCommGetAsyncError reports ccomRemoteError, a second revoke
 * is harmless, undefined flags are ccomInvalidArgument, and destroy works.
 * Rank 1's late AllReduce fails with ccomRemoteError (its peer revoked).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "coll_util.h"

static atomic_int *rank0_done;	/* shared: rank 0's wait returned */

#define BIG_COUNT (64u << 20)	/* 256 MiB of floats */

struct revoker {
	ccomComm_t comm;
	double t;		/* when the revoke was called */
	double took;		/* how long the call took */
	ccomResult_t res;
};

static void *revoke_later(void *arg)
{
	struct revoker *r = arg;

	usleep(300000);
	r->t = t_now();
	r->res = ccomCommRevoke(r->comm, CCOM_REVOKE_DEFAULT);
	r->took = t_now() - r->t;
	return NULL;
}

static int revoke_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	struct revoker rv = { 0 };
	ccomResult_t res, async;
	float *big, small[16] = { 0 };
	ccomComm_t comm;
	pthread_t th;
	double t0, t1;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "60", 1);	/* not what must end the wait */
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	big = calloc(BIG_COUNT, sizeof(float));
	T_CHECK(big, "out of memory for 256 MiB");
	if (rank == 1) {
		double w = t_now();

		while (!atomic_load(rank0_done) && t_now() - w < 80)
			usleep(10000);
		T_CCOM(ccomAllReduce(big, big, BIG_COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		res = ccomCommSynchronize(comm);
		printf("rank 1: late AllReduce: %s: %s\n", ccomGetErrorString(res), ccomGetLastError(comm));
		T_CHECK(res == ccomRemoteError, "rank 1: got %s, want ccomRemoteError",
			ccomGetErrorString(res));
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		free(big);
		return T_PASS;
	}
	T_CCOM(ccomAllReduce(big, big, BIG_COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomAllReduce(small, small, 16, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomAllReduce(small, small, 16, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	rv.comm = comm;
	T_CHECK(pthread_create(&th, NULL, revoke_later, &rv) == 0, "pthread_create");
	res = ccomCommSynchronize(comm);
	t1 = t_now();
	atomic_store(rank0_done, 1);
	pthread_join(th, NULL);
	printf("rank 0: synchronize returned %s %.3f s after the revoke (revoke call %.3f ms): %s\n",
	       ccomGetErrorString(res), t1 - rv.t, rv.took * 1e3, ccomGetLastError(comm));
	T_CCOM(rv.res, ccomSuccess);
	T_CHECK(res == ccomRemoteError, "got %s, want ccomRemoteError", ccomGetErrorString(res));
	T_CHECK(t1 - rv.t < 20.0, "synchronize returned %.3f s after the revoke", t1 - rv.t);
	T_CHECK(t_has_words(ccomGetLastError(comm), "revoked", NULL), "message does not say revoked");
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomRemoteError, "async %s", ccomGetErrorString(async));

	/* Future operations: fail at once. */
	t0 = t_now();
	T_CCOM(ccomAllReduce(small, small, 16, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	T_CHECK(res == ccomRemoteError && t_now() - t0 < 20.0, "op after revoke: %s after %.3f s",
		ccomGetErrorString(res), t_now() - t0);
	T_CHECK(ccomCommFinalize(comm) == ccomRemoteError, "finalize after revoke not refused");
	T_CCOM(ccomCommRevoke(comm, CCOM_REVOKE_DEFAULT), ccomSuccess);
	T_CCOM(ccomCommRevoke(comm, 0x10), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "CCOM_REVOKE_DEFAULT", NULL), "flags message");
	T_CCOM(ccomCommRevoke(NULL, 0), ccomInvalidArgument);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(big);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	rank0_done = mmap(NULL, sizeof(*rank0_done), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_CHECK(rank0_done != MAP_FAILED, "mmap");
	atomic_store(rank0_done, 0);
	return ct_run(&j, 2, revoke_rank, 150);
}
