// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the nccom fuzzer worker's model of its own state: the
 * objects of each /dev/nccom fd (handle, type, window, access, backing
 * buffer), the exported fds it holds, its anonymous buffers, and the
 * pickers of live objects and of handles and fd numbers that must name
 * nothing (never issued, destroyed, another type's, the peer's). Opening
 * and closing an fd and dropping a buffer update the model (the epochs
 * that tell the ring oracle its expectations went stale).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "fuzz.h"

/* ---- model helpers ---------------------------------------------------- */

struct fobj *fz_obj_find(int fi, uint32_t h)
{
	int i;

	if (!h)
		return NULL;
	for (i = 0; i < MAXOBJ; i++)
		if (fz_w.f[fi].o[i].type != O_FREE && fz_w.f[fi].o[i].h == h)
			return &fz_w.f[fi].o[i];
	return NULL;
}

static struct fobj *obj_add(int fi, uint32_t h, int type)
{
	int i;

	if (fz_obj_find(fi, h))
		fz_finding("fd %d: the driver issued handle %u twice", fi, h);
	for (i = 0; i < MAXOBJ; i++)
		if (fz_w.f[fi].o[i].type == O_FREE) {
			memset(&fz_w.f[fi].o[i], 0, sizeof(fz_w.f[fi].o[i]));
			fz_w.f[fi].o[i].h = h;
			fz_w.f[fi].o[i].type = type;
			fz_w.f[fi].o[i].buf = -1;
			fz_w.f[fi].o[i].q = -1;
			/*
			 * Handles are reused: a queued descriptor naming a handle
			 * that did not exist may now find this object (COPY then
			 * completed -EACCES where the model said -ENOENT, once per
			 * kernel in the 1M-op campaigns, a model bug).
			 */
			fz_w.f[fi].created++;
			return &fz_w.f[fi].o[i];
		}
	return NULL;
}

/* obj_add, or destroy the handle if the table is full (the model stays exact). */
struct fobj *fz_track(int fi, uint32_t h, int type)
{
	struct nccom_destroy d = { sizeof(d), 0, h, 0 };
	struct fobj *o = obj_add(fi, h, type);

	if (!o && ioctl(fz_w.f[fi].fd, NCCOM_IOC_DESTROY, &d))
		fz_finding("DESTROY of new handle %u: %s", h, strerror(errno));
	return o;
}

int fz_nobj(int fi)
{
	int i, n = 0;

	for (i = 0; i < MAXOBJ; i++)
		n += fz_w.f[fi].o[i].type != O_FREE;
	return n;
}

/* A random live object of @type (O_FREE: any) in fd @fi, or NULL. */
struct fobj *fz_obj_pick(int fi, int type)
{
	int i, n = 0, k;

	for (i = 0; i < MAXOBJ; i++)
		if (fz_w.f[fi].o[i].type != O_FREE &&
		    (type == O_FREE || fz_w.f[fi].o[i].type == type))
			n++;
	if (!n)
		return NULL;
	k = fz_rnd(&fz_w.r, n);
	for (i = 0; i < MAXOBJ; i++)
		if (fz_w.f[fi].o[i].type != O_FREE &&
		    (type == O_FREE || fz_w.f[fi].o[i].type == type) && !k--)
			return &fz_w.f[fi].o[i];
	return NULL;
}

int fz_fd_pick(void)
{
	int i, n = 0, k;

	for (i = 0; i < MAXFDS; i++)
		n += fz_w.f[i].fd >= 0;
	if (!n)
		return -1;
	k = fz_rnd(&fz_w.r, n);
	for (i = 0; i < MAXFDS; i++)
		if (fz_w.f[i].fd >= 0 && !k--)
			return i;
	return -1;
}

/*
 * A handle number that names no object of @type in fd @fi (ENOENT); with
 * @type < 0, no object at all.
 */
uint32_t fz_bad_handle(int fi, int type)
{
	uint32_t h;
	struct fobj *o;
	int tries;

	for (tries = 0; tries < 16; tries++) {
		switch (fz_rnd(&fz_w.r, 5)) {
		case 0:
			h = 0;
			break;
		case 1:
			h = 1 + fz_rnd(&fz_w.r, 64);	/* small: never issued or destroyed */
			break;
		case 2:
			h = (uint32_t)fz_next(&fz_w.r);
			break;
		case 3:	/* a live handle of another type: type confusion */
			o = fz_obj_pick(fi, O_FREE);
			h = o ? o->h : 0;
			break;
		default:	/* a handle the peer (another fd) holds */
			h = fz_w.have_peer ? fz_w.peer.handles[fz_rnd(&fz_w.r, 8)] : 7;
			break;
		}
		o = fz_obj_find(fi, h);
		if (!o || (type >= 0 && o->type != type))
			return h;	/* type < 0: no object of any type */
	}
	return 0;
}

void fz_epoch_bump_all(void)
{
	int i;

	for (i = 0; i < MAXFDS; i++)
		fz_w.f[i].epoch++;
}

