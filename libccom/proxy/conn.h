/* SPDX-License-Identifier: MIT */
/*
 * conn.h - the connection interface the progress loop drives: every
 * transport (transport/) implements struct ccom_transport_ops, and the
 * transfer loop (xfer.c) and the algorithms move bytes through it.
 *
 * Model: a transport gives each ordered pair of ranks a reliable, in-order
 * byte stream in each direction (one struct ccom_transport_conn per peer;
 * the conn carries both directions).  The algorithms in coll/ frame their
 * own messages: both sides always know how many bytes the next step moves,
 * so the stream needs no headers.  Every data call is nonblocking and
 * returns how many bytes it moved (possibly 0); the caller loops over them
 * with the spin -> yield -> ops->wait() policy (wait.h), checking the abort
 * flag and CCOM_OP_TIMEOUT, so a transport never blocks on its own.
 *
 * Lifetime: coll/ calls ops->setup() once per communicator at the connect
 * stage of init, on every rank and for every compiled-in transport (also
 * with npeers == 0, so the call stays collective), then ops->teardown()
 * when the communicator is destroyed or aborted.
 *
 * Errors: 0 / -errno, after ccom_set_last_error() with a sentence naming
 * the peer rank.  A dead or vanished peer is -ECONNRESET (or -EPIPE), which
 * the API turns into ccomRemoteError.
 */
#ifndef CCOM_PROXY_CONN_H
#define CCOM_PROXY_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ccomComm;
struct ccom_transport_ops;
struct ccom_xfer_sig;

/* Bytes of a collective's signature on a network stream (xfer.h). */
#define CCOM_XFER_SIG_BYTES 32
/* Bytes an any-source receive may read ahead on a stream (a p2p header). */
#define CCOM_XFER_AHEAD_BYTES 40

/*
 * struct ccom_transport_conn - the public head of a per-peer connection.
 * Transports embed it as the FIRST member of their private struct and
 * container_of() back; everyone else only reads @ops and @peer.
 */
struct ccom_transport_conn {
	const struct ccom_transport_ops *ops;
	int peer;		/* global rank of the other side */
	/*
	 * The collective-mismatch signature on this stream (xfer.h), owned
	 * by the transfer loop: @sig is NULL on a connection that carries
	 * none (shm, or CCOM_CHECK_MISMATCH=0).  The transports leave it
	 * zero (calloc).
	 */
	struct ccom_xfer_sig *sig;
	uint64_t sig_touch_seq;		/* collective that last used this conn */
	uint64_t sig_tx_seq;		/* collective whose signature went out */
	uint64_t sig_rx_seq;		/* collective whose peer signature came in */
	unsigned int sig_tx_done, sig_rx_done; /* bytes of the one in flight */
	unsigned char sig_rx[CCOM_XFER_SIG_BYTES];
	/*
	 * Bytes an any-source receive read from the stream to see whether
	 * the peer's next message is a send (ccom_xfer_peek()); every read
	 * through xfer.c takes them first.  Owned by the transfer loop.
	 */
	unsigned char ahead[CCOM_XFER_AHEAD_BYTES];
	unsigned int ahead_len, ahead_off;
	/* Point-to-point messages sent / received on this stream (coll/p2p.c's headers). */
	uint64_t p2p_tx, p2p_rx;
};

/* Hints for ops->wait(): which direction the caller is stuck on. */
#define CCOM_TRANSPORT_WAIT_SEND 0x1
#define CCOM_TRANSPORT_WAIT_RECV 0x2

/**
 * struct ccom_transport_ops - one transport.  Fill with designated
 * initializers; every member is mandatory.
 * @name: "shm", "net_socket", ... (logs, CCOM_TOPO_DUMP_FILE).
 * @setup: collective over the communicator: connect to each of
 *	@peers[0..@npeers) (global ranks, sorted, all handled by this
 *	transport; the lists are symmetric: if B is in A's list, A is in
 *	B's) and store one conn per peer in @conns[i].  May use the
 *	bootstrap (comm->bootstrap) p2p with its own tag range.  Must honour
 *	comm->abort_flag and a bounded timeout.  On failure, frees what it
 *	made and leaves @conns NULL.
 * @send: move up to @size bytes of @buf into the stream towards the peer.
 *	Returns the number of bytes taken (0 when the stream is full; the
 *	caller retries), or -errno (-ECONNRESET: the peer is gone).  Bytes
 *	taken are owned by the transport: @buf may be reused at once.
 * @recv: take up to @size bytes from the stream from the peer into @buf.
 *	Returns bytes received (0 when nothing is there), or -errno.  A peer
 *	that closed or died is -ECONNRESET, never a silent 0 forever.
 * @wait: sleep until @conn may make progress in direction @dir
 *	(%CCOM_TRANSPORT_WAIT_*), or at most @timeout_us microseconds.
 *	Returns 0 (progress possible or timeout: the caller retries) or
 *	-errno.  Called only after the caller spun and yielded in vain.
 * @teardown: close and free @conns[0..@npeers) (NULL entries allowed).
 *	Must not block on the peers (they may be dead).
 * @revoke: optional; from ccomCommRevoke() (any thread, the comm's abort
 *	flag set): make the peer's waits on @conn end now (net_socket: a
 *	failure note naming the root cause, then shutdown of its sockets,
 *	which stay open until @teardown).  Must not block nor free anything.
 * @idle_passes: 0 lets the caller spin, yield, then call @wait (good for shm);
 *	N > 0 asks the caller to call @wait after N idle passes instead, and
 *	@wait decides how long to busy-poll (return 0 at once) before it
 *	sleeps (net_socket: an adaptive budget, none when the host has more
 *	ranks than CPUs).
 */
struct ccom_transport_ops {
	const char *name;
	int (*setup)(struct ccomComm *comm, const int *peers, int npeers,
		     struct ccom_transport_conn **conns);
	ssize_t (*send)(struct ccom_transport_conn *conn, const void *buf, size_t size);
	ssize_t (*recv)(struct ccom_transport_conn *conn, void *buf, size_t size);
	int (*wait)(struct ccom_transport_conn *conn, int dir, int timeout_us);
	void (*teardown)(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers);
	void (*revoke)(struct ccomComm *comm, struct ccom_transport_conn *conn);
	unsigned int idle_passes;
};

#endif
