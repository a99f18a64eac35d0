// SPDX-License-Identifier: MIT
/*
 * engine.c - the nccom engine as a candidate of the tuner (tune/): the
 * automatic choice between the engine's descriptor schedules
 * (coll/kdev_sched.c, coll/kdev_p2p.c) and the host algorithms, from
 * tables measured in bench-vm (Documentation/libccom/kdev.rst) below
 * the sizes kdev_race.c measures on the operations themselves, and the
 * vote a rank casts in the engine's exchange.  CCOM_KDEV=1 forces the
 * engine, CCOM_KDEV_MIN_BYTES raises every threshold; an engine that
 * calibrated slower than memcpy on this machine (transport/kdev/
 * calibrate.c, once per boot) is never chosen automatically.  What it
 * knows of the engine is comm->tune->paths.engine (struct
 * ccom_tune_engine), which coll/ copies from the kdev room at init: no
 * transport's state is read here.
 */
#include <stdbool.h>
#include <stdint.h>

#include "core/comm.h"
#include "core/op.h"
#include "tune/kdev_race.h"
#include "tune/tune.h"
#include "util/log.h"

static bool is_float(ccomDataType_t dt)
{
	return dt == ccomFloat16 || dt == ccomFloat32 || dt == ccomFloat64 || dt == ccomBfloat16;
}

static bool is_reduction(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_ALLREDUCE || k == CCOM_COLL_REDUCE || k == CCOM_COLL_REDUCESCATTER;
}

/*
 * The automatic choice (CCOM_KDEV unset): the smallest ccom_op_bytes()
 * from which the engine measured faster than shm in bench-vm, per
 * collective, for 2 local ranks and for more (the table and the numbers
 * behind it are in Documentation/libccom/kdev.rst); SIZE_MAX: never.
 * CCOM_KDEV_MIN_BYTES raises every threshold.  Every input (collective,
 * size, local rank count, CCOM_KDEV_MIN_BYTES, checked equal at init) is
 * the same on every rank, so the answer is too.
 */
static const size_t kdev_auto_table[CCOM_COLL_ALLTOALL + 1][2] = {
	/*				2 ranks		3 or more (measured on 4) */
	[CCOM_COLL_ALLREDUCE]	  = { 256u << 10,	512u << 10 },
	[CCOM_COLL_BROADCAST]	  = { 4u << 20,		4u << 20 },
	[CCOM_COLL_REDUCE]	  = { 256u << 10,	1u << 20 },
	[CCOM_COLL_ALLGATHER]	  = { 256u << 10,	1u << 20 },
	/* 2 ranks: 0.58-0.91x of shm from 1 to 16 MiB, no size measured a clear gain */
	[CCOM_COLL_REDUCESCATTER] = { SIZE_MAX,		256u << 10 },
	[CCOM_COLL_ALLTOALL]	  = { 128u << 10,	512u << 10 },
};

static size_t kdev_auto_min(const struct ccom_tune_engine *e, enum ccom_coll_kind kind)
{
	size_t t = kdev_auto_table[kind][e->nlocal > 2];
	size_t floor = e->min_bytes > 0 ? (size_t)e->min_bytes : 0;

	return t > floor ? t : floor;
}

/*
 * The first engine pick of each collective kind is logged at INFO (TUNE),
 * as ccom_tune_pick_host() logs the host's: bench/compare-vm.sh reads it
 * to say which path the automatic choice ran.
 */
static void log_first_engine_pick(struct ccomComm *comm, const struct ccom_op *op)
{
	struct ccom_tune *cs = comm->tune;
	static const char *const names[CCOM_COLL_ALLTOALL + 1] = {
		[CCOM_COLL_ALLREDUCE] = "AllReduce", [CCOM_COLL_BROADCAST] = "Broadcast",
		[CCOM_COLL_REDUCE] = "Reduce", [CCOM_COLL_ALLGATHER] = "AllGather",
		[CCOM_COLL_REDUCESCATTER] = "ReduceScatter", [CCOM_COLL_ALLTOALL] = "AlltoAll",
	};
	uint32_t bit = 1u << op->kind;

	if (cs->engine_logged & bit)
		return;
	cs->engine_logged |= bit;
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s of %zu bytes on %d ranks / %d hosts -> engine/kdev (first use of this choice%s)",
		  comm->rank, names[op->kind] ? names[op->kind] : "collective",
		  ccom_op_bytes(comm, op), comm->nranks, comm->nnodes,
		  cs->paths.engine.forced ? ", forced by CCOM_KDEV=1" : "");
}

