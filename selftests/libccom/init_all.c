// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommInitAll() creates one rank per thread in this
 * process.  4 ranks: each comm has the right rank and count, all four are
 * intra-process ranks of one node, and the bootstrap works between them.
 * Devlist checks happen before anything is created: a duplicate device is
 * ccomInvalidUsage, a negative one ccomInvalidArgument, NULL comms or
 * ndev < 1 ccomInvalidArgument; the comms array is left NULL.
 * One rank that fails makes the whole call fail at once, with that rank's
 * message: 16 ranks under an open-file limit of 100 (in a child) return
 * ccomSystemError naming the limit, long before CCOM_BOOTSTRAP_TIMEOUT
 * (the siblings are aborted), and leave no file descriptor behind.
 */
#include <pthread.h>
#include <sys/resource.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "test_util.h"

static ccomComm_t comms[4];

static void *barrier_thread(void *arg)
{
	struct ccomComm *c = arg;

	return (void *)(long)ccom_bootstrap_barrier(c->bootstrap);
}

static int fail_fast_child(int rank, int nranks, void *arg)
{
	struct rlimit rl = { 100, 100 };
	ccomComm_t many[16];
	int fds0, i;
	double t0;

	(void)rank;
	(void)nranks;
	(void)arg;
	T_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	fds0 = t_count_fds();
	t0 = t_now();
	T_CCOM(ccomCommInitAll(many, 16, NULL), ccomSystemError);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "open-file limit", NULL), "message: %s",
		ccomGetLastError(NULL));
	/* A hang detector, not a speed check: the bootstrap timeout is minutes. */
	T_CHECK(t_now() - t0 < 60, "the failure took %.1f s: the siblings were not aborted",
		t_now() - t0);
	for (i = 0; i < 16; i++)
		T_CHECK(many[i] == NULL, "comms[%d] left set", i);
	T_CHECK(t_count_fds() == fds0, "%d file descriptors leaked", t_count_fds() - fds0);
	printf("16 ranks under an open-file limit of 100: failed in %.2f s: %s\n", t_now() - t0,
	       ccomGetLastError(NULL));
	return T_PASS;
}

int main(void)
{
	static const int dup[] = { 1, 0, 1 };
	static const int neg[] = { 0, -3 };
	static const int good[] = { 2, 0, 3, 1 };
	pthread_t th[4];
	int i, fds0 = t_count_fds();

	T_CCOM(ccomCommInitAll(comms, 3, dup), ccomInvalidUsage);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "devlist[0] and devlist[2]", "device 1", NULL),
		"message");
	T_CCOM(ccomCommInitAll(comms, 2, neg), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "devlist[1] = -3", NULL), "message");
	T_CCOM(ccomCommInitAll(NULL, 2, NULL), ccomInvalidArgument);
	T_CCOM(ccomCommInitAll(comms, 0, NULL), ccomInvalidArgument);
	T_CHECK(t_count_fds() == fds0, "devlist checks opened file descriptors");

	T_CCOM(ccomCommInitAll(comms, 4, good), ccomSuccess);
	for (i = 0; i < 4; i++) {
		int v;

		T_CCOM(ccomCommUserRank(comms[i], &v), ccomSuccess);
		T_CHECK(v == i, "comm %d has rank %d", i, v);
		T_CCOM(ccomCommCount(comms[i], &v), ccomSuccess);
		T_CHECK(v == 4, "count");
		T_CCOM(ccomCommDevice(comms[i], &v), ccomSuccess);
		T_CHECK(v == good[i], "rank %d device %d, want %d", i, v, good[i]);
		T_CHECK(comms[i]->intra_proc_nranks == 4 && comms[i]->intra_proc_rank == i &&
				comms[i]->nnodes == 1 && comms[i]->local_nranks == 4,
			"rank %d: intra-process %d/%d nodes %d", i, comms[i]->intra_proc_rank,
			comms[i]->intra_proc_nranks, comms[i]->nnodes);
	}
	for (i = 0; i < 4; i++)
		T_CHECK(!pthread_create(&th[i], NULL, barrier_thread, comms[i]), "thread");
	for (i = 0; i < 4; i++) {
		void *rc;

		pthread_join(th[i], &rc);
		T_CHECK(rc == NULL, "barrier of rank %d failed", i);
	}
	for (i = 0; i < 4; i++)
		T_CCOM(ccomCommDestroy(comms[i]), ccomSuccess);
	printf("4 ranks in one process initialised and destroyed\n");
	T_CHECK(t_fork_ranks(1, fail_fast_child, NULL, NULL, 240) == 0,
		"InitAll under a low open-file limit (see above)");
	return T_PASS;
}
