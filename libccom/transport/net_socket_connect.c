// SPDX-License-Identifier: MIT
/*
 * net_socket_connect.c - how the TCP transport connects a pair of ranks:
 * all at setup (CCOM_NET_CONNECT=eager, net_connect_eager()), or lazily
 * (CCOM_NET_CONNECT=lazy): a pair of ranks is connected the first time an
 * operation calls ->send or ->recv on it, instead of the full mesh at
 * init (which needs (CCOM_NSOCKS + 1) descriptors per remote peer and
 * made connect the largest part of init above a few hundred ranks).
 *
 * Both sides of a pair always need it in the same operation (collectives
 * are symmetric, so are Send/Recv pairs).  The rules are the eager ones:
 * the higher rank opens the nsocks + 1 sockets towards the lower rank's
 * listener (kept open for the communicator's life) and sends the hello
 * {comm magic, comm hash, rank, socket index}; the lower rank accepts and
 * files each connection under its (peer, socket) from the hello.  An
 * accepting rank files connections for whichever peer they come from:
 * a peer a later step of the same operation needs, or the next one.
 *
 * Nothing blocks: connect() is nonblocking and finishes in later calls,
 * accepted connections whose hello is still on its way wait in
 * group->pending, and ->wait sleeps on the connecting sockets, the
 * listener, the pending connections and the probe (net_lazy_watch()).
 * Abort and CCOM_OP_TIMEOUT are the caller's (coll/ checks them while it
 * retries); the connection has its own deadline (the communicator's
 * timeout, as at eager setup) with a sentence naming the peer.
 *
 * Failures: the listener of a rank closes when it exits, dies or revokes
 * the communicator (net_lazy_revoke() stops it listening), so a connect
 * that is refused names the peer at once; the accepting side, which has
 * nothing to watch, probes the peer's listener every NET_LIVENESS_US
 * while it waits (a refused probe means the same).  A probe is a
 * connection closed before any hello: the peer drops it silently.
 *
 * Eager: the higher rank of each pair connects, the lower accepts; each
 * connection starts with the same hello, and the accepting side drops
 * connections with a wrong hello and keeps waiting.  Connect never waits
 * for the peer's accept (the kernel completes the handshake), so "connect
 * all, then accept all" cannot deadlock.
 *
 * The data path's side (net_ensure_ready(), net_take_early(),
 * net_flush_early(), net_group_progress()): a send on a pair that is not
 * connected yet keeps its first bytes (NET_EARLY_BYTES), which go out
 * first once it is, and every conn of the group on its way is advanced on
 * each call, whichever conn the call is for.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "proxy/proxy.h"
#include "proxy/xfer.h"
#include "transport/net_socket_private.h"
#include "transport/net_tclass.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

/* An accepted connection must deliver its hello within this (as at eager setup). */
#define NET_HELLO_TIMEOUT_US 5000000LL
/* The accepting side checks that a peer it waits for still listens this often. */
#define NET_LIVENESS_US 500000LL
/* A probe whose handshake takes longer (SYN dropped: full backlog) is given up. */
#define NET_PROBE_GIVE_UP_US 3000000LL

int net_fd_exhausted(const struct ccomComm *comm, const char *what, int peer, int err)
{
	char who[48] = "";

	if (peer >= 0)
		snprintf(who, sizeof(who), " towards peer rank %d", peer);
	ccom_set_last_error("net_socket: rank %d ran out of file descriptors (%s: %s)%s; raise the limit (ulimit -n, RLIMIT_NOFILE), or need fewer: CCOM_NET_CONNECT=lazy connects only the peers an operation uses, CCOM_NSOCKS=1 opens 2 sockets per peer instead of CCOM_NSOCKS + 1",
			    comm->rank, what, strerror(err), who);
	return -err;
}

static bool complete(const struct net_conn *c)
{
	int s;

	for (s = 0; s <= c->nsocks; s++)
		if (c->fds[s] < 0 || (c->base.peer < c->comm->rank &&
				      (!c->connected[s] || c->hello_off[s] < sizeof(struct net_hello))))
			return false;
	return true;
}

/* The conn gives up with -@err (its sentence is set): later calls return it at once. */
static int fail(struct net_conn *c, int err)
{
	c->err = err;
	atomic_store(&c->state, NET_FAILED);
	return err;
}

