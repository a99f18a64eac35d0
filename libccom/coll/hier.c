// SPDX-License-Identifier: MIT
/*
 * hier.c - hierarchical collectives (coll/ layer) for communicators that
 * span hosts: the ranks of a host work through the shared-memory
 * connections (transport/shm.c's FIFOs), and only a few of them talk over
 * the network, each on its own TCP connections.  The schedules, with their
 * step and byte counts, are in Documentation/libccom/collectives.rst
 * ("Hierarchical collectives"); the tuner (tune/tune.c) decides when they
 * run and on which layouts they can.
 *
 *   rail   AllReduce split by rails: intra-host ring reduce-scatter (rank
 *          of local index l owns block l), one ring AllReduce of block l
 *          between the ranks of local index l of every host (the L rails
 *          run at the same time, each on its own connections), intra-host
 *          ring all-gather.  A host sends 2(H-1)/H of the vector, the flat
 *          ring 2(n-1)/n.  Needs the same number of ranks on every host.
 *   rab    Reduce to a host leader (binomial tree in the host), AllReduce
 *          of the leaders (recursive doubling), broadcast in the host
 *          (binomial tree): the small-message schedule, any layout.
 *          Broadcast and Reduce use the same shape with the root as its
 *          host's leader: a tree between the hosts' leaders and a tree in
 *          each host.
 *   hostpair  AlltoAll aggregated per host pair: hier_alltoall.c.
 *
 * Every step of a group (a host, a rail, the leaders) is a set of
 * transfers of ccom_xfer_run() over the per-peer connections of
 * comm->coll->conns.  Long vectors go segment by segment (at most 1 MiB
 * per rank and step), so every receive fits coll/'s scratch buffer.
 *
 * Reductions give the same bits on every rank: each element is reduced
 * once by one rank (the ring's owner of its block, or the tree's parent)
 * and copied to the others, or by both partners of a doubling step with
 * the same two operands; ccomAvg is summed and divided once, by nranks,
 * after the last reduction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/hier.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/transport.h"
#include "tune/tune.h"
#include "util/err.h"

/* Bytes per rank and step; four of them fit coll/'s scratch buffer (>= 4 MiB). */
#define HIER_SEG (1u << 20)

void ccom_hier_free(struct ccom_hier *h)
{
	if (!h)
		return;
	free(h->nlocal);
	free(h->host_rank);
	free(h->grp);
	free(h->grp2);
	free(h);
}

struct ccom_hier *ccom_hier_get(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_hier *h = cs->hier;
	int r, m;

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->nhosts = comm->nnodes;
	h->nlocal = calloc((size_t)h->nhosts, sizeof(int));
	if (!h->nlocal)
		goto fail;
	for (r = 0; r < comm->nranks; r++)
		h->nlocal[comm->rank_to_node[r]]++;
	for (r = 0; r < h->nhosts; r++)
		if (h->nlocal[r] > h->lmax)
			h->lmax = h->nlocal[r];
	m = h->lmax > h->nhosts ? h->lmax : h->nhosts;
	h->host_rank = calloc((size_t)h->nhosts * (size_t)h->lmax, sizeof(int));
	h->grp = calloc((size_t)m, sizeof(int));
	h->grp2 = calloc((size_t)m, sizeof(int));
	if (!h->host_rank || !h->grp || !h->grp2)
		goto fail;
	for (r = 0; r < comm->nranks; r++)
		h->host_rank[comm->rank_to_node[r] * h->lmax + comm->rank_to_local[r]] = r;
	cs->hier = h;
	return h;
fail:
	ccom_hier_free(h);
	return NULL;
}

/* A group of ranks in the order of @g; this rank is at position @p. */
struct grp {
	struct ccomComm *comm;
	const int *g;
	int n, p;
};

static struct ccom_transport_conn *grp_conn(const struct grp *gr, int pos)
{
	return gr->comm->coll->conns[gr->g[((pos % gr->n) + gr->n) % gr->n]];
}

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

