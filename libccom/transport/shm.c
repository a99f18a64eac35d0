// SPDX-License-Identifier: MIT
/*
 * shm.c - the shared-memory segment of the ranks of one host (transport
 * layer): creation by the first local rank, hand-over of the memfd to the
 * others with SCM_RIGHTS over a unix socket, the doorbells, the host
 * barrier, and the wait source it plugs into proxy/wait.c (CPU placement
 * and the liveness of the local peers).  Layout and rules are in shm.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "proxy/proxy.h"
#include "proxy/wait.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/numa.h"
#include "util/params.h"

#define SHM_MAGIC 0x63636f6d73686d31ULL	/* "ccomshm1" */
#define SHM_PAGE 4096UL
#define SHM_CONNECT_TIMEOUT_US (30 * 1000000LL)

static const struct ccom_wait_ops shm_wait_ops;

static size_t page_align(size_t x)
{
	return (x + SHM_PAGE - 1) & ~(SHM_PAGE - 1);
}

/* Compute the layout for @nlocal ranks into @s (offsets relative to base). */
static void shm_layout(struct ccom_shm *s, size_t *ll_off, size_t *stage_off, size_t *fifo_off)
{
	int64_t chunk = ccom_param_int("CCOM_SHM_CHUNK");

	/* 0 = auto: large steps amortize the barrier, staging stays in L3. */
	if (chunk == 0)
		chunk = s->nlocal <= 2 ? (1 << 20) : s->nlocal <= 4 ? (512 << 10) : (256 << 10);
	if (chunk < 4096 || chunk > (64 << 20))
		chunk = 512 << 10;
	s->chunk = (size_t)chunk & ~(size_t)4095;
	/* Pieces of the flag-synchronised one-shot: a few per step, each well inside L2. */
	s->piece = 128 << 10;
	/* nlocal^2 FIFOs, but only ring neighbours' pages are ever touched (the memfd is sparse). */
	s->fifo_bytes = s->nlocal <= 8 ? (256 << 10) : s->nlocal <= 64 ? (64 << 10) : (16 << 10);
	s->fifo_stride = sizeof(struct ccom_shm_fifo) + s->fifo_bytes;
	*ll_off = page_align(sizeof(struct ccom_shm_hdr));
	*stage_off = *ll_off + page_align((size_t)2 * s->nlocal * CCOM_SHM_LL_SLOT_WORDS * 8) +
		     page_align((size_t)2 * s->nlocal * CCOM_SHM_LL128_LINES * CCOM_SHM_LINE);
	*fifo_off = *stage_off + (size_t)CCOM_SHM_NBUF * s->nlocal * s->chunk;
	s->size = *fifo_off + page_align((size_t)s->nlocal * s->nlocal * s->fifo_stride);
}

static void shm_sock_path(const struct ccomComm *comm, char *buf, size_t len)
{
	int leader = comm->local_to_rank[0];
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(buf, len, "%s/ccom-%016llx-%d-%d.sock", dir,
		 (unsigned long long)comm->comm_hash, leader, comm->peers[leader].pid);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return errno ? -errno : -EPROTO;
	if (msg.msg_flags & MSG_CTRUNC)
		return -EMFILE;	/* the kernel could not install the fd here */
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Leader: accept nlocal-1 connections and hand each the memfd. */
static int shm_serve_fd(struct ccomComm *comm, int lsock, int fd, int n)
{
	int64_t deadline = ccom_now_us() + SHM_CONNECT_TIMEOUT_US;
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	int served = 0, c, err;

	while (served < n) {
		if (ccom_comm_aborted(comm))
			return -ECANCELED;
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("shm: only %d of %d local peers fetched the shared segment within %llds; check that every rank of the host reached init",
					    served, n, SHM_CONNECT_TIMEOUT_US / 1000000);
			return -ETIMEDOUT;
		}
		if (poll(&p, 1, 50) <= 0)
			continue;
		c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0 && (errno == EMFILE || errno == ENFILE)) {
			err = -errno;
			ccom_set_last_error("shm: cannot accept a local peer: %s", ccom_errno_str(-err));
			return err;
		}
		if (c < 0)
			continue;
		err = send_fd(c, fd);
		close(c);
		if (err) {
			ccom_set_last_error("shm: passing the segment fd to a local peer failed: %s",
					    strerror(-err));
			return err;
		}
		served++;
	}
	return 0;
}

