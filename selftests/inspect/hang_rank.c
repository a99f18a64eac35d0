// SPDX-License-Identifier: MIT
/*
 * Description: test helper, one real rank of a job that hangs at the op
 * level: it joins the communicator of CCOM_COMM_ID (every rank sets the
 * same address, so ccomGetUniqueId() agrees), prints "hash HASH", then runs
 * OPS AllReduces of 1024 floats, each followed by ccomCommSynchronize().
 * Rank SLEEP_RANK sleeps SLEEP_S seconds before its op SLEEP_OP, so that
 * the other ranks wait in that op and the published state shows who has
 * not issued it; with HANG_RANK_RELEASE=PATH it stops sleeping as soon as
 * PATH exists (the test releases it when it has looked).  Every rank prints "issue K" before op K ("sleep K" before
 * the sleep) and "done" at the end, then destroys the communicator.  With
 * HANG_RANK_ODD=K:COUNT in its environment, this rank's op K has COUNT
 * elements instead of 1024 (a collective mismatch).
 *
 * usage: hang_rank RANK NRANKS OPS SLEEP_RANK SLEEP_OP SLEEP_S
 * Exit: 0 when every op succeeded, 1 on a usage error, 2 on a ccom error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ccom.h"
#include "core/comm.h"

/* Sleep @s seconds, or until @release (if not NULL) exists. */
static void sleep_until(int s, const char *release)
{
	int i;

	for (i = 0; i < s * 20; i++) {
		if (release && access(release, F_OK) == 0)
			return;
		usleep(50000);
	}
}

int main(int argc, char **argv)
{
	int rank, nranks, ops, sleep_rank, sleep_op, sleep_s, i, odd_op = 0, odd_count = 1024;
	const char *odd = getenv("HANG_RANK_ODD");
	static float buf[4096];
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;

	if (argc != 7) {
		fprintf(stderr, "usage: hang_rank RANK NRANKS OPS SLEEP_RANK SLEEP_OP SLEEP_S\n");
		return 1;
	}
	rank = atoi(argv[1]);
	nranks = atoi(argv[2]);
	ops = atoi(argv[3]);
	sleep_rank = atoi(argv[4]);
	sleep_op = atoi(argv[5]);
	sleep_s = atoi(argv[6]);
	if (odd && (sscanf(odd, "%d:%d", &odd_op, &odd_count) != 2 || odd_count < 1 ||
		    odd_count > 4096)) {
		fprintf(stderr, "hang_rank: HANG_RANK_ODD must be OP:COUNT with COUNT 1-4096\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	res = ccomGetUniqueId(&id);
	if (res == ccomSuccess)
		res = ccomCommInitRank(&comm, nranks, id, rank);
	if (res != ccomSuccess) {
		fprintf(stderr, "hang_rank %d: init: %s: %s\n", rank, ccomGetErrorString(res),
			ccomGetLastError(NULL));
		return 2;
	}
	printf("hash %016llx\n", (unsigned long long)comm->comm_hash);
	for (i = 1; i <= ops; i++) {
		if (rank == sleep_rank && i == sleep_op) {
			printf("sleep %d\n", i);
			sleep_until(sleep_s, getenv("HANG_RANK_RELEASE"));
		}
		printf("issue %d\n", i);
		res = ccomAllReduce(buf, buf, i == odd_op ? (size_t)odd_count : 1024, ccomFloat32,
				    ccomSum, comm, NULL);
		if (res == ccomSuccess)
			res = ccomCommSynchronize(comm);
		if (res != ccomSuccess) {
			fprintf(stderr, "hang_rank %d: op %d: %s: %s\n", rank, i,
				ccomGetErrorString(res), ccomGetLastError(comm));
			ccomCommAbort(comm);
			return 2;
		}
	}
	printf("done\n");
	ccomCommDestroy(comm);
	return 0;
}
