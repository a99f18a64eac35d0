// SPDX-License-Identifier: MIT
/*
 * p2p.c - grouped point-to-point send/recv (coll/ room), over the
 * transfer loop of proxy/xfer.c.
 *
 * Each p2p message carries a header (coll/p2p.h: a magic, the sender, its
 * number among the sender's messages to this peer, the size), so a send
 * and a receive of different sizes, or a receive whose peer is in a
 * collective, fail with a message instead of corrupting the stream, and
 * an any-source receive (p2p_any.c) can tell a send from other bytes.
 * Once sizes agree, transfers between ranks of one host that the engine
 * takes (ccom_tune_engine_p2p_wants(), the same answer on both sides:
 * coll/kdev_p2p.c) run on the nccom engine first, single copy between the
 * user buffers; user sends whose header says CMA (the sender's choice,
 * coll/cma_p2p.c) are read by their receivers with process_vm_readv, and
 * acknowledged after the data; the rest follows here on the transports.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cma.h"
#include "coll/coll.h"
#include "coll/p2p.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/misc.h"

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

/*
 * The header of receive @op came in.  Another operation's header (or a
 * collective's data) is a usage error (-EPERM); a header that no sender
 * of this build writes on this stream (another rank, a message number out
 * of order, an acknowledgement's magic; version, path: cma_p2p.c) is the
 * peer's fault (-EBADMSG, ccomRemoteError); another size is -EINVAL (the
 * caller's counts, or a lie: the two cannot be told apart).  0 or the
 * error with its sentence, which names the peer by @op->root, never by the
 * header's own @from.
 */
static int p2p_check_header(struct ccomComm *comm, const struct ccom_op *op,
			    const struct ccom_p2p_hdr *h, uint32_t magic, uint64_t want_seq)
{
	size_t want = op->count * ccom_dtype_size(op->dtype);

	/* Its rank too (at @from in both layouts): raw collective data rarely matches 8 bytes. */
	if (h->magic == CCOM_CMA_P2P_ACK_MAGIC && h->from == op->root) {
		ccom_set_last_error("rank %d: peer rank %d sent a CMA acknowledgement (magic 0x%x) where the header of its next ccomSend must be: it acknowledges a send this rank never made on the CMA path; the peer's libccom is corrupt or not of this build",
				    comm->rank, op->root, h->magic);
		return -EBADMSG;
	}
	if (h->magic != magic) {
		ccom_set_last_error("rank %d: what peer %d sent is not the ccomSend this ccomRecv waits for (the peer is in a collective, or the ranks issued different operations); issue matching sends, receives and collectives in the same order on both ranks",
				    comm->rank, op->root);
		return -EPERM;
	}
	if (h->from != op->root) {
		ccom_set_last_error("rank %d: the p2p header on peer rank %d's stream names sender rank %d, but only rank %d writes on that stream: the peer's libccom is corrupt or not of this build; run the same build on every rank",
				    comm->rank, op->root, h->from, op->root);
		return -EBADMSG;
	}
	if (h->seq != want_seq) {
		ccom_set_last_error("rank %d: the p2p header from peer rank %d carries message number %llu, but its messages to this rank arrive in order and the next is %llu: the peer's libccom is corrupt or not of this build; run the same build on every rank",
				    comm->rank, op->root, (unsigned long long)h->seq,
				    (unsigned long long)want_seq);
		return -EBADMSG;
	}
	if (h->bytes != want) {
		ccom_set_last_error("rank %d: peer %d sent %llu bytes but the matching %s expects %zu; counts and types of matching send/recv must agree",
				    comm->rank, op->root, (unsigned long long)h->bytes,
				    op->any_peer ? "ccomRecvAny" : "ccomRecv", want);
		return -EINVAL;
	}
	return ccom_cma_p2p_check(comm, h);
}

/*
 * The user's group in the flight recorder: "p2p/cma" if a message of it
 * went over CMA, "p2p/kdev" if the engine moved one, else "p2p/simple"
 * (the streams; set before the headers by ccom_p2p_group_run()).
 */
static void p2p_flight_label(struct ccomComm *comm, const struct ccom_op *group,
			     const struct ccom_op *ops, int nops, const bool *cma, const bool *done)
{
	const char *proto = NULL;
	int i;

	for (i = 0; i < nops; i++) {
		if (ops[i].root == comm->rank || !done[i])
			continue;
		if (cma[i]) {
			proto = ccom_flight_cma;
			break;
		}
		proto = ccom_flight_kdev;
	}
	if (proto)
		ccom_flight_algo(comm->proxy->flight, group, ccom_flight_p2p, proto);
}

/*
 * The data of the group whose headers agreed: CMA receives read first
 * (*@status: their errnos, for the acknowledgements), then the engine's
 * and the transports' transfers, which run even after a failed read so
 * that every stream stays in step (an engine failure stops here, as
 * before CMA).  0 or the first -errno.
 */
