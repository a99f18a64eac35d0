// SPDX-License-Identifier: MIT
/*
 * kdev_race.c - with nccom.ko loaded and CCOM_KDEV unset, which of the
 * staged shm path, the engine's in-kernel copies and the mapped single
 * copy runs a collective (tune/kdev_race.h).
 *
 * Why measured: the tables of tune/engine.c were measured in one guest;
 * in another the engine made 16-64 MiB AllReduces 0.35-0.73x slower than
 * the staged path (issue 27), and the per-boot calibration (one engine
 * COPY against memcpy, transport/kdev/calibrate.c) did not see it: it
 * does not time what the operation does.  So from CCOM_KDEV_MIN_BYTES on,
 * each collective and power of two of the size races its candidate paths
 * on the operations themselves (tune/race.c: turns per path, the slowest
 * rank's median of the turns' means), keeps the fastest, and measures
 * again when the kept path runs clearly slower than its price.  An engine
 * the calibration found slow is not a candidate (it stays the cheap first
 * filter).  The mapped path is a candidate of every collective it runs
 * (AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll) when
 * the driver maps grants.
 *
 * Verdicts are cached in /dev/shm/ccom-kdev-race-UID-KEY-N (KEY: boot id
 * and /dev/nccom's inode and change time, which a reload renews; N local
 * ranks), lines "kind log2 path", kind + 6 for the races of in-place calls
 * (tune/kdev_race.h); CCOM_KDEV_RACE_FILE names another file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/op.h"
#include "tune/kdev_race.h"
#include "tune/tune.h"
#include "tune/verdict_file.h"
#include "util/log.h"
#include "util/params.h"

const char *ccom_kpath_name(int path)
{
	static const char *const names[CCOM_KPATH_NUM] = { "staged", "engine", "mapped" };

	return path >= 0 && path < CCOM_KPATH_NUM ? names[path] : "?";
}

/* Race slots of @kind: 0 staged, then the engine (if a candidate), then mapped. */
static int slots(const struct ccom_tune_krace *kr, int kind, int *kpath)
{
	int n = 0;

	kpath[n++] = CCOM_KPATH_STAGED;
	if (kr->engine_ok)
		kpath[n++] = CCOM_KPATH_ENGINE;
	if (kr->mapped && ccom_kpath_mapped_serves(kind))
		kpath[n++] = CCOM_KPATH_MAPPED;
	return n;
}

static int slot_of(const struct ccom_tune_krace *kr, int kind, int kpath)
{
	int kp[CCOM_KPATH_NUM], n = slots(kr, kind, kp), i;

	for (i = 0; i < n; i++)
		if (kp[i] == kpath)
			return i;
	return -1;
}

int ccom_tune_krace_kpath(const struct ccom_tune_krace *kr, int kind, int slot)
{
	int kp[CCOM_KPATH_NUM], n = slots(kr, kind, kp);

	return slot >= 0 && slot < n ? kp[slot] : CCOM_KPATH_STAGED;
}

static bool kpath_valid(const void *arg, int kind, int kpath)
{
	return slot_of(arg, kind % CCOM_KRACE_KINDS, kpath) >= 0;
}

static struct ccom_verdict_file cache_file(const struct ccom_tune_krace *kr)
{
	return (struct ccom_verdict_file){ .path = kr->path, .what = "kdev path cache",
					   .form = "kind (+6 in place) log2 path, a path this communicator has",
					   .nkinds = CCOM_KRACE_PLACES * CCOM_KRACE_KINDS, .log_min = CCOM_KRACE_LOG_MIN,
					   .nsizes = CCOM_KRACE_SIZES, .none = -1,
					   .valid = kpath_valid, .arg = kr };
}

/* A cached in-place verdict opens its race: those calls agree from the first. */
static void cache_load(struct ccom_tune_krace *kr)
{
	struct ccom_verdict_file f = cache_file(kr);
	int8_t v[CCOM_KRACE_PLACES][CCOM_KRACE_KINDS][CCOM_KRACE_SIZES];
	int p, k, s;

	if (ccom_verdict_load(&f, &v[0][0][0]))
		return;
	for (p = 0; p < CCOM_KRACE_PLACES; p++)
		for (k = 0; k < CCOM_KRACE_KINDS; k++)
			for (s = 0; s < CCOM_KRACE_SIZES; s++)
				if (v[p][k][s] >= 0) {
					ccom_race_set(&kr->race[p][k][s], slot_of(kr, k, v[p][k][s]));
					kr->ip_open[k][s] |= p == 1;
					kr->cached++;
				}
}

static void cache_store(const struct ccom_tune_krace *kr)
{
	struct ccom_verdict_file f = cache_file(kr);
	int8_t v[CCOM_KRACE_PLACES][CCOM_KRACE_KINDS][CCOM_KRACE_SIZES];
	const struct ccom_race *r;
	int p, k, s, slot;

	for (p = 0; p < CCOM_KRACE_PLACES; p++)
		for (k = 0; k < CCOM_KRACE_KINDS; k++)
			for (s = 0; s < CCOM_KRACE_SIZES; s++) {
				r = &kr->race[p][k][s];
				slot = r->verdict >= 0 ? r->verdict : r->incumbent;
				v[p][k][s] = (int8_t)(slot >= 0 ? ccom_tune_krace_kpath(kr, k, slot) : -1);
			}
	ccom_verdict_store(&f, &v[0][0][0]);
}

