// SPDX-License-Identifier: MIT
/*
 * net_socket.c - the TCP transport between hosts.
 *
 * Each pair of ranks gets CCOM_NSOCKS TCP connections (the smaller of the
 * two sides' values).  The byte stream of the pair is cut into pieces of
 * CCOM_NET_CHUNK bytes that go round-robin over the sockets; the receiver
 * drains the sockets in the same order, so the stream stays ordered while
 * large transfers use every socket.  Data calls are nonblocking
 * (MSG_DONTWAIT) and never wait: coll/ drives progress and calls ->wait()
 * when stuck; how ->wait() spends a stall is net_socket_wait.c's.
 *
 * Setup (collective over the peer list): every rank with peers listens on
 * the address of its bootstrap socket (so CCOM_SOCKET_IFNAME selects the
 * data interface too) and every rank's card (address, socket count, piece
 * size, CCOM_NET_CONNECT, remote peer count) travels by one bootstrap
 * allgather.  CCOM_NET_CONNECT=eager (auto: up to NET_AUTO_LAZY_PEERS
 * remote peers per rank) then connects the full mesh: the higher rank of
 * each pair connects.  CCOM_NET_CONNECT=lazy (auto, the default: when some
 * rank has more remote peers) keeps the listener and connects each pair,
 * by the same rules, in the first operation that calls ->send or ->recv on
 * it: the mesh of eager needs (CCOM_NSOCKS + 1) descriptors per remote peer
 * and its connects dominate init above a few hundred ranks.  Both ways of
 * connecting, and the bytes a send takes before its pair is connected, are
 * net_socket_connect.c's; this file owns the data path, the cards, setup
 * and teardown.
 *
 * A peer that closed its socket or died turns into -ECONNRESET with a
 * sentence naming it (coll/ maps it to ccomRemoteError).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "core/comm.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "proxy/xfer.h"
#include "transport/net_socket.h"
#include "transport/net_socket_private.h"
#include "transport/net_tclass.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

#define NET_MIN_CHUNK 4096
#define NET_MAX_CHUNK (64 << 20)
#define NET_NOTE_WAIT_MS 100
/*
 * CCOM_NET_CONNECT=auto connects lazily when some rank has more remote
 * peers than this.  init_hosts_bench, 16 ranks per simulated host:
 * 256 ranks init in 0.62-0.70 s lazy against 2.35-2.42 s eager (medians
 * of 10, every bootstrap mode), 512 only lazy (eager needs ~24k
 * descriptors per host process); the first AllReduce, which connects,
 * cost no more than eager's at 2 ranks (0.3 / 0.3 ms) and 2 x 4
 * (2.2 / 3.0 ms).  Small jobs stay eager anyway: their init is short and
 * eager pays no connection inside the first operations.
 */
#define NET_AUTO_LAZY_PEERS 64
#define NET_NOTE_MAGIC 0x6e6574636c707274ULL	/* "netclprt" */

/* Address card each rank sends to each of its peers over the bootstrap. */
struct net_card {
	uint32_t version;
	int32_t nsocks;
	uint32_t chunk;
	uint32_t connect;	/* CCOM_NET_CONNECT asked for (enum net_connect) */
	int32_t npeers;		/* remote peers of this rank over net_socket */
	uint32_t pad;
	union ccom_sockaddr addr;
	uint8_t nonce[NET_NONCE_BYTES];	/* fresh per setup: the hellos to this rank carry it */
};

enum net_connect { NET_CONNECT_EAGER, NET_CONNECT_LAZY, NET_CONNECT_AUTO };
static const char *const net_connect_name[] = { "eager", "lazy", "auto" };

/*
 * Written on a pair's control socket by a rank that gives up because of
 * another rank, just before it closes the pair: the survivor that sees the
 * connection end can then name the rank that really failed.
 */
struct net_note {
	uint64_t magic;
	int32_t culprit;
	int32_t pad;
};

/* ---------------------------------------------------------------- data path */

