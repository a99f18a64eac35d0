// SPDX-License-Identifier: MIT
/*
 * kdev.c - the kdev transport (transport layer): /dev/nccom opened per
 * communicator and rank, the GET_INFO compatibility check, the queue and
 * its mmap'd ring, the rank's timeline semaphore, and the grant channel: a
 * full mesh of SOCK_SEQPACKET Unix sockets between the ranks of the host,
 * over which semaphore grants (at init) and dma-buf grants (per collective,
 * kdev/grant.c) travel as SCM_RIGHTS file descriptors.  Handles are local
 * to a file descriptor, so nothing guessable ever crosses processes.
 *
 * The decision to use kdev is collective: every rank probes the driver,
 * the results are all-gathered, and kdev is used only if every rank can
 * (otherwise one INFO line says which rank could not and why, and coll/
 * keeps its shm path; with CCOM_KDEV=1 that is an error naming the cause).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "coll/coll.h"
#include "init/comm.h"
#include "kdev/kdev.h"
#include "transport/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define KDEV_SETUP_TIMEOUT_US (60 * 1000000LL)
#define KDEV_HELLO_MAGIC 0x6b646576u	/* "kdev" */
#define KDEV_NEED_FEATURES (NCCOM_FEAT_MEM_REGISTER | NCCOM_FEAT_DMABUF_EXPORT | \
			    NCCOM_FEAT_DMABUF_IMPORT | NCCOM_FEAT_SEM_FD | NCCOM_FEAT_QUEUE_WAIT)

/* What each rank tells the others about its probe (all-gathered). */
struct kdev_probe {
	int32_t ok;
	int32_t err;
	int32_t mode;		/* CCOM_KDEV: -1 unset, 0, 1 */
	int32_t pad;
	int64_t min_bytes;	/* CCOM_KDEV_MIN_BYTES */
	uint64_t features;
	char reason[176];
};

struct kdev_hello {
	uint32_t magic;
	int32_t rank;
};

int ccom_kdev_ioctl(struct ccom_kdev *kd, unsigned long cmd, void *arg)
{
	int rc;

	do {
		rc = ioctl(kd->fd, cmd, arg);
	} while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

static int kdev_destroy_handle(struct ccom_kdev *kd, uint32_t handle)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = handle };

	return handle ? ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d) : 0;
}

/* ---- device, queue, semaphore ---- */

static int kdev_open(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	int err;

	kd->fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	if (kd->fd < 0) {
		err = -errno;
		snprintf(pr->reason, sizeof(pr->reason), "%s /dev/nccom: %s",
			 err == -ENOENT ? "no nccom driver loaded:" : "cannot open", strerror(-err));
		return err;
	}
	memset(&kd->info, 0, sizeof(kd->info));
	kd->info.size = sizeof(kd->info);
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_GET_INFO, &kd->info);
	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "NCCOM_IOC_GET_INFO failed: %s",
			 strerror(-err));
		return err;
	}
	pr->features = kd->info.out_features;
	if (kd->info.out_compat_id != NCCOM_COMPAT_ID) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver compat id %#llx does not match the library's %#llx (ABI %u vs %u); rebuild or reload nccom.ko",
			 (unsigned long long)kd->info.out_compat_id,
			 (unsigned long long)NCCOM_COMPAT_ID, kd->info.out_abi_version,
			 NCCOM_ABI_VERSION);
		return -EPROTO;
	}
	if ((kd->info.out_features & KDEV_NEED_FEATURES) != KDEV_NEED_FEATURES) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver lacks features %#llx (has %#llx)",
			 (unsigned long long)(KDEV_NEED_FEATURES & ~kd->info.out_features),
			 (unsigned long long)kd->info.out_features);
		return -EOPNOTSUPP;
	}
	if (kd->info.out_desc_size != sizeof(struct nccom_desc) ||
	    kd->info.out_cqe_size != sizeof(struct nccom_cqe)) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "driver descriptor/completion sizes %u/%u differ from the library's %zu/%zu",
			 kd->info.out_desc_size, kd->info.out_cqe_size,
			 sizeof(struct nccom_desc), sizeof(struct nccom_cqe));
		return -EPROTO;
	}
	return 0;
}

