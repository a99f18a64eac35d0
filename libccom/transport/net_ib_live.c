// SPDX-License-Identifier: MIT
/*
 * net_ib_live.c - the TCP liveness connection of each pair of net_ib
 * ranks (net_ib_private.h lists the files): it carries no data, but the
 * kernel closes it when a process dies, which RC verbs never report to
 * an idle receiver (net_ib.c's ->wait() watches it).  The higher rank
 * connects to the listener the lower rank's card names and sends a hello
 * whose MAC, under the communicator's data key
 * (ccom_bootstrap_data_mac()), covers sender, receiver and the receiver's
 * card nonce of this setup; the lower rank accepts several connections at
 * once, files each authenticated hello once and drops the rest (foreign,
 * replayed, silent), at most IB_PENDING_MAX waiting.  Each connection is
 * also watched for its host's silence (proxy/live.h): a host that powers
 * off closes nothing.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "proxy/live.h"
#include "transport/net_ib_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

#define IB_HELLO_TIMEOUT_US 5000000LL
/* Liveness connections waiting for their hello, at most (the oldest gives way). */
#define IB_PENDING_MAX 64

/*
 * First bytes of a liveness connection, from the higher rank: a MAC of the
 * fields before it and the accepting rank's card nonce under the comm's
 * data key (ccom_bootstrap_data_mac()), as net_socket's hellos.
 */
struct ib_hello {
	uint64_t magic;
	uint64_t comm_hash;
	int32_t rank;
	int32_t to;			/* the accepting rank */
	uint8_t mac[CCOM_DATA_MAC_BYTES];
};

#define IB_HELLO_SIGNED (offsetof(struct ib_hello, mac) + IB_NONCE_BYTES)

static void hello_signed(const struct ib_hello *h, const uint8_t *nonce,
			 unsigned char m[IB_HELLO_SIGNED])
{
	memcpy(m, h, offsetof(struct ib_hello, mac));
	memcpy(m + offsetof(struct ib_hello, mac), nonce, IB_NONCE_BYTES);
}

/* Listen for liveness connections on the address of our bootstrap socket, port 0. */
int ccom_ib_live_listen(struct ccomComm *comm, union ccom_sockaddr *a, int *lfd)
{
	const struct sockaddr_in6 *b = &comm->peers[comm->rank].listen_addr;
	char as[96];
	int err;

	memset(a, 0, sizeof(*a));
	if (b->sin6_family == AF_INET) {
		memcpy(&a->sin, b, sizeof(a->sin));
		a->sin.sin_port = 0;
	} else if (b->sin6_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&b->sin6_addr)) {
		a->sin.sin_family = AF_INET;
		memcpy(&a->sin.sin_addr, &b->sin6_addr.s6_addr[12], 4);
	} else if (b->sin6_family == AF_INET6) {
		a->sin6 = *b;
		a->sin6.sin6_port = 0;
	} else {
		ccom_set_last_error("net_ib: rank %d has no bootstrap address (family %d) for its liveness listener",
				    comm->rank, b->sin6_family);
		return -EINVAL;
	}
	err = ccom_sock_listen(a, 1024, lfd);
	if (err)
		ccom_set_last_error("net_ib: rank %d cannot listen for liveness connections on %s: %s; check CCOM_SOCKET_IFNAME",
				    comm->rank, ccom_addr_str(a, as, sizeof(as)), strerror(-err));
	return err;
}

/* A liveness connection accepted, its hello not complete yet. */
struct live_pending {
	int fd;
	size_t got;
	int64_t since_us;
	union ccom_sockaddr from;
	struct ib_hello in;
};

/*
 * File the hello @in of a liveness connection under its peer's conn, or
 * return why not.  The MAC proves a rank of this job wrote it for this
 * rank and this setup (@nonce, our cards'); a conn filed once is never
 * refiled, so a replayed hello takes nothing.
 */
static const char *live_file(struct ccomComm *comm, const int *peers, int npeers,
			     struct ccom_transport_conn **conns, const uint8_t *nonce,
			     const struct ib_hello *in, int fd)
{
	unsigned char m[IB_HELLO_SIGNED];
	int i;

	if (in->magic != comm->magic || in->comm_hash != comm->comm_hash)
		return "its magic or communicator hash is not this communicator's";
	if (in->to != comm->rank || in->rank <= comm->rank)
		return "it names no higher peer rank of this rank's";
	hello_signed(in, nonce, m);
	if (!ccom_bootstrap_data_mac_ok(comm->bootstrap, m, sizeof(m), in->mac))
		return "its MAC is wrong (the sender does not hold this job's unique id, or replays a hello of another setup)";
	for (i = 0; i < npeers; i++) {
		if (peers[i] != in->rank)
			continue;
		if (to_ib(conns[i])->live_fd >= 0)
			return "that peer's liveness connection is open already (a replayed hello)";
		to_ib(conns[i])->live_fd = fd;
		ccom_live_watch(comm, in->rank, fd);
		return NULL;
	}
	return "it names no peer of this setup";
}

