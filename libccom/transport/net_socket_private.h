/* SPDX-License-Identifier: MIT */
/*
 * net_socket_private.h - what the three files of the TCP transport share:
 * net_socket.c (data path, cards, setup, teardown), net_socket_connect.c
 * (connecting pairs: eager at setup, the lazy state machine of
 * CCOM_NET_CONNECT=lazy, the bytes sent before a pair is connected) and
 * net_socket_wait.c (->wait(): busy-poll, then ppoll).  Nobody else
 * includes it.
 */
#ifndef CCOM_TRANSPORT_NET_SOCKET_PRIVATE_H
#define CCOM_TRANSPORT_NET_SOCKET_PRIVATE_H

#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/net_socket.h"
#include "util/socket.h"

struct ccomComm;

/*
 * Busy-poll budget of a stall before ppoll(), adapted between these
 * (microseconds).  The ceiling is about what a sleep and wake-up cost on an
 * idle vCPU: a longer spin burns CPU that, with both "hosts" on few CPUs,
 * the kernel's TCP copies need, and under contention it costs the rank its
 * scheduling credit, so the next wake-up waits behind other jobs.  2 ranks
 * between namespaces, medians of 5-10 interleaved runs against the former
 * 100 us: under chrt -f 1, 8 B 4.96 / 4.55 us (6.38 / 6.49 in a second A/B:
 * noise), 1 MiB 439 / 455 us, 16 MiB 8.2 / 8.6 ms; at load average 12-14,
 * 64 KiB 52-81 / 77-115 us, 1 MiB 851-888 / 1513-1776 us, 16 MiB 19 / 61 ms.
 */
#define NET_SPIN_MIN_US 2
#define NET_SPIN_MAX_US 20
#define NET_SPIN_STEP_US 5
/* A poll-and-yield window of NET_PROBE_US at most every NET_PROBE_EVERY_US. */
#define NET_PROBE_US 5000
#define NET_PROBE_EVERY_US 250000

/*
 * What a send may take on a conn that is not connected yet: a collective
 * signature and a small message, which proxy/xfer.c sends in one call
 * (CCOM_XFER_SIG_BYTES + its 480-byte small limit).
 */
#define NET_EARLY_BYTES 512

/* The version of the cards and hellos (3: hellos carry a MAC, cards a nonce). */
#define NET_WIRE_VERSION 3u
/* Bytes of the nonce each rank's card carries for the hellos it accepts. */
#define NET_NONCE_BYTES 16

/*
 * First bytes of every TCP connection, from the connecting side: who it
 * is, to whom, which socket, and a MAC of all that and the accepting
 * rank's card nonce under the communicator's data key
 * (ccom_bootstrap_data_mac(); see net_hello_fill()).
 */
struct net_hello {
	uint64_t magic;
	uint64_t comm_hash;
	int32_t rank;
	int32_t sock;
	int32_t to;		/* the accepting rank */
	uint32_t version;	/* NET_WIRE_VERSION */
	uint8_t mac[32];
};

/*
 * Accepted connections a group keeps waiting for their hello, at most: a
 * peer's hello follows its handshake at once, so only a flood fills it;
 * then the oldest one that waited NET_PENDING_MIN_AGE_US gives way (the
 * rest stays in the kernel's backlog, taking no descriptor).
 */
#define NET_PENDING_MAX 64
#define NET_PENDING_MIN_AGE_US 1000000LL

/* One direction of the striped stream: which socket, and what is left of its piece. */
struct net_dir {
	int cur;
	size_t left;
};

/*
 * State of a conn.  Eager setup makes every conn READY; lazy setup leaves
 * them IDLE until an operation first calls ->send/->recv on them, which
 * makes them CONNECTING (this rank is the higher one: it opens the
 * sockets) or ACCEPTING (lower: it waits for the peer's sockets on the
 * listener), then READY, or FAILED with @err.
 */
enum net_state { NET_IDLE, NET_CONNECTING, NET_ACCEPTING, NET_READY, NET_FAILED };

struct net_group;

