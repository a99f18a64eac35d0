// SPDX-License-Identifier: MIT
/*
 * msg.c - connections between ranks and the point-to-point messages by
 * (peer, tag) of bootstrap.h, with the progress that moves them.
 *
 * Connections between ranks: one ring connection to the next rank (and one
 * from the previous), plus one p2p connection per ordered pair of ranks,
 * opened lazily by the sender.  Every connection is first authenticated
 * (auth.h: the connector names its rank and kind, the acceptor challenges
 * it, both prove they hold the job's secret); ccom_bs_progress() then files
 * it (the ring one in bs->ring_recv_fd, a p2p one in bs->rx) or drops it,
 * one log line each.  A p2p
 * connection carries frames {tag, size, payload}; the receiver reads every
 * readable connection into a FIFO of unexpected messages while it waits,
 * so messages of one (peer, tag) keep their order and sends never wait for
 * the matching receive.  Of bootstrap/ this file calls auth.c only.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/socket.h"

#define BS_HELLO_WAIT_US 5000000	/* from the accept to a complete hello */
#define BS_ANSWER_WAIT_US 10000000	/* from the challenge to the answer */
/* Unauthenticated connections kept at once; beyond, the oldest (waited this long) gives way. */
#define BS_PENDING_MAX 64
#define BS_PENDING_MIN_AGE_US 1000000

/* ------------------------------------------------------------------ */
/* Lifecycle of the per-peer state                                     */

int ccom_bs_msg_init(struct ccom_bootstrap *bs)
{
	int i;

	bs->send_fds = calloc(bs->nranks, sizeof(*bs->send_fds));
	if (!bs->send_fds)
		return -ENOMEM;
	/* Before anything can fail: ccom_bs_msg_fini() must not close fd 0. */
	for (i = 0; i < bs->nranks; i++)
		bs->send_fds[i] = -1;
	bs->rx = calloc(bs->nranks, sizeof(*bs->rx));
	if (!bs->rx)
		return -ENOMEM;
	for (i = 0; i < bs->nranks; i++)
		bs->rx[i].fd = -1;
	return 0;
}

void ccom_bs_msg_fini(struct ccom_bootstrap *bs)
{
	struct bs_msg *m;
	int i;

	for (i = 0; bs->send_fds && i < bs->nranks; i++) {
		if (bs->send_fds[i] >= 0)
			close(bs->send_fds[i]);
	}
	for (i = 0; bs->rx && i < bs->nranks; i++) {
		if (bs->rx[i].fd >= 0)
			close(bs->rx[i].fd);
		free(bs->rx[i].msg);
	}
	for (i = 0; i < bs->npend; i++)
		close(bs->pend[i].fd);
	free(bs->pend);
	while ((m = bs->q_head)) {
		bs->q_head = m->next;
		free(m);
	}
	free(bs->send_fds);
	free(bs->rx);
}

/* ------------------------------------------------------------------ */
/* Messages of one peer connection                                    */

const char *ccom_bs_err_str(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return "timed out";
	case -ECANCELED:
		return "aborted by ccomCommAbort()";
	case -ECONNRESET:
		return "the peer closed the connection (it failed, aborted or exited)";
	case -ECONNREFUSED:
		return "connection refused (the peer exited, or its address is not reachable from here)";
	case -EBADMSG:
		return "the answer is not a ccom bootstrap message (wrong magic): the address belongs to another program or job";
	case -EKEYREJECTED:
		return "the peer failed authentication: it does not hold this job's unique id (its address belongs to another job or program)";
	case -EMSGSIZE:
		return "the peer sent a frame above the bootstrap's size limit (a different libccom build, or a broken peer): its connection was dropped";
	default:
		return ccom_errno_str(-rc);
	}
}

static void bs_enqueue(struct ccom_bootstrap *bs, struct bs_msg *m)
{
	m->next = NULL;
	if (bs->q_tail)
		bs->q_tail->next = m;
	else
		bs->q_head = m;
	bs->q_tail = m;
}

