// SPDX-License-Identifier: MIT
/*
 * tree.c - binomial-tree Broadcast and Reduce (coll/ layer), the
 * small-message algorithms between hosts: ceil(log2 n) steps from (or to)
 * the root instead of the chain's n - 1.  Ranks are numbered by their
 * distance from the root in the ring order of the topology, so the
 * subtrees near the leaves stay inside a host.
 *
 * Rank v receives from (or sends to) v - m, where m is the lowest set bit
 * of v, and serves the children v + m' for every m' < m (the root, v = 0,
 * serves every power of two below n).  Messages larger than a segment go
 * segment by segment.
 */
#include <errno.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/transport.h"

/* Bytes per segment: a reduce accumulator and a receive buffer live in cs->tmp. */
#define TREE_SEG_MAX (1u << 20)

struct tree {
	struct ccomComm *comm;
	int n, v, root_pos;
};

static struct ccom_transport_conn *tree_conn(const struct tree *t, int v)
{
	const struct ccom_coll_state *cs = t->comm->coll;

	return cs->conns[cs->ring[(v + t->root_pos) % t->n]];
}

/* Lowest set bit of v (the parent is v - it), or the first power of two >= n for the root. */
static int tree_parent_mask(const struct tree *t)
{
	int mask = 1;

	while (mask < t->n && !(t->v & mask))
		mask <<= 1;
	return mask;
}

static int tree_bcast_seg(struct tree *t, char *buf, size_t bytes)
{
	struct ccom_xfer x[32];
	int mask = tree_parent_mask(t), m, nx = 0, err;

	if (t->v) {
		x[0] = (struct ccom_xfer){ .conn = tree_conn(t, t->v - mask), .buf = buf,
					   .size = bytes };
		err = ccom_xfer_run(t->comm, x, 1);
		if (err)
			return err;
	}
	for (m = mask >> 1; m > 0; m >>= 1)
		if (t->v + m < t->n)
			x[nx++] = (struct ccom_xfer){ .conn = tree_conn(t, t->v + m), .is_send = true,
						      .buf = buf, .size = bytes };
	return nx ? ccom_xfer_run(t->comm, x, nx) : 0;
}

/* Reduce @cnt elements of @in into @acc (the root's output, or scratch). */
static int tree_reduce_seg(struct tree *t, const struct ccom_op *op, const char *in, char *acc,
			   size_t cnt)
{
	size_t bytes = cnt * ccom_dtype_size(op->dtype);
	char *rbuf = t->comm->coll->tmp + TREE_SEG_MAX;
	const char *src = in;
	struct ccom_xfer x;
	int mask, err;

	for (mask = 1; mask < t->n; mask <<= 1) {
		if (t->v & mask) {
			x = (struct ccom_xfer){ .conn = tree_conn(t, t->v - mask), .is_send = true,
						.buf = (char *)src, .size = bytes };
			return ccom_xfer_run(t->comm, &x, 1);
		}
		if (t->v + mask >= t->n)
			continue;
		/* acc = src OP child's partial, reduced as it arrives. */
		x = (struct ccom_xfer){ .conn = tree_conn(t, t->v + mask), .buf = rbuf, .size = bytes,
					.red_dst = acc, .red_src = src, .red_op = op };
		err = ccom_xfer_run(t->comm, &x, 1);
		if (err)
			return err;
		src = acc;
	}
	if (src != acc)
		memcpy(acc, src, bytes);
	ccom_reduce_finish(acc, cnt, op->dtype, op->op, t->n);
	return 0;
}

int ccom_tree_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_coll_state *cs = comm->coll;
	size_t esz = ccom_dtype_size(op->dtype), seg = TREE_SEG_MAX / esz, off, cnt;
	struct tree t = { .comm = comm, .n = comm->nranks };
	int err = 0;

	if ((op->kind != CCOM_COLL_BROADCAST && op->kind != CCOM_COLL_REDUCE) ||
	    cs->tmp_size < 2 * (size_t)TREE_SEG_MAX)
		return ccom_ring_run(comm, op);
	for (t.root_pos = 0; cs->ring[t.root_pos] != op->root; t.root_pos++)
		;
	t.v = (cs->ring_pos - t.root_pos + t.n) % t.n;
	if (op->kind == CCOM_COLL_BROADCAST && t.v == 0 && op->sendbuff != op->recvbuff)
		memcpy(op->recvbuff, op->sendbuff, op->count * esz);
	for (off = 0; off < op->count && !err; off += cnt) {
		cnt = op->count - off < seg ? op->count - off : seg;
		if (op->kind == CCOM_COLL_BROADCAST)
			err = tree_bcast_seg(&t, (char *)op->recvbuff + off * esz, cnt * esz);
		else
			err = tree_reduce_seg(&t, op, (const char *)op->sendbuff + off * esz,
					      t.v ? cs->tmp : (char *)op->recvbuff + off * esz, cnt);
	}
	return err;
}
