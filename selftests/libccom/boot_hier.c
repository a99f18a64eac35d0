// SPDX-License-Identifier: MIT
/*
 * Description: the hierarchical bootstrap (CCOM_BOOTSTRAP_HIER, bootstrap/
 * hier.c) with simulated hosts: each rank is a process whose CCOM_HOSTID
 * names its host, so the ranks of one "host" elect a leader on the same
 * abstract Unix socket and only the leaders check in with the root.
 * Jobs: 4 hosts x 4 ranks with ranks interleaved over the hosts (rank r on
 * host r % 4), the uneven 6 + 1 + 1, and the automatic choice at
 * CCOM_BOOTSTRAP_HIER_THRESHOLD (8 ranks, threshold 8): every rank
 * initialises and agrees on an AllReduce of the ranks, and the root logs
 * that it saw exactly as many check-ins as hosts ("through N host
 * leaders").  Failures on every present rank: a rank that never starts is
 * named ("never checked in: 6."); a version skew of one rank ("version
 * skew", "rank 5"); one rank bootstrapping flat while the others are
 * hierarchical ("bootstrap mode mismatch").
 */
#include <stdio.h>

#include "test_util.h"

static ccomUniqueId id;

enum mode { GOOD, MISSING, SKEW, MISMATCH };

struct job {
	int nranks;
	int hosts;		/* rank r on host r % hosts, unless uneven */
	int uneven;		/* ranks 0-5 on host 0, 6 on 1, 7 on 2 */
	enum mode mode;
	int skip;		/* rank never started, or -1 */
};

static int host_of(const struct job *j, int r)
{
	if (j->uneven)
		return r < 6 ? 0 : r - 5;
	return r % j->hosts;
}

static int rank_main(int rank, int nranks, void *arg)
{
	const struct job *j = arg;
	char host[32];
	ccomComm_t comm;
	ccomResult_t res;
	int32_t v = rank, sum = -1;
	const char *err;

	snprintf(host, sizeof(host), "simhost%d", host_of(j, rank));
	setenv("CCOM_HOSTID", host, 1);
	if (j->mode == SKEW && rank == 5)
		setenv("CCOM_TEST_FAKE_VERSION", "9999", 1);
	if (j->mode == MISMATCH && rank == 3)
		setenv("CCOM_BOOTSTRAP_HIER", "0", 1);
	res = ccomCommInitRank(&comm, nranks, id, rank);
	if (j->mode == GOOD) {
		T_CCOM(res, ccomSuccess);
		T_CCOM(ccomAllReduce(&v, &sum, 1, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(sum == nranks * (nranks - 1) / 2, "rank %d: sum %d", rank, sum);
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		return T_PASS;
	}
	err = ccomGetLastError(NULL);
	T_CHECK(res != ccomSuccess, "rank %d: init succeeded in a broken job", rank);
	if (j->mode == MISSING)
		T_CHECK(t_has_words(err, "never checked in", ": 6.", NULL), "rank %d: %s", rank, err);
	if (j->mode == SKEW)
		T_CHECK(res == ccomInvalidUsage && t_has_words(err, "version skew", "rank 5", "version 9999", NULL),
			"rank %d: %s: %s", rank, ccomGetErrorString(res), err);
	if (j->mode == MISMATCH)
		T_CHECK(res == ccomInvalidUsage && t_has_words(err, "bootstrap mode mismatch", NULL),
			"rank %d: %s: %s", rank, ccomGetErrorString(res), err);
	if (rank == 0)
		printf("  rank 0: %s: %s\n", ccomGetErrorString(res), err);
	if (comm)
		ccomCommDestroy(comm);
	return T_PASS;
}

static int skipped(int rank, int nranks, void *arg)
{
	const struct job *j = arg;

	if (rank == j->skip)
		return T_PASS;
	return rank_main(rank, nranks, arg);
}

static int run_job(const struct job *j, const char *log, const char *what)
{
	char want[80];
	int codes[32], bad, hosts = j->uneven ? 3 : j->hosts, before;
	double t0 = t_now();

	snprintf(want, sizeof(want), "checked in through %d host leaders", hosts);
	/* The log is shared by every job (the root's process keeps it open): count new lines. */
	before = t_file_lines(log, want, NULL);
	if (before < 0)
		before = 0;
	bad = t_fork_ranks_id(j->nranks, skipped, (void *)j, codes, 60, &id);
	T_CHECK(!bad, "%s: %d rank(s) failed", what, bad);
	if (j->mode == GOOD) {
		T_CHECK(t_file_lines(log, want, NULL) == before + 1, "%s: the root did not log '%s' (see %s)", what,
			want, log);
	}
	printf("ok: %s (%.2f s)\n", what, t_now() - t0);
	fflush(stdout);
	return T_PASS;
}

int main(void)
{
	struct job good = { 16, 4, 0, GOOD, -1 }, uneven = { 8, 3, 1, GOOD, -1 };
	struct job autoj = { 8, 2, 0, GOOD, -1 }, missing = { 8, 2, 0, MISSING, 6 };
	struct job skew = { 8, 2, 0, SKEW, -1 }, mism = { 8, 2, 0, MISMATCH, -1 };
	char log[128];

	snprintf(log, sizeof(log), "/tmp/ccom-boot-hier-%d.log", (int)getpid());
	unlink(log);
	t_log_to(log, "INFO", "BOOT");
	T_SETENV("CCOM_BOOTSTRAP_TIMEOUT=30", "CCOM_BOOTSTRAP_HIER=1");
	if (run_job(&good, log, "4 hosts x 4 ranks, interleaved") ||
	    run_job(&uneven, log, "hosts of 6 + 1 + 1 ranks"))
		return T_FAIL;
	unsetenv("CCOM_BOOTSTRAP_HIER");
	setenv("CCOM_BOOTSTRAP_HIER_THRESHOLD", "8", 1);
	if (run_job(&autoj, log, "8 ranks at CCOM_BOOTSTRAP_HIER_THRESHOLD=8 (automatic)"))
		return T_FAIL;
	setenv("CCOM_BOOTSTRAP_HIER", "1", 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "4", 1);
	if (run_job(&missing, log, "rank 6 missing: named on every present rank") ||
	    run_job(&skew, log, "rank 5 skewed: refused on every rank") ||
	    run_job(&mism, log, "rank 3 flat, the others hierarchical: refused on every rank"))
		return T_FAIL;
	unlink(log);
	return T_PASS;
}
