// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommSplit().  6 forked ranks split by color rank % 2
 * with key -rank (so child ranks are in reverse parent order); rank 5 opts
 * out with CCOM_SPLIT_NOCOLOR and gets NULL.  Each child has the expected
 * rank and size, its own bootstrap (an all-gather of parent ranks comes
 * back in key order), and can itself be split again.  Invalid arguments
 * are refused.
 */
#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "test_util.h"

static ccomUniqueId id;

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm, child, grand;
	int color = rank == 5 ? CCOM_SPLIT_NOCOLOR : rank % 2;
	int want_n = rank % 2 ? 2 : 3; /* color 1 is {1, 3}, color 0 is {0, 2, 4} */
	int v, i, got[6];

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	T_CCOM(ccomCommSplit(comm, -7, 0, &child, NULL), ccomInvalidArgument);
	T_CCOM(ccomCommSplit(comm, color, -rank, &child, NULL), ccomSuccess);
	if (rank == 5) {
		T_CHECK(child == NULL, "NOCOLOR got a comm");
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		return 0;
	}
	T_CHECK(child != NULL, "no child");
	T_CCOM(ccomCommCount(child, &v), ccomSuccess);
	T_CHECK(v == want_n, "rank %d: child size %d want %d", rank, v, want_n);
	T_CCOM(ccomCommUserRank(child, &v), ccomSuccess);
	/* Reverse order: the highest parent rank of the color is child rank 0. */
	T_CHECK(v == want_n - 1 - rank / 2, "rank %d: child rank %d", rank, v);
	got[v] = rank;
	T_CHECK(!ccom_bootstrap_allgather(child->bootstrap, got, sizeof(int)), "allgather: %s",
		ccomGetLastError(NULL));
	for (i = 0; i < want_n; i++)
		T_CHECK(got[i] == (want_n - 1 - i) * 2 + rank % 2, "child slot %d = parent %d", i,
			got[i]);
	T_CHECK(child->comm_hash != comm->comm_hash, "child shares the parent's comm hash");
	/* Split the child again: everyone in one color, keyed by parent rank. */
	T_CCOM(ccomCommSplit(child, 0, rank, &grand, NULL), ccomSuccess);
	T_CCOM(ccomCommUserRank(grand, &v), ccomSuccess);
	T_CHECK(v == rank / 2, "grandchild rank %d", v);
	T_CCOM(ccomCommDestroy(grand), ccomSuccess);
	T_CCOM(ccomCommDestroy(child), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	int codes[6];

	T_CHECK(!t_fork_ranks_id(6, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d %d %d %d",
		codes[0], codes[1], codes[2], codes[3], codes[4], codes[5]);
	printf("split 6 ranks into 3 + 2 + opt-out, then split again\n");
	return T_PASS;
}