/* The peer's listener is gone: it exited, died or revoked the communicator. */
static int peer_refused(struct net_conn *c, const char *what)
{
	char as[96];

	ccom_set_last_error("net_socket: peer rank %d at %s %s (its data port is closed): that rank died, aborted, or revoked or destroyed the communicator before this operation connected to it",
			    c->base.peer, ccom_addr_str(&c->addr, as, sizeof(as)), what);
	c->dead = true;
	if (c->group->culprit < 0)
		c->group->culprit = c->base.peer;
	ccom_proxy_note_failed(c->comm, c->base.peer);
	return fail(c, -ECONNRESET);
}

/* A nonblocking TCP socket with its connect() under way; -errno if none. */
static int start_connect(const struct net_conn *c, int *fd, bool *done)
{
	union ccom_sockaddr src;
	bool from = net_source_addr(c->comm, &c->addr, &src);
	int err = ccom_sock_start_connect(&c->addr, from ? &src : NULL, fd, done);

	if (!err)
		ccom_net_socket_set_tos(c->comm, *fd);
	return err;
}

/* 1: the handshake of @fd ended (*err: its SO_ERROR), 0: still under way. */
static int connect_done(int fd, int *err)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(*err);

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &len))
		*err = errno;
	return 1;
}

/* The higher rank's side: open the sockets, finish their handshakes, send the hellos. */
static int connect_step(struct net_conn *c)
{
	struct ccomComm *comm = c->comm;
	struct net_hello h;
	char as[96];
	int s, err;

	for (s = 0; s <= c->nsocks; s++) {
		if (c->fds[s] < 0) {
			err = start_connect(c, &c->fds[s], &c->connected[s]);
			if (err == -EMFILE || err == -ENFILE)
				return fail(c, net_fd_exhausted(comm, "socket", c->base.peer, -err));
			if (err == -ECONNREFUSED)
				return peer_refused(c, "refused the TCP connection");
			if (err)
				goto cannot;
		}
		if (!c->connected[s]) {
			if (!connect_done(c->fds[s], &err))
				continue;
			if (err == ECONNREFUSED || err == ECONNRESET)
				return peer_refused(c, "refused the TCP connection");
			if (err) {
				err = -err;
				goto cannot;
			}
			c->connected[s] = true;
		}
		while (c->hello_off[s] < sizeof(h)) {
			ssize_t r;

			net_hello_fill(c, s, &h);
			r = send(c->fds[s], (const char *)&h + c->hello_off[s],
				 sizeof(h) - c->hello_off[s], MSG_DONTWAIT | MSG_NOSIGNAL);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (r < 0 && (errno == ECONNRESET || errno == EPIPE))
				return peer_refused(c, "reset the TCP connection");
			if (r < 0) {
				err = -errno;
				goto cannot;
			}
			c->hello_off[s] += (uint8_t)r;
		}
	}
	return 0;
cannot:
	ccom_set_last_error("net_socket: cannot connect socket %d to peer rank %d at %s: %s; check that the peer is alive and that CCOM_SOCKET_IFNAME selects an interface both hosts can reach",
			    s, c->base.peer, ccom_addr_str(&c->addr, as, sizeof(as)), strerror(-err));
	return fail(c, err);
}

