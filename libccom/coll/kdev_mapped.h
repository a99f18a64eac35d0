/* SPDX-License-Identifier: MIT */
/*
 * kdev_mapped.h - the mapped single-copy collectives of the kdev path
 * (coll/kdev_mapped.c), called by coll/kdev_sched.c after the grant
 * exchange.
 */
#ifndef CCOM_COLL_KDEV_MAPPED_H
#define CCOM_COLL_KDEV_MAPPED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/op.h"

struct ccomComm;
struct ccom_kdev;
struct ccom_kdev_view;

/*
 * True for the collectives the mapped path runs (every one kdev_sched.c
 * schedules: AllReduce, Broadcast, Reduce, AllGather, ReduceScatter,
 * AlltoAll), whatever the dtype and op: a predicate for the automatic
 * choice, which needs no exchange to ask it.
 */
bool ccom_kdev_mapped_serves(enum ccom_coll_kind kind);

/*
 * True when this rank runs @op from mapped grants: kd->map (CCOM_KDEV_MAP),
 * a kind ccom_kdev_mapped_serves(), and every view this rank reads in
 * @op (after the exchange) mapped over the bytes it reads.  Decided per
 * rank: both paths keep the same buffers and semaphore values, so ranks
 * that decide differently still interoperate.
 */
bool ccom_kdev_mapped_usable(const struct ccom_kdev *kd, const struct ccom_op *op,
			     const struct ccom_kdev_view *v);

/*
 * Runs @op from the views' CPU addresses into @dst (this rank's output:
 * recvbuff, or the kdev scratch of a non-root Reduce), with @tmp the
 * registered scratch of an AlltoAll whose buffers overlap (else NULL),
 * signalling this rank's semaphore to @v1, @v2, @v3 as kdev_sched.c's
 * schedule does.  Returns 0 or -errno (the caller cancels the kdev queue).
 */
int ccom_kdev_mapped_run(struct ccomComm *comm, struct ccom_kdev *kd, struct ccom_op *op,
			 const struct ccom_kdev_view *v, char *dst, char *tmp, uint64_t v1,
			 uint64_t v2, uint64_t v3);

#endif
