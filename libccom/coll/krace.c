// SPDX-License-Identifier: MIT
/*
 * krace.c - the kdev race's side in the data path (coll/): coll_dispatch()
 * asks it which path an operation runs when the automatic choice measures
 * the staged, engine and mapped paths (tune/kdev_race.c), makes the ranks
 * agree where a verdict or a re-check is due, and hands it each timed
 * operation.
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "coll/krace.h"
#include "core/comm.h"
#include "core/op.h"
#include "transport/shm.h"
#include "tune/kdev_race.h"
#include "tune/tune.h"
#include "util/log.h"

/*
 * The kdev race's agreement (tune/kdev_race.c), at the start of an
 * operation every rank reaches at the same point of the same race: when
 * it is READY each rank publishes its figures (medians of turn means, ns
 * per KiB, two per word, with the flag of a path still getting faster:
 * tune/race.h) in its line of the host segment and all keep the slowest
 * rank's; every CCOM_KRACE_CHECKIN kept operations each rank's request to
 * measure a verdict again (the line's recheck, free: CMA is off with the
 * driver) is read by all.  Two barriers: nobody rewrites its line before
 * all read it.
 */
#define CCOM_KRACE_CHECKIN 16

/*
 * Two of ccom_race_report()'s values in one word: 31 bits of figure each
 * (ns per KiB, capped) and bit 31 of each half for CCOM_RACE_FALLING.
 */
#define HALF_FALLING (1ull << 31)
#define HALF_MAX (HALF_FALLING - 1)

static uint64_t half(uint64_t v)
{
	uint64_t m = v & ~CCOM_RACE_FALLING;

	return (m > HALF_MAX ? HALF_MAX : m) | (v & CCOM_RACE_FALLING ? HALF_FALLING : 0);
}

static uint64_t unhalf(uint64_t h)
{
	return (h & HALF_MAX) | (h & HALF_FALLING ? CCOM_RACE_FALLING : 0);
}

static uint64_t pack2(uint64_t a, uint64_t b)
{
	return half(a) | half(b) << 32;
}

static int krace_sync(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r)
{
	struct ccom_tune_krace *kr = comm->tune->krace;
	struct ccom_shm *s = comm->shm;
	struct ccom_shm_cdesc *me = &s->hdr->cdesc[s->me];
	bool deciding = ccom_race_state(r) == CCOM_RACE_READY;
	uint64_t worst[CCOM_KPATH_NUM] = { 0 }, v[CCOM_KPATH_NUM];
	struct ccom_race *rq;
	int32_t mine = me->recheck, q;
	int l, i, err;

	if (deciding) {
		atomic_store(&me->best_ns[0], pack2(ccom_race_report(r, 0), ccom_race_report(r, 1)));
		atomic_store(&me->best_ns[1], pack2(ccom_race_report(r, 2), 0));
	}
	err = ccom_shm_barrier(s);
	if (err)
		return err;
	for (l = 0; deciding && l < s->nlocal; l++) {
		uint64_t w0 = atomic_load(&s->hdr->cdesc[l].best_ns[0]);
		uint64_t w1 = atomic_load(&s->hdr->cdesc[l].best_ns[1]);

		v[0] = unhalf(w0 & UINT32_MAX);
		v[1] = unhalf(w0 >> 32);
		v[2] = unhalf(w1 & UINT32_MAX);
		for (i = 0; i < CCOM_KPATH_NUM; i++)
			worst[i] = ccom_race_worse(worst[i], v[i]);
	}
	if (deciding)
		ccom_tune_krace_decide(comm, op, worst);
	for (l = 0; l < s->nlocal; l++) {
		q = s->hdr->cdesc[l].recheck;
		if (q <= 0 || q > CCOM_KRACE_KINDS * CCOM_KRACE_SIZES)
			continue;
		rq = &kr->race[(q - 1) / CCOM_KRACE_SIZES][(q - 1) % CCOM_KRACE_SIZES];
		if (ccom_race_state(rq) != CCOM_RACE_KEPT)
			continue;
		if (rq->audit)
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: the %s path has run %u %s operations of about 2^%d bytes per rank since it was measured; measuring the kdev paths again (an audit)",
				  comm->rank, ccom_kpath_name(ccom_tune_krace_kpath(kr, (q - 1) / CCOM_KRACE_SIZES, rq->verdict)),
				  rq->kept_ops, ccom_coll_kind_name((enum ccom_coll_kind)((q - 1) / CCOM_KRACE_SIZES)),
				  (q - 1) % CCOM_KRACE_SIZES + CCOM_KRACE_LOG_MIN);
		else
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: local rank %d saw %d %s operations of about 2^%d bytes per rank each more than %dx slower than their price; measuring the kdev paths again",
				  comm->rank, l, CCOM_RACE_SLOW_RUN,
				  ccom_coll_kind_name((enum ccom_coll_kind)((q - 1) / CCOM_KRACE_SIZES)),
				  (q - 1) % CCOM_KRACE_SIZES + CCOM_KRACE_LOG_MIN, CCOM_RACE_SLOW_FACTOR);
		ccom_race_restart(rq);
	}
	err = ccom_shm_barrier(s);
	if (!err && mine && me->recheck == mine)
		me->recheck = 0;
	return err;
}

/*
 * Which kdev path @op runs (*@kpath, -1: not measured), after the race's
 * agreement if one is due: 0 or -errno.
 */
int ccom_krace_begin(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race **rp,
		       int *kpath)
{
	struct ccom_race *r = comm->shm ? ccom_tune_krace_of(comm, op) : NULL;
	enum ccom_race_state st;
	int err;

	*rp = r;
	*kpath = -1;
	if (!r)
		return 0;
	st = ccom_race_state(r);
	if (st == CCOM_RACE_READY ||
	    (st == CCOM_RACE_KEPT && (r->kept_ops + 1) % CCOM_KRACE_CHECKIN == 0)) {
		err = krace_sync(comm, op, r);
		if (err)
			return err;
	}
	*kpath = ccom_tune_krace_kpath(comm->tune->krace, op->kind, ccom_race_next(r));
	return 0;
}

uint64_t ccom_krace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The operation on the race's path took @ns on this rank. */
void ccom_krace_end(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r,
		      uint64_t ns)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	struct ccom_tune_krace *kr = comm->tune->krace;
	int slot = ccom_race_next(r);

	if (ccom_log_enabled(CCOM_LOG_TRACE, CCOM_SUBSYS_TUNE))	/* every op: no lookups unless traced */
		ccom_trace(CCOM_SUBSYS_TUNE, "rank %d: %s of %zu bytes per rank on the %s path (%s, op %u): %llu us",
			   comm->rank, ccom_coll_kind_name(op->kind), bytes,
			   ccom_kpath_name(ccom_tune_krace_kpath(kr, op->kind, slot)),
			   ccom_race_state(r) == CCOM_RACE_TRIAL ? "race" : "kept", r->op,
			   (unsigned long long)(ns / 1000));
	if (ccom_race_state(r) == CCOM_RACE_TRIAL)
		ccom_race_record(r, slot, bytes, ns);
	else if (ccom_race_after(r, bytes, ns))	/* 1 + the race's index in kr->race */
		comm->shm->hdr->cdesc[comm->shm->me].recheck =
			(int32_t)(((const char *)r - (const char *)kr->race) / (ptrdiff_t)sizeof(*r)) + 1;
}
