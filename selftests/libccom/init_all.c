// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommInitAll() creates one rank per thread in this
 * process.  4 ranks: each comm has the right rank and count, all four are
 * intra-process ranks of one node, and the bootstrap works between them.
 * Devlist checks happen before anything is created: a duplicate device is
 * ccomInvalidUsage, a negative one ccomInvalidArgument, NULL comms or
 * ndev < 1 ccomInvalidArgument; the comms array is left NULL.
 */
#include <pthread.h>

#include "bootstrap/bootstrap.h"
#include "init/comm.h"
#include "test_util.h"

static ccomComm_t comms[4];

static void *barrier_thread(void *arg)
{
	struct ccomComm *c = arg;

	return (void *)(long)ccom_bootstrap_barrier(c->bootstrap);
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
	return T_PASS;
}
