/* SPDX-License-Identifier: MIT */
/*
 * kdev_mapped.h - the mapped single-copy AllReduce of the kdev path
 * (coll/kdev_mapped.c), called by coll/kdev_sched.c after the grant
 * exchange.
 */
#ifndef CCOM_COLL_KDEV_MAPPED_H
#define CCOM_COLL_KDEV_MAPPED_H

#include <stdbool.h>
#include <stdint.h>

struct ccomComm;
struct ccom_op;
struct ccom_kdev;
struct ccom_kdev_view;

/* True when @op can run from mapped grants: CCOM_KDEV_MAP=1, AllReduce, every view mapped. */
bool ccom_kdev_mapped_usable(const struct ccom_kdev *kd, const struct ccom_op *op,
			     const struct ccom_kdev_view *v);

/*
 * Runs @op (AllReduce) from the views' CPU addresses, signalling this
 * rank's semaphore to @v1, @v2, @v3 as kdev_sched.c's schedule does.
 * Returns 0 or -errno (the caller cancels the kdev queue).
 */
int ccom_kdev_mapped_allreduce(struct ccomComm *comm, struct ccom_kdev *kd, struct ccom_op *op,
			       const struct ccom_kdev_view *v, uint64_t v1, uint64_t v2, uint64_t v3);

#endif
