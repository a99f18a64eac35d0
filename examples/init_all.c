// SPDX-License-Identifier: MIT
/*
 * init_all.c - every rank in one process, one thread per rank.
 *
 * ccomCommInitAll() creates the communicators of all ranks at once; each
 * thread then drives its own rank like a process would.  (One thread
 * driving several ranks must put their calls in one
 * ccomGroupStart()/ccomGroupEnd().)
 *
 *   ./init_all [nranks]      (default 4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ccom.h>

#define N 100000

struct rank {
	ccomComm_t comm;
	int rank, nranks, ok;
};

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	int *send = malloc(N * sizeof(int)), *recv = malloc(N * sizeof(int)), i;

	if (!send || !recv)
		goto out;
	for (i = 0; i < N; i++)
		send[i] = r->rank * N + i;
	if (ccomAllReduce(send, recv, N, ccomInt32, ccomMax, r->comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(r->comm) != ccomSuccess) {
		fprintf(stderr, "rank %d: %s\n", r->rank, ccomGetLastError(NULL));
		goto out;
	}
	for (i = 0; i < N && recv[i] == (r->nranks - 1) * N + i; i++)
		;
	r->ok = i == N;
	ccomCommFinalize(r->comm);	/* collective: every thread calls it */
out:
	free(send);
	free(recv);
	return NULL;
}

int main(int argc, char **argv)
{
	int nranks = argc > 1 ? atoi(argv[1]) : 4, i, bad = 0;
	ccomComm_t comms[64];
	struct rank ranks[64];
	pthread_t threads[64];

	if (nranks < 1 || nranks > 64) {
		fprintf(stderr, "usage: %s [nranks 1-64]\n", argv[0]);
		return 2;
	}
	if (ccomCommInitAll(comms, nranks, NULL) != ccomSuccess) {
		fprintf(stderr, "ccomCommInitAll: %s\n", ccomGetLastError(NULL));
		return 1;
	}
	for (i = 0; i < nranks; i++) {
		ranks[i] = (struct rank){ comms[i], i, nranks, 0 };
		pthread_create(&threads[i], NULL, rank_main, &ranks[i]);
	}
	for (i = 0; i < nranks; i++) {
		pthread_join(threads[i], NULL);
		if (!ranks[i].ok)
			bad = 1;
		ccomCommDestroy(comms[i]);
	}
	printf("%d ranks in one process: allreduce max %s\n", nranks, bad ? "WRONG" : "ok");
	return bad;
}
