/* SPDX-License-Identifier: MIT */
/*
 * race.h - the measured choice between a collective's candidate paths
 * (tune/race.c): per collective and size class, the operations themselves
 * are timed on each path in turns, the fastest (by the slowest rank's
 * median of the turns' mean times per operation) is kept, and the
 * verdict is measured again when the kept path runs clearly slower than
 * its price.  Pure bookkeeping: the caller runs
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
 * A turn's sample is the mean of its kept operations (ns per KiB), so a
 * slow operation in it counts as a user pays it; a path's figure is the
 * median of its turns' samples, so one bad turn (a stall, a preemption)
 * does not decide and a tail that recurs in most turns does (issue 27: the
 * staged path's median beat the engine's while its mean was up to 3x its
 * median).
 * From CCOM_RACE_SHORT_BYTES per rank a race runs shorter turns
 * (CCOM_RACE_SHORT_RUN operations, the first dropped, CCOM_RACE_SHORT_TURNS
 * per path): an operation there takes tens of ms, a scheduling hiccup is
 * small beside it, and 24 of them (half on the slower path) outlast what
 * many programs run of one size: a race that does not finish keeps no
 * verdict and caches none (ccom-perf's 64 MiB passes run 11 operations).
 */
#define CCOM_RACE_RUN 4
#define CCOM_RACE_DROP 2
#define CCOM_RACE_TURNS 3
#define CCOM_RACE_SAMPLES (CCOM_RACE_TURNS * (CCOM_RACE_RUN - CCOM_RACE_DROP))
#define CCOM_RACE_SHORT_BYTES (32ull << 20)
#define CCOM_RACE_SHORT_RUN 2
#define CCOM_RACE_SHORT_TURNS 2
/*
 * A path whose last turn ran clearly faster (1/16) than its turn before
 * is still warming up (CMA on fresh 16 MiB buffers fell from 7 to 2.7 ms
 * over its first 15 operations): when such a path lost, but by less than
 * half, the race runs one more turn of every path, up to
 * CCOM_RACE_EXTRA_MAX times, and compares the last CCOM_RACE_TURNS
 * turns.  ccom_race_report() carries the flag (CCOM_RACE_FALLING) to
 * ccom_race_decide() with the median.
 */
#define CCOM_RACE_FALL_SHIFT 4
#define CCOM_RACE_EXTRA_MAX 2
#define CCOM_RACE_FALLING (1ull << 63)
/* A path is kept over the default (path 0) only when this much faster (1/32 = 3 %). */
#define CCOM_RACE_MARGIN_SHIFT 5
/*
 * Clearly wrong: CCOM_RACE_SLOW_RUN operations in a row on the kept path,
 * each more than CCOM_RACE_SLOW_FACTOR times its price (the median it won
 * with, or the best seen since) and more than 3/2 of the best rival's
 * figure (a machine that got slower for every path is not a wrong
 * choice).  A race that kept its incumbent doubles the operations before
 * the next re-check may fire (CCOM_RACE_RECHECK_OPS << n), so a loaded
 * machine does not spend its time measuring.
 */
#define CCOM_RACE_SLOW_FACTOR 3
#define CCOM_RACE_SLOW_RUN 4
#define CCOM_RACE_RECHECK_OPS 32
#define CCOM_RACE_BACKOFF_MAX 10
/*
 * An audit: a kept verdict (raced or read from a cache) is measured again
 * after CCOM_RACE_AUDIT_OPS operations on it, even when they run at their
 * price, and again after twice as many each time the audit keeps it.  One
 * race is a sample: on a 2-core host at load 0.1-2, 1 of 9 races of a
 * 1 MiB AllReduce on 2 ranks kept the staged path while CMA ran 1.45x
 * faster (issue 27), and a path that runs at its price never looks
 * clearly wrong.  An audit runs half a race's operations on the losing
 * paths: about 0.7 % of the 256 before it at 1 MiB on 2 ranks.
 */