static struct net_conn *conn_of_rank(struct net_group *g, int rank)
{
	int lo = 0, hi = g->npeers - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (g->peer_rank[mid] == rank)
			return g->by_peer[mid];
		if (g->peer_rank[mid] < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* What a hello's MAC covers: its fields before the MAC and the accepting rank's @nonce. */
#define NET_HELLO_SIGNED (offsetof(struct net_hello, mac) + NET_NONCE_BYTES)

static void hello_signed(const struct net_hello *h, const uint8_t *nonce,
			 unsigned char m[NET_HELLO_SIGNED])
{
	memcpy(m, h, offsetof(struct net_hello, mac));
	memcpy(m + offsetof(struct net_hello, mac), nonce, NET_NONCE_BYTES);
}

void net_hello_fill(const struct net_conn *c, int sock, struct net_hello *h)
{
	const struct ccomComm *comm = c->comm;
	unsigned char m[NET_HELLO_SIGNED];

	memset(h, 0, sizeof(*h));
	h->magic = comm->magic;
	h->comm_hash = comm->comm_hash;
	h->rank = comm->rank;
	h->sock = sock;
	h->to = c->base.peer;
	h->version = NET_WIRE_VERSION;
	hello_signed(h, c->peer_nonce, m);
	ccom_bootstrap_data_mac(comm->bootstrap, m, sizeof(m), h->mac);
}

/*
 * Why the hello @h of a connection to this rank is not one to file, or
 * NULL with *@out the conn whose socket h->sock it is.  The MAC proves
 * the sender holds the id's secret and wrote it for this rank, this socket
 * and this setup (our card nonce); a socket filed once is never refiled,
 * so a replay of a hello already used takes nothing.
 */
static const char *hello_reject(struct net_group *g, struct ccomComm *comm,
				const struct net_hello *h, struct net_conn **out)
{
	unsigned char m[NET_HELLO_SIGNED];
	struct net_conn *c;

	if (h->magic != comm->magic || h->comm_hash != comm->comm_hash)
		return "its magic or communicator hash is not this communicator's";
	if (h->version != NET_WIRE_VERSION)
		return "it has another wire version";
	if (h->to != comm->rank || h->rank <= comm->rank || !(c = conn_of_rank(g, h->rank)))
		return "it names no higher peer rank of this rank's";
	if (h->sock < 0 || h->sock > c->nsocks)
		return "its socket index is out of range";
	hello_signed(h, g->nonce, m);
	if (!ccom_bootstrap_data_mac_ok(comm->bootstrap, m, sizeof(m), h->mac))
		return "its MAC is wrong (the sender does not hold this job's unique id, or replays a hello of another setup)";
	if (c->fds[h->sock] >= 0)
		return "that socket is connected already (a replayed hello)";
	if (atomic_load_explicit(&c->state, memory_order_relaxed) == NET_FAILED)
		return "the connection to that peer failed already";
	*out = c;
	return NULL;
}

/*
 * One WARN per dropped connection for the first 64, then one per 1000:
 * a flood must not flood the log too.
 */
static void drop_note(struct net_group *g, const struct ccomComm *comm,
		      const union ccom_sockaddr *from, const char *fmt, const char *why,
		      const struct net_hello *h)
{
	char as[96], claim[64] = "";

	g->ndropped++;
	if (g->ndropped > 64 && g->ndropped % 1000)
		return;
	if (h)
		snprintf(claim, sizeof(claim), " claiming peer rank %d socket %d", h->rank, h->sock);
	ccom_warn("net_socket: rank %d dropped a connection from %s%s: %s%s; a foreign or stale process is connecting to this rank's data port (%llu dropped so far)",
		  comm->rank, ccom_addr_str(from, as, sizeof(as)), claim, fmt ? fmt : "", why,
		  (unsigned long long)g->ndropped);
}

/* File a connection whose hello arrived, or drop it (foreign, stale, duplicate). */
static void file_pending(struct net_group *g, struct net_pending *p, struct ccomComm *comm)
{
	const struct net_hello *h = &p->hello;
	struct net_conn *c = NULL;
	const char *why = hello_reject(g, comm, h, &c);

	if (!why) {
		c->fds[h->sock] = p->fd;
		p->fd = -1;
		ccom_net_socket_set_tos(comm, c->fds[h->sock]);
		ccom_trace(CCOM_SUBSYS_NET, "net_socket: rank %d filed socket %d of peer rank %d",
			   comm->rank, h->sock, h->rank);
		return;
	}
	drop_note(g, comm, &p->from, "its hello was refused: ", why, h);
}

/* Remove pending connection @i, keeping the others in accept order. */
static void pending_remove(struct net_group *g, int i)
{
	if (g->pending[i].fd >= 0)
		close(g->pending[i].fd);
	memmove(&g->pending[i], &g->pending[i + 1],
		(size_t)(g->npending - i - 1) * sizeof(*g->pending));
	g->npending--;
}

/*
 * Room for one more accepted connection: at NET_PENDING_MAX (or with no
 * descriptor left, @force), the oldest one if it waited long enough
 * (NET_PENDING_MIN_AGE_US; a peer's hello comes within a round trip) is
 * dropped.  False: leave the connection in the kernel's backlog for now.
 */
static bool pending_room(struct net_group *g, const struct ccomComm *comm, int64_t now,
			 bool force)
{
	if (!force && g->npending < NET_PENDING_MAX)
		return true;
	if (!g->npending || now - g->pending[0].since_us < NET_PENDING_MIN_AGE_US)
		return false;
	drop_note(g, comm, &g->pending[0].from,
		  force ? "out of descriptors, " : "too many connections wait for a hello, ",
		  "the oldest one without a hello gave way", NULL);
	pending_remove(g, 0);
	return true;
}

/*
 * Accept what the listener has (up to the cap), read the hellos that
 * came, file them in accept order (a hello replayed on a later connection
 * never overtakes the real one).  Running out of descriptors is no error
 * of the rank: the oldest pending connection gives way, or the rest waits
 * in the backlog.
 */
static int accept_step(struct net_group *g, struct ccomComm *comm, int64_t now)
{
	int i, fd, one = 1;
	socklen_t alen;
	bool emfile_logged = false;

	if (!g->pending) {
		g->pending = calloc(NET_PENDING_MAX, sizeof(*g->pending));
		if (!g->pending) {
			ccom_set_last_error("net_socket: out of memory for accepted connections");
			return -ENOMEM;
		}
		g->pending_cap = NET_PENDING_MAX;
	}
	while (pending_room(g, comm, now, false)) {
		union ccom_sockaddr from;

		memset(&from, 0, sizeof(from));
		alen = sizeof(from);
		fd = accept4(g->lfd, (struct sockaddr *)&from, &alen, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (pending_room(g, comm, now, true))
				continue;
			if (!emfile_logged && !(g->nemfile++ % 1000))
				ccom_warn("net_socket: rank %d has no file descriptor to accept a connection (%s); it stays in the backlog: raise ulimit -n, or a flood of connections is holding them",
					  comm->rank, strerror(errno));
			emfile_logged = true;
			break;
		}
		if (fd < 0)
			break;	/* EAGAIN; EINVAL once net_lazy_revoke() stopped the listener */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		g->pending[g->npending++] = (struct net_pending){ .fd = fd, .since_us = now,
								  .from = from };
	}
	for (i = 0; i < g->npending; i++) {
		struct net_pending *p = &g->pending[i];
		ssize_t r = recv(p->fd, (char *)&p->hello + p->got, sizeof(p->hello) - p->got,
				 MSG_DONTWAIT);
		bool drop = false;

		if (r > 0) {
			p->got += (unsigned int)r;
			if (p->got == sizeof(p->hello)) {
				file_pending(g, p, comm);
				drop = true;
			}
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* Closed before a hello: a peer's liveness probe (or a stale one). */
			if (p->got)
				drop_note(g, comm, &p->from, NULL, "it ended inside its hello", NULL);
			drop = true;
		} else if (now - p->since_us > NET_HELLO_TIMEOUT_US) {
			drop_note(g, comm, &p->from, NULL, "it sent no hello within 5 s", NULL);
			drop = true;
		}
		if (drop)
			pending_remove(g, i--);
	}
	return 0;
}

/*
 * The lower rank's side waits for connections; meanwhile it checks that
 * the peer still listens: a refused probe means it is gone.
 */
static int probe_step(struct net_conn *c, int64_t now)
{
	bool done;
	int err;

	if (c->probe_fd < 0) {
		if (now < c->probe_at_us)
			return 0;
		err = start_connect(c, &c->probe_fd, &done);
		if (err == -ECONNREFUSED)
			return peer_refused(c, "refuses connections");
		/* No descriptor or no route for a probe: the deadline still ends the wait. */
		c->probe_at_us = now;
		return 0;
	}
	done = connect_done(c->probe_fd, &err);
	if (!done && now - c->probe_at_us < NET_PROBE_GIVE_UP_US)
		return 0;
	close(c->probe_fd);
	c->probe_fd = -1;
	c->probe_at_us = now + NET_LIVENESS_US;
	if (done && (err == ECONNREFUSED || err == ECONNRESET))
		return peer_refused(c, "refuses connections");
	return 0;
}

/* Name the peer whose connection did not come in time. */
static int timed_out(struct net_conn *c)
{
	int s, have = 0;
	char as[96];

	for (s = 0; s <= c->nsocks; s++)
		have += c->fds[s] >= 0;
	if (c->base.peer < c->comm->rank)
		ccom_set_last_error("net_socket: rank %d could not connect to peer rank %d at %s within %lld s (%d of %d sockets open); check that the peer is alive and that CCOM_SOCKET_IFNAME selects an interface both hosts can reach",
				    c->comm->rank, c->base.peer,
				    ccom_addr_str(&c->addr, as, sizeof(as)),
				    (long long)(c->group->connect_tmo_us / 1000000), have,
				    c->nsocks + 1);
	else
		ccom_set_last_error("net_socket: rank %d timed out after %lld s waiting for TCP connections from peer rank %d (%d of %d arrived); that rank is stuck before this operation or cannot reach this rank's address (check CCOM_SOCKET_IFNAME and firewalls)",
				    c->comm->rank, (long long)(c->group->connect_tmo_us / 1000000),
				    c->base.peer, have, c->nsocks + 1);
	return fail(c, -ETIMEDOUT);
}

int net_lazy_progress(struct net_conn *c)
{
	struct net_group *g = c->group;
	int state = atomic_load_explicit(&c->state, memory_order_relaxed);
	int64_t now;
	int err;

	if (state == NET_READY)
		return 0;
	if (state == NET_FAILED)
		return c->err;
	/* Aborted or revoked: the caller's abort check ends the operation. */
	if (ccom_comm_aborted(c->comm))
		return 0;
	now = ccom_now_us();
	if (state == NET_IDLE) {
		state = c->base.peer < c->comm->rank ? NET_CONNECTING : NET_ACCEPTING;
		atomic_store(&c->state, state);
		g->active[g->nactive++] = c;
		c->deadline_us = now + g->connect_tmo_us;
		c->probe_at_us = now + NET_LIVENESS_US;
		ccom_trace(CCOM_SUBSYS_NET, "net_socket: rank %d %s peer rank %d", c->comm->rank,
			   state == NET_CONNECTING ? "connects to" : "waits for", c->base.peer);
	}
	if (state == NET_CONNECTING) {
		err = connect_step(c);
	} else {
		err = accept_step(g, c->comm, now);
		if (err)
			return fail(c, err);
		err = complete(c) ? 0 : probe_step(c, now);
	}
	if (err)
		return err;
	if (complete(c)) {
		if (c->probe_fd >= 0) {
			close(c->probe_fd);
			c->probe_fd = -1;
		}
		net_mark_ready(c);
		ccom_trace(CCOM_SUBSYS_NET, "net_socket: rank %d connected to peer rank %d", c->comm->rank,
			   c->base.peer);
		return 0;
	}
	return now > c->deadline_us ? timed_out(c) : 0;
}

int net_lazy_watch_max(const struct net_conn *c)
{
	return c->nsocks + 2;
}

int net_lazy_watch(struct pollfd *pfd, int n, struct net_conn *c, bool *lfd_added)
{
	struct net_group *g = c->group;
	int s, i;

	switch (atomic_load_explicit(&c->state, memory_order_relaxed)) {
	case NET_CONNECTING:
		for (s = 0; s <= c->nsocks; s++)
			if (c->fds[s] >= 0 && (!c->connected[s] ||
					       c->hello_off[s] < sizeof(struct net_hello)))
				pfd[n++] = (struct pollfd){ .fd = c->fds[s], .events = POLLOUT };
		break;
	case NET_ACCEPTING:
		if (c->probe_fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = c->probe_fd, .events = POLLOUT };
		if (*lfd_added)
			break;
		*lfd_added = true;
		pfd[n++] = (struct pollfd){ .fd = g->lfd, .events = POLLIN };
		for (i = 0; i < g->npending; i++)
			pfd[n++] = (struct pollfd){ .fd = g->pending[i].fd, .events = POLLIN };
		break;
	default:
		/* IDLE (first call still to come) or FAILED: the next send/recv says. */
		break;
	}
	return n;
}

/*
 * From any thread: stop listening (connections queued on the listener are
 * reset, later connects and the peers' probes are refused: their waits
 * end naming this rank) and shut down what this conn already opened.  The
 * descriptors stay open until teardown; nothing here blocks or frees.
 */
void net_lazy_revoke(struct net_conn *c)
{
	int s;

	if (c->group->lfd >= 0)
		shutdown(c->group->lfd, SHUT_RD);
	if (atomic_load(&c->state) == NET_READY)
		return;
	for (s = 0; s <= c->nsocks; s++)
		if (c->fds[s] >= 0)
			shutdown(c->fds[s], SHUT_RDWR);
}

void net_lazy_group_close(struct net_group *g)
{
	int i;

	for (i = 0; i < g->npending; i++)
		close(g->pending[i].fd);
	free(g->pending);
	g->pending = NULL;
	g->npending = 0;
	if (g->lfd >= 0)
		close(g->lfd);
	g->lfd = -1;
}

/* ---------------------------------------------------------------- eager: at setup */

static int connect_one(struct ccomComm *comm, struct net_conn *c, int idx,
		       const union ccom_sockaddr *to, int64_t deadline)
{
	struct net_hello h;
	union ccom_sockaddr src;
	bool from = net_source_addr(comm, to, &src);
	char as[96];
	int fd, err;

	err = ccom_sock_connect_from(to, from ? &src : NULL, deadline, &comm->abort_flag, &fd);
	if (err == -EMFILE || err == -ENFILE)
		return net_fd_exhausted(comm, "socket", c->base.peer, -err);
	if (!err) {
		c->fds[idx] = fd;
		err = ccom_sock_setup(fd);
		ccom_net_socket_set_tos(comm, fd);
	}
	if (!err) {
		net_hello_fill(c, idx, &h);
		err = ccom_sock_send_all(fd, &h, sizeof(h), deadline, &comm->abort_flag);
	}
	if (err)
		ccom_set_last_error("net_socket: cannot connect socket %d to peer rank %d at %s: %s%s",
				    idx, c->base.peer, ccom_addr_str(to, as, sizeof(as)),
				    strerror(-err),
				    err == -ECANCELED ? " (aborted)" :
				    "; check that the peer is alive and that CCOM_SOCKET_IFNAME selects an interface both hosts can reach");
	return err;
}

/* Sockets of higher peers filed so far. */
static int filed(const struct net_group *g, const struct ccomComm *comm)
{
	int i, s, n = 0;

	for (i = 0; i < g->nconns; i++)
		for (s = 0; g->conns[i]->base.peer > comm->rank && s <= g->conns[i]->nsocks; s++)
			n += g->conns[i]->fds[s] >= 0;
	return n;
}

/*
 * Accept and file connections the way the lazy side does (accept_step():
 * hellos checked, pending connections capped, the oldest giving way,
 * several at once), until @expected sockets are filed.
 */
static int accept_all(struct ccomComm *comm, struct net_group *g, int lfd, int expected,
		      int64_t deadline)
{
	int err = 0, n, i;

	g->lfd = lfd;
	while (filed(g, comm) < expected) {
		int64_t now = ccom_now_us();

		err = accept_step(g, comm, now);
		if (err)
			break;
		if (filed(g, comm) >= expected)
			break;
		if (ccom_comm_aborted(comm)) {
			err = -ECANCELED;
			break;
		}
		if (now > deadline) {
			err = -ETIMEDOUT;
			break;
		}
		n = 0;
		g->pfds[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < g->npending && n < g->pfds_cap; i++)
			g->pfds[n++] = (struct pollfd){ .fd = g->pending[i].fd, .events = POLLIN };
		poll(g->pfds, (nfds_t)n, CCOM_SOCK_POLL_MS);
	}
	for (i = 0; i < g->npending; i++)
		close(g->pending[i].fd);
	g->npending = 0;
	g->lfd = -1;		/* the caller's to close */
	return err;
}

/* Name the higher-ranked peers (they connect to us) that did not connect every socket. */
static void report_missing(const struct ccomComm *comm, const int *peers, int npeers,
			   struct ccom_transport_conn **conns, int err)
{
	char list[256];
	size_t off = 0;
	int i, s;

	list[0] = '\0';
	for (i = 0; i < npeers && off < sizeof(list) - 16; i++) {
		struct net_conn *c = to_net(conns[i]);

		if (peers[i] < comm->rank)
			continue;
		for (s = 0; s <= c->nsocks; s++)
			if (c->fds[s] < 0)
				break;
		if (s <= c->nsocks)
			off += snprintf(list + off, sizeof(list) - off, "%s%d", off ? "," : "",
					peers[i]);
	}
	ccom_set_last_error("net_socket: rank %d %s waiting for TCP connections from peer rank(s) %s; %s",
			    comm->rank, err == -ECANCELED ? "was aborted while" : "timed out",
			    list, err == -ECANCELED ? "ccomCommAbort was called" :
			    "those ranks died or cannot reach this rank's address (check CCOM_SOCKET_IFNAME and firewalls)");
}

/* Eager: connect every pair now (the higher rank connects, the lower accepts). */
int net_connect_eager(struct ccomComm *comm, const int *peers, int npeers,
		      struct ccom_transport_conn **conns, int lfd, int64_t deadline)
{
	int i, s, expected = 0, err;

	for (i = 0; i < npeers; i++)
		if (peers[i] > comm->rank)
			expected += to_net(conns[i])->nsocks + 1;	/* + the control socket */
	/* Higher rank connects: never waits for the accept, so no cycle. */
	for (i = 0; i < npeers; i++) {
		if (peers[i] > comm->rank)
			continue;
		for (s = 0; s <= to_net(conns[i])->nsocks; s++) {
			err = connect_one(comm, to_net(conns[i]), s, &to_net(conns[i])->addr, deadline);
			if (err)
				return err;
		}
	}
	err = expected ? accept_all(comm, to_net(conns[0])->group, lfd, expected, deadline) : 0;
	if (err && err != -ENOMEM)
		report_missing(comm, peers, npeers, conns, err);
	for (i = 0; !err && i < npeers; i++)
		net_mark_ready(to_net(conns[i]));
	return err;
}

/* ---------------------------------------------------------------- the data path's side */

/*
 * Lazy connection: a conn that is not READY yet advances its connection
 * instead of moving bytes.  1: READY, go on; 0: not yet (the caller
 * retries, its wait watches the connection); -errno.
 */
int net_ensure_ready(struct net_conn *c)
{
	int err;

	if (c->group->nactive)
		net_group_progress(c->group);
	if (atomic_load_explicit(&c->state, memory_order_relaxed) == NET_READY)
		return 1;
	err = net_lazy_progress(c);
	if (err)
		return err;
	return atomic_load_explicit(&c->state, memory_order_relaxed) == NET_READY;
}

/* The bytes taken before the connection existed go first: 1 when none is left. */
int net_flush_early(struct net_conn *c)
{
	ssize_t r;

	if (c->early_off == c->early_len)
		return 1;
	r = net_stream_send(c, c->early + c->early_off, c->early_len - c->early_off);
	if (r < 0)
		return (int)r;
	c->early_off += (unsigned int)r;
	c->tx_want = c->early_off < c->early_len;
	return !c->tx_want;
}

/*
 * Advance every conn of the group that is on its way, and flush the early
 * bytes of those that got there: a conn is needed by the peer as soon as
 * the peer's operation reaches it, while this rank's operation may be
 * busy with other conns (a send of size 0, a step on another peer) and
 * call nothing on it for a while.  Their errors stay on them (c->err).
 */
void net_group_progress(struct net_group *g)
{
	int i, st;

	for (i = 0; i < g->nactive; i++) {
		struct net_conn *a = g->active[i];

		st = atomic_load_explicit(&a->state, memory_order_relaxed);
		if (st != NET_READY && st != NET_FAILED && !a->dead)
			net_lazy_progress(a);
		st = atomic_load_explicit(&a->state, memory_order_relaxed);
		if (st == NET_READY && !a->dead)
			net_flush_early(a);
		if (st == NET_FAILED || a->dead ||
		    (st == NET_READY && a->early_off == a->early_len))
			g->active[i--] = g->active[--g->nactive];
	}
}

/*
 * Not connected yet: take the first bytes of the stream anyway, as a fresh
 * socket's buffer would (at most NET_EARLY_BYTES, and only in a
 * collective).  The collective signature (proxy/xfer.c) counts on it: a
 * receive-only side pushes its signature (a send) before it pulls the
 * peer's (a recv), and pushes only until the pull succeeds; a small
 * message goes out in one call with the signature, and a peer that gets
 * only the signature waits for ours before it sends, while we may wait for
 * its data.  Only conns that carry signatures: the op then pulls the
 * peer's signature on this conn before it ends (at the latest in
 * ccom_xfer_sig_end()), and that recv flushes these bytes.
 */
ssize_t net_take_early(struct net_conn *c, const void *buf, size_t size)
{
	size_t n;

	c->tx_want = true;
	if (!c->base.sig || !c->base.sig->sig.seq ||
	    c->base.sig_touch_seq != c->base.sig->sig.seq ||
	    c->early_len == sizeof(c->early))
		return 0;
	n = sizeof(c->early) - c->early_len < size ? sizeof(c->early) - c->early_len : size;
	memcpy(c->early + c->early_len, buf, n);
	c->early_len += (unsigned int)n;
	return (ssize_t)n;
}
