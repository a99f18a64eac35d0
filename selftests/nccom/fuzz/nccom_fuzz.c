// SPDX-License-Identifier: GPL-2.0
/*
 * Description: seeded, reproducible fuzzer of /dev/nccom, run inside the VM
 * (tools/vm/run) with the module loaded. A parent forks generations of
 * worker processes, half of them (when run as root) under an unprivileged
 * uid; each worker opens /dev/nccom one to three times and issues random
 * sequences of every ioctl with argument structs that are valid with one
 * mutation (size, flags, reserved bytes, foreign/stale/never-issued/
 * wrong-type handles, offsets and lengths at and across boundaries,
 * wrapping sums, bad pointers), maps and unmaps rings and registered
 * buffers, writes valid and invalid descriptors into the rings, passes
 * dma-buf and semaphore fds to the next worker over a Unix socket (which
 * may belong to the other uid), polls and reads exported fds, and kills
 * itself with SIGKILL at a point fixed by the seed while work is in flight.
 * Netlink workers (fuzz_nl.c) fuzz the genl family beside them.
 *
 * Oracles (a failure is a finding, printed as "FINDING: ..."):
 *  - every ioctl result is checked against a model of the worker's own
 *    file descriptors: a single mutation must fail with its documented
 *    errno; any errno outside the documented set is a finding;
 *  - handles, mmap offsets and fd numbers received from another worker
 *    (another fd, often another uid) that are not live in this fd must
 *    fail (ENOENT/EINVAL/EBADF): isolation;
 *  - every completion is checked against the model: a descriptor the model
 *    says is malformed, out of range, of the wrong access or naming no
 *    object must not complete with 0 and must carry its exact errno;
 *  - a worker that dies from a signal other than its own planned SIGKILL,
 *    or hangs, is a finding;
 *  - at the end the driver's object and pinned-page counters and the
 *    per-device queue counts must be back to zero.
 * The kernel side (dmesg splats, rmmod) is checked by fuzz/campaign.
 *
 * usage: nccom_fuzz [--seed S] [--iters N] [--procs P] [--gens G]
 *                   [--uid U] [--nl P] [--no-kill] [--verbose]
 * Each worker's operation sequence is a function of (seed, generation,
 * slot) only; what it receives from its peer depends on scheduling.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "fuzz.h"

#define DEV "/dev/nccom"
#define PG 4096UL
#define MAXFDS 3
#define MAXOBJ 40
#define MAXBUF 6
#define MAXQ 4
#define MAXX 12
#define ARGBUF 8192	/* argument buffer: struct + room for larger sizes */

#ifndef offsetofend
#define offsetofend(T, M) (offsetof(T, M) + sizeof(((T *)0)->M))
#endif

struct fz_shared *fz_sh;
int fz_slot = -1;
int fz_verbose;

/* ---- reporting -------------------------------------------------------- */

void fz_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "nccom_fuzz[%d]: ", fz_slot);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
}

void fz_finding(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "FINDING: +%.1fs worker %d uid %u op %" PRIu64 ": ",
		     (fz_now_ms() - fz_sh->t0_ms) / 1000.0, fz_slot, (unsigned int)geteuid(),
		     fz_slot >= 0 ? fz_sh->w[fz_slot].ops : 0);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
	fz_add(&fz_sh->findings, 1);
	if (fz_slot >= 0)
		fz_add(&fz_sh->w[fz_slot].findings, 1);
}

/* ---- the worker's model ---------------------------------------------- */

enum otype { O_FREE, O_MEM, O_QUEUE, O_SEM, O_COMM };

struct fobj {
	uint32_t h;
	int type;
	uint64_t len;		/* O_MEM: window length */
	uint32_t access;	/* O_MEM */
	int buf;		/* O_MEM registration: backing buffer, else -1 */
	bool remote;		/* O_MEM/O_SEM imported from another process */
	bool owner;		/* O_SEM created here */
	uint64_t semval;	/* O_SEM owner: current value */
	int q;			/* O_QUEUE: index in W.q */
};

struct ffd {
	int fd;			/* -1: slot unused */
	uint32_t epoch;		/* bumped by anything that changes descriptor outcomes */
	uint32_t created;	/* objects created: invalidates "no such handle" */
	struct fobj o[MAXOBJ];
};

struct fbuf {
	uint8_t *p;		/* NULL: slot unused */
	size_t len;
};

/* What the model expects of one descriptor. */
struct fexp {
	int want;		/* 0 or an errno the completion must carry */
	bool any;		/* sem descriptors: any status */
	uint32_t epoch;		/* the fd's epoch at submission */
	uint32_t created;	/* the fd's creation count at submission */
	uint8_t op;
};

struct fq {
	bool used;
	int fdi;
	uint32_t h;
	uint8_t *map;		/* NULL: not mapped */
	size_t mapsz;
	uint64_t off;
	uint32_t depth, sq_off, cq_off;
	uint32_t tail;		/* our sq_tail */
	uint32_t head;		/* our cq_head */
	uint32_t nexp;		/* cookies issued */
	bool chaos;		/* header corrupted: no more oracle on this queue */
	struct fexp *exp;	/* 2 * depth entries, indexed by cookie */
};

enum xkind { X_DMABUF = 1, X_SEM };

struct xfd {
	int fd;			/* -1: unused */
	int kind;
	uint64_t len;		/* X_DMABUF: size */
	uint32_t access;	/* X_DMABUF: registration's access */
};

/* The message a worker sends its peer, with at most one fd. */
struct fz_msg {
	uint32_t kind;		/* enum xkind, 0 = no fd */
	uint32_t access;
	uint64_t len;
	uint32_t uid;
	uint32_t pid;
	uint32_t handles[8];	/* handle numbers live in the sender's fds */
	uint64_t mmap_off[2];	/* the sender's queue mmap offsets */
	int32_t fdnums[4];	/* fd numbers open in the sender */
};

static struct {
	struct fz_rng r;
	struct ffd f[MAXFDS];
	struct fbuf b[MAXBUF];
	struct fq q[MAXQ];
	struct xfd x[MAXX];
	int sock_next, sock_prev;
	uint64_t op;
	uint64_t kill_at;
	uint32_t ndevs;
	uint64_t max_reg;
	uint8_t *arg;		/* ARGBUF bytes, followed by a PROT_NONE page */
	struct fz_msg peer;	/* last message from the previous worker */
	bool have_peer;
} W;

static void cov_ioctl(unsigned int idx, int rc, int err)
{
	if (idx < FZ_NIOCTL)
		fz_count(&fz_sh->ioctl_cov[idx][fz_errslot(rc, err)]);
}

/* ---- ioctl table and the generic mutations --------------------------- */

struct fz_ioc {
	const char *name;
	unsigned long cmd;
	uint32_t size;
	uint32_t min;
	uint32_t flags_ok;	/* valid flag bits (any non-empty subset for MEM flags) */
	int resv[3];		/* offsets of __u32 reserved members, -1 = none */
};

#define IOC(n, c, s, last, fl, r0, r1)                                                \
	[NCCOM_CMD_##n - NCCOM_CMD_BASE] = { #n, c, sizeof(s), offsetofend(s, last), fl, \
					   { r0, r1, -1 } }

static const struct fz_ioc ioc[] = {
	IOC(GET_INFO, NCCOM_IOC_GET_INFO, struct nccom_info, out_fd_pinned_pages, 0, -1, -1),
	IOC(DESTROY, NCCOM_IOC_DESTROY, struct nccom_destroy, __reserved, 0,
	    offsetof(struct nccom_destroy, __reserved), -1),
	IOC(MEM_REGISTER, NCCOM_IOC_MEM_REGISTER, struct nccom_mem_register, __reserved, 3,
	    offsetof(struct nccom_mem_register, __reserved), -1),
	IOC(MEM_EXPORT_DMABUF, NCCOM_IOC_MEM_EXPORT_DMABUF, struct nccom_mem_export_dmabuf,
	    out_fd, 0, -1, -1),
	IOC(MEM_IMPORT_DMABUF, NCCOM_IOC_MEM_IMPORT_DMABUF, struct nccom_mem_import_dmabuf,
	    out_length, 3, offsetof(struct nccom_mem_import_dmabuf, __reserved),
	    offsetof(struct nccom_mem_import_dmabuf, __reserved2)),
	IOC(QUEUE_CREATE, NCCOM_IOC_QUEUE_CREATE, struct nccom_queue_create, out_mmap_size, 0,
	    offsetof(struct nccom_queue_create, __reserved), -1),
	IOC(QUEUE_DOORBELL, NCCOM_IOC_QUEUE_DOORBELL, struct nccom_queue_doorbell, __reserved, 0,
	    offsetof(struct nccom_queue_doorbell, __reserved), -1),
	IOC(QUEUE_GET_STATE, NCCOM_IOC_QUEUE_GET_STATE, struct nccom_queue_get_state,
	    out_completed, 0, -1, -1),
	IOC(QUEUE_RESET, NCCOM_IOC_QUEUE_RESET, struct nccom_queue_reset, __reserved, 1,
	    offsetof(struct nccom_queue_reset, __reserved), -1),
	IOC(QUEUE_WAIT, NCCOM_IOC_QUEUE_WAIT, struct nccom_queue_wait, __reserved, 0,
	    offsetof(struct nccom_queue_wait, __reserved), -1),
	IOC(SEM_CREATE, NCCOM_IOC_SEM_CREATE, struct nccom_sem_create, __reserved, 0,
	    offsetof(struct nccom_sem_create, __reserved), -1),
	IOC(SEM_SIGNAL, NCCOM_IOC_SEM_SIGNAL, struct nccom_sem_signal, value, 0,
	    offsetof(struct nccom_sem_signal, __reserved), -1),
	IOC(SEM_READ, NCCOM_IOC_SEM_READ, struct nccom_sem_read, out_value, 0, -1, -1),
	IOC(SEM_WAIT, NCCOM_IOC_SEM_WAIT, struct nccom_sem_wait, out_value, 0,
	    offsetof(struct nccom_sem_wait, __reserved), -1),
	IOC(SEM_EXPORT, NCCOM_IOC_SEM_EXPORT, struct nccom_sem_export, out_fd, 0, -1, -1),
	IOC(SEM_IMPORT, NCCOM_IOC_SEM_IMPORT, struct nccom_sem_import, out_handle, 0, -1, -1),
	IOC(COMM_REGISTER, NCCOM_IOC_COMM_REGISTER, struct nccom_comm_register, out_handle, 0,
	    -1, -1),
};

#define NIOC (sizeof(ioc) / sizeof(ioc[0]))

