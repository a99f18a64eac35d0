// SPDX-License-Identifier: MIT
/*
 * bootstrap.c - the rank side of the bootstrap: unique ids, the check-in
 * with the root, the socket ring and its all-gather, point-to-point
 * messages by (peer, tag) and barriers.
 *
 * Connections between ranks: one ring connection to the next rank (and one
 * from the previous), plus one p2p connection per ordered pair of ranks,
 * opened lazily by the sender.  A p2p connection carries frames
 * {tag, size, payload}; the receiver reads every readable connection into a
 * FIFO of unexpected messages while it waits, so messages of one (peer, tag)
 * keep their order and sends never wait for the matching receive.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/wire.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

/* Internal tags (all below CCOM_BOOTSTRAP_TAG_USER_BASE). */
#define BS_TAG_ALLGATHER_BASE 0x10	/* + round */
#define BS_TAG_BARRIER_BASE 0x50	/* + round */
#define BS_TAG_SUBSET_BASE 0x100	/* + caller's tag */
#define BS_HELLO_WAIT_US 5000000
#define BS_RING_ALLGATHER_MAX 8		/* address exchange on the ring up to this many ranks */

struct bs_msg {
	struct bs_msg *next;
	int peer;
	uint32_t tag;
	size_t size;
	char data[];
};

/* Receive state of the p2p connection from one peer. */
struct bs_rx {
	int fd;			/* -1: not connected yet */
	int closed;		/* peer closed it */
	struct ccom_bs_frame hdr;
	size_t hdr_got;
	struct bs_msg *msg;	/* payload being read */
	size_t got;
};

/* An accepted connection that has not sent its whole hello yet. */
struct bs_pending {
	int fd;
	size_t got;
	int64_t since;
	union ccom_sockaddr from;
	struct ccom_bs_conn_hello h;
};

struct ccom_bootstrap {
	int rank;
	int nranks;
	uint64_t magic;		/* comm magic of rank-to-rank connections */
	int64_t timeout_us;
	const atomic_int *abort;
	pthread_mutex_t lock;	/* serialises every operation on this bootstrap */
	int listen_fd;
	union ccom_sockaddr listen_addr;
	int ring_send_fd;
	int ring_recv_fd;
	union ccom_sockaddr *addrs;	/* listen address of every rank */
	int *send_fds;			/* p2p connection to each peer, -1 until used */
	struct bs_rx *rx;		/* p2p connection from each peer */
	struct bs_pending *pend;	/* accepted connections whose hello is incomplete */
	int npend;
	int pend_cap;
	struct bs_msg *q_head;		/* arrived, unmatched messages (FIFO) */
	struct bs_msg *q_tail;
};

/* ------------------------------------------------------------------ */
/* Identity announced to the root                                      */

uint64_t ccom_build_hash(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_BUILD_HASH"))
		return strtoull(ccom_param_str("CCOM_TEST_FAKE_BUILD_HASH"), NULL, 16);
	return CCOM_BUILD_HASH;
}

uint32_t ccom_version_code(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_VERSION"))
		return (uint32_t)ccom_param_int("CCOM_TEST_FAKE_VERSION");
	return CCOM_VERSION_CODE;
}

uint32_t ccom_abi_id(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_ABI"))
		return (uint32_t)ccom_param_int("CCOM_TEST_FAKE_ABI");
	return CCOM_ABI_COMPAT_ID;
}

/* ------------------------------------------------------------------ */
/* Unique id                                                           */

uint64_t ccom_bootstrap_id_magic(const ccomUniqueId *id)
{
	struct ccom_bs_id h;

	memcpy(&h, id->internal, sizeof(h));
	return h.magic;
}

int ccom_bootstrap_id_from_addr(const char *addr_str, const char *what, ccomUniqueId *id)
{
	struct ccom_bs_id h;
	char why[160];
	int rc;

	memset(&h, 0, sizeof(h));
	rc = ccom_addr_parse(addr_str, &h.root, why, sizeof(why));
	if (rc) {
		ccom_set_last_error("Invalid %s [%s] (%s), please use format: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>",
				    what, addr_str ? addr_str : "", why);
		return -EINVAL;
	}
	h.magic = CCOM_BS_FIXED_MAGIC;
	h.id_version = CCOM_BS_ID_VERSION;
	h.flags = CCOM_BS_ID_ROOT_AT_RANK0;
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &h, sizeof(h));
	return 0;
}

