/* SPDX-License-Identifier: MIT */
/*
 * kdev_race.h - the automatic choice between the staged shm path, the
 * nccom engine and the mapped single-copy path (tune/kdev_race.c), per
 * collective and power of two of the size, measured on the operations
 * themselves with tune/race.c and cached per boot, driver load, user and
 * local rank count.  coll/coll.c runs the operations, times them and
 * makes the ranks agree at the decision (a host barrier).
 */
#ifndef CCOM_TUNE_KDEV_RACE_H
#define CCOM_TUNE_KDEV_RACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tune/race.h"

struct ccomComm;
struct ccom_op;

enum ccom_kpath {
	CCOM_KPATH_STAGED = 0,	/* the host algorithms over the shm segment */
	CCOM_KPATH_ENGINE = 1,	/* nccom's in-kernel copies (coll/kdev_sched.c) */
	CCOM_KPATH_MAPPED = 2,	/* peers' grants mapped, reduced in userspace */
	CCOM_KPATH_NUM
};

#define CCOM_KRACE_KINDS 6	/* AllReduce .. AlltoAll (enum ccom_coll_kind 0-5) */
#define CCOM_KRACE_LOG_MIN 16	/* 64 KiB */
#define CCOM_KRACE_SIZES 16	/* up to 2^31 bytes per rank */

/*
 * The collectives the mapped path runs (coll/kdev_mapped.c: every one
 * kdev_sched.c schedules), whatever the dtype and op: each races it.
 */
static inline bool ccom_kpath_mapped_serves(int kind)
{
	return kind >= 0 && kind < CCOM_KRACE_KINDS;
}

/**
 * struct ccom_tune_krace - a communicator's races (comm->tune->krace)
 * @race: per collective and power of two of the per-rank bytes
 * @mapped: the driver maps grants (NCCOM_FEAT_DMABUF_MMAP): the
 *	collectives ccom_kpath_mapped_serves() race three paths (the same on
 *	every rank: one driver per host)
 * @engine_ok: the engine is a candidate (its calibration did not find it
 *	slow on any rank)
 * @cached: verdicts read from the cache at init
 * @decided: verdicts measured by this communicator
 * @path: the cache file ("": none)
 */
struct ccom_tune_krace {
	struct ccom_race race[CCOM_KRACE_KINDS][CCOM_KRACE_SIZES];
	bool mapped;
	bool engine_ok;
	int cached;
	uint64_t decided;
	char path[256];
};

/* At ccom_tune_init(): the races, with the cache's verdicts; 0 or -ENOMEM. */
int ccom_tune_krace_init(struct ccomComm *comm);
/*
 * The race of @op, or NULL when the path is not measured (CCOM_KDEV set,
 * no engine, below CCOM_KDEV_MIN_BYTES, not a collective the engine runs).
 */
struct ccom_race *ccom_tune_krace_of(struct ccomComm *comm, const struct ccom_op *op);
/* Keep a path from @worst (every rank's slowest medians); logs the verdict, caches it. */
void ccom_tune_krace_decide(struct ccomComm *comm, const struct ccom_op *op,
			    const uint64_t worst[CCOM_KPATH_NUM]);
const char *ccom_kpath_name(int path);
/* The path (enum ccom_kpath) behind race slot @slot of collective @kind. */
int ccom_tune_krace_kpath(const struct ccom_tune_krace *kr, int kind, int slot);

#endif
