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

/*
 * In place apart: a call where every rank is in place runs its own race
 * once a check-in found every rank in place (ccom_krace_begin()).  In the
 * TCG guests of issue 27 (quiet host, 2 ranks) AllGather kept the engine
 * out of place while the mapped path ran faster in place (16 MiB on 6.1,
 * 64 MiB on both), and one verdict for both left in-place calls on the
 * slower path.  Whether every rank is in place is known only after a host
 * barrier, so while the two races of a size do not keep the same path,
 * every call of that size passes one before it picks a path.
 */
#define CCOM_KRACE_PLACES 2	/* [0]: out of place or mixed, [1]: every rank in place */
#define CCOM_KRACE_PER_PLACE (CCOM_KRACE_KINDS * CCOM_KRACE_SIZES)	/* races of one placement */

/**
 * struct ccom_tune_krace - a communicator's races (comm->tune->krace)
 * @race: per placement (CCOM_KRACE_PLACES), collective and power of two of
 *	the per-rank bytes
 * @mapped: the driver maps grants (NCCOM_FEAT_DMABUF_MMAP): the
 *	collectives ccom_kpath_mapped_serves() race three paths (the same on
 *	every rank: one driver per host)
 * @engine_ok: the engine is a candidate (its calibration did not find it
 *	slow on any rank)
 * @cached: verdicts read from the cache at init
 * @decided: verdicts measured by this communicator
 * @path: the cache file ("": none)
 * @ip_open: in-place calls of this collective and size race apart
 * @agreements: placement agreements run (each rank's flag alternates
 *	between two words, so one barrier is enough)
 * @cur_ip: the placement the current operation runs under (set by
 *	ccom_krace_begin(), read by tune/engine.c)
 */
struct ccom_tune_krace {
	struct ccom_race race[CCOM_KRACE_PLACES][CCOM_KRACE_KINDS][CCOM_KRACE_SIZES];
	bool ip_open[CCOM_KRACE_KINDS][CCOM_KRACE_SIZES];
	uint32_t agreements;
	bool cur_ip;
	bool mapped;
	bool engine_ok;
	int cached;
	uint64_t decided;
	char path[256];
};

/* At ccom_tune_init(): the races, with the cache's verdicts; 0 or -ENOMEM. */
int ccom_tune_krace_init(struct ccomComm *comm);
/*
 * The race of @op when every rank is in place (@ip) or not, or NULL when
 * the path is not measured (CCOM_KDEV set, no engine, below
 * CCOM_KDEV_MIN_BYTES, not a collective the engine runs).
 */
struct ccom_race *ccom_tune_krace_of(struct ccomComm *comm, const struct ccom_op *op, bool ip);
/*
 * Race @r's index in @kr->race (placement, then collective, then size: 0 ..
 * CCOM_KRACE_PLACES * CCOM_KRACE_KINDS * CCOM_KRACE_SIZES - 1), and back.
 */
int ccom_tune_krace_index(const struct ccom_tune_krace *kr, const struct ccom_race *r);
struct ccom_race *ccom_tune_krace_at(struct ccom_tune_krace *kr, int index);
/* Whether race @r is one of in-place calls. */
bool ccom_tune_krace_is_ip(const struct ccom_tune_krace *kr, const struct ccom_race *r);
/* The flag saying in-place calls of @r's collective and size race apart (either placement's @r). */
bool *ccom_tune_krace_ip_open(struct ccom_tune_krace *kr, const struct ccom_race *r);
/* Keep a path of @r from @worst (every rank's slowest medians); logs the verdict, caches it. */
void ccom_tune_krace_decide(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r,
			    const uint64_t worst[CCOM_KPATH_NUM]);
const char *ccom_kpath_name(int path);
/* The path (enum ccom_kpath) behind race slot @slot of collective @kind. */
int ccom_tune_krace_kpath(const struct ccom_tune_krace *kr, int kind, int slot);

#endif