/* Listen socket on the selected interface, for the root or a rank. */
static int bs_listen(union ccom_sockaddr *addr, int *fd, const char *role)
{
	char ifname[64], why[400], a[80];
	int rc;

	rc = ccom_iface_select(addr, ifname, sizeof(ifname), why, sizeof(why));
	if (rc) {
		ccom_set_last_error("Bootstrap: %s", why);
		return rc == -EINVAL ? -EINVAL : -ENETDOWN;
	}
	rc = ccom_sock_listen(addr, SOMAXCONN, fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: cannot listen for the %s on %s: %s", role,
				    ccom_addr_str(addr, a, sizeof(a)), strerror(-rc));
		return rc;
	}
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : Using %s:%s for the %s", ifname,
		  ccom_addr_str(addr, a, sizeof(a)), role);
	return 0;
}

int ccom_bootstrap_get_unique_id(ccomUniqueId *id)
{
	if (ccom_param_is_set("CCOM_COMM_ID"))
		return ccom_bootstrap_id_from_addr(ccom_param_str("CCOM_COMM_ID"), "CCOM_COMM_ID", id);
	return ccom_bootstrap_new_root(id);
}

int ccom_bootstrap_new_root(ccomUniqueId *id)
{
	struct ccom_bs_id h;
	int fd, rc;

	memset(&h, 0, sizeof(h));
	rc = bs_listen(&h.root, &fd, "bootstrap root");
	if (rc)
		return rc;
	do {
		ccom_random_bytes(&h.magic, sizeof(h.magic));
	} while (h.magic == CCOM_BS_FIXED_MAGIC || !h.magic);
	h.id_version = CCOM_BS_ID_VERSION;
	rc = ccom_bs_root_start(fd, h.magic);
	if (rc) {
		close(fd);
		ccom_set_last_error("Bootstrap: cannot start the root thread: %s", strerror(-rc));
		return rc;
	}
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &h, sizeof(h));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Messages of one peer connection                                    */

static const char *bs_err_str(int rc)
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
			if (rx->hdr.size > ((uint64_t)1 << 34))
				return -EPROTO;
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

/* A complete hello arrived on a pending connection: file it or drop it. */
static void bs_classify(struct ccom_bootstrap *bs, const struct bs_pending *p)
{
	const struct ccom_bs_conn_hello *h = &p->h;
	char a[80];

	if (h->magic != bs->magic || h->rank < 0 || h->rank >= bs->nranks ||
	    (h->type != CCOM_BS_RING && h->type != CCOM_BS_P2P)) {
		ccom_warn("Bootstrap: rank %d dropped connection from %s: %s", bs->rank,
			  ccom_addr_str(&p->from, a, sizeof(a)),
			  h->magic != bs->magic ? "wrong magic" : "malformed hello");
		close(p->fd);
		return;
	}
	if (h->type == CCOM_BS_RING) {
		if (bs->ring_recv_fd >= 0 || h->rank != (bs->rank - 1 + bs->nranks) % bs->nranks) {
			ccom_warn("Bootstrap: rank %d dropped an unexpected ring connection from rank %d",
				  bs->rank, h->rank);
			close(p->fd);
			return;
		}
		bs->ring_recv_fd = p->fd;
		return;
	}
	if (bs->rx[h->rank].fd >= 0) {
		ccom_warn("Bootstrap: rank %d dropped a second p2p connection from rank %d", bs->rank,
			  h->rank);
		close(p->fd);
		return;
	}
	bs->rx[h->rank].fd = p->fd;
}