struct net_conn {
	struct ccom_transport_conn base;	/* first: coll/ casts */
	struct ccomComm *comm;
	struct net_group *group;
	int nsocks;
	size_t chunk;
	/* data sockets, then the control socket; once set, open until teardown */
	int fds[CCOM_NET_MAX_SOCKS + 1];
	size_t sent[CCOM_NET_MAX_SOCKS];
	size_t rcvd[CCOM_NET_MAX_SOCKS];
	struct net_dir tx;
	struct net_dir rx;
	/*
	 * What the last send/recv call left unfinished: coll/ calls every
	 * active transfer on each pass, so these say which sockets a wait
	 * should watch.  Touched only by the thread driving the comm.
	 */
	bool tx_want;
	bool rx_want;
	bool dead;
	/* Lazy connection (net_socket_connect.c); READY from the start when eager. */
	_Atomic int state;			/* enum net_state; read by net_revoke() */
	int err;				/* FAILED: what send/recv return */
	int idx;				/* position in group->by_peer */
	union ccom_sockaddr addr;		/* the peer's listener (its card) */
	bool connected[CCOM_NET_MAX_SOCKS + 1];	/* connecting side: handshake done */
	uint8_t hello_off[CCOM_NET_MAX_SOCKS + 1]; /* connecting side: hello bytes sent */
	int64_t deadline_us;			/* set when first needed */
	/* Bytes a send took before the connection existed (see net_send()). */
	unsigned char early[NET_EARLY_BYTES];
	unsigned int early_len, early_off;
	uint8_t peer_nonce[NET_NONCE_BYTES];	/* the peer's card nonce (our hellos to it) */
	int probe_fd;				/* accepting side: liveness probe, or -1 */
	int64_t probe_at_us;			/* next probe / probe started */
};

/* An accepted connection whose hello has not fully arrived. */
struct net_pending {
	int fd;
	unsigned int got;
	int64_t since_us;
	union ccom_sockaddr from;
	struct net_hello hello;
};

/*
 * The conns made by one setup call.  ->wait() on any of them sleeps until
 * any socket some transfer of the group is stuck on becomes ready: coll/
 * names one stuck transfer, but a ring step is stuck on two (send to next,
 * receive from prev), and sleeping on one would leave the other idle.
 */
struct net_group {
	int nconns;
	struct net_conn **conns;
	struct pollfd *pfds;
	int pfds_cap;
	int culprit;			/* rank behind the first failure seen, or -1 */
	/* Busy-poll before sleeping (see net_wait()); all 0 when oversubscribed. */
	int64_t idle_since;		/* first idle ->wait() of this stall, 0: moving */
	int spin_us;			/* current budget, adapted per stall */
	int spin_max_us;
	bool slept;			/* this stall already went to ppoll() */
	int64_t next_probe_us;		/* next poll-and-yield window (see net_wait()) */
	int64_t probe_until_us;
	/* Lazy connection: the listener stays open; lookup by peer rank. */
	bool lazy;
	int lfd;			/* listener, -1 when eager (closed after setup) */
	int npeers;
	int *peer_rank;			/* sorted, as setup got them */
	struct net_conn **by_peer;	/* same order; NULL once torn down */
	/* Conns on their way (or READY with early bytes to flush): net_group_progress(). */
	struct net_conn **active;
	int nactive;
	struct net_pending *pending;
	int npending, pending_cap;
	int64_t connect_tmo_us;		/* a pair's connect may take this long */
	uint8_t nonce[NET_NONCE_BYTES];	/* this rank's card nonce: hellos to it carry it */
	uint64_t ndropped;		/* connections dropped (foreign, replayed, flood) */
	uint64_t nemfile;		/* accepts that found no descriptor (logged 1 in 1000) */
};

static inline struct net_conn *to_net(struct ccom_transport_conn *conn)
{
	return (struct net_conn *)conn;
}

/* The connection to @peer failed for a reason in its sentence: mark it, name it. */
ssize_t net_peer_gone(struct net_conn *c, const char *what, int err);

