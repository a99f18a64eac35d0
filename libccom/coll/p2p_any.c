// SPDX-License-Identifier: MIT
/*
 * p2p_any.c - ccomRecvAny: a receive from whichever peer sends first
 * (MPI_ANY_SOURCE, gloo's recvAnysource), over the streams of p2p.c.
 *
 * A rank's operations run in issue order, so when this receive runs the
 * head of each peer's incoming stream is the start of that peer's next
 * message to this rank, or nothing yet.  The receive reads the first
 * bytes of every stream without consuming them (ccom_xfer_peek()) and
 * matches the first peer, in round-robin order, whose head is a complete
 * p2p header (coll/p2p.h) carrying that peer's rank and the number of the
 * send this rank expects from it next.  Any other head is a collective's
 * bytes (on a network stream its signature, whose magic differs) and
 * stays where it is for the operation that reads it; that peer cannot
 * match this receive.  The data then moves as for ccomRecv() from the
 * matched peer (the engine or the transport, decided the same way on both
 * sides: coll/p2p.c).  The wait honours abort, CCOM_OP_TIMEOUT and dead
 * peers.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/p2p.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/conn.h"
#include "proxy/wait.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "util/err.h"

_Static_assert(sizeof(struct ccom_p2p_hdr) <= CCOM_XFER_AHEAD_BYTES,
	       "a p2p header fits in a stream's read-ahead");

/* A sleep on one stream once spinning and yielding found nothing. */
#define ANY_SLEEP_US 200

/* Why a peer cannot match this receive. */
enum any_state { ANY_MAY, ANY_COLL, ANY_GONE };

/*
 * Look at the head of @p's stream: 1 and *@h when it is @p's next send to
 * this rank, 0 when it is not (yet), -errno when the stream failed.
 * *@st says when that peer cannot match: the head is something else, or
 * its stream ended (a peer that destroyed its communicator after its last
 * send: the others may still send).
 */
static int any_look(struct ccomComm *comm, int p, struct ccom_p2p_hdr *h, char *st)
{
	struct ccom_transport_conn *c = comm->coll->conns[p];
	ssize_t r;

	r = ccom_xfer_peek(c, h, sizeof(*h));
	if (r == -ECONNRESET || r == -EPIPE) {
		*st = ANY_GONE;
		return 0;
	}
	if (r < 0)
		return (int)r;
	if (r >= (ssize_t)sizeof(h->magic) && h->magic != CCOM_P2P_MAGIC) {
		*st = ANY_COLL;
		return 0;
	}
	if (r < (ssize_t)sizeof(*h))
		return 0;
	if (h->from != p || h->seq != c->p2p_rx + 1) {
		*st = ANY_COLL;	/* the magic, but not the header this stream must carry next */
		return 0;
	}
	return 1;
}

/*
 * One pass over the peers from the round robin's position.  Returns the
 * matched peer, -1 when none, or -errno - 1.  *@sleep_on: a peer that may
 * still match (to sleep on), -1 if none.
 */
static int any_pass(struct ccomComm *comm, struct ccom_p2p_hdr *h, char *other, int *sleep_on,
		    unsigned int turn)
{
	int k, p, r, n = comm->nranks, nwait = 0, first = -1;

	*sleep_on = -1;
	for (k = 0; k < n; k++) {
		p = (comm->coll->p2p_any_next + k) % n;
		if (p == comm->rank || !comm->coll->conns[p] || other[p])
			continue;
		r = any_look(comm, p, h, &other[p]);
		if (r < 0)
			return r - 1;
		if (r)
			return p;
		if (other[p])
			continue;
		if (first < 0)
			first = p;
		if ((unsigned int)nwait++ == turn % (unsigned int)n)
			*sleep_on = p;	/* the sleeps rotate over the peers that may match */
	}
	if (*sleep_on < 0)
		*sleep_on = first;
	return -1;
}

/* No peer can match any more: the error that says why. */
static int any_none(struct ccomComm *comm, const char *st)
{
	int p;

	for (p = 0; p < comm->nranks; p++)
		if (st[p] == ANY_GONE) {
			ccom_set_last_error("rank %d: ccomRecvAny cannot match: the stream of peer rank %d ended (it destroyed its communicator, aborted or died) and every other peer's next message to this rank is a collective's or its stream ended too",
					    comm->rank, p);
			return -ECONNRESET;
		}
	ccom_set_last_error("rank %d: ccomRecvAny cannot match: the next message of every peer to this rank is a collective's, not a send; issue the sends before those collectives, or the collectives first here",
			    comm->rank);
	return -EPERM;
}

/* Wait until some peer's next message to this rank is a send; its rank or -errno. */
static int any_match(struct ccomComm *comm, struct ccom_p2p_hdr *h)
{
	struct ccom_transport_conn **conns = comm->coll->conns;
	unsigned int spin, yield, idle = 0;
	struct ccom_wait w;
	int peer, sleep_on, err = 0;
	char *other;

	other = calloc((size_t)comm->nranks, sizeof(*other));
	if (!other)
		return -ENOMEM;
	ccom_wait_begin(&w, comm);
	spin = ccom_wait_spins(&w);
	yield = spin + ccom_wait_yields(&w);
	for (;;) {
		peer = any_pass(comm, h, other, &sleep_on, idle);
		if (peer != -1)
			break;
		if (sleep_on < 0) {
			err = any_none(comm, other);
			break;
		}
		idle++;
		if ((idle & 255) == 0 || idle > yield) {
			err = ccom_wait_check(&w);
			if (err)
				break;
		}
		if (idle < spin)
			__builtin_ia32_pause();
		else if (idle < yield)
			sched_yield();
		else
			conns[sleep_on]->ops->wait(conns[sleep_on], CCOM_TRANSPORT_WAIT_RECV,
						   ANY_SLEEP_US);
	}
	ccom_wait_end(&w);
	free(other);
	if (err)
		return err;
	return peer < 0 ? peer + 1 : peer;
}

int ccom_p2p_any_match(struct ccomComm *comm, struct ccom_op *op, struct ccom_p2p_hdr *h)
{
	struct ccom_transport_conn *c;
	int peer;

	peer = any_match(comm, h);
	if (peer < 0)
		return peer;
	c = comm->coll->conns[peer];
	ccom_xfer_peek_take(c, sizeof(*h));
	c->p2p_rx++;
	comm->coll->p2p_any_next = (peer + 1) % comm->nranks;
	op->root = peer;
	*op->any_peer = peer;
	return 0;
}
