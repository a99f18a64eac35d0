// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the exported fds of the nccom fuzzer's workers: poll, read,
 * write, mmap and close of dma-buf and semaphore fds, and the Unix-socket
 * ring between workers of a generation, over which each sends one fd
 * (SCM_RIGHTS) and the numbers of its handles, mmap offsets and fds, for
 * the receiver's isolation probes (fuzz_isolation.c).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuzz.h"

static sigjmp_buf fz_touch_env;
static volatile sig_atomic_t fz_touch_sig;

static void fz_touch_handler(int sig)
{
	fz_touch_sig = sig;
	siglongjmp(fz_touch_env, 1);
}

/* Reads one byte of a grant's mapping: 0, or the signal it raised. */
static int fz_touch(const volatile uint8_t *p)
{
	struct sigaction sa = { .sa_handler = fz_touch_handler }, obus, osegv;
	int sig = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	if (sigsetjmp(fz_touch_env, 1) == 0)
		(void)*p;
	else
		sig = fz_touch_sig;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return sig;
}

/*
 * mmap of a dma-buf grant with a random window, protection and sharing:
 * private or out-of-range -> EINVAL, writable without MAP_WRITE -> EACCES,
 * otherwise success or EFAULT (the owner's range is gone). A mapped page
 * reads or raises SIGBUS (revoked), never SIGSEGV; a read-only one cannot
 * be made writable.
 */
static void fz_dmabuf_map(struct xfd *x)
{
	uint64_t npg = x->len / PG, off = 0, len = x->len;
	int prot = PROT_READ, flags = MAP_SHARED, want = 0, sig;
	uint8_t *p;

	switch (fz_rnd(&fz_w.r, 6)) {
	case 0:
		break;
	case 1:	/* a window inside */
		off = fz_rnd(&fz_w.r, npg);
		len = (1 + fz_rnd(&fz_w.r, npg - off)) * PG;
		off *= PG;
		break;
	case 2:	/* across the end */
		off = fz_rnd(&fz_w.r, npg) * PG;
		len = x->len - off + PG * (1 + fz_rnd(&fz_w.r, 3));
		want = EINVAL;
		break;
	case 3:
		flags = MAP_PRIVATE;
		want = EINVAL;
		break;
	default:
		prot |= PROT_WRITE;
		if (!(x->access & X_MAP_WRITE))
			want = EACCES;
		break;
	}
	fz_sh->w[fz_slot].cur_op = FZ_X_DMABUF_MMAP;
	p = mmap(NULL, len, prot, flags, x->fd, off);
	fz_cov_x(FZ_X_DMABUF_MMAP, p == MAP_FAILED ? -1 : 0, errno);
	if (p == MAP_FAILED) {
		if (want ? errno != want : errno != EFAULT && !fz_resource_err(errno))
			fz_finding("dma-buf mmap (off %llu len %llu prot %d flags %d): %s, expected %s",
				   (unsigned long long)off, (unsigned long long)len, prot,
				   flags, strerror(errno), want ? strerror(want) : "success");
		return;
	}
	if (want)
		fz_finding("dma-buf mmap (off %llu len %llu prot %d flags %d) succeeded, expected %s",
			   (unsigned long long)off, (unsigned long long)len, prot, flags,
			   strerror(want));
	sig = fz_touch(p + fz_rnd(&fz_w.r, len / PG) * PG);
	if (sig && sig != SIGBUS)
		fz_finding("dma-buf mapping: reading raised signal %d", sig);
	if (!(prot & PROT_WRITE) && !(x->access & X_MAP_WRITE) &&
	    mprotect(p, len, PROT_READ | PROT_WRITE) == 0)
		fz_finding("read-only dma-buf mapping made writable by mprotect");
	munmap(p, len);
}

/* poll/read/write on exported fds. */
void fz_op_xfd(void)
{
	struct xfd *x = fz_x_pick(0);
	struct pollfd pfd;
	uint64_t v;
	ssize_t r;
	int rc;

	if (!x)
		return;
	switch (fz_rnd(&fz_w.r, 5)) {
	case 0:
		pfd.fd = x->fd;
		pfd.events = POLLIN | POLLOUT;
		fz_sh->w[fz_slot].cur_op = FZ_X_FD_POLL;
		rc = poll(&pfd, 1, 0);
		fz_cov_x(FZ_X_FD_POLL, rc < 0 ? -1 : 0, errno);
		break;
	case 1:
		r = read(x->fd, &v, fz_chance(&fz_w.r, 80) ? 8 : fz_rnd(&fz_w.r, 8));
		fz_cov_x(FZ_X_SEMFD_READ, r < 0 ? -1 : 0, errno);
		if (x->kind == X_SEM && r != 8 && r >= 0)
			fz_finding("sem fd read returned %zd", r);
		break;
	case 2:
		v = fz_rnd(&fz_w.r, 10);
		r = write(x->fd, &v, fz_chance(&fz_w.r, 80) ? 8 : fz_rnd(&fz_w.r, 16));
		fz_cov_x(FZ_X_SEMFD_WRITE, r < 0 ? -1 : 0, errno);
		break;
	case 3:
		if (x->kind == X_DMABUF && x->len)
			fz_dmabuf_map(x);
		break;
	default:
		close(x->fd);
		x->fd = -1;
		break;
	}
}

/* Sends one fd (or none) and the isolation probes to the next worker. */
void fz_op_send(void)
{
	struct fz_msg m = { 0 };
	struct xfd *x = fz_x_pick(0);
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int i, n = 0, k = 0;

	m.uid = geteuid();
	m.pid = getpid();
	for (i = 0; i < MAXFDS && n < 8; i++) {
		struct fobj *o = fz_w.f[i].fd >= 0 ? fz_obj_pick(i, O_FREE) : NULL;

		if (o)
			m.handles[n++] = o->h;
	}
	for (i = 0; i < MAXQ && k < 2; i++)
		if (fz_w.q[i].used)
			m.mmap_off[k++] = fz_w.q[i].off;
	m.fdnums[0] = fz_w.f[0].fd;
	m.fdnums[1] = x ? x->fd : -1;
	m.fdnums[2] = fz_w.sock_next;
	m.fdnums[3] = fz_w.f[1].fd;
	if (x && fz_chance(&fz_w.r, 70)) {
		m.kind = x->kind;
		m.len = x->len;
		m.access = x->access;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &x->fd, sizeof(int));
	}
	if (sendmsg(fz_w.sock_next, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m) && m.kind) {
		fz_add(&fz_sh->fds_passed, 1);
		if (fz_chance(&fz_w.r, 50)) {
			close(x->fd);	/* the grant lives on in flight */
			x->fd = -1;
		}
	}
}

/* Receives a message: imports its fd later; asserts the isolation probes. */
void fz_op_recv(int fi)
{
	struct fz_msg m;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t r;
	int fd = -1;

	r = recvmsg(fz_w.sock_prev, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (r != sizeof(m))
		return;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	fz_w.peer = m;
	fz_w.have_peer = true;
	if (fd >= 0)
		fz_x_add(fd, m.kind, m.len, m.access);
	if (fi < 0)
		return;
	fz_probe_peer(fi, &m);
}
