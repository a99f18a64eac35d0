// SPDX-License-Identifier: MIT
/*
 * Description: three processes of a 3-rank job check in as ranks 0, 1 and
 * 1.  Every one of them must get ccomInvalidUsage with a message naming
 * the duplicate rank ("duplicate rank", "rank 1", "checked in twice").
 */
#include "test_util.h"

static ccomUniqueId id;

static int rank_main(int proc, int nranks, void *arg)
{
	ccomComm_t comm;
	ccomResult_t res;
	int rank = proc == 2 ? 1 : proc;

	(void)arg;
	res = t_init_cfg(&comm, nranks, id, rank, 1, 30);
	return t_init_refused(comm, res, ccomInvalidUsage,
			      proc == 2 ? "process 2 as rank 1" : "process 0 or 1", rank,
			      "duplicate rank", "rank 1", "checked in twice", NULL);
}

int main(void)
{
	int codes[3];

	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d", codes[0],
		codes[1], codes[2]);
	return T_PASS;
}