static void block_of(size_t len, int n, int b, size_t *lo, size_t *cnt)
{
	*lo = len * (size_t)b / (size_t)n;
	*cnt = len * (size_t)(b + 1) / (size_t)n - *lo;
}

/*
 * Ring reduce-scatter of @len elements of @buf (this rank's input) over
 * the group: afterwards block p (block_of()) holds the group's reduction
 * (not finished).  n - 1 steps of one block each; receives go to @rtmp.
 */
static int grp_rs(const struct grp *gr, const struct ccom_op *op, char *buf, size_t len, char *rtmp)
{
	size_t esz = ccom_dtype_size(op->dtype), slo, scnt, rlo, rcnt;
	int k, err;

	for (k = 0; k < gr->n - 1; k++) {
		block_of(len, gr->n, mod(gr->p - k - 1, gr->n), &slo, &scnt);
		block_of(len, gr->n, mod(gr->p - k - 2, gr->n), &rlo, &rcnt);
		struct ccom_xfer x[2] = {
			{ .conn = grp_conn(gr, gr->p + 1), .is_send = true, .buf = buf + slo * esz,
			  .size = scnt * esz },
			{ .conn = grp_conn(gr, gr->p - 1), .buf = rtmp, .size = rcnt * esz,
			  .red_dst = buf + rlo * esz, .red_src = buf + rlo * esz, .red_op = op },
		};
		err = ccom_xfer_run(gr->comm, x, 2);
		if (err)
			return err;
	}
	return 0;
}

/* Ring all-gather of the blocks of @len elements: block p is this rank's; n - 1 steps. */
static int grp_ag(const struct grp *gr, size_t esz, char *buf, size_t len)
{
	size_t slo, scnt, rlo, rcnt;
	int k, err;

	for (k = 0; k < gr->n - 1; k++) {
		block_of(len, gr->n, mod(gr->p - k, gr->n), &slo, &scnt);
		block_of(len, gr->n, mod(gr->p - k - 1, gr->n), &rlo, &rcnt);
		struct ccom_xfer x[2] = {
			{ .conn = grp_conn(gr, gr->p + 1), .is_send = true, .buf = buf + slo * esz,
			  .size = scnt * esz },
			{ .conn = grp_conn(gr, gr->p - 1), .buf = buf + rlo * esz, .size = rcnt * esz },
		};
		err = ccom_xfer_run(gr->comm, x, 2);
		if (err)
			return err;
	}
	return 0;
}

static int grp_xfer1(const struct grp *gr, int pos, bool send, void *buf, size_t size)
{
	struct ccom_xfer x = { .conn = grp_conn(gr, pos), .is_send = send, .buf = buf, .size = size };

	return ccom_xfer_run(gr->comm, &x, 1);
}

/*
 * Recursive-doubling AllReduce of @cnt elements of @buf (at most HIER_SEG
 * bytes) over the group, as coll/rd.c: a count that is not a power of two
 * is folded first (the even one of each of the first 2 * rem positions
 * hands its vector to the next and gets the result back).  Not finished.
 */
static int grp_rd(const struct grp *gr, const struct ccom_op *op, char *buf, size_t cnt)
{
	size_t bytes = cnt * ccom_dtype_size(op->dtype);
	char *scopy = gr->comm->coll->tmp, *rbuf = scopy + HIER_SEG;
	int p2, rem, v, mask, peer, err;

	for (p2 = 1; p2 * 2 <= gr->n; p2 *= 2)
		;
	rem = gr->n - p2;
	if (gr->p < 2 * rem) {
		if (gr->p % 2 == 0) {
			err = grp_xfer1(gr, gr->p + 1, true, buf, bytes);
			return err ? err : grp_xfer1(gr, gr->p + 1, false, buf, bytes);
		}
		err = grp_xfer1(gr, gr->p - 1, false, rbuf, bytes);
		if (err)
			return err;
		ccom_reduce2(buf, buf, rbuf, cnt, op->dtype, op->op);
		v = gr->p / 2;
	} else {
		v = gr->p - rem;
	}
	for (mask = 1; mask < p2; mask <<= 1) {
		int pv = v ^ mask;

		peer = pv < rem ? 2 * pv + 1 : pv + rem;
		struct ccom_xfer x[2] = {
			{ .conn = grp_conn(gr, peer), .is_send = true, .buf = scopy, .size = bytes },
			{ .conn = grp_conn(gr, peer), .buf = rbuf, .size = bytes, .red_dst = buf,
			  .red_src = buf, .red_op = op },
		};
		memcpy(scopy, buf, bytes);
		err = ccom_xfer_run(gr->comm, x, 2);
		if (err)
			return err;
	}
	if (gr->p < 2 * rem)
		return grp_xfer1(gr, gr->p - 1, true, buf, bytes);
	return 0;
}

