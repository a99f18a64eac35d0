// SPDX-License-Identifier: MIT
/*
 * api.c - the collective and group entry points (coll/ layer): argument
 * validation, group recording (ccomGroupStart/End) and submission of
 * operations to the communicator's queue.
 *
 * Groups are per thread.  Inside a group, calls are recorded; at the
 * outermost ccomGroupEnd() the collectives are enqueued in call order and
 * the sends/receives of each (communicator, stream) are merged into one
 * operation that runs them all concurrently, at the position of the first
 * of them (NCCL's rule: dependent sends and receives belong in one group).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/stream.h"
#include "publish/publish.h"
#include "reduce/reduce.h"
#include "util/err.h"

struct group_entry {
	struct ccomComm *comm;
	struct ccom_op *op;
};

static __thread int group_depth;
static __thread struct group_entry *group_ops;
static __thread int group_n, group_cap;

static bool needs_op(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_ALLREDUCE || k == CCOM_COLL_REDUCE || k == CCOM_COLL_REDUCESCATTER;
}

static bool needs_root(enum ccom_coll_kind k)
{
	return k == CCOM_COLL_BROADCAST || k == CCOM_COLL_REDUCE || k == CCOM_COLL_SEND ||
	       k == CCOM_COLL_RECV || k == CCOM_COLL_GATHER || k == CCOM_COLL_SCATTER;
}

/* Whether this rank reads @op's sendbuff / writes its recvbuff (NCCL: unused ones may be NULL). */
static bool uses_sendbuff(const struct ccomComm *comm, const struct ccom_op *op)
{
	if (op->kind == CCOM_COLL_RECV)
		return false;
	if (op->kind == CCOM_COLL_BROADCAST || op->kind == CCOM_COLL_SCATTER)
		return op->root == comm->rank;
	return true;
}

static bool uses_recvbuff(const struct ccomComm *comm, const struct ccom_op *op)
{
	if (op->kind == CCOM_COLL_SEND)
		return false;
	if (op->kind == CCOM_COLL_REDUCE || op->kind == CCOM_COLL_GATHER)
		return op->root == comm->rank;
	return true;
}

static int validate(struct ccomComm *comm, struct ccom_op *op, struct ccomStream **stream)
{
	const char *fn = op->root == CCOM_P2P_ANY && op->kind == CCOM_COLL_RECV ? "ccomRecvAny" :
			 ccom_coll_kind_name(op->kind);
	size_t bytes;

	if (!ccom_comm_valid(comm) || !comm->coll) {
		ccom_set_last_error("%s: comm is not a ready communicator", fn);
		return -EINVAL;
	}
	if (atomic_load(&comm->async_result) == ccomInProgress) {
		ccom_set_last_error(comm->finalizing ?
				    "%s: the communicator is being finalized; no operation may follow ccomCommFinalize" :
				    "%s: the communicator is still initialising; poll ccomCommGetAsyncError first", fn);
		return -EPERM;
	}
	*stream = ccom_stream_resolve(comm, *stream);
	if (!*stream) {
		ccom_set_last_error("%s: the stream does not belong to this communicator", fn);
		return -EINVAL;
	}
	if (!ccom_dtype_size(op->dtype)) {
		ccom_set_last_error("%s: invalid datatype %d", fn, op->dtype);
		return -EINVAL;
	}
	if (needs_op(op->kind) && (unsigned int)op->op >= ccomNumOps) {
		int err = ccom_redop_resolve(comm, op);	/* a PreMulSum op, or the error */

		if (err)
			return err;
	}
	if (op->root == CCOM_P2P_ANY && op->kind == CCOM_COLL_RECV) {
		if (!op->any_peer) {
			ccom_set_last_error("%s: peer is NULL; pass where the matched peer's rank goes", fn);
			return -EINVAL;
		}
		if (comm->nranks < 2) {
			ccom_set_last_error("%s: the communicator has no other rank to receive from", fn);
			return -EPERM;
		}
	} else if (needs_root(op->kind) && (op->root < 0 || op->root >= comm->nranks)) {
		ccom_set_last_error("%s: %s %d is out of range [0, %d)", fn,
				    op->kind >= CCOM_COLL_SEND ? "peer" : "root", op->root, comm->nranks);
		return -EINVAL;
	}
	if (op->count > (SIZE_MAX >> 8) / (size_t)comm->nranks) {
		ccom_set_last_error("%s: count %zu is too large", fn, op->count);
		return -EINVAL;
	}
	bytes = ccom_op_bytes(comm, op);
	if (bytes == 0)
		return 0;
	if (!op->sendbuff && uses_sendbuff(comm, op)) {
		ccom_set_last_error("%s: sendbuff is NULL for %zu elements", fn, op->count);
		return -EINVAL;
	}
	if (!op->recvbuff && uses_recvbuff(comm, op)) {
		ccom_set_last_error("%s: recvbuff is NULL for %zu elements", fn, op->count);
		return -EINVAL;
	}
	return 0;
}