/* The culprit named in the peer's control note, or -1 (waits briefly for it). */
static int read_note(struct net_conn *c)
{
	struct pollfd pfd = { .fd = c->fds[c->nsocks], .events = POLLIN };
	struct net_note note;

	if (poll(&pfd, 1, NET_NOTE_WAIT_MS) <= 0 ||
	    recv(pfd.fd, &note, sizeof(note), MSG_DONTWAIT) != (ssize_t)sizeof(note) ||
	    note.magic != NET_NOTE_MAGIC || note.culprit < 0 ||
	    note.culprit >= c->comm->nranks || note.culprit == c->comm->rank)
		return -1;
	return note.culprit;
}

ssize_t net_peer_gone(struct net_conn *c, const char *what, int err)
{
	int culprit;

	if (c->dead)
		return -ECONNRESET;
	c->dead = true;
	culprit = read_note(c);
	if (culprit == c->base.peer) {
		/* Its own rank in the note: it ended the comm itself, nobody died. */
		ccom_set_last_error("net_socket: peer rank %d revoked the communicator (ccomCommRevoke, or an error of its own such as a collective mismatch: its log says which); this operation cannot complete",
				    c->base.peer);
		return -ECONNRESET;
	}
	if (culprit >= 0 && culprit != c->base.peer) {
		ccom_set_last_error("net_socket: peer rank %d closed its connection because rank %d failed; rank %d died, aborted or lost its network",
				    c->base.peer, culprit, culprit);
	} else {
		culprit = c->base.peer;
		ccom_set_last_error("net_socket: connection to peer rank %d %s (%s); that rank died, aborted or lost its network",
				    c->base.peer, what, err ? strerror(err) : "end of stream");
	}
	if (c->group->culprit < 0)
		c->group->culprit = culprit;
	ccom_proxy_note_failed(c->comm, culprit);
	return -ECONNRESET;
}

void net_mark_ready(struct net_conn *c)
{
	atomic_store(&c->state, NET_READY);
	ccom_live_watch(c->comm, c->base.peer, c->fds[c->nsocks]);
}

/* Move up to @size bytes into the striped stream of a READY conn. */
ssize_t net_stream_send(struct net_conn *c, const void *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		size_t n = size - done < c->tx.left ? size - done : c->tx.left;
		ssize_t r = send(c->fds[c->tx.cur], (const char *)buf + done, n,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return net_peer_gone(c, "failed on send", errno);
		}
		moved(c->group);
		c->sent[c->tx.cur] += r;
		done += r;
		c->tx.left -= r;
		if (!c->tx.left) {
			c->tx.cur = (c->tx.cur + 1) % c->nsocks;
			c->tx.left = c->chunk;
		}
	}
	c->tx_want = done < size;
	return (ssize_t)done;
}


static ssize_t net_send(struct ccom_transport_conn *conn, const void *buf, size_t size)
{
	struct net_conn *c = to_net(conn);
	int ready;

	if (c->dead)
		return -ECONNRESET;
	/* An empty call needs no connection (and would leave one half made). */
	ready = size ? net_ensure_ready(c) : 1;
	if (ready < 0)
		return ready;
	if (!ready)
		return net_take_early(c, buf, size);
	ready = net_flush_early(c);
	if (ready <= 0)
		return ready;
	return net_stream_send(c, buf, size);
}

static ssize_t net_recv(struct ccom_transport_conn *conn, void *buf, size_t size)
{
	struct net_conn *c = to_net(conn);
	size_t done = 0;
	int ready;

	if (c->dead)
		return -ECONNRESET;
	/* An empty call needs no connection (and would leave one half made). */
	ready = size ? net_ensure_ready(c) : 1;
	if (ready <= 0) {
		c->rx_want = true;
		return ready;
	}
	if (size) {
		ready = net_flush_early(c);
		if (ready < 0)
			return ready;
	}
	while (done < size) {
		size_t n = size - done < c->rx.left ? size - done : c->rx.left;
		ssize_t r = recv(c->fds[c->rx.cur], (char *)buf + done, n, MSG_DONTWAIT);

		/* Bytes that came before the end are delivered first; the next call reports it. */
		if (r == 0)
			return done ? (ssize_t)done : net_peer_gone(c, "was closed by the peer", 0);
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : net_peer_gone(c, "failed on receive", errno);
		}
		moved(c->group);
		c->rcvd[c->rx.cur] += r;
		done += r;
		c->rx.left -= r;
		if (!c->rx.left) {
			c->rx.cur = (c->rx.cur + 1) % c->nsocks;
			c->rx.left = c->chunk;
		}
	}
	c->rx_want = done < size;
	return (ssize_t)done;
}