int ccom_tune_krace_init(struct ccomComm *comm)
{
	const struct ccom_tune_engine *e = &comm->tune->paths.engine;
	struct ccom_tune_krace *kr;
	const char *file = ccom_param_str("CCOM_KDEV_RACE_FILE");
	int p, k, s, kp[CCOM_KPATH_NUM];
	struct ccom_race *r;
	uint32_t audit;

	if (!e->present || e->forced || e->p2p_only || !comm->tune->paths.shm)
		return 0;
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return -ENOMEM;
	kr->engine_ok = !e->slow;
	audit = ccom_race_audit_param();
	kr->mapped = e->map_feature;
	for (p = 0; p < CCOM_KRACE_PLACES; p++)
		for (k = 0; k < CCOM_KRACE_KINDS; k++)
			for (s = 0; s < CCOM_KRACE_SIZES; s++) {
				r = &kr->race[p][k][s];
				ccom_race_init(r, slots(kr, k, kp));
				/* Short turns for large sizes, as the CMA races (tune/race.h). */
				ccom_race_size(r, 1ull << (s + CCOM_KRACE_LOG_MIN));
				ccom_race_audit_every(r, audit);
			}
	if (file && file[0])
		snprintf(kr->path, sizeof(kr->path), "%s", file);
	else if (e->load_key[0])
		snprintf(kr->path, sizeof(kr->path), "/dev/shm/ccom-kdev-race-%u-%s-%d",
			 (unsigned)getuid(), e->load_key, e->nlocal);
	/* One reader per host would be tidier; every rank reads the same file at init. */
	cache_load(kr);
	comm->tune->krace = kr;
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: kdev automatic choice: staged%s%s measured per collective and size from %lld bytes (%d verdicts cached in %s)",
		  comm->rank, kr->engine_ok ? ", engine" : "", kr->mapped ? ", mapped" : "",
		  (long long)(e->min_bytes > 0 ? e->min_bytes : 0), kr->cached,
		  kr->path[0] ? kr->path : "no file");
	return 0;
}

static int log2_of(size_t b)
{
	int l = 0;

	while (l < 62 && ((size_t)2 << l) <= b)
		l++;
	return l;
}

struct ccom_race *ccom_tune_krace_of(struct ccomComm *comm, const struct ccom_op *op, bool ip)
{
	struct ccom_tune_krace *kr = comm->tune ? comm->tune->krace : NULL;
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	int64_t min = comm->tune ? comm->tune->paths.engine.min_bytes : 0;
	int lg = log2_of(bytes), kp[CCOM_KPATH_NUM];

	if (!kr || op->kind >= CCOM_KRACE_KINDS || bytes < ((size_t)1 << CCOM_KRACE_LOG_MIN) ||
	    (min > 0 && ccom_op_bytes(comm, op) < (size_t)min) ||
	    lg >= CCOM_KRACE_LOG_MIN + CCOM_KRACE_SIZES)
		return NULL;
	/* One candidate (the engine found slow, no mapping): the staged path, no race. */
	return slots(kr, op->kind, kp) >= 2 ? &kr->race[ip][op->kind][lg - CCOM_KRACE_LOG_MIN] : NULL;
}

int ccom_tune_krace_index(const struct ccom_tune_krace *kr, const struct ccom_race *r)
{
	return (int)(((const char *)r - (const char *)kr->race) / (ptrdiff_t)sizeof(*r));
}

struct ccom_race *ccom_tune_krace_at(struct ccom_tune_krace *kr, int index)
{
	int p = index / CCOM_KRACE_PER_PLACE, k = index % CCOM_KRACE_PER_PLACE / CCOM_KRACE_SIZES;

	return &kr->race[p][k][index % CCOM_KRACE_SIZES];
}

bool ccom_tune_krace_is_ip(const struct ccom_tune_krace *kr, const struct ccom_race *r)
{
	return ccom_tune_krace_index(kr, r) >= CCOM_KRACE_PER_PLACE;
}

bool *ccom_tune_krace_ip_open(struct ccom_tune_krace *kr, const struct ccom_race *r)
{
	int i = ccom_tune_krace_index(kr, r) % CCOM_KRACE_PER_PLACE;

	return &kr->ip_open[i / CCOM_KRACE_SIZES][i % CCOM_KRACE_SIZES];
}

void ccom_tune_krace_decide(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r,
			    const uint64_t worst[CCOM_KPATH_NUM])
{
	struct ccom_tune_krace *kr = comm->tune->krace;
	const char *place = ccom_tune_krace_is_ip(kr, r) ? " in place" : "";
	size_t kb = (op->count * ccom_dtype_size(op->dtype)) >> 10;
	char what[160];
	int i, n = 0, v;

	if (!r)
		return;
	for (i = 0; i < r->npaths && n < (int)sizeof(what); i++)
		n += snprintf(what + n, sizeof(what) - (size_t)n, "%s%s %llu us", i ? ", " : "",
			      ccom_kpath_name(ccom_tune_krace_kpath(kr, op->kind, i)),
			      (unsigned long long)((worst[i] & ~CCOM_RACE_FALLING) * kb / 1000));
	v = ccom_race_decide(r, worst);
	if (v < 0) {
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s%s of %zu bytes per rank: %s; a losing path still getting faster: one more turn of each",
			  comm->rank, ccom_coll_kind_name(op->kind), place,
			  op->count * ccom_dtype_size(op->dtype), what);
		return;
	}
	kr->decided++;
	if (comm->local_rank == 0)
		cache_store(kr);
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s%s of %zu bytes per rank: %s (slowest rank's median over the last %d turns of each turn's mean per op, turns of %d ops, the first %d dropped): %s from now on",
		  comm->rank, ccom_coll_kind_name(op->kind), place, op->count * ccom_dtype_size(op->dtype),
		  what, r->turns, r->run, r->drop,
		  ccom_kpath_name(ccom_tune_krace_kpath(kr, op->kind, v)));
}
