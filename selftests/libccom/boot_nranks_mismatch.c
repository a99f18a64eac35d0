// SPDX-License-Identifier: MIT
/*
 * Description: three processes check in with one unique id, two saying
 * nranks 3 and one saying nranks 4.  The root must refuse the job and tell
 * every rank that checked in: each gets ccomInvalidUsage and a message with
 * "nranks mismatch", both counts and the advice to pass the same nranks.
 * Nobody waits for the timeout.
 */
#include "test_util.h"

static ccomUniqueId id;

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	ccomResult_t res;
	int my_n = rank == 2 ? 4 : nranks;

	(void)arg;
	res = t_init_cfg(&comm, my_n, id, rank, 1, 30);
	return t_init_refused(comm, res, ccomInvalidUsage, "nranks 3 and 4", rank,
			      "nranks mismatch", "nranks 3", "nranks 4", "same nranks", NULL);
}

int main(void)
{
	int codes[3];

	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d", codes[0],
		codes[1], codes[2]);
	return T_PASS;
}