/* Read from pending connection @i; drop it on EOF, error or when it is too slow. */
static void bs_pending_progress(struct ccom_bootstrap *bs, int i, int readable)
{
	struct bs_pending *p = &bs->pend[i];
	const char *why = NULL;
	char a[80];

	if (readable) {
		ssize_t n = recv(p->fd, (char *)&p->h + p->got, sizeof(p->h) - p->got, 0);

		if (n > 0)
			p->got += n;
		else if (n == 0)
			why = "closed before its hello";
		else if (errno != EAGAIN && errno != EINTR)
			why = strerror(errno);
	}
	if (!why && p->got == sizeof(p->h)) {
		bs_classify(bs, p);
		bs->pend[i] = bs->pend[--bs->npend];
		return;
	}
	if (!why && ccom_now_us() - p->since > BS_HELLO_WAIT_US)
		why = "no hello within 5 s";
	if (why) {
		ccom_warn("Bootstrap: rank %d dropped connection from %s: %s", bs->rank,
			  ccom_addr_str(&p->from, a, sizeof(a)), why);
		close(p->fd);
		bs->pend[i] = bs->pend[--bs->npend];
	}
}

/*
 * Accept every waiting connection.  Running out of file descriptors is an
 * error of this rank: the connection would stay in the backlog and its
 * sender, whose send completed, would wait for an answer that never comes.
 */
static int bs_accept_all(struct ccom_bootstrap *bs)
{
	for (;;) {
		struct bs_pending p;
		int rc;

		memset(&p, 0, sizeof(p));
		rc = ccom_sock_accept(bs->listen_fd, 0, NULL, &p.fd, &p.from);
		if (rc == -EMFILE || rc == -ENFILE) {
			ccom_set_last_error("Bootstrap: rank %d cannot accept a peer's connection: %s",
					    bs->rank, bs_err_str(rc));
			return rc;
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
}

/*
 * Wait up to one poll slice for incoming connections and messages; queue
 * everything that arrived.  @wfd (or -1) is also polled for writability.
 */
static int bs_progress(struct ccom_bootstrap *bs, int64_t deadline, int wfd)
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
		pfd[n] = (struct pollfd){ .fd = wfd, .events = POLLOUT };
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

static int bs_connect_peer(struct ccom_bootstrap *bs, int peer, uint32_t type, int64_t deadline,
			   int *out)
{
	struct ccom_bs_conn_hello h = { .magic = bs->magic, .type = type, .rank = bs->rank };
	int fd, rc;

	/*
	 * Every rank listens before it checks in, so a refused connection
	 * means the peer is gone (or its address is not reachable from here):
	 * no retry.
	 */
	rc = ccom_sock_connect_once(&bs->addrs[peer], deadline, bs->abort, &fd);
	if (rc)
		return rc;
	rc = ccom_sock_send_all(fd, &h, sizeof(h), deadline, bs->abort);
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
		rc = bs_progress(bs, deadline, fd);
		if (rc)
			return rc;
	}
	return 0;
}

static int bs_send_locked(struct ccom_bootstrap *bs, int peer, int tag, const void *data,
			  size_t size)
{
	struct ccom_bs_frame f = { .tag = (uint32_t)tag, .size = size };
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	int rc;

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
		rc = bs_connect_peer(bs, peer, CCOM_BS_P2P, deadline, &bs->send_fds[peer]);
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
				    ccom_addr_str(&bs->addrs[peer], a, sizeof(a)), bs_err_str(rc),
				    rc == -ECONNREFUSED ? "; check CCOM_SOCKET_IFNAME on both ranks" : "");
	}
	return rc;
}

static int bs_recv_locked(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size)
{
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	struct bs_msg *m;
	int rc = 0;

	for (;;) {
		m = bs_dequeue(bs, peer, (uint32_t)tag);
		if (m)
			break;
		if (bs->rx[peer].closed) {
			rc = -ECONNRESET;
			break;
		}
		rc = bs_progress(bs, deadline, -1);
		if (rc)
			break;
	}
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d waiting for a message from rank %d (tag %d): %s%s",
				    bs->rank, peer, tag, bs_err_str(rc),
				    rc == -ETIMEDOUT ? " (CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	if (m->size != size) {
		ccom_set_last_error("Bootstrap: rank %d expected %zu bytes from rank %d (tag %d) but got %zu: the ranks disagree (different libccom builds or calls?)",
				    bs->rank, size, peer, tag, m->size);
		free(m);
		return -EPROTO;
	}
	if (size)
		memcpy(data, m->data, size);
	free(m);
	return 0;
}

