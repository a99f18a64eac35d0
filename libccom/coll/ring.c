// SPDX-License-Identifier: MIT
/*
 * ring.c - transport-based algorithms (coll/ layer): what runs when the
 * ranks span several hosts (or with CCOM_ALGO=ring): ring AllReduce
 * (reduce-scatter + all-gather, in segments of nranks pieces), ring
 * AllGather and ReduceScatter, pipelined chains for Broadcast and Reduce,
 * and pairwise exchange for AlltoAll.  Every step is a set of concurrent
 * transfers driven by ccom_xfer_run() over the per-peer connections, in
 * the ring order of the topology (ranks of one host adjacent).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/transport.h"
#include "util/err.h"

#define RING_PIECE (1u << 20)	/* bytes per pipelined piece */

struct ring {
	struct ccomComm *comm;
	int n, pos;
	int *order;
	struct ccom_transport_conn *next, *prev;
};

static void ring_init(struct ccomComm *comm, struct ring *r)
{
	struct ccom_coll_state *cs = comm->coll;

	r->comm = comm;
	r->n = comm->nranks;
	r->pos = cs->ring_pos;
	r->order = cs->ring;
	r->next = cs->conns[r->order[(r->pos + 1) % r->n]];
	r->prev = cs->conns[r->order[(r->pos + r->n - 1) % r->n]];
}

static int ring_at(const struct ring *r, int k)
{
	return ((r->pos + k) % r->n + r->n) % r->n;
}

static int sendrecv(struct ring *r, const void *sbuf, size_t ssz, void *rbuf, size_t rsz)
{
	struct ccom_xfer x[2] = {
		{ .conn = r->next, .is_send = true, .buf = (char *)sbuf, .size = ssz },
		{ .conn = r->prev, .is_send = false, .buf = rbuf, .size = rsz },
	};

	return ccom_xfer_run(r->comm, x, 2);
}

/* sendrecv whose receive is reduced as it arrives: dst = src OP received. */
static int sendrecv_reduce(struct ring *r, const void *sbuf, size_t ssz, void *rbuf, size_t rsz,
			   char *dst, const char *src, const struct ccom_op *op)
{
	struct ccom_xfer x[2] = {
		{ .conn = r->next, .is_send = true, .buf = (char *)sbuf, .size = ssz },
		{ .conn = r->prev, .is_send = false, .buf = rbuf, .size = rsz,
		  .red_dst = dst, .red_src = src, .red_op = op },
	};

	return ccom_xfer_run(r->comm, x, 2);
}

static void block_of(size_t len, int n, int b, size_t *lo, size_t *cnt)
{
	size_t hi = len * (size_t)(b + 1) / (size_t)n;

	*lo = len * (size_t)b / (size_t)n;
	*cnt = hi - *lo;
}

/* Ring AllReduce of one segment [0, len) of @buf (already holding the input). */
static int ring_allreduce_seg(struct ring *r, struct ccom_op *op, char *buf, size_t len,
			      char *tmp)
{
	size_t esz = ccom_dtype_size(op->dtype), slo, scnt, rlo, rcnt;
	int k, err;

	for (k = 0; k < r->n - 1; k++) {
		block_of(len, r->n, ring_at(r, -k), &slo, &scnt);
		block_of(len, r->n, ring_at(r, -k - 1), &rlo, &rcnt);
		err = sendrecv_reduce(r, buf + slo * esz, scnt * esz, tmp, rcnt * esz,
				      buf + rlo * esz, buf + rlo * esz, op);
		if (err)
			return err;
	}
	block_of(len, r->n, ring_at(r, 1), &rlo, &rcnt);
	ccom_reduce_finish(buf + rlo * esz, rcnt, op->dtype, op->op, r->n);
	for (k = 0; k < r->n - 1; k++) {
		block_of(len, r->n, ring_at(r, 1 - k), &slo, &scnt);
		block_of(len, r->n, ring_at(r, -k), &rlo, &rcnt);
		err = sendrecv(r, buf + slo * esz, scnt * esz, buf + rlo * esz, rcnt * esz);
		if (err)
			return err;
	}
	return 0;
}