/* Lowest set bit of p (the parent is p - it), or the first power of two >= n for p = 0. */
static int tree_mask(const struct grp *gr)
{
	int mask = 1;

	while (mask < gr->n && !(gr->p & mask))
		mask <<= 1;
	return mask;
}

/* Binomial-tree broadcast of @bytes (at most one segment) of @buf from position 0. */
static int grp_bcast(const struct grp *gr, char *buf, size_t bytes)
{
	struct ccom_xfer x[32];
	int mask = tree_mask(gr), m, nx = 0, err;

	if (gr->p) {
		err = grp_xfer1(gr, gr->p - mask, false, buf, bytes);
		if (err)
			return err;
	}
	for (m = mask >> 1; m > 0; m >>= 1)
		if (gr->p + m < gr->n && nx < 32)
			x[nx++] = (struct ccom_xfer){ .conn = grp_conn(gr, gr->p + m), .is_send = true,
						      .buf = buf, .size = bytes };
	return nx ? ccom_xfer_run(gr->comm, x, nx) : 0;
}

/*
 * Binomial-tree reduction of @cnt elements (one segment) of @in to
 * position 0: @acc receives this rank's partial (the result at position
 * 0), @rbuf holds what children send.  Not finished.
 */
static int grp_reduce(const struct grp *gr, const struct ccom_op *op, const char *in, char *acc,
		      char *rbuf, size_t cnt)
{
	size_t bytes = cnt * ccom_dtype_size(op->dtype);
	const char *src = in;
	int mask, err;

	for (mask = 1; mask < gr->n; mask <<= 1) {
		if (gr->p & mask)
			return grp_xfer1(gr, gr->p - mask, true, (char *)src, bytes);
		if (gr->p + mask >= gr->n)
			continue;
		struct ccom_xfer x = { .conn = grp_conn(gr, gr->p + mask), .buf = rbuf, .size = bytes,
				       .red_dst = acc, .red_src = src, .red_op = op };
		err = ccom_xfer_run(gr->comm, &x, 1);
		if (err)
			return err;
		src = acc;
	}
	if (src != acc)
		memcpy(acc, src, bytes);
	return 0;
}

/* This rank's host (group of its host's ranks, rotated so local index @first is position 0). */
static void host_grp(struct ccomComm *comm, struct ccom_hier *h, int first, struct grp *gr)
{
	int nl = h->nlocal[comm->node], i;

	for (i = 0; i < nl; i++)
		h->grp[i] = h->host_rank[comm->node * h->lmax + (first + i) % nl];
	*gr = (struct grp){ .comm = comm, .g = h->grp, .n = nl,
			    .p = mod(comm->local_rank - first, nl) };
}

/*
 * The leaders: one rank per host, host @first's @first_rank at position 0,
 * then local index 0 of every other host in host order.  @p is -1 when
 * this rank leads no host.
 */
static void leader_grp(struct ccomComm *comm, struct ccom_hier *h, int first, int first_rank,
		       struct grp *gr)
{
	int i, k, n = h->nhosts;

	gr->comm = comm;
	gr->g = h->grp2;
	gr->n = n;
	gr->p = -1;
	for (i = 0; i < n; i++) {
		k = (first + i) % n;
		h->grp2[i] = k == first ? first_rank : h->host_rank[k * h->lmax];
		if (h->grp2[i] == comm->rank)
			gr->p = i;
	}
}

