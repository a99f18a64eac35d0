// SPDX-License-Identifier: MIT
/*
 * Description: every argument ccomCommShrink and ccomCommGetFailedRanks
 * refuse, each with its code and a sentence naming the cause (4 ranks of
 * one process, ccomCommInitAll): invalid comm, NULL newcomm, undefined
 * flags, nExclude out of range, NULL excludeRanks, an excluded rank out of
 * range, listed twice or the caller itself, a bad config; a busy comm
 * without CCOM_SHRINK_ABORT is ccomInvalidUsage; survivors that pass
 * different excludeRanks all fail with ccomInvalidUsage naming the
 * difference, within 5 s, and then shrink fine with matching lists.
 */
#include <pthread.h>

#include "test_util.h"

#define N 4

static ccomComm_t comms[N];

static int refused(int r, const int *ex, int nex, ccomConfig_t *cfg, int flags, ccomResult_t want,
		   const char *words)
{
	ccomComm_t out = (ccomComm_t)&out;
	ccomResult_t res = ccomCommShrink(comms[r], ex, nex, &out, cfg, flags);

	T_CHECK(res == want, "shrink(nExclude %d, flags %#x) returned %s, want %s: %s", nex, flags,
		ccomGetErrorString(res), ccomGetErrorString(want), ccomGetLastError(NULL));
	T_CHECK(strstr(ccomGetLastError(NULL), words), "error \"%s\" lacks \"%s\"",
		ccomGetLastError(NULL), words);
	T_CHECK(out == NULL, "newcomm not cleared on a refused shrink");
	printf("refused as %s: %s\n", ccomGetErrorString(res), ccomGetLastError(NULL));
	return T_PASS;
}

struct job {
	int rank;
	int ex[2];
	int nex;
	ccomResult_t res;
	char err[512];
	ccomComm_t out;
};

static void *shrink_thread(void *arg)
{
	struct job *j = arg;

	j->res = ccomCommShrink(comms[j->rank], j->ex, j->nex, &j->out, NULL, CCOM_SHRINK_DEFAULT);
	snprintf(j->err, sizeof(j->err), "%s", ccomGetLastError(NULL));
	return NULL;
}

/* Ranks 0..2 shrink at once, rank 2 with @ex2/@nex2, the others without rank 3. */
static int three_shrink(const int *ex2, int nex2, struct job *jobs)
{
	pthread_t th[3];
	int r;

	for (r = 0; r < 3; r++) {
		jobs[r] = (struct job){ .rank = r, .ex = { 3 }, .nex = 1 };
		if (r == 2) {
			memcpy(jobs[r].ex, ex2, sizeof(int) * (size_t)nex2);
			jobs[r].nex = nex2;
		}
		T_CHECK(!pthread_create(&th[r], NULL, shrink_thread, &jobs[r]), "pthread_create");
	}
	for (r = 0; r < 3; r++)
		pthread_join(th[r], NULL);
	return T_PASS;
}

