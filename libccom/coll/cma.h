/* SPDX-License-Identifier: MIT */
/*
 * cma.h - the CMA path (cma.c): collectives of one host through
 * process_vm_readv/writev on the ranks' own buffers.
 */
#ifndef CCOM_COLL_CMA_H
#define CCOM_COLL_CMA_H

#include <stdint.h>

struct ccomComm;
struct ccom_op;
struct ccom_cma;

/* At init, collective over a one-host communicator's ranks: the permission probe and CCOM_CMA. */
int ccom_cma_init(struct ccomComm *comm);
void ccom_cma_fini(struct ccomComm *comm);
/*
 * Run @op on the CMA path: 0 done, 1 not this path (run the staged one;
 * the same answer on every rank), or -errno after ccom_set_last_error().
 */
int ccom_cma_run(struct ccomComm *comm, struct ccom_op *op);
/* The staged path ran the operation ccom_cma_run() answered 1 to (auto's trials time it). */
void ccom_cma_staged_done(struct ccomComm *comm);
/* auto (tests): verdicts taken from the per-boot cache at init, and measured since. */
int ccom_cma_cached(const struct ccomComm *comm);
uint64_t ccom_cma_decided(const struct ccomComm *comm);
/* Operations the CMA path ran on this rank (tests). */
uint64_t ccom_cma_ops(const struct ccomComm *comm);
/* The path's state and why, for the topology dump. */
const char *ccom_cma_describe(const struct ccomComm *comm);

#endif
