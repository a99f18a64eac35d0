// SPDX-License-Identifier: MIT
/*
 * Description: the collective-mismatch check (CCOM_CHECK_MISMATCH, on by
 * default) for the NCCL 2.28 calls: two forked ranks issue different
 * calls as their second collective (the first one matches): Gather with
 * different roots, Gather against Scatter, Gather with different counts,
 * Scatter with different datatypes, and an AllReduce with a PreMulSum op
 * (ccomRedOpCreatePreMulSum) against one with ccomSum.  Each on one host
 * (the shm transport: the host segment's board) and again between two
 * simulated hosts over TCP (CCOM_TRANSPORT=net: the in-band signatures).
 * Every rank must fail with ccomInvalidUsage within 5 s with a sentence
 * naming both calls and what differs (on one host a Gather's non-root or
 * a Scatter's root, which only send, may instead complete: then its next collective must
 * fail within 5 s), and no guard byte after a buffer may change.
 */
#include "coll_util.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

enum { C_GATHER, C_SCATTER, C_ALLREDUCE, C_PREMUL };

struct call {
	int kind;
	size_t count;
	ccomDataType_t dt;
	int root;
	const char *text;	/* how the message must name it */
};

struct mcase {
	const char *name;
	struct call c[2];
	const char *why;
};

static const struct mcase cases[] = {
	{ "gather-root", { { C_GATHER, 100, ccomFloat32, 0, "ccomGather(count 100, float, root 0)" },
			   { C_GATHER, 100, ccomFloat32, 1, "ccomGather(count 100, float, root 1)" } },
	  "the roots differ" },
	{ "gather-scatter", { { C_GATHER, 100, ccomFloat32, 0, "ccomGather(count 100, float, root 0)" },
			      { C_SCATTER, 100, ccomFloat32, 0, "ccomScatter(count 100, float, root 0)" } },
	  "they called different collectives" },
	{ "gather-count", { { C_GATHER, 100, ccomFloat32, 1, "ccomGather(count 100, float, root 1)" },
			    { C_GATHER, 200, ccomFloat32, 1, "ccomGather(count 200, float, root 1)" } },
	  "the element counts differ" },
	{ "scatter-dtype", { { C_SCATTER, 100, ccomFloat32, 0, "ccomScatter(count 100, float, root 0)" },
			     { C_SCATTER, 100, ccomInt32, 0, "ccomScatter(count 100, int32, root 0)" } },
	  "the datatypes differ" },
	{ "premulsum-sum", { { C_PREMUL, 100, ccomFloat32, 0, "ccomAllReduce(count 100, float, premulsum)" },
			     { C_ALLREDUCE, 100, ccomFloat32, 0, "ccomAllReduce(count 100, float, sum)" } },
	  "the reduction ops differ" },
};

static int guard_ok(const unsigned char *g)
{
	for (int i = 0; i < GUARD; i++)
		if (g[i] != GUARD_BYTE)
			return 0;
	return 1;
}

static ccomResult_t issue(ccomComm_t comm, const struct call *c, void *sb, void *rb)
{
	float scalar = 0.5f;
	ccomRedOp_t op;
	ccomResult_t res;

	switch (c->kind) {
	case C_GATHER:
		return ccomGather(sb, rb, c->count, c->dt, c->root, comm, NULL);
	case C_SCATTER:
		return ccomScatter(sb, rb, c->count, c->dt, c->root, comm, NULL);
	case C_ALLREDUCE:
		return ccomAllReduce(sb, rb, c->count, c->dt, ccomSum, comm, NULL);
	default:
		res = ccomRedOpCreatePreMulSum(&op, &scalar, c->dt, ccomScalarHostImmediate, comm);
		if (res != ccomSuccess)
			return res;
		res = ccomAllReduce(sb, rb, c->count, c->dt, op, comm, NULL);
		/* Captured at enqueue: destroying it now is allowed (NCCL's rule). */
		if (ccomRedOpDestroy(op, comm) != ccomSuccess)
			return ccomInternalError;
		return res;
	}
}

