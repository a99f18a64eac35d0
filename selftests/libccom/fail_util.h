/* SPDX-License-Identifier: MIT */
/*
 * fail_util.h - the checks the failure tests share (coll_abort, coll_dead
 * and their kdev twins): how a rank's wait ends when rank 0 aborts, when a
 * peer is SIGKILLed, or when a peer never joins, and what a broken
 * communicator must do next.  Each returns T_PASS or T_FAIL (test_util.h).
 */
#ifndef CCOM_FAIL_UTIL_H
#define CCOM_FAIL_UTIL_H

#include <pthread.h>
#include <signal.h>

#include "coll_util.h"

/*
 * The start of the tests that break a communicator with work on it: init
 * under CCOM_OP_TIMEOUT=@op_timeout (a ccomTimeout would show that the
 * detection did not work), a fresh buffer of @count floats (*buf), one good
 * AllReduce of @first of them, then @queued AllReduces of all @count
 * queued and not waited for.  T_PASS or T_FAIL.
 */
static inline int ct_queue_work(const struct ct_job *j, int rank, const char *op_timeout,
				size_t count, size_t first, int queued, ccomComm_t *comm,
				float **buf)
{
	int i;

	setenv("CCOM_OP_TIMEOUT", op_timeout, 1);
	if (ct_init(j, rank, comm))
		return T_FAIL;
	*buf = calloc(count, sizeof(float));
	T_CHECK(*buf, "out of memory");
	T_CCOM(ccomAllReduce(*buf, *buf, first, ccomFloat32, ccomSum, *comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(*comm), ccomSuccess);
	for (i = 0; i < queued; i++)
		T_CCOM(ccomAllReduce(*buf, *buf, count, ccomFloat32, ccomSum, *comm, NULL),
		       ccomSuccess);
	return T_PASS;
}

/*
 * Run @fn on @n forked ranks (@timeout_s) of which rank @victim SIGKILLs
 * itself: T_PASS if it died so and every other rank exited 0.
 */
static inline int ct_run_with_victim(struct ct_job *j, int n, t_rank_fn fn, int timeout_s,
				     int victim)
{
	int codes[64], r;

	j->nranks = n;
	t_fork_ranks_id(n, fn, j, codes, timeout_s, &j->id);
	for (r = 0; r < n; r++) {
		int want = r == victim ? 128 + SIGKILL : 0;

		if (codes[r] != want) {
			fprintf(stderr, "FAIL: rank %d exited with %d, want %d\n", r, codes[r], want);
			return T_FAIL;
		}
	}
	return T_PASS;
}

/*
 * Rank 0 aborts @comm (after 300 ms, ct_aborter) while every rank waits in
 * ccomCommSynchronize() for the work queued on it; each rank prints how
 * its wait ended.  Returns the rank's result, or ccomSystemError if the
 * aborter thread could not start.
 */
static inline ccomResult_t ct_sync_under_abort(ccomComm_t comm, int rank, const char *what)
{
	ccomResult_t res;
	pthread_t t;
	double t0;

	if (rank == 0 && pthread_create(&t, NULL, ct_aborter, comm)) {
		fprintf(stderr, "rank 0: cannot start the aborter thread\n");
		return ccomSystemError;
	}
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	printf("rank %d: %s returned %s after %.2f s: %s\n", rank, what, ccomGetErrorString(res),
	       t_now() - t0, rank == 0 ? "(aborted here)" : ccomGetLastError(comm));
	fflush(stdout);
	if (rank == 0)
		pthread_join(t, NULL);
	return res;
}

/* What a rank other than 0 must see after rank 0 aborted: ccomRemoteError saying so. */
static inline int ct_check_aborted_by_rank0(ccomComm_t comm, int rank, ccomResult_t res)
{
	T_CHECK(res == ccomRemoteError, "rank %d: got %s, want ccomRemoteError", rank,
		ccomGetErrorString(res));
	T_CHECK(strstr(ccomGetLastError(comm), "rank 0") && strstr(ccomGetLastError(comm), "abort"),
		"rank %d: message does not say that rank 0 aborted: %s", rank,
		ccomGetLastError(comm));
	return T_PASS;
}

/*
 * A rank that survives the SIGKILL of rank @victim (@kill_delay_s after the
 * work was queued): wait for the work queued on @comm and check that it
 * ends with ccomRemoteError naming the victim, then that the communicator
 * stays broken (the async error says so and the next op fails at once).
 */
static inline int ct_sync_after_kill(ccomComm_t comm, int rank, int victim, const char *what,
				     double kill_delay_s)
{
	ccomResult_t res, async;
	char name[32];
	float one = 1;
	double t0 = t_now();

	res = ccomCommSynchronize(comm);
	printf("rank %d: %s returned %s %.2f s after the victim's kill: %s\n", rank, what,
	       ccomGetErrorString(res), t_now() - t0 - kill_delay_s, ccomGetLastError(comm));
	fflush(stdout);
	snprintf(name, sizeof(name), "rank %d", victim);
	T_CHECK(res == ccomRemoteError, "rank %d: got %s, want ccomRemoteError", rank,
		ccomGetErrorString(res));
	T_CHECK(strstr(ccomGetLastError(comm), name), "rank %d: message does not name %s: %s",
		rank, name, ccomGetLastError(comm));
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomRemoteError, "rank %d: async error is %s", rank,
		ccomGetErrorString(async));
	T_CCOM(ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CHECK(ccomCommSynchronize(comm) != ccomSuccess,
		"rank %d: a collective on the broken communicator succeeded", rank);
	return T_PASS;
}

/*
 * On @comm, initialised: rank 0 runs an AllReduce of @count floats that
 * rank 1 never joins (rank 1 sleeps @absent_s, then destroys its comm) and
 * aborts from a second thread while blocked in it (@where: what it is
 * blocked in): the wait must fail, within @limit_s.
 */
static inline int ct_abort_absent_peer_on(ccomComm_t comm, int rank, float *buf, size_t count,
					  unsigned int absent_s, const char *where, double limit_s)
{
	ccomResult_t res;
	pthread_t t;
	double t0;

	if (rank == 1) {
		sleep(absent_s);
		ccomCommDestroy(comm);
		return T_PASS;
	}
	T_CCOM(ccomAllReduce(buf, buf, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CHECK(pthread_create(&t, NULL, ct_aborter, comm) == 0, "pthread_create");
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	pthread_join(t, NULL);
	printf("rank 0: blocked in %s, abort -> %s after %.2f s\n", where, ccomGetErrorString(res),
	       t_now() - t0);
	T_CHECK(res != ccomSuccess, "the collective completed although rank 1 never joined");
	T_CHECK(t_now() - t0 < limit_s, "abort did not interrupt the wait in %s within %.0f s", where,
		limit_s);
	return T_PASS;
}

/* The same from init, well before CCOM_OP_TIMEOUT=120 (within 60 s). */
static inline int ct_abort_absent_peer(const struct ct_job *j, int rank, float *buf,
				       size_t count, unsigned int absent_s, const char *where)
{
	ccomComm_t comm;

	setenv("CCOM_OP_TIMEOUT", "120", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	return ct_abort_absent_peer_on(comm, rank, buf, count, absent_s, where, 60);
}

#endif
