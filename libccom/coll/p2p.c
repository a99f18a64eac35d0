// SPDX-License-Identifier: MIT
/*
 * p2p.c - transfers over the transport vtable (coll/ layer): the progress
 * loop every transport-based algorithm uses (ccom_xfer_run), and grouped
 * point-to-point send/recv.
 *
 * ccom_xfer_run() drives a set of sends and receives concurrently: on each
 * (connection, direction) only the first unfinished transfer moves (the
 * streams are ordered), all others make progress at the same time, so
 * the sends and receives of a group never deadlock on full buffers.
 *
 * Each p2p message carries an 8-byte header with its size, so a send and
 * a receive of different sizes fail with a message instead of corrupting
 * the stream.  Once sizes agree, transfers between ranks of one host that
 * kdev/p2p.c takes (ccom_kdev_p2p_wants(), the same answer on both sides)
 * run on the nccom engine first, single copy between the user buffers;
 * the rest follows here on the transports.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/reduce.h"
#include "init/comm.h"
#include "kdev/kdev.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "util/err.h"

/* Is an earlier transfer on the same conn and direction still unfinished? */
static bool blocked_behind(struct ccom_xfer *x, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (x[j].conn == x[i].conn && x[j].is_send == x[i].is_send && x[j].done < x[j].size)
			return true;
	return false;
}

/* Reduce the whole elements that arrived since the last call (streaming). */
static void xfer_reduce(struct ccom_xfer *x)
{
	size_t esz = ccom_dtype_size(x->red_op->dtype);
	size_t upto = x->done - x->done % esz, n = (upto - x->red_done) / esz;

	if (!n)
		return;
	ccom_reduce2(x->red_dst + x->red_done, x->red_src + x->red_done, x->buf + x->red_done, n,
		     x->red_op->dtype, x->red_op->op);
	x->red_done = upto;
}

static int xfer_step(struct ccom_xfer *x, bool *progress)
{
	ssize_t r;

	if (x->is_send)
		r = x->conn->ops->send(x->conn, x->buf + x->done, x->size - x->done);
	else
		r = x->conn->ops->recv(x->conn, x->buf + x->done, x->size - x->done);
	if (r < 0)
		return (int)r;
	if (r > 0)
		*progress = true;
	x->done += (size_t)r;
	if (x->red_dst && r > 0)
		xfer_reduce(x);
	return 0;
}

/* One pass over every transfer.  Returns 1 when all are done, 0, or -errno. */
static int xfer_pass(struct ccom_xfer *x, int n, bool *progress, int *stuck)
{
	bool all = true;
	int i, err;

	for (i = 0; i < n; i++) {
		if (x[i].done >= x[i].size)
			continue;
		all = false;
		if (blocked_behind(x, i))
			continue;
		err = xfer_step(&x[i], progress);
		if (err)
			return err;
		if (x[i].done < x[i].size)
			*stuck = i;
	}
	return all ? 1 : 0;
}

int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n)
{
	struct ccom_coll_state *cs = comm->coll;
	/* Same policy as ccom_wait_shm(): the host segment's spin/yield limits. */
	unsigned int spin = cs->shm ? (unsigned int)cs->shm->spin_limit : 300;
	unsigned int yield = spin + (cs->shm ? (unsigned int)cs->shm->yield_limit : 0);
	unsigned int idle = 0;
	struct ccom_wait w;
	bool progress;
	int stuck = -1, r;

	ccom_wait_begin(&w, comm, cs->shm);
	for (;;) {
		progress = false;
		r = xfer_pass(x, n, &progress, &stuck);
		if (r)
			break;
		if (progress) {
			idle = 0;
			continue;
		}
		idle++;
		if ((idle & 255) == 0 || idle > yield) {
			r = ccom_wait_check(&w);
			if (r)
				break;
		}
		if (stuck >= 0 && x[stuck].conn->ops->idle_passes &&
		    idle > x[stuck].conn->ops->idle_passes)
			x[stuck].conn->ops->wait(x[stuck].conn, x[stuck].is_send ?
						 CCOM_TRANSPORT_WAIT_SEND : CCOM_TRANSPORT_WAIT_RECV, 1000);
		else if (idle < spin)
			__builtin_ia32_pause();
		else if (idle < yield)
			sched_yield();
		else if (stuck >= 0)
			x[stuck].conn->ops->wait(x[stuck].conn, x[stuck].is_send ?
						 CCOM_TRANSPORT_WAIT_SEND : CCOM_TRANSPORT_WAIT_RECV, 1000);
	}
	ccom_wait_end(&w);
	return r < 0 ? r : 0;
}

