// SPDX-License-Identifier: MIT
/*
 * p2p.c - grouped point-to-point send/recv (coll/ room), over the
 * transfer loop of proxy/xfer.c.
 *
 * Each p2p message carries an 8-byte header with its size, so a send and
 * a receive of different sizes fail with a message instead of corrupting
 * the stream.  Once sizes agree, transfers between ranks of one host that
 * the engine takes (ccom_tune_engine_p2p_wants(), the same answer on both
 * sides: coll/kdev_p2p.c)
 * run on the nccom engine first, single copy between the user buffers;
 * the rest follows here on the transports.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "tune/tune.h"
#include "util/err.h"

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
	if (!err && comm->kdev)
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
