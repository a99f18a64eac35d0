/* SPDX-License-Identifier: MIT */
/*
 * mismatch_util.h - the case table and the per-rank check of the
 * collective-mismatch tests (coll_mismatch on one host, net_mismatch
 * between hosts): two ranks, a matched AllReduce, then a pair of calls that
 * differ, which must fail on both ranks within 5 s with ccomInvalidUsage and
 * a sentence naming both calls and what differs, no byte of the 64 guard
 * bytes after each buffer changed.
 */
#ifndef CCOM_MISMATCH_UTIL_H
#define CCOM_MISMATCH_UTIL_H

#include "coll_util.h"

#define MM_GUARD 64
#define MM_GUARD_BYTE 0xa5

enum { MM_ALLREDUCE, MM_BROADCAST, MM_REDUCE };

struct mm_call {
	int kind;		/* MM_ALLREDUCE, ... */
	size_t count;
	ccomDataType_t dt;
	ccomRedOp_t op;
	int root;
	const char *text;	/* how the message must name it */
};

struct mm_case {
	const char *name;
	struct mm_call c[2];	/* rank 0's and rank 1's */
	const char *why;	/* what the message must say differs */
	int memalloc;		/* buffers from ccomMemAlloc (the zero-copy path) */
	int check_off;		/* CCOM_CHECK_MISMATCH=0: no ccomInvalidUsage wanted */
};

/* The cases both tests run: each field of the signature differing once. */
#define MM_BASIC_CASES								\
	{ "count", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0,			\
		       "ccomAllReduce(count 100, float, sum)" },			\
		     { MM_ALLREDUCE, 200, ccomFloat32, ccomSum, 0,			\
		       "ccomAllReduce(count 200, float, sum)" } },			\
	  "the element counts differ", 0, 0 },					\
	{ "kind", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0,			\
		      "ccomAllReduce(count 100, float, sum)" },				\
		    { MM_BROADCAST, 100, ccomFloat32, ccomSum, 0,			\
		      "ccomBroadcast(count 100, float, root 0)" } },			\
	  "they called different collectives", 0, 0 },				\
	{ "dtype", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0,			\
		       "ccomAllReduce(count 100, float, sum)" },			\
		     { MM_ALLREDUCE, 100, ccomInt32, ccomSum, 0,			\
		       "ccomAllReduce(count 100, int32, sum)" } },			\
	  "the datatypes differ", 0, 0 },						\
	{ "op", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0,			\
		    "ccomAllReduce(count 100, float, sum)" },				\
		  { MM_ALLREDUCE, 100, ccomFloat32, ccomMax, 0,				\
		    "ccomAllReduce(count 100, float, max)" } },				\
	  "the reduction ops differ", 0, 0 },					\
	{ "root", { { MM_BROADCAST, 100, ccomFloat32, ccomSum, 0,			\
		      "ccomBroadcast(count 100, float, root 0)" },			\
		    { MM_BROADCAST, 100, ccomFloat32, ccomSum, 1,			\
		      "ccomBroadcast(count 100, float, root 1)" } },			\
	  "the roots differ", 0, 0 }

static inline int mm_guard_ok(const unsigned char *g)
{
	int i;

	for (i = 0; i < MM_GUARD; i++)
		if (g[i] != MM_GUARD_BYTE)
			return 0;
	return 1;
}

static inline ccomResult_t mm_issue(const struct mm_call *c, void *sb, void *rb, ccomComm_t comm)
{
	if (c->kind == MM_ALLREDUCE)
		return ccomAllReduce(sb, rb, c->count, c->dt, c->op, comm, NULL);
	if (c->kind == MM_BROADCAST)
		return ccomBroadcast(sb, rb, c->count, c->dt, c->root, comm, NULL);
	return ccomReduce(sb, rb, c->count, c->dt, c->op, c->root, comm, NULL);
}

/* Rank @rank's call of case @mc on @comm, checked as the head comment says. */
static inline int mm_run_case(ccomComm_t comm, int rank, const struct mm_case *mc)
{
	const struct mm_call *c = &mc->c[rank];
	size_t bytes = c->count * ct_size(c->dt), i;
	unsigned char *sb, *rb;
	ccomResult_t res, async;
	float one = 1;
	const char *msg;
	double t0, dt;

	if (mc->memalloc) {
		T_CCOM(ccomMemAlloc(comm, (void **)&sb, bytes + MM_GUARD), ccomSuccess);
		T_CCOM(ccomMemAlloc(comm, (void **)&rb, bytes + MM_GUARD), ccomSuccess);
	} else {
		sb = malloc(bytes + MM_GUARD);
		rb = malloc(bytes + MM_GUARD);
		T_CHECK(sb && rb, "out of memory");
	}
	for (i = 0; i < c->count; i++) {
		ct_put(sb, i, c->dt, 1.0);
		ct_put(rb, i, c->dt, 0.0);
	}
	memset(sb + bytes, MM_GUARD_BYTE, MM_GUARD);
	memset(rb + bytes, MM_GUARD_BYTE, MM_GUARD);
	/* The first collective matches: the check must not fire on it. */
	T_CCOM(ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(one == 2.0f, "matched AllReduce gave %g", (double)one);

	t0 = t_now();
	res = mm_issue(c, sb, rb, comm);
	T_CHECK(res == ccomSuccess, "enqueue: %s", ccomGetErrorString(res));
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	msg = ccomGetLastError(comm);
	printf("rank %d [%s]: %s after %.3f s: %s\n", rank, mc->name, ccomGetErrorString(res), dt, msg);
	fflush(stdout);
	T_CHECK(mm_guard_ok(sb + bytes) && mm_guard_ok(rb + bytes),
		"rank %d [%s]: a guard byte after a buffer changed", rank, mc->name);
	if (mc->check_off) {
		T_CHECK(res != ccomInvalidUsage, "rank %d: CCOM_CHECK_MISMATCH=0 still reported a mismatch",
			rank);
	} else {
		T_CHECK(dt < 5.0, "rank %d [%s]: took %.2f s", rank, mc->name, dt);
		T_CHECK(res == ccomInvalidUsage, "rank %d [%s]: got %s, want ccomInvalidUsage", rank,
			mc->name, ccomGetErrorString(res));
		T_CHECK(t_has_words(msg, "collective mismatch", mc->c[0].text, mc->c[1].text, mc->why,
				    "collective 2", NULL),
			"rank %d [%s]: the message does not name both calls (%s / %s) and '%s'", rank,
			mc->name, mc->c[0].text, mc->c[1].text, mc->why);
		T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
		T_CHECK(async == ccomInvalidUsage, "async error %s", ccomGetErrorString(async));
	}
	if (mc->memalloc) {
		ccomMemFree(comm, sb);
		ccomMemFree(comm, rb);
	} else {
		free(sb);
		free(rb);
	}
	return T_PASS;
}

#endif
