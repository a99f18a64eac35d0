// SPDX-License-Identifier: MIT
/*
 * Description: the align stage refuses ranks whose data-path settings
 * differ.  In a 3-rank job rank 2 sets CCOM_ALGO=ring while the others
 * leave it unset: every rank must fail with ccomInvalidUsage and a message
 * naming rank 2, "different data-path settings" and CCOM_ALGO, instead of
 * initialising and hanging later in a collective.  With the same value on
 * every rank init succeeds.
 */
#include "test_util.h"

static ccomUniqueId id;

static int rank_main(int rank, int nranks, void *arg)
{
	int same = *(int *)arg;
	ccomComm_t comm;
	ccomResult_t res;

	if (same || rank == 2)
		setenv("CCOM_ALGO", "ring", 1);
	res = ccomCommInitRank(&comm, nranks, id, rank);
	if (same) {
		T_CHECK(res == ccomSuccess, "rank %d: %s", rank, ccomGetLastError(NULL));
	} else {
		T_CHECK(res == ccomInvalidUsage, "rank %d got %d (%s)", rank, res,
			ccomGetErrorString(res));
		T_CHECK(t_has_words(ccomGetLastError(NULL), "rank 2", "different data-path settings",
				    "CCOM_ALGO", NULL), "rank %d message", rank);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	int codes[3], same;

	for (same = 0; same < 2; same++) {
		T_CHECK(!t_fork_ranks_id(3, rank_main, &same, codes, 60, &id),
			"%s: ranks failed %d %d %d", same ? "same" : "different", codes[0], codes[1],
			codes[2]);
		printf("CCOM_ALGO %s: as expected\n", same ? "equal on every rank" : "differing");
	}
	return T_PASS;
}