static int bs_check_peer(struct ccom_bootstrap *bs, int peer)
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
	int rc = bs_check_peer(bs, peer);

	if (rc)
		return rc;
	pthread_mutex_lock(&bs->lock);
	rc = bs_send_locked(bs, peer, tag, data, size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

int ccom_bootstrap_recv(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size)
{
	int rc = bs_check_peer(bs, peer);

	if (rc)
		return rc;
	pthread_mutex_lock(&bs->lock);
	rc = bs_recv_locked(bs, peer, tag, data, size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Ring all-gather and barriers                                        */

static int bs_ring_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot)
{
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	int n = bs->nranks, r = bs->rank, i, rc = 0;
	char *b = buf;

	for (i = 0; i < n - 1 && !rc; i++) {
		int s = (r - i + n) % n, v = (r - i - 1 + n) % n;
		uint64_t ssz = slot, rsz = 0;

		/* Each step carries the slot size first, so disagreeing ranks are caught. */
		rc = ccom_sock_sendrecv(bs->ring_send_fd, &ssz, sizeof(ssz), bs->ring_recv_fd, &rsz,
					sizeof(rsz), deadline, bs->abort);
		if (!rc && rsz != slot) {
			ccom_set_last_error("Bootstrap: all-gather size mismatch: rank %d uses %zu-byte slots, its predecessor %llu bytes",
					    r, slot, (unsigned long long)rsz);
			return -EPROTO;
		}
		if (!rc)
			rc = ccom_sock_sendrecv(bs->ring_send_fd, b + s * slot, slot,
						bs->ring_recv_fd, b + v * slot, slot, deadline,
						bs->abort);
	}
	if (rc)
		ccom_set_last_error("Bootstrap: ring all-gather on rank %d of %d (neighbours %d and %d): %s",
				    r, n, (r - 1 + n) % n, (r + 1) % n, bs_err_str(rc));
	return rc;
}

/*
 * Bruck all-gather over the p2p connections: ceil(log2(n)) rounds; in
 * round k a rank sends the min(2^k, n - 2^k) slots it has (its own and
 * those of the ranks after it) to rank - 2^k and receives as many from
 * rank + 2^k.  On an oversubscribed host this costs log2(n) scheduling
 * hops instead of the ring's n - 1.
 */
static int bs_bruck_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot)
{
	int n = bs->nranks, r = bs->rank, k, j, rc = 0;
	char *tmp, *b = buf;
	size_t dist;

	tmp = malloc(n * slot);
	if (!tmp) {
		ccom_set_last_error("Bootstrap: out of memory for an all-gather of %d x %zu bytes", n,
				    slot);
		return -ENOMEM;
	}
	memcpy(tmp, b + r * slot, slot);
	for (k = 0, dist = 1; dist < (size_t)n && !rc; k++, dist <<= 1) {
		size_t cnt = dist < n - dist ? dist : n - dist;
		int to = (int)((r - dist + n) % n), from = (int)((r + dist) % n);

		rc = bs_send_locked(bs, to, BS_TAG_ALLGATHER_BASE + k, tmp, cnt * slot);
		if (!rc)
			rc = bs_recv_locked(bs, from, BS_TAG_ALLGATHER_BASE + k, tmp + dist * slot,
					    cnt * slot);
	}
	for (j = 0; j < n && !rc; j++)
		memcpy(b + ((r + j) % n) * slot, tmp + j * slot, slot);
	free(tmp);
	return rc;
}

int ccom_bootstrap_allgather(struct ccom_bootstrap *bs, void *buf, size_t slot_size)
{
	int rc;

	pthread_mutex_lock(&bs->lock);
	rc = bs_bruck_allgather_locked(bs, buf, slot_size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/* Dissemination barrier: ceil(log2(n)) rounds of empty messages. */
int ccom_bootstrap_barrier(struct ccom_bootstrap *bs)
{
	int n = bs->nranks, r = bs->rank, k, rc = 0;
	int dist;

	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		rc = bs_send_locked(bs, (r + dist) % n, BS_TAG_BARRIER_BASE + k, NULL, 0);
		if (!rc)
			rc = bs_recv_locked(bs, (r - dist + n) % n, BS_TAG_BARRIER_BASE + k, NULL, 0);
	}
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/*
 * Subset operations (e.g. the ranks of one host) run over the subset's
 * positions 0..n-1 with log2(n) rounds, like the full-job ones: an
 * all-to-all would open n^2 connections, which 128 ranks in one process
 * (ccomCommInitAll) cannot hold.  Round k of caller tag t uses tag
 * t + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT).
 */
#define BS_TAG_ROUND_SHIFT 24

static int bs_subset_me(struct ccom_bootstrap *bs, const int *ranks, int n)
{
	int me = -1, i;

	for (i = 0; i < n; i++) {
		if (bs_check_peer(bs, ranks[i]))
			return -EINVAL;
		if (ranks[i] == bs->rank)
			me = i;
	}
	if (me < 0)
		ccom_set_last_error("Bootstrap: subset operation on rank %d which is not in the subset",
				    bs->rank);
	return me < 0 ? -EINVAL : me;
}

/* Bruck over the subset, as bs_bruck_allgather_locked() over the job. */
int ccom_bootstrap_subset_allgather(struct ccom_bootstrap *bs, const int *ranks, int n, int tag,
				    void *buf, size_t slot_size)
{
	int me = bs_subset_me(bs, ranks, n), k, j, rc = 0;
	char *tmp, *b = buf;
	int dist;

	if (me < 0)
		return me;
	tmp = malloc((size_t)n * slot_size);
	if (!tmp) {
		ccom_set_last_error("Bootstrap: out of memory for a subset all-gather of %d x %zu bytes",
				    n, slot_size);
		return -ENOMEM;
	}
	memcpy(tmp, b + (size_t)me * slot_size, slot_size);
	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		size_t cnt = (size_t)(dist < n - dist ? dist : n - dist);
		int t = tag + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT);

		rc = bs_send_locked(bs, ranks[(me - dist + n) % n], t, tmp, cnt * slot_size);
		if (!rc)
			rc = bs_recv_locked(bs, ranks[(me + dist) % n], t,
					    tmp + (size_t)dist * slot_size, cnt * slot_size);
	}
	pthread_mutex_unlock(&bs->lock);
	for (j = 0; j < n && !rc; j++)
		memcpy(b + (size_t)((me + j) % n) * slot_size, tmp + (size_t)j * slot_size, slot_size);
	free(tmp);
	return rc;
}

/* Dissemination barrier over the subset. */
int ccom_bootstrap_subset_barrier(struct ccom_bootstrap *bs, const int *ranks, int n, int tag)
{
	int me = bs_subset_me(bs, ranks, n), k, rc = 0;
	int dist;

	if (me < 0)
		return me;
	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		int t = tag + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT);

		rc = bs_send_locked(bs, ranks[(me + dist) % n], t, NULL, 0);
		if (!rc)
			rc = bs_recv_locked(bs, ranks[(me - dist + n) % n], t, NULL, 0);
	}
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Rendezvous                                                          */

