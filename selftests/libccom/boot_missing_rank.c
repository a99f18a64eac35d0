// SPDX-License-Identifier: MIT
/*
 * Description: a 5-rank job where ranks 2 and 4 never start, with
 * CCOM_BOOTSTRAP_TIMEOUT=3.  Every present rank must fail with ccomTimeout
 * and a message, sent by the root before the ranks' own deadline, that
 * lists the ranks that never checked in ("never checked in: 2,4").
 * Second case: in a 4-rank job rank 2 checks in and then dies, rank 3
 * never comes (timeout 60 s): ranks 0 and 1 must fail with ccomRemoteError
 * naming rank 2 ("disconnected after checking in") without waiting for
 * the timeout.
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
	return t_init_refused(comm, res, ccomTimeout, "ranks 2 and 4 missing", present[proc], "root",
			      "2 of 5 ranks", "never checked in: 2,4", NULL);
}

static int died_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	ccomResult_t res;
	double t0 = t_now();

	(void)nranks;
	(void)arg;

	if (rank == 2) {
		T_CCOM(t_init_cfg(&comm, 4, id, rank, 0, 60), ccomInProgress);
		usleep(500000);
		_exit(0); /* dies with its check-in connection open */
	}
	res = t_init_cfg(&comm, 4, id, rank, 1, 60);
	T_CHECK(t_now() - t0 < 30, "rank %d waited %.1f s: the timeout, not the root's report",
		rank, t_now() - t0);
	return t_init_refused(comm, res, ccomRemoteError, "rank 2 died", rank, "rank 2",
			      "disconnected after checking in", NULL);
}

int main(void)
{
	int codes[3];

	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d", codes[0],
		codes[1], codes[2]);
	printf("missing ranks 2,4 reported to ranks 0, 1, 3\n");
	T_CHECK(!t_fork_ranks_id(3, died_main, NULL, codes, 90, &id), "died case: %d %d %d",
		codes[0], codes[1], codes[2]);
	printf("rank that died after check-in reported to ranks 0, 1\n");
	return T_PASS;
}
