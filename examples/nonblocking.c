// SPDX-License-Identifier: MIT
/*
 * nonblocking.c - nonblocking init with a deadline, and abort.
 *
 * With config.blocking = 0, ccomCommInitRankConfig() returns
 * ccomInProgress at once; the caller polls ccomCommGetAsyncError() (and
 * may do other work meanwhile) and gives up with ccomCommAbort() when its
 * own deadline passes, e.g. because a rank never started.
 *
 *   ./nonblocking [nranks] [deadline_ms]     all ranks start: exit 0
 *   ./nonblocking -m [nranks] [deadline_ms]  the last rank never starts:
 *                                            every other rank aborts, exit 3
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ccom.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int run_rank(int rank, int nranks, ccomUniqueId id, int deadline_ms)
{
	ccomConfig_t config = CCOM_CONFIG_INITIALIZER;
	ccomResult_t res, state = ccomInProgress;
	double start = now_ms();
	ccomComm_t comm;
	long polls = 0;
	float x = 1;

	config.blocking = 0;
	res = ccomCommInitRankConfig(&comm, nranks, id, rank, &config);
	if (res != ccomInProgress && res != ccomSuccess) {
		fprintf(stderr, "rank %d: init: %s\n", rank, ccomGetLastError(NULL));
		return 1;
	}
	while (state == ccomInProgress) {
		if (now_ms() - start > deadline_ms) {
			/* Give up: other ranks blocked on us see a remote error. */
			ccomCommAbort(comm);
			printf("rank %d: init not done after %d ms; aborted\n", rank, deadline_ms);
			fflush(stdout);	/* children leave with _exit() */
			return 3;
		}
		usleep(1000);	/* ... or useful work */
		polls++;
		ccomCommGetAsyncError(comm, &state);
	}
	if (state != ccomSuccess) {
		fprintf(stderr, "rank %d: init failed: %s\n", rank, ccomGetErrorString(state));
		ccomCommDestroy(comm);
		return 1;
	}
	if (ccomAllReduce(&x, &x, 1, ccomFloat32, ccomSum, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess || x != nranks) {
		fprintf(stderr, "rank %d: allreduce: %s\n", rank, ccomGetLastError(NULL));
		return 1;
	}
	printf("rank %d of %d: ready after %ld polls, allreduce ok\n", rank, nranks, polls);
	fflush(stdout);	/* children leave with _exit() */
	ccomCommDestroy(comm);
	return 0;
}

int main(int argc, char **argv)
{
	int missing = argc > 1 && !strcmp(argv[1], "-m");
	int nranks = argc > 1 + missing ? atoi(argv[1 + missing]) : 2;
	int deadline_ms = argc > 2 + missing ? atoi(argv[2 + missing]) : 10000;
	int started = missing ? nranks - 1 : nranks;
	int pipes[64][2], r, status, rc, worst;
	ccomUniqueId id;

	if (nranks < 1 + missing || nranks > 64 || deadline_ms < 1) {
		fprintf(stderr, "usage: %s [-m] [nranks 1-64] [deadline_ms]\n", argv[0]);
		return 2;
	}
	for (r = 1; r < started; r++) {	/* fork first, then create the id */
		if (pipe(pipes[r]) < 0)
			return 1;
		if (fork() == 0) {
			close(pipes[r][1]);
			if (read(pipes[r][0], &id, sizeof(id)) != (ssize_t)sizeof(id))
				_exit(1);
			_exit(run_rank(r, nranks, id, deadline_ms));
		}
		close(pipes[r][0]);
	}
	if (ccomGetUniqueId(&id) != ccomSuccess) {
		fprintf(stderr, "ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
		return 1;
	}
	for (r = 1; r < started; r++) {
		if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			perror("write");
		close(pipes[r][1]);
	}
	worst = run_rank(0, nranks, id, deadline_ms);
	while (wait(&status) > 0) {
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		if (rc == 1 || (rc == 3 && worst == 0))
			worst = rc;
	}
	return worst;
}