int main(void)
{
	ccomConfig_t bad = CCOM_CONFIG_INITIALIZER;
	int dup[2] = { 1, 1 }, out4 = 4, neg = -1, self = 0, one = 1, three = 3, nf, fr[N];
	struct job jobs[3];
	float x = 1, y = 0;
	double t0, t1;
	int r, fds;

	T_CCOM(ccomCommInitAll(comms, N, NULL), ccomSuccess);
	/* ccomCommGetFailedRanks */
	nf = 1;
	T_CCOM(ccomCommGetFailedRanks(NULL, fr, &nf), ccomInvalidArgument);
	T_CCOM(ccomCommGetFailedRanks(comms[0], fr, NULL), ccomInvalidArgument);
	nf = -1;
	T_CCOM(ccomCommGetFailedRanks(comms[0], fr, &nf), ccomInvalidArgument);
	nf = 2;
	T_CCOM(ccomCommGetFailedRanks(comms[0], NULL, &nf), ccomInvalidArgument);
	nf = 0;
	T_CCOM(ccomCommGetFailedRanks(comms[0], NULL, &nf), ccomSuccess);
	T_CHECK(nf == 0, "a healthy comm lists %d failed ranks", nf);
	/* ccomCommShrink: each argument */
	T_CCOM(ccomCommShrink(NULL, &three, 1, &comms[0], NULL, 0), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "invalid communicator"), "NULL comm: %s",
		ccomGetLastError(NULL));
	T_CCOM(ccomCommShrink(comms[0], &three, 1, NULL, NULL, 0), ccomInvalidArgument);
	T_CHECK(strstr(ccomGetLastError(NULL), "newcomm is NULL"), "NULL newcomm: %s",
		ccomGetLastError(NULL));
	bad.magic = 0;
	if (refused(0, &three, 1, NULL, 2, ccomInvalidArgument, "flags 0x2 are not defined") ||
	    refused(0, &three, -1, NULL, 0, ccomInvalidArgument, "nExclude -1 is out of range") ||
	    refused(0, dup, N, NULL, 0, ccomInvalidArgument, "at least one rank must survive") ||
	    refused(0, NULL, 1, NULL, 0, ccomInvalidArgument, "excludeRanks is NULL") ||
	    refused(0, &out4, 1, NULL, 0, ccomInvalidArgument, "= 4 is not a rank") ||
	    refused(0, &neg, 1, NULL, 0, ccomInvalidArgument, "= -1 is not a rank") ||
	    refused(0, dup, 2, NULL, 0, ccomInvalidArgument, "rank 1 is listed twice") ||
	    refused(0, &self, 1, NULL, 0, ccomInvalidArgument, "rank 0 excludes itself") ||
	    refused(0, &three, 1, &bad, 0, ccomInvalidArgument, "CCOM_CONFIG_MAGIC"))
		return T_FAIL;
	/* Busy: rank 0 waits in a receive from rank 1. */
	T_CCOM(ccomRecv(&y, 1, ccomFloat32, 1, comms[0], NULL), ccomSuccess);
	if (refused(0, &three, 1, NULL, CCOM_SHRINK_DEFAULT, ccomInvalidUsage,
		    "still queued or running"))
		return T_FAIL;
	T_CCOM(ccomSend(&x, 1, ccomFloat32, 0, comms[1], NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comms[0]), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comms[1]), ccomSuccess);
	T_CHECK(y == 1, "the receive got %g", y);
	/* Survivors disagree: rank 2 excludes rank 1 instead of rank 3. */
	fds = t_count_fds();
	t0 = t_now();
	if (three_shrink(&one, 1, jobs))
		return T_FAIL;
	for (r = 0; r < 3; r++) {
		printf("rank %d: %s: %s\n", r, ccomGetErrorString(jobs[r].res), jobs[r].err);
		T_CHECK(jobs[r].res == ccomInvalidUsage && strstr(jobs[r].err, "different excludeRanks"),
			"rank %d: disagreeing lists gave %s: %s", r, ccomGetErrorString(jobs[r].res),
			jobs[r].err);
		ccomCommDestroy(jobs[r].out);
	}
	T_CHECK(t_now() - t0 < 5, "the disagreement took %.1f s to surface", t_now() - t0);
	/* The leader's fresh root ends at once, not at the bootstrap timeout (its socket closes). */
	for (t1 = t_now(); t_count_fds() > fds && t_now() - t1 < 2.0;)
		usleep(10000);
	T_CHECK(t_count_fds() <= fds, "%d fds after the failed shrink, %d before: the unused root still listens",
		t_count_fds(), fds);
	/* The same survivors agree the next time. */
	if (three_shrink(&three, 1, jobs))
		return T_FAIL;
	for (r = 0; r < 3; r++) {
		T_CHECK(jobs[r].res == ccomSuccess, "rank %d: agreeing shrink: %s: %s", r,
			ccomGetErrorString(jobs[r].res), jobs[r].err);
	}
	for (r = 0; r < 3; r++)
		ccomCommDestroy(jobs[r].out);
	for (r = 0; r < N; r++)
		ccomCommDestroy(comms[r]);
	printf("PASS: every bad argument refused with its sentence; disagreement caught in %.2f s\n",
	       t_now() - t0);
	return T_PASS;
}
