// SPDX-License-Identifier: MIT
/*
 * race.c - the measured choice between candidate paths (tune/race.h).
 *
 * Why this shape: the first version (3 alternating single operations per
 * path, the best of each) kept the staged path at 4 and 16 MiB AllReduce
 * on a host where CMA ran 1.2x faster once chosen: each CMA trial followed
 * a staged operation and found the caches holding the staged path's
 * segment, and one best-of-3 is one lucky sample.  The paths run in
 * steady state what they are measured to do only when the operations
 * before ran on the same path, so a race runs turns of CCOM_RACE_RUN
 * consecutive operations per path, drops the first CCOM_RACE_DROP of each
 * turn, and compares medians (noise on a shared machine only adds time,
 * a median of several turns ignores one bad turn), per KiB so that sizes
 * within a class compare.  The median is of each turn's mean, not of
 * single operations: in the 6.12 guest (issue 27, 1 MiB Broadcast and
 * AlltoAll on 2 ranks) the staged path's median op beat the engine's
 * while 10-20 % of its operations took 5-10x, its mean up to 3x its
 * median; a median of operations never sees such a tail, a user's
 * throughput pays it.  With 2 kept operations in each of 3 turns a tail
 * counts once it hits 2 of the 3 turns: always when it recurs every other
 * operation or so, in about 1 race of 3 for a 20 % tail (1 of 10 for a
 * 10 % one); seeing rarer tails needs longer races.
 *
 * Two more things the first turns missed (issue 27, ccom-perf AllReduce on
 * 2 ranks): a path can keep getting faster long after its first turn (CMA
 * on fresh 16 MiB out-of-place buffers: 7.0, 6.1, 5.4, 4.2, 3.8 ... 2.7 ms
 * over its first 15 operations, the staged path settled within 2), so
 * the race measured CMA's warm-up (median 4.3 ms against staged 3.2) and
 * kept staged; and at 64 MiB the 24 operations of a race outlasted the
 * program's use of the size, so no verdict was kept or cached.  Hence a
 * race whose losing path still gets faster runs more turns, comparing
 * the last CCOM_RACE_TURNS, and large sizes run shorter turns.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "tune/race.h"
#include "util/log.h"
#include "util/params.h"

#define RACE_OPS(r) ((r)->npaths * ((r)->turns + (r)->extra) * (r)->run)
#define RACE_KEPT(r) ((r)->run - (r)->drop)	/* samples per turn */

void ccom_race_init(struct ccom_race *r, int npaths)
{
	memset(r, 0, sizeof(*r));
	r->npaths = (int8_t)(npaths < 2 ? 2 : npaths > CCOM_RACE_MAX_PATHS ?
			     CCOM_RACE_MAX_PATHS : npaths);
	r->verdict = -1;
	r->incumbent = -1;
	r->run = CCOM_RACE_RUN;
	r->drop = CCOM_RACE_DROP;
	r->turns = CCOM_RACE_TURNS;
	r->audit_ops = CCOM_RACE_AUDIT_OPS;
}

void ccom_race_audit_every(struct ccom_race *r, uint32_t ops)
{
	r->audit_ops = ops;
}

#define AUDIT_OPS_MAX (1u << 20)

uint32_t ccom_race_audit_param(void)
{
	static atomic_bool warned;	/* once per process, not per race table */
	int64_t v = ccom_param_int("CCOM_TUNE_AUDIT_OPS");

	if (v < 0 || v > AUDIT_OPS_MAX) {
		if (!atomic_exchange(&warned, true))
			ccom_warn("CCOM_TUNE_AUDIT_OPS=%lld is outside 0..%u; using %d", (long long)v,
				  AUDIT_OPS_MAX, CCOM_RACE_AUDIT_OPS);
		return CCOM_RACE_AUDIT_OPS;
	}
	return (uint32_t)v;
}