#define CCOM_RACE_AUDIT_OPS 256	/* the default of CCOM_TUNE_AUDIT_OPS */

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
 * @run: operations per turn (CCOM_RACE_RUN, or CCOM_RACE_SHORT_RUN)
 * @drop: of which the first @drop are not kept
 * @turns: turns per path compared (the last @turns)
 * @extra: turns of every path added because one was still getting faster
 * @op: operations run in the current race
 * @n: samples kept per path (the last @turns turns' kept operations)
 * @ns_per_kb: the samples, turn after turn (ns per KiB of each kept
 *	operation, so that the sizes within one class compare)
 * @price: the kept path's ns per KiB: the figure it won with, lowered by
 *	faster operations since; 0 for a verdict read from a cache until its
 *	first operation
 * @rival: the fastest other path's figure at the verdict (0: unknown)
 * @slow: consecutive operations of the kept path clearly too slow
 * @kept_ops: operations of the kept path since the verdict
 * @backoff: re-checks that confirmed their incumbent (capped)
 * @audit: ccom_race_after() last fired for an audit, not for operations
 *	clearly too slow
 * @audit_ops: operations of a verdict before its first audit (0: none)
 * @races: races run (the first one included)
 */
struct ccom_race {
	int8_t npaths;
	int8_t verdict;
	int8_t incumbent;
	uint8_t run;
	uint8_t drop;
	uint8_t turns;
	uint8_t extra;
	uint16_t op;
	uint8_t n[CCOM_RACE_MAX_PATHS];
	uint8_t slow;
	uint8_t backoff;
	uint8_t audit;
	uint32_t races;
	uint32_t kept_ops;
	uint32_t audit_ops;
	uint64_t ns_per_kb[CCOM_RACE_MAX_PATHS][CCOM_RACE_SAMPLES];
	uint64_t price;
	uint64_t rival;
};

/* A race of @npaths (clamped to 2..CCOM_RACE_MAX_PATHS) candidates, nothing measured. */
void ccom_race_init(struct ccom_race *r, int npaths);
/*
 * The schedule of a race whose operations move about @bytes per rank
 * (the class's size, the same on every rank): call after
 * ccom_race_init(); ccom_race_set() and ccom_race_restart() keep it.
 */
void ccom_race_size(struct ccom_race *r, uint64_t bytes);
/*
 * Audit @r's verdicts after @ops operations (0: never; default
 * CCOM_RACE_AUDIT_OPS): call after ccom_race_init(); ccom_race_set() and
 * ccom_race_restart() keep it.
 */
void ccom_race_audit_every(struct ccom_race *r, uint32_t ops);
/* CCOM_TUNE_AUDIT_OPS, bounded (a value out of 0..2^20 warns and gives the default). */
uint32_t ccom_race_audit_param(void);
/* A verdict taken from a cache (@path out of range: measure instead). */
void ccom_race_set(struct ccom_race *r, int path);
enum ccom_race_state ccom_race_state(const struct ccom_race *r);
/* The path the next operation runs on (in CCOM_RACE_TRIAL or CCOM_RACE_KEPT). */
int ccom_race_next(const struct ccom_race *r);
/* A trial operation of @path and @bytes took @ns (@path must be ccom_race_next()'s). */
void ccom_race_record(struct ccom_race *r, int path, size_t bytes, uint64_t ns);
/*
 * This rank's figure of @path in ns per KiB (0: no sample): the median
 * (the lower middle) of its last turns' means.
 */
uint64_t ccom_race_median(const struct ccom_race *r, int path);
/*
 * What this rank publishes for @path before ccom_race_decide(): the
 * figure (ccom_race_median()), with CCOM_RACE_FALLING set while the
 * path's last turn's mean was clearly lower than its turn before's.
 */
uint64_t ccom_race_report(const struct ccom_race *r, int path);
/* Two ranks' reports of one path: the slower figure, falling if either was. */
static inline uint64_t ccom_race_worse(uint64_t a, uint64_t b)
{
	uint64_t ma = a & ~CCOM_RACE_FALLING, mb = b & ~CCOM_RACE_FALLING;

	return (ma > mb ? ma : mb) | ((a | b) & CCOM_RACE_FALLING);
}
/*
 * Keep the fastest path given @worst, each path's slowest-rank figure (ns
 * per KiB, the same array on every rank; CCOM_RACE_FALLING or'ed in from
 * any rank's ccom_race_report()): returns the verdict.  A path beats the
 * default (0) only by more than the margin; in a race that re-checks a
 * verdict, the old verdict stays unless beaten by the margin.  Returns -1
 * (state CCOM_RACE_TRIAL again) when a losing path within 3/2 of the
 * winner is still getting faster and the race may run another turn of
 * every path.
 */
int ccom_race_decide(struct ccom_race *r, const uint64_t *worst);
/*
 * A kept operation of @bytes took @ns: true when the verdict is to be
 * measured again, because it is clearly wrong (CCOM_RACE_SLOW_RUN in a
 * row far above the price) or because an audit is due (@r->audit set;
 * every rank counts the same operations, so all reach it together): the
 * caller makes every rank agree, then calls ccom_race_restart() on every
 * rank.
 */
bool ccom_race_after(struct ccom_race *r, size_t bytes, uint64_t ns);
/* Measure again, keeping the old verdict as the incumbent. */
void ccom_race_restart(struct ccom_race *r);

#endif