/* The errnos the uapi header documents; anything else is a finding. */
static bool documented(int e)
{
	switch (e) {
	case ENOTTY: case E2BIG: case EOPNOTSUPP: case EINVAL: case ENOENT: case EBADF:
	case ENOMEM: case EOVERFLOW: case EFAULT: case EMSGSIZE: case EBUSY:
	case ETIMEDOUT: case EINTR: case EPIPE: case EIO: case ENOSPC: case EMFILE:
	case ENFILE:
		return true;
	}
	return false;
}

/* Resource errors the model cannot predict: allowed on any valid call. */
static bool resource_err(int e)
{
	return e == ENOMEM || e == ENOSPC || e == EMFILE || e == ENFILE;
}

enum mut {
	M_NONE,		/* valid (as far as the caller built it) */
	M_SMALL,	/* size below the minimum: EINVAL */
	M_BIGZERO,	/* size above the struct, zero tail: like M_NONE */
	M_BIGTAIL,	/* size above the struct, non-zero tail: E2BIG */
	M_FLAGS,	/* an unknown flag bit: EINVAL */
	M_RESV,		/* a reserved member non-zero: EINVAL */
	M_BADPTR,	/* the argument pointer is not accessible: EFAULT */
	M_CUTPTR,	/* struct straddles an inaccessible page: EFAULT */
	M_NMUT
};

static const char *const mut_name[] = {
	"none", "small", "bigzero", "bigtail", "flags", "reserved", "badptr", "cutptr",
};

static enum mut pick_mut(const struct fz_ioc *d)
{
	enum mut m;

	if (fz_chance(&W.r, 72))
		return M_NONE;
	m = (enum mut)(1 + fz_rnd(&W.r, M_NMUT - 1));
	if (m == M_RESV && d->resv[0] < 0)
		m = M_BIGTAIL;
	return m;
}

/*
 * Issues ioctl @idx with the struct in @s (d->size bytes, already valid or
 * semantically mutated by the caller, who expects @want: 0 = success or a
 * model-unpredictable error, > 0 = exactly this errno, < 0 = any failure).
 * Applies mutation @m on top; the result is checked and counted. Returns
 * ioctl()'s result with errno set; @s receives the kernel's output.
 */
static int xioctl(int fd, unsigned int idx, void *s, enum mut m, int want, const char *what)
{
	const struct fz_ioc *d = &ioc[idx];
	uint8_t *a = W.arg;
	uint32_t size = d->size;
	void *argp = a;
	int rc, err, expect = want;

	memset(a, 0, d->size + 256);
	memcpy(a, s, d->size);
	switch (m) {
	case M_NONE:
		break;
	case M_SMALL:
		size = fz_rnd(&W.r, d->min);
		expect = EINVAL;
		break;
	case M_BIGZERO:
		size = d->size + 1 + fz_rnd(&W.r, 200);
		break;
	case M_BIGTAIL:
		size = d->size + 1 + fz_rnd(&W.r, 200);
		a[d->size + fz_rnd(&W.r, size - d->size)] = 1 + fz_rnd(&W.r, 255);
		expect = E2BIG;
		break;
	case M_FLAGS: {
		uint32_t bit = 1u << fz_rnd(&W.r, 32);

		while (bit & d->flags_ok)
			bit <<= 1;
		if (!bit)
			bit = 1u << 31;
		((uint32_t *)a)[1] |= bit;
		expect = EINVAL;
		break;
	}
	case M_RESV:
		*(uint32_t *)(a + d->resv[fz_rnd(&W.r, d->resv[1] >= 0 ? 2 : 1)]) =
			1 + (uint32_t)fz_rnd(&W.r, UINT32_MAX);
		expect = EINVAL;
		break;
	case M_BADPTR:
		argp = fz_chance(&W.r, 50) ? NULL : (void *)(W.arg + ARGBUF);
		expect = EFAULT;
		break;
	case M_CUTPTR:
		/* The size is readable, the rest runs into the PROT_NONE page. */
		argp = W.arg + ARGBUF - 4 - fz_rnd(&W.r, d->size - 4);
		memcpy(argp, s, W.arg + ARGBUF - (uint8_t *)argp);
		expect = EFAULT;
		break;
	default:
		break;
	}
	if (m != M_BADPTR && m != M_CUTPTR)
		*(uint32_t *)a = size;
	else if (m == M_CUTPTR)
		*(uint32_t *)argp = size;
	fz_sh->w[fz_slot].cur_op = idx;
	rc = ioctl(fd, d->cmd, argp);
	err = errno;
	cov_ioctl(idx, rc, err);
	if (rc < 0 && !documented(err))
		fz_finding("%s (%s, mutation %s): undocumented errno %d (%s)", d->name, what,
			   mut_name[m], err, strerror(err));
	else if (expect > 0 && rc == 0)
		fz_finding("%s (%s, mutation %s): succeeded, expected %s", d->name, what,
			   mut_name[m], strerror(expect));
	else if (expect > 0 && err != expect && !(resource_err(err) && m == M_NONE))
		fz_finding("%s (%s, mutation %s): %s, expected %s", d->name, what, mut_name[m],
			   strerror(err), strerror(expect));
	else if (expect < 0 && rc == 0)
		fz_finding("%s (%s, mutation %s): succeeded, expected a failure", d->name, what,
			   mut_name[m]);
	if (rc == 0 && m != M_BADPTR && m != M_CUTPTR)
		memcpy(s, a, d->size);
	errno = err;
	return rc;
}

/* ---- model helpers ---------------------------------------------------- */

static struct fobj *obj_find(int fi, uint32_t h)
{
	int i;

	if (!h)
		return NULL;
	for (i = 0; i < MAXOBJ; i++)
		if (W.f[fi].o[i].type != O_FREE && W.f[fi].o[i].h == h)
			return &W.f[fi].o[i];
	return NULL;
}

static struct fobj *obj_add(int fi, uint32_t h, int type)
{
	int i;

	if (obj_find(fi, h))
		fz_finding("fd %d: the driver issued handle %u twice", fi, h);
	for (i = 0; i < MAXOBJ; i++)
		if (W.f[fi].o[i].type == O_FREE) {
			memset(&W.f[fi].o[i], 0, sizeof(W.f[fi].o[i]));
			W.f[fi].o[i].h = h;
			W.f[fi].o[i].type = type;
			W.f[fi].o[i].buf = -1;
			W.f[fi].o[i].q = -1;
			/*
			 * Handles are reused: a queued descriptor naming a handle
			 * that did not exist may now find this object (COPY then
			 * completed -EACCES where the model said -ENOENT, once per
			 * kernel in the 1M-op campaigns, a model bug).
			 */
			W.f[fi].created++;
			return &W.f[fi].o[i];
		}
	return NULL;
}

/* obj_add, or destroy the handle if the table is full (the model stays exact). */
static struct fobj *track(int fi, uint32_t h, int type)
{
	struct nccom_destroy d = { sizeof(d), 0, h, 0 };
	struct fobj *o = obj_add(fi, h, type);

	if (!o && ioctl(W.f[fi].fd, NCCOM_IOC_DESTROY, &d))
		fz_finding("DESTROY of new handle %u: %s", h, strerror(errno));
	return o;
}

static int nobj(int fi)
{
	int i, n = 0;

	for (i = 0; i < MAXOBJ; i++)
		n += W.f[fi].o[i].type != O_FREE;
	return n;
}

/* A random live object of @type (O_FREE: any) in fd @fi, or NULL. */
static struct fobj *obj_pick(int fi, int type)
{
	int i, n = 0, k;

	for (i = 0; i < MAXOBJ; i++)
		if (W.f[fi].o[i].type != O_FREE && (type == O_FREE || W.f[fi].o[i].type == type))
			n++;
	if (!n)
		return NULL;
	k = fz_rnd(&W.r, n);
	for (i = 0; i < MAXOBJ; i++)
		if (W.f[fi].o[i].type != O_FREE && (type == O_FREE || W.f[fi].o[i].type == type) &&
		    !k--)
			return &W.f[fi].o[i];
	return NULL;
}

static int fd_pick(void)
{
	int i, n = 0, k;

	for (i = 0; i < MAXFDS; i++)
		n += W.f[i].fd >= 0;
	if (!n)
		return -1;
	k = fz_rnd(&W.r, n);
	for (i = 0; i < MAXFDS; i++)
		if (W.f[i].fd >= 0 && !k--)
			return i;
	return -1;
}

/*
 * A handle number that names no object of @type in fd @fi (ENOENT); with
 * @type < 0, no object at all.
 */
static uint32_t bad_handle(int fi, int type)
{
	uint32_t h;
	struct fobj *o;
	int tries;

	for (tries = 0; tries < 16; tries++) {
		switch (fz_rnd(&W.r, 5)) {
		case 0:
			h = 0;
			break;
		case 1:
			h = 1 + fz_rnd(&W.r, 64);	/* small: never issued or destroyed */
			break;
		case 2:
			h = (uint32_t)fz_next(&W.r);
			break;
		case 3:	/* a live handle of another type: type confusion */
			o = obj_pick(fi, O_FREE);
			h = o ? o->h : 0;
			break;
		default:	/* a handle the peer (another fd) holds */
			h = W.have_peer ? W.peer.handles[fz_rnd(&W.r, 8)] : 7;
			break;
		}
		o = obj_find(fi, h);
		if (!o || (type >= 0 && o->type != type))
			return h;	/* type < 0: no object of any type */
	}
	return 0;
}

static void epoch_bump_all(void)
{
	int i;

	for (i = 0; i < MAXFDS; i++)
		W.f[i].epoch++;
}

static void x_add(int fd, int kind, uint64_t len, uint32_t access)
{
	int i;

	for (i = 0; i < MAXX; i++)
		if (W.x[i].fd < 0) {
			W.x[i] = (struct xfd){ fd, kind, len, access };
			return;
		}
	close(fd);	/* table full: drop it */
}

static struct xfd *x_pick(int kind)
{
	int i, n = 0, k;

	for (i = 0; i < MAXX; i++)
		n += W.x[i].fd >= 0 && (!kind || W.x[i].kind == kind);
	if (!n)
		return NULL;
	k = fz_rnd(&W.r, n);
	for (i = 0; i < MAXX; i++)
		if (W.x[i].fd >= 0 && (!kind || W.x[i].kind == kind) && !k--)
			return &W.x[i];
	return NULL;
}

/* An fd number that is not open in this process (EBADF), or an fd of the wrong kind. */
static int bad_fd(bool *closed)
{
	int fd;

	switch (fz_rnd(&W.r, 4)) {
	case 0:
		*closed = true;
		return -1 - (int)fz_rnd(&W.r, 100);
	case 1:	/* an fd number the peer holds: open here only by coincidence */
		fd = W.have_peer ? W.peer.fdnums[fz_rnd(&W.r, 4)] : 900;
		break;
	case 2:
		fd = 500 + fz_rnd(&W.r, 500);
		break;
	default:	/* an nccom fd or a socket: open, but not a dma-buf / sem file */
		*closed = false;
		return fz_chance(&W.r, 50) && W.f[0].fd >= 0 ? W.f[0].fd : W.sock_next;
	}
	*closed = fcntl(fd, F_GETFD) < 0;
	return fd;
}