void fz_x_add(int fd, int kind, uint64_t len, uint32_t access)
{
	int i;

	for (i = 0; i < MAXX; i++)
		if (fz_w.x[i].fd < 0) {
			fz_w.x[i] = (struct xfd){ fd, kind, len, access };
			return;
		}
	close(fd);	/* table full: drop it */
}

struct xfd *fz_x_pick(int kind)
{
	int i, n = 0, k;

	for (i = 0; i < MAXX; i++)
		n += fz_w.x[i].fd >= 0 && (!kind || fz_w.x[i].kind == kind);
	if (!n)
		return NULL;
	k = fz_rnd(&fz_w.r, n);
	for (i = 0; i < MAXX; i++)
		if (fz_w.x[i].fd >= 0 && (!kind || fz_w.x[i].kind == kind) && !k--)
			return &fz_w.x[i];
	return NULL;
}

/* An fd number that is not open in this process (EBADF), or an fd of the wrong kind. */
int fz_bad_fd(bool *closed)
{
	int fd;

	switch (fz_rnd(&fz_w.r, 4)) {
	case 0:
		*closed = true;
		return -1 - (int)fz_rnd(&fz_w.r, 100);
	case 1:	/* an fd number the peer holds: open here only by coincidence */
		fd = fz_w.have_peer ? fz_w.peer.fdnums[fz_rnd(&fz_w.r, 4)] : 900;
		break;
	case 2:
		fd = 500 + fz_rnd(&fz_w.r, 500);
		break;
	default:	/* an nccom fd or a socket: open, but not a dma-buf / sem file */
		*closed = false;
		return fz_chance(&fz_w.r, 50) && fz_w.f[0].fd >= 0 ? fz_w.f[0].fd : fz_w.sock_next;
	}
	*closed = fcntl(fd, F_GETFD) < 0;
	return fd;
}

/* ---- buffers ------------------------------------------------------------ */

void fz_buf_new(void)
{
	int i = fz_rnd(&fz_w.r, MAXBUF);
	size_t len = (1 + fz_rnd(&fz_w.r, 16)) * PG;
	int shared = fz_chance(&fz_w.r, 40) ? MAP_SHARED : MAP_PRIVATE;
	void *p;

	if (fz_w.b[i].p)
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, shared | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	memset(p, (int)fz_rnd(&fz_w.r, 256), len);
	fz_w.b[i].p = p;
	fz_w.b[i].len = len;
}

/* munmap / madvise(DONTNEED) / partial munmap: registrations become invalid. */
void fz_buf_drop(void)
{
	int i = fz_rnd(&fz_w.r, MAXBUF), j, k;
	size_t cut;

	if (!fz_w.b[i].p)
		return;
	switch (fz_rnd(&fz_w.r, 3)) {
	case 0:
		madvise(fz_w.b[i].p, fz_w.b[i].len, MADV_DONTNEED);
		break;
	case 1:
		cut = (1 + fz_rnd(&fz_w.r, fz_w.b[i].len / PG)) * PG;
		if (cut < fz_w.b[i].len) {
			munmap(fz_w.b[i].p + fz_w.b[i].len - cut, cut);
			fz_w.b[i].len -= cut;
			break;
		}
		/* fall through */
	default:
		munmap(fz_w.b[i].p, fz_w.b[i].len);
		fz_w.b[i].p = NULL;
		break;
	}
	for (j = 0; j < MAXFDS; j++)
		for (k = 0; k < MAXOBJ; k++)
			if (fz_w.f[j].o[k].type == O_MEM && fz_w.f[j].o[k].buf == i)
				fz_w.f[j].o[k].buf = -2;	/* invalidated */
	fz_epoch_bump_all();
}

/* ---- opening and closing fds ---------------------------------------------- */

void fz_op_open(void)
{
	int i;

	for (i = 0; i < MAXFDS; i++)
		if (fz_w.f[i].fd < 0) {
			fz_w.f[i].fd = open(DEV, O_RDWR | O_CLOEXEC);
			if (fz_w.f[i].fd < 0)
				fz_finding("open %s: %s", DEV, strerror(errno));
			memset(fz_w.f[i].o, 0, sizeof(fz_w.f[i].o));
			fz_w.f[i].epoch++;
			return;
		}
}

void fz_q_forget(int qi)
{
	struct fq *q = &fz_w.q[qi];

	if (q->map)
		munmap(q->map, q->mapsz);
	free(q->exp);
	memset(q, 0, sizeof(*q));
}

void fz_op_close(int fi)
{
	int i;

	if (fi < 0 || fz_w.f[fi].fd < 0)
		return;
	close(fz_w.f[fi].fd);
	fz_w.f[fi].fd = -1;
	/* Mappings of its rings stay valid (the ring outlives the fd) but are dropped. */
	for (i = 0; i < MAXQ; i++)
		if (fz_w.q[i].used && fz_w.q[i].fdi == fi)
			fz_q_forget(i);
	memset(fz_w.f[fi].o, 0, sizeof(fz_w.f[fi].o));
	fz_w.f[fi].epoch++;
}
