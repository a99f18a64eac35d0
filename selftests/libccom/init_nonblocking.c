// SPDX-License-Identifier: MIT
/*
 * Description: nonblocking init (config.blocking = 0).  4 forked ranks get
 * ccomInProgress and a handle at once, then poll ccomCommGetAsyncError()
 * until ccomSuccess; the queries work afterwards.  Then a nonblocking init
 * whose peer never comes (timeout 2 s) must end in ccomTimeout reported by
 * ccomCommGetAsyncError(), with the sentence available from
 * ccomGetLastError().  ccomCommDestroy() of a comm whose init still waits
 * returns (the init is aborted).  Invalid configs are refused synchronously.
 */
#include "test_util.h"

static ccomUniqueId id;

static ccomResult_t poll_done(ccomComm_t c)
{
	ccomResult_t st = ccomInProgress;
	int i;

	for (i = 0; i < 60000 && st == ccomInProgress; i++) {
		if (ccomCommGetAsyncError(c, &st) != ccomSuccess)
			return ccomInternalError;
		if (st == ccomInProgress)
			usleep(1000);
	}
	return st;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	ccomResult_t st;
	int v;

	(void)arg;
	T_CCOM(t_init_cfg(&comm, nranks, id, rank, 0, -1), ccomInProgress);
	T_CHECK(comm != NULL, "no handle");
	st = poll_done(comm);
	T_CHECK(st == ccomSuccess, "rank %d: async state %d (%s): %s", rank, st,
		ccomGetErrorString(st), ccomGetLastError(comm));
	T_CCOM(ccomCommUserRank(comm, &v), ccomSuccess);
	T_CHECK(v == rank, "rank");
	/* A nonblocking comm's finalize is nonblocking too (init_nonblock_finalize). */
	T_CCOM(ccomCommFinalize(comm), ccomInProgress);
	st = poll_done(comm);
	T_CHECK(st == ccomSuccess, "rank %d: finalize ended in %s: %s", rank, ccomGetErrorString(st),
		ccomGetLastError(comm));
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int test_timeout(void)
{
	ccomComm_t comm;
	ccomResult_t st;
	int dev;

	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(t_init_cfg(&comm, 2, id, 1, 0, 2), ccomInProgress);
	T_CCOM(ccomCommDevice(comm, &dev), ccomInvalidUsage);
	st = poll_done(comm);
	T_CHECK(st == ccomTimeout, "async state %d (%s)", st, ccomGetErrorString(st));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "never checked in: 0", NULL), "message");
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);

	/* Destroying a comm whose nonblocking init still waits aborts that init. */
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(t_init_cfg(&comm, 2, id, 1, 0, 120), ccomInProgress);
	usleep(100000);
	T_CCOM(ccomCommGetAsyncError(comm, &st), ccomSuccess);
	T_CHECK(st == ccomInProgress, "state %d", st);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int test_bad_config(void)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomComm_t comm = (ccomComm_t)1;

	cfg.blocking = 2;
	T_CCOM(ccomCommInitRankConfig(&comm, 2, id, 0, &cfg), ccomInvalidArgument);
	T_CHECK(comm == NULL, "handle set on invalid config");
	T_CHECK(t_has_words(ccomGetLastError(NULL), "blocking", NULL), "message");
	cfg.blocking = 1;
	cfg.magic = 0;
	T_CCOM(ccomCommInitRankConfig(&comm, 2, id, 0, &cfg), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "CCOM_CONFIG_INITIALIZER", NULL), "message");
	cfg.magic = CCOM_CONFIG_MAGIC;
	cfg.timeoutSec = 0;
	T_CCOM(ccomCommInitRankConfig(&comm, 2, id, 0, &cfg), ccomInvalidArgument);
	T_CCOM(ccomCommInitRank(&comm, 2, id, 2), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "Invalid rank requested : 2/2", NULL), "msg");
	T_CCOM(ccomCommInitRank(&comm, 0, id, 0), ccomInvalidArgument);
	T_CCOM(ccomCommInitRank(NULL, 1, id, 0), ccomInvalidArgument);
	return 0;
}

int main(void)
{
	int codes[4];

	T_CHECK(!t_fork_ranks_id(4, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d %d", codes[0],
		codes[1], codes[2], codes[3]);
	printf("4 nonblocking ranks initialised\n");
	if (test_timeout() || test_bad_config())
		return T_FAIL;
	printf("nonblocking timeout and invalid configs reported\n");
	return T_PASS;
}
