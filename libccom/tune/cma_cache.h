/* SPDX-License-Identifier: MIT */
/*
 * cma_cache.h - the CMA path's measured verdicts (coll/cma.c,
 * coll/cma_p2p.c), cached per boot, user and number of local ranks in
 * files (cma_cache.c, on tune/verdict_file.c), so that later
 * communicators on this machine start with them.
 */
#ifndef CCOM_TUNE_CMA_CACHE_H
#define CCOM_TUNE_CMA_CACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Collectives the path serves (enum ccom_coll_kind values 0-7: AllReduce
 * to AlltoAll, Gather, Scatter), out of place (rows 0-7) and with every
 * rank in place (rows 8-15: the kind + CCOM_TUNE_CMA_KINDS), x per-rank
 * sizes 2^16-2^31.
 */
#define CCOM_TUNE_CMA_KINDS 8
#define CCOM_TUNE_CMA_ROWS (2 * CCOM_TUNE_CMA_KINDS)
#define CCOM_TUNE_CMA_LOG_MIN 16
#define CCOM_TUNE_CMA_SIZES 16

/* verdict: 0 not measured, 1 CMA faster, -1 the staged path faster. */
struct ccom_tune_cma_table {
	int8_t verdict[CCOM_TUNE_CMA_ROWS][CCOM_TUNE_CMA_SIZES];
};

/* Send/Recv: one sender's verdicts per size (its own file: it decides alone). */
struct ccom_tune_cma_p2p_table {
	int8_t verdict[CCOM_TUNE_CMA_SIZES];
};

/*
 * Read the cache of @nlocal local ranks into @t: 0 (entries not in the
 * file stay 0), or -errno (-ENOENT: none yet; -EBADMSG: a malformed line,
 * logged with the file's name, nothing used).
 */
int ccom_tune_cma_load(int nlocal, struct ccom_tune_cma_table *t);
/* Replace the cache of @nlocal local ranks with @t (atomically, by rename); errors at INFO. */
void ccom_tune_cma_store(int nlocal, const struct ccom_tune_cma_table *t);
/* The same for the Send/Recv verdicts of local rank @lrank of @nlocal (the only writer of its file). */
int ccom_tune_cma_p2p_load(int nlocal, int lrank, struct ccom_tune_cma_p2p_table *t);
void ccom_tune_cma_p2p_store(int nlocal, int lrank, const struct ccom_tune_cma_p2p_table *t);

#endif