/* Non-leader: connect to the leader's socket and receive the memfd. */
static int shm_fetch_fd(struct ccomComm *comm, const char *path)
{
	int64_t deadline = ccom_now_us() + SHM_CONNECT_TIMEOUT_US;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock, fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (;;) {
		sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (sock < 0) {
			fd = -errno;
			ccom_set_last_error("shm: cannot create a socket to fetch the host segment: %s",
					    ccom_errno_str(-fd));
			return fd;
		}
		if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(sock);
		if (ccom_comm_aborted(comm))
			return -ECANCELED;
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("shm: cannot connect to the host's segment socket %s: %s; is /dev/shm (or /tmp) shared between the ranks?",
					    path, strerror(errno));
			return -ETIMEDOUT;
		}
		ccom_sleep_us(1000, &comm->abort_flag);
	}
	fd = recv_fd(sock);
	close(sock);
	if (fd < 0)
		ccom_set_last_error("shm: receiving the segment fd from the host's first rank failed: %s",
				    ccom_errno_str(-fd));
	return fd;
}

static int shm_create_leader(struct ccomComm *comm, struct ccom_shm *s, int *lsock,
			     const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	int err;

	s->fd = memfd_create("ccom-shm", MFD_CLOEXEC);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)s->size) < 0) {
		err = -errno;
		ccom_set_last_error("shm: memfd of %zu bytes failed: %s", s->size,
				    ccom_errno_str(-err));
		return err;
	}
	if (comm->local_nranks == 1)
		return 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	*lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lsock < 0 || bind(*lsock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(*lsock, CCOM_SHM_MAX_LOCAL) < 0) {
		err = -errno;
		ccom_set_last_error("shm: cannot listen on %s: %s", path, ccom_errno_str(-err));
		return err;
	}
	return 0;
}

static int shm_map(struct ccom_shm *s, bool leader)
{
	size_t ll_off, stage_off, fifo_off;
	struct stat st;

	shm_layout(s, &ll_off, &stage_off, &fifo_off);
	if (!leader && (fstat(s->fd, &st) < 0 || (size_t)st.st_size != s->size)) {
		ccom_set_last_error("shm: the host segment has %lld bytes, this rank expects %zu: set CCOM_SHM_CHUNK identically on every rank",
				    (long long)st.st_size, s->size);
		return -EBADE;
	}
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		ccom_set_last_error("shm: mmap of %zu bytes failed: %s", s->size, strerror(errno));
		return -errno;
	}
	s->hdr = s->base;
	s->ll = (uint64_t *)((char *)s->base + ll_off);
	s->ll128 = (struct ccom_shm_ll128_line *)((char *)s->base + ll_off +
		   page_align((size_t)2 * s->nlocal * CCOM_SHM_LL_SLOT_WORDS * 8));
	s->stage = (char *)s->base + stage_off;
	s->fifo = (char *)s->base + fifo_off;
	if (leader) {
		s->hdr->magic = SHM_MAGIC;
		s->hdr->nlocal = (uint32_t)s->nlocal;
		s->hdr->size = s->size;
	}
	return 0;
}

/*
 * This rank's staging slots and the FIFOs it writes prefer the NUMA node
 * of its CPUs (topo/bind.c bound it if the launcher did not), set before
 * any of their pages is touched: the policy is the memfd range's, so it
 * holds whichever rank touches a page first.  CPUs spanning nodes: first
 * touch decides.  Logged at INFO (TOPO); a failed mbind is not fatal.
 */