int ccom_net_conn_nsocks(const struct ccom_transport_conn *conn)
{
	if (!conn || conn->ops != &ccom_transport_net_socket)
		return -EINVAL;
	return ((const struct net_conn *)conn)->nsocks;
}

int ccom_net_conn_sock_bytes(const struct ccom_transport_conn *conn, int i, size_t *sent,
			     size_t *received)
{
	const struct net_conn *c = (const struct net_conn *)conn;

	if (ccom_net_conn_nsocks(conn) < 0 || i < 0 || i >= c->nsocks)
		return -EINVAL;
	*sent = c->sent[i];
	*received = c->rcvd[i];
	return 0;
}

/* ---------------------------------------------------------------- setup */

static void group_free(struct net_group *g)
{
	if (!g)
		return;
	net_lazy_group_close(g);
	free(g->conns);
	free(g->pfds);
	free(g->peer_rank);
	free(g->by_peer);
	free(g->active);
	free(g);
}

static struct net_group *group_alloc(const int *peers, int npeers)
{
	struct net_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->culprit = -1;
	g->lfd = -1;
	g->npeers = npeers;
	g->conns = calloc(npeers, sizeof(*g->conns));
	g->pfds_cap = 2 * npeers;
	g->pfds = calloc(g->pfds_cap, sizeof(*g->pfds));
	g->peer_rank = calloc(npeers, sizeof(*g->peer_rank));
	g->by_peer = calloc(npeers, sizeof(*g->by_peer));
	g->active = calloc(npeers, sizeof(*g->active));
	if (!g->conns || !g->pfds || !g->peer_rank || !g->by_peer || !g->active) {
		group_free(g);
		return NULL;
	}
	memcpy(g->peer_rank, peers, npeers * sizeof(*peers));
	return g;
}

/* Free @c; the group (and its listener, when lazy) goes with its last conn. */
static void conn_free(struct net_conn *c)
{
	struct net_group *g;
	int i;

	if (!c)
		return;
	ccom_live_unwatch(c->comm, c->fds[c->nsocks]);
	for (i = 0; i <= CCOM_NET_MAX_SOCKS; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	if (c->probe_fd >= 0)
		close(c->probe_fd);
	g = c->group;
	g->by_peer[c->idx] = NULL;
	for (i = 0; i < g->nactive; i++)
		if (g->active[i] == c)
			g->active[i] = g->active[--g->nactive];
	for (i = 0; i < g->nconns; i++)
		if (g->conns[i] == c)
			g->conns[i] = g->conns[--g->nconns];
	if (!g->nconns)
		group_free(g);
	free(c);
}

static struct net_conn *conn_alloc(struct ccomComm *comm, struct net_group *g, int idx,
				   int nsocks, size_t chunk)
{
	struct net_conn *c = calloc(1, sizeof(*c));
	int i;

	if (!c)
		return NULL;
	c->group = g;
	g->conns[g->nconns++] = c;
	g->by_peer[idx] = c;
	c->idx = idx;
	c->base.ops = &ccom_transport_net_socket;
	c->base.peer = g->peer_rank[idx];
	c->comm = comm;
	c->nsocks = nsocks;
	c->chunk = chunk;
	c->tx.left = chunk;
	c->rx.left = chunk;
	c->probe_fd = -1;
	atomic_init(&c->state, NET_IDLE);
	for (i = 0; i <= CCOM_NET_MAX_SOCKS; i++)
		c->fds[i] = -1;
	return c;
}

/* Where the data listener goes: topo/'s choice (comm->tcp_nic), else our bootstrap address; port 0. */
static int local_addr(const struct ccomComm *comm, union ccom_sockaddr *a)
{
	const struct sockaddr_in6 *b = comm->tcp_nic.addr.sin6_family ? &comm->tcp_nic.addr :
				       &comm->peers[comm->rank].listen_addr;

	memset(a, 0, sizeof(*a));
	if (b->sin6_family == AF_INET) {
		memcpy(&a->sin, b, sizeof(a->sin));
	} else if (b->sin6_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&b->sin6_addr)) {
		a->sin.sin_family = AF_INET;
		memcpy(&a->sin.sin_addr, &b->sin6_addr.s6_addr[12], 4);
	} else if (b->sin6_family == AF_INET6) {
		a->sin6 = *b;
	} else {
		ccom_set_last_error("net_socket: rank %d has no bootstrap address (family %d); init must fill peer info first",
				    comm->rank, b->sin6_family);
		return -EINVAL;
	}
	if (a->sa.sa_family == AF_INET)
		a->sin.sin_port = 0;
	else
		a->sin6.sin6_port = 0;
	return 0;
}

