// SPDX-License-Identifier: MIT
/*
 * hostsync.c - ccom-perf's own barrier and agreements between the ranks it
 * forks (-n), through a mapping shared before the fork, so that the
 * harness runs no collective of the library under test between its timed
 * loops (nccl-tests does its agreeing with MPI for the same reason).
 *
 * Why: the harness's small agreements ran on whatever path the variant
 * forced.  Under CCOM_KDEV=1 they took the driver's path, under the
 * automatic choice shm, and in a TCG guest that history alone moved the
 * next timed loop of the mapped path by 1.6x (AllReduce 1 MiB, median
 * 5.3 ms per operation after agreements on the driver, 8.5 after
 * agreements on shm; Documentation/libccom/
 * kdev.rst), so a forced variant and the automatic choice were not timed
 * alike.  Launcher mode (no -n) still agrees through libccom.
 *
 * A rank that dies is reported by the parent (perf_sync_abort()), and the
 * ranks waiting for it give up instead of waiting forever.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "perf.h"

/* Longer than any timed loop ccom-perf runs between two agreements. */
#define SYNC_TIMEOUT_S 1800

struct perf_sync {
	_Atomic uint32_t arrived;	/* ranks at the current barrier */
	_Atomic uint32_t gen;		/* bumped by the last rank to arrive */
	_Atomic int abort;		/* set by the parent when a rank died */
	int nranks;
	/* Two sets: a rank writes the next agreement's value while a slower one reads this one's. */
	union perf_sync_val { int64_t i; double d; } val[][2];
};

struct perf_sync *perf_sync_create(int nranks)
{
	size_t len = sizeof(struct perf_sync) + (size_t)nranks * sizeof(union perf_sync_val[2]);
	struct perf_sync *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				   -1, 0);

	if (s == MAP_FAILED) {
		perror("ccom-perf: mmap of the ranks' shared agreement page");
		return NULL;
	}
	s->nranks = nranks;
	return s;
}

void perf_sync_abort(struct perf_sync *s)
{
	if (s)
		atomic_store(&s->abort, 1);
}

/* Every rank returns once all arrived: 0, or -1 with the reason on stderr. */
static int sync_barrier(struct perf_sync *s, int rank)
{
	const struct timespec nap = { 0, 20000 };
	uint32_t g = atomic_load(&s->gen);
	double deadline;

	if (atomic_fetch_add(&s->arrived, 1) + 1 == (uint32_t)s->nranks) {
		atomic_store(&s->arrived, 0);
		atomic_fetch_add(&s->gen, 1);
		return 0;
	}
	deadline = perf_now_s() + SYNC_TIMEOUT_S;
	while (atomic_load(&s->gen) == g) {
		if (atomic_load(&s->abort)) {
			fprintf(stderr, "ccom-perf: rank %d: another rank died; stopping\n", rank);
			return -1;
		}
		if (perf_now_s() > deadline) {
			fprintf(stderr, "ccom-perf: rank %d: not every rank reached ccom-perf's barrier within %d s; stopping\n",
				rank, SYNC_TIMEOUT_S);
			return -1;
		}
		nanosleep(&nap, NULL);
	}
	return 0;
}

int perf_sync_agree(struct perf_sync *s, int rank, unsigned int *round, void *v,
		    ccomDataType_t dt, ccomRedOp_t op)
{
	int set = (int)(*round)++ & 1, r;
	int64_t i;
	double d;

	if (rank < 0 || rank >= s->nranks) {
		fprintf(stderr, "ccom-perf: rank %d is not one of the %d forked ranks\n", rank,
			s->nranks);
		return -1;
	}
	if ((dt != ccomInt32 && dt != ccomInt64 && dt != ccomFloat64) ||
	    (op != ccomSum && op != ccomMax)) {
		fprintf(stderr, "ccom-perf: rank %d: the harness agrees on int32, int64 or double sums and maxima only\n",
			rank);
		return -1;
	}
	if (dt == ccomFloat64)
		s->val[rank][set].d = *(double *)v;
	else
		s->val[rank][set].i = dt == ccomInt32 ? *(int32_t *)v : *(int64_t *)v;
	if (sync_barrier(s, rank))
		return -1;
	i = s->val[0][set].i;
	d = s->val[0][set].d;
	for (r = 1; r < s->nranks; r++) {
		if (dt == ccomFloat64)
			d = op == ccomSum ? d + s->val[r][set].d :
			    s->val[r][set].d > d ? s->val[r][set].d : d;
		else
			i = op == ccomSum ? i + s->val[r][set].i :
			    s->val[r][set].i > i ? s->val[r][set].i : i;
	}
	if (dt == ccomFloat64)
		*(double *)v = d;
	else if (dt == ccomInt64)
		*(int64_t *)v = i;
	else
		*(int32_t *)v = (int32_t)i;
	return 0;
}
