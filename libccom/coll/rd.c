// SPDX-License-Identifier: MIT
/*
 * rd.c - recursive-doubling AllReduce (coll/ layer), the small-message
 * algorithm between hosts: log2(n) exchange steps instead of the ring's
 * 2(n - 1), each moving the whole (small) vector.  What counts between
 * hosts is the number of network round trips, not the bytes.
 *
 * Ranks are numbered by their position in the ring order of the topology,
 * so the first steps pair ranks of one host (shm) and only the last ones
 * cross the network.  A rank count that is not a power of two is folded
 * first: of the first 2 * rem positions (rem = n - 2^k), each even one
 * hands its vector to the odd one after it and sits out the doubling,
 * then gets the result back.
 *
 * Every step combines two disjoint groups of contributions, and both
 * partners compute the same a OP b (sum, prod, min and max are
 * commutative for two operands, also in floating point), so every rank
 * ends with the same bits.
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

/* Bytes per segment: the send copy and the receive buffer both live in cs->tmp. */
#define RD_SEG_MAX (1u << 20)

struct rd {
	struct ccomComm *comm;
	int n, p2, rem, pos, vrank;	/* vrank: rank in the doubling, -1 while folded out */
	const int *order;
};

/* Ring position of the rank that has doubling rank @v. */
static int rd_pos_of(const struct rd *r, int v)
{
	return v < r->rem ? 2 * v + 1 : v + r->rem;
}

static struct ccom_transport_conn *rd_conn(const struct rd *r, int pos)
{
	return r->comm->coll->conns[r->order[pos]];
}

static int rd_send(struct rd *r, int pos, const void *buf, size_t size)
{
	struct ccom_xfer x = { .conn = rd_conn(r, pos), .is_send = true, .buf = (char *)buf,
			       .size = size };

	return ccom_xfer_run(r->comm, &x, 1);
}

static int rd_recv(struct rd *r, int pos, void *buf, size_t size)
{
	struct ccom_xfer x = { .conn = rd_conn(r, pos), .is_send = false, .buf = buf, .size = size };

	return ccom_xfer_run(r->comm, &x, 1);
}

/* One segment of @cnt elements in @buf (holding this rank's input). */
static int rd_allreduce_seg(struct rd *r, const struct ccom_op *op, char *buf, size_t cnt)
{
	size_t bytes = cnt * ccom_dtype_size(op->dtype);
	char *scopy = r->comm->coll->tmp, *rbuf = scopy + RD_SEG_MAX;
	int mask, err;

	if (r->pos < 2 * r->rem) {
		if (r->pos % 2 == 0) {
			err = rd_send(r, r->pos + 1, buf, bytes);
			return err ? err : rd_recv(r, r->pos + 1, buf, bytes);
		}
		err = rd_recv(r, r->pos - 1, rbuf, bytes);
		if (err)
			return err;
		ccom_reduce2(buf, buf, rbuf, cnt, op->dtype, op->op);
	}
	for (mask = 1; mask < r->p2; mask <<= 1) {
		int peer = rd_pos_of(r, r->vrank ^ mask);
		/* The send must not see the reduction below: it sends a copy. */
		struct ccom_xfer x[2] = {
			{ .conn = rd_conn(r, peer), .is_send = true, .buf = scopy, .size = bytes },
			{ .conn = rd_conn(r, peer), .is_send = false, .buf = rbuf, .size = bytes,
			  .red_dst = buf, .red_src = buf, .red_op = op },
		};

		memcpy(scopy, buf, bytes);
		err = ccom_xfer_run(r->comm, x, 2);
		if (err)
			return err;
	}
	if (r->pos < 2 * r->rem)
		return rd_send(r, r->pos - 1, buf, bytes);
	return 0;
}

int ccom_rd_allreduce(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_coll_state *cs = comm->coll;
	size_t esz = ccom_dtype_size(op->dtype), seg = RD_SEG_MAX / esz, off, cnt;
	struct rd r = { .comm = comm, .n = comm->nranks, .pos = cs->ring_pos, .order = cs->ring };
	char *out = op->recvbuff;
	int err;

	if (op->kind != CCOM_COLL_ALLREDUCE || cs->tmp_size < 2 * (size_t)RD_SEG_MAX)
		return ccom_ring_run(comm, op);
	for (r.p2 = 1; r.p2 * 2 <= r.n; r.p2 *= 2)
		;
	r.rem = r.n - r.p2;
	if (r.pos < 2 * r.rem)
		r.vrank = r.pos % 2 ? r.pos / 2 : -1;
	else
		r.vrank = r.pos - r.rem;
	if (op->sendbuff != op->recvbuff)
		memcpy(out, op->sendbuff, op->count * esz);
	for (off = 0; off < op->count; off += cnt) {
		cnt = op->count - off < seg ? op->count - off : seg;
		err = rd_allreduce_seg(&r, op, out + off * esz, cnt);
		if (err)
			return err;
	}
	ccom_reduce_finish(out, op->count, op->dtype, op->op, r.n);
	return 0;
}