static void shm_place(struct ccom_shm *s)
{
	int node = ccom_numa_self_node(), b, err = 0;

	s->numa_node = node;
	if (node < 0) {
		ccom_info(CCOM_SUBSYS_TOPO, "shm: rank %d's CPUs span NUMA nodes: its staging and FIFOs are placed by first touch",
			  s->comm->rank);
		return;
	}
	for (b = 0; b < CCOM_SHM_NBUF && !err; b++)
		err = ccom_numa_prefer(ccom_shm_stage(s, b, s->me), s->chunk, node);
	if (!err)
		err = ccom_numa_prefer(ccom_shm_fifo(s, s->me, 0), (size_t)s->nlocal * s->fifo_stride,
				       node);
	if (err) {
		s->numa_node = -1;
		ccom_info(CCOM_SUBSYS_TOPO, "shm: rank %d: mbind of its staging and FIFOs to NUMA node %d failed (%s); first touch places them",
			  s->comm->rank, node, ccom_errno_str(-err));
		return;
	}
	ccom_info(CCOM_SUBSYS_TOPO, "shm: rank %d: staging (%d x %zu bytes) and FIFOs (%d x %zu bytes) prefer NUMA node %d",
		  s->comm->rank, CCOM_SHM_NBUF, s->chunk, s->nlocal, s->fifo_stride, node);
}

/* Record the CPU this rank runs on, for waiters deciding whether to spin. */
static void shm_publish_cpu(void *ctx)
{
	struct ccom_shm *s = ctx;
	int cpu = sched_getcpu();

	if (atomic_load_explicit(&s->hdr->ctl[s->me].cpu, memory_order_relaxed) != cpu)
		atomic_store_explicit(&s->hdr->ctl[s->me].cpu, cpu, memory_order_relaxed);
}

/* Does the rank a wait is for (@peer, -1: any peer for the host bell) share this CPU? */
static bool shm_peer_on_my_cpu(void *ctx, int peer)
{
	struct ccom_shm *s = ctx;
	int cpu = atomic_load_explicit(&s->hdr->ctl[s->me].cpu, memory_order_relaxed), l;

	if (peer >= 0)
		return atomic_load_explicit(&s->hdr->ctl[peer].cpu, memory_order_relaxed) == cpu;
	for (l = 0; l < s->nlocal; l++)
		if (l != s->me &&
		    atomic_load_explicit(&s->hdr->ctl[l].cpu, memory_order_relaxed) == cpu)
			return true;
	return false;
}

/* Open a pidfd per local peer of another process, for liveness checks. */
static void shm_open_pidfds(struct ccomComm *comm, struct ccom_shm *s)
{
	int l, r;

	for (l = 0; l < s->nlocal; l++) {
		r = comm->local_to_rank[l];
		s->pidfd[l] = -1;
		if (l == s->me || comm->peers[r].pid == getpid())
			continue;
		s->pidfd[l] = (int)syscall(SYS_pidfd_open, comm->peers[r].pid, 0);
	}
}

static int shm_exchange(struct ccomComm *comm, struct ccom_shm *s, bool leader, int lsock,
			const char *path)
{
	int err;

	err = ccom_bootstrap_subset_barrier(comm->bootstrap, comm->local_to_rank, s->nlocal,
					    CCOM_TAG_SHM_BASE + 1);
	if (err)
		return err;
	if (leader)
		err = shm_serve_fd(comm, lsock, s->fd, s->nlocal - 1);
	else {
		s->fd = shm_fetch_fd(comm, path);
		err = s->fd < 0 ? s->fd : 0;
	}
	if (err)
		return err;
	return ccom_bootstrap_subset_barrier(comm->bootstrap, comm->local_to_rank, s->nlocal,
					     CCOM_TAG_SHM_BASE + 2);
}