/* The rail of this rank: local index l of every host, in host order (position = host). */
static void rail_grp(struct ccomComm *comm, struct ccom_hier *h, struct grp *gr)
{
	int k;

	for (k = 0; k < h->nhosts; k++)
		h->grp2[k] = h->host_rank[k * h->lmax + comm->local_rank];
	*gr = (struct grp){ .comm = comm, .g = h->grp2, .n = h->nhosts, .p = comm->node };
}

/* rail: reduce-scatter in the host, the rails' AllReduces, all-gather in the host. */
static int hier_rail_allreduce(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), seg, off, len, lo, cnt;
	char *out = op->recvbuff, *rtmp = comm->coll->tmp;
	int L = h->lmax, err;
	struct grp host, rail;

	host_grp(comm, h, 0, &host);
	rail_grp(comm, h, &rail);
	seg = (size_t)L * (HIER_SEG / esz);
	if (op->sendbuff != op->recvbuff)
		memcpy(out, op->sendbuff, op->count * esz);
	for (off = 0; off < op->count; off += len) {
		char *buf = out + off * esz, *blk;

		len = op->count - off < seg ? op->count - off : seg;
		err = grp_rs(&host, op, buf, len, rtmp);
		if (err)
			return err;
		block_of(len, L, host.p, &lo, &cnt);
		blk = buf + lo * esz;
		err = grp_rs(&rail, op, blk, cnt, rtmp);
		if (!err)
			err = grp_ag(&rail, esz, blk, cnt);
		if (err)
			return err;
		ccom_reduce_finish(blk, cnt, op->dtype, op->op, comm->nranks);
		err = grp_ag(&host, esz, buf, len);
		if (err)
			return err;
	}
	return 0;
}

/* rab: tree reduce to local index 0, doubling AllReduce of the leaders, tree broadcast. */
static int hier_rab_allreduce(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), per = HIER_SEG / esz, off, cnt;
	char *tmp = comm->coll->tmp;
	struct grp host, lead;
	int err;

	host_grp(comm, h, 0, &host);
	leader_grp(comm, h, 0, h->host_rank[0], &lead);
	for (off = 0; off < op->count; off += cnt) {
		char *out = (char *)op->recvbuff + off * esz;
		const char *in = (const char *)op->sendbuff + off * esz;

		cnt = op->count - off < per ? op->count - off : per;
		err = grp_reduce(&host, op, in, host.p ? tmp + 2 * HIER_SEG : out,
				 tmp + 3 * HIER_SEG, cnt);
		if (!err && lead.p >= 0) {
			err = grp_rd(&lead, op, out, cnt);
			ccom_reduce_finish(out, cnt, op->dtype, op->op, comm->nranks);
		}
		if (!err)
			err = grp_bcast(&host, out, cnt * esz);
		if (err)
			return err;
	}
	return 0;
}

/* Broadcast: tree between the hosts' leaders (the root leads its host), tree in each host. */
static int hier_broadcast(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype), off, len;
	int rhost = comm->rank_to_node[op->root], first, err;
	char *out = op->recvbuff;
	struct grp host, lead;

	first = comm->node == rhost ? comm->rank_to_local[op->root] : 0;
	leader_grp(comm, h, rhost, op->root, &lead);
	host_grp(comm, h, first, &host);
	if (comm->rank == op->root && op->sendbuff != op->recvbuff)
		memcpy(out, op->sendbuff, bytes);
	for (off = 0; off < bytes; off += len) {
		len = bytes - off < HIER_SEG ? bytes - off : HIER_SEG;
		err = lead.p >= 0 ? grp_bcast(&lead, out + off, len) : 0;
		if (!err)
			err = grp_bcast(&host, out + off, len);
		if (err)
			return err;
	}
	return 0;
}