/* ---- buffers ------------------------------------------------------------ */

static void buf_new(void)
{
	int i = fz_rnd(&W.r, MAXBUF);
	size_t len = (1 + fz_rnd(&W.r, 16)) * PG;
	int shared = fz_chance(&W.r, 40) ? MAP_SHARED : MAP_PRIVATE;
	void *p;

	if (W.b[i].p)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, shared | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset(p, (int)fz_rnd(&W.r, 256), len);
	W.b[i].p = p;
	W.b[i].len = len;
}

/* munmap / madvise(DONTNEED) / partial munmap: registrations become invalid. */
static void buf_drop(void)
{
	int i = fz_rnd(&W.r, MAXBUF), j, k;
	size_t cut;

	if (!W.b[i].p)
		return;
	switch (fz_rnd(&W.r, 3)) {
	case 0:
		madvise(W.b[i].p, W.b[i].len, MADV_DONTNEED);
		break;
	case 1:
		cut = (1 + fz_rnd(&W.r, W.b[i].len / PG)) * PG;
		if (cut < W.b[i].len) {
			munmap(W.b[i].p + W.b[i].len - cut, cut);
			W.b[i].len -= cut;
			break;
		}
		/* fall through */
	default:
		munmap(W.b[i].p, W.b[i].len);
		W.b[i].p = NULL;
		break;
	}
	for (j = 0; j < MAXFDS; j++)
		for (k = 0; k < MAXOBJ; k++)
			if (W.f[j].o[k].type == O_MEM && W.f[j].o[k].buf == i)
				W.f[j].o[k].buf = -2;	/* invalidated */
	epoch_bump_all();
}

/* ---- operations ----------------------------------------------------------- */

static void op_open(void)
{
	int i;

	for (i = 0; i < MAXFDS; i++)
		if (W.f[i].fd < 0) {
			W.f[i].fd = open(DEV, O_RDWR | O_CLOEXEC);
			if (W.f[i].fd < 0)
				fz_finding("open %s: %s", DEV, strerror(errno));
			memset(W.f[i].o, 0, sizeof(W.f[i].o));
			W.f[i].epoch++;
			return;
		}
}

static void q_forget(int qi)
{
	struct fq *q = &W.q[qi];

	if (q->map)
		munmap(q->map, q->mapsz);
	free(q->exp);
	memset(q, 0, sizeof(*q));
}

static void op_close(int fi)
{
	int i;

	if (fi < 0 || W.f[fi].fd < 0)
		return;
	close(W.f[fi].fd);
	W.f[fi].fd = -1;
	/* Mappings of its rings stay valid (the ring outlives the fd) but are dropped. */
	for (i = 0; i < MAXQ; i++)
		if (W.q[i].used && W.q[i].fdi == fi)
			q_forget(i);
	memset(W.f[fi].o, 0, sizeof(W.f[fi].o));
	W.f[fi].epoch++;
}

static void op_get_info(int fi)
{
	struct nccom_dev_info devs[20];
	struct nccom_info s = { 0 };
	enum mut m = pick_mut(&ioc[0]);
	int want = 0;

	switch (fz_rnd(&W.r, 6)) {
	case 0:
		break;
	case 1:
		s.dev_count = 20;
		s.dev_entry_size = 8 + fz_rnd(&W.r, sizeof(devs[0]) - 8 + 1);
		s.devs_uptr = (uintptr_t)devs;
		break;
	case 2:	/* too small an array: EMSGSIZE with the count written back */
		if (W.ndevs > 1) {
			s.dev_count = 1 + fz_rnd(&W.r, W.ndevs - 1);
			s.dev_entry_size = sizeof(devs[0]);
			s.devs_uptr = (uintptr_t)devs;
			want = EMSGSIZE;
		}
		break;
	case 3:
		s.dev_count = 1 + fz_rnd(&W.r, 20);
		s.dev_entry_size = fz_rnd(&W.r, 8);
		s.devs_uptr = (uintptr_t)devs;
		want = EINVAL;
		break;
	case 4:
		s.dev_count = W.ndevs + fz_rnd(&W.r, 4);
		s.dev_entry_size = 8 + fz_rnd(&W.r, 64);
		s.devs_uptr = fz_chance(&W.r, 50) ? 0 : (uintptr_t)(W.arg + ARGBUF);
		want = EFAULT;
		break;
	default:	/* entries larger than the kernel's: zero-filled, 20 * 64 > sizeof(devs) */
		s.dev_count = W.ndevs;
		s.dev_entry_size = 8 + fz_rnd(&W.r, sizeof(devs) / (W.ndevs ? W.ndevs : 1) - 8);
		s.devs_uptr = (uintptr_t)devs;
		break;
	}
	if (xioctl(W.f[fi].fd, 0, &s, m, want, "get-info") == 0 && m == M_NONE) {
		if (s.out_abi_version != NCCOM_ABI_VERSION || s.out_compat_id != NCCOM_COMPAT_ID)
			fz_finding("GET_INFO: abi %u compat %#llx", s.out_abi_version,
				   (unsigned long long)s.out_compat_id);
		if (s.out_fd_objects != (uint64_t)nobj(fi))
			fz_finding("GET_INFO: fd %d has %llu objects, the model %d", fi,
				   (unsigned long long)s.out_fd_objects, nobj(fi));
	}
}

static void op_destroy(int fi)
{
	struct nccom_destroy s = { .size = sizeof(s) };
	enum mut m = pick_mut(&ioc[1]);
	struct fobj *o = fz_chance(&W.r, 75) ? obj_pick(fi, O_FREE) : NULL;
	int rc;

	s.handle = o ? o->h : bad_handle(fi, -1);
	rc = xioctl(W.f[fi].fd, NCCOM_CMD_DESTROY - NCCOM_CMD_BASE, &s, m, o ? 0 : ENOENT,
		    o ? "live handle" : "bad handle");
	if (rc == 0 && o) {
		if (o->type == O_QUEUE && o->q >= 0)
			q_forget(o->q);	/* the mapping would stay valid; we drop it */
		o->type = O_FREE;
		W.f[fi].epoch++;
	} else if (rc && o && m == M_NONE && !resource_err(errno)) {
		fz_finding("DESTROY of live handle %u failed: %s", o->h, strerror(errno));
	}
}

static void op_mem_register(int fi)
{
	struct nccom_mem_register s = { .size = sizeof(s) };
	enum mut m = pick_mut(&ioc[2]);
	int bi = fz_rnd(&W.r, MAXBUF), want = 0, kind = fz_rnd(&W.r, 10);
	size_t off = 0, npg;
	struct fobj *o;
	const char *what = "valid";

	if (!W.b[bi].p) {
		buf_new();
		return;
	}
	npg = W.b[bi].len / PG;
	off = fz_rnd(&W.r, npg) * PG;
	s.addr = (uintptr_t)W.b[bi].p + off;
	s.length = (1 + fz_rnd(&W.r, npg - off / PG)) * PG;
	s.flags = 1 + fz_rnd(&W.r, 3);
	switch (kind) {
	case 0:
		s.addr += 1 + fz_rnd(&W.r, PG - 1);
		want = EINVAL, what = "unaligned addr";
		break;
	case 1:
		s.length = fz_chance(&W.r, 50) ? 0 : s.length - 1 - fz_rnd(&W.r, PG - 1);
		want = EINVAL, what = "bad length";
		break;
	case 2:
		s.flags = 0;
		want = EINVAL, what = "no access flag";
		break;
	case 3:	/* wrapping sum */
		s.addr = -(PG * (1 + fz_rnd(&W.r, 4)));
		s.length = PG * (1 + fz_rnd(&W.r, 8));
		want = s.length > W.max_reg ? EINVAL : EOVERFLOW, what = "wrapping range";
		break;
	case 4:	/* across the end of the buffer into whatever follows */
		s.length = W.b[bi].len - off + PG * (1 + fz_rnd(&W.r, 4));
		/*
		 * Read-only: what follows may be the fuzzer's own heap or rings,
		 * which descriptors writing there would corrupt (a worker died
		 * of SIGSEGV that way, a fuzzer bug).
		 */
		s.flags = NCCOM_MEM_READ;
		want = -1, what = "past the buffer";
		if (s.length > W.max_reg)
			want = EINVAL;
		/* The next pages may be mapped by chance: then it may succeed. */
		if (msync((void *)(uintptr_t)(s.addr + W.b[bi].len - off), PG, MS_ASYNC) == 0)
			want = 0;
		break;
	case 5:
		s.length = W.max_reg + PG;
		want = EINVAL, what = "above max_reg_size";
		break;
	default:
		break;
	}
	if (xioctl(W.f[fi].fd, 2, &s, m, want, what) == 0 && m != M_BADPTR && m != M_CUTPTR) {
		o = track(fi, s.out_handle, O_MEM);
		if (!o)
			return;
		o->len = s.length;
		o->access = s.flags & 3;
		o->buf = (want == 0 && kind != 4) ? bi : -2;
	}
}

static void op_mem_export(int fi)
{
	struct nccom_mem_export_dmabuf s = { .size = sizeof(s) };
	enum mut m = pick_mut(&ioc[3]);
	struct fobj *o = obj_pick(fi, O_MEM);
	bool good = o && o->buf != -1 && !o->remote && fz_chance(&W.r, 80);
	int want = 0;

	if (good) {
		s.handle = o->h;
	} else if (o && o->buf == -1 && fz_chance(&W.r, 50)) {
		s.handle = o->h;	/* an import: not exportable */
		want = -1;
	} else {
		s.handle = bad_handle(fi, O_MEM);
		want = ENOENT;
	}
	if (xioctl(W.f[fi].fd, 3, &s, m, want, good ? "registration" : "not a registration") ==
	    0 && m != M_BADPTR && m != M_CUTPTR)
		x_add(s.out_fd, X_DMABUF, o ? o->len : 0, o ? o->access : 0);
}

