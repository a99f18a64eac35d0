/* SPDX-License-Identifier: MIT */
/*
 * xfer.h - the transfer loop (proxy/xfer.c): drives a set of sends and
 * receives over the connection interface (conn.h) concurrently, with the
 * waiting policy of wait.h, until all are done.  Every algorithm that
 * moves bytes through the transports uses it.
 *
 * On each (connection, direction) only the first unfinished transfer
 * moves (the streams are ordered); all others make progress at the same
 * time, so the sends and receives of a group never deadlock on full
 * buffers.
 */
#ifndef CCOM_PROXY_XFER_H
#define CCOM_PROXY_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/op.h"
#include "proxy/conn.h"

struct ccomComm;
struct ccom_op;
struct ccom_transport_conn;

/* One transfer. */
struct ccom_xfer {
	struct ccom_transport_conn *conn;
	bool is_send;
	char *buf;
	size_t size;
	size_t done;
	/*
	 * Optional streaming reduction of a receive: as whole elements
	 * arrive in buf, red_dst[i] = red_src[i] OP buf[i] (red_dst may be
	 * red_src), overlapping the reduction with the transfer.
	 */
	char *red_dst;
	const char *red_src;
	const struct ccom_op *red_op;
	size_t red_done;		/* bytes already reduced */
	/* No data: only the signature exchange on @conn (ccom_xfer_sig_end()). */
	bool sig_only;
};

/* Run @n transfers of @x to completion: 0 or -errno (abort, timeout, peer gone). */
int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n);

/*
 * The collective-mismatch check on network streams (CCOM_CHECK_MISMATCH).
 * The streams carry raw bytes framed by the algorithms, so a peer that
 * called another collective would be read as data.  Instead, in each
 * collective, every network connection the algorithm uses carries one
 * signature (CCOM_XFER_SIG_BYTES) in each direction:
 *
 *  - it goes out before the op's first data byte on that connection (in
 *    the same send() as small data), or with the op's first receive on it
 *    when the op sends nothing there in that transfer set;
 *  - other data (above 480 bytes, or not the first send) leaves only
 *    once the peer's signature came in and matched (a mismatched peer that fails and closes must not turn
 *    our next send into a reset before its signature is read);
 *  - the peer's is read and compared before the op's first data byte is
 *    taken from that connection, so a mismatched call fails before any
 *    byte lands in a user buffer;
 *  - ccom_xfer_sig_end() completes both directions on every connection
 *    the op touched (a rank that only sent, such as a Broadcast root,
 *    still reads and checks its peers').
 *
 * Matched calls run the same algorithm, so both ends touch the same
 * connections and the framing stays aligned.  A rank that touches no
 * connection of the mismatched peer is not told: it fails by the peer's
 * failure or CCOM_OP_TIMEOUT.
 *
 * struct ccom_xfer_sig is one per communicator (the algorithms' room owns
 * it); connections point at it through conn->sig.
 */
struct ccom_xfer_sig {
	struct ccom_op_sig sig;		/* the running collective; seq 0: none (p2p) */
	unsigned char wire[CCOM_XFER_SIG_BYTES];
	int rank;			/* this rank, for the messages */
	struct ccom_transport_conn **touched; /* conns the op used so far */
	struct ccom_xfer *fin;		/* ccom_xfer_sig_end()'s transfers */
	int ntouched, cap;
};

/* Room for @cap connections (a comm's peer count); 0 or -ENOMEM.  _fini() frees. */
int ccom_xfer_sig_init(struct ccom_xfer_sig *s, int rank, int cap);
void ccom_xfer_sig_fini(struct ccom_xfer_sig *s);
/* Start collective @sig (seq > 0) on @s. */
void ccom_xfer_sig_begin(struct ccom_xfer_sig *s, const struct ccom_op_sig *sig);
/*
 * After the algorithm succeeded: finish the exchange on every touched
 * connection (bounded by the op's wait: abort, CCOM_OP_TIMEOUT).  0,
 * -EPERM on a mismatch (the sentence names both calls), or -errno.
 */
int ccom_xfer_sig_end(struct ccomComm *comm, struct ccom_xfer_sig *s);
/* After a failed op: forget it (the comm is broken). */
void ccom_xfer_sig_reset(struct ccom_xfer_sig *s);

/*
 * @conn->ops->send / ->recv with the signature exchange first; what an
 * algorithm that drives a connection itself (pair.c) calls instead.
 * Same returns: data bytes moved (0 also while only the signature moved),
 * or -errno (-EPERM: mismatch).
 */
ssize_t ccom_xfer_send(struct ccom_transport_conn *conn, const void *buf, size_t size);
ssize_t ccom_xfer_recv(struct ccom_transport_conn *conn, void *buf, size_t size);
/*
 * Read ahead: make @size (<= CCOM_XFER_AHEAD_BYTES) bytes at the head of
 * @conn's incoming stream visible in @buf without consuming them (the
 * next reads of the stream, through this file, return them first).
 * Returns how many are visible (may be fewer than @size: not arrived yet),
 * or -errno.  For the any-source receive, which must see whether a peer's
 * next message is a send before it takes it (coll/p2p_any.c).
 */
ssize_t ccom_xfer_peek(struct ccom_transport_conn *conn, void *buf, size_t size);
/* Consume @n bytes that ccom_xfer_peek() showed. */
void ccom_xfer_peek_take(struct ccom_transport_conn *conn, size_t n);
/*
 * The direction an unfinished send on @conn waits in: CCOM_TRANSPORT_WAIT_RECV
 * while it waits for the peer's signature (data above 480 bytes does not
 * leave before it), else CCOM_TRANSPORT_WAIT_SEND.
 */
int ccom_xfer_send_wait_dir(const struct ccom_transport_conn *conn);

#endif