static int ring_allreduce(struct ring *r, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), seg = (size_t)r->n * (RING_PIECE / esz), off, len;
	char *out = op->recvbuff;
	int err;

	if (r->n == 2)
		return ccom_pair_allreduce(r->comm, op, r->next, r->pos);
	if (op->sendbuff != op->recvbuff)
		memcpy(out, op->sendbuff, op->count * esz);
	for (off = 0; off < op->count; off += len) {
		len = op->count - off < seg ? op->count - off : seg;
		err = ring_allreduce_seg(r, op, out + off * esz, len, r->comm->coll->tmp);
		if (err)
			return err;
	}
	return 0;
}

static int ring_allgather(struct ring *r, struct ccom_op *op)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);
	char *out = op->recvbuff;
	int k, s, v, err;

	if (out + (size_t)r->comm->rank * b != op->sendbuff)
		memcpy(out + (size_t)r->comm->rank * b, op->sendbuff, b);
	for (k = 0; k < r->n - 1; k++) {
		s = r->order[ring_at(r, -k)];
		v = r->order[ring_at(r, -k - 1)];
		err = sendrecv(r, out + (size_t)s * b, b, out + (size_t)v * b, b);
		if (err)
			return err;
	}
	return 0;
}

/* One piece [off, off+len) of every block: accumulate around the ring. */
static int ring_rs_piece(struct ring *r, struct ccom_op *op, size_t off, size_t len)
{
	size_t esz = ccom_dtype_size(op->dtype), block = op->count * esz, bytes = len * esz;
	const char *in = op->sendbuff;
	char *acc = r->comm->coll->tmp, *rtmp = acc + RING_PIECE, *acc2 = rtmp + RING_PIECE;
	char *dst, *swap;
	int k, bs, br, err;

	for (k = 0; k < r->n - 1; k++) {
		bs = r->order[ring_at(r, -1 - k)];
		br = r->order[ring_at(r, -2 - k)];
		dst = k == r->n - 2 ? (char *)op->recvbuff + off * esz : acc2;
		err = sendrecv_reduce(r, k == 0 ? in + (size_t)bs * block + off * esz : acc, bytes,
				      rtmp, bytes, dst, in + (size_t)br * block + off * esz, op);
		if (err)
			return err;
		swap = acc;
		acc = acc2;
		acc2 = swap;
	}
	ccom_reduce_finish((char *)op->recvbuff + off * esz, len, op->dtype, op->op, r->n);
	return 0;
}

static int ring_reducescatter(struct ring *r, struct ccom_op *op)
{
	size_t per = RING_PIECE / ccom_dtype_size(op->dtype), off, len;
	int err;

	for (off = 0; off < op->count; off += len) {
		len = op->count - off < per ? op->count - off : per;
		err = ring_rs_piece(r, op, off, len);
		if (err)
			return err;
	}
	return 0;
}

/* Chain over ring positions relative to the root: 0 (root), 1, ..., n-1. */
static struct ccom_transport_conn *chain_conn(struct ring *r, int root_pos, int rel)
{
	return r->comm->coll->conns[r->order[(root_pos + rel) % r->n]];
}

static int ring_broadcast(struct ring *r, struct ccom_op *op)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype), off, len;
	int rp = r->comm->coll->ring_pos, root_pos, rel, err = 0;
	char *out = op->recvbuff;
	struct ccom_xfer x[2];
	int nx;

	for (root_pos = 0; r->order[root_pos] != op->root; root_pos++)
		;
	rel = (rp - root_pos + r->n) % r->n;
	if (rel == 0 && op->sendbuff != op->recvbuff)
		memcpy(out, op->sendbuff, bytes);
	for (off = 0; off < bytes && !err; off += len) {
		len = bytes - off < RING_PIECE ? bytes - off : RING_PIECE;
		nx = 0;
		if (rel > 0)
			x[nx++] = (struct ccom_xfer){ .conn = chain_conn(r, root_pos, rel - 1),
						      .buf = out + off, .size = len };
		if (!nx || (err = ccom_xfer_run(r->comm, x, nx)) == 0) {
			if (rel < r->n - 1) {
				x[0] = (struct ccom_xfer){ .conn = chain_conn(r, root_pos, rel + 1),
							   .is_send = true, .buf = out + off, .size = len };
				err = ccom_xfer_run(r->comm, x, 1);
			}
		}
	}
	return err;
}

