// SPDX-License-Identifier: MIT
/*
 * Description: ccom-perf's agreements between the ranks it forks
 * (tools/ccom-perf/hostsync.c, compiled into this test), outside libccom.
 * 3 ranks agree 200 times on int32 and int64 sums and maxima and on double
 * sums, with values that change every round: the two value sets alternate,
 * so a rank already writing the next round's value must not change what a
 * slower rank still reads.  A rank outside the forked ones and a type the
 * harness does not agree on are refused.  Then the abort: 2 of 3 ranks
 * wait in the barrier for a third that never comes; the parent calls
 * perf_sync_abort() after 200 ms (as ccom-perf's parent does when a rank
 * dies), and both must return -1 after it and within 10 s, not at the
 * barrier's 1800 s timeout.
 */
#include <sys/wait.h>

#include "test_util.h"

#include "../../tools/ccom-perf/hostsync.c"

#define ROUNDS 200

/* bench.c's clock, which hostsync.c's timeout reads. */
double perf_now_s(void)
{
	return t_now();
}

static struct perf_sync *sync3;

static int agree_rank(int rank, int n, void *arg)
{
	unsigned int round = 0;
	int k;

	(void)arg;
	for (k = 0; k < ROUNDS; k++) {
		int32_t a = rank + k;
		int64_t b = (int64_t)rank * k;
		double d = rank * 0.5 + k;

		T_CHECK(!perf_sync_agree(sync3, rank, &round, &a, ccomInt32, ccomSum), "round %d", k);
		T_CHECK(a == 3 * k + 3, "rank %d round %d: int32 sum %d, want %d", rank, k, a,
			3 * k + 3);
		T_CHECK(!perf_sync_agree(sync3, rank, &round, &b, ccomInt64, ccomMax), "round %d", k);
		T_CHECK(b == (int64_t)(n - 1) * k, "rank %d round %d: int64 max %lld, want %d", rank,
			k, (long long)b, (n - 1) * k);
		T_CHECK(!perf_sync_agree(sync3, rank, &round, &d, ccomFloat64, ccomSum), "round %d", k);
		T_CHECK(d == 1.5 + 3 * k, "rank %d round %d: double sum %g, want %g", rank, k, d,
			1.5 + 3 * k);
	}
	return T_PASS;
}

/* Rank @rank of 3 arrives at a barrier nobody completes: -1 once aborted. */
static int waiting_rank(struct perf_sync *s, int rank)
{
	unsigned int round = 0;
	int32_t v = 1;
	double t0 = t_now(), dt;
	int rc = perf_sync_agree(s, rank, &round, &v, ccomInt32, ccomSum);

	dt = t_now() - t0;
	T_CHECK(rc == -1, "rank %d: the barrier returned %d without the third rank", rank, rc);
	T_CHECK(dt > 0.15 && dt < 10, "rank %d: returned after %.3f s, want after the abort at 0.2 s",
		rank, dt);
	return T_PASS;
}

static int abort_case(void)
{
	struct perf_sync *s = perf_sync_create(3);
	pid_t pid[2];
	double end;
	int r, st, bad = 0;

	T_CHECK(s, "perf_sync_create(3)");
	fflush(NULL);
	for (r = 0; r < 2; r++) {
		pid[r] = fork();
		T_CHECK(pid[r] >= 0, "fork");
		if (!pid[r])
			_exit(waiting_rank(s, r));
	}
	usleep(200000);
	perf_sync_abort(s);
	end = t_now() + 20;
	for (r = 0; r < 2; r++) {
		while (waitpid(pid[r], &st, WNOHANG) == 0) {
			if (t_now() > end) {
				kill(pid[r], SIGKILL);
				waitpid(pid[r], &st, 0);
				fprintf(stderr, "rank %d still waited 20 s after the abort: killed\n", r);
				break;
			}
			usleep(2000);
		}
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	T_CHECK(!bad, "%d of 2 waiting ranks did not stop at the abort", bad);
	return T_PASS;
}

int main(void)
{
	struct perf_sync *s;
	unsigned int round = 0;
	int codes[3];
	float f = 1;
	int32_t v = 1;

	sync3 = perf_sync_create(3);
	T_CHECK(sync3, "perf_sync_create(3)");
	T_CHECK(t_fork_ranks(3, agree_rank, NULL, codes, 120) == 0,
		"agreements: rank exit codes %d %d %d", codes[0], codes[1], codes[2]);
	printf("%d rounds of agreements on 3 ranks: every sum and maximum right\n", ROUNDS);
	/* Refusals, before any barrier: a rank of another job, a type the harness never uses. */
	s = perf_sync_create(2);
	T_CHECK(s, "perf_sync_create(2)");
	T_CHECK(perf_sync_agree(s, 2, &round, &v, ccomInt32, ccomSum) == -1, "rank 2 of 2 accepted");
	T_CHECK(perf_sync_agree(s, -1, &round, &v, ccomInt32, ccomSum) == -1, "rank -1 accepted");
	T_CHECK(perf_sync_agree(s, 0, &round, &f, ccomFloat32, ccomSum) == -1, "float32 accepted");
	T_CHECK(perf_sync_agree(s, 0, &round, &v, ccomInt32, ccomProd) == -1, "a product accepted");
	if (abort_case())
		return T_FAIL;
	printf("PASS: perf_hostsync\n");
	return T_PASS;
}