static int kdev_ring_create(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_create qc = { .size = sizeof(qc) };
	uint32_t depth = CCOM_KDEV_DEPTH;
	int err;

	while (depth > kd->info.out_max_queue_depth && depth > 16)
		depth >>= 1;
	qc.dev_index = (uint32_t)kd->comm->device;
	qc.depth = depth;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_CREATE, &qc);
	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "QUEUE_CREATE on device %d failed: %s",
			 kd->comm->device, strerror(-err));
		return err;
	}
	r->handle = qc.out_handle;
	r->map = mmap(NULL, qc.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, kd->fd,
		      (off_t)qc.out_mmap_offset);
	if (r->map == MAP_FAILED) {
		err = -errno;
		r->map = NULL;
		snprintf(pr->reason, sizeof(pr->reason), "mmap of the queue failed: %s",
			 strerror(-err));
		return err;
	}
	r->map_size = qc.out_mmap_size;
	r->khdr = r->map;
	if (r->khdr->magic != NCCOM_RING_MAGIC || r->khdr->version != NCCOM_RING_VERSION ||
	    r->khdr->depth != depth) {
		snprintf(pr->reason, sizeof(pr->reason), "queue mapping has magic %#x version %u depth %u; expected %#x %u %u",
			 r->khdr->magic, r->khdr->version, r->khdr->depth, NCCOM_RING_MAGIC,
			 NCCOM_RING_VERSION, depth);
		return -EPROTO;
	}
	r->depth = depth;
	r->mask = depth - 1;
	r->ksqes = (struct nccom_desc *)((char *)r->map + qc.out_sq_offset);
	r->kcqes = (struct nccom_cqe *)((char *)r->map + qc.out_cq_offset);
	r->sq_tail = r->sq_published = __atomic_load_n(&r->khdr->sq_tail, __ATOMIC_RELAXED);
	r->cq_head = __atomic_load_n(&r->khdr->cq_head, __ATOMIC_RELAXED);
	return 0;
}

static int kdev_sem_create(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	struct nccom_sem_create sc = { .size = sizeof(sc) };
	int err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_CREATE, &sc);

	if (err) {
		snprintf(pr->reason, sizeof(pr->reason), "SEM_CREATE failed: %s", strerror(-err));
		return err;
	}
	kd->sem = sc.out_handle;
	return 0;
}

static int kdev_probe_local(struct ccom_kdev *kd, struct kdev_probe *pr)
{
	int err;

	if (kd->comm->device < 0) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "this rank is bound to no nccom device (config.device/CCOM_DEVICE -1, or no device)");
		return -ENODEV;
	}
	err = kdev_open(kd, pr);
	if (!err && (uint32_t)kd->comm->device >= kd->info.dev_count) {
		snprintf(pr->reason, sizeof(pr->reason), "device %d does not exist (%u devices)",
			 kd->comm->device, kd->info.dev_count);
		err = -ENODEV;
	}
	if (!err)
		err = kdev_ring_create(kd, pr);
	if (!err)
		err = kdev_sem_create(kd, pr);
	return err;
}