static void op_mem_import(int fi)
{
	struct nccom_mem_import_dmabuf s = { .size = sizeof(s) };
	enum mut m = pick_mut(&ioc[4]);
	struct xfd *x = x_pick(X_DMABUF);
	int want = 0;
	const char *what = "valid";
	uint64_t npg;
	struct fobj *o;
	bool closed = false;

	s.flags = 1 + fz_rnd(&W.r, 3);
	if (!x || fz_chance(&W.r, 15)) {
		s.fd = bad_fd(&closed);
		want = EBADF, what = closed ? "closed fd" : "not a dma-buf";
		if (!closed && s.fd != W.sock_next && s.fd != W.f[0].fd)
			return;	/* open by coincidence: unknown kind */
	} else {
		s.fd = x->fd;
		npg = x->len / PG;
		switch (fz_rnd(&W.r, 6)) {
		case 0:
			break;	/* whole */
		case 1:
			s.offset = fz_rnd(&W.r, npg) * PG;
			s.length = fz_rnd(&W.r, npg - s.offset / PG + 1) * PG;
			break;
		case 2:	/* across the end */
			s.offset = fz_rnd(&W.r, npg + 1) * PG;
			s.length = (npg - s.offset / PG + 1 + fz_rnd(&W.r, 3)) * PG;
			if (want == 0)
				want = EOVERFLOW, what = "window past the end";
			break;
		case 3:	/* offset at / past the end, length 0 = to the end: empty */
			s.offset = (npg + fz_rnd(&W.r, 3)) * PG;
			if (want == 0)
				want = EOVERFLOW, what = "empty window";
			break;
		case 4:	/* wrapping */
			s.offset = -(PG * (1 + fz_rnd(&W.r, 3)));
			s.length = PG * (2 + fz_rnd(&W.r, 8));
			if (want == 0)
				want = EOVERFLOW, what = "wrapping window";
			break;
		default:
			s.offset = fz_rnd(&W.r, npg) * PG + 1 + fz_rnd(&W.r, PG - 1);
			want = EINVAL, what = "unaligned offset";
			break;
		}
		if (s.offset % PG == 0 && fz_chance(&W.r, 10)) {
			s.length |= 1 + fz_rnd(&W.r, PG - 1);
			want = EINVAL, what = "unaligned length";
		}
		/* The window is checked before the access rights. */
		if (!want && (s.flags & x->access) != s.flags)
			want = EINVAL, what = "more access than the registration";
	}
	if (xioctl(W.f[fi].fd, 4, &s, m, want, what) == 0 && m != M_BADPTR && m != M_CUTPTR) {
		o = track(fi, s.out_handle, O_MEM);
		if (!o)
			return;
		o->len = s.out_length;
		o->access = s.flags & 3;
		o->remote = true;
		if (x && s.out_length != (s.length ? s.length : x->len - s.offset))
			fz_finding("MEM_IMPORT: out_length %llu, expected %llu",
				   (unsigned long long)s.out_length,
				   (unsigned long long)(s.length ? s.length : x->len - s.offset));
	}
}

static void op_queue_create(int fi)
{
	struct nccom_queue_create s = { .size = sizeof(s) };
	enum mut m = pick_mut(&ioc[5]);
	int want = 0, qi;
	const char *what = "valid";
	struct fobj *o;

	s.depth = 2u << fz_rnd(&W.r, 5);
	s.dev_index = fz_rnd(&W.r, W.ndevs);
	switch (fz_rnd(&W.r, 8)) {
	case 0:
		s.depth = fz_chance(&W.r, 30) ? 0 : (fz_chance(&W.r, 50) ? 1 : s.depth + 1);
		want = EINVAL, what = "bad depth";
		break;
	case 1:
		s.depth = fz_chance(&W.r, 50) ? 131072 : 0x80000000u;
		want = EINVAL, what = "depth above max";
		break;
	case 2:
		s.dev_index = W.ndevs + fz_rnd(&W.r, 100);
		want = EINVAL, what = "bad device";
		break;
	case 3:
		s.out_handle = 1 + fz_rnd(&W.r, 100);	/* inputs in out_ members are ignored */
		break;
	default:
		break;
	}
	if (xioctl(W.f[fi].fd, 5, &s, m, want, what) || m == M_BADPTR || m == M_CUTPTR)
		return;
	o = track(fi, s.out_handle, O_QUEUE);
	if (!o)
		return;
	for (qi = 0; qi < MAXQ; qi++)
		if (!W.q[qi].used)
			break;
	if (qi == MAXQ)
		return;	/* not tracked: its handle can still be destroyed */
	W.q[qi] = (struct fq){ .used = true, .fdi = fi, .h = s.out_handle,
			       .mapsz = s.out_mmap_size, .off = s.out_mmap_offset,
			       .depth = s.depth, .sq_off = s.out_sq_offset,
			       .cq_off = s.out_cq_offset };
	W.q[qi].exp = calloc(2 * s.depth, sizeof(struct fexp));
	o->q = qi;
	if (fz_chance(&W.r, 70)) {
		void *p = mmap(NULL, s.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       W.f[fi].fd, s.out_mmap_offset);

		cov_ioctl(FZ_X_MMAP, p == MAP_FAILED ? -1 : 0, errno);
		if (p == MAP_FAILED && !resource_err(errno))
			fz_finding("mmap of new queue %u: %s", s.out_handle, strerror(errno));
		else if (p != MAP_FAILED)
			W.q[qi].map = p;
	}
}

static void cov_x(int idx, int rc, int err)
{
	cov_ioctl(idx, rc, err);
}

static void op_mmap(void)
{
	int qi = fz_rnd(&W.r, MAXQ), fi, rc;
	struct fq *q = &W.q[qi];
	void *p;
	size_t len;
	uint64_t off;
	int flags = MAP_SHARED, kind = fz_rnd(&W.r, 8), expect_fail = 1;

	if (!q->used)
		return;
	fi = q->fdi;
	len = q->mapsz;
	off = q->off;
	switch (kind) {
	case 0:
		len -= PG;
		break;
	case 1:
		len += PG;
		break;
	case 2:
		flags = MAP_PRIVATE;
		break;
	case 3:
		off += PG * (1 + fz_rnd(&W.r, 4));
		break;
	case 4:	/* the peer's offset: another fd's queue, maybe another uid's */
		if (!W.have_peer)
			return;
		off = W.peer.mmap_off[fz_rnd(&W.r, 2)];
		{
			struct fobj *o = obj_find(fi, (uint32_t)(off >> 32));

			if (o && o->type == O_QUEUE && !(off & 0xffffffffu))
				return;	/* names our own queue by coincidence */
		}
		fz_add(&fz_sh->isolation, 1);
		break;
	default:
		if (q->map)
			return;
		expect_fail = 0;
		break;
	}
	if (!len)
		return;
	fz_sh->w[fz_slot].cur_op = FZ_X_MMAP;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, W.f[fi].fd, off);
	rc = p == MAP_FAILED ? -1 : 0;
	cov_x(FZ_X_MMAP, rc, errno);
	if (expect_fail && !rc) {
		fz_finding("mmap of queue %u (kind %d, off %#llx len %zu) succeeded", q->h, kind,
			   (unsigned long long)off, len);
		munmap(p, len);
	} else if (!expect_fail && rc && !resource_err(errno)) {
		fz_finding("mmap of queue %u failed: %s", q->h, strerror(errno));
	} else if (!expect_fail) {
		struct nccom_ring_hdr *h = p;

		/* A queue whose header this worker corrupted keeps the garbage. */
		if (!q->chaos && (h->magic != NCCOM_RING_MAGIC || h->depth != q->depth ||
				  h->sq_offset != q->sq_off || h->cq_offset != q->cq_off))
			fz_finding("ring header of queue %u: magic %#x depth %u", q->h, h->magic,
				   h->depth);
		q->map = p;
	} else if (rc && errno != EINVAL && errno != ENOENT && !resource_err(errno)) {
		fz_finding("bad mmap of queue %u (kind %d): %s", q->h, kind, strerror(errno));
	}
}

static void op_unmap(void)
{
	int qi = fz_rnd(&W.r, MAXQ);
	struct fq *q = &W.q[qi];
	void *p;

	if (!q->used || !q->map)
		return;
	if (fz_chance(&W.r, 30)) {
		/* mremap: the driver's mapping must refuse to grow, may move */
		fz_sh->w[fz_slot].cur_op = FZ_X_MREMAP;
		p = mremap(q->map, q->mapsz, q->mapsz + (fz_chance(&W.r, 50) ? PG : 0),
			   MREMAP_MAYMOVE);
		cov_x(FZ_X_MREMAP, p == MAP_FAILED ? -1 : 0, errno);
		if (p != MAP_FAILED) {
			q->map = p;
			return;
		}
	}
	munmap(q->map, q->mapsz);
	q->map = NULL;
}