void ccom_race_size(struct ccom_race *r, uint64_t bytes)
{
	bool big = bytes >= CCOM_RACE_SHORT_BYTES;

	r->run = big ? CCOM_RACE_SHORT_RUN : CCOM_RACE_RUN;
	r->drop = big ? 1 : CCOM_RACE_DROP;
	r->turns = big ? CCOM_RACE_SHORT_TURNS : CCOM_RACE_TURNS;
}

/* A new race of @r's paths and schedule. */
static void race_reset(struct ccom_race *r)
{
	struct ccom_race old = *r;

	ccom_race_init(r, old.npaths);
	r->run = old.run;
	r->drop = old.drop;
	r->turns = old.turns;
	r->audit_ops = old.audit_ops;
}

void ccom_race_set(struct ccom_race *r, int path)
{
	race_reset(r);
	if (path >= 0 && path < r->npaths)
		r->verdict = (int8_t)path;
}

enum ccom_race_state ccom_race_state(const struct ccom_race *r)
{
	if (r->verdict >= 0)
		return CCOM_RACE_KEPT;
	return r->op < RACE_OPS(r) ? CCOM_RACE_TRIAL : CCOM_RACE_READY;
}

int ccom_race_next(const struct ccom_race *r)
{
	if (ccom_race_state(r) == CCOM_RACE_KEPT)
		return r->verdict;
	if (r->op >= RACE_OPS(r))
		return 0;
	return (r->op / r->run) % r->npaths;
}

static uint64_t per_kb(size_t bytes, uint64_t ns)
{
	size_t kb = bytes >> 10;

	return ns / (kb ? kb : 1);
}

void ccom_race_record(struct ccom_race *r, int path, size_t bytes, uint64_t ns)
{
	int k = RACE_KEPT(r), window = r->turns * k;
	unsigned i = r->op;

	if (ccom_race_state(r) != CCOM_RACE_TRIAL || path != ccom_race_next(r))
		return;
	r->op++;
	if (i % r->run < r->drop)
		return;
	/* A full window and a kept operation: an extra turn; the oldest turn's samples go. */
	if (r->n[path] >= window) {
		memmove(r->ns_per_kb[path], r->ns_per_kb[path] + k,
			(size_t)(window - k) * sizeof(r->ns_per_kb[path][0]));
		r->n[path] = (uint8_t)(window - k);
	}
	r->ns_per_kb[path][r->n[path]++] = per_kb(bytes, ns);
}

