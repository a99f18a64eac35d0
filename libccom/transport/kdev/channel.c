// SPDX-License-Identifier: MIT
/*
 * channel.c - the grant channel of the kdev room: a full mesh of
 * SOCK_SEQPACKET Unix sockets between the ranks of the host, over which
 * semaphore grants (at init, device.c) and dma-buf grants (per collective,
 * grant.c) travel as SCM_RIGHTS file descriptors.  Receives wait in
 * slices, checking abort, the op deadline and the peers' liveness; a
 * closed socket names the peer, or the root cause the host segment knows.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/comm.h"
#include "proxy/proxy.h"
#include "proxy/wait.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

static void kdev_sock_path(const struct ccomComm *comm, int rank, char *buf, size_t len)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(buf, len, "%s/ccom-kdev-%016llx-%d-%d.sock", dir,
		 (unsigned long long)comm->comm_hash, rank, comm->peers[rank].pid);
}

static int kdev_listen(struct ccom_kdev *kd, struct sockaddr_un *sa)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	kdev_sock_path(kd->comm, kd->comm->rank, sa->sun_path, sizeof(sa->sun_path));
	unlink(sa->sun_path);
	if (bind(s, (struct sockaddr *)sa, sizeof(*sa)) || listen(s, kd->nlocal + 4)) {
		int err = -errno;

		ccom_set_last_error("kdev: cannot listen on %s: %s", sa->sun_path, strerror(-err));
		close(s);
		return err;
	}
	return s;
}

static int kdev_connect_lower(struct ccom_kdev *kd, int l)
{
	struct ccomComm *comm = kd->comm;
	int peer = comm->local_to_rank[l];
	struct ccom_kdev_hello h = { CCOM_KDEV_HELLO_MAGIC, comm->rank };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	kdev_sock_path(comm, peer, sa.sun_path, sizeof(sa.sun_path));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(s, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		int err = -errno;

		ccom_set_last_error("kdev: rank %d cannot connect the grant channel to peer rank %d (%s): %s",
				    comm->rank, peer, sa.sun_path, strerror(-err));
		close(s);
		return err;
	}
	kd->sock[l] = s;
	return 0;
}

static int kdev_accept_higher(struct ccom_kdev *kd, int lsock)
{
	struct ccomComm *comm = kd->comm;
	int64_t deadline = ccom_now_us() + CCOM_KDEV_SETUP_TIMEOUT_US;
	int want = kd->nlocal - 1 - kd->me, got = 0, s, l;
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	struct ccom_kdev_hello h;

	while (got < want) {
		if (ccom_comm_aborted(comm))
			return -ECANCELED;
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("kdev: rank %d: only %d of %d higher local ranks connected the grant channel within %llds",
					    comm->rank, got, want, CCOM_KDEV_SETUP_TIMEOUT_US / 1000000);
			return -ETIMEDOUT;
		}
		if (poll(&p, 1, 50) <= 0)
			continue;
		s = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			continue;
		/* The hello was sent right after connect(): it is there or coming. */
		p.fd = s;
		if (poll(&p, 1, 5000) <= 0 || recv(s, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		    h.magic != CCOM_KDEV_HELLO_MAGIC || h.rank < 0 || h.rank >= comm->nranks ||
		    comm->rank_to_node[h.rank] != comm->node) {
			close(s);
			p.fd = lsock;
			continue;	/* not one of ours: ignore it */
		}
		p.fd = lsock;
		l = comm->rank_to_local[h.rank];
		if (l <= kd->me || kd->sock[l] >= 0) {
			close(s);
			continue;
		}
		kd->sock[l] = s;
		got++;
	}
	return 0;
}

int ccom_kdev_connect_mesh(struct ccom_kdev *kd)
{
	struct ccomComm *comm = kd->comm;
	struct sockaddr_un sa;
	int lsock, l, err;

	lsock = kdev_listen(kd, &sa);
	if (lsock < 0)
		return lsock;
	err = ccom_bootstrap_barrier(comm->bootstrap);
	for (l = 0; !err && l < kd->me; l++)
		err = kdev_connect_lower(kd, l);
	if (!err)
		err = kdev_accept_higher(kd, lsock);
	close(lsock);
	unlink(sa.sun_path);
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me && fcntl(kd->sock[l], F_SETFL, O_NONBLOCK))
			err = -errno;
	return err;
}

/*
 * A peer closed its grant channel: it died, or failed because of another
 * rank and left.  The shm segment's pidfds and broken flags name the root
 * cause; give them a moment (as ring.c's root_cause()).  0 if they say
 * nothing.
 */
static int kdev_root_cause(struct ccom_kdev *kd)
{
	struct ccom_shm *shm = kd->comm->shm;
	struct ccom_wait w;
	int i, err = 0;

	if (!shm)
		return 0;
	ccom_wait_begin(&w, kd->comm);
	for (i = 0; i < 100 && !err; i++) {
		w.next_check_us = 1;	/* due now */
		err = ccom_wait_check(&w);
		if (!err)
			ccom_sleep_us(5000, NULL);
	}
	ccom_wait_end(&w);
	return err;
}