/* Builds a descriptor with one mutation and what the model expects of it. */
static void desc_build(int fi, struct nccom_desc *d, struct fexp *e)
{
	struct fobj *dst = obj_pick(fi, O_MEM), *src = obj_pick(fi, O_MEM), *src2 = NULL;
	static const uint8_t dsz[NCCOM_DTYPE_COUNT] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };
	/* mut >= 12: no mutation (about half of the descriptors are valid). */
	unsigned int op = fz_rnd(&W.r, 10), mut = fz_rnd(&W.r, 24);
	uint64_t len, maxlen;
	struct fobj *s;

	memset(d, 0, sizeof(*d));
	memset(e, 0, sizeof(*e));
	e->epoch = W.f[fi].epoch;
	e->created = W.f[fi].created;
	if (op < 2) {
		d->opcode = NCCOM_OP_NOP;
	} else if (op < 6) {
		d->opcode = NCCOM_OP_COPY;
	} else if (op < 8) {
		d->opcode = NCCOM_OP_REDUCE;
		d->dtype = fz_rnd(&W.r, NCCOM_DTYPE_COUNT);
		d->op = fz_rnd(&W.r, NCCOM_REDOP_COUNT);
		if (fz_chance(&W.r, 50))
			src2 = obj_pick(fi, O_MEM);
	} else {
		d->opcode = op == 8 ? NCCOM_OP_SEM_SIGNAL : NCCOM_OP_SEM_WAIT;
		s = obj_pick(fi, O_SEM);
		d->sem_handle = s ? s->h : bad_handle(fi, O_SEM);
		if (s && s->owner)
			d->value = s->semval + (op == 8 ? fz_rnd(&W.r, 3) : 0);
		else
			d->value = fz_rnd(&W.r, 4);
		e->op = d->opcode;
		if (!s) {
			e->want = ENOENT;
		} else {
			e->any = true;
			if (s->owner && op == 8)
				s->semval = d->value;	/* completes in order, or not at all */
		}
		if (mut == 0) {
			d->src_handle = 1;
			e->want = EINVAL, e->any = false;
		}
		goto common;
	}
	e->op = d->opcode;
	if (d->opcode == NCCOM_OP_NOP) {
		if (mut < 2) {
			d->length = 1 + fz_rnd(&W.r, 100);
			e->want = EINVAL;
		}
		goto common;
	}
	/* COPY / REDUCE: pick a length that fits every range, then maybe break one. */
	maxlen = UINT64_MAX;
	if (dst)
		maxlen = dst->len;
	if (src && src->len < maxlen)
		maxlen = src->len;
	if (src2 && src2->len < maxlen)
		maxlen = src2->len;
	if (maxlen == UINT64_MAX)
		maxlen = PG;
	len = fz_rnd(&W.r, maxlen + 1);
	if (fz_chance(&W.r, 50))
		len = fz_rnd(&W.r, 65);
	d->dst_handle = dst ? dst->h : bad_handle(fi, O_MEM);
	d->src_handle = src ? src->h : bad_handle(fi, O_MEM);
	if (src2)
		d->src2_handle = src2->h;
	if (d->opcode == NCCOM_OP_REDUCE) {
		d->count = len / dsz[d->dtype];
		len = d->count * dsz[d->dtype];
	} else {
		d->length = len;
	}
	d->dst_offset = dst ? fz_rnd(&W.r, dst->len - len + 1) : 0;
	d->src_offset = src ? fz_rnd(&W.r, src->len - len + 1) : 0;
	if (src2)
		d->src2_offset = fz_rnd(&W.r, src2->len - len + 1);
	/* Range mutations: at and across the end, wrapping sums. */
	switch (mut) {
	case 1:
		if (dst) {
			d->dst_offset = dst->len - len + 1 + fz_rnd(&W.r, 64);
			if (len + d->dst_offset > dst->len)
				e->want = EOVERFLOW;
		}
		break;
	case 2:
		if (src) {
			d->src_offset = fz_chance(&W.r, 50) ? UINT64_MAX - fz_rnd(&W.r, 64) :
							      src->len + fz_rnd(&W.r, 64);
			e->want = len || d->src_offset > src->len ? EOVERFLOW : 0;
		}
		break;
	case 3:
		if (d->opcode == NCCOM_OP_COPY) {
			d->length = fz_chance(&W.r, 50) ? UINT64_MAX - fz_rnd(&W.r, 64) :
							  maxlen + 1 + fz_rnd(&W.r, PG);
			len = d->length;
		} else {
			d->count = fz_chance(&W.r, 50) ? UINT64_MAX / 2 + fz_rnd(&W.r, 64) :
							 maxlen / dsz[d->dtype] + 1;
			len = d->count * dsz[d->dtype];
			if (d->count > UINT64_MAX / dsz[d->dtype]) {
				e->want = EOVERFLOW;
				goto common;
			}
		}
		e->want = EOVERFLOW;
		break;
	case 4:
		if (d->opcode == NCCOM_OP_REDUCE) {
			if (fz_chance(&W.r, 50))
				d->dtype = NCCOM_DTYPE_COUNT + fz_rnd(&W.r, 200);
			else
				d->op = NCCOM_REDOP_COUNT + fz_rnd(&W.r, 200);
		} else {
			d->dtype = 1 + fz_rnd(&W.r, 9);
		}
		e->want = EINVAL;
		goto common;
	case 5:
		if (d->opcode == NCCOM_OP_COPY || !d->src2_handle) {
			d->src2_offset = 1 + fz_rnd(&W.r, 100);
			e->want = EINVAL;
			goto common;
		}
		break;
	default:
		break;
	}
	goto order;
order:
	/*
	 * A range mutation is reported only after the lookups before it
	 * succeeded: recompute in the engine's order.
	 */
	{
		int r = 0;
		uint64_t end;

		if (!dst)
			r = ENOENT;
		else if (!(dst->access & NCCOM_MEM_WRITE))
			r = EACCES;
		else if (__builtin_add_overflow(d->dst_offset, len, &end) || end > dst->len)
			r = EOVERFLOW;
		else if (!src)
			r = ENOENT;
		else if (!(src->access & NCCOM_MEM_READ))
			r = EACCES;
		else if (__builtin_add_overflow(d->src_offset, len, &end) || end > src->len)
			r = EOVERFLOW;
		else if (src2 && !(src2->access & NCCOM_MEM_READ))
			r = EACCES;
		else if (src2 && (__builtin_add_overflow(d->src2_offset, len, &end) ||
				  end > src2->len))
			r = EOVERFLOW;
		e->want = r;
		if (!r && ((dst && (dst->buf == -2 || dst->remote)) ||
			   (src && (src->buf == -2 || src->remote)) ||
			   (src2 && (src2->buf == -2 || src2->remote))))
			e->any = true;
	}
common:
	if (mut == 11) {
		/* Header mutations of the descriptor itself win over everything. */
		switch (fz_rnd(&W.r, 4)) {
		case 0:
			d->flags = 1u << fz_rnd(&W.r, 32);
			break;
		case 1:
			d->__reserved0 = 1 + fz_rnd(&W.r, 255);
			break;
		case 2:
			d->__reserved1 = 1 + fz_rnd(&W.r, UINT32_MAX - 1);
			break;
		default:
			d->opcode = NCCOM_OP_SEM_WAIT + 1 + fz_rnd(&W.r, 250);
			break;
		}
		e->want = EINVAL;
		e->any = false;
	}
	d->cookie = 0;	/* set by the caller */
}

static void reap(struct fq *q, int fi)
{
	struct nccom_ring_hdr *h = (struct nccom_ring_hdr *)q->map;
	struct nccom_cqe *cq = (struct nccom_cqe *)(q->map + q->cq_off);
	uint32_t tail = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
	struct nccom_cqe c;
	struct fexp *e;
	int st, slot;

	if (tail - q->head > q->depth) {
		if (!q->chaos)
			fz_finding("queue %u: cq_tail %u is %u ahead of cq_head (depth %u)", q->h,
				   tail, tail - q->head, q->depth);
		q->chaos = true;
		q->head = tail;
		__atomic_store_n(&h->cq_head, tail, __ATOMIC_RELEASE);
		return;
	}
	while (q->head != tail) {
		c = cq[q->head & (q->depth - 1)];
		q->head++;
		st = -c.status;
		slot = st >= 0 && st < FZ_NERR ? st : FZ_NERR - 1;
		if (q->chaos)
			continue;
		fz_add(&fz_sh->cqes, 1);
		if (c.cookie >= q->nexp || q->nexp - c.cookie > 2 * q->depth) {
			fz_finding("queue %u: completion with cookie %llu, issued %u", q->h,
				   (unsigned long long)c.cookie, q->nexp);
			continue;
		}
		e = &q->exp[c.cookie & (2 * q->depth - 1)];
		fz_count(&fz_sh->desc_cov[e->op < FZ_NDESC ? e->op : FZ_NDESC - 1][slot]);
		if (c.__reserved)
			fz_finding("queue %u: cqe reserved %u", q->h, c.__reserved);
		if (st == ECANCELED || e->epoch != W.f[fi].epoch)
			continue;	/* the model changed since it was queued */
		if (e->created != W.f[fi].created && (e->want == ENOENT || e->any))
			continue;	/* an absent handle may exist now */
		if (e->any) {
			if (st != 0 && st != EFAULT && st != EINVAL && st != EPIPE && st != ENOMEM)
				fz_finding("queue %u: descriptor %llu (op %u) completed %d", q->h,
					   (unsigned long long)c.cookie, e->op, c.status);
			continue;
		}
		if (st != e->want && !(st == ENOMEM && !e->want))
			fz_finding("queue %u: descriptor %llu (op %u) completed %d (%s), the model expects %d (%s)",
				   q->h, (unsigned long long)c.cookie, e->op, c.status,
				   strerror(st), -e->want, strerror(e->want));
	}
	__atomic_store_n(&h->cq_head, q->head, __ATOMIC_RELEASE);
}

static struct fq *q_pick_mapped(void)
{
	int qi = fz_rnd(&W.r, MAXQ);

	if (!W.q[qi].used || !W.q[qi].map || W.f[W.q[qi].fdi].fd < 0)
		return NULL;
	return &W.q[qi];
}

static void op_submit(void)
{
	struct fq *q = q_pick_mapped();
	struct nccom_ring_hdr *h;
	struct nccom_desc *sq, d;
	struct nccom_queue_doorbell db = { .size = sizeof(db) };
	unsigned int n, i;
	struct fexp e;

	if (!q)
		return;
	h = (struct nccom_ring_hdr *)q->map;
	sq = (struct nccom_desc *)(q->map + q->sq_off);
	if (q->chaos) {
		/* No model any more: follow whatever the header says. */
		q->tail = __atomic_load_n(&h->sq_tail, __ATOMIC_ACQUIRE);
		q->head = __atomic_load_n(&h->cq_tail, __ATOMIC_ACQUIRE);
		__atomic_store_n(&h->cq_head, q->head, __ATOMIC_RELEASE);
	}
	reap(q, q->fdi);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == NCCOM_QUEUE_ERROR &&
	    fz_chance(&W.r, 80)) {
		struct nccom_queue_reset rs = { .size = sizeof(rs), .handle = q->h };

		rs.flags = fz_chance(&W.r, 30) ? NCCOM_QUEUE_RESET_DISCARD : 0;
		xioctl(W.f[q->fdi].fd, 8, &rs, M_NONE, 0, "reset before submit");
	}
	n = 1 + fz_rnd(&W.r, q->depth);
	for (i = 0; i < n; i++) {
		/* At most depth in the SQ and 2 * depth not yet reaped. */
		if (q->tail - __atomic_load_n(&h->sq_head, __ATOMIC_ACQUIRE) >= q->depth ||
		    q->tail - q->head >= 2 * q->depth)
			break;
		desc_build(q->fdi, &d, &e);
		d.cookie = q->nexp;
		q->exp[q->nexp & (2 * q->depth - 1)] = e;
		q->nexp++;
		sq[q->tail & (q->depth - 1)] = d;
		q->tail++;
		fz_add(&fz_sh->descs, 1);
		/* Sometimes publish in the middle of a batch: racing the engine. */
		if (fz_chance(&W.r, 20))
			__atomic_store_n(&h->sq_tail, q->tail, __ATOMIC_RELEASE);
	}
	if (fz_chance(&W.r, 1)) {
		/* Corrupt the header: the engine must survive any value. */
		switch (fz_rnd(&W.r, 4)) {
		case 0:
			__atomic_store_n(&h->sq_tail, (uint32_t)fz_next(&W.r), __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n(&h->cq_head, (uint32_t)fz_next(&W.r), __ATOMIC_RELEASE);
			break;
		case 2:
			h->depth = (uint32_t)fz_next(&W.r);
			h->mask = (uint32_t)fz_next(&W.r);
			h->sq_offset = (uint32_t)fz_next(&W.r);
			break;
		default:
			__atomic_store_n(&h->sq_tail, q->tail + q->depth + fz_rnd(&W.r, 5),
					 __ATOMIC_RELEASE);
			break;
		}
		q->chaos = true;
	} else {
		__atomic_store_n(&h->sq_tail, q->tail, __ATOMIC_RELEASE);
	}
	if (fz_chance(&W.r, 85)) {
		db.handle = q->h;
		xioctl(W.f[q->fdi].fd, 6, &db, M_NONE, 0, "after submit");
	}
}