/* Reduce: tree in each host to its leader (the root leads its host), tree between leaders. */
static int hier_reduce(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), per = HIER_SEG / esz, off, cnt;
	int rhost = comm->rank_to_node[op->root], first, err;
	char *tmp = comm->coll->tmp;
	struct grp host, lead;

	first = comm->node == rhost ? comm->rank_to_local[op->root] : 0;
	leader_grp(comm, h, rhost, op->root, &lead);
	host_grp(comm, h, first, &host);
	for (off = 0; off < op->count; off += cnt) {
		const char *in = (const char *)op->sendbuff + off * esz;
		char *res = comm->rank == op->root ? (char *)op->recvbuff + off * esz : NULL;
		char *part = host.p ? tmp : tmp + 2 * HIER_SEG;

		cnt = op->count - off < per ? op->count - off : per;
		/* A leader other than the root keeps its host's partial in slot 2, the root in its output. */
		if (res)
			part = res;
		err = grp_reduce(&host, op, in, part, tmp + HIER_SEG, cnt);
		if (!err && lead.p >= 0)
			err = grp_reduce(&lead, op, part, res ? res : tmp, tmp + HIER_SEG, cnt);
		if (err)
			return err;
		if (res)
			ccom_reduce_finish(res, cnt, op->dtype, op->op, comm->nranks);
	}
	return 0;
}

/*
 * AllGather by rails: a ring all-gather of the rail (this rank gets the
 * blocks of local index l of every host, H - 1 network steps), then a
 * ring all-gather in the host whose block of position j is the H blocks
 * of local index j (L - 1 shm steps of H blocks).  No scratch: blocks go
 * from the output to the output.
 */
static int hier_rail_allgather(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);
	int H = h->nhosts, L = h->lmax, k, i, nx, sj, rj, err;
	char *out = op->recvbuff;
	struct ccom_xfer *x;
	struct grp host, rail;

	if (out + (size_t)comm->rank * b != op->sendbuff)
		memcpy(out + (size_t)comm->rank * b, op->sendbuff, b);
	rail_grp(comm, h, &rail);
	for (k = 0; k < H - 1; k++) {
		int s = rail.g[mod(rail.p - k, H)], r = rail.g[mod(rail.p - k - 1, H)];
		struct ccom_xfer x2[2] = {
			{ .conn = grp_conn(&rail, rail.p + 1), .is_send = true,
			  .buf = out + (size_t)s * b, .size = b },
			{ .conn = grp_conn(&rail, rail.p - 1), .buf = out + (size_t)r * b, .size = b },
		};
		err = ccom_xfer_run(comm, x2, 2);
		if (err)
			return err;
	}
	host_grp(comm, h, 0, &host);
	x = calloc(2 * (size_t)H, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (k = 0, err = 0; k < L - 1 && !err; k++) {
		sj = mod(host.p - k, L);
		rj = mod(host.p - k - 1, L);
		for (i = 0, nx = 0; i < H; i++) {
			x[nx++] = (struct ccom_xfer){ .conn = grp_conn(&host, host.p + 1), .is_send = true,
						      .buf = out + (size_t)h->host_rank[i * L + sj] * b,
						      .size = b };
			x[nx++] = (struct ccom_xfer){ .conn = grp_conn(&host, host.p - 1),
						      .buf = out + (size_t)h->host_rank[i * L + rj] * b,
						      .size = b };
		}
		err = ccom_xfer_run(comm, x, nx);
	}
	free(x);
	return err;
}

/*
 * One piece [off, off + len) of every block of a ReduceScatter by rails.
 * In the host, a ring reduce-scatter whose block of position j is the H
 * pieces of the ranks of local index j (L - 1 shm steps): afterwards @acc
 * holds this host's sums of the pieces of this rank's rail, in host
 * order; then a ring reduce-scatter of the rail over them (H - 1 network
 * steps) leaves this rank's own piece, finished into the output.
 */