/* ---- the grant channel ---- */

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
	struct kdev_hello h = { KDEV_HELLO_MAGIC, comm->rank };
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
	int64_t deadline = ccom_now_us() + KDEV_SETUP_TIMEOUT_US;
	int want = kd->nlocal - 1 - kd->me, got = 0, s, l;
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	struct kdev_hello h;

	while (got < want) {
		if (ccom_comm_aborted(comm))
			return -ECANCELED;
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("kdev: rank %d: only %d of %d higher local ranks connected the grant channel within %llds",
					    comm->rank, got, want, KDEV_SETUP_TIMEOUT_US / 1000000);
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
		    h.magic != KDEV_HELLO_MAGIC || h.rank < 0 || h.rank >= comm->nranks ||
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

static int kdev_connect_mesh(struct ccom_kdev *kd)
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

bool ccom_kdev_spin(struct ccom_kdev_spin *s)
{
	int64_t now;

	if (++s->n < 64) {
		__builtin_ia32_pause();
		return true;
	}
	now = ccom_now_us();
	if (!s->until_us)
		s->until_us = now + CCOM_KDEV_SPIN_US;
	if (now >= s->until_us)
		return false;
	sched_yield();	/* let the engine threads and the peers run */
	return true;
}

/*
 * A peer closed its grant channel: it died, or failed because of another
 * rank and left.  The shm segment's pidfds and broken flags name the root
 * cause; give them a moment (as sched.c's root_cause()).  0 if they say
 * nothing.
 */
static int kdev_root_cause(struct ccom_kdev *kd)
{
	struct ccom_shm *shm = kd->comm->coll ? kd->comm->coll->shm : NULL;
	struct ccom_wait w;
	int i, err = 0;

	if (!shm)
		return 0;
	ccom_wait_begin(&w, kd->comm, shm);
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
	int64_t deadline = ccom_now_us() + KDEV_SETUP_TIMEOUT_US;
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
			ccom_set_last_error("kdev: rank %d: grant channel to peer rank %d (pid %d) failed: %s; the peer died or left",
					    kd->comm->rank, peer, kd->comm->peers[peer].pid,
					    strerror(-err));
			return err == -EPIPE ? -ECONNRESET : err;
		}
		/* A full socket buffer: the peer is behind; bounded by the deadline. */
		if (ccom_comm_aborted(kd->comm)) {
			ccom_set_last_error("rank %d: the communicator was aborted", kd->comm->rank);
			return -ECANCELED;
		}
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("kdev: rank %d: grant channel to peer rank %d stayed full for %llds",
					    kd->comm->rank, kd->comm->local_to_rank[lpeer],
					    KDEV_SETUP_TIMEOUT_US / 1000000);
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
	struct ccom_shm *shm = comm->coll ? comm->coll->shm : NULL;
	int64_t deadline = ccom_now_us() + KDEV_SETUP_TIMEOUT_US;
	struct pollfd p = { .fd = kd->sock[lpeer], .events = POLLIN };
	struct ccom_kdev_spin sp;
	struct ccom_wait w;
	int err;

	ccom_kdev_spin_reset(&sp);
	ccom_wait_begin(&w, comm, shm);
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
		if (!comm->coll || !comm->coll->deadline_us) {
			if (ccom_now_us() > deadline) {
				ccom_set_last_error("kdev: rank %d: no grant-channel message from peer rank %d within %llds",
						    comm->rank, comm->local_to_rank[lpeer],
						    KDEV_SETUP_TIMEOUT_US / 1000000);
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

/* Exchange semaphore grants with every local peer. */
static int kdev_exchange_sems(struct ccom_kdev *kd)
{
	struct nccom_sem_export ex = { .size = sizeof(ex), .handle = kd->sem };
	struct kdev_hello h = { KDEV_HELLO_MAGIC, kd->comm->rank }, in;
	int l, fd, n, err;

	err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_EXPORT, &ex);
	if (err) {
		ccom_set_last_error("kdev: rank %d: SEM_EXPORT failed: %s", kd->comm->rank,
				    strerror(-err));
		return err;
	}
	for (l = 0; !err && l < kd->nlocal; l++)
		if (l != kd->me)
			err = ccom_kdev_sendmsg(kd, l, &h, sizeof(h), &ex.out_fd, 1);
	close(ex.out_fd);
	for (l = 0; !err && l < kd->nlocal; l++) {
		struct nccom_sem_import im = { .size = sizeof(im) };

		if (l == kd->me)
			continue;
		err = ccom_kdev_recvmsg(kd, l, &in, sizeof(in), &fd, 1, &n);
		if (err)
			break;
		if (n != 1 || in.magic != KDEV_HELLO_MAGIC ||
		    in.rank != kd->comm->local_to_rank[l]) {
			if (n == 1)
				close(fd);
			ccom_set_last_error("kdev: rank %d: bad semaphore grant from local rank %d",
					    kd->comm->rank, l);
			return -EPROTO;
		}
		im.fd = fd;
		err = ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_IMPORT, &im);
		close(fd);
		if (err) {
			ccom_set_last_error("kdev: rank %d: SEM_IMPORT of peer rank %d's semaphore failed: %s",
					    kd->comm->rank, in.rank, strerror(-err));
			return err;
		}
		kd->peer_sem[l] = im.out_handle;
	}
	return err;
}

/* ---- lifecycle ---- */

static void kdev_free(struct ccom_kdev *kd)
{
	int l;

	if (!kd)
		return;
	ccom_kdev_grant_fini(kd);
	if (kd->ring.map)
		munmap(kd->ring.map, kd->ring.map_size);
	if (kd->sock) {
		for (l = 0; l < kd->nlocal; l++)
			if (kd->sock[l] >= 0)
				close(kd->sock[l]);
	}
	/* Closing the fd destroys every handle: queue, semaphores, pins, imports. */
	if (kd->fd >= 0)
		close(kd->fd);
	if (kd->scratch)
		munmap(kd->scratch, kd->scratch_size);
	free(kd->sock);
	free(kd->peer_sem);
	free(kd);
}

static int kdev_mode(void)
{
	const char *v = ccom_param_str("CCOM_KDEV");

	if (!v || !v[0])
		return -1;
	if (!strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1"))
		return 1;
	ccom_warn("CCOM_KDEV=%s is not 0 or 1; treating it as unset (automatic)", v);
	return -1;
}

/* All-gather the probes; 0 if every rank can use kdev, else the first failing rank. */
static int kdev_agree(struct ccomComm *comm, struct kdev_probe *mine, int *bad)
{
	struct kdev_probe *all = calloc((size_t)comm->nranks, sizeof(*all));
	int r, err;

	if (!all)
		return -ENOMEM;
	all[comm->rank] = *mine;
	err = ccom_bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
	*bad = -1;
	for (r = 0; !err && r < comm->nranks; r++) {
		if (all[r].mode != all[0].mode || all[r].min_bytes != all[0].min_bytes) {
			ccom_set_last_error("CCOM_KDEV/CCOM_KDEV_MIN_BYTES differ between rank 0 (%d/%lld) and rank %d (%d/%lld); set them identically on every rank",
					    all[0].mode, (long long)all[0].min_bytes, r, all[r].mode,
					    (long long)all[r].min_bytes);
			err = -EINVAL;
			break;
		}
	}
	for (r = 0; !err && r < comm->nranks; r++) {
		if (!all[r].ok || all[r].features != all[0].features) {
			*bad = r;
			if (all[r].ok)
				snprintf(all[r].reason, sizeof(all[r].reason),
					 "driver features %#llx differ from rank 0's %#llx",
					 (unsigned long long)all[r].features,
					 (unsigned long long)all[0].features);
			*mine = all[r];
			break;
		}
	}
	free(all);
	return err;
}

static int kdev_not_used(struct ccomComm *comm, int mode, int bad, const char *why)
{
	if (mode == 1) {
		if (bad >= 0)
			ccom_set_last_error("CCOM_KDEV=1 but rank %d cannot use /dev/nccom: %s; load nccom.ko (modprobe nccom) or unset CCOM_KDEV",
					    bad, why);
		else
			ccom_set_last_error("CCOM_KDEV=1 but %s; unset CCOM_KDEV", why);
		return -ENODEV;
	}
	if (mode == 0)
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): CCOM_KDEV=0; using shm",
			  comm->rank);
	else if (bad >= 0)
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): rank %d: %s; using shm",
			  comm->rank, bad, why);
	else
		ccom_info(CCOM_SUBSYS_KDEV, "kdev not used (rank %d): %s; using shm", comm->rank,
			  why);
	return 0;
}

