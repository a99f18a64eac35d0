// SPDX-License-Identifier: MIT
/*
 * cma_auto.c - CCOM_CMA=auto's bookkeeping for the CMA collectives
 * (coll/cma_auto.h): the races of tune/race.c per collective, size and
 * in-placeness, their verdicts cached per boot (tune/cma_cache.c), the
 * decision every rank takes from the medians published in an operation's
 * first barrier, and the requests to measure again.  coll/cma.c runs the
 * operations and calls these at its barriers.
 *
 * In place apart: a call where every rank is in place runs its own race
 * once one such call met an out-of-place verdict (ccom-perf AllReduce, 2
 * ranks, warm buffers: 64 MiB out of place staged 12.7 ms against CMA
 * 21-22, in place CMA 11.4-12.9 against staged 15.1-15.4; one verdict for
 * both left one of them on the slower path).  Whether every rank is in
 * place is known only after the first barrier, so while the two races of
 * a size do not keep the same path, every call of that size passes the
 * first barrier before it picks a path (ccom_cma_auto_agree()).
 */
#include <stdatomic.h>

#include "coll/cma.h"
#include "coll/cma_auto.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "transport/shm.h"
#include "tune/cma_cache.h"
#include "tune/race.h"
#include "util/log.h"

_Static_assert(sizeof(((struct ccom_shm_hdr *)0)->cma_verdict) == sizeof(struct ccom_tune_cma_table),
	       "the segment holds the cache's table as it is");
_Static_assert(CCOM_COLL_ALLTOALL < CCOM_TUNE_CMA_KINDS && CCOM_COLL_GATHER < CCOM_TUNE_CMA_KINDS &&
	       CCOM_COLL_SCATTER < CCOM_TUNE_CMA_KINDS, "every collective the path serves is cached");

/* auto: the verdicts local rank 0 read from the cache (the same on every rank). */
void ccom_cma_auto_cache_take(struct ccom_cma *c, struct ccom_shm *s)
{
	struct ccom_cma_trial *t;
	uint32_t audit = ccom_race_audit_param();
	int k, b, ip, v, n = 0;

	for (k = 0; k < CCOM_COLL_NKINDS; k++)
		for (b = 0; b < CCOM_CMA_BUCKETS; b++)
			for (ip = 0; ip < 2; ip++) {
				t = &c->trial[k][b][ip];
				ccom_race_init(&t->race, 2);
				ccom_race_size(&t->race, b < 63 ? 1ull << b : UINT64_MAX);
				ccom_race_audit_every(&t->race, audit);
			}
	for (k = 0; k < CCOM_TUNE_CMA_ROWS; k++)
		for (b = 0; b < CCOM_TUNE_CMA_SIZES; b++) {
			v = s->hdr->cma_verdict[k][b];
			if (!v)
				continue;
			t = &c->trial[k % CCOM_TUNE_CMA_KINDS][b + CCOM_TUNE_CMA_LOG_MIN]
				     [k / CCOM_TUNE_CMA_KINDS];
			ccom_race_set(&t->race, v > 0);
			t->open = true;
			n++;
		}
	c->cached = n;
}

/* auto, local rank 0: the verdicts of this communicator into the cache. */
static void cache_store(struct ccom_cma *c, int nlocal)
{
	struct ccom_tune_cma_table t;
	const struct ccom_race *r;
	int k, b, v;

	for (k = 0; k < CCOM_TUNE_CMA_ROWS; k++)
		for (b = 0; b < CCOM_TUNE_CMA_SIZES; b++) {
			r = &c->trial[k % CCOM_TUNE_CMA_KINDS][b + CCOM_TUNE_CMA_LOG_MIN]
				     [k / CCOM_TUNE_CMA_KINDS].race;
			/* Being measured again: the verdict before. */
			v = r->verdict >= 0 ? r->verdict : r->incumbent;
			t.verdict[k][b] = (int8_t)(v < 0 ? 0 : v ? 1 : -1);
		}
	ccom_tune_cma_store(nlocal, &t);
}

int ccom_cma_bucket(size_t bytes)
{
	int b = 0;

	while (b < CCOM_CMA_BUCKETS - 1 && ((size_t)2 << b) <= bytes)
		b++;
	return b;
}

static uint64_t race_us(const struct ccom_op *op, uint64_t ns_per_kb)
{
	return (uint64_t)((double)ns_per_kb * (double)((op->count * ccom_dtype_size(op->dtype)) >> 10) /
			  1e3);
}

/*
 * auto: every turn of the race ran; the slowest rank's median of each
 * path (every rank's, published in this operation's first barrier) picks
 * the path for this collective and size (tune/race.c), or asks for one
 * more turn of each when a losing path was still getting faster.
 */
void ccom_cma_auto_decide(struct ccomComm *comm, const struct ccom_op *op,
			  struct ccom_cma_trial *t, bool inplace)
{
	struct ccom_shm *s = comm->shm;
	uint64_t worst[2] = { 0, 0 };
	bool again = t->race.incumbent >= 0;
	int l, k;