/*
 * Lazy connection (net_socket_connect.c).  net_lazy_progress() advances
 * @c (and files every connection waiting on the group's listener) without
 * blocking: 0 (look at c->state: READY, or still on its way) or -errno
 * after ccom_set_last_error() naming the peer and the fix.
 */
int net_lazy_progress(struct net_conn *c);
/* Add what the unfinished connection of @c waits on to @pfd[@n..]; new count. */
int net_lazy_watch(struct pollfd *pfd, int n, struct net_conn *c, bool *lfd_added);
/* Upper bound of the pollfds net_lazy_watch() adds for @c (group ones included). */
int net_lazy_watch_max(const struct net_conn *c);
/* ccomCommRevoke() on a conn that is not READY: make the peer's wait end. */
void net_lazy_revoke(struct net_conn *c);
/* Close the group's listener and the connections still waiting for a hello. */
void net_lazy_group_close(struct net_group *g);
/*
 * Before ->send/->recv move bytes: advance the group's conns on their way,
 * then @c's own connection.  1: READY; 0: not yet (retry); -errno.
 */
int net_ensure_ready(struct net_conn *c);
/* Send the bytes net_take_early() took: 1 when none is left, 0 not yet, -errno. */
int net_flush_early(struct net_conn *c);
/* Advance every conn of @g on its way and flush the early bytes of those that got there. */
void net_group_progress(struct net_group *g);
/* A send on a conn that is not READY: keep up to NET_EARLY_BYTES of it; bytes taken. */
ssize_t net_take_early(struct net_conn *c, const void *buf, size_t size);
/*
 * Eager: connect every pair now (the higher rank connects to c->addr, the
 * lower accepts on @lfd, filing connections as the lazy side does) and
 * make them READY; 0 or -errno after a sentence.
 */
int net_connect_eager(struct ccomComm *comm, const int *peers, int npeers,
		      struct ccom_transport_conn **conns, int lfd, int64_t deadline);
/* The hello of socket @sock of @c (this rank, the higher, to c's peer). */
void net_hello_fill(const struct net_conn *c, int sock, struct net_hello *h);

/* ---------------------------------------------------------------- net_socket_wait.c */

/* ->wait(): busy-poll for the group's budget, then sleep in ppoll(); 0 or -errno. */
int net_wait(struct ccom_transport_conn *conn, int dir, int timeout_us);
/* The group's busy-poll budget: none when this host has more ranks than CPUs. */
void net_spin_policy(const struct ccomComm *comm, struct net_group *g);

/*
 * Bytes moved: the stall (if any) is over.  A stall that ended while
 * busy-polling earns a longer budget next time (additive increase); one
 * that had to sleep halved it already (see net_wait()).
 */
static inline void moved(struct net_group *g)
{
	if (!g->idle_since)
		return;
	if (!g->slept && g->spin_us < g->spin_max_us)
		g->spin_us += NET_SPIN_STEP_US;
	g->idle_since = 0;
	g->slept = false;
}

/* ---------------------------------------------------------------- net_socket.c */

/*
 * @c is connected: READY, and its control socket (idle: it carries only
 * failure notes) watched for its host's silence (proxy/live.h).
 */
void net_mark_ready(struct net_conn *c);

/* Move up to @size bytes into the striped stream of a READY conn. */
ssize_t net_stream_send(struct net_conn *c, const void *buf, size_t size);

/*
 * The source address for a connection to @to: true with *@src set to
 * topo/'s interface for this rank (comm->tcp_nic) when @to is on its
 * subnet, false to let the kernel route (net_tcp_rails shows why).
 */
bool net_source_addr(const struct ccomComm *comm, const union ccom_sockaddr *to,
		     union ccom_sockaddr *src);

/*
 * The sentence for running out of descriptors (EMFILE, ENFILE) while
 * opening (@what: "socket", "accept") a connection to @peer (-1: unknown):
 * names ulimit -n, CCOM_NET_CONNECT=lazy and CCOM_NSOCKS.  Returns -@err.
 */
int net_fd_exhausted(const struct ccomComm *comm, const char *what, int peer, int err);

#endif