/* The most ranks of the communicator on one host (same answer on every rank). */
static int kdev_max_local(const struct ccomComm *comm)
{
	int *n = calloc((size_t)comm->nranks, sizeof(int)), r, max = 0;

	if (!n)
		return comm->local_nranks;
	for (r = 0; r < comm->nranks; r++) {
		int node = comm->rank_to_node[r];

		if (node >= 0 && node < comm->nranks && ++n[node] > max)
			max = n[node];
	}
	free(n);
	return max;
}

int ccom_kdev_comm_init(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;
	struct kdev_probe pr = { 0 };
	struct ccom_kdev *kd;
	int mode = kdev_mode(), bad, err, l;

	/* Every early return below depends only on what every rank knows alike. */
	if (comm->nranks == 1)
		return 0;	/* nothing to move between ranks */
	if (comm->nnodes <= 1 && !cs->shm)
		return kdev_not_used(comm, mode, -1,
				     "no shared-memory segment between the ranks (CCOM_TRANSPORT=net?)");
	/* Grants held per peer are a 64-bit mask (kdev/regcache.c). */
	if (kdev_max_local(comm) > CCOM_KDEV_MAX_LOCAL)
		return kdev_not_used(comm, mode, -1,
				     "more than 64 ranks of the communicator on one host (kdev supports up to 64)");
	if (kdev_max_local(comm) < 2)
		return kdev_not_used(comm, mode, -1,
				     "no two ranks of the communicator share a host");
	/* Peer info already says whether every rank sees devices: no probe needed then. */
	for (l = 0; mode != 0 && l < comm->nranks; l++)
		if (comm->peers[l].ndevices <= 0)
			return kdev_not_used(comm, mode, l,
					     "no nccom device (/dev/nccom absent: nccom.ko is not loaded)");
	kd = calloc(1, sizeof(*kd));
	if (!kd)
		return -ENOMEM;
	kd->comm = comm;
	kd->fd = -1;
	kd->forced = mode == 1;
	/* Several hosts: Send/Recv with the ranks of this host only (collectives need them all). */
	kd->p2p_only = comm->nnodes > 1;
	kd->nlocal = comm->local_nranks;
	kd->me = comm->local_rank;
	kd->min_bytes = ccom_param_int("CCOM_KDEV_MIN_BYTES");
	kd->sock = malloc((size_t)kd->nlocal * sizeof(int));
	kd->peer_sem = calloc((size_t)kd->nlocal, sizeof(uint32_t));
	if (!kd->sock || !kd->peer_sem) {
		kdev_free(kd);
		return -ENOMEM;
	}
	for (l = 0; l < kd->nlocal; l++)
		kd->sock[l] = -1;
	pr.mode = mode;
	pr.min_bytes = kd->min_bytes;
	if (mode == 0) {
		snprintf(pr.reason, sizeof(pr.reason), "CCOM_KDEV=0");
		err = -ENODEV;
	} else {
		err = kdev_probe_local(kd, &pr);
	}
	if (!err && kd->nlocal > 1 && !cs->shm) {
		snprintf(pr.reason, sizeof(pr.reason),
			 "no shared-memory segment with its local peers (CCOM_TRANSPORT=net?)");
		err = -ENODEV;
	}
	pr.ok = !err;
	pr.err = err;
	if (!err) {
		err = ccom_kdev_grant_init(kd);
		if (err) {
			pr.ok = 0;
			snprintf(pr.reason, sizeof(pr.reason), "out of memory");
		}
	}
	err = kdev_agree(comm, &pr, &bad);
	if (err || bad >= 0) {
		kdev_free(kd);
		return err ? err : kdev_not_used(comm, mode, bad, pr.reason);
	}
	err = kdev_connect_mesh(kd);
	if (!err)
		err = kdev_exchange_sems(kd);
	if (!err)
		err = ccom_bootstrap_barrier(comm->bootstrap);
	if (err) {
		kdev_free(kd);
		return err;
	}
	cs->kdev = kd;
	ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d uses /dev/nccom device %d (ABI %u, features %#llx, queue depth %u)%s%s",
		  comm->rank, comm->device, kd->info.out_abi_version,
		  (unsigned long long)kd->info.out_features, kd->ring.depth,
		  kd->p2p_only ? " for Send/Recv with the ranks of its host only (the communicator spans several hosts)" : "",
		  kd->forced ? ", forced (CCOM_KDEV=1)" : "");
	return 0;
}