	for (l = 0; l < s->nlocal; l++)
		for (k = 0; k < 2; k++)
			worst[k] = ccom_race_worse(worst[k], atomic_load(&s->hdr->cdesc[l].best_ns[k]));
	if (ccom_race_decide(&t->race, worst) < 0) {
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s of %zu bytes per rank%s: CMA %llu us, staged %llu us, the slower still getting faster: one more turn of each",
			  comm->rank, ccom_coll_kind_name(op->kind), op->count * ccom_dtype_size(op->dtype),
			  inplace ? " in place" : "", (unsigned long long)race_us(op, worst[1] & ~CCOM_RACE_FALLING),
			  (unsigned long long)race_us(op, worst[0] & ~CCOM_RACE_FALLING));
		return;
	}
	t->staged_ops = 0;
	comm->coll->cma->decided++;
	if (s->me == 0 && op->kind < CCOM_TUNE_CMA_KINDS)
		cache_store(comm->coll->cma, s->nlocal);
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s of %zu bytes per rank%s: CMA %llu us, staged %llu us (slowest rank's median over the last %d turns of each turn's mean per op, turns of %d ops, the first %d dropped)%s: %s from now on",
		  comm->rank, ccom_coll_kind_name(op->kind), op->count * ccom_dtype_size(op->dtype),
		  inplace ? " in place" : "", (unsigned long long)race_us(op, worst[1] & ~CCOM_RACE_FALLING),
		  (unsigned long long)race_us(op, worst[0] & ~CCOM_RACE_FALLING), t->race.turns,
		  t->race.run, t->race.drop, again ? " measured again" : "",
		  t->race.verdict == 1 ? "CMA" : "staged");
}

/*
 * auto: after every rank passed an operation's first barrier, each reads
 * every rank's request to measure again (the same on every rank) and
 * restarts those races; a rank's own request is withdrawn after the
 * second barrier (recheck_done()).
 */
void ccom_cma_auto_recheck_take(struct ccomComm *comm, struct ccom_cma *c)
{
	struct ccom_shm *s = comm->shm;
	struct ccom_cma_trial *t;
	int32_t r;
	int l, k, b, ip;

	for (l = 0; l < s->nlocal; l++) {
		r = s->hdr->cdesc[l].recheck;
		if (r <= 0 || r > CCOM_COLL_NKINDS * CCOM_CMA_BUCKETS * 2)
			continue;
		k = (r - 1) / (2 * CCOM_CMA_BUCKETS);
		b = ((r - 1) / 2) % CCOM_CMA_BUCKETS;
		ip = (r - 1) % 2;
		t = &c->trial[k][b][ip];
		if (ccom_race_state(&t->race) != CCOM_RACE_KEPT)
			continue;
		if (t->race.audit)
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: the %s path has run %u %s operations%s of about 2^%d bytes per rank since it was measured; measuring CMA and the staged path again (an audit)",
				  comm->rank, t->race.verdict ? "CMA" : "staged", t->race.kept_ops,
				  ccom_coll_kind_name((enum ccom_coll_kind)k), ip ? " in place" : "", b);
		else
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: local rank %d saw %d %s operations%s of about 2^%d bytes per rank on the %s path each more than %dx slower than its price; measuring CMA and the staged path again",
				  comm->rank, l, CCOM_RACE_SLOW_RUN,
				  ccom_coll_kind_name((enum ccom_coll_kind)k), ip ? " in place" : "", b,
				  t->race.verdict ? "CMA" : "staged", CCOM_RACE_SLOW_FACTOR);
		ccom_race_restart(&t->race);
	}
	c->recheck_seen = s->hdr->cdesc[s->me].recheck;
}

/* After an operation's second barrier: every rank has read my request. */
void ccom_cma_auto_recheck_done(struct ccom_cma *c, struct ccom_shm *s)
{
	if (c->recheck_seen && s->hdr->cdesc[s->me].recheck == c->recheck_seen)
		s->hdr->cdesc[s->me].recheck = 0;
	c->recheck_seen = 0;
}

/*
 * auto, after an operation on @path of trial @t (index @idx) took @dt ns:
 * a sample of the race, or checked against the kept path's price; clearly
 * wrong asks every rank (at the next operation's first barrier) to
 * measure again.
 */
void ccom_cma_auto_timed(struct ccom_shm *s, struct ccom_cma_trial *t, int idx, int path,
			 size_t bytes, uint64_t dt)
{
	enum ccom_race_state st = ccom_race_state(&t->race);

	ccom_trace(CCOM_SUBSYS_TUNE, "cma race: idx %d state %d op %u path %d %zu bytes %llu us",
		   idx, (int)st, (unsigned)t->race.op, path, bytes, (unsigned long long)dt / 1000);
	if (st == CCOM_RACE_TRIAL)
		ccom_race_record(&t->race, path, bytes, dt);
	else if (st == CCOM_RACE_KEPT && t->race.verdict == path &&
		 ccom_race_after(&t->race, bytes, dt))
		s->hdr->cdesc[s->me].recheck = idx + 1;
}

/*
 * auto: must the ranks agree (in the first barrier) which of @pair's
 * races runs this operation?  Not while in-place calls share the
 * out-of-place race ([1] not open), nor when both keep the same path;
 * the answer is the same on every rank (the races move in step).
 */
bool ccom_cma_auto_agree(const struct ccom_cma_trial *pair)
{
	if (!pair[1].open)
		return false;
	return ccom_race_state(&pair[0].race) != CCOM_RACE_KEPT ||
	       ccom_race_state(&pair[1].race) != CCOM_RACE_KEPT ||
	       pair[0].race.verdict != pair[1].race.verdict;
}

/* After the first barrier: 1 every rank is in place, 0 none, -1 some. */
int ccom_cma_auto_all_in_place(const struct ccom_shm *s)
{
	int l, n = 0;

	for (l = 0; l < s->nlocal; l++)
		n += s->hdr->cdesc[l].addr[0] == s->hdr->cdesc[l].addr[1];
	return n == s->nlocal ? 1 : n ? -1 : 0;
}

