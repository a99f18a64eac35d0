/* SPDX-License-Identifier: MIT */
/*
 * cma_auto.h - CCOM_CMA=auto's races for the CMA collectives
 * (coll/cma_auto.c), called by coll/cma.c.  Private to coll/cma*.c.
 */
#ifndef CCOM_COLL_CMA_AUTO_H
#define CCOM_COLL_CMA_AUTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ccomComm;
struct ccom_cma;
struct ccom_cma_trial;
struct ccom_op;
struct ccom_shm;

/* 1 + this: a race's number in a recheck request (collective, bucket, every rank in place). */
#define CCOM_CMA_RACE_IDX(k, b, ip) ((((k) * CCOM_CMA_BUCKETS) + (b)) * 2 + (ip))

/* The power of two of @bytes (the bucket of a race). */
int ccom_cma_bucket(size_t bytes);
/* At init, every rank: the races, with the verdicts local rank 0 put in the segment. */
void ccom_cma_auto_cache_take(struct ccom_cma *c, struct ccom_shm *s);
/* In an operation's first barrier: decide race @t from every rank's published medians. */
void ccom_cma_auto_decide(struct ccomComm *comm, const struct ccom_op *op,
			  struct ccom_cma_trial *t, bool inplace);
/* After the first barrier: restart the races any rank asked to measure again. */
void ccom_cma_auto_recheck_take(struct ccomComm *comm, struct ccom_cma *c);
/* After the second barrier: withdraw this rank's request (every rank read it). */
void ccom_cma_auto_recheck_done(struct ccom_cma *c, struct ccom_shm *s);
/* An operation of race @t (number @idx) on @path took @dt ns: a sample, or a check of the price. */
void ccom_cma_auto_timed(struct ccom_shm *s, struct ccom_cma_trial *t, int idx, int path,
			 size_t bytes, uint64_t dt);
/* Must the ranks agree (first barrier) which race of @pair ([0] out of place, [1] in place) runs? */
bool ccom_cma_auto_agree(const struct ccom_cma_trial *pair);
/* After the first barrier: 1 every rank is in place, 0 none, -1 some. */
int ccom_cma_auto_all_in_place(const struct ccom_shm *s);

#endif