static void op_queue_misc(int fi)
{
	struct fobj *o = obj_pick(fi, O_QUEUE);
	bool good = o && fz_chance(&W.r, 85);
	uint32_t h = good ? o->h : bad_handle(fi, O_QUEUE);
	int want = good ? 0 : ENOENT, rc;
	struct fq *q = good && o->q >= 0 ? &W.q[o->q] : NULL;
	struct timespec ts;

	switch (fz_rnd(&W.r, 4)) {
	case 0: {
		struct nccom_queue_doorbell s = { .size = sizeof(s), .handle = h };

		xioctl(W.f[fi].fd, 6, &s, pick_mut(&ioc[6]), want, "doorbell");
		break;
	}
	case 1: {
		struct nccom_queue_get_state s = { .size = sizeof(s), .handle = h };

		rc = xioctl(W.f[fi].fd, 7, &s, pick_mut(&ioc[7]), want, "get-state");
		if (!rc && s.out_state > NCCOM_QUEUE_ERROR)
			fz_finding("GET_STATE: state %u", s.out_state);
		if (!rc && s.out_state == NCCOM_QUEUE_ACTIVE && s.out_error)
			fz_finding("GET_STATE: active with error %d", s.out_error);
		break;
	}
	case 2: {
		struct nccom_queue_reset s = { .size = sizeof(s), .handle = h };

		s.flags = fz_chance(&W.r, 50) ? NCCOM_QUEUE_RESET_DISCARD : 0;
		xioctl(W.f[fi].fd, 8, &s, pick_mut(&ioc[8]), want, "reset");
		break;
	}
	default: {
		struct nccom_queue_wait s = { .size = sizeof(s), .handle = h };

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s.cq_tail = q && q->map ? ((struct nccom_ring_hdr *)q->map)->cq_tail :
					  (uint32_t)fz_next(&W.r);
		s.timeout_ns = fz_chance(&W.r, 50) ? 0 :
			       (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec +
				       fz_rnd(&W.r, 2000000);
		xioctl(W.f[fi].fd, 9, &s, pick_mut(&ioc[9]), want, "wait");
		break;
	}
	}
	if (q && q->map)
		reap(q, fi);
}

static void op_sem(int fi)
{
	struct fobj *o = obj_pick(fi, O_SEM);
	bool good = o && fz_chance(&W.r, 85);
	uint32_t h = good ? o->h : bad_handle(fi, O_SEM);
	int want = good ? 0 : ENOENT, rc;
	struct timespec ts;

	switch (fz_rnd(&W.r, 6)) {
	case 0: {
		struct nccom_sem_create s = { .size = sizeof(s) };
		struct fobj *n;

		s.initial_value = fz_chance(&W.r, 80) ? fz_rnd(&W.r, 10) : fz_next(&W.r);
		if (xioctl(W.f[fi].fd, 10, &s, pick_mut(&ioc[10]), 0, "create") == 0) {
			n = track(fi, s.out_handle, O_SEM);
			if (n) {
				n->owner = true;
				n->semval = s.initial_value;
			}
		}
		break;
	}
	case 1: {
		struct nccom_sem_signal s = { .size = sizeof(s), .handle = h };

		if (good && o->owner) {
			/* Queued SEM_SIGNAL descriptors may have moved it: read first. */
			struct nccom_sem_read rd = { .size = sizeof(rd), .handle = h };

			if (ioctl(W.f[fi].fd, NCCOM_IOC_SEM_READ, &rd) == 0)
				o->semval = rd.out_value;
			if (fz_chance(&W.r, 15) && o->semval) {
				s.value = o->semval - 1;
				want = EINVAL;	/* below the value; we own it, so never EPIPE */
			} else {
				s.value = o->semval + fz_rnd(&W.r, 3);
			}
		} else {
			/* Imported: EINVAL or EPIPE depend on the peer, want stays 0. */
			s.value = fz_rnd(&W.r, 20);
		}
		rc = xioctl(W.f[fi].fd, 11, &s, pick_mut(&ioc[11]), want, "signal");
		if (!rc && good && o->owner)
			o->semval = s.value > o->semval ? s.value : o->semval;
		break;
	}
	case 2: {
		struct nccom_sem_read s = { .size = sizeof(s), .handle = h };

		rc = xioctl(W.f[fi].fd, 12, &s, pick_mut(&ioc[12]), want, "read");
		if (!rc && good && o->owner && !s.out_owner_alive)
			fz_finding("SEM_READ: own semaphore %u reports its owner dead", h);
		break;
	}
	case 3: {
		struct nccom_sem_wait s = { .size = sizeof(s), .handle = h };

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s.value = good && o->owner ? o->semval + fz_rnd(&W.r, 2) : fz_rnd(&W.r, 10);
		s.timeout_ns = fz_chance(&W.r, 60) ? 0 :
			       (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec +
				       fz_rnd(&W.r, 1000000);
		xioctl(W.f[fi].fd, 13, &s, pick_mut(&ioc[13]), want, "wait");
		break;
	}
	case 4: {
		struct nccom_sem_export s = { .size = sizeof(s), .handle = h };

		if (xioctl(W.f[fi].fd, 14, &s, pick_mut(&ioc[14]), want, "export") == 0)
			x_add(s.out_fd, X_SEM, 0, 0);
		break;
	}
	default: {
		struct nccom_sem_import s = { .size = sizeof(s) };
		struct xfd *x = x_pick(X_SEM);
		bool closed = false;
		struct fobj *n;

		if (x && fz_chance(&W.r, 85)) {
			s.fd = x->fd;
			want = 0;
		} else {
			s.fd = bad_fd(&closed);
			want = EBADF;
			if (!closed && s.fd != W.sock_next && s.fd != W.f[0].fd)
				return;
		}
		if (xioctl(W.f[fi].fd, 15, &s, pick_mut(&ioc[15]), want, "import") == 0) {
			n = track(fi, s.out_handle, O_SEM);
			if (n)
				n->remote = true;
		}
		break;
	}
	}
}

static void op_comm(int fi)
{
	struct nccom_comm_register s = { .size = sizeof(s) };
	int bi = fz_rnd(&W.r, MAXBUF), want = 0;
	const char *what = "valid";
	uint8_t *p;
	struct fobj *o;

	if (!W.b[bi].p)
		return;
	p = W.b[bi].p + fz_rnd(&W.r, W.b[bi].len / PG) * PG;
	s.comm_hash = fz_next(&W.r);
	s.nranks = 1 + fz_rnd(&W.r, 8);
	s.rank = fz_rnd(&W.r, s.nranks);
	s.state_uptr = (uintptr_t)p + 64 * fz_rnd(&W.r, (PG - sizeof(struct nccom_comm_state)) / 64 + 1);
	s.state_size = sizeof(struct nccom_comm_state);
	switch (fz_rnd(&W.r, 8)) {
	case 0:
		s.state_uptr += 1 + fz_rnd(&W.r, 63);
		want = EINVAL, what = "misaligned";
		break;
	case 1:
		s.state_uptr = (uintptr_t)p + PG - 64 * (1 + fz_rnd(&W.r, 5));
		want = EINVAL, what = "crosses a page";
		break;
	case 2:
		s.state_size = fz_rnd(&W.r, sizeof(struct nccom_comm_state));
		want = EINVAL, what = "small state";
		break;
	case 3:
		s.rank = s.nranks + fz_rnd(&W.r, 5);
		if (fz_chance(&W.r, 30))
			s.nranks = 0;
		want = EINVAL, what = "bad rank";
		break;
	case 4:
		s.state_uptr = -(64 * (1 + fz_rnd(&W.r, 4)));
		want = -1, what = "wrapping";
		break;
	default:
		break;
	}
	if (xioctl(W.f[fi].fd, 16, &s, pick_mut(&ioc[16]), want, what) == 0) {
		o = track(fi, s.out_handle, O_COMM);
		(void)o;
	}
}

/* Random command numbers, random bytes: ENOTTY or a documented errno, no crash. */
static void op_raw(int fi)
{
	unsigned long cmd;
	uint8_t *a = W.arg;
	unsigned int i, n = fz_rnd(&W.r, 256);
	int rc;

	/*
	 * Nothing of an earlier call may survive in the buffer: a stale
	 * GET_INFO devs_uptr pointing into this worker's stack made the kernel
	 * write there (a worker died of SIGSEGV, a fuzzer bug).
	 */
	memset(a, 0, 512);
	for (i = 0; i < n; i++)
		a[i] = (uint8_t)fz_next(&W.r);
	switch (fz_rnd(&W.r, 4)) {
	case 0:
		cmd = _IO(NCCOM_TYPE, fz_rnd(&W.r, 256));
		break;
	case 1:
		cmd = _IOWR(NCCOM_TYPE, NCCOM_CMD_BASE + fz_rnd(&W.r, 20), struct nccom_info);
		break;
	case 2:
		cmd = (uint32_t)fz_next(&W.r);
		break;
	default:
		cmd = _IO(NCCOM_TYPE, NCCOM_CMD_BASE + fz_rnd(&W.r, NIOC));
		*(uint32_t *)a = fz_rnd(&W.r, 300);
		break;
	}
	fz_sh->w[fz_slot].cur_op = FZ_X_BADCMD;
	rc = ioctl(W.f[fi].fd, cmd, a);
	cov_x(FZ_X_BADCMD, rc, errno);
	if (rc == 0) {
		/* A random struct that happens to be valid created something: forget it. */
		epoch_bump_all();
		op_close(fi);
		op_open();
		return;
	}
	if (!documented(errno))
		fz_finding("raw ioctl %#lx: undocumented errno %s", cmd, strerror(errno));
	if (_IOC_TYPE(cmd) == NCCOM_TYPE && (_IOC_NR(cmd) < NCCOM_CMD_BASE ||
					     _IOC_NR(cmd) >= NCCOM_CMD_BASE + NIOC ||
					     cmd != _IO(NCCOM_TYPE, _IOC_NR(cmd))) &&
	    errno != ENOTTY)
		fz_finding("raw ioctl %#lx: %s, expected ENOTTY", cmd, strerror(errno));
}

/* poll/read/write on exported fds. */
static void op_xfd(void)
{
	struct xfd *x = x_pick(0);
	struct pollfd pfd;
	uint64_t v;
	ssize_t r;
	int rc;
	void *p;

	if (!x)
		return;
	switch (fz_rnd(&W.r, 5)) {
	case 0:
		pfd.fd = x->fd;
		pfd.events = POLLIN | POLLOUT;
		fz_sh->w[fz_slot].cur_op = FZ_X_FD_POLL;
		rc = poll(&pfd, 1, 0);
		cov_x(FZ_X_FD_POLL, rc < 0 ? -1 : 0, errno);
		break;
	case 1:
		r = read(x->fd, &v, fz_chance(&W.r, 80) ? 8 : fz_rnd(&W.r, 8));
		cov_x(FZ_X_SEMFD_READ, r < 0 ? -1 : 0, errno);
		if (x->kind == X_SEM && r != 8 && r >= 0)
			fz_finding("sem fd read returned %zd", r);
		break;
	case 2:
		v = fz_rnd(&W.r, 10);
		r = write(x->fd, &v, fz_chance(&W.r, 80) ? 8 : fz_rnd(&W.r, 16));
		cov_x(FZ_X_SEMFD_WRITE, r < 0 ? -1 : 0, errno);
		break;
	case 3:
		if (x->kind != X_DMABUF || !x->len)
			break;
		p = mmap(NULL, x->len, PROT_READ, MAP_SHARED, x->fd, 0);
		cov_x(FZ_X_DMABUF_MMAP, p == MAP_FAILED ? -1 : 0, errno);
		if (p != MAP_FAILED)
			munmap(p, x->len);
		break;
	default:
		close(x->fd);
		x->fd = -1;
		break;
	}
}

/* Sends one fd (or none) and the isolation probes to the next worker. */
static void op_send(void)
{
	struct fz_msg m = { 0 };
	struct xfd *x = x_pick(0);
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int i, n = 0, k = 0;

	m.uid = geteuid();
	m.pid = getpid();
	for (i = 0; i < MAXFDS && n < 8; i++) {
		struct fobj *o = W.f[i].fd >= 0 ? obj_pick(i, O_FREE) : NULL;

		if (o)
			m.handles[n++] = o->h;
	}
	for (i = 0; i < MAXQ && k < 2; i++)
		if (W.q[i].used)
			m.mmap_off[k++] = W.q[i].off;
	m.fdnums[0] = W.f[0].fd;
	m.fdnums[1] = x ? x->fd : -1;
	m.fdnums[2] = W.sock_next;
	m.fdnums[3] = W.f[1].fd;
	if (x && fz_chance(&W.r, 70)) {
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
	if (sendmsg(W.sock_next, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m) && m.kind) {
		fz_add(&fz_sh->fds_passed, 1);
		if (fz_chance(&W.r, 50)) {
			close(x->fd);	/* the grant lives on in flight */
			x->fd = -1;
		}
	}
}

/* Receives a message: imports its fd later; asserts the isolation probes. */
static void op_recv(int fi)
{
	struct fz_msg m;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t r;
	int fd = -1, i;

	r = recvmsg(W.sock_prev, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (r != sizeof(m))
		return;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	W.peer = m;
	W.have_peer = true;
	if (fd >= 0)
		x_add(fd, m.kind, m.len, m.access);
	if (fi < 0)
		return;
	/* The peer's handle numbers name nothing in this fd unless they alias ours. */
	for (i = 0; i < 8; i++) {
		uint32_t h = m.handles[i];
		struct nccom_sem_read s = { .size = sizeof(s), .handle = h };
		struct fobj *o = obj_find(fi, h);

		if (!h || (o && o->type == O_SEM))
			continue;
		fz_add(&fz_sh->isolation, 1);
		xioctl(W.f[fi].fd, 12, &s, M_NONE, ENOENT, "peer's handle");
		if (!o) {
			struct nccom_queue_get_state g = { .size = sizeof(g), .handle = h };
			struct nccom_mem_export_dmabuf e = { .size = sizeof(e), .handle = h };

			xioctl(W.f[fi].fd, 7, &g, M_NONE, ENOENT, "peer's handle");
			xioctl(W.f[fi].fd, 3, &e, M_NONE, ENOENT, "peer's handle");
			if (fz_chance(&W.r, 30)) {
				struct nccom_destroy d = { .size = sizeof(d), .handle = h };

				xioctl(W.f[fi].fd, 1, &d, M_NONE, ENOENT, "peer's handle");
			}
		}
	}
	/* Another uid's fds must not be reachable through /proc. */
	if (m.uid != geteuid() && geteuid() != 0) {
		for (i = 0; i < 4; i++) {
			char path[64];
			int pfd;

			if (m.fdnums[i] < 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%u/fd/%d", m.pid, m.fdnums[i]);
			fz_add(&fz_sh->isolation, 1);
			pfd = open(path, O_RDWR | O_CLOEXEC);
			cov_x(FZ_X_PROCFD, pfd < 0 ? -1 : 0, errno);
			if (pfd >= 0) {
				fz_finding("opened another uid's fd %s", path);
				close(pfd);
			}
		}
	}
}

/* ---- fault injection ------------------------------------------------------ */

#define KNOB "/sys/module/nccom/parameters/fail_nth"

/*
 * Arms the driver's fail_nth knob (root only): one of the next few
 * allocations or pins anywhere in the driver fails with ENOMEM, in whatever
 * call of whatever worker reaches it. The oracles accept ENOMEM of an
 * otherwise valid call.
 */
static void op_failnth(void)
{
	char buf[16];
	int fd, len;

	if (geteuid() != 0)
		return;
	fd = open(KNOB, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%u\n", 1 + (unsigned int)fz_rnd(&W.r, 8));
	if (write(fd, buf, len) == len)
		fz_add(&fz_sh->failnth, 1);
	close(fd);
}

static void failnth_off(void)
{
	int fd = open(KNOB, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "0\n", 2) != 2)
		fz_log("cannot disarm %s: %s", KNOB, strerror(errno));
	close(fd);
}

/* ---- the worker loop ------------------------------------------------------ */

/*
 * A worker that faults is a finding (of the driver if its mapping went
 * away under us, else of the fuzzer): report where, then die of the signal
 * so that the parent sees it. Addresses: addr2line -e nccom_fuzz (no PIE).
 */
static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	void *bt[32];
	char buf[160];
	int n, len;

	(void)uc;
	len = snprintf(buf, sizeof(buf), "nccom_fuzz[%d]: signal %d at address %p, op %llu; backtrace:\n",
		       fz_slot, sig, si->si_addr, (unsigned long long)W.op);
	if (write(2, buf, len) < 0)
		_exit(128 + sig);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fault_handler(void)
{
	struct sigaction sa = { 0 };
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	sigaltstack(&ss, NULL);
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
}

static void worker_init(uint64_t seed)
{
	struct nccom_info info = { .size = sizeof(info) };
	int i, fd;

	memset(&W.f, 0, sizeof(W.f));
	W.r.s = seed;
	for (i = 0; i < MAXFDS; i++)
		W.f[i].fd = -1;
	for (i = 0; i < MAXX; i++)
		W.x[i].fd = -1;
	W.arg = mmap(NULL, ARGBUF + PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (W.arg == MAP_FAILED) {
		perror("nccom_fuzz: mmap");
		_exit(2);
	}
	mprotect(W.arg + ARGBUF, PG, PROT_NONE);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		fz_finding("open/GET_INFO of %s as uid %u: %s", DEV, geteuid(), strerror(errno));
		_exit(3);
	}
	close(fd);
	W.ndevs = info.dev_count;
	W.max_reg = info.out_max_reg_size;
	op_open();
	for (i = 0; i < 3; i++)
		buf_new();
}

static int worker(uint64_t seed, uint64_t iters, bool may_kill)
{
	int fi;

	install_fault_handler();
	worker_init(seed);
	W.kill_at = may_kill && fz_chance(&W.r, 60) ? fz_rnd(&W.r, iters) : UINT64_MAX;
	for (W.op = 0; W.op < iters; W.op++) {
		fz_add(&fz_sh->ops, 1);
		fz_sh->w[fz_slot].ops = W.op;
		if (W.op == W.kill_at) {
			fz_add(&fz_sh->kills, 1);
			kill(getpid(), SIGKILL);
		}
		fi = fd_pick();
		if (fi < 0) {
			op_open();
			continue;
		}
		switch (fz_rnd(&W.r, 40)) {
		case 0:
			op_open();
			break;
		case 1:
			if (fz_chance(&W.r, 20))
				op_close(fi);
			break;
		case 2:
			op_get_info(fi);
			break;
		case 3: case 4:
			op_destroy(fi);
			break;
		case 5: case 6: case 7:
			op_mem_register(fi);
			break;
		case 8: case 9:
			op_mem_export(fi);
			break;
		case 10: case 11:
			op_mem_import(fi);
			break;
		case 12: case 13:
			op_queue_create(fi);
			break;
		case 14: case 15:
			op_mmap();
			break;
		case 16:
			op_unmap();
			break;
		case 17: case 18: case 19: case 20: case 21:
			op_submit();
			break;
		case 22: case 23: case 24:
			op_queue_misc(fi);
			break;
		case 25: case 26: case 27: case 28:
			op_sem(fi);
			break;
		case 29:
			op_comm(fi);
			break;
		case 30:
			op_raw(fi);
			break;
		case 31: case 32:
			op_xfd();
			break;
		case 33: case 34:
			op_send();
			break;
		case 35: case 36:
			op_recv(fi);
			break;
		case 37:
			buf_new();
			break;
		case 38:
			if (fz_chance(&W.r, 30))
				buf_drop();
			else if (fz_chance(&W.r, 10))
				op_failnth();
			break;
		default: {
			int qi;

			for (qi = 0; qi < MAXQ; qi++)
				if (W.q[qi].used && W.q[qi].map && W.f[W.q[qi].fdi].fd >= 0)
					reap(&W.q[qi], W.q[qi].fdi);
			break;
		}
		}
	}
	/* A clean end: some fds closed explicitly, the rest by exit. */
	for (fi = 0; fi < MAXFDS; fi++)
		if (fz_chance(&W.r, 50))
			op_close(fi);
	return 0;
}

/* ---- the parent -------------------------------------------------------------- */

uint64_t fz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int counters_zero(int wait_ms)
{
	struct nccom_dev_info devs[64];
	struct nccom_info info;
	uint64_t end = fz_now_ms() + wait_ms;
	uint32_t i, nq;
	int fd;

	for (;;) {
		fd = open(DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.dev_count = 64;
		info.devs_uptr = (uintptr_t)devs;
		info.dev_entry_size = sizeof(devs[0]);
		if (ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
			close(fd);
			return -errno;
		}
		close(fd);
		for (i = 0, nq = 0; i < info.dev_count && i < 64; i++)
			nq += devs[i].nqueues;
		if (!info.out_objects && !info.out_pinned_pages && !nq)
			return 0;
		if (fz_now_ms() > end) {
			fz_finding("counters not back to zero after the run: objects=%llu pinned_pages=%llu queues=%u",
				   (unsigned long long)info.out_objects,
				   (unsigned long long)info.out_pinned_pages, nq);
			return 1;
		}
		usleep(20000);
	}
}

static const char *const cmd_names[FZ_NIOCTL] = {
	"GET_INFO", "DESTROY", "MEM_REGISTER", "MEM_EXPORT_DMABUF", "MEM_IMPORT_DMABUF",
	"QUEUE_CREATE", "QUEUE_DOORBELL", "QUEUE_GET_STATE", "QUEUE_RESET", "QUEUE_WAIT",
	"SEM_CREATE", "SEM_SIGNAL", "SEM_READ", "SEM_WAIT", "SEM_EXPORT", "SEM_IMPORT",
	"COMM_REGISTER", NULL, NULL, NULL,
	[FZ_X_MMAP] = "mmap", [FZ_X_MREMAP] = "mremap", [FZ_X_SEMFD_READ] = "fd-read",
	[FZ_X_SEMFD_WRITE] = "fd-write", [FZ_X_FD_POLL] = "fd-poll",
	[FZ_X_BADCMD] = "raw-ioctl", [FZ_X_DMABUF_MMAP] = "dmabuf-mmap",
	[FZ_X_PROCFD] = "proc-fd-open",
};

static const char *const desc_names[FZ_NDESC] = {
	"NOP", "COPY", "REDUCE", "SEM_SIGNAL", "SEM_WAIT", NULL, NULL, "bad-opcode",
};

static const char *const nl_names[FZ_NNL] = {
	"bad-cmd-0", "DEV_GET", "CLIENT_GET", "QUEUE_GET", "SEM_GET", "STATS_GET",
	"QUEUE_RESET", "STATS_RESET", "EVENT", "COMM_GET",
	[FZ_NNL - 1] = "bad-cmd",
};

static unsigned int print_cov(const char *kind, uint32_t (*t)[FZ_NERR], int n,
			      const char *const *names)
{
	unsigned int paths = 0, i, e;
	char line[1024];
	int len;

	for (i = 0; i < (unsigned int)n; i++) {
		len = 0;
		for (e = 0; e < FZ_NERR; e++) {
			if (!t[i][e])
				continue;
			paths++;
			len += snprintf(line + len, sizeof(line) - len, " %s=%u",
					e ? (e == FZ_NERR - 1 ? "other" : strerrorname_np(e)) : "ok",
					t[i][e]);
			if (len >= (int)sizeof(line))
				break;
		}
		if (len)
			printf("#   %s %s:%s\n", kind, names[i] ? names[i] : "?", line);
	}
	return paths;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nccom_fuzz [--seed S] [--iters N] [--procs P] [--gens G] [--uid U]\n"
		"                  [--nl P] [--no-kill] [--verbose]\n"
		"  --iters N  operations in all (default 20000), split over generations and workers;\n"
		"             extra generations make up for the budgets of killed workers\n"
		"  --procs P  ioctl workers per generation (default 4, max %d)\n"
		"  --gens G   generations of workers (default 4)\n"
		"  --uid U    uid of the unprivileged half (default 65534; 0 = all root)\n"
		"  --nl P     netlink workers per generation (default 2)\n",
		FZ_MAXWORKERS);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' }, { "iters", required_argument, NULL, 'n' },
		{ "procs", required_argument, NULL, 'p' }, { "gens", required_argument, NULL, 'g' },
		{ "uid", required_argument, NULL, 'u' }, { "nl", required_argument, NULL, 'l' },
		{ "no-kill", no_argument, NULL, 'k' }, { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	uint64_t seed = 0, iters = 20000, per, t0, gen_deadline;
	unsigned int procs = 4, gens = 4, nlp = 2, g, i, paths, nw, alive;
	bool have_seed = false, may_kill = true;
	uid_t uid = 65534;
	int c, status, socks[FZ_MAXWORKERS][2];
	pid_t pids[FZ_MAXWORKERS];

	while ((c = getopt_long(argc, argv, "s:n:p:g:u:l:kvh", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			procs = strtoul(optarg, NULL, 0);
			break;
		case 'g':
			gens = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			uid = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			nlp = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			may_kill = false;
			break;
		case 'v':
			fz_verbose = 1;
			break;
		default:
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (!procs || procs + nlp > FZ_MAXWORKERS || !gens) {
		usage();
		return 2;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = fz_mix(ts.tv_sec, ts.tv_nsec ^ getpid());
	}
	if (geteuid() != 0)
		uid = geteuid();
	printf("# nccom_fuzz: seed=%" PRIu64 " iters=%" PRIu64 " procs=%u nl=%u gens=%u uid=%u\n",
	       seed, iters, procs, nlp, gens, (unsigned int)uid);
	printf("# reproduce: tools/vm/run [--kernel K] -- build/selftests/nccom/fuzz/nccom_fuzz --seed %" PRIu64
	       " --iters %" PRIu64 " --procs %u --nl %u --gens %u%s\n",
	       seed, iters, procs, nlp, gens, may_kill ? "" : " --no-kill");
	fflush(stdout);
	fz_sh = mmap(NULL, sizeof(*fz_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	if (fz_sh == MAP_FAILED) {
		perror("nccom_fuzz: mmap");
		return 2;
	}
	memset(fz_sh, 0, sizeof(*fz_sh));
	signal(SIGPIPE, SIG_IGN);
	nw = procs + nlp;
	per = iters / gens / nw;
	if (!per)
		per = 1;
	t0 = fz_now_ms();
	fz_sh->t0_ms = t0;
	/*
	 * A killed worker's remaining budget is lost: extra generations (up to
	 * 3 * gens in all) run until --iters operations were done.
	 */
	for (g = 0; g < gens || (fz_sh->ops < iters && g < 3 * gens); g++) {
		for (i = 0; i < procs; i++)
			if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, socks[i])) {
				perror("nccom_fuzz: socketpair");
				return 2;
			}
		for (i = 0; i < nw; i++) {
			uint64_t wseed = fz_mix(fz_mix(seed, g), i);
			bool unpriv = uid != geteuid() && (i & 1);

			fflush(NULL);
			pids[i] = fork();
			if (pids[i] < 0) {
				perror("nccom_fuzz: fork");
				return 2;
			}
			if (pids[i])
				continue;
			fz_slot = i;
			if (unpriv && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
				       setresuid(uid, uid, uid))) {
				perror("nccom_fuzz: setresuid");
				_exit(2);
			}
			/* After the uid change, which clears it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			fz_sh->w[i].uid = geteuid();
			fz_sh->w[i].pid = getpid();
			fz_sh->w[i].alive = 1;
			if (i < procs) {
				unsigned int j;

				W.sock_next = socks[(i + 1) % procs][0];
				W.sock_prev = socks[i][1];
				for (j = 0; j < procs; j++) {
					if (socks[j][0] != W.sock_next)
						close(socks[j][0]);
					if (socks[j][1] != W.sock_prev)
						close(socks[j][1]);
				}
				_exit(worker(wseed, per, may_kill));
			}
			for (c = 0; c < (int)procs; c++) {
				close(socks[c][0]);
				close(socks[c][1]);
			}
			_exit(fz_nl_worker(wseed, per));
		}
		for (i = 0; i < procs; i++) {
			close(socks[i][0]);
			close(socks[i][1]);
		}
		/* Wait for the generation; a worker that stops making progress is hung. */
		gen_deadline = fz_now_ms() + 120000 + per * 20;
		alive = nw;
		while (alive) {
			pid_t p = waitpid(-1, &status, WNOHANG);

			if (p <= 0) {
				if (fz_now_ms() > gen_deadline) {
					for (i = 0; i < nw; i++) {
						if (!pids[i])
							continue;
						fz_finding("worker %u (pid %d, uid %u) hung at op %" PRIu64
							   " (cmd %u)",
							   i, pids[i], fz_sh->w[i].uid, fz_sh->w[i].ops,
							   fz_sh->w[i].cur_op);
						{
							char cmd[96];

							snprintf(cmd, sizeof(cmd),
								 "cat /proc/%d/stack >&2", pids[i]);
							if (system(cmd) != 0)
								fz_log("no kernel stack for pid %d", pids[i]);
						}
						kill(pids[i], SIGKILL);
					}
					gen_deadline = UINT64_MAX;
				}
				usleep(10000);
				continue;
			}
			for (i = 0; i < nw; i++)
				if (pids[i] == p)
					break;
			if (i == nw)
				continue;
			pids[i] = 0;
			alive--;
			fz_sh->w[i].alive = 0;
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
				continue;	/* planned (or killed as hung: already reported) */
			if (WIFSIGNALED(status))
				fz_finding("worker %u (uid %u) died of signal %d at op %" PRIu64 " (cmd %u)",
					   i, fz_sh->w[i].uid, WTERMSIG(status), fz_sh->w[i].ops,
					   fz_sh->w[i].cur_op);
			else if (WEXITSTATUS(status))
				fz_finding("worker %u exited %d", i, WEXITSTATUS(status));
		}
		if (fz_verbose)
			printf("# generation %u: %" PRIu64 " ops, %" PRIu64 " killed, %" PRIu64
			       " findings\n", g, fz_sh->ops, fz_sh->kills, fz_sh->findings);
	}
	failnth_off();
	counters_zero(10000);
	printf("# coverage (result counts per path):\n");
	paths = print_cov("ioctl", fz_sh->ioctl_cov, FZ_NIOCTL, cmd_names);
	paths += print_cov("desc", fz_sh->desc_cov, FZ_NDESC, desc_names);
	paths += print_cov("netlink", fz_sh->nl_cov, FZ_NNL, nl_names);
	printf("# nccom_fuzz: seed=%" PRIu64 " %" PRIu64 " ops, %" PRIu64 " processes killed, %" PRIu64
	       " descriptors, %" PRIu64 " completions checked, %" PRIu64 " isolation probes, %" PRIu64
	       " fds passed, %" PRIu64 " netlink messages, %" PRIu64 " fail_nth arms, %u distinct paths, %" PRIu64 " s\n",
	       seed, fz_sh->ops, fz_sh->kills, fz_sh->descs, fz_sh->cqes, fz_sh->isolation,
	       fz_sh->fds_passed, fz_sh->nl_msgs, fz_sh->failnth, paths,
	       (fz_now_ms() - t0) / 1000);
	printf("nccom_fuzz: %" PRIu64 " ops, %" PRIu64 " processes killed, %" PRIu64 " findings\n",
	       fz_sh->ops, fz_sh->kills, fz_sh->findings);
	return fz_sh->findings ? 1 : 0;
}
