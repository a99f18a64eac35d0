/* SPDX-License-Identifier: MIT */
/*
 * race.h - the measured choice between a collective's candidate paths
 * (tune/race.c): per collective and size class, the operations themselves
 * are timed on each path in turns, the fastest (by the slowest rank's
 * median) is kept, and the verdict is measured again when the kept path
 * runs clearly slower than its price.  Pure bookkeeping: the caller runs
 * the operations, times them, and makes the ranks agree (every rank keeps
 * the same schedule because every rank runs the same operations in the
 * same order).
 */
#ifndef CCOM_TUNE_RACE_H
#define CCOM_TUNE_RACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CCOM_RACE_MAX_PATHS 3
/*
 * A turn is CCOM_RACE_RUN consecutive operations of one path; its first
 * CCOM_RACE_DROP are not kept (they pay the switch: the other path's
 * buffers in the caches, first touches; CMA at 4 MiB on the host took
 * 1.5-1.8 ms in its first turn and 1.3, 1.0, 0.86 ms in its second
 * against 0.7 ms in steady state).  Each path gets CCOM_RACE_TURNS turns,
 * the paths alternating, so that a drift of the machine's load hits all.
 */
#define CCOM_RACE_RUN 4
#define CCOM_RACE_DROP 2
#define CCOM_RACE_TURNS 3
#define CCOM_RACE_SAMPLES (CCOM_RACE_TURNS * (CCOM_RACE_RUN - CCOM_RACE_DROP))
/* A path is kept over the default (path 0) only when this much faster (1/32 = 3 %). */
#define CCOM_RACE_MARGIN_SHIFT 5
/*
 * Clearly wrong: CCOM_RACE_SLOW_RUN operations in a row on the kept path,
 * each more than CCOM_RACE_SLOW_FACTOR times its price (the median it won
 * with, or the best seen since) and more than 3/2 of the best rival's
 * median (a machine that got slower for every path is not a wrong
 * choice).  A race that kept its incumbent doubles the operations before
 * the next re-check may fire (CCOM_RACE_RECHECK_OPS << n), so a loaded
 * machine does not spend its time measuring.
 */
#define CCOM_RACE_SLOW_FACTOR 3
#define CCOM_RACE_SLOW_RUN 4
#define CCOM_RACE_RECHECK_OPS 32
#define CCOM_RACE_BACKOFF_MAX 10

enum ccom_race_state {
	CCOM_RACE_TRIAL,	/* run the path ccom_race_next() names, then ccom_race_record() */
	CCOM_RACE_READY,	/* every sample in: agree on medians, ccom_race_decide() */
	CCOM_RACE_KEPT,		/* run the verdict, then ccom_race_after() */
};

/**
 * struct ccom_race - one collective and size class
 * @npaths: candidates (2 or 3); path 0 is the default (the staged path)
 * @verdict: the kept path, -1 while measuring
 * @incumbent: while re-measuring, the verdict before (-1: none)
 * @op: operations run in the current race
 * @n: samples kept per path
 * @ns_per_kb: the samples (ns per KiB of the operation, so that the sizes
 *	within one class compare)
 * @price: the kept path's ns per KiB: the median it won with, lowered by
 *	faster operations since; 0 for a verdict read from a cache until its
 *	first operation
 * @rival: the fastest other path's median when the verdict was made (0: unknown)
 * @slow: consecutive operations of the kept path clearly too slow
 * @kept_ops: operations of the kept path since the verdict
 * @backoff: re-checks that confirmed their incumbent (capped)
 * @races: races run (the first one included)
 */
struct ccom_race {
	int8_t npaths;
	int8_t verdict;
	int8_t incumbent;
	uint16_t op;
	uint8_t n[CCOM_RACE_MAX_PATHS];
	uint8_t slow;
	uint8_t backoff;
	uint32_t races;
	uint32_t kept_ops;
	uint64_t ns_per_kb[CCOM_RACE_MAX_PATHS][CCOM_RACE_SAMPLES];
	uint64_t price;
	uint64_t rival;
};

/* A race of @npaths (clamped to 2..CCOM_RACE_MAX_PATHS) candidates, nothing measured. */
void ccom_race_init(struct ccom_race *r, int npaths);
/* A verdict taken from a cache (@path out of range: measure instead). */
void ccom_race_set(struct ccom_race *r, int path);
enum ccom_race_state ccom_race_state(const struct ccom_race *r);
/* The path the next operation runs on (in CCOM_RACE_TRIAL or CCOM_RACE_KEPT). */
int ccom_race_next(const struct ccom_race *r);
/* A trial operation of @path and @bytes took @ns (@path must be ccom_race_next()'s). */
void ccom_race_record(struct ccom_race *r, int path, size_t bytes, uint64_t ns);
/* This rank's median of @path in ns per KiB (0: no sample). */
uint64_t ccom_race_median(const struct ccom_race *r, int path);
/*
 * Keep the fastest path given @worst, each path's slowest-rank median (ns
 * per KiB, the same array on every rank): returns the verdict.  A path
 * beats the default (0) only by more than the margin; in a race that
 * re-checks a verdict, the old verdict stays unless beaten by the margin.
 */
int ccom_race_decide(struct ccom_race *r, const uint64_t *worst);
/*
 * A kept operation of @bytes took @ns: true when it is clearly wrong
 * (CCOM_RACE_SLOW_RUN in a row far above the price): the caller makes
 * every rank agree, then calls ccom_race_restart() on every rank.
 */
bool ccom_race_after(struct ccom_race *r, size_t bytes, uint64_t ns);
/* Measure again, keeping the old verdict as the incumbent. */
void ccom_race_restart(struct ccom_race *r);

#endif
