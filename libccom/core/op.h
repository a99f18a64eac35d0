/* SPDX-License-Identifier: MIT */
/*
 * op.h - the operation record that travels one way from the API
 * (coll/api.c) through the stream queue (proxy/) to the algorithm that
 * runs it (coll/).
 */
#ifndef CCOM_CORE_OP_H
#define CCOM_CORE_OP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ccom.h"
#include "core/comm.h"
#include "reduce/reduce.h"
#include "util/err.h"

struct ccomStream;

/* The root of a ccomRecvAny's RECV op: any peer (coll/p2p_any.c). */
#define CCOM_P2P_ANY (-1)

enum ccom_coll_kind {
	CCOM_COLL_ALLREDUCE,
	CCOM_COLL_BROADCAST,
	CCOM_COLL_REDUCE,
	CCOM_COLL_ALLGATHER,
	CCOM_COLL_REDUCESCATTER,
	CCOM_COLL_ALLTOALL,
	CCOM_COLL_GATHER,	/* rooted, over the p2p machinery (coll/rooted.c) */
	CCOM_COLL_SCATTER,
	CCOM_COLL_SEND,
	CCOM_COLL_RECV,
	CCOM_COLL_P2P_GROUP,	/* the sends/recvs of one group, run concurrently */
	CCOM_COLL_NKINDS
};

/*
 * One operation.  @count follows the API of its kind: elements per rank
 * for allreduce/broadcast/reduce, sendcount for allgather, recvcount for
 * reducescatter, elements per peer block for alltoall, elements per rank
 * for gather/scatter, elements for p2p.
 */
struct ccom_op {
	enum ccom_coll_kind kind;
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ccomDataType_t dtype;
	ccomRedOp_t op;
	int root;			/* root, or peer for send/recv (CCOM_P2P_ANY: ccomRecvAny) */
	int *any_peer;			/* ccomRecvAny: where the matched peer goes */
	struct ccomStream *stream;
	uint64_t stream_seq;		/* position in its stream */
	uint64_t flight_seq;		/* op number on the comm (proxy/flight.h), 0: none */
	struct ccom_op *subs;		/* P2P_GROUP: array of nsubs SEND/RECV ops */
	int nsubs;
	int subs_cap;			/* entries of subs: kept with the record when recycled */
	struct ccom_op *next;		/* queue / group list link */
	/*
	 * A ccomRedOpCreatePreMulSum() op, resolved at enqueue (the handle may
	 * be destroyed once the call returned, as in NCCL): @op is then
	 * ccomSum and coll/premul.c multiplies the input by the scalar first,
	 * the value captured at creation or the one @premul_ptr holds at
	 * execution (ccomScalarDevice).
	 */
	bool premul;
	const void *premul_ptr;		/* NULL: use @premul_val */
	uint64_t premul_val;		/* the scalar's bytes, in @dtype */
};

/* The API name of @k ("ccomAllReduce"), for messages. */
static inline const char *ccom_coll_kind_name(enum ccom_coll_kind k)
{
	static const char *const names[CCOM_COLL_NKINDS] = {
		[CCOM_COLL_ALLREDUCE] = "ccomAllReduce", [CCOM_COLL_BROADCAST] = "ccomBroadcast",
		[CCOM_COLL_REDUCE] = "ccomReduce", [CCOM_COLL_ALLGATHER] = "ccomAllGather",
		[CCOM_COLL_REDUCESCATTER] = "ccomReduceScatter", [CCOM_COLL_ALLTOALL] = "ccomAlltoAll",
		[CCOM_COLL_GATHER] = "ccomGather", [CCOM_COLL_SCATTER] = "ccomScatter",
		[CCOM_COLL_SEND] = "ccomSend", [CCOM_COLL_RECV] = "ccomRecv",
		[CCOM_COLL_P2P_GROUP] = "p2p group",
	};

	return (unsigned int)k < CCOM_COLL_NKINDS ? names[k] : "invalid collective";
}

static inline bool ccom_coll_has_op(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_ALLREDUCE || k == CCOM_COLL_REDUCE || k == CCOM_COLL_REDUCESCATTER;
}