/* Pop the first queued message of (peer, tag), or NULL. */
static struct bs_msg *bs_dequeue(struct ccom_bootstrap *bs, int peer, uint32_t tag)
{
	struct bs_msg **pp, *prev = NULL;

	for (pp = &bs->q_head; *pp; prev = *pp, pp = &(*pp)->next) {
		struct bs_msg *m = *pp;

		if (m->peer != peer || m->tag != tag)
			continue;
		*pp = m->next;
		if (bs->q_tail == m)
			bs->q_tail = prev;
		return m;
	}
	return NULL;
}

/*
 * The connection from @peer broke the protocol (@err): stop reading it,
 * once with a log line naming the peer; a receive from @peer fails with @err.
 */
static void bs_rx_fail(struct ccom_bootstrap *bs, int peer, int err)
{
	struct bs_rx *rx = &bs->rx[peer];

	ccom_warn("Bootstrap: rank %d dropped the p2p connection from rank %d: a frame of %llu bytes (tag %u), above this job's limit of %zu (a different libccom build, or a broken peer)",
		  bs->rank, peer, (unsigned long long)rx->hdr.size, rx->hdr.tag,
		  ccom_bs_max_frame(bs));
	shutdown(rx->fd, SHUT_RDWR);
	rx->closed = 1;
	rx->err = err;
}

/* Read what is available from @peer's connection into the queue. */
static int bs_rx_progress(struct ccom_bootstrap *bs, int peer)
{
	struct bs_rx *rx = &bs->rx[peer];
	ssize_t n;

	for (;;) {
		if (rx->hdr_got < sizeof(rx->hdr)) {
			n = recv(rx->fd, (char *)&rx->hdr + rx->hdr_got,
				 sizeof(rx->hdr) - rx->hdr_got, 0);
			if (n <= 0)
				break;
			rx->hdr_got += n;
			if (rx->hdr_got < sizeof(rx->hdr))
				continue;
			if (rx->hdr.size > ccom_bs_max_frame(bs)) {
				bs_rx_fail(bs, peer, -EMSGSIZE);
				return 0;
			}
			rx->msg = malloc(sizeof(*rx->msg) + rx->hdr.size);
			if (!rx->msg)
				return -ENOMEM;
			rx->msg->peer = peer;
			rx->msg->tag = rx->hdr.tag;
			rx->msg->size = rx->hdr.size;
			rx->got = 0;
		}
		if (rx->got < rx->hdr.size) {
			n = recv(rx->fd, rx->msg->data + rx->got, rx->hdr.size - rx->got, 0);
			if (n <= 0)
				break;
			rx->got += n;
		}
		if (rx->got == rx->hdr.size) {
			bs_enqueue(bs, rx->msg);
			rx->msg = NULL;
			rx->hdr_got = 0;
		}
	}
	if (n == 0 || errno == ECONNRESET) {
		rx->closed = 1;
		return 0;
	}
	return errno == EAGAIN || errno == EINTR ? 0 : -errno;
}

/* One log line per dropped connection, naming the peer. */
static void bs_drop(struct ccom_bootstrap *bs, int i, const char *why)
{
	char a[80];

	ccom_warn("Bootstrap: rank %d dropped connection from %s: %s", bs->rank,
		  ccom_addr_str(&bs->pend[i].from, a, sizeof(a)), why);
	close(bs->pend[i].fd);
	bs->pend[i] = bs->pend[--bs->npend];
}

/*
 * A connection that gave way to a flood (bs_pending_room()): logged like
 * bs_drop() for the first few of the process, then one per 1000, so a
 * flood does not flood the log too.
 */
static void bs_drop_flood(struct ccom_bootstrap *bs, int i, const char *why)
{
	static atomic_uint drops;
	unsigned int n = atomic_fetch_add(&drops, 1) + 1;
	char a[80];

	if (n <= 16 || !(n % 1000))
		ccom_warn("Bootstrap: rank %d dropped connection from %s: %s (%u such by this process so far)",
			  bs->rank, ccom_addr_str(&bs->pend[i].from, a, sizeof(a)), why, n);
	close(bs->pend[i].fd);
	bs->pend[i] = bs->pend[--bs->npend];
}

