// SPDX-License-Identifier: MIT
/*
 * Description: collective-mismatch detection (CCOM_CHECK_MISMATCH, on by
 * default).  Two forked ranks issue different collectives as their second
 * collective (the first one matches): a count, kind, datatype, op and root
 * mismatch on the small-message path (the tuner's LL128, and each case
 * again with CCOM_PROTO=ll), a count mismatch on the staged direct engine
 * (4 Mi floats), between a small call (LL128) and a staged one (each rank
 * waits in a different protocol: the board must name it), and on the
 * zero-copy path (ccomMemAlloc buffers).
 * Every rank must fail with ccomInvalidUsage within 5 s, with a sentence
 * that names both ranks' calls and what differs, and no byte outside the
 * buffers (64 guard bytes after each) may change.  CCOM_CHECK_MISMATCH=0
 * turns the check off (the same count mismatch then is not reported as
 * ccomInvalidUsage).
 */
#include "coll_util.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

struct call {
	int kind;		/* 0 AllReduce, 1 Broadcast */
	size_t count;
	ccomDataType_t dt;
	ccomRedOp_t op;
	int root;
	const char *text;	/* how the message must name it */
};

struct mcase {
	const char *name;
	struct call c[2];
	const char *why;
	int memalloc;
	int check_off;
};

static const struct mcase cases[] = {
	{ "count", { { 0, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		     { 0, 200, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 200, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "kind", { { 0, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		    { 1, 100, ccomFloat32, ccomSum, 0, "ccomBroadcast(count 100, float, root 0)" } },
	  "they called different collectives", 0, 0 },
	{ "dtype", { { 0, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		     { 0, 100, ccomInt32, ccomSum, 0, "ccomAllReduce(count 100, int32, sum)" } },
	  "the datatypes differ", 0, 0 },
	{ "op", { { 0, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		  { 0, 100, ccomFloat32, ccomMax, 0, "ccomAllReduce(count 100, float, max)" } },
	  "the reduction ops differ", 0, 0 },
	{ "root", { { 1, 100, ccomFloat32, ccomSum, 0, "ccomBroadcast(count 100, float, root 0)" },
		    { 1, 100, ccomFloat32, ccomSum, 1, "ccomBroadcast(count 100, float, root 1)" } },
	  "the roots differ", 0, 0 },
	{ "count-direct", { { 0, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" },
			    { 0, 2u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "count-protocols", { { 0, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
			       { 0, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "count-zcopy", { { 0, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" },
			   { 0, 2u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ", 1, 0 },
	{ "check-off", { { 0, 100, ccomFloat32, ccomSum, 0, NULL },
			 { 0, 200, ccomFloat32, ccomSum, 0, NULL } },
	  NULL, 0, 1 },
};

static int guard_ok(const unsigned char *g)
{
	int i;

	for (i = 0; i < GUARD; i++)
		if (g[i] != GUARD_BYTE)
			return 0;
	return 1;
}

static int mismatch_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	const struct mcase *mc = &cases[j->count];
	const struct call *c = &mc->c[rank];
	size_t esz = ct_size(c->dt), bytes = c->count * esz, i;
	unsigned char *sb, *rb;
	ccomResult_t res, async;
	ccomComm_t comm;
	float one = 1;
	const char *msg;
	double t0, dt;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "30", 1);	/* a timeout is not what must end it */
	if (mc->check_off)
		setenv("CCOM_CHECK_MISMATCH", "0", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	if (mc->memalloc) {
		T_CCOM(ccomMemAlloc(comm, (void **)&sb, bytes + GUARD), ccomSuccess);
		T_CCOM(ccomMemAlloc(comm, (void **)&rb, bytes + GUARD), ccomSuccess);
	} else {
		sb = malloc(bytes + GUARD);
		rb = malloc(bytes + GUARD);
		T_CHECK(sb && rb, "out of memory");
	}
	for (i = 0; i < c->count; i++) {
		ct_put(sb, i, c->dt, 1.0);
		ct_put(rb, i, c->dt, 0.0);
	}
	memset(sb + bytes, GUARD_BYTE, GUARD);
	memset(rb + bytes, GUARD_BYTE, GUARD);
	/* The first collective matches: the check must not fire on it. */
	T_CCOM(ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(one == 2.0f, "matched AllReduce gave %g", (double)one);

	t0 = t_now();
	if (c->kind == 0)
		res = ccomAllReduce(sb, rb, c->count, c->dt, c->op, comm, NULL);
	else
		res = ccomBroadcast(sb, rb, c->count, c->dt, c->root, comm, NULL);
	T_CHECK(res == ccomSuccess, "enqueue: %s", ccomGetErrorString(res));
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	msg = ccomGetLastError(comm);
	printf("rank %d [%s]: %s after %.3f s: %s\n", rank, mc->name, ccomGetErrorString(res), dt, msg);
	T_CHECK(guard_ok(sb + bytes) && guard_ok(rb + bytes), "rank %d [%s]: a guard byte after a buffer changed",
		rank, mc->name);
	if (mc->check_off) {
		T_CHECK(res != ccomInvalidUsage, "rank %d: CCOM_CHECK_MISMATCH=0 still reported a mismatch",
			rank);
		ccomCommAbort(comm);
		free(sb);
		free(rb);
		return T_PASS;
	}
	T_CHECK(dt < 5.0, "rank %d [%s]: took %.2f s", rank, mc->name, dt);
	T_CHECK(res == ccomInvalidUsage, "rank %d [%s]: got %s, want ccomInvalidUsage", rank, mc->name,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(msg, "collective mismatch", mc->c[0].text, mc->c[1].text, mc->why,
			    "collective 2", NULL),
		"rank %d [%s]: the message does not name both calls (%s / %s) and '%s'", rank, mc->name,
		mc->c[0].text, mc->c[1].text, mc->why);
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomInvalidUsage, "async error %s", ccomGetErrorString(async));
	if (mc->memalloc) {
		ccomMemFree(comm, sb);
		ccomMemFree(comm, rb);
	} else {
		free(sb);
		free(rb);
	}
	ccomCommAbort(comm);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };
	size_t k;
	int bad = 0;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		j.count = k;
		j.env[0] = NULL;
		if (ct_run(&j, 2, mismatch_rank, 60)) {
			fprintf(stderr, "case %s failed\n", cases[k].name);
			bad++;
		}
		/* The small cases once more on LL (the tuner gives them LL128). */
		if (cases[k].c[0].count > 100 || cases[k].c[1].count > 200 || cases[k].check_off)
			continue;
		j.env[0] = "CCOM_PROTO=ll";
		if (ct_run(&j, 2, mismatch_rank, 60)) {
			fprintf(stderr, "case %s failed with CCOM_PROTO=ll\n", cases[k].name);
			bad++;
		}
	}
	return bad ? T_FAIL : T_PASS;
}
