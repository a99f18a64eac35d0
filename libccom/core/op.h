/* SPDX-License-Identifier: MIT */
/*
 * op.h - the operation record that travels one way from the API
 * (coll/api.c) through the stream queue (proxy/) to the algorithm that
 * runs it (coll/).
 */
#ifndef CCOM_CORE_OP_H
#define CCOM_CORE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "ccom.h"
#include "core/comm.h"
#include "reduce/reduce.h"

struct ccomStream;

enum ccom_coll_kind {
	CCOM_COLL_ALLREDUCE,
	CCOM_COLL_BROADCAST,
	CCOM_COLL_REDUCE,
	CCOM_COLL_ALLGATHER,
	CCOM_COLL_REDUCESCATTER,
	CCOM_COLL_ALLTOALL,
	CCOM_COLL_SEND,
	CCOM_COLL_RECV,
	CCOM_COLL_P2P_GROUP,	/* the sends/recvs of one group, run concurrently */
	CCOM_COLL_NKINDS
};

/*
 * One operation.  @count follows the API of its kind: elements per rank
 * for allreduce/broadcast/reduce, sendcount for allgather, recvcount for
 * reducescatter, elements per peer block for alltoall, elements for p2p.
 */
struct ccom_op {
	enum ccom_coll_kind kind;
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ccomDataType_t dtype;
	ccomRedOp_t op;
	int root;			/* root, or peer for send/recv */
	struct ccomStream *stream;
	uint64_t stream_seq;		/* position in its stream */
	struct ccom_op *subs;		/* P2P_GROUP: array of nsubs SEND/RECV ops */
	int nsubs;
	int subs_cap;			/* entries of subs: kept with the record when recycled */
	struct ccom_op *next;		/* queue / group list link */
};

/* Bytes one rank contributes ("size" in ccom-perf terms) for @op. */
static inline size_t ccom_op_bytes(const struct ccomComm *comm, const struct ccom_op *op)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);

	if (op->kind == CCOM_COLL_ALLGATHER || op->kind == CCOM_COLL_REDUCESCATTER ||
	    op->kind == CCOM_COLL_ALLTOALL)
		b *= (size_t)comm->nranks;
	return b;
}

#endif
