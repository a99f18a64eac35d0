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
 * driver) is read by all, and so is whether each rank's call is in place:
 * when every rank's is, in-place calls of that collective and size race
 * apart from then on (tune/kdev_race.h).  Two barriers: nobody rewrites
 * its line before all read it.
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

/*
 * Whether this rank's call is in place: it reduces or sends from the
 * buffer it receives into (its own block of it for AllGather and
 * ReduceScatter, NCCL's convention).
 */
static bool op_in_place(const struct ccomComm *comm, const struct ccom_op *op)
{
	size_t block = op->count * ccom_dtype_size(op->dtype);
	const char *s = op->sendbuff, *r = op->recvbuff;

	if (op->kind == CCOM_COLL_ALLGATHER)
		return s == r + (size_t)comm->rank * block;
	if (op->kind == CCOM_COLL_REDUCESCATTER)
		return r == s + (size_t)comm->rank * block;
	return s == r;
}

/* Every rank in place (the same answer on every rank): 0 or -errno. */
static int krace_agree(struct ccomComm *comm, const struct ccom_op *op, bool *every_ip)
{
	struct ccom_tune_krace *kr = comm->tune->krace;
	struct ccom_shm *s = comm->shm;
	int w = (int)(kr->agreements++ & 1), l, n = 0, err;

	atomic_store(&s->hdr->kplace[s->me].agree[w], op_in_place(comm, op));
	err = ccom_shm_barrier(s);
	if (err)
		return err;
	for (l = 0; l < s->nlocal; l++)
		n += atomic_load(&s->hdr->kplace[l].agree[w]);
	*every_ip = n == s->nlocal;
	return 0;
}

/* After a check-in's first barrier: every rank's call of out-of-place race @r is in place. */
static void krace_open_ip(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r)
{
	struct ccom_tune_krace *kr = comm->tune->krace;
	struct ccom_shm *s = comm->shm;
	bool *open = ccom_tune_krace_ip_open(kr, r);
	int l;

	if (ccom_tune_krace_is_ip(kr, r) || *open)
		return;
	for (l = 0; l < s->nlocal; l++)
		if (!atomic_load(&s->hdr->kplace[l].checkin))
			return;
	*open = true;
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: every rank called %s of %zu bytes per rank in place: in-place calls of that size race apart from now on",
		  comm->rank, ccom_coll_kind_name(op->kind), op->count * ccom_dtype_size(op->dtype));
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
	int l, i, k, err;

	if (deciding) {
		atomic_store(&me->best_ns[0], pack2(ccom_race_report(r, 0), ccom_race_report(r, 1)));
		atomic_store(&me->best_ns[1], pack2(ccom_race_report(r, 2), 0));
	}
	atomic_store(&s->hdr->kplace[s->me].checkin, op_in_place(comm, op));
	err = ccom_shm_barrier(s);
	if (err)
		return err;
	krace_open_ip(comm, op, r);
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
		ccom_tune_krace_decide(comm, op, r, worst);
	for (l = 0; l < s->nlocal; l++) {
		q = s->hdr->cdesc[l].recheck;
		if (q <= 0 || q > CCOM_KRACE_PLACES * CCOM_KRACE_PER_PLACE)
			continue;
		rq = ccom_tune_krace_at(kr, q - 1);
		k = (q - 1) % CCOM_KRACE_PER_PLACE / CCOM_KRACE_SIZES;
		if (ccom_race_state(rq) != CCOM_RACE_KEPT)
			continue;
		if (rq->audit)
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: the %s path has run %u %s%s operations of about 2^%d bytes per rank since it was measured; measuring the kdev paths again (an audit)",
				  comm->rank, ccom_kpath_name(ccom_tune_krace_kpath(kr, k, rq->verdict)),
				  rq->kept_ops, ccom_coll_kind_name((enum ccom_coll_kind)k),
				  ccom_tune_krace_is_ip(kr, rq) ? " in place" : "",
				  (q - 1) % CCOM_KRACE_SIZES + CCOM_KRACE_LOG_MIN);
		else
			ccom_info(CCOM_SUBSYS_TUNE, "rank %d: local rank %d saw %d %s%s operations of about 2^%d bytes per rank each more than %dx slower than their price; measuring the kdev paths again",
				  comm->rank, l, CCOM_RACE_SLOW_RUN, ccom_coll_kind_name((enum ccom_coll_kind)k),
				  ccom_tune_krace_is_ip(kr, rq) ? " in place" : "",
				  (q - 1) % CCOM_KRACE_SIZES + CCOM_KRACE_LOG_MIN, CCOM_RACE_SLOW_FACTOR);
		ccom_race_restart(rq);
	}
	err = ccom_shm_barrier(s);
	if (!err && mine && me->recheck == mine)
		me->recheck = 0;
	return err;
}

/* The two races of a size would not run the same path: the ranks must agree which. */
static bool races_differ(const struct ccom_race *oop, const struct ccom_race *ip)
{
	return ccom_race_state(oop) != CCOM_RACE_KEPT || ccom_race_state(ip) != CCOM_RACE_KEPT ||
	       oop->verdict != ip->verdict;
}

/*
 * Which kdev path @op runs (*@kpath, -1: not measured), after the race's
 * agreement if one is due: 0 or -errno.
 */
int ccom_krace_begin(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race **rp,
		       int *kpath)
{
	struct ccom_race *r = comm->shm ? ccom_tune_krace_of(comm, op, false) : NULL;
	struct ccom_tune_krace *kr;
	enum ccom_race_state st;
	bool every_ip = false;
	int err;

	*rp = NULL;
	*kpath = -1;
	if (!r)
		return 0;
	kr = comm->tune->krace;
	kr->cur_ip = false;
	/* Both kept on one path: the out-of-place race times the call, no barrier. */
	if (*ccom_tune_krace_ip_open(kr, r)) {
		struct ccom_race *rip = ccom_tune_krace_at(kr, ccom_tune_krace_index(kr, r) +
								 CCOM_KRACE_PER_PLACE);

		if (races_differ(r, rip)) {
			err = krace_agree(comm, op, &every_ip);
			if (err)
				return err;
			if (every_ip)
				r = rip;
			kr->cur_ip = every_ip;
		}
	}
	*rp = r;
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
		comm->shm->hdr->cdesc[comm->shm->me].recheck = ccom_tune_krace_index(kr, r) + 1;
}