static void bs_stagger(const struct ccom_bootstrap_args *a)
{
	int64_t thr = ccom_param_int("CCOM_UID_STAGGER_THRESHOLD");
	int64_t rate = ccom_param_int("CCOM_UID_STAGGER_RATE");

	int64_t us;

	if (a->nranks <= thr || rate <= 0)
		return;
	us = (int64_t)a->rank * 1000000 / rate;
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : %d ranks > CCOM_UID_STAGGER_THRESHOLD %lld: rank %d checks in after %lld us",
		  a->nranks, (long long)thr, a->rank, (long long)us);
	ccom_sleep_us(us, a->abort);
}

static int bs_checkin(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		      const struct ccom_bs_id *id, union ccom_sockaddr *next)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;
	int64_t grace = a->timeout_ms * 100; /* 10 % of the timeout, in us */
	int64_t verdict_deadline;
	struct ccom_bs_hello h;
	struct ccom_bs_reply rep;
	char msg[CCOM_BS_MAX_MSG + 1] __attribute__((aligned(8))), ra[80];
	int fd, rc;

	ccom_addr_str(&id->root, ra, sizeof(ra));
	rc = ccom_sock_connect(&id->root, deadline, a->abort, &fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d could not connect to the bootstrap root at %s: %s%s",
				    a->rank, ra, bs_err_str(rc),
				    rc == -ECANCELED ? "" :
				     " (is the process that called ccomGetUniqueId, or rank 0 with CCOM_COMM_ID, alive and reachable? A unique id serves one communicator: its root exits once the ranks have their answer)");
		return rc == -ECONNREFUSED ? -ETIMEDOUT : rc;
	}
	memset(&h, 0, sizeof(h));
	h.magic = id->magic;
	h.type = CCOM_BS_HELLO;
	h.abi = ccom_abi_id();
	h.size = sizeof(h);
	h.rank = a->rank;
	h.nranks = a->nranks;
	h.version = ccom_version_code();
	h.build_hash = ccom_build_hash();
	h.remaining_ms = (uint32_t)((deadline - ccom_now_us()) / 1000);
	h.pid = getpid();
	gethostname(h.host, sizeof(h.host) - 1);
	h.listen = bs->listen_addr;
	/*
	 * The root reports missing ranks before this rank's deadline; give its
	 * verdict a short grace (10 % of the timeout, 0.5 to 5 s) beyond it so
	 * that a loaded host does not turn "ranks 2,4 never checked in" into
	 * an anonymous timeout.
	 */
	grace = grace < 500000 ? 500000 : grace > 5000000 ? 5000000 : grace;
	verdict_deadline = deadline + grace;
	rc = ccom_sock_send_all(fd, &h, sizeof(h), deadline, a->abort);
	if (!rc) {
		ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d/%d checked in with the root at %s",
			  a->rank, a->nranks, ra);
		rc = ccom_sock_recv_all(fd, &rep, sizeof(rep), verdict_deadline, a->abort);
	}
	if (!rc && (rep.magic != id->magic || rep.type != CCOM_BS_REPLY ||
		    rep.msg_len > CCOM_BS_MAX_MSG))
		rc = -EBADMSG;
	if (!rc && rep.msg_len)
		rc = ccom_sock_recv_all(fd, msg, rep.msg_len, verdict_deadline, a->abort);
	close(fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d of %d got no usable answer from the bootstrap root at %s: %s%s",
				    a->rank, a->nranks, ra, bs_err_str(rc),
				    rc == -ETIMEDOUT ? " (other ranks did not check in and the root did not report in time; CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	if (!rep.err) {
		const struct ccom_bs_addr_entry *e = (const void *)msg;
		size_t i;

		/* Addresses of the partners of the Bruck address all-gather. */
		for (i = 0; i < rep.msg_len / sizeof(*e); i++) {
			if (e[i].rank < 0 || e[i].rank >= a->nranks) {
				ccom_set_last_error("Bootstrap: rank %d: malformed answer from the root at %s (address of rank %d)",
						    a->rank, ra, e[i].rank);
				return -EPROTO;
			}
			bs->addrs[e[i].rank] = e[i].addr;
		}
	}
	if (rep.err) {
		msg[rep.msg_len] = '\0';
		ccom_set_last_error("Bootstrap: rank %d: the root refused the job: %s", a->rank,
				    rep.msg_len ? msg : "(no reason given)");
		return rep.err < 0 ? rep.err : -EPROTO;
	}
	*next = rep.next;
	return 0;
}