struct net_params {
	int nsocks;
	size_t chunk;
	enum net_connect connect;
	int64_t timeout_us;
	int64_t deadline;
};

/* CCOM_NET_CONNECT, or -1 after an error sentence. */
static int read_connect_mode(void)
{
	const char *v = ccom_param_str("CCOM_NET_CONNECT");
	int m;

	if (!v || !*v)
		return NET_CONNECT_AUTO;
	for (m = NET_CONNECT_EAGER; m <= NET_CONNECT_AUTO; m++)
		if (!strcmp(v, net_connect_name[m]))
			return m;
	ccom_set_last_error("net_socket: CCOM_NET_CONNECT=%s is not a choice; use eager, lazy or auto",
			    v);
	return -1;
}

static int read_params(const struct ccomComm *comm, struct net_params *p)
{
	int64_t ns = ccom_param_int("CCOM_NSOCKS");
	int64_t ch = ccom_param_int("CCOM_NET_CHUNK");
	int64_t tmo = comm->config.timeoutSec > 0 ? comm->config.timeoutSec :
		      ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT");
	int mode = read_connect_mode();

	if (ns < 1 || ns > CCOM_NET_MAX_SOCKS) {
		ccom_set_last_error("net_socket: CCOM_NSOCKS=%lld is out of range; use 1 to %d",
				    (long long)ns, CCOM_NET_MAX_SOCKS);
		return -EINVAL;
	}
	if (ch < NET_MIN_CHUNK || ch > NET_MAX_CHUNK) {
		ccom_set_last_error("net_socket: CCOM_NET_CHUNK=%lld is out of range; use %d to %d bytes",
				    (long long)ch, NET_MIN_CHUNK, NET_MAX_CHUNK);
		return -EINVAL;
	}
	if (mode < 0)
		return -EINVAL;
	p->nsocks = (int)ns;
	p->chunk = (size_t)ch;
	p->connect = (enum net_connect)mode;
	p->timeout_us = (tmo > 0 ? tmo : 300) * 1000000;
	p->deadline = ccom_now_us() + p->timeout_us;
	return 0;
}

/*
 * Every rank's card, by one allgather over the bootstrap (log2(n) rounds):
 * a message to each remote peer would open O(n^2) bootstrap connections
 * (256 ranks as 16 hosts: 18.7 s of a 21 s connect stage).  Collective:
 * either every rank has net_socket peers or none has (ranks on other
 * hosts, or every rank with CCOM_TRANSPORT=net), so all ranks get here.
 */
static int exchange_cards(struct ccomComm *comm, const int *peers, int npeers,
			  const struct net_card *mine, struct net_card *theirs,
			  enum net_connect *mode, int *max_npeers)
{
	struct net_card *all = calloc((size_t)comm->nranks, sizeof(*all));
	int i, err;

