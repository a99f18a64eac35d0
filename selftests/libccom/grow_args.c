// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommGetUniqueId / ccomCommGrow refuse what they must,
 * each with its own code and a sentence naming the cause, and never wait
 * for a rank that cannot come.  The ranks are threads of this process (a
 * communicator of ccomCommInitAll grows with a joining thread):
 *   - local argument checks: NULL newcomm, an existing rank passing a
 *     rank, nRanks not larger than the old size (existing and joining
 *     side), a joining rank without an id, with ccomGetUniqueId's id or
 *     out of range, a second ccomCommGetUniqueId before a grow, a grow id
 *     given to ccomCommInitRank;
 *   - a good grow 1 -> 2 (ranks kept, AllReduce checked), then the used id
 *     again: refused on the joining side at once (its root is gone) and on
 *     the coordinator by the existing ranks' agreement;
 *   - a foreign id (another communicator's grow id, ccomGetUniqueId's) on
 *     the coordinator, no id at all, two ids, different nRanks across the
 *     existing ranks, a joining rank whose nRanks differs from the
 *     existing ranks': every rank fails with the same cause;
 *   - a destroyed communicator's unused id is refused at once, and a grow
 *     waiting for a joining rank that never comes ends at ccomCommAbort.
 */
#include <pthread.h>

#include "coll_util.h"

#define FAST_S 5.0	/* "at once": far below the 60 s bootstrap timeout set here */

struct grow_call {
	pthread_t th;
	ccomComm_t comm;	/* existing rank's comm, or NULL: a joining rank */
	int nranks;
	const ccomUniqueId *id;
	int rank;
	ccomComm_t out;
	ccomResult_t res;
	char err[1024];
};

static void *grow_thread(void *arg)
{
	struct grow_call *g = arg;

	g->res = ccomCommGrow(g->comm, g->nranks, g->id, g->rank, &g->out, NULL);
	snprintf(g->err, sizeof(g->err), "%s", ccomGetLastError(NULL));
	return NULL;
}

/* Run the @n calls concurrently; T_FAIL if it took FAST_S or more. */
static int grow_all(struct grow_call *g, int n)
{
	double t0 = t_now();
	int i;

	for (i = 0; i < n; i++)
		T_CHECK(!pthread_create(&g[i].th, NULL, grow_thread, &g[i]), "pthread_create");
	for (i = 0; i < n; i++)
		pthread_join(g[i].th, NULL);
	T_CHECK(t_now() - t0 < FAST_S, "the grow took %.1f s", t_now() - t0);
	return T_PASS;
}

/* Every call got @want with all the words in its sentence; the comms made are destroyed. */
static int all_refused(struct grow_call *g, int n, ccomResult_t want, const char *what, ...)
{
	va_list ap;
	int i, ok;

	for (i = 0; i < n; i++) {
		T_CHECK(g[i].res == want, "%s: call %d returned %s, want %s: %s", what, i,
			ccomGetErrorString(g[i].res), ccomGetErrorString(want), g[i].err);
		va_start(ap, what);
		ok = t_has_words_v(g[i].err, ap);
		va_end(ap);
		T_CHECK(ok, "%s: call %d: unexpected sentence: %s", what, i, g[i].err);
		T_CCOM(ccomCommDestroy(g[i].out), ccomSuccess);
	}
	printf("ok: %s: %s\n", what, g[0].err);
	return T_PASS;
}

static int refused(ccomResult_t res, ccomResult_t want, const char *what, const char *word)
{
	T_CHECK(res == want, "%s: returned %s, want %s: %s", what, ccomGetErrorString(res),
		ccomGetErrorString(want), ccomGetLastError(NULL));
	T_CHECK(strstr(ccomGetLastError(NULL), word), "%s: the sentence lacks \"%s\": %s", what,
		word, ccomGetLastError(NULL));
	printf("ok: %s: %s\n", what, ccomGetLastError(NULL));
	return T_PASS;
}