/* The engine's figures, NULL when this communicator has no engine. */
static const struct ccom_tune_engine *engine_of(const struct ccomComm *comm)
{
	return comm->tune && comm->tune->paths.engine.present ? &comm->tune->paths.engine : NULL;
}

bool ccom_tune_engine_wants(struct ccomComm *comm, const struct ccom_op *op)
{
	const struct ccom_tune_engine *e = engine_of(comm);
	struct ccom_race *r;

	if (!e || op->kind > CCOM_COLL_ALLTOALL || e->p2p_only)
		return false;	/* no engine; send/recv: ccom_tune_engine_p2p_wants(); several hosts */
	if (is_reduction(op->kind) && is_float(op->dtype) && !e->reduce_fp) {
		if (!comm->tune->engine_fp_told)
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: the driver cannot reduce floating point (no NCCOM_FEAT_REDUCE_FP); those reductions use shm");
		comm->tune->engine_fp_told = true;
		return false;
	}
	/*
	 * Measured: the race's trial or verdict (coll/coll.c decided a READY
	 * race).  An engine calibrated slow is no candidate of the race, but
	 * the mapped path still is and runs through the driver: this test
	 * comes before the calibration's, or the race's mapped turns and a
	 * mapped verdict would run the staged path (they did, in the 6.1
	 * guest, until 2026-12-07).
	 */
	if (!e->forced &&
	    (r = ccom_tune_krace_of(comm, op, comm->tune->krace && comm->tune->krace->cur_ip))) {
		if (ccom_tune_krace_kpath(comm->tune->krace, op->kind, ccom_race_next(r)) ==
		    CCOM_KPATH_STAGED)
			return false;
		log_first_engine_pick(comm, op);
		return true;
	}
	if (!e->forced && e->slow)
		return false;	/* transport/kdev/calibrate.c: slower than shm on this machine */
	if (!e->forced && ccom_op_bytes(comm, op) < kdev_auto_min(e, op->kind))
		return false;
	log_first_engine_pick(comm, op);
	return true;
}

/*
 * Automatic choice by tables, the part that depends on this rank's call:
 * an in-place AlltoAll of 2 ranks below 16 MiB measured slower on the
 * engine than on shm (0.37x at 64 KiB, 0.84x at 1 MiB; 1.7x from 16 MiB
 * on: it must stage what the peer still reads).  Ranks may differ in
 * being in place, so this is a vote in the exchange, not part of
 * ccom_tune_engine_wants().  Where a kdev race measures the operation,
 * the race decides: a vote here would run shm in its engine and mapped
 * turns too, so that it timed shm three times (it did, on 2026-12-07, for
 * in-place AlltoAll in the guests) and its verdict named a path that
 * never ran.  So the vote holds only where no race runs trials on this
 * call and no in-place race measured it: an out-of-place verdict knows
 * nothing of in-place calls.
 */
#define KDEV_A2A_INPLACE2_MIN (16u << 20)

bool ccom_tune_engine_prefers_shm(struct ccomComm *comm, const struct ccom_op *op)
{
	const struct ccom_tune_engine *e = engine_of(comm);
	struct ccom_tune_krace *kr;
	struct ccom_race *r;

	if (!e || e->forced || op->kind != CCOM_COLL_ALLTOALL || e->nlocal != 2 ||
	    op->sendbuff != op->recvbuff || ccom_op_bytes(comm, op) >= KDEV_A2A_INPLACE2_MIN)
		return false;
	r = ccom_tune_krace_of(comm, op, false);
	if (!r)
		return true;
	kr = comm->tune->krace;
	return !kr->cur_ip && !*ccom_tune_krace_ip_open(kr, r) && ccom_race_state(r) != CCOM_RACE_TRIAL;
}

/*
 * The automatic choice: the smallest transfer (bytes) that runs on the
 * engine, for 2 local ranks and for more; CCOM_KDEV_MIN_BYTES raises it.
 * Measured with bench-vm's sendrecv case (Documentation/libccom/kdev.rst).
 */
static const size_t kdev_p2p_min[2] = { 64u << 10, 256u << 10 };

bool ccom_tune_engine_p2p_wants(struct ccomComm *comm, int peer, size_t bytes)
{
	const struct ccom_tune_engine *e = engine_of(comm);
	size_t min;

	if (!e || !bytes || peer == comm->rank || peer < 0 || peer >= comm->nranks ||
	    comm->rank_to_node[peer] != comm->node)
		return false;
	if (e->forced)
		return true;
	if (e->slow)
		return false;
	min = kdev_p2p_min[e->nlocal > 2];
	if (e->min_bytes > 0 && (size_t)e->min_bytes > min)
		min = (size_t)e->min_bytes;
	return bytes >= min;
}