static int ring_reduce(struct ring *r, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), per = RING_PIECE / esz, off, len;
	int rp = r->comm->coll->ring_pos, root_pos, rel, err = 0;
	char *acc = r->comm->coll->tmp, *rtmp = acc + RING_PIECE, *dst;
	const char *in;
	struct ccom_xfer x;

	for (root_pos = 0; r->order[root_pos] != op->root; root_pos++)
		;
	rel = (rp - root_pos + r->n) % r->n;
	for (off = 0; off < op->count && !err; off += len) {
		len = op->count - off < per ? op->count - off : per;
		in = (const char *)op->sendbuff + off * esz;
		dst = rel == 0 ? (char *)op->recvbuff + off * esz : acc;
		if (rel < r->n - 1) {
			x = (struct ccom_xfer){ .conn = chain_conn(r, root_pos, rel + 1),
						.buf = rtmp, .size = len * esz, .red_dst = dst,
						.red_src = in, .red_op = op };
			err = ccom_xfer_run(r->comm, &x, 1);
			if (err)
				break;
			in = dst;
		}
		if (rel == 0) {
			if (in != dst)
				memcpy(dst, in, len * esz);
			ccom_reduce_finish(dst, len, op->dtype, op->op, r->n);
			continue;
		}
		x = (struct ccom_xfer){ .conn = chain_conn(r, root_pos, rel - 1), .is_send = true,
					.buf = (char *)in, .size = len * esz };
		err = ccom_xfer_run(r->comm, &x, 1);
	}
	return err;
}

static int ring_alltoall(struct ring *r, struct ccom_op *op)
{
	struct ccomComm *comm = r->comm;
	size_t b = op->count * ccom_dtype_size(op->dtype);
	const char *in = op->sendbuff;
	char *copy = NULL, *out = op->recvbuff;
	struct ccom_xfer *x;
	int p, n = 0, err;

	x = calloc((size_t)comm->nranks * 2, sizeof(*x));
	if (!x)
		return -ENOMEM;
	if (op->sendbuff == op->recvbuff && comm->nranks > 1) {
		copy = malloc(b * (size_t)comm->nranks);
		if (!copy) {
			free(x);
			return -ENOMEM;
		}
		memcpy(copy, in, b * (size_t)comm->nranks);
		in = copy;
	}
	for (p = 0; p < comm->nranks; p++) {
		if (p == comm->rank) {
			memmove(out + (size_t)p * b, in + (size_t)p * b, b);
			continue;
		}
		x[n++] = (struct ccom_xfer){ .conn = comm->coll->conns[p], .is_send = true,
					     .buf = (char *)in + (size_t)p * b, .size = b };
		x[n++] = (struct ccom_xfer){ .conn = comm->coll->conns[p],
					     .buf = out + (size_t)p * b, .size = b };
	}
	err = ccom_xfer_run(comm, x, n);
	free(copy);
	free(x);
	return err;
}

int ccom_ring_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ring r;

	ring_init(comm, &r);
	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
		return ring_allreduce(&r, op);
	case CCOM_COLL_ALLGATHER:
		return ring_allgather(&r, op);
	case CCOM_COLL_REDUCESCATTER:
		return ring_reducescatter(&r, op);
	case CCOM_COLL_BROADCAST:
		return ring_broadcast(&r, op);
	case CCOM_COLL_REDUCE:
		return ring_reduce(&r, op);
	case CCOM_COLL_ALLTOALL:
		return ring_alltoall(&r, op);
	default:
		return -EINVAL;
	}
}