/* The checks each call makes alone; leaves *@gid handed out and unused. */
static int local_checks(ccomComm_t one, ccomUniqueId *gid_out)
{
	ccomUniqueId gid, plain, again;
	ccomComm_t out = NULL;

	T_CCOM(ccomGetUniqueId(&plain), ccomSuccess);
	if (refused(ccomCommGrow(one, 2, NULL, -1, NULL, NULL), ccomInvalidArgument,
		    "NULL newcomm", "newcomm") ||
	    refused(ccomCommGrow(one, 2, NULL, 0, &out, NULL), ccomInvalidArgument,
		    "existing rank passes rank 0", "pass -1") ||
	    refused(ccomCommGrow(one, 1, NULL, -1, &out, NULL), ccomInvalidArgument,
		    "existing rank, nRanks = old size", "not larger") ||
	    refused(ccomCommGetUniqueId(NULL, &gid), ccomInvalidArgument,
		    "ccomCommGetUniqueId(NULL comm)", "invalid communicator"))
		return T_FAIL;
	T_CHECK(!out, "newcomm not cleared");
	T_CCOM(ccomCommGetUniqueId(one, &gid), ccomSuccess);
	if (refused(ccomCommGetUniqueId(one, &again), ccomInvalidUsage,
		    "second ccomCommGetUniqueId before a grow", "one grow at a time") ||
	    refused(ccomCommGrow(NULL, 2, NULL, 1, &out, NULL), ccomInvalidArgument,
		    "joining rank without an id", "not NULL") ||
	    refused(ccomCommGrow(NULL, 2, &plain, 1, &out, NULL), ccomInvalidArgument,
		    "joining rank with ccomGetUniqueId's id", "not from ccomCommGetUniqueId") ||
	    refused(ccomCommGrow(NULL, 1, &gid, 1, &out, NULL), ccomInvalidArgument,
		    "joining rank, nRanks = old size", "not larger") ||
	    refused(ccomCommGrow(NULL, 3, &gid, 0, &out, NULL), ccomInvalidArgument,
		    "joining rank takes an existing rank", "out of range") ||
	    refused(ccomCommGrow(NULL, 3, &gid, 3, &out, NULL), ccomInvalidArgument,
		    "joining rank = nRanks", "out of range") ||
	    refused(ccomCommInitRank(&out, 2, gid, 1), ccomInvalidArgument,
		    "grow id given to ccomCommInitRank", "ccomCommGrow"))
		return T_FAIL;
	*gid_out = gid;
	return T_PASS;
}

/* 1 -> 2 with @gid; the grown comm must hold rank 0 (kept) and 1 (new) and add up. */
static int good_grow(ccomComm_t one, const ccomUniqueId *gid)
{
	struct grow_call g[2] = {
		{ .comm = one, .nranks = 2, .id = gid, .rank = -1 },
		{ .comm = NULL, .nranks = 2, .id = gid, .rank = 1 },
	};
	int i, r, n;
	float v[2][64];

	if (grow_all(g, 2))
		return T_FAIL;
	for (i = 0; i < 2; i++) {
		T_CHECK(g[i].res == ccomSuccess, "good grow: call %d: %s: %s", i,
			ccomGetErrorString(g[i].res), g[i].err);
		T_CCOM(ccomCommUserRank(g[i].out, &r), ccomSuccess);
		T_CCOM(ccomCommCount(g[i].out, &n), ccomSuccess);
		T_CHECK(r == i && n == 2, "good grow: call %d has rank %d of %d", i, r, n);
	}
	T_CCOM(ccomGroupStart(), ccomSuccess);
	for (i = 0; i < 2; i++) {
		for (r = 0; r < 64; r++)
			v[i][r] = (float)(i + 1);
		T_CCOM(ccomAllReduce(v[i], v[i], 64, ccomFloat32, ccomSum, g[i].out, NULL),
		       ccomSuccess);
	}
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	for (i = 0; i < 2; i++) {
		T_CCOM(ccomCommSynchronize(g[i].out), ccomSuccess);
		T_CHECK(v[i][0] == 3 && v[i][63] == 3, "good grow: AllReduce gave %g", v[i][0]);
		T_CCOM(ccomCommDestroy(g[i].out), ccomSuccess);
	}
	printf("ok: grow 1 -> 2: rank 0 kept, rank 1 joined, AllReduce correct\n");
	return T_PASS;
}

/* Two existing ranks (@two) and one joining rank, arguments per case. */
static int three(ccomComm_t *two, int n0, const ccomUniqueId *id0, int n1,
		 const ccomUniqueId *id1, int nj, const ccomUniqueId *idj, struct grow_call *g)
{
	g[0] = (struct grow_call){ .comm = two[0], .nranks = n0, .id = id0, .rank = -1 };
	g[1] = (struct grow_call){ .comm = two[1], .nranks = n1, .id = id1, .rank = -1 };
	g[2] = (struct grow_call){ .comm = NULL, .nranks = nj, .id = idj, .rank = 2 };
	return grow_all(g, idj ? 3 : 2);
}