void ccom_kdev_comm_fini(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;

	if (!cs || !cs->kdev)
		return;
	kdev_free(cs->kdev);
	cs->kdev = NULL;
}

void ccom_kdev_comm_abort(struct ccomComm *comm)
{
	/*
	 * comm->abort_flag is set: the progress thread's wait loop (kdev/)
	 * sees it within one QUEUE_WAIT slice and cancels the queue itself;
	 * destroying handles here would race with its ioctls.
	 */
	(void)comm;
}

void ccom_kdev_cancel(struct ccom_kdev *kd)
{
	if (kd->dead)
		return;
	kd->dead = true;
	/* Queued descriptors complete with -ECANCELED; peers' waits on my semaphore get -EPIPE. */
	kdev_destroy_handle(kd, kd->ring.handle);
	kdev_destroy_handle(kd, kd->sem);
	ccom_kdev_p2p_cancel(kd);
}

int ccom_kdev_publish(struct ccom_kdev *kd)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_doorbell db = { .size = sizeof(db), .handle = r->handle };
	int err;

	if (r->sq_tail == r->sq_published)
		return 0;
	/* Release: the descriptor stores above happen before the engine sees the tail. */
	__atomic_store_n(&r->khdr->sq_tail, r->sq_tail, __ATOMIC_RELEASE);
	r->sq_published = r->sq_tail;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_DOORBELL, &db);
	if (err)
		ccom_set_last_error("kdev: rank %d: QUEUE_DOORBELL failed: %s%s", kd->comm->rank,
				    strerror(-err), err == -EIO ? " (the queue is in the error state)" : "");
	return err;
}

int ccom_kdev_wait_cq(struct ccom_kdev *kd, int64_t timeout_us)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct nccom_queue_wait qw = { .size = sizeof(qw), .handle = r->handle };
	struct timespec ts;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	qw.cq_tail = r->cq_head + ccom_kdev_cq_ready(r);
	qw.timeout_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
			(uint64_t)timeout_us * 1000ull;
	err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_WAIT, &qw);
	return err == -ETIMEDOUT || err == -EINTR ? 0 : err;
}
