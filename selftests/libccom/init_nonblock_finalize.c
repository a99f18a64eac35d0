// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommFinalize on a nonblocking communicator (config
 * blocking = 0) returns ccomInProgress without waiting and drains the
 * queue in the background: 2 forked ranks, rank 1 issues its 4 MiB
 * AllReduce only once rank 0's finalize has returned (so a finalize that
 * waited would wait for good: the bound of 30 s is about returning, not
 * speed), rank 0 reports ccomInProgress through ccomCommGetAsyncError until
 * the AllReduce is done, then ccomSuccess with the correct result in the
 * buffer.  While it runs a second finalize and a new collective are
 * refused with ccomInvalidUsage.  A child of ccomCommSplit inherits the
 * nonblocking finalize.  Then a finalize whose peer never joins (until
 * rank 0 is done): ccomCommDestroy during it returns (it aborts the wait).
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "coll_util.h"

#define COUNT (1u << 20)
#define RETURN_BOUND_S 30.0	/* "returns": a rank that waited would wait 60 s */

static atomic_int *rank0_returned;	/* shared: rank 0's finalize / destroy returned */

/* Rank 1: wait (at most 60 s) until rank 0's call returned. */
static void wait_rank0(void)
{
	double t0 = t_now();

	while (!atomic_load(rank0_returned) && t_now() - t0 < 60)
		usleep(5000);
}

static ccomResult_t poll_state(ccomComm_t c, double limit_s, int *polls_in_progress)
{
	double t0 = t_now();
	ccomResult_t st = ccomInProgress;

	*polls_in_progress = 0;
	while (t_now() - t0 < limit_s) {
		if (ccomCommGetAsyncError(c, &st) != ccomSuccess)
			return ccomInternalError;
		if (st != ccomInProgress)
			break;
		(*polls_in_progress)++;
		usleep(1000);
	}
	return st;
}

static int nb_init(struct ct_job *j, int rank, ccomComm_t *comm)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	int polls;
	ccomResult_t st;

	cfg.blocking = 0;
	T_CCOM(ccomCommInitRankConfig(comm, j->nranks, j->id, rank, &cfg), ccomInProgress);
	st = poll_state(*comm, 60, &polls);
	T_CHECK(st == ccomSuccess, "rank %d: init ended in %s: %s", rank, ccomGetErrorString(st),
		ccomGetLastError(*comm));
	return T_PASS;
}

static int finalize_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm, child;
	ccomResult_t st;
	float *buf, x = 0;
	double t0, dt, dt2;
	size_t i;
	int polls;

	(void)n;
	if (nb_init(j, rank, &comm))
		return T_FAIL;
	buf = malloc(COUNT * sizeof(float));
	T_CHECK(buf, "out of memory");
	memset(buf, 0, COUNT * sizeof(float));
	/* A split child inherits blocking = 0 and so the nonblocking finalize. */
	st = ccomCommSplit(comm, 0, rank, &child, NULL);
	T_CHECK(st == ccomSuccess || st == ccomInProgress, "split: %s", ccomGetErrorString(st));
	st = poll_state(child, 60, &polls);
	T_CHECK(st == ccomSuccess, "split child: %s", ccomGetErrorString(st));
	T_CCOM(ccomAllReduce(buf, buf, 16, ccomFloat32, ccomSum, child, NULL), ccomSuccess);
	T_CCOM(ccomCommFinalize(child), ccomInProgress);
	st = poll_state(child, 30, &polls);
	T_CHECK(st == ccomSuccess, "split child finalize: %s", ccomGetErrorString(st));
	T_CCOM(ccomCommDestroy(child), ccomSuccess);
	for (i = 0; i < COUNT; i++)
		buf[i] = (float)(rank + 1);
	if (rank == 1)
		wait_rank0();
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	t0 = t_now();
	T_CCOM(ccomCommFinalize(comm), ccomInProgress);
	dt = t_now() - t0;
	T_CHECK(dt < RETURN_BOUND_S, "rank %d: nonblocking finalize took %.3f s", rank, dt);
	if (rank == 0) {
		/* Rank 1 has not issued its AllReduce yet: the finalize cannot be done. */
		T_CCOM(ccomCommGetAsyncError(comm, &st), ccomSuccess);
		T_CHECK(st == ccomInProgress, "rank 0: finalize state %s before rank 1 joined",
			ccomGetErrorString(st));
		T_CCOM(ccomCommFinalize(comm), ccomInvalidUsage);
		T_CHECK(t_has_words(ccomGetLastError(NULL), "already running", NULL), "message: %s",
			ccomGetLastError(NULL));
		T_CCOM(ccomAllReduce(&x, &x, 1, ccomFloat32, ccomSum, comm, NULL), ccomInvalidUsage);
		T_CHECK(t_has_words(ccomGetLastError(NULL), "being finalized", NULL), "message: %s",
			ccomGetLastError(NULL));
		atomic_store(rank0_returned, 1);
	}
	st = poll_state(comm, 30, &polls);
	T_CHECK(st == ccomSuccess, "rank %d: finalize ended in %s: %s", rank, ccomGetErrorString(st),
		ccomGetLastError(comm));
	dt2 = t_now() - t0;
	for (i = 0; i < COUNT; i++)
		T_CHECK(buf[i] == 3.0f, "rank %d: buf[%zu] = %g after finalize, want 3", rank, i,
			(double)buf[i]);
	printf("rank %d: finalize returned in %.3f ms, in progress for %.3f s (%d polls), then success\n",
	       rank, dt * 1e3, dt2, polls);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(buf);
	return T_PASS;
}

/* Rank 1 never joins the AllReduce: rank 0 destroys during its finalize. */
static int destroy_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	ccomResult_t st;
	float buf[16] = { 0 };
	double t0;
	int polls;

	(void)n;
	if (nb_init(j, rank, &comm))
		return T_FAIL;
	if (rank == 1) {
		wait_rank0();
		ccomCommAbort(comm);
		return T_PASS;
	}
	T_CCOM(ccomAllReduce(buf, buf, 16, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommFinalize(comm), ccomInProgress);
	st = poll_state(comm, 0.2, &polls);
	T_CHECK(st == ccomInProgress, "finalize without the peer ended in %s", ccomGetErrorString(st));
	t0 = t_now();
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	atomic_store(rank0_returned, 1);
	T_CHECK(t_now() - t0 < RETURN_BOUND_S, "destroy during finalize took %.2f s", t_now() - t0);
	printf("rank 0: destroy during a stuck finalize returned in %.3f s\n", t_now() - t0);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	rank0_returned = mmap(NULL, sizeof(*rank0_returned), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_CHECK(rank0_returned != MAP_FAILED, "mmap");
	atomic_store(rank0_returned, 0);
	if (ct_run(&j, 2, finalize_rank, 150))
		return T_FAIL;
	atomic_store(rank0_returned, 0);
	return ct_run(&j, 2, destroy_rank, 150);
}