static int hier_rail_rs_piece(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op,
			      struct ccom_xfer *x, size_t off, size_t len, char *bufs)
{
	size_t esz = ccom_dtype_size(op->dtype), pb = len * esz, vb = (size_t)h->nhosts * pb;
	const char *in = (const char *)op->sendbuff + off * esz;
	char *acc = bufs, *acc2 = bufs + vb, *rtmp = bufs + 2 * vb, *swap;
	int H = h->nhosts, L = h->lmax, k, i, nx, sj, rj, err;
	struct grp host, rail;

	host_grp(comm, h, 0, &host);
	for (k = 0; k < L - 1; k++) {
		sj = mod(host.p - k - 1, L);
		rj = mod(host.p - k - 2, L);
		for (i = 0, nx = 0; i < H; i++) {
			x[nx++] = (struct ccom_xfer){ .conn = grp_conn(&host, host.p + 1), .is_send = true,
						      .buf = k ? acc + (size_t)i * pb : (char *)in +
							 (size_t)h->host_rank[i * L + sj] * op->count * esz,
						      .size = pb };
			x[nx++] = (struct ccom_xfer){ .conn = grp_conn(&host, host.p - 1),
						      .buf = rtmp + (size_t)i * pb, .size = pb,
						      .red_dst = acc2 + (size_t)i * pb,
						      .red_src = in + (size_t)h->host_rank[i * L + rj] *
								      op->count * esz,
						      .red_op = op };
		}
		err = ccom_xfer_run(comm, x, nx);
		if (err)
			return err;
		swap = acc;
		acc = acc2;
		acc2 = swap;
	}
	rail_grp(comm, h, &rail);
	err = grp_rs(&rail, op, acc, (size_t)H * len, rtmp);
	if (err)
		return err;
	memcpy((char *)op->recvbuff + off * esz, acc + (size_t)rail.p * pb, pb);
	ccom_reduce_finish((char *)op->recvbuff + off * esz, len, op->dtype, op->op, comm->nranks);
	return 0;
}

static int hier_rail_reducescatter(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), off, len, per;
	struct ccom_xfer *x;
	int err = 0;

	/* Three buffers of H pieces in the scratch: acc, acc2 and the receive buffer. */
	per = 4 * (size_t)HIER_SEG / (3 * (size_t)h->nhosts) / esz;
	per = per ? per : 1;
	x = calloc(2 * (size_t)h->nhosts, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (off = 0; off < op->count && !err; off += len) {
		len = op->count - off < per ? op->count - off : per;
		err = hier_rail_rs_piece(comm, h, op, x, off, len, comm->coll->tmp);
	}
	free(x);
	return err;
}

int ccom_hier_run(struct ccomComm *comm, struct ccom_op *op, int algo)
{
	struct ccom_hier *h;

	if (comm->coll->tmp_size < 4 * (size_t)HIER_SEG)
		return ccom_ring_run(comm, op);
	h = ccom_hier_get(comm);
	if (!h) {
		ccom_set_last_error("rank %d: out of memory for the hierarchical layout (%d hosts); free memory or set CCOM_ALGO=ring",
				    comm->rank, comm->nnodes);
		return -ENOMEM;
	}
	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
		return algo == CCOM_ALGO_RAIL ? hier_rail_allreduce(comm, h, op)
					      : hier_rab_allreduce(comm, h, op);
	case CCOM_COLL_BROADCAST:
		return hier_broadcast(comm, h, op);
	case CCOM_COLL_REDUCE:
		return hier_reduce(comm, h, op);
	case CCOM_COLL_ALLGATHER:
		return algo == CCOM_ALGO_RAIL ? hier_rail_allgather(comm, h, op) : ccom_ring_run(comm, op);
	case CCOM_COLL_REDUCESCATTER:
		return algo == CCOM_ALGO_RAIL ? hier_rail_reducescatter(comm, h, op)
					      : ccom_ring_run(comm, op);
	case CCOM_COLL_ALLTOALL:
		return algo == CCOM_ALGO_HOSTPAIR ? ccom_hier_alltoall(comm, h, op)
						  : ccom_ring_run(comm, op);
	default:
		return ccom_ring_run(comm, op);
	}
}