/* The lower middle of @n values (a time the path did reach). */
static uint64_t median_of(const uint64_t *src, int n)
{
	uint64_t v[CCOM_RACE_SAMPLES], x;
	int i, j;

	if (n <= 0)
		return 0;
	memcpy(v, src, (size_t)n * sizeof(v[0]));
	for (i = 1; i < n; i++) {	/* insertion sort: at most CCOM_RACE_SAMPLES */
		x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[(n - 1) / 2];
}

/* The mean of @n samples (one turn's kept operations: its tail included). */
static uint64_t mean_of(const uint64_t *src, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += src[i] < UINT64_MAX - sum ? src[i] : UINT64_MAX - sum;
	return n > 0 ? sum / (uint64_t)n : 0;
}

/*
 * @n samples of turns of @k kept operations each (the last turn may be
 * partial): each turn's mean into @turn; returns the number of turns.
 */
static int turn_means(const uint64_t *src, int n, int k, uint64_t *turn)
{
	int t = 0, i;

	if (k < 1)
		k = 1;
	for (i = 0; i < n; i += k, t++)
		turn[t] = mean_of(src + i, n - i < k ? n - i : k);
	return t;
}

uint64_t ccom_race_median(const struct ccom_race *r, int path)
{
	uint64_t turn[CCOM_RACE_SAMPLES];

	if (path < 0 || path >= r->npaths)
		return 0;
	return median_of(turn, turn_means(r->ns_per_kb[path], r->n[path], RACE_KEPT(r), turn));
}

uint64_t ccom_race_report(const struct ccom_race *r, int path)
{
	uint64_t m = ccom_race_median(r, path), last, before;
	int k = RACE_KEPT(r), n;

	if (!m)
		return 0;
	n = r->n[path];
	if (n < 2 * k)
		return m;
	last = mean_of(r->ns_per_kb[path] + n - k, k);
	before = mean_of(r->ns_per_kb[path] + n - 2 * k, k);
	return last + (before >> CCOM_RACE_FALL_SHIFT) < before ? m | CCOM_RACE_FALLING : m;
}

/* @a beats @b: faster by more than 1/2^CCOM_RACE_MARGIN_SHIFT of @b. */
static bool clearly_faster(uint64_t a, uint64_t b)
{
	return a && (!b || a + (b >> CCOM_RACE_MARGIN_SHIFT) < b);
}

/*
 * A path that lost to @best, by less than half, and still got faster in
 * its last turn on some rank: another turn of every path may change the
 * verdict.
 */
static bool still_warming(const struct ccom_race *r, const uint64_t *flagged, const uint64_t *worst,
			  int best)
{
	int p;

	if (r->extra >= CCOM_RACE_EXTRA_MAX)
		return false;
	for (p = 0; p < r->npaths; p++)
		if (p != best && (flagged[p] & CCOM_RACE_FALLING) && worst[best] &&
		    2 * worst[p] < 3 * worst[best])
			return true;
	return false;
}

int ccom_race_decide(struct ccom_race *r, const uint64_t *flagged)
{
	int keep = r->incumbent >= 0 ? r->incumbent : 0, best = keep, p;
	uint64_t worst[CCOM_RACE_MAX_PATHS] = { 0 };

	for (p = 0; p < r->npaths; p++)
		worst[p] = flagged[p] & ~CCOM_RACE_FALLING;
	for (p = 0; p < r->npaths; p++)
		if (worst[p] && (!worst[best] || worst[p] < worst[best]))
			best = p;
	if (best != keep && !clearly_faster(worst[best], worst[keep]))
		best = keep;
	if (ccom_race_state(r) == CCOM_RACE_READY && still_warming(r, flagged, worst, best)) {
		r->extra++;	/* one more turn of every path (the same on every rank) */
		return -1;
	}
	if (r->incumbent >= 0 && best == r->incumbent && r->backoff < CCOM_RACE_BACKOFF_MAX)
		r->backoff++;
	else if (r->incumbent >= 0)
		r->backoff = 0;
	r->rival = 0;
	for (p = 0; p < r->npaths; p++)
		if (p != best && worst[p] && (!r->rival || worst[p] < r->rival))
			r->rival = worst[p];
	r->verdict = (int8_t)best;
	r->incumbent = -1;
	r->op = 0;
	r->extra = 0;
	r->slow = 0;
	r->kept_ops = 0;
	r->price = worst[best];
	r->races++;
	return best;
}

bool ccom_race_after(struct ccom_race *r, size_t bytes, uint64_t ns)
{
	uint64_t v = per_kb(bytes, ns);

	if (ccom_race_state(r) != CCOM_RACE_KEPT)
		return false;
	if (r->kept_ops < UINT32_MAX)
		r->kept_ops++;
	r->audit = r->audit_ops && r->kept_ops >= ((uint64_t)r->audit_ops << r->backoff);
	if (r->audit) {
		r->slow = 0;
		return true;
	}
	if (!r->price || v < r->price) {
		r->price = v;
		r->slow = 0;
		return false;
	}
	if (v <= CCOM_RACE_SLOW_FACTOR * r->price || (r->rival && 2 * v <= 3 * r->rival)) {
		r->slow = 0;
		return false;
	}
	if (++r->slow < CCOM_RACE_SLOW_RUN ||
	    r->kept_ops < ((uint32_t)CCOM_RACE_RECHECK_OPS << r->backoff))
		return false;
	r->slow = 0;
	return true;
}

void ccom_race_restart(struct ccom_race *r)
{
	struct ccom_race old = *r;

	race_reset(r);
	r->incumbent = old.verdict;
	r->races = old.races;
	r->backoff = old.backoff;
}