static int p2p_data(struct ccomComm *comm, struct ccom_op *ops, int nops, const uint64_t *bytes,
		    const struct ccom_p2p_hdr *hdr, const bool *cma, int *status,
		    const struct ccom_op *group)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_xfer *x;
	bool *done;
	int i, n = 0, err = 0, read_err = 0, e;

	x = calloc((size_t)nops, sizeof(*x));
	done = calloc((size_t)nops, sizeof(*done));
	if (!x || !done) {
		free(x);
		free(done);
		return -ENOMEM;
	}
	for (i = 0; i < nops; i++) {
		if (!cma[i])
			continue;
		done[i] = true;
		if (ops[i].kind != CCOM_COLL_RECV)
			continue;
		e = ccom_cma_p2p_read(comm, &hdr[i], ops[i].recvbuff, bytes[i]);
		status[i] = -e;
		if (e && !read_err)
			read_err = e;
	}
	if (comm->kdev)
		err = ccom_kdev_p2p_run(comm, ops, nops, done);
	if (group)
		p2p_flight_label(comm, group, ops, nops, cma, done);
	for (i = 0; !err && i < nops; i++) {
		if (ops[i].root == comm->rank || done[i])
			continue;
		x[n++] = (struct ccom_xfer){ .conn = cs->conns[ops[i].root],
					     .is_send = ops[i].kind == CCOM_COLL_SEND,
					     .buf = ops[i].kind == CCOM_COLL_SEND ?
						    (char *)ops[i].sendbuff : ops[i].recvbuff,
					     .size = bytes[i] };
	}
	if (!err)
		err = ccom_xfer_run(comm, x, n);
	free(x);
	free(done);
	return read_err ? read_err : err;
}

int ccom_p2p_first_short(const struct ccomComm *comm, const struct ccom_xfer *x, int n, int err,
			 char *why, size_t len)
{
	char me[32];
	const char *w;
	int k;

	for (k = 0; k < n; k++)
		if (!x[k].is_send && x[k].done < x[k].size)
			break;
	if (k == n)
		return -1;
	snprintf(me, sizeof(me), "rank %d: ", comm->rank);
	w = ccom_last_error();
	if (!strncmp(w, me, strlen(me)))
		w += strlen(me);	/* the same rank's sentence: one prefix */
	snprintf(why, len, "%s", *w ? w : ccom_errno_str(-err));
	return k;
}

/*
 * The headers did not all arrive (@err: abort, timeout, a peer gone):
 * name, in the sentence, the first peer whose header is missing or cut
 * short, keeping the wait's own reason.  Returns @err.
 */
static int hdr_missing(struct ccomComm *comm, const struct ccom_op *ops,
		       const struct ccom_p2p_hdr *hdr, const struct ccom_xfer *x, int n, int err)
{
	char why[512];
	int k = ccom_p2p_first_short(comm, x, n, err, why, sizeof(why)), i;

	if (k < 0)
		return err;
	i = (int)((const struct ccom_p2p_hdr *)(const void *)x[k].buf - hdr);
	ccom_set_last_error("rank %d: when the wait ended, the p2p header from peer rank %d had %zu of its %zu bytes (the first header of the group not in): %s",
			    comm->rank, ops[i].root, x[k].done, x[k].size, why);
	return err;
}

/*
 * A header refused: the group's streams are out of step and this comm is
 * broken (coll.c fails every later op), but a peer on another host whose
 * data this rank will not read would wait for it to drain, or in its next
 * operation, until CCOM_OP_TIMEOUT.  Revoke the group's network conns so
 * those waits end at once ("revoked": this rank's log says why); the
 * host's ranks see the segment's mark, CMA senders the refusal.
 */
static void p2p_revoke_group(struct ccomComm *comm, const struct ccom_op *ops, int nops)
{
	struct ccom_transport_conn *c;
	int i, j;

	for (i = 0; i < nops; i++) {
		if (ops[i].root == comm->rank)
			continue;
		for (j = 0; j < i && ops[j].root != ops[i].root; j++)
			;
		c = comm->coll->conns[ops[i].root];
		if (j == i && c && c->ops->revoke)
			c->ops->revoke(comm, c);
	}
}