static int group_record(struct ccomComm *comm, struct ccom_op *op)
{
	struct group_entry *n;

	if (group_n == group_cap) {
		group_cap = group_cap ? group_cap * 2 : 16;
		n = realloc(group_ops, (size_t)group_cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		group_ops = n;
	}
	group_ops[group_n++] = (struct group_entry){ comm, op };
	return 0;
}

static void submit(struct ccomComm *comm, struct ccom_op *op)
{
	op->stream_seq = atomic_fetch_add(&op->stream->enqueued, 1) + 1;
	ccom_publish_op_issued(comm->publish);
	ccom_stream_enqueue(comm, op);
}

/*
 * A record from the queue's recycled ones (ccom_stream_op_get()), filled
 * from @tmpl; a recycled record keeps its subs array.
 */
static struct ccom_op *op_new(struct ccomComm *comm, const struct ccom_op *tmpl,
			      struct ccomStream *stream)
{
	struct ccom_op *op = ccom_stream_op_get(comm), *subs;
	int cap;

	if (!op)
		return NULL;
	subs = op->subs;
	cap = op->subs_cap;
	*op = *tmpl;
	op->stream = stream;
	op->subs = subs;
	op->subs_cap = cap;
	op->nsubs = 0;
	op->next = NULL;
	return op;
}

/* Room for @n sends/recvs in @g->subs (kept across recycling); 0 or -ENOMEM. */
static int subs_reserve(struct ccom_op *g, int n)
{
	struct ccom_op *subs;

	if (g->subs_cap >= n)
		return 0;
	subs = realloc(g->subs, (size_t)n * sizeof(*subs));
	if (!subs)
		return -ENOMEM;
	g->subs = subs;
	g->subs_cap = n;
	return 0;
}

/* One send/recv as sub-op @i of @g: the record's own fields only. */
static void sub_set(struct ccom_op *g, int i, const struct ccom_op *o)
{
	g->subs[i] = *o;
	g->subs[i].subs = NULL;
	g->subs[i].nsubs = 0;
	g->subs[i].subs_cap = 0;
	g->subs[i].next = NULL;
}

static ccomResult_t enqueue(struct ccomComm *comm, struct ccom_op *tmpl, struct ccomStream *stream)
{
	struct ccom_op *op;
	int err;

	ccom_clear_last_error();
	err = validate(comm, tmpl, &stream);
	if (err)
		return ccom_result_from_errno(err);
	if (group_depth > 0) {
		op = op_new(comm, tmpl, stream);
		if (!op)
			return ccomSystemError;
		err = group_record(comm, op);
		if (err)
			ccom_stream_op_put(comm, op);
		return ccom_result_from_errno(err);
	}
	if (tmpl->kind == CCOM_COLL_SEND || tmpl->kind == CCOM_COLL_RECV) {
		/* A single send/recv is a P2P_GROUP of one. */
		struct ccom_op g = { .kind = CCOM_COLL_P2P_GROUP };

		op = op_new(comm, &g, stream);
		if (!op)
			return ccomSystemError;
		if (subs_reserve(op, 1)) {
			ccom_stream_op_put(comm, op);
			return ccomSystemError;
		}
		tmpl->stream = stream;
		sub_set(op, 0, tmpl);
		op->nsubs = 1;
	} else {
		op = op_new(comm, tmpl, stream);
		if (!op)
			return ccomSystemError;
	}
	submit(comm, op);
	return ccomSuccess;
}

ccomResult_t ccomGroupStart(void)
{
	ccom_clear_last_error();
	group_depth++;
	return ccomSuccess;
}

/*
 * Merge the p2p ops of entry @i's (comm, stream) from @i on into one op:
 * the first one's record becomes the group (its subs array holds them
 * all), the others' records go back to the queue.
 */
static struct ccom_op *group_merge_p2p(int i)
{
	struct ccomComm *comm = group_ops[i].comm;
	struct ccom_op *first = group_ops[i].op, *g = first;
	struct ccomStream *stream = first->stream;
	int j, n = 0;

	for (j = i; j < group_n; j++)
		if (group_ops[j].op && group_ops[j].comm == comm &&
		    group_ops[j].op->stream == stream && group_ops[j].op->kind >= CCOM_COLL_SEND)
			n++;
	if (subs_reserve(g, n))
		return NULL;
	for (j = i, n = 0; j < group_n; j++) {
		struct ccom_op *o = group_ops[j].op;

		if (o && group_ops[j].comm == comm && o->stream == stream &&
		    o->kind >= CCOM_COLL_SEND) {
			sub_set(g, n++, o);
			if (o != first)
				ccom_stream_op_put(comm, o);
			group_ops[j].op = NULL;
		}
	}
	g->kind = CCOM_COLL_P2P_GROUP;
	g->sendbuff = NULL;
	g->recvbuff = NULL;
	g->count = 0;
	g->root = 0;
	g->nsubs = n;
	return g;
}

/*
 * ccomRecvAny calls may be grouped only among themselves: the first picks
 * the peer, the others take that peer's next sends (coll/p2p.c).
 */
static bool group_any_ok(const struct ccom_op *g)
{
	int i, any = 0;

	for (i = 0; i < g->nsubs; i++)
		any += g->subs[i].root == CCOM_P2P_ANY && g->subs[i].kind == CCOM_COLL_RECV;
	return any == 0 || any == g->nsubs;
}

ccomResult_t ccomGroupEnd(void)
{
	struct ccom_op *op;
	int i, err = 0;

	ccom_clear_last_error();
	if (group_depth <= 0) {
		ccom_set_last_error("ccomGroupEnd: no matching ccomGroupStart on this thread");
		return ccomInvalidUsage;
	}
	if (--group_depth > 0)
		return ccomSuccess;
	for (i = 0; i < group_n; i++) {
		op = group_ops[i].op;
		if (!op)
			continue;
		if (op->kind == CCOM_COLL_SEND || op->kind == CCOM_COLL_RECV) {
			struct ccomComm *comm = group_ops[i].comm;

			op = group_merge_p2p(i);
			if (!op) {
				err = -ENOMEM;
				continue;
			}
			if (!group_any_ok(op)) {
				ccom_set_last_error("ccomGroupEnd: a group mixes ccomRecvAny with ccomSend/ccomRecv on one communicator and stream; group ccomRecvAny only with other ccomRecvAny calls (they then take the same peer's next sends); the group's sends and receives were dropped");
				ccom_stream_op_put(comm, op);
				err = -EPERM;
				continue;
			}
		}
		group_ops[i].op = NULL;
		submit(group_ops[i].comm, op);
	}
	group_n = 0;
	if (err == -ENOMEM)
		ccom_set_last_error("ccomGroupEnd: out of memory; some operations were dropped");
	return ccom_result_from_errno(err);
}

ccomResult_t ccomAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ccomDataType_t datatype, ccomRedOp_t op, ccomComm_t comm,
			   ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_ALLREDUCE, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = count, .dtype = datatype, .op = op };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			   ccomDataType_t datatype, int root, ccomComm_t comm,
			   ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_BROADCAST, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = count, .dtype = datatype, .root = root };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomReduce(const void *sendbuff, void *recvbuff, size_t count,
			ccomDataType_t datatype, ccomRedOp_t op, int root,
			ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_REDUCE, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = count, .dtype = datatype, .op = op,
			     .root = root };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			   ccomDataType_t datatype, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_ALLGATHER, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = sendcount, .dtype = datatype };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
			       ccomDataType_t datatype, ccomRedOp_t op, ccomComm_t comm,
			       ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_REDUCESCATTER, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = recvcount, .dtype = datatype,
			     .op = op };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
			  ccomDataType_t datatype, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_ALLTOALL, .sendbuff = sendbuff,
			     .recvbuff = recvbuff, .count = count, .dtype = datatype };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomSend(const void *sendbuff, size_t count, ccomDataType_t datatype,
		      int peer, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_SEND, .sendbuff = sendbuff, .count = count,
			     .dtype = datatype, .root = peer };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomRecv(void *recvbuff, size_t count, ccomDataType_t datatype,
		      int peer, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_RECV, .recvbuff = recvbuff, .count = count,
			     .dtype = datatype, .root = peer };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomRecvAny(void *recvbuff, size_t count, ccomDataType_t datatype, int *peer,
			 ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_RECV, .recvbuff = recvbuff, .count = count,
			     .dtype = datatype, .root = CCOM_P2P_ANY, .any_peer = peer };

	if (peer)
		*peer = -1;	/* until the receive matched */
	return enqueue(comm, &o, stream);
}

ccomResult_t ccomGather(const void *sendbuff, void *recvbuff, size_t count,
			ccomDataType_t datatype, int root, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_GATHER, .sendbuff = sendbuff, .recvbuff = recvbuff,
			     .count = count, .dtype = datatype, .root = root };

	return enqueue(comm, &o, stream);
}

ccomResult_t ccomScatter(const void *sendbuff, void *recvbuff, size_t count,
			 ccomDataType_t datatype, int root, ccomComm_t comm, ccomStream_t stream)
{
	struct ccom_op o = { .kind = CCOM_COLL_SCATTER, .sendbuff = sendbuff, .recvbuff = recvbuff,
			     .count = count, .dtype = datatype, .root = root };

	return enqueue(comm, &o, stream);
}