/*
 * On one host, a Gather's non-root and a Scatter's root only send: their data may all fit in the
 * shm FIFO, so it can complete before the root (which fails with the
 * mismatch) has posted its call.  Its next collective then fails, on the
 * segment's broken mark.  Between hosts it cannot: its first data waits
 * for the root's signature.
 */
static int sender_may_finish(const struct ct_job *j, const struct call *c, int rank)
{
	return !j->env[0] && ((c->kind == C_GATHER && rank != c->root) ||
			      (c->kind == C_SCATTER && rank == c->root));
}

static int mismatch_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	const struct mcase *mc = &cases[j->count];
	const struct call *c = &mc->c[rank];
	size_t bytes = c->count * ct_size(c->dt) * (size_t)n;
	unsigned char *sb, *rb;
	ccomResult_t res, async;
	ccomComm_t comm;
	float one = 1;
	const char *msg;
	double t0, dt;

	setenv("CCOM_OP_TIMEOUT", "30", 1);	/* a timeout is not what must end it */
	if (j->env[0]) {
		char host[32];

		snprintf(host, sizeof(host), "mmhost%d-%d", rank, (int)getppid());
		setenv("CCOM_HOSTID", host, 1);
	}
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	sb = malloc(bytes + GUARD);
	rb = malloc(bytes + GUARD);
	T_CHECK(sb && rb, "out of memory");
	memset(sb, 0, bytes);
	memset(rb, 0, bytes);
	memset(sb + bytes, GUARD_BYTE, GUARD);
	memset(rb + bytes, GUARD_BYTE, GUARD);
	T_CCOM(ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(one == 2.0f, "matched AllReduce gave %g", (double)one);

	t0 = t_now();
	res = issue(comm, c, sb, rb);
	T_CHECK(res == ccomSuccess, "enqueue: %s: %s", ccomGetErrorString(res), ccomGetLastError(comm));
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	msg = ccomGetLastError(comm);
	printf("rank %d [%s%s]: %s after %.3f s: %s\n", rank, mc->name, j->env[0] ? ", TCP" : "",
	       ccomGetErrorString(res), dt, msg);
	T_CHECK(guard_ok(sb + bytes) && guard_ok(rb + bytes), "rank %d [%s]: a guard byte after a buffer changed",
		rank, mc->name);
	T_CHECK(dt < 5.0, "rank %d [%s]: took %.2f s", rank, mc->name, dt);
	if (res == ccomSuccess && sender_may_finish(j, c, rank)) {
		/* Its data sat in the FIFO; the root found the mismatch and broke the comm. */
		t0 = t_now();
		res = ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL);
		if (res == ccomSuccess)
			res = ccomCommSynchronize(comm);
		printf("rank %d [%s]: the next collective: %s after %.3f s: %s\n", rank, mc->name,
		       ccomGetErrorString(res), t_now() - t0, ccomGetLastError(comm));
		T_CHECK(res != ccomSuccess && t_now() - t0 < 5.0,
			"rank %d [%s]: the collective after the mismatched Gather did not fail at once",
			rank, mc->name);
		ccomCommAbort(comm);
		free(sb);
		free(rb);
		return T_PASS;
	}
	T_CHECK(res == ccomInvalidUsage, "rank %d [%s]: got %s, want ccomInvalidUsage", rank, mc->name,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(msg, "collective mismatch", mc->c[0].text, mc->c[1].text, mc->why,
			    "collective 2", NULL),
		"rank %d [%s]: the message does not name both calls (%s / %s) and '%s'", rank, mc->name,
		mc->c[0].text, mc->c[1].text, mc->why);
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomInvalidUsage, "async error %s", ccomGetErrorString(async));
	free(sb);
	free(rb);
	ccomCommAbort(comm);
	return T_PASS;
}

int main(void)
{
	static const char *const envs[] = { NULL, "CCOM_TRANSPORT=net" };
	struct ct_job j = { 0 };
	size_t k;
	int e, bad = 0;

	for (e = 0; e < 2; e++)
		for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			j.count = k;
			j.env[0] = envs[e];
			if (ct_run(&j, 2, mismatch_rank, 60)) {
				fprintf(stderr, "case %s failed%s\n", cases[k].name, e ? " over TCP" : "");
				bad++;
			}
		}
	return bad ? T_FAIL : T_PASS;
}