/* Self send/recv: the k-th send to self feeds the k-th receive from self. */
static int p2p_self(struct ccomComm *comm, struct ccom_op *ops, int nops)
{
	int i, j = 0;
	size_t sz;

	for (i = 0; i < nops; i++) {
		if (ops[i].kind != CCOM_COLL_SEND || ops[i].root != comm->rank)
			continue;
		while (j < nops && !(ops[j].kind == CCOM_COLL_RECV && ops[j].root == comm->rank))
			j++;
		if (j == nops || ops[j].count != ops[i].count || ops[j].dtype != ops[i].dtype) {
			ccom_set_last_error("rank %d: a send to self has no matching receive from self of the same count and type in its group",
					    comm->rank);
			return -EINVAL;
		}
		sz = ops[i].count * ccom_dtype_size(ops[i].dtype);
		if (ops[j].recvbuff != ops[i].sendbuff)
			memmove(ops[j].recvbuff, ops[i].sendbuff, sz);
		j++;
	}
	for (i = 0, j = 0; i < nops; i++)
		if (ops[i].root == comm->rank)
			j += ops[i].kind == CCOM_COLL_SEND ? 1 : -1;
	if (j != 0) {
		ccom_set_last_error("rank %d: a receive from self has no matching send to self in its group",
				    comm->rank);
		return -EINVAL;
	}
	return 0;
}

static int p2p_check_headers(struct ccomComm *comm, struct ccom_op *ops, int nops, uint64_t *hdr)
{
	int i;

	for (i = 0; i < nops; i++) {
		size_t want = ops[i].count * ccom_dtype_size(ops[i].dtype);

		if (ops[i].kind == CCOM_COLL_RECV && ops[i].root != comm->rank && hdr[i] != want) {
			ccom_set_last_error("rank %d: peer %d sent %llu bytes but the matching ccomRecv expects %zu; counts and types of matching send/recv must agree",
					    comm->rank, ops[i].root, (unsigned long long)hdr[i], want);
			return -EINVAL;
		}
	}
	return 0;
}

int ccom_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_xfer *x;
	uint64_t *hdr;
	bool *done;
	int i, n = 0, err;

	if (nops <= 0)
		return 0;
	err = p2p_self(comm, ops, nops);
	if (err)
		return err;
	x = calloc((size_t)nops * 2, sizeof(*x));
	hdr = calloc((size_t)nops, sizeof(*hdr));
	done = calloc((size_t)nops, sizeof(*done));
	if (!x || !hdr || !done) {
		free(x);
		free(hdr);
		free(done);
		return -ENOMEM;
	}
	/* Headers first (in their own pass: a data receive needs its size checked). */
	for (i = 0; i < nops; i++) {
		if (ops[i].root == comm->rank)
			continue;
		hdr[i] = ops[i].count * ccom_dtype_size(ops[i].dtype);
		x[n++] = (struct ccom_xfer){ .conn = cs->conns[ops[i].root],
					     .is_send = ops[i].kind == CCOM_COLL_SEND,
					     .buf = (char *)&hdr[i], .size = sizeof(hdr[i]) };
	}
	err = ccom_xfer_run(comm, x, n);
	if (!err)
		err = p2p_check_headers(comm, ops, nops, hdr);
	if (!err && cs->kdev)
		err = ccom_kdev_p2p_run(comm, ops, nops, done);
	n = 0;
	for (i = 0; !err && i < nops; i++) {
		if (ops[i].root == comm->rank || done[i])
			continue;
		x[n++] = (struct ccom_xfer){ .conn = cs->conns[ops[i].root],
					     .is_send = ops[i].kind == CCOM_COLL_SEND,
					     .buf = ops[i].kind == CCOM_COLL_SEND ?
						    (char *)ops[i].sendbuff : ops[i].recvbuff,
					     .size = hdr[i] };
	}
	if (!err)
		err = ccom_xfer_run(comm, x, n);
	free(x);
	free(hdr);
	free(done);
	return err;
}