/* @magic: CCOM_P2P_MAGIC for the user's sends, CCOM_P2P_MAGIC_COLL for a collective's. */
/* @group: the user's group op (its flight label), NULL for a collective's transfers. */
static int p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops, uint32_t magic,
		   const struct ccom_p2p_hdr *have0, const struct ccom_op *group)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_p2p_hdr *hdr;
	struct ccom_xfer *x;
	uint64_t *seq, *bytes, t0 = 0;
	int i, n = 0, err, e, *status, nsend = 0, timed = -1;
	bool *cma;

	if (nops <= 0)
		return 0;
	err = p2p_self(comm, ops, nops);
	if (err)
		return err;
	x = calloc((size_t)nops, sizeof(*x));
	hdr = calloc((size_t)nops, sizeof(*hdr));
	seq = calloc((size_t)nops, sizeof(*seq));
	bytes = calloc((size_t)nops, sizeof(*bytes));
	cma = calloc((size_t)nops, sizeof(*cma));
	status = calloc((size_t)nops, sizeof(*status));
	if (!x || !hdr || !seq || !bytes || !cma || !status) {
		err = -ENOMEM;
		goto out;
	}
	/* CCOM_CMA=auto measures groups with one user send to a peer (cma_p2p.c). */
	for (i = 0; magic == CCOM_P2P_MAGIC && i < nops; i++)
		if (ops[i].kind == CCOM_COLL_SEND && ops[i].root != comm->rank && !nsend++)
			timed = i;
	if (nsend != 1 || !cs->cma || cs->cma->mode != 2)
		timed = -1;	/* no clock read on groups auto does not measure */
	else
		t0 = (uint64_t)ccom_now_us();
	/* Headers first (in their own pass: a data receive needs its size checked). */
	for (i = 0; i < nops; i++) {
		struct ccom_transport_conn *c = cs->conns[ops[i].root];
		bool send = ops[i].kind == CCOM_COLL_SEND;

		bytes[i] = ops[i].count * ccom_dtype_size(ops[i].dtype);
		if (ops[i].root == comm->rank)
			continue;
		if (i == 0 && have0) {	/* an any-source receive's, taken by p2p_any.c */
			hdr[0] = *have0;
			seq[0] = have0->seq;
			continue;
		}
		if (send) {
			int path = magic != CCOM_P2P_MAGIC ? CCOM_P2P_PATH_STREAM :
				   ccom_cma_p2p_choose(comm, ops[i].root, bytes[i], nsend == 1);

			cma[i] = path == CCOM_P2P_PATH_CMA;
			hdr[i] = (struct ccom_p2p_hdr){
				.magic = magic, .from = comm->rank, .seq = ++c->p2p_tx,
				.bytes = bytes[i], .version = CCOM_P2P_VERSION, .path = (uint16_t)path,
				.addr = cma[i] ? (uint64_t)(uintptr_t)ops[i].sendbuff : 0 };
		} else {
			seq[i] = ++c->p2p_rx;
		}
		x[n++] = (struct ccom_xfer){ .conn = c, .is_send = send, .buf = (char *)&hdr[i],
					     .size = sizeof(hdr[i]) };
	}
	err = ccom_xfer_run(comm, x, n);
	if (err)
		err = hdr_missing(comm, ops, hdr, x, n, err);
	for (i = 0; !err && i < nops; i++) {
		if (ops[i].kind != CCOM_COLL_RECV || ops[i].root == comm->rank)
			continue;
		err = p2p_check_header(comm, &ops[i], &hdr[i], magic, seq[i]);
		cma[i] = !err && hdr[i].path == CCOM_P2P_PATH_CMA;
		if (err) {	/* CMA senders wait for a word: tell them why */
			ccom_cma_p2p_refuse(comm, ops, nops, hdr, cma, i, err);
			p2p_revoke_group(comm, ops, nops);
		}
	}
	if (err)
		goto out;
	err = p2p_data(comm, ops, nops, bytes, hdr, cma, status, group);
	/*
	 * After the data on every stream: a sender's buffer is free once its
	 * peer said so.  A failed read is acknowledged too (its sender fails
	 * with the reason); a failed stream leaves the streams unusable.
	 */
	for (i = 0, e = 0; i < nops; i++)
		e |= status[i];
	if (!err || e) {
		e = ccom_cma_p2p_acks(comm, ops, nops, hdr, cma, status, -1);
		err = err ? err : e;
	}
	if (!err && timed >= 0)
		ccom_cma_p2p_timed(comm, bytes[timed], hdr[timed].path,
				   ((uint64_t)ccom_now_us() - t0) * 1000);
out:
	free(x);
	free(hdr);
	free(seq);
	free(bytes);
	free(cma);
	free(status);
	return err;
}

int ccom_p2p_group_run(struct ccomComm *comm, struct ccom_op *group)
{
	struct ccom_op *ops = group->subs;
	int i, err, nops = group->nsubs;
	struct ccom_p2p_hdr h;

	ccom_flight_algo(comm->proxy->flight, group, ccom_flight_p2p,
			 ccom_proto_name(CCOM_PROTO_SIMPLE));
	if (nops <= 0 || ops[0].root != CCOM_P2P_ANY)
		return p2p_run(comm, ops, nops, CCOM_P2P_MAGIC, NULL, group);
	/*
	 * A group of ccomRecvAny (api.c allows no other mix): the first picks
	 * the peer, the others are receives from it.
	 */
	err = ccom_p2p_any_match(comm, &ops[0], &h);
	if (err)
		return err;
	for (i = 1; i < nops; i++) {
		ops[i].root = ops[0].root;
		*ops[i].any_peer = ops[0].root;
	}
	return p2p_run(comm, ops, nops, CCOM_P2P_MAGIC, &h, group);
}

int ccom_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops)
{
	return p2p_run(comm, ops, nops, CCOM_P2P_MAGIC_COLL, NULL, NULL);
}