static inline bool ccom_coll_has_root(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_BROADCAST || k == CCOM_COLL_REDUCE || k == CCOM_COLL_GATHER ||
	       k == CCOM_COLL_SCATTER;
}

/*
 * The signature of a collective: what every rank must agree on for its
 * @seq-th collective on the communicator (p2p has none).  Fields that the
 * kind does not use are -1, so that they never differ.
 */
struct ccom_op_sig {
	uint64_t seq;			/* 1, 2, ...: collectives issued on the comm */
	uint64_t count;
	int32_t kind;			/* enum ccom_coll_kind */
	int32_t dtype;
	int32_t op;			/* reduction op, -1 if none */
	int32_t root;			/* root, -1 if none */
};

static inline void ccom_op_sig_make(struct ccom_op_sig *sig, const struct ccom_op *op, uint64_t seq)
{
	sig->seq = seq;
	sig->count = op->count;
	sig->kind = (int32_t)op->kind;
	sig->dtype = (int32_t)op->dtype;
	sig->op = !ccom_coll_has_op(op->kind) ? -1 :
		  op->premul ? (int32_t)CCOM_OP_PREMULSUM : (int32_t)op->op;
	sig->root = ccom_coll_has_root(op->kind) ? (int32_t)op->root : -1;
}

/* What differs between two signatures of the same seq, NULL if nothing. */
static inline const char *ccom_op_sig_diff(const struct ccom_op_sig *a, const struct ccom_op_sig *b)
{
	if (a->seq != b->seq)
		return "they are at different collectives of the communicator";
	if (a->kind != b->kind)
		return "they called different collectives";
	if (a->count != b->count)
		return "the element counts differ";
	if (a->dtype != b->dtype)
		return "the datatypes differ";
	if (a->op != b->op)
		return "the reduction ops differ";
	if (a->root != b->root)
		return "the roots differ";
	return NULL;
}

/* "ccomAllReduce(count 100, float, sum)" into @buf. */
static inline const char *ccom_op_sig_str(const struct ccom_op_sig *sig, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s(count %llu, %s", ccom_coll_kind_name((enum ccom_coll_kind)sig->kind),
			 (unsigned long long)sig->count, ccom_dtype_name((ccomDataType_t)sig->dtype));

	if (n > 0 && (size_t)n < len && sig->op >= 0)
		n += snprintf(buf + n, len - (size_t)n, ", %s", ccom_op_name((ccomRedOp_t)sig->op));
	if (n > 0 && (size_t)n < len && sig->root >= 0)
		n += snprintf(buf + n, len - (size_t)n, ", root %d", sig->root);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
	return buf;
}

/*
 * The mismatch sentence (one host's board and the network's in-band
 * check say it alike): rank @me called @mine but @peer @theirs as its
 * collective @mine->seq, and @why.  Returns -EPERM (ccomInvalidUsage).
 */
static inline int ccom_op_sig_mismatch(int me, const struct ccom_op_sig *mine, int peer,
				       const struct ccom_op_sig *theirs, const char *why)
{
	char a[128], b[128];

	ccom_set_last_error("collective mismatch: rank %d called %s but rank %d %s as collective %llu (%s); call the same collectives in the same order on every rank",
			    me, ccom_op_sig_str(mine, a, sizeof(a)), peer,
			    ccom_op_sig_str(theirs, b, sizeof(b)), (unsigned long long)mine->seq, why);
	return -EPERM;
}

/* Bytes one rank contributes ("size" in ccom-perf terms) for @op. */
static inline size_t ccom_op_bytes(const struct ccomComm *comm, const struct ccom_op *op)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);

	if (op->kind == CCOM_COLL_ALLGATHER || op->kind == CCOM_COLL_REDUCESCATTER ||
	    op->kind == CCOM_COLL_ALLTOALL || op->kind == CCOM_COLL_GATHER ||
	    op->kind == CCOM_COLL_SCATTER)
		b *= (size_t)comm->nranks;
	return b;
}

#endif