int ccom_kdev_sendmsg(struct ccom_kdev *kd, int lpeer, const void *buf, size_t len,
		      const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * CCOM_KDEV_MAX_FDS)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int64_t deadline = ccom_now_us() + CCOM_KDEV_SETUP_TIMEOUT_US;
	struct pollfd p = { .fd = kd->sock[lpeer], .events = POLLOUT };
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > CCOM_KDEV_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	for (;;) {
		n = sendmsg(kd->sock[lpeer], &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
			int err = n >= 0 ? -EPROTO : -errno;
			int peer = kd->comm->local_to_rank[lpeer];

			if (err == -EPIPE || err == -ECONNRESET) {
				int why = kdev_root_cause(kd);

				if (why)
					return why;
			}
			ccom_proxy_note_failed(kd->comm, peer);
			ccom_set_last_error("kdev: rank %d: grant channel to peer rank %d (pid %d) failed: %s; the peer died or left",
					    kd->comm->rank, peer, kd->comm->peers[peer].pid,
					    strerror(-err));
			return err == -EPIPE ? -ECONNRESET : err;
		}
		/* A full socket buffer: the peer is behind; bounded by the deadline. */
		if (ccom_comm_aborted(kd->comm)) {
			ccom_set_last_error("rank %d: the communicator %s", kd->comm->rank,
					    ccom_comm_stop_reason(kd->comm));
			return -ECANCELED;
		}
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("kdev: rank %d: grant channel to peer rank %d stayed full for %llds",
					    kd->comm->rank, kd->comm->local_to_rank[lpeer],
					    CCOM_KDEV_SETUP_TIMEOUT_US / 1000000);
			return -ETIMEDOUT;
		}
		poll(&p, 1, 20);
	}
}

static int kdev_recv_once(struct ccom_kdev *kd, int lpeer, void *buf, size_t len, int *fds,
			  int maxfds, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * CCOM_KDEV_MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int peer = kd->comm->local_to_rank[lpeer], i, n;
	ssize_t got;

	*nfds = 0;
	got = recvmsg(kd->sock[lpeer], &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return -EAGAIN;
	for (c = CMSG_FIRSTHDR(&msg); got >= 0 && c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < maxfds)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (got == (ssize_t)len && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return 0;
	for (i = 0; i < *nfds; i++)
		close(fds[i]);
	*nfds = 0;
	if (got == 0 || (got < 0 && (errno == ECONNRESET || errno == EPIPE))) {
		ccom_proxy_note_failed(kd->comm, peer);
		ccom_set_last_error("rank %d: peer rank %d (pid %d) closed the kdev grant channel: it died or left during the operation",
				    kd->comm->rank, peer, kd->comm->peers[peer].pid);
		return -ECONNRESET;
	}
	ccom_set_last_error("kdev: rank %d: bad grant-channel packet from peer rank %d (%zd bytes, want %zu, flags %#x)",
			    kd->comm->rank, peer, got, len, got < 0 ? 0 : msg.msg_flags);
	return got < 0 ? -errno : -EPROTO;
}

int ccom_kdev_recvmsg(struct ccom_kdev *kd, int lpeer, void *buf, size_t len, int *fds,
		      int maxfds, int *nfds)
{
	struct ccomComm *comm = kd->comm;
	int64_t deadline = ccom_now_us() + CCOM_KDEV_SETUP_TIMEOUT_US;
	struct pollfd p = { .fd = kd->sock[lpeer], .events = POLLIN };
	struct ccom_kdev_spin sp;
	struct ccom_wait w;
	int err;

	ccom_kdev_spin_reset(&sp);
	ccom_wait_begin(&w, comm);
	for (;;) {
		err = kdev_recv_once(kd, lpeer, buf, len, fds, maxfds, nfds);
		if (err == -ECONNRESET) {
			/* Say who really failed, not the peer that left because of it. */
			char msg[512];
			int why;

			snprintf(msg, sizeof(msg), "%s", ccom_last_error());
			why = kdev_root_cause(kd);
			if (why)
				err = why;
			else
				ccom_set_last_error("%s", msg);
			break;
		}
		if (err != -EAGAIN)
			break;
		err = ccom_wait_check(&w);
		if (err)
			break;
		if (!ccom_proxy_deadline(comm)) {
			if (ccom_now_us() > deadline) {
				ccom_set_last_error("kdev: rank %d: no grant-channel message from peer rank %d within %llds",
						    comm->rank, comm->local_to_rank[lpeer],
						    CCOM_KDEV_SETUP_TIMEOUT_US / 1000000);
				err = -ETIMEDOUT;
				break;
			}
		}
		/* Peers arrive at about the same time: spin a little, then sleep. */
		if (!ccom_kdev_spin(&sp))
			poll(&p, 1, 10);
	}
	ccom_wait_end(&w);
	return err;
}
