// SPDX-License-Identifier: MIT
/*
 * Description: a 5-rank job where ranks 2 and 4 never start, with
 * CCOM_BOOTSTRAP_TIMEOUT=3.  Every present rank must fail with ccomTimeout
 * and a message, sent by the root before the ranks' own deadline, that
 * lists the ranks that never checked in ("never checked in: 2,4").
 */
#include "test_util.h"

static ccomUniqueId id;

static int rank_main(int proc, int nranks, void *arg)
{
	static const int present[] = { 0, 1, 3 };
	ccomComm_t comm;
	ccomResult_t res;

	(void)nranks;
	(void)arg;
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "3", 1);
	res = ccomCommInitRank(&comm, 5, id, present[proc]);
	T_CHECK(res == ccomTimeout, "rank %d got %d (%s): %s", present[proc], res,
		ccomGetErrorString(res), ccomGetLastError(NULL));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "root", "2 of 5 ranks",
			    "never checked in: 2,4", NULL), "rank %d message", present[proc]);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	int codes[3];

	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d", codes[0],
		codes[1], codes[2]);
	return T_PASS;
}