/* An authenticated connection: file it as @p->ah says, or drop it. */
static void bs_classify(struct ccom_bootstrap *bs, int i)
{
	const struct bs_pending *p = &bs->pend[i];
	int who = p->ah.who;

	if (p->ah.role == CCOM_BS_RING) {
		if (bs->ring_recv_fd >= 0 || who != (bs->rank - 1 + bs->nranks) % bs->nranks) {
			ccom_warn("Bootstrap: rank %d dropped an unexpected ring connection from rank %d",
				  bs->rank, who);
			close(p->fd);
		} else {
			bs->ring_recv_fd = p->fd;
		}
	} else if (bs->rx[who].fd >= 0) {
		ccom_warn("Bootstrap: rank %d dropped a second p2p connection from rank %d", bs->rank,
			  who);
		close(p->fd);
	} else {
		bs->rx[who].fd = p->fd;
	}
	bs->pend[i] = bs->pend[--bs->npend];
}

/* The connector's hello is in: check it and send the challenge; 0 or the reason to drop. */
static const char *bs_challenge(struct ccom_bootstrap *bs, struct bs_pending *p)
{
	const struct ccom_bs_auth_hello *h = &p->ah;
	struct ccom_bs_auth_challenge ch;

	if (h->magic != bs->magic)
		return "wrong magic";
	if (h->type != CCOM_BS_AUTH)
		return "malformed hello (not the authentication of bootstrap wire version 2: another libccom build?)";
	if (h->wire != CCOM_BS_WIRE_VERSION)
		return "malformed hello (another bootstrap wire version: use the same libccom build on every rank)";
	if (h->who < 0 || h->who >= bs->nranks || (h->role != CCOM_BS_RING && h->role != CCOM_BS_P2P))
		return "malformed hello";
	ccom_bs_auth_challenge_init(&ch, bs->key, h);
	if (send(p->fd, &ch, sizeof(ch), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(ch))
		return "could not send the challenge";
	memcpy(p->nonce, ch.nonce, sizeof(p->nonce));
	p->answering = 1;
	p->got = 0;
	/* The answer's own window: a genuine connector may be slow to run on a loaded host. */
	p->since = ccom_now_us();
	return NULL;
}

/*
 * Read from pending connection @i: its hello, then (after the challenge)
 * its answer; file it once it proved the job's secret, drop it on EOF,
 * error, a failed proof, or when it takes longer than BS_HELLO_WAIT_US.
 */
static void bs_pending_progress(struct ccom_bootstrap *bs, int i, int readable)
{
	struct bs_pending *p = &bs->pend[i];
	char *buf = p->answering ? (char *)&p->ans : (char *)&p->ah;
	size_t want = p->answering ? sizeof(p->ans) : sizeof(p->ah);
	const char *why = NULL;

	if (readable) {
		ssize_t n = recv(p->fd, buf + p->got, want - p->got, 0);

		if (n > 0)
			p->got += n;
		else if (n == 0)
			why = p->answering ? "closed before its answer to the challenge" :
					     "closed before its hello";
		else if (errno != EAGAIN && errno != EINTR)
			why = strerror(errno);
	}
	if (!why && p->got == want && !p->answering) {
		why = bs_challenge(bs, p);
	} else if (!why && p->got == want) {
		if (!ccom_bs_auth_answer_ok(bs->key, &p->ah, p->nonce, &p->ans)) {
			why = CCOM_BS_AUTH_FAILED;
		} else {
			bs_classify(bs, i);
			return;
		}
	}
	if (!why && ccom_now_us() - p->since > (p->answering ? BS_ANSWER_WAIT_US : BS_HELLO_WAIT_US))
		why = p->answering ? "no answer to the challenge within 10 s" : "no hello within 5 s";
	if (why)
		bs_drop(bs, i, why);
}

/*
 * Room for one more unauthenticated connection: below BS_PENDING_MAX (and
 * with a descriptor, !@force) there is; else the one that waited longest
 * gives way if it waited BS_PENDING_MIN_AGE_US (a peer's hello and answer
 * take a round trip each).  0: leave the connection in the backlog.
 */
static int bs_pending_room(struct ccom_bootstrap *bs, int force)
{
	int64_t now = ccom_now_us();
	int i, old = -1;

	if (!force && bs->npend < BS_PENDING_MAX)
		return 1;
	for (i = 0; i < bs->npend; i++)
		if (old < 0 || bs->pend[i].since < bs->pend[old].since)
			old = i;
	if (old < 0 || now - bs->pend[old].since < BS_PENDING_MIN_AGE_US)
		return 0;
	bs_drop_flood(bs, old, force ? "no file descriptor left: the oldest unauthenticated connection gave way" :
		"too many unauthenticated connections: the oldest gave way");
	return 1;
}

/*
 * Accept the waiting connections, at most BS_PENDING_MAX unauthenticated
 * at a time.  Running out of file descriptors is no error of the rank (a
 * flood of connections must not fail it): the oldest unauthenticated one
 * gives way, or the connection stays in the backlog until one is free
 * (its sender's own deadline bounds its wait).
 */
static int bs_accept_all(struct ccom_bootstrap *bs)
{
	static atomic_uint emfiles;

	while (bs_pending_room(bs, 0)) {
		struct bs_pending p;
		int rc;

		memset(&p, 0, sizeof(p));
		rc = ccom_sock_accept(bs->listen_fd, 0, NULL, &p.fd, &p.from);
		if (rc == -EMFILE || rc == -ENFILE) {
			if (bs_pending_room(bs, 1))
				continue;
			if (!(atomic_fetch_add(&emfiles, 1) % 1000))
				ccom_warn("Bootstrap: rank %d has no file descriptor to accept a connection (%s); it waits in the backlog: raise ulimit -n, or a flood of connections holds them",
					  bs->rank, strerror(-rc));
			return 0;
		}
		if (rc)
			return 0;
		if (bs->npend == bs->pend_cap) {
			int cap = bs->pend_cap ? bs->pend_cap * 2 : 8;
			struct bs_pending *np = realloc(bs->pend, cap * sizeof(*np));

			if (!np) {
				close(p.fd);
				ccom_set_last_error("Bootstrap: rank %d: out of memory for a peer's connection",
						    bs->rank);
				return -ENOMEM;
			}
			bs->pend = np;
			bs->pend_cap = cap;
		}
		p.since = ccom_now_us();
		bs->pend[bs->npend++] = p;
	}
	return 0;
}

/*
 * Wait up to one poll slice for incoming connections and messages; queue
 * everything that arrived.  @wfd (or -1) is also polled for writability.
 */
int ccom_bs_progress(struct ccom_bootstrap *bs, int64_t deadline, int wfd, short wevents)
{
	int cap = bs->nranks + bs->npend + 2;
	struct pollfd *pfd;
	int *who;
	int n = 0, i, rc = 0, npend = bs->npend;
	int64_t left;

	if (atomic_load(bs->abort))
		return -ECANCELED;
	left = deadline - ccom_now_us();
	if (left <= 0)
		return -ETIMEDOUT;
	pfd = calloc(cap, sizeof(*pfd));
	who = calloc(cap, sizeof(*who));
	if (!pfd || !who) {
		rc = -ENOMEM;
		goto out_free;
	}
	pfd[n] = (struct pollfd){ .fd = bs->listen_fd, .events = POLLIN };
	who[n++] = -1;
	if (wfd >= 0) {
		pfd[n] = (struct pollfd){ .fd = wfd, .events = wevents };
		who[n++] = -2;
	}
	for (i = 0; i < bs->nranks; i++) {
		if (bs->rx[i].fd < 0 || bs->rx[i].closed)
			continue;
		pfd[n] = (struct pollfd){ .fd = bs->rx[i].fd, .events = POLLIN };
		who[n++] = i;
	}
	for (i = 0; i < npend; i++)
		pfd[n + i] = (struct pollfd){ .fd = bs->pend[i].fd, .events = POLLIN };
	if (poll(pfd, n + npend, left / 1000 + 1 < CCOM_SOCK_POLL_MS ? left / 1000 + 1 :
								       CCOM_SOCK_POLL_MS) < 0 &&
	    errno != EINTR) {
		rc = -errno;
		goto out_free;
	}
	for (i = 0; i < n && !rc; i++) {
		if (pfd[i].revents && who[i] >= 0)
			rc = bs_rx_progress(bs, who[i]);
	}
	/* Backwards: finishing entry i moves the last entry into its slot. */
	for (i = npend - 1; i >= 0; i--)
		bs_pending_progress(bs, i, pfd[n + i].revents != 0);
	if (pfd[0].revents && !rc)
		rc = bs_accept_all(bs);
out_free:
	free(pfd);
	free(who);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Point-to-point                                                      */

/*
 * Receive @len bytes on @fd into @buf, serving this rank's own listener and
 * connections meanwhile: the peer may be waiting for this rank's challenge
 * just as this rank waits for its (the ring connects every rank at once).
 */
static int bs_recv_progressing(struct ccom_bootstrap *bs, int fd, void *buf, size_t len,
			       int64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
		int rc;

		if (n > 0) {
			got += n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		rc = ccom_bs_progress(bs, deadline, fd, POLLIN);
		if (rc)
			return rc;
	}
	return 0;
}

int ccom_bs_connect_peer(struct ccom_bootstrap *bs, int peer, uint32_t type, int64_t deadline,
			 int *out)
{
	struct ccom_bs_auth_challenge ch;
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_auth_hello ah;
	int fd, rc;

	/*
	 * Every rank listens before it checks in, so a refused connection
	 * means the peer is gone (or its address is not reachable from here):
	 * no retry.
	 */
	rc = ccom_sock_connect_once(&bs->addrs[peer], deadline, bs->abort, &fd);
	if (rc)
		return rc;
	ccom_bs_auth_hello_init(&ah, bs->magic, type, bs->rank);
	rc = ccom_sock_send_all(fd, &ah, sizeof(ah), deadline, bs->abort);
	if (!rc)
		rc = bs_recv_progressing(bs, fd, &ch, sizeof(ch), deadline);
	if (!rc && ch.magic != bs->magic)
		rc = -EBADMSG;
	if (!rc && !ccom_bs_auth_challenge_ok(bs->key, &ah, &ch))
		rc = -EKEYREJECTED;
	if (!rc) {
		ccom_bs_auth_answer_init(&ans, bs->key, &ah, ch.nonce);
		rc = ccom_sock_send_all(fd, &ans, sizeof(ans), deadline, bs->abort);
	}
	if (rc) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

/* Send all of @buf on @fd, draining incoming messages whenever the socket is full. */
static int bs_send_draining(struct ccom_bootstrap *bs, int fd, const void *buf, size_t len,
			    int64_t deadline)
{
	size_t sent = 0;

	while (sent < len) {
		ssize_t w = send(fd, (const char *)buf + sent, len - sent, MSG_NOSIGNAL);
		int rc;

		if (w > 0) {
			sent += w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return errno == EPIPE ? -ECONNRESET : -errno;
		rc = ccom_bs_progress(bs, deadline, fd, POLLOUT);
		if (rc)
			return rc;
	}
	return 0;
}

int ccom_bs_send_locked(struct ccom_bootstrap *bs, int peer, int tag, const void *data,
			size_t size)
{
	struct ccom_bs_frame f = { .tag = (uint32_t)tag, .size = size };
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	int rc;

	if (size > ccom_bs_max_frame(bs)) {
		ccom_set_last_error("Bootstrap: rank %d cannot send %zu bytes (tag %d) to rank %d: above the bootstrap's frame limit of %zu bytes for %d ranks (an internal message too large)",
				    bs->rank, size, tag, peer, ccom_bs_max_frame(bs), bs->nranks);
		return -EMSGSIZE;
	}
	if (peer == bs->rank) {
		struct bs_msg *m = malloc(sizeof(*m) + size);

		if (!m)
			return -ENOMEM;
		m->peer = peer;
		m->tag = (uint32_t)tag;
		m->size = size;
		if (size)
			memcpy(m->data, data, size);
		bs_enqueue(bs, m);
		return 0;
	}
	if (bs->send_fds[peer] < 0) {
		rc = ccom_bs_connect_peer(bs, peer, CCOM_BS_P2P, deadline, &bs->send_fds[peer]);
		if (rc)
			goto err;
	}
	rc = bs_send_draining(bs, bs->send_fds[peer], &f, sizeof(f), deadline);
	if (!rc)
		rc = bs_send_draining(bs, bs->send_fds[peer], data, size, deadline);
	if (!rc)
		return 0;
err:
	{
		char a[80];

		ccom_set_last_error("Bootstrap: rank %d could not send %zu bytes (tag %d) to rank %d at %s: %s%s",
				    bs->rank, size, tag, peer,
				    ccom_addr_str(&bs->addrs[peer], a, sizeof(a)),
				    ccom_bs_err_str(rc),
				    rc == -ECONNREFUSED ? "; check CCOM_SOCKET_IFNAME on both ranks" : "");
	}
	/* A foreign peer, to the caller (ccomRemoteError), whatever the reason. */
	return rc == -EKEYREJECTED ? -EBADMSG : rc;
}

int ccom_bs_msg_consume(struct ccom_bootstrap *bs, struct bs_msg *m, int tag, void *data,
			size_t size)
{
	if (m->size != size) {
		ccom_set_last_error("Bootstrap: rank %d expected %zu bytes from rank %d (tag %d) but got %zu: the ranks disagree (different libccom builds or calls?)",
				    bs->rank, size, m->peer, tag, m->size);
		free(m);
		return -EPROTO;
	}
	if (size)
		memcpy(data, m->data, size);
	free(m);
	return 0;
}

int ccom_bs_recv_locked(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size)
{
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	struct bs_msg *m;
	int rc = 0;

	for (;;) {
		m = bs_dequeue(bs, peer, (uint32_t)tag);
		if (m)
			break;
		if (bs->rx[peer].closed) {
			rc = bs->rx[peer].err ? bs->rx[peer].err : -ECONNRESET;
			break;
		}
		rc = ccom_bs_progress(bs, deadline, -1, 0);
		if (rc)
			break;
	}
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d waiting for a message from rank %d (tag %d): %s%s",
				    bs->rank, peer, tag, ccom_bs_err_str(rc),
				    rc == -ETIMEDOUT ? " (CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	return ccom_bs_msg_consume(bs, m, tag, data, size);
}

int ccom_bs_check_peer(struct ccom_bootstrap *bs, int peer)
{
	if (peer < 0 || peer >= bs->nranks) {
		ccom_set_last_error("Bootstrap: peer %d out of range [0, %d)", peer, bs->nranks);
		return -EINVAL;
	}
	return 0;
}

int ccom_bootstrap_send(struct ccom_bootstrap *bs, int peer, int tag, const void *data,
			size_t size)
{
	int rc = ccom_bs_check_peer(bs, peer);

	if (rc)
		return rc;
	pthread_mutex_lock(&bs->lock);
	rc = ccom_bs_send_locked(bs, peer, tag, data, size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

int ccom_bootstrap_recv(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size)
{
	int rc = ccom_bs_check_peer(bs, peer);

	if (rc)
		return rc;
	pthread_mutex_lock(&bs->lock);
	rc = ccom_bs_recv_locked(bs, peer, tag, data, size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}