int ccom_shm_init(struct ccomComm *comm, struct ccom_shm **out)
{
	bool leader = comm->local_rank == 0;
	char path[108];
	struct ccom_shm *s;
	int lsock = -1, err;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (comm->local_nranks > CCOM_SHM_MAX_LOCAL) {
		ccom_set_last_error("shm: %d ranks on one host, at most %d are supported",
				    comm->local_nranks, CCOM_SHM_MAX_LOCAL);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->comm = comm;
	s->fd = -1;
	s->nlocal = comm->local_nranks;
	s->me = comm->local_rank;
	s->culprit = -1;
	shm_sock_path(comm, path, sizeof(path));
	shm_layout(s, &(size_t){ 0 }, &(size_t){ 0 }, &(size_t){ 0 });
	err = leader ? shm_create_leader(comm, s, &lsock, path) : 0;
	if (!err && s->nlocal > 1)
		err = shm_exchange(comm, s, leader, lsock, path);
	if (lsock >= 0) {
		close(lsock);
		unlink(path);
	}
	if (!err)
		err = shm_map(s, leader);
	if (err) {
		ccom_shm_fini(s);
		return err;
	}
	shm_place(s);
	atomic_store(&s->hdr->ctl[s->me].pid, getpid());
	shm_open_pidfds(comm, s);
	/*
	 * More ranks than CPUs: yield almost at once, so the peers we wait for
	 * get the CPU.  Otherwise spin briefly and then sleep on the futex
	 * without yielding: on a busy machine a yield hands the CPU to another
	 * job for a whole slice, while a futex wake-up is scheduled at once
	 * (measured: 8 B allreduce on 2 ranks under load, 20-60 us with
	 * 300 spins and no yield vs 40-350 us with 1,000 spins + 50 yields).
	 */
	s->wait_src.ops = &shm_wait_ops;
	s->wait_src.ctx = s;
	s->wait_src.host_bell = &s->hdr->bell;
	s->wait_src.spin_limit = s->nlocal > ncpu ? 8 : 300;
	s->wait_src.yield_limit = s->nlocal > ncpu ? 200 : 0;
	s->wait_src.spin_us = s->nlocal > ncpu ? 0 : 50;
	s->oversubscribed = s->nlocal > ncpu;
	shm_publish_cpu(s);
	*out = s;
	return 0;
}

void *ccom_shm_map_peer(struct ccom_shm *s, int lrank, uint64_t serial, int fd, uint64_t ino,
			size_t size)
{
	struct ccom_shm_zmap *z;
	struct stat st;
	char path[64];
	void *p;
	int i, mfd;

	for (i = 0; i < CCOM_SHM_ZMAPS; i++) {
		z = &s->zmap[i];
		/* A cached mapping serves only the size it was made with (the peer's word). */
		if (z->base && z->lrank == lrank && z->serial == serial && size <= z->size) {
			z->used = s->zseq;
			return z->base;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d",
		 (int)s->comm->peers[s->comm->local_to_rank[lrank]].pid, fd);
	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0)
		return NULL;
	/* A pid of another namespace, or an fd number reused: not the peer's buffer. */
	if (fstat(mfd, &st) < 0 || (uint64_t)st.st_ino != ino || (size_t)st.st_size < size) {
		close(mfd);
		errno = ESTALE;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (p == MAP_FAILED)
		return NULL;
	/* Round robin over the entries the current operation does not use. */
	do {
		z = &s->zmap[s->zmap_next];
		s->zmap_next = (s->zmap_next + 1) % CCOM_SHM_ZMAPS;
	} while (z->base && z->used == s->zseq);
	if (z->base)
		munmap(z->base, z->size);
	*z = (struct ccom_shm_zmap){ .lrank = lrank, .serial = serial, .used = s->zseq,
				     .base = p, .size = size };
	return p;
}

void ccom_shm_fini(struct ccom_shm *s)
{
	int l;

	if (!s)
		return;
	for (l = 0; l < CCOM_SHM_ZMAPS; l++)
		if (s->zmap[l].base)
			munmap(s->zmap[l].base, s->zmap[l].size);
	if (s->base) {
		for (l = 0; l < s->nlocal; l++)
			if (s->pidfd[l] >= 0)
				close(s->pidfd[l]);
		munmap(s->base, s->size);
	}
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

void ccom_shm_ring(struct ccom_shm *s)
{
	ccom_bell_ring(&s->hdr->ctl[s->me].bell);
}

void ccom_shm_mark_broken(struct ccom_shm *s, int reason)
{
	struct ccom_shm_ctl *c;
	int culprit;

	if (!s || !s->hdr)
		return;
	c = &s->hdr->ctl[s->me];
	if (atomic_load(&c->broken))
		return;
	if (s->culprit >= 0) {
		culprit = s->culprit;
		reason = s->reason;
	} else {
		/* A root cause another transport found (a TCP peer's death): pass it on. */
		culprit = ccom_proxy_first_failed(s->comm);
		if (culprit >= 0)
			reason = CCOM_SHM_FAILED;
		else
			culprit = s->comm->rank;
	}
	atomic_store(&c->culprit, culprit);
	atomic_store(&c->reason, reason);
	/* Pairs with the acquire load of broken in check_local_peers(). */
	atomic_store_explicit(&c->broken, 1, memory_order_release);
	/* Wake everyone now: sleepers on any bell also time out every 2 ms. */
	ccom_bell_wake_all(&s->hdr->bell);
	ccom_bell_wake_all(&c->bell);
}

void ccom_shm_mark_departed(struct ccom_shm *s)
{
	if (s && s->hdr)
		atomic_store(&s->hdr->ctl[s->me].departed, 1);
}

static bool pidfd_dead(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

static int report_broken(struct ccom_shm *s, int l)
{
	struct ccomComm *comm = s->comm;
	struct ccom_shm_ctl *c = &s->hdr->ctl[l];
	int by = comm->local_to_rank[l], culprit = atomic_load(&c->culprit);
	int reason = atomic_load(&c->reason);
	static const char *const what[] = { "failed", "failed", "died", "aborted" };

	/* Written by that peer into the shared segment: a rank of the comm, else itself. */
	if (culprit < 0 || culprit >= comm->nranks)
		culprit = by;
	s->culprit = culprit;
	s->reason = reason;
	/*
	 * A peer whose op timed out is alive and waited for someone else:
	 * this rank's op ends the same way (a timeout, not a peer failure).
	 */
	if (reason & CCOM_SHM_TIMEDOUT) {
		ccom_set_last_error("rank %d: peer rank %d timed out in the same operation (CCOM_OP_TIMEOUT)%s; this operation cannot complete",
				    comm->rank, culprit, culprit == by ? "" : " (reported by another rank)");
		return -ETIMEDOUT;
	}
	/* An abort or revoke alone is no death: that rank may be shrinking too. */
	if ((reason & 3) != CCOM_SHM_ABORTED)
		ccom_proxy_note_failed(comm, culprit);
	if (culprit == by)
		ccom_set_last_error("rank %d: peer rank %d %s; this operation cannot complete",
				    comm->rank, culprit, what[reason & 3]);
	else
		ccom_set_last_error("rank %d: peer rank %d %s (reported by rank %d); this operation cannot complete",
				    comm->rank, culprit, what[reason & 3], by);
	return -ECONNRESET;
}

#define SIG_TAG(seq) ((uint64_t)((seq) & 0xffff) << 48)
#define SIG_LOW48 ((1ULL << 48) - 1)

void ccom_shm_sig_post(struct ccom_shm *s, const struct ccom_op_sig *sig)
{
	struct ccom_shm_sig *e = &s->hdr->sig[s->me][sig->seq % CCOM_SHM_SIG_RING];
	uint64_t tag = SIG_TAG(sig->seq);

	s->sig = *sig;
	ccom_shm_ll_sig_pack(sig, s->sig_ll);
	s->sig_ab[0] = tag | (sig->count & SIG_LOW48);
	s->sig_ab[1] = tag | ((uint64_t)(sig->kind & 0xff) << 40) |
		       ((uint64_t)(sig->dtype & 0xff) << 32) | ((uint64_t)(sig->op & 0xff) << 24) |
		       ((uint64_t)sig->root & 0xffffff);
	atomic_store_explicit(&e->a, s->sig_ab[0], memory_order_relaxed);
	atomic_store_explicit(&e->b, s->sig_ab[1], memory_order_relaxed);
	atomic_store_explicit(&e->seq, sig->seq, memory_order_release);
}

/*
 * Local rank @l's entry for @seq into @out: true if it holds @seq, else
 * false with the seq it holds in *@held (0 also while being rewritten).
 */
/* The board's words @a, @b of @seq (tags already checked) into @out. */
static void sig_unpack_ab(uint64_t seq, uint64_t a, uint64_t b, struct ccom_op_sig *out)
{
	out->seq = seq;
	out->count = a & SIG_LOW48;
	out->kind = (int32_t)((b >> 40) & 0xff);
	out->dtype = (int32_t)((b >> 32) & 0xff);
	out->op = (int32_t)(int8_t)((b >> 24) & 0xff);
	out->root = (b & 0xffffff) == 0xffffff ? -1 : (int32_t)(b & 0xffffff);
}

/*
 * Local rank @l's entry for @seq into @out: true if it holds @seq, else
 * false with the seq it holds in *@held (0 also while being rewritten).
 */
static bool sig_read(struct ccom_shm *s, int l, uint64_t seq, struct ccom_op_sig *out, uint64_t *held)
{
	struct ccom_shm_sig *e = &s->hdr->sig[l][seq % CCOM_SHM_SIG_RING];
	uint64_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
	uint64_t a = atomic_load_explicit(&e->a, memory_order_relaxed);
	uint64_t b = atomic_load_explicit(&e->b, memory_order_relaxed);

	*held = s1;
	if (s1 != seq)
		return false;
	if ((a & ~SIG_LOW48) != SIG_TAG(seq) || (b & ~SIG_LOW48) != SIG_TAG(seq)) {
		*held = 0;	/* the owner is already rewriting it for a later seq */
		return false;
	}
	sig_unpack_ab(seq, a, b, out);
	return true;
}

int ccom_shm_sig_compare(struct ccom_shm *s, int l, const struct ccom_op_sig *theirs)
{
	struct ccom_op_sig mine = s->sig;
	const char *why;

	/* Compare what the board can hold: 48 bits of count, 24 of root. */
	if (theirs->count == (mine.count & SIG_LOW48))
		mine.count = theirs->count;
	why = ccom_op_sig_diff(&mine, theirs);

	if (!why)
		return 0;
	return ccom_op_sig_mismatch(s->comm->rank, &s->sig, s->comm->local_to_rank[l], theirs, why);
}

int ccom_shm_sig_compare_ab(struct ccom_shm *s, int l, uint64_t a, uint64_t b)
{
	struct ccom_op_sig theirs;
	uint64_t tag = a >> 48, seq;

	if ((a == s->sig_ab[0] && b == s->sig_ab[1]) || !s->sig.seq || (!a && !b))
		return 0;
	/* The peer's seq as far as its 16 low bits tell (the message names the difference). */
	seq = (s->sig.seq & ~(uint64_t)0xffff) | tag;
	sig_unpack_ab(seq, a, b, &theirs);
	return ccom_shm_sig_compare(s, l, &theirs);
}

static int sig_check(struct ccom_shm *s, bool strict)
{
	struct ccomComm *comm = s->comm;
	struct ccom_op_sig theirs;
	char mine_s[128];
	uint64_t held;
	int l, err;

	if (!s->sig.seq)
		return 0;
	for (l = 0; l < s->nlocal; l++) {
		if (l == s->me)
			continue;
		if (!sig_read(s, l, s->sig.seq, &theirs, &held)) {
			if (!strict)
				continue;	/* not there yet (or long past): it checks itself */
			ccom_set_last_error("collective mismatch: rank %d is at collective %llu (%s) but rank %d at %llu; call the same collectives in the same order on every rank",
					    comm->rank, (unsigned long long)s->sig.seq,
					    ccom_op_sig_str(&s->sig, mine_s, sizeof(mine_s)),
					    comm->local_to_rank[l], (unsigned long long)held);
			return -EPERM;
		}
		err = ccom_shm_sig_compare(s, l, &theirs);
		if (err)
			return err;
	}
	return 0;
}

int ccom_shm_sig_verify(struct ccom_shm *s, bool strict)
{
	return s ? sig_check(s, strict) : 0;
}

void ccom_shm_note_dead_peers(struct ccom_shm *s)
{
	int l, c;

	if (!s || !s->hdr)
		return;
	for (l = 0; l < s->nlocal; l++) {
		if (l == s->me || atomic_load(&s->hdr->ctl[l].departed))
			continue;
		if (pidfd_dead(s->pidfd[l]))
			ccom_proxy_note_failed(s->comm, s->comm->local_to_rank[l]);
		if (atomic_load_explicit(&s->hdr->ctl[l].broken, memory_order_acquire) &&
		    (atomic_load(&s->hdr->ctl[l].reason) & 3) != CCOM_SHM_ABORTED &&
		    !(atomic_load(&s->hdr->ctl[l].reason) & CCOM_SHM_TIMEDOUT)) {
			c = atomic_load(&s->hdr->ctl[l].culprit);
			ccom_proxy_note_failed(s->comm, c);
		}
	}
}

/*
 * A mismatched call first (a peer that found it breaks the segment, and
 * this rank should report the cause, not "peer failed"), then dead peers
 * (the root cause), then peers that broke because of one.
 */
static int shm_check_peers(void *ctx)
{
	struct ccom_shm *s = ctx;
	struct ccomComm *comm = s->comm;
	int l, r;

	r = sig_check(s, false);
	if (r)
		return r;

	for (l = 0; l < s->nlocal; l++) {
		r = comm->local_to_rank[l];
		if (l == s->me || !pidfd_dead(s->pidfd[l]) || atomic_load(&s->hdr->ctl[l].departed))
			continue;
		if (atomic_load_explicit(&s->hdr->ctl[l].broken, memory_order_acquire))
			return report_broken(s, l);	/* it failed first, then exited */
		s->culprit = r;
		s->reason = CCOM_SHM_DIED;
		ccom_proxy_note_failed(comm, r);
		ccom_set_last_error("rank %d: peer rank %d (pid %d) died during the operation",
				    comm->rank, r, comm->peers[r].pid);
		return -ECONNRESET;
	}
	for (l = 0; l < s->nlocal; l++)
		if (l != s->me && atomic_load_explicit(&s->hdr->ctl[l].broken, memory_order_acquire))
			return report_broken(s, l);
	return 0;
}

static const struct ccom_wait_ops shm_wait_ops = {
	.on_cpu = shm_publish_cpu,
	.peer_on_my_cpu = shm_peer_on_my_cpu,
	.check_peers = shm_check_peers,
};

void ccom_shm_wait_begin_peer(struct ccom_wait *w, struct ccom_shm *shm, int lrank)
{
	ccom_wait_init(w, shm->comm, &shm->wait_src, ccom_proxy_deadline(shm->comm),
		       ccom_proxy_op_timeout(shm->comm));
	ccom_wait_on(w, ccom_shm_peer_bell(shm, lrank), lrank);
}

int ccom_shm_barrier(struct ccom_shm *s)
{
	uint64_t target = ++s->barrier_epoch * (uint64_t)s->nlocal;
	struct ccom_wait w;
	int err = 0;

	if (atomic_fetch_add(&s->hdr->barrier, 1) + 1 == target) {
		ccom_bell_ring(&s->hdr->bell);
		return 0;
	}
	/* The segment's own bells and peers, whatever comm->proxy holds. */
	ccom_wait_init(&w, s->comm, &s->wait_src, ccom_proxy_deadline(s->comm),
		       ccom_proxy_op_timeout(s->comm));
	w.no_yield = s->bulk;
	while (atomic_load_explicit(&s->hdr->barrier, memory_order_acquire) < target) {
		err = ccom_wait_step(&w);
		if (err)
			break;
	}
	ccom_wait_end(&w);
	return err;
}
