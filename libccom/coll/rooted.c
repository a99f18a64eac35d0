// SPDX-License-Identifier: MIT
/*
 * rooted.c - Gather and Scatter (NCCL 2.28's ncclGather/ncclScatter), the
 * coll/ room's rooted one-to-all and all-to-one moves.
 *
 * Both are a set of point-to-point transfers between the root and every
 * other rank, run by ccom_p2p_run() as one group: the same machinery as
 * grouped ccomSend/ccomRecv, so they work on every transport (shm FIFOs,
 * TCP, net_ib) and take the nccom engine's single-copy transfers between
 * local ranks where it wants them (ccom_tune_engine_p2p_wants(), decided
 * alike on both sides from (peer, size)).  The root's transfers all run
 * concurrently (xfer.c moves one transfer per connection and direction,
 * all connections at once), so the root's links, not a chain of steps,
 * bound the time: the (n-1)/n of nccl-tests' bus bandwidth.
 *
 * Unlike grouped p2p they are collectives: coll_execute() posts their
 * signature (kind, count, dtype, root) for the mismatch check, whose waits
 * (shm) and in-band exchange (network streams) cover these transfers too,
 * and the flight recorder names them.  The root's own block is a local
 * copy, skipped in place (NCCL's rule: Gather's sendbuff == recvbuff +
 * root * count, Scatter's recvbuff == sendbuff + root * count).
 *
 * On one host with the CMA path on (coll/cma.c: CCOM_CMA=1, or auto where
 * it measured faster for this size), each rank instead writes its block
 * into the root's output (Gather) or reads its block of the root's input
 * (Scatter) with process_vm_writev/readv: one kernel copy, no FIFO.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "reduce/reduce.h"
#include "transport/shm.h"

/* The root's own block: a copy unless in place. */
static void rooted_self(struct ccomComm *comm, const struct ccom_op *op, size_t bytes)
{
	const char *src;
	char *dst;

	if (op->kind == CCOM_COLL_GATHER) {
		src = op->sendbuff;
		dst = (char *)op->recvbuff + (size_t)comm->rank * bytes;
	} else {
		src = (const char *)op->sendbuff + (size_t)comm->rank * bytes;
		dst = op->recvbuff;
	}
	if (src != dst)
		memmove(dst, src, bytes);
}

/*
 * A size the p2p headers refused (-EINVAL) is, between ranks of one host
 * that both posted this collective's signature, a mismatched call: say so
 * (the board's sentence names both calls) rather than the p2p one.
 */
static int rooted_result(struct ccomComm *comm, int err)
{
	int sig;

	if (err != -EINVAL || !comm->shm || !comm->coll->check_mismatch)
		return err;
	sig = ccom_shm_sig_verify(comm->shm, false);
	return sig ? sig : err;
}

static int rooted_staged(struct ccomComm *comm, struct ccom_op *op)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	bool gather = op->kind == CCOM_COLL_GATHER;
	struct ccom_op *subs, one;
	int p, n = 0, err;

	if (comm->rank != op->root) {
		/* One transfer with the root: the other side of its group. */
		one = (struct ccom_op){ .kind = gather ? CCOM_COLL_SEND : CCOM_COLL_RECV,
					.sendbuff = op->sendbuff, .recvbuff = op->recvbuff,
					.count = op->count, .dtype = op->dtype, .root = op->root,
					.stream = op->stream };
		return rooted_result(comm, ccom_p2p_run(comm, &one, 1));
	}
	subs = calloc((size_t)comm->nranks, sizeof(*subs));
	if (!subs)
		return -ENOMEM;
	for (p = 0; p < comm->nranks; p++) {
		if (p == comm->rank)
			continue;
		subs[n++] = (struct ccom_op){
			.kind = gather ? CCOM_COLL_RECV : CCOM_COLL_SEND,
			.sendbuff = gather ? NULL : (const char *)op->sendbuff + (size_t)p * bytes,
			.recvbuff = gather ? (char *)op->recvbuff + (size_t)p * bytes : NULL,
			.count = op->count, .dtype = op->dtype, .root = p, .stream = op->stream };
	}
	rooted_self(comm, op, bytes);
	err = ccom_p2p_run(comm, subs, n);
	free(subs);
	return rooted_result(comm, err);
}

int ccom_rooted_run(struct ccomComm *comm, struct ccom_op *op)
{
	int err = ccom_cma_run(comm, op);

	if (err <= 0)
		return err;
	/* 1: not the CMA path (the same answer on every rank). */
	err = rooted_staged(comm, op);
	ccom_cma_staged_done(comm);
	return err;
}