	if (!all)
		return -ENOMEM;
	all[comm->rank] = *mine;
	err = ccom_bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
	for (i = 0; !err && i < npeers; i++) {
		theirs[i] = all[peers[i]];
		if (theirs[i].version != NET_WIRE_VERSION || theirs[i].nsocks < 1 ||
		    theirs[i].nsocks > CCOM_NET_MAX_SOCKS || theirs[i].chunk != mine->chunk) {
			ccom_set_last_error("net_socket: peer rank %d runs an incompatible TCP transport (wire version %u, %d sockets, chunk %u; ours %u, chunk %u); use one libccom build and the same CCOM_NET_CHUNK on every rank",
					    peers[i], theirs[i].version, theirs[i].nsocks,
					    theirs[i].chunk, NET_WIRE_VERSION, mine->chunk);
			err = -EBADE;
		}
	}
	/*
	 * The connect mode is one decision for the whole communicator, made
	 * from the same cards on every rank: an eager rank would wait at
	 * setup for a lazy peer that only connects in its first operation.
	 */
	*max_npeers = 0;
	for (i = 0; !err && i < comm->nranks; i++) {
		if (all[i].version != NET_WIRE_VERSION)
			continue;
		if (all[i].connect != mine->connect) {
			ccom_set_last_error("net_socket: rank %d has CCOM_NET_CONNECT=%s but rank %d has %s; set the same value on every rank",
					    i, all[i].connect <= NET_CONNECT_AUTO ?
					    net_connect_name[all[i].connect] : "?",
					    comm->rank, net_connect_name[mine->connect]);
			err = -EBADE;
		}
		if (all[i].npeers > *max_npeers)
			*max_npeers = all[i].npeers;
	}
	*mode = (enum net_connect)mine->connect;
	if (*mode == NET_CONNECT_AUTO)
		*mode = *max_npeers > NET_AUTO_LAZY_PEERS ? NET_CONNECT_LAZY : NET_CONNECT_EAGER;
	free(all);
	return err;
}

bool net_source_addr(const struct ccomComm *comm, const union ccom_sockaddr *to,
		     union ccom_sockaddr *src)
{
	/* topo/'s interface only when the peer is on its subnet: else the kernel routes. */
	return comm->tcp_nic.prefix > 0 && !local_addr(comm, src) &&
	       ccom_addr_in_subnet(to, src, comm->tcp_nic.prefix);
}

/* One conn per peer, all in one group; READY only once connected. */
static int make_conns(struct ccomComm *comm, const int *peers, int npeers,
		      struct ccom_transport_conn **conns, const struct net_card *cards,
		      const struct net_params *p, struct net_group **out)
{
	struct net_group *g = group_alloc(peers, npeers);
	int i;

	for (i = 0; i < npeers; i++) {
		int ns = cards[i].nsocks < p->nsocks ? cards[i].nsocks : p->nsocks;
		struct net_conn *c = g ? conn_alloc(comm, g, i, ns, p->chunk) : NULL;

		if (!c) {
			if (g && !g->nconns)
				group_free(g);
			ccom_set_last_error("net_socket: out of memory for the connection to peer rank %d",
					    peers[i]);
			return -ENOMEM;
		}
		c->addr = cards[i].addr;
		memcpy(c->peer_nonce, cards[i].nonce, sizeof(c->peer_nonce));
		conns[i] = &c->base;
	}
	g->connect_tmo_us = p->timeout_us;
	*out = g;
	return 0;
}

/*
 * Before closing after a failure, tell every live peer which rank failed
 * (best effort, never blocks: 16 bytes always fit an idle socket buffer).
 */