static int bs_ring_connect(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
			   const union ccom_sockaddr *next)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;
	int nxt = (bs->rank + 1) % bs->nranks;
	char na[80];
	int rc;

	bs->addrs[nxt] = *next;
	rc = bs_connect_peer(bs, nxt, CCOM_BS_RING, deadline, &bs->ring_send_fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d could not connect to rank %d at %s: %s",
				    bs->rank, nxt, ccom_addr_str(next, na, sizeof(na)), bs_err_str(rc));
		return rc;
	}
	while (bs->ring_recv_fd < 0) {
		rc = bs_progress(bs, deadline, -1);
		if (rc) {
			ccom_set_last_error("Bootstrap: rank %d waiting for the ring connection from rank %d: %s",
					    bs->rank, (bs->rank - 1 + bs->nranks) % bs->nranks,
					    bs_err_str(rc));
			return rc;
		}
	}
	bs->addrs[bs->rank] = bs->listen_addr;
	/*
	 * The ring all-gather takes nranks - 1 steps in sequence; Bruck over
	 * p2p takes log2(nranks) rounds (the root sent the partner addresses).
	 * On small jobs they cost the same: keep the ring there.
	 */
	if (bs->nranks <= BS_RING_ALLGATHER_MAX)
		return bs_ring_allgather_locked(bs, bs->addrs, sizeof(*bs->addrs));
	return bs_bruck_allgather_locked(bs, bs->addrs, sizeof(*bs->addrs));
}

