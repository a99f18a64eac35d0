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
 * within a class compare.
 */
#include <string.h>

#include "tune/race.h"

#define RACE_OPS(r) ((r)->npaths * CCOM_RACE_TURNS * CCOM_RACE_RUN)

void ccom_race_init(struct ccom_race *r, int npaths)
{
	memset(r, 0, sizeof(*r));
	r->npaths = (int8_t)(npaths < 2 ? 2 : npaths > CCOM_RACE_MAX_PATHS ?
			     CCOM_RACE_MAX_PATHS : npaths);
	r->verdict = -1;
	r->incumbent = -1;
}

void ccom_race_set(struct ccom_race *r, int path)
{
	int np = r->npaths;

	ccom_race_init(r, np);
	if (path >= 0 && path < np)
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
	return (r->op / CCOM_RACE_RUN) % r->npaths;
}

static uint64_t per_kb(size_t bytes, uint64_t ns)
{
	size_t kb = bytes >> 10;

	return ns / (kb ? kb : 1);
}

void ccom_race_record(struct ccom_race *r, int path, size_t bytes, uint64_t ns)
{
	bool warm = r->op % CCOM_RACE_RUN >= CCOM_RACE_DROP;

	if (ccom_race_state(r) != CCOM_RACE_TRIAL || path != ccom_race_next(r))
		return;
	r->op++;
	if (warm && r->n[path] < CCOM_RACE_SAMPLES)
		r->ns_per_kb[path][r->n[path]++] = per_kb(bytes, ns);
}

uint64_t ccom_race_median(const struct ccom_race *r, int path)
{
	uint64_t v[CCOM_RACE_SAMPLES], x;
	int n, i, j;

	if (path < 0 || path >= r->npaths || !r->n[path])
		return 0;
	n = r->n[path];
	memcpy(v, r->ns_per_kb[path], (size_t)n * sizeof(v[0]));
	for (i = 1; i < n; i++) {	/* insertion sort: at most CCOM_RACE_SAMPLES */
		x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	/* Even counts: the lower middle, a time the path did reach. */
	return v[(n - 1) / 2];
}

/* @a beats @b: faster by more than 1/2^CCOM_RACE_MARGIN_SHIFT of @b. */
static bool clearly_faster(uint64_t a, uint64_t b)
{
	return a && (!b || a + (b >> CCOM_RACE_MARGIN_SHIFT) < b);
}

int ccom_race_decide(struct ccom_race *r, const uint64_t *worst)
{
	int keep = r->incumbent >= 0 ? r->incumbent : 0, best = keep, p;

	for (p = 0; p < r->npaths; p++)
		if (worst[p] && (!worst[best] || worst[p] < worst[best]))
			best = p;
	if (best != keep && !clearly_faster(worst[best], worst[keep]))
		best = keep;
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

	ccom_race_init(r, old.npaths);
	r->incumbent = old.verdict;
	r->races = old.races;
	r->backoff = old.backoff;
}
