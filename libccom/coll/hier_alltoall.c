// SPDX-License-Identifier: MIT
/*
 * hier_alltoall.c - AlltoAll aggregated per host pair (coll/ layer,
 * CCOM_ALGO=hostpair): the flat AlltoAll sends L_A * L_B messages of b
 * bytes between hosts A and B each way; this one sends one message of
 * L_A * L_B * b, so the network latency is paid once per host pair and
 * the bytes that cross hosts stay the same.
 *
 * For each ordered pair of hosts (A, B) one rank of A is the agent: local
 * index (((B - A) mod H) - 1) mod L_A, which spreads the H - 1 remote hosts
 * over A's ranks.  Per piece [off, off + len) of every block (the pieces
 * keep an agent's two staging buffers per remote host within 4 MiB):
 *
 *   1 gather   every rank of A sends the pieces of its L_B blocks for the
 *              ranks of B to A's agent for B (shm), which stages them as
 *              [sender i][receiver j]; the intra-host blocks go in this
 *              step too, whole, once (first piece only)
 *   2 exchange each agent swaps its staging buffer, L_A * L_B pieces,
 *              with the agent of B for A (one TCP message each way)
 *   3 scatter  the agent sends each local rank j the L_B pieces addressed
 *              to it (shm), which land in the output at their senders'
 *              positions
 *
 * Three steps per piece (2 shm, 1 network) against the flat exchange's one
 * step of n - 1 messages; a host's link carries L_A * (n - L_A) * b each
 * way in both.  Every layout works, uneven ones included (3 + 1): each
 * pair uses its own L_A and L_B.  No reduction, so the results are the
 * flat AlltoAll's bit for bit.
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
#include "util/err.h"

/* Staging bytes per piece (both buffers of every remote host an agent serves); fits coll/'s scratch. */
#define A2A_STAGE (4u << 20)

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

/* Local index on host @a of the rank that carries @a's blocks for host @b. */
static int agent_of(const struct ccom_hier *h, int a, int b)
{
	return (mod(b - a, h->nhosts) - 1) % h->nlocal[a];
}

struct a2a {
	struct ccomComm *comm;
	const struct ccom_hier *h;
	const char *in;		/* every rank's input: block q at q * b */
	char *out;
	size_t b, slot;		/* block bytes; one staging buffer (lmax^2 pieces) */
	struct ccom_xfer *x;
	int nx;
};

static int rank_at(const struct a2a *a, int host, int l)
{
	return a->h->host_rank[host * a->h->lmax + l];
}

static void add(struct a2a *a, int peer, bool send, const char *buf, size_t size)
{
	if (!size)
		return;
	a->x[a->nx++] = (struct ccom_xfer){ .conn = a->comm->coll->conns[peer], .is_send = send,
					    .buf = (char *)buf, .size = size };
}

/* Staging buffers of the s-th remote host this rank serves: outgoing and incoming. */
static char *stage_out(const struct a2a *a, int s)
{
	return (char *)a->comm->coll->tmp + (size_t)s * 2 * a->slot;
}

static char *stage_in(const struct a2a *a, int s)
{
	return stage_out(a, s) + a->slot;
}

/* Step 1 of piece [po, po + pb) (bytes of every block), with the intra-host blocks when @first. */
static int a2a_gather(struct a2a *a, size_t po, size_t pb, bool first)
{
	const struct ccom_hier *h = a->h;
	int A = a->comm->node, me = a->comm->local_rank, nA = h->nlocal[A], H = h->nhosts;
	int k, i, j, s = 0;

	a->nx = 0;
	for (i = 0; first && i < nA; i++) {
		int q = rank_at(a, A, i);

		if (i == me)
			continue;
		add(a, q, true, a->in + (size_t)q * a->b, a->b);
		add(a, q, false, a->out + (size_t)q * a->b, a->b);
	}
	for (k = 1; k < H; k++) {
		int B = (A + k) % H, nB = h->nlocal[B], ag = agent_of(h, A, B);

		if (ag != me) {
			for (j = 0; j < nB; j++)
				add(a, rank_at(a, A, ag), true,
				    a->in + (size_t)rank_at(a, B, j) * a->b + po, pb);
			continue;
		}
		for (i = 0; i < nA; i++)
			for (j = 0; j < nB; j++) {
				char *dst = stage_out(a, s) + ((size_t)i * nB + j) * pb;

				if (i == me)
					memcpy(dst, a->in + (size_t)rank_at(a, B, j) * a->b + po, pb);
				else
					add(a, rank_at(a, A, i), false, dst, pb);
			}
		s++;
	}
	return a->nx ? ccom_xfer_run(a->comm, a->x, a->nx) : 0;
}