static struct ccom_bootstrap *bs_alloc(const struct ccom_bootstrap_args *a, uint64_t magic)
{
	struct ccom_bootstrap *bs = calloc(1, sizeof(*bs));
	int i;

	if (!bs)
		return NULL;
	bs->rank = a->rank;
	bs->nranks = a->nranks;
	bs->magic = magic;
	bs->timeout_us = a->timeout_ms * 1000;
	bs->abort = a->abort;
	bs->listen_fd = bs->ring_send_fd = bs->ring_recv_fd = -1;
	pthread_mutex_init(&bs->lock, NULL);
	bs->addrs = calloc(a->nranks, sizeof(*bs->addrs));
	bs->send_fds = calloc(a->nranks, sizeof(*bs->send_fds));
	bs->rx = calloc(a->nranks, sizeof(*bs->rx));
	if (!bs->addrs || !bs->send_fds || !bs->rx) {
		ccom_bootstrap_close(bs);
		return NULL;
	}
	for (i = 0; i < a->nranks; i++)
		bs->send_fds[i] = bs->rx[i].fd = -1;
	return bs;
}

int ccom_bootstrap_init(const struct ccom_bootstrap_args *a, struct ccom_bootstrap **out)
{
	struct ccom_bs_id id;
	struct ccom_bootstrap *bs;
	union ccom_sockaddr next;
	int rc;

	memcpy(&id, a->id->internal, sizeof(id));
	if (id.id_version != CCOM_BS_ID_VERSION || !id.magic) {
		ccom_set_last_error("Bootstrap: the unique id is not one from ccomGetUniqueId (version %u, magic %016llx): pass the same 128 bytes to every rank",
				    id.id_version, (unsigned long long)id.magic);
		return -EINVAL;
	}
	bs = bs_alloc(a, id.magic);
	if (!bs) {
		ccom_set_last_error("Bootstrap: out of memory for %d ranks", a->nranks);
		return -ENOMEM;
	}
	if ((id.flags & CCOM_BS_ID_ROOT_AT_RANK0) && a->rank == 0) {
		union ccom_sockaddr ra = id.root;
		char s[80];
		int lfd;

		rc = ccom_sock_listen(&ra, SOMAXCONN, &lfd);
		if (rc) {
			ccom_set_last_error("Bootstrap: rank 0 cannot host the root at %s (CCOM_COMM_ID): %s; the address must belong to rank 0's host and the port be free",
					    ccom_addr_str(&ra, s, sizeof(s)), strerror(-rc));
			goto err_close;
		}
		rc = ccom_bs_root_start(lfd, id.magic);
		if (rc) {
			close(lfd);
			ccom_set_last_error("Bootstrap: cannot start the root thread: %s", strerror(-rc));
			goto err_close;
		}
		ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank 0 hosts the root at %s", s);
	}
	rc = bs_listen(&bs->listen_addr, &bs->listen_fd, "bootstrap ring and p2p");
	if (rc)
		goto err_close;
	bs_stagger(a);
	rc = bs_checkin(bs, a, &id, &next);
	if (rc)
		goto err_close;
	rc = bs_ring_connect(bs, a, &next);
	if (rc)
		goto err_close;
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : ring of %d ranks connected, addresses gathered",
		  bs->nranks);
	*out = bs;
	return 0;
err_close:
	ccom_bootstrap_close(bs);
	return rc;
}

const void *ccom_bootstrap_listen_addr(const struct ccom_bootstrap *bs, size_t *len)
{
	*len = ccom_addr_len(&bs->listen_addr);
	return &bs->listen_addr;
}

void ccom_bootstrap_close(struct ccom_bootstrap *bs)
{
	struct bs_msg *m;
	int i;

	if (!bs)
		return;
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
	if (bs->listen_fd >= 0)
		close(bs->listen_fd);
	if (bs->ring_send_fd >= 0)
		close(bs->ring_send_fd);
	if (bs->ring_recv_fd >= 0)
		close(bs->ring_recv_fd);
	pthread_mutex_destroy(&bs->lock);
	free(bs->addrs);
	free(bs->send_fds);
	free(bs->rx);
	free(bs);
}
