// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommInitRankScalable with several bootstrap roots.  The
 * parent forks one holder process per id, where ccomGetUniqueId starts the
 * root thread (the parent never runs a thread before it forks the ranks: a
 * child forked while another thread holds ASan's allocator lock deadlocks),
 * and forks the ranks, which check in with root r * nIds / nranks:
 * 8 ranks with 2 ids, 64 ranks with 1, 2 and 4 ids and 24 ranks with 3
 * (uneven ranges), and 256 ranks as 16 simulated hosts of 16 (CCOM_HOSTID)
 * with 1 id (the hierarchical bootstrap, automatic from 128 ranks; under
 * the sanitizers 128 ranks: 256 instrumented processes do not fit a 2-CPU
 * machine's time) initialise and agree on an AllReduce of their ranks; a
 * rank behind the second root that never starts (8 ranks, 2 ids,
 * CCOM_BOOTSTRAP_TIMEOUT=4) is named ("never checked in: 6") on every
 * present rank, also those of root 0; a rank passing nIds 1 while the
 * others pass 2 gets "nIds mismatch", as do the ranks of root 0, and every
 * rank fails; nIds 0 or > nranks is ccomInvalidArgument.
 * Hierarchical with several roots (CCOM_BOOTSTRAP_HIER=1, simulated hosts
 * through CCOM_HOSTID): 64 ranks as hosts of 8 with 2 and 4 ids, 24 ranks
 * with 3 ids as hosts of 5 (hosts that straddle two roots' ranges: one
 * leader per host and root), and 256 ranks as hosts of 16 with 4 ids
 * (128 under the sanitizers; hierarchical by the default threshold,
 * without CCOM_BOOTSTRAP_HIER) initialise and agree; each root logs how
 * many host leaders checked in with it and how many the job has, and the
 * test checks both counts for every root; the missing rank 6 behind root
 * 1 (hosts of 2) is named on every present rank; the last rank passing
 * nIds 1 on the host of rank 3 (hosts r % 4: it shares the host socket of
 * root 0's ranks) gets "nIds mismatch", as do root 0's ranks; root 1's
 * ranks bootstrapping flat (CCOM_BOOTSTRAP_HIER=0) while root 0's go
 * through leaders is "bootstrap mode mismatch" on every rank.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "ccom.h"
#include "test_util.h"

#define MAX_IDS 4

static ccomUniqueId ids[MAX_IDS];

enum mode { GOOD, MISSING, MISMATCH, ROOTMODE };

static int rank_main(int nranks, int rank, int nids, enum mode mode)
{
	ccomComm_t comm;
	ccomResult_t res;
	int mine = mode == MISMATCH && rank == nranks - 1 ? 1 : nids;
	int32_t v = rank, sum = -1;
	const char *err;

	res = ccomCommInitRankScalable(&comm, nranks, rank, mine, ids, NULL);
	if (mode == GOOD) {
		if (res != ccomSuccess) {
			fprintf(stderr, "rank %d: init with %d ids: %s: %s\n", rank, nids,
				ccomGetErrorString(res), ccomGetLastError(NULL));
			return 1;
		}
		res = ccomAllReduce(&v, &sum, 1, ccomInt32, ccomSum, comm, NULL);
		if (res == ccomSuccess)
			res = ccomCommSynchronize(comm);
		if (res != ccomSuccess || sum != nranks * (nranks - 1) / 2) {
			fprintf(stderr, "rank %d: allreduce: %s, sum %d\n", rank,
				ccomGetErrorString(res), sum);
			return 1;
		}
		ccomCommFinalize(comm);
		ccomCommDestroy(comm);
		return 0;
	}
	err = ccomGetLastError(NULL);
	if (res == ccomSuccess) {
		fprintf(stderr, "rank %d: init succeeded in a broken job\n", rank);
		return 1;
	}
	if (mode == MISSING && !strstr(err, "never checked in")) {
		fprintf(stderr, "rank %d: the error does not name the missing rank: %s\n", rank, err);
		return 1;
	}
	if (mode == MISSING && !strstr(err, ": 6.")) {
		fprintf(stderr, "rank %d: the error does not name rank 6: %s\n", rank, err);
		return 1;
	}
	if (mode == ROOTMODE && !strstr(err, "bootstrap mode mismatch")) {
		fprintf(stderr, "rank %d: expected a bootstrap mode mismatch: %s\n", rank, err);
		return 1;
	}
	/* Root 0's ranks (and the odd one) hear of the mismatch; root 1's time out waiting for it. */
	if (mode == MISMATCH && (rank < nranks / 2 || rank == nranks - 1) &&
	    !strstr(err, "nIds mismatch")) {
		fprintf(stderr, "rank %d: expected an nIds mismatch: %s\n", rank, err);
		return 1;
	}
	if (rank == 0 || rank == nranks - 1)
		printf("  rank %d: %s: %s\n", rank, ccomGetErrorString(res), err);
	fflush(stdout);
	if (comm)
		ccomCommDestroy(comm);
	return 0;
}

/* Holders of the roots: each hands out its id and runs its root until killed. */
static pid_t holder[MAX_IDS];

static int holder_main(int out)
{
	ccomUniqueId id;

	if (ccomGetUniqueId(&id) != ccomSuccess) {
		fprintf(stderr, "ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
		return 1;
	}
	if (write(out, &id, sizeof(id)) != (ssize_t)sizeof(id))
		return 1;
	for (;;)
		pause();
}

static int start_roots(int nids)
{
	int r, idp[2];

	for (r = 0; r < nids; r++)
		holder[r] = -1;
	for (r = 0; r < nids; r++) {
		if (pipe(idp))
			return 1;
		fflush(NULL);
		holder[r] = fork();
		if (holder[r] == 0) {
			close(idp[0]);
			_exit(holder_main(idp[1]));
		}
		close(idp[1]);
		if (holder[r] < 0 || read(idp[0], &ids[r], sizeof(ids[r])) != (ssize_t)sizeof(ids[r])) {
			fprintf(stderr, "root holder %d did not hand out its id\n", r);
			close(idp[0]);
			return 1;
		}
		close(idp[0]);
	}
	return 0;
}

static void stop_roots(int nids)
{
	int r, st;

	for (r = 0; r < nids; r++) {
		if (holder[r] > 0) {
			kill(holder[r], SIGKILL);
			waitpid(holder[r], &st, 0);
		}
		holder[r] = -1;
	}
}

#define MAX_RANKS 256
#define RANKS_PER_HOST 16	/* ranks of a simulated host in jobs above 64 ranks */

/*
 * Simulated hosts of a job: 0 none (hosts of 16 above 64 ranks), > 0 rank
 * r on host r / per_host, < 0 on host r % -per_host.
 */
static int host_of(int r, int nranks, int per_host)
{
	if (!per_host)
		return nranks > 64 ? r / RANKS_PER_HOST : -1;
	return per_host > 0 ? r / per_host : r % -per_host;
}

/* Root k's range, as the library splits the ranks: ceil(k * nranks / nids). */
static int range_lo(int k, int nranks, int nids)
{
	return (int)(((long long)k * nranks + nids - 1) / nids);
}

/* Leaders of root k: the distinct hosts of its range (hosts are runs of ranks here). */
static int leaders_of(int k, int nranks, int nids, int per_host)
{
	int r, n = 0, lo = range_lo(k, nranks, nids), hi = range_lo(k + 1, nranks, nids);

	for (r = lo; r < hi; r++)
		n += r == lo || host_of(r, nranks, per_host) != host_of(r - 1, nranks, per_host);
	return n;
}

static char logpath[128];

/* Hierarchical jobs: every root logged its leaders and the job's (its range's hosts). */
static int check_leaders(int nranks, int nids, int per_host)
{
	int k, total = 0, bad = 0;
	char want[160];

	for (k = 0; k < nids; k++)
		total += leaders_of(k, nranks, nids, per_host);
	for (k = 0; k < nids; k++) {
		int lo = range_lo(k, nranks, nids), hi = range_lo(k + 1, nranks, nids);

		snprintf(want, sizeof(want),
			 "Bootstrap root %d/%d: all %d ranks of its range checked in through %d host leaders (%d in the job)",
			 k, nids, hi - lo, leaders_of(k, nranks, nids, per_host), total);
		if (t_file_lines(logpath, want, NULL) != 1) {
			fprintf(stderr, "FAIL: root %d did not log '%s' once (see %s)\n", k, want,
				logpath);
			bad = 1;
		}
	}
	return bad;
}

/* @hier: 0 flat below the threshold, 1 CCOM_BOOTSTRAP_HIER=1, 2 automatic (checked as 1). */
static int job(int nranks, int nids, enum mode mode, int per_host, int hier)
{
	pid_t pids[MAX_RANKS];
	int r, st, bad = 0, skip = mode == MISSING ? 6 : -1;
	double t0 = t_now();

	if (hier) {
		if (hier == 1)
			setenv("CCOM_BOOTSTRAP_HIER", "1", 1);
		/* The roots' holders write the log (the ranks log only what goes wrong). */
		unlink(logpath);
		t_log_to(logpath, "INFO", "BOOT");
	}
	if (start_roots(nids)) {
		stop_roots(nids);
		return 1;
	}
	fflush(NULL);
	for (r = 0; r < nranks; r++) {
		if (r == skip) {
			pids[r] = -1;
			continue;
		}
		pids[r] = fork();
		if (pids[r] == 0) {
			char host[32];

			if (host_of(r, nranks, per_host) >= 0) {
				snprintf(host, sizeof(host), "scalable-host-%d", host_of(r, nranks, per_host));
				setenv("CCOM_HOSTID", host, 1);
			}
			if (hier)
				setenv("CCOM_DEBUG", mode == GOOD ? "WARN" : "NONE", 1);
			if (mode == ROOTMODE && r >= nranks / 2)
				setenv("CCOM_BOOTSTRAP_HIER", "0", 1);
			_exit(rank_main(nranks, r, nids, mode));
		}
	}
	for (r = 0; r < nranks; r++) {
		if (pids[r] < 0)
			continue;
		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "rank %d failed\n", r);
			bad = 1;
		}
	}
	stop_roots(nids);
	if (hier && mode == GOOD && !bad)
		bad = check_leaders(nranks, nids, per_host);
	if (hier) {
		unsetenv("CCOM_BOOTSTRAP_HIER");
		unsetenv("CCOM_DEBUG_FILE");
		unsetenv("CCOM_DEBUG_SUBSYS");
		setenv("CCOM_DEBUG", mode == GOOD ? "WARN" : "NONE", 1);
	}
	printf("%s: %d ranks, %d id(s)%s%s (%.1f s)\n", bad ? "FAIL" : "ok", nranks, nids,
	       hier ? ", hierarchical" : "",
	       mode == MISSING ? ", rank 6 missing" : mode == MISMATCH ? ", last rank passes nIds 1" :
	       mode == ROOTMODE ? ", root 1's ranks flat" : "", t_now() - t0);
	fflush(stdout);
	return bad;
}

int main(void)
{
	static const int good[][2] = { { 8, 2 }, { 64, 1 }, { 64, 2 }, { 64, 4 }, { 24, 3 } };
	static const int big[][2] = { { 256, 1 } };
	static const int big_san[][2] = { { 128, 1 } };
	/* Hierarchical, several ids: { nranks, nids, ranks per simulated host } */
	static const int hier[][3] = { { 64, 2, 8 }, { 64, 4, 8 }, { 24, 3, 5 } };
	ccomComm_t comm;
	int i, fails = 0, nbig = t_sanitizer() ? 128 : 256;

	snprintf(logpath, sizeof(logpath), "/tmp/ccom-boot-scalable-%d.log", (int)getpid());
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "60", 1);
	for (i = 0; i < (int)(sizeof(good) / sizeof(good[0])); i++)
		fails += job(good[i][0], good[i][1], GOOD, 0, 0);
	if (t_sanitizer())
		for (i = 0; i < (int)(sizeof(big_san) / sizeof(big_san[0])); i++)
			fails += job(big_san[i][0], big_san[i][1], GOOD, 0, 0);
	else
		for (i = 0; i < (int)(sizeof(big) / sizeof(big[0])); i++)
			fails += job(big[i][0], big[i][1], GOOD, 0, 0);
	for (i = 0; i < (int)(sizeof(hier) / sizeof(hier[0])); i++)
		fails += job(hier[i][0], hier[i][1], GOOD, hier[i][2], 1);
	/* From CCOM_BOOTSTRAP_HIER_THRESHOLD (128) ranks: hierarchical without being asked. */
	/* 256 ranks with 2 ids would cost make check another 15 s: 64 ranks covered 2 ids. */
	fails += job(nbig, 4, GOOD, RANKS_PER_HOST, 2);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "4", 1);
	setenv("CCOM_DEBUG", "NONE", 1);
	fails += job(8, 2, MISSING, 0, 0);
	fails += job(8, 2, MISMATCH, 0, 0);
	fails += job(8, 2, MISSING, 2, 1);
	fails += job(8, 2, MISMATCH, -4, 1);
	fails += job(8, 2, ROOTMODE, 2, 1);
	unlink(logpath);
	if (ccomCommInitRankScalable(&comm, 4, 0, 0, ids, NULL) != ccomInvalidArgument ||
	    ccomCommInitRankScalable(&comm, 4, 0, 5, ids, NULL) != ccomInvalidArgument) {
		fprintf(stderr, "FAIL: nIds 0 or > nranks was accepted\n");
		fails++;
	}
	printf("%s: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}
