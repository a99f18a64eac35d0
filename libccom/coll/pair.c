// SPDX-License-Identifier: MIT
/*
 * pair.c - AllReduce of exactly two ranks over a transport (coll/ layer):
 * what ring.c runs when nranks == 2 (two hosts joined by TCP, or forced
 * with CCOM_ALGO=ring).
 *
 * It is the ring's reduce-scatter + all-gather, but as one full-duplex,
 * pipelined stream per direction instead of two lock-step exchanges:
 *
 *   out stream:  [ my input's peer half ][ my half, reduced          ]
 *   in stream:   [ peer input, my half  ][ peer half, reduced        ]
 *
 * The peer-half of the input goes out straight from the user's buffer (no
 * copy).  The peer's copy of my half arrives into a small ring in
 * cs->tmp and is reduced into my half of the output as it arrives; each
 * reduced piece may leave at once, so the second part of the out stream
 * starts while the first part of the in stream is still arriving, and the
 * peer's reduced half lands straight in the output.  Per direction the
 * wire carries the vector once, the CPU reduces half of it once, and no
 * pass waits for a whole phase to end.
 *
 * In place (sendbuff == recvbuff) is safe: the reduced peer half that
 * arrives at offset j of the output was computed from our byte j, which
 * had already been sent (copied into the transport) before the peer could
 * reduce it.
 *
 * Waiting follows ccom_xfer_run(): transports with idle_passes sleep in
 * ->wait() after that many idle passes (net_socket spins inside its own
 * wait first), the others spin, yield and then wait.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/wait.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/shm.h"
#include "transport/transport.h"

/* Bytes of cs->tmp used as the receive ring of the peer's copy of my half. */
#define PAIR_RING (1u << 20)
/* Reduce at least this much at a time (or what is left): fewer, longer kernel calls. */
#define PAIR_REDUCE_MIN (16u << 10)

struct pair {
	struct ccom_transport_conn *conn;
	const struct ccom_op *op;
	size_t esz;
	/* Out stream: part A (input, peer half) then part B (output, my half, reduced). */
	const char *sa;
	size_t sa_len, sa_done;
	const char *sb;
	size_t sb_done;
	/* In stream: part A (into the ring, reduced into my half) then part B (peer half). */
	size_t ra_len, ra_done, red_done;
	char *ring;
	size_t ring_size;
	const char *red_src;		/* my half of the input */
	char *red_dst;			/* my half of the output */
	char *rb;
	size_t rb_len, rb_done;
};

/* Reduce what arrived in the ring (whole elements; at least @min bytes unless all came). */
static void pair_reduce(struct pair *p, size_t min)
{
	size_t upto = p->ra_done - p->ra_done % p->esz;

	if (upto - p->red_done < min && upto < p->ra_len)
		return;
	while (p->red_done < upto) {
		size_t at = p->red_done % p->ring_size;
		size_t n = upto - p->red_done < p->ring_size - at ? upto - p->red_done :
			   p->ring_size - at;

		ccom_reduce2(p->red_dst + p->red_done, p->red_src + p->red_done, p->ring + at,
			     n / p->esz, p->op->dtype, p->op->op);
		ccom_reduce_finish(p->red_dst + p->red_done, n / p->esz, p->op->dtype, p->op->op, 2);
		p->red_done += n;
	}
}

/* One send call of [*done, end) of @buf.  0 or -errno. */
static ssize_t pair_send(struct ccom_transport_conn *c, const char *buf, size_t *done, size_t end,
			 bool *progress, int *dir)
{
	ssize_t r = ccom_xfer_send(c, buf + *done, end - *done);

	if (r < 0)
		return r;
	*done += (size_t)r;
	*progress |= r > 0;
	if (*done < end)
		*dir |= ccom_xfer_send_wait_dir(c);
	return 0;
}