static int cross_rank_checks(void)
{
	struct grow_call g[3];
	ccomComm_t two[2], other[2];
	ccomUniqueId gid, oid, xid, plain;

	T_CCOM(ccomCommInitAll(two, 2, NULL), ccomSuccess);
	T_CCOM(ccomCommInitAll(other, 2, NULL), ccomSuccess);
	T_CCOM(ccomGetUniqueId(&plain), ccomSuccess);
	T_CCOM(ccomCommGetUniqueId(other[0], &xid), ccomSuccess);
	/* Existing ranks only: nothing joins, the agreement must refuse first. */
	if (three(two, 3, &xid, 3, NULL, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidArgument, "coordinator passes another comm's grow id",
			"did not return", NULL) ||
	    three(two, 3, &plain, 3, NULL, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidArgument, "coordinator passes ccomGetUniqueId's id",
			"did not return", NULL) ||
	    three(two, 3, NULL, 3, NULL, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidUsage, "no existing rank passes the id", "none", NULL))
		return T_FAIL;
	T_CCOM(ccomCommGetUniqueId(two[0], &gid), ccomSuccess);
	if (three(two, 3, &gid, 4, NULL, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidUsage, "existing ranks pass nRanks 3 and 4",
			"different nRanks", NULL))
		return T_FAIL;
	/* That id was taken by the failed grow: used, and its root retired. */
	if (three(two, 3, &gid, 3, NULL, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidUsage, "coordinator passes the id of a failed grow",
			"already used", NULL))
		return T_FAIL;
	T_CCOM(ccomCommGetUniqueId(two[0], &gid), ccomSuccess);
	T_CCOM(ccomCommGetUniqueId(two[1], &oid), ccomSuccess);
	if (three(two, 3, &gid, 3, &oid, 0, NULL, g) ||
	    all_refused(g, 2, ccomInvalidUsage, "two existing ranks pass an id", "both", NULL))
		return T_FAIL;
	/* Existing ranks agree on 3, the joining rank says 4: the root tells all three. */
	T_CCOM(ccomCommGetUniqueId(two[0], &gid), ccomSuccess);
	if (three(two, 3, &gid, 3, NULL, 4, &gid, g) ||
	    all_refused(g, 3, ccomInvalidUsage, "joining rank passes nRanks 4, existing 3",
			"nranks mismatch", NULL))
		return T_FAIL;
	T_CCOM(ccomCommDestroy(two[0]), ccomSuccess);
	T_CCOM(ccomCommDestroy(two[1]), ccomSuccess);
	/* other[0]'s id is still unused: retired with its comm, a joining rank learns it at once. */
	T_CCOM(ccomCommDestroy(other[0]), ccomSuccess);
	T_CCOM(ccomCommDestroy(other[1]), ccomSuccess);
	g[0] = (struct grow_call){ .comm = NULL, .nranks = 3, .id = &xid, .rank = 2 };
	if (grow_all(g, 1) ||
	    all_refused(g, 1, ccomInvalidUsage, "joining with a destroyed comm's unused id",
			"gone", NULL))
		return T_FAIL;
	return T_PASS;
}

/* A grow that waits for a joining rank that never comes ends at ccomCommAbort. */
static int abort_waiting(ccomComm_t one)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomComm_t out = NULL;
	ccomUniqueId gid;
	ccomResult_t st = ccomInProgress;
	double t0;

	cfg.blocking = 0;
	T_CCOM(ccomCommGetUniqueId(one, &gid), ccomSuccess);
	T_CCOM(ccomCommGrow(one, 2, &gid, -1, &out, &cfg), ccomInProgress);
	usleep(200000);
	T_CCOM(ccomCommGetAsyncError(out, &st), ccomSuccess);
	T_CHECK(st == ccomInProgress, "the grow without its joining rank is %s",
		ccomGetErrorString(st));
	t0 = t_now();
	T_CCOM(ccomCommAbort(out), ccomSuccess);
	T_CHECK(t_now() - t0 < FAST_S, "ccomCommAbort took %.1f s", t_now() - t0);
	printf("ok: a grow waiting for a missing joining rank ended by ccomCommAbort in %.3f s\n",
	       t_now() - t0);
	return T_PASS;
}

int main(void)
{
	struct grow_call g[2];
	ccomComm_t one;
	ccomUniqueId gid;

	setenv("CCOM_BOOTSTRAP_TIMEOUT", "60", 1);
	T_CCOM(ccomCommInitAll(&one, 1, NULL), ccomSuccess);
	if (local_checks(one, &gid) || good_grow(one, &gid))
		return T_FAIL;
	/* The root answered its last rank and is closing: then a used id is refused at once. */
	usleep(300000);
	g[0] = (struct grow_call){ .comm = NULL, .nranks = 2, .id = &gid, .rank = 1 };
	if (grow_all(g, 1) ||
	    all_refused(g, 1, ccomInvalidUsage, "joining rank with a used id", "already used",
			"gone", NULL))
		return T_FAIL;
	g[0] = (struct grow_call){ .comm = one, .nranks = 2, .id = &gid, .rank = -1 };
	if (grow_all(g, 1) ||
	    all_refused(g, 1, ccomInvalidUsage, "coordinator passes a used id", "already used",
			NULL))
		return T_FAIL;
	if (cross_rank_checks() || abort_waiting(one))
		return T_FAIL;
	T_CCOM(ccomCommDestroy(one), ccomSuccess);
	printf("PASS: ccomCommGetUniqueId / ccomCommGrow refuse every bad case with its own code and sentence, at once\n");
	return T_PASS;
}