static void send_notes(struct ccom_transport_conn **conns, int npeers)
{
	struct net_note note = { .magic = NET_NOTE_MAGIC };
	struct net_conn *c;
	int i;

	for (i = 0; i < npeers; i++) {
		c = conns[i] ? to_net(conns[i]) : NULL;
		if (!c || c->dead || c->group->culprit < 0 || c->fds[c->nsocks] < 0 ||
		    atomic_load(&c->state) != NET_READY)
			continue;
		note.culprit = c->group->culprit;
		if (send(c->fds[c->nsocks], &note, sizeof(note), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			ccom_trace(CCOM_SUBSYS_NET, "net_socket: no failure note to rank %d: %s",
				   c->base.peer, strerror(errno));
	}
}

/*
 * ccomCommRevoke() from any thread: note the root cause (or this rank
 * itself: a revoke, not a death) on the control socket, then shut every
 * socket down so the peer's waits end at once.  The fds stay open (the
 * progress thread may be using them) until teardown closes them.
 */
static void net_revoke(struct ccomComm *comm, struct ccom_transport_conn *conn)
{
	struct net_conn *c = to_net(conn);
	struct net_note note = { .magic = NET_NOTE_MAGIC };
	int i, first = ccom_proxy_first_failed(comm);

	if (atomic_load(&c->state) != NET_READY) {
		net_lazy_revoke(c);
		return;
	}
	if (c->group->lazy)
		net_lazy_revoke(c);	/* its listener: peers on their way fail at once */
	note.culprit = first >= 0 ? first : comm->rank;
	if (c->fds[c->nsocks] >= 0 &&
	    send(c->fds[c->nsocks], &note, sizeof(note), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		ccom_trace(CCOM_SUBSYS_NET, "net_socket: no revoke note to rank %d: %s",
			   c->base.peer, strerror(errno));
	for (i = 0; i <= c->nsocks; i++)
		if (c->fds[i] >= 0)
			shutdown(c->fds[i], SHUT_RDWR);
}

static void net_teardown(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers)
{
	int i;

	(void)comm;
	if (!conns)
		return;
	send_notes(conns, npeers);
	for (i = 0; i < npeers; i++) {
		conn_free(conns[i] ? to_net(conns[i]) : NULL);
		conns[i] = NULL;
	}
}

static int net_setup(struct ccomComm *comm, const int *peers, int npeers,
		     struct ccom_transport_conn **conns)
{
	struct net_card mine = { .version = NET_WIRE_VERSION }, *cards;
	struct net_group *g = NULL;
	enum net_connect mode;
	struct net_params p;
	int lfd = -1, err, max_npeers;
	char as[96], tos[16] = "system default";

	if (npeers <= 0)
		return 0;
	err = read_params(comm, &p);
	if (!err)
		err = local_addr(comm, &mine.addr);
	if (err)
		return err;
	mine.nsocks = p.nsocks;
	mine.chunk = (uint32_t)p.chunk;
	mine.connect = p.connect;
	mine.npeers = npeers;
	ccom_random_bytes(mine.nonce, sizeof(mine.nonce));
	cards = calloc(npeers, sizeof(*cards));
	if (!cards)
		return -ENOMEM;
	memset(conns, 0, npeers * sizeof(*conns));
	err = ccom_sock_listen(&mine.addr, 4096, &lfd);
	if (err == -EMFILE || err == -ENFILE) {
		net_fd_exhausted(comm, "socket", -1, -err);
		goto out_free_cards;
	}
	if (err) {
		ccom_set_last_error("net_socket: cannot listen on %s: %s; check CCOM_SOCKET_IFNAME",
				    ccom_addr_str(&mine.addr, as, sizeof(as)), strerror(-err));
		goto out_free_cards;
	}
	err = exchange_cards(comm, peers, npeers, &mine, cards, &mode, &max_npeers);
	if (!err)
		err = make_conns(comm, peers, npeers, conns, cards, &p, &g);
	if (!err)
		memcpy(g->nonce, mine.nonce, sizeof(g->nonce));
	if (!err && mode == NET_CONNECT_LAZY) {
		/* The listener lives with the group; pairs connect in their first operation. */
		g->lazy = true;
		g->lfd = lfd;
		lfd = -1;
	} else if (!err) {
		err = net_connect_eager(comm, peers, npeers, conns, lfd, p.deadline);
	}
	if (!err)
		net_spin_policy(comm, g);
	if (ccom_net_socket_tos(comm) >= 0)
		snprintf(tos, sizeof(tos), "%#x", ccom_net_socket_tos(comm));
	if (err)
		net_teardown(comm, conns, npeers);
	else
		ccom_info(CCOM_SUBSYS_NET, "net_socket: rank %d %s %d peer(s) from %s (CCOM_NET_CONNECT=%s%s, %d remote peers at most per rank, auto is lazy above %d), %d socket(s) per peer, %zu-byte pieces, TOS %s",
			  comm->rank, mode == NET_CONNECT_LAZY ? "connects lazily to" : "connected to",
			  npeers, ccom_addr_str(&mine.addr, as, sizeof(as)),
			  net_connect_name[p.connect],
			  p.connect == NET_CONNECT_AUTO ? (mode == NET_CONNECT_LAZY ? ": lazy" : ": eager") : "",
			  max_npeers, NET_AUTO_LAZY_PEERS, p.nsocks, p.chunk, tos);
	if (lfd >= 0)
		close(lfd);
out_free_cards:
	free(cards);
	return err;
}

const struct ccom_transport_ops ccom_transport_net_socket = {
	.name = "net_socket",
	.setup = net_setup,
	.send = net_send,
	.recv = net_recv,
	.wait = net_wait,
	.teardown = net_teardown,
	.revoke = net_revoke,
	.idle_passes = 4,
};
