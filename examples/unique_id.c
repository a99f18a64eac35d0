// SPDX-License-Identifier: MIT
/*
 * unique_id.c - the application hands out the unique id itself.
 *
 * Rank 0 calls ccomGetUniqueId() and sends the 128 bytes to every other
 * rank by any channel it has (an MPI broadcast, a key-value store, a
 * file); here the ranks are forked children and the channel is a pipe.
 * Fork before creating the id: ccomGetUniqueId() starts a thread.
 *
 *   ./unique_id [nranks]      (default 4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ccom.h>

#define N 4096

static int run_rank(int rank, int nranks, ccomUniqueId id)
{
	ccomComm_t comm;
	double buf[N];
	int i;

	if (ccomCommInitRank(&comm, nranks, id, rank) != ccomSuccess) {
		fprintf(stderr, "rank %d: init: %s\n", rank, ccomGetLastError(NULL));
		return 1;
	}
	for (i = 0; i < N; i++)
		buf[i] = rank == 0 ? i : -1;
	/* Rank 0's buffer to everyone. */
	if (ccomBroadcast(buf, buf, N, ccomFloat64, 0, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess) {
		fprintf(stderr, "rank %d: broadcast: %s\n", rank, ccomGetLastError(NULL));
		return 1;
	}
	for (i = 0; i < N; i++)
		if (buf[i] != i) {
			fprintf(stderr, "rank %d: buf[%d] = %g\n", rank, i, buf[i]);
			return 1;
		}
	printf("rank %d of %d: broadcast ok\n", rank, nranks);
	fflush(stdout);	/* children leave with _exit() */
	ccomCommFinalize(comm);
	ccomCommDestroy(comm);
	return 0;
}

int main(int argc, char **argv)
{
	int nranks = argc > 1 ? atoi(argv[1]) : 4;
	int pipes[64][2], r, status, failed = 0;
	ccomUniqueId id;

	if (nranks < 1 || nranks > 64) {
		fprintf(stderr, "usage: %s [nranks 1-64]\n", argv[0]);
		return 2;
	}
	for (r = 1; r < nranks; r++) {
		if (pipe(pipes[r]) < 0) {
			perror("pipe");
			return 1;
		}
		if (fork() == 0) {	/* rank r: wait for the id, then join */
			close(pipes[r][1]);
			if (read(pipes[r][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
				fprintf(stderr, "rank %d: no unique id from rank 0\n", r);
				_exit(1);
			}
			_exit(run_rank(r, nranks, id));
		}
		close(pipes[r][0]);
	}
	if (ccomGetUniqueId(&id) != ccomSuccess) {
		fprintf(stderr, "ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
		return 1;
	}
	for (r = 1; r < nranks; r++) {
		if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			perror("write");
		close(pipes[r][1]);
	}
	failed = run_rank(0, nranks, id);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
}