/* Step 2: every agent swaps its staging buffer with its partner agent. */
static int a2a_exchange(struct a2a *a, size_t pb)
{
	const struct ccom_hier *h = a->h;
	int A = a->comm->node, me = a->comm->local_rank, H = h->nhosts, k, s = 0;
	size_t sz;

	a->nx = 0;
	for (k = 1; k < H; k++) {
		int B = (A + k) % H, peer;

		if (agent_of(h, A, B) != me)
			continue;
		peer = rank_at(a, B, agent_of(h, B, A));
		sz = (size_t)h->nlocal[A] * (size_t)h->nlocal[B] * pb;
		add(a, peer, true, stage_out(a, s), sz);
		add(a, peer, false, stage_in(a, s), sz);
		s++;
	}
	return a->nx ? ccom_xfer_run(a->comm, a->x, a->nx) : 0;
}

/* Step 3: the pieces B's ranks sent to local index j go from the staging to j's output. */
static int a2a_scatter(struct a2a *a, size_t po, size_t pb)
{
	const struct ccom_hier *h = a->h;
	int A = a->comm->node, me = a->comm->local_rank, nA = h->nlocal[A], H = h->nhosts;
	int k, i, j, s = 0;

	a->nx = 0;
	for (k = 1; k < H; k++) {
		int B = (A + k) % H, nB = h->nlocal[B], ag = agent_of(h, A, B);

		if (ag != me) {
			for (i = 0; i < nB; i++)
				add(a, rank_at(a, A, ag), false,
				    a->out + (size_t)rank_at(a, B, i) * a->b + po, pb);
			continue;
		}
		/* B staged [its sender i][our receiver j]. */
		for (j = 0; j < nA; j++)
			for (i = 0; i < nB; i++) {
				const char *src = stage_in(a, s) + ((size_t)i * nA + j) * pb;

				if (j == me)
					memcpy(a->out + (size_t)rank_at(a, B, i) * a->b + po, src, pb);
				else
					add(a, rank_at(a, A, j), true, src, pb);
			}
		s++;
	}
	return a->nx ? ccom_xfer_run(a->comm, a->x, a->nx) : 0;
}

int ccom_hier_alltoall(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op)
{
	size_t esz = ccom_dtype_size(op->dtype), per, off, len;
	int H = h->nhosts, lmin = h->lmax, nserve, r, err = 0;
	char *copy = NULL;
	struct a2a a = { .comm = comm, .h = h, .in = op->sendbuff, .out = op->recvbuff,
			 .b = op->count * esz };

	for (r = 0; r < H; r++)
		lmin = h->nlocal[r] < lmin ? h->nlocal[r] : lmin;
	/* The most remote hosts one agent serves, the same on every rank: the pieces agree. */
	nserve = (H - 1 + lmin - 1) / lmin;
	per = A2A_STAGE / (2 * (size_t)nserve * (size_t)h->lmax * (size_t)h->lmax * esz);
	per = per ? per : 1;
	a.slot = (size_t)h->lmax * (size_t)h->lmax * per * esz;
	if (2 * (size_t)nserve * a.slot > comm->coll->tmp_size) {
		ccom_set_last_error("rank %d: hierarchical AlltoAll needs %zu bytes of scratch, coll/ has %zu; set CCOM_ALGO=ring",
				    comm->rank, 2 * (size_t)nserve * a.slot, comm->coll->tmp_size);
		return -ENOMEM;
	}
	a.x = calloc((size_t)H * (size_t)h->lmax * (size_t)(h->lmax + 1) + 2 * (size_t)(h->lmax + H),
		     sizeof(*a.x));
	if (!a.x)
		goto nomem;
	if (op->sendbuff == op->recvbuff && comm->nranks > 1) {
		copy = malloc(a.b * (size_t)comm->nranks);
		if (!copy)
			goto nomem;
		memcpy(copy, op->sendbuff, a.b * (size_t)comm->nranks);
		a.in = copy;
	}
	memmove(a.out + (size_t)comm->rank * a.b, a.in + (size_t)comm->rank * a.b, a.b);
	for (off = 0; !err && (off < op->count || off == 0); off += len) {
		len = op->count - off < per ? op->count - off : per;
		err = a2a_gather(&a, off * esz, len * esz, off == 0);
		if (!err && len)
			err = a2a_exchange(&a, len * esz);
		if (!err && len)
			err = a2a_scatter(&a, off * esz, len * esz);
		if (!len)
			break;
	}
	free(copy);
	free(a.x);
	return err;
nomem:
	free(a.x);
	ccom_set_last_error("rank %d: out of memory for the hierarchical AlltoAll (%d ranks); free memory or set CCOM_ALGO=ring",
			    comm->rank, comm->nranks);
	return -ENOMEM;
}