static void live_drop(struct ccomComm *comm, struct live_pending *p, const char *why,
		      unsigned int *ndropped)
{
	char as[96];

	if (++*ndropped <= 8 || !(*ndropped % 1000))
		ccom_warn("net_ib: rank %d dropped a connection from %s to its liveness port: %s; a foreign or stale process is connecting (%u dropped so far)",
			  comm->rank, ccom_addr_str(&p->from, as, sizeof(as)), why, *ndropped);
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/*
 * Accept the liveness connections of the higher peers: several at once
 * (a silent or foreign connection holds up no other), at most
 * IB_PENDING_MAX waiting for a hello (the oldest that waited 1 s gives
 * way), running out of descriptors leaves the rest in the backlog.
 */
static int live_accept_all(struct ccomComm *comm, const int *peers, int npeers,
			   struct ccom_transport_conn **conns, const uint8_t *nonce, int lfd,
			   int expected, int64_t deadline)
{
	struct live_pending pend[IB_PENDING_MAX];
	struct pollfd pfd[IB_PENDING_MAX + 1];
	unsigned int ndropped = 0;
	int np = 0, i, fd, err = 0;

	while (expected > 0) {
		int64_t now = ccom_now_us();
		bool room = true;

		while (room) {
			union ccom_sockaddr from;
			socklen_t alen = sizeof(from);

			if (np == IB_PENDING_MAX) {
				if (now - pend[0].since_us < 1000000)
					break;
				live_drop(comm, &pend[0], "too many connections wait for a hello: the oldest gave way",
					  &ndropped);
				memmove(&pend[0], &pend[1], (size_t)--np * sizeof(pend[0]));
			}
			memset(&from, 0, sizeof(from));
			fd = accept4(lfd, &from.sa, &alen, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
				continue;
			if (fd < 0 && (errno == EMFILE || errno == ENFILE) && np &&
			    now - pend[0].since_us >= 1000000) {
				live_drop(comm, &pend[0], "out of descriptors: the oldest without a hello gave way",
					  &ndropped);
				memmove(&pend[0], &pend[1], (size_t)--np * sizeof(pend[0]));
				continue;
			}
			if (fd < 0)
				break;	/* EAGAIN, or no descriptor: the backlog keeps it */
			pend[np++] = (struct live_pending){ .fd = fd, .since_us = now, .from = from };
			room = np < IB_PENDING_MAX || now - pend[0].since_us >= 1000000;
		}
		for (i = 0; i < np; i++) {
			struct live_pending *p = &pend[i];
			ssize_t r = recv(p->fd, (char *)&p->in + p->got, sizeof(p->in) - p->got,
					 MSG_DONTWAIT);
			const char *why = NULL;

			if (r > 0 && (p->got += (size_t)r) == sizeof(p->in)) {
				why = live_file(comm, peers, npeers, conns, nonce, &p->in, p->fd);
				if (!why) {
					p->fd = -1;
					expected--;
				}
			} else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				why = "it closed before its hello";
			} else if (r < 0 && now - p->since_us > IB_HELLO_TIMEOUT_US) {
				why = "it sent no hello within 5 s";
			} else {
				continue;
			}
			if (why)
				live_drop(comm, p, why, &ndropped);
			memmove(&pend[i], &pend[i + 1], (size_t)(np - i - 1) * sizeof(pend[0]));
			np--;
			i--;
		}
		if (expected <= 0)
			break;
		if (ccom_comm_aborted(comm) || now > deadline) {
			err = ccom_comm_aborted(comm) ? -ECANCELED : -ETIMEDOUT;
			ccom_set_last_error("net_ib: rank %d %s waiting for %d liveness connection(s) from higher peer ranks: %s",
					    comm->rank, err == -ECANCELED ? "was aborted while" : "timed out",
					    expected, strerror(-err));
			break;
		}
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < np; i++)
			pfd[i + 1] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN };
		poll(pfd, (nfds_t)np + 1, CCOM_SOCK_POLL_MS);
	}
	for (i = 0; i < np; i++)
		close(pend[i].fd);
	return err;
}

/*
 * One TCP connection per pair, from the higher rank, that carries no data:
 * the kernel closes it when a process dies, which RC verbs never report to
 * an idle receiver.  Connect never waits for the accept, so "connect all,
 * then accept all" cannot deadlock (as in net_socket).
 */
int ccom_ib_live_connect_all(struct ccomComm *comm, const int *peers, int npeers,
			    struct ccom_transport_conn **conns, const struct ib_card *cards,
			    const uint8_t *nonce, int lfd)
{
	int64_t tmo = comm->config.timeoutSec > 0 ? comm->config.timeoutSec :
		      ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT");
	int64_t deadline = ccom_now_us() + (tmo > 0 ? tmo : 300) * 1000000;
	unsigned char m[IB_HELLO_SIGNED];
	struct ib_hello h;
	int i, fd, err, expected = 0;
	char as[96];

	for (i = 0; i < npeers; i++) {
		struct ib_conn *c = to_ib(conns[i]);

		if (peers[i] > comm->rank) {
			expected++;
			continue;
		}
		err = ccom_sock_connect(&cards[i].live, deadline, &comm->abort_flag, &fd);
		if (!err) {
			c->live_fd = fd;
			err = ccom_sock_setup(fd);
		}
		if (!err) {
			memset(&h, 0, sizeof(h));
			h.magic = comm->magic;
			h.comm_hash = comm->comm_hash;
			h.rank = comm->rank;
			h.to = peers[i];
			hello_signed(&h, cards[i].nonce, m);
			ccom_bootstrap_data_mac(comm->bootstrap, m, sizeof(m), h.mac);
			err = ccom_sock_send_all(fd, &h, sizeof(h), deadline, &comm->abort_flag);
		}
		if (!err)
			ccom_live_watch(comm, peers[i], fd);
		if (err) {
			ccom_set_last_error("net_ib: rank %d cannot open its liveness connection to peer rank %d at %s: %s; check that the peer is alive and that CCOM_SOCKET_IFNAME selects an interface both hosts reach",
					    comm->rank, peers[i],
					    ccom_addr_str(&cards[i].live, as, sizeof(as)), strerror(-err));
			return err;
		}
	}
	return expected ? live_accept_all(comm, peers, npeers, conns, nonce, lfd, expected,
					  deadline) : 0;
}