/* Move what can move now: one send and one receive call at most.  0 or -errno. */
static int pair_pass(struct pair *p, bool *progress, int *dir)
{
	struct ccom_transport_conn *c = p->conn;
	ssize_t r;

	*dir = 0;
	if (p->sa_done < p->sa_len)
		r = pair_send(c, p->sa, &p->sa_done, p->sa_len, progress, dir);
	else if (p->sb_done < p->red_done)
		r = pair_send(c, p->sb, &p->sb_done, p->red_done, progress, dir);
	else
		r = 0;
	if (r < 0)
		return (int)r;
	if (p->ra_done < p->ra_len) {
		size_t at = p->ra_done % p->ring_size;
		size_t room = p->ring_size - (p->ra_done - p->red_done);
		size_t n = p->ra_len - p->ra_done;

		if (n > room)
			n = room;
		if (n > p->ring_size - at)
			n = p->ring_size - at;
		r = n ? ccom_xfer_recv(c, p->ring + at, n) : 0;
		if (r < 0)
			return (int)r;
		p->ra_done += (size_t)r;
		*progress |= r > 0;
		/* A full ring must be drained even below the minimum piece. */
		pair_reduce(p, (size_t)r == n && n == room ? 0 : PAIR_REDUCE_MIN);
		if (p->ra_done < p->ra_len)
			*dir |= CCOM_TRANSPORT_WAIT_RECV;
	} else if (p->rb_done < p->rb_len) {
		r = ccom_xfer_recv(c, p->rb + p->rb_done, p->rb_len - p->rb_done);
		if (r < 0)
			return (int)r;
		p->rb_done += (size_t)r;
		*progress |= r > 0;
		if (p->rb_done < p->rb_len)
			*dir |= CCOM_TRANSPORT_WAIT_RECV;
	}
	return 0;
}

static bool pair_done(const struct pair *p)
{
	return p->sa_done == p->sa_len && p->sb_done == p->ra_len && p->ra_done == p->ra_len &&
	       p->red_done == p->ra_len && p->rb_done == p->rb_len;
}

static int pair_run(struct ccomComm *comm, struct pair *p)
{
	const struct ccom_transport_ops *ops = p->conn->ops;
	unsigned int spin, yield, idle = 0;
	struct ccom_wait w;
	bool progress;
	int dir = 0, err = 0;

	ccom_wait_begin(&w, comm);
	/* The wait policy's spin/yield limits (the host segment's, if any). */
	spin = ccom_wait_spins(&w);
	yield = spin + ccom_wait_yields(&w);
	while (!pair_done(p)) {
		progress = false;
		err = pair_pass(p, &progress, &dir);
		if (err)
			break;
		if (progress) {
			idle = 0;
			continue;
		}
		/* Nothing moved: what arrived below the minimum piece may unblock the peer. */
		if (p->red_done < p->ra_done - p->ra_done % p->esz) {
			pair_reduce(p, 0);
			continue;
		}
		idle++;
		if ((idle & 255) == 0 || idle > yield) {
			err = ccom_wait_check(&w);
			if (err)
				break;
		}
		if (!dir)
			continue;
		if (ops->idle_passes && idle > ops->idle_passes)
			err = ops->wait(p->conn, dir, 1000);
		else if (idle < spin)
			__builtin_ia32_pause();
		else if (idle < yield)
			sched_yield();
		else
			err = ops->wait(p->conn, dir, 1000);
		if (err)
			break;
	}
	ccom_wait_end(&w);
	return err;
}

int ccom_pair_allreduce(struct ccomComm *comm, struct ccom_op *op, struct ccom_transport_conn *peer,
			int pos)
{
	struct ccom_coll_state *cs = comm->coll;
	size_t esz = ccom_dtype_size(op->dtype), half = op->count / 2;
	/* Position 0 owns the first half, position 1 the rest (the ring's blocks). */
	size_t my_lo = pos ? half : 0, my_n = pos ? op->count - half : half;
	size_t peer_lo = pos ? 0 : half, peer_n = op->count - my_n;
	struct pair p = {
		.conn = peer, .op = op, .esz = esz,
		.sa = (const char *)op->sendbuff + peer_lo * esz, .sa_len = peer_n * esz,
		.sb = (const char *)op->recvbuff + my_lo * esz,
		.ra_len = my_n * esz,
		.ring = cs->tmp, .ring_size = cs->tmp_size < PAIR_RING ? cs->tmp_size : PAIR_RING,
		.red_src = (const char *)op->sendbuff + my_lo * esz,
		.red_dst = (char *)op->recvbuff + my_lo * esz,
		.rb = (char *)op->recvbuff + peer_lo * esz, .rb_len = peer_n * esz,
	};

	p.ring_size -= p.ring_size % 64;
	return pair_run(comm, &p);
}
