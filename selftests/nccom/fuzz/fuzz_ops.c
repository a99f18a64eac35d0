// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the ioctl operations of the nccom fuzzer's workers, one
 * function per ioctl family (GET_INFO, DESTROY, MEM_REGISTER, MEM_EXPORT/
 * IMPORT_DMABUF, QUEUE_CREATE and the queue controls, the semaphore
 * ioctls, COMM_REGISTER, random raw commands). Each builds an argument
 * that the model says is valid or breaks it in one documented way (bad
 * handle, window past the end, wrapping range, more access than granted,
 * ...), picks a generic mutation on top and passes it to fz_xioctl() with
 * the errno the model expects; successes are entered into the model.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/nccom.h>

#include "fuzz.h"

void fz_op_get_info(int fi)
{
	struct nccom_dev_info devs[20];
	struct nccom_info s = { 0 };
	enum mut m = fz_pick_mut(&fz_iocs[0]);
	int want = 0;

	switch (fz_rnd(&fz_w.r, 6)) {
	case 0:
		break;
	case 1:
		s.dev_count = 20;
		s.dev_entry_size = 8 + fz_rnd(&fz_w.r, sizeof(devs[0]) - 8 + 1);
		s.devs_uptr = (uintptr_t)devs;
		break;
	case 2:	/* too small an array: EMSGSIZE with the count written back */
		if (fz_w.ndevs > 1) {
			s.dev_count = 1 + fz_rnd(&fz_w.r, fz_w.ndevs - 1);
			s.dev_entry_size = sizeof(devs[0]);
			s.devs_uptr = (uintptr_t)devs;
			want = EMSGSIZE;
		}
		break;
	case 3:
		s.dev_count = 1 + fz_rnd(&fz_w.r, 20);
		s.dev_entry_size = fz_rnd(&fz_w.r, 8);
		s.devs_uptr = (uintptr_t)devs;
		want = EINVAL;
		break;
	case 4:
		s.dev_count = fz_w.ndevs + fz_rnd(&fz_w.r, 4);
		s.dev_entry_size = 8 + fz_rnd(&fz_w.r, 64);
		s.devs_uptr = fz_chance(&fz_w.r, 50) ? 0 : (uintptr_t)(fz_w.arg + ARGBUF);
		want = EFAULT;
		break;
	default:	/* entries larger than the kernel's: zero-filled, 20 * 64 > sizeof(devs) */
		s.dev_count = fz_w.ndevs;
		s.dev_entry_size =
			8 + fz_rnd(&fz_w.r, sizeof(devs) / (fz_w.ndevs ? fz_w.ndevs : 1) - 8);
		s.devs_uptr = (uintptr_t)devs;
		break;
	}
	if (fz_xioctl(fz_w.f[fi].fd, 0, &s, m, want, "get-info") == 0 && m == M_NONE) {
		if (s.out_abi_version != NCCOM_ABI_VERSION || s.out_compat_id != NCCOM_COMPAT_ID)
			fz_finding("GET_INFO: abi %u compat %#llx", s.out_abi_version,
				   (unsigned long long)s.out_compat_id);
		if (s.out_fd_objects != (uint64_t)fz_nobj(fi))
			fz_finding("GET_INFO: fd %d has %llu objects, the model %d", fi,
				   (unsigned long long)s.out_fd_objects, fz_nobj(fi));
	}
}

void fz_op_destroy(int fi)
{
	struct nccom_destroy s = { .size = sizeof(s) };
	enum mut m = fz_pick_mut(&fz_iocs[1]);
	struct fobj *o = fz_chance(&fz_w.r, 75) ? fz_obj_pick(fi, O_FREE) : NULL;
	int rc;

	s.handle = o ? o->h : fz_bad_handle(fi, -1);
	rc = fz_xioctl(fz_w.f[fi].fd, NCCOM_CMD_DESTROY - NCCOM_CMD_BASE, &s, m, o ? 0 : ENOENT,
		    o ? "live handle" : "bad handle");
	if (rc == 0 && o) {
		if (o->type == O_QUEUE && o->q >= 0)
			fz_q_forget(o->q);	/* the mapping would stay valid; we drop it */
		o->type = O_FREE;
		fz_w.f[fi].epoch++;
	} else if (rc && o && m == M_NONE && !fz_resource_err(errno)) {
		fz_finding("DESTROY of live handle %u failed: %s", o->h, strerror(errno));
	}
}

void fz_op_mem_register(int fi)
{
	struct nccom_mem_register s = { .size = sizeof(s) };
	enum mut m = fz_pick_mut(&fz_iocs[2]);
	int bi = fz_rnd(&fz_w.r, MAXBUF), want = 0, kind = fz_rnd(&fz_w.r, 10);
	size_t off = 0, npg;
	struct fobj *o;
	const char *what = "valid";

	if (!fz_w.b[bi].p) {
		fz_buf_new();
		return;
	}
	npg = fz_w.b[bi].len / PG;
	off = fz_rnd(&fz_w.r, npg) * PG;
	s.addr = (uintptr_t)fz_w.b[bi].p + off;
	s.length = (1 + fz_rnd(&fz_w.r, npg - off / PG)) * PG;
	s.flags = 1 + fz_rnd(&fz_w.r, 3);
	switch (kind) {
	case 0:
		s.addr += 1 + fz_rnd(&fz_w.r, PG - 1);
		want = EINVAL, what = "unaligned addr";
		break;
	case 1:
		s.length = fz_chance(&fz_w.r, 50) ? 0 : s.length - 1 - fz_rnd(&fz_w.r, PG - 1);
		want = EINVAL, what = "bad length";
		break;
	case 2:
		s.flags = 0;
		want = EINVAL, what = "no access flag";
		break;
	case 3:	/* wrapping sum */
		s.addr = -(PG * (1 + fz_rnd(&fz_w.r, 4)));
		s.length = PG * (1 + fz_rnd(&fz_w.r, 8));
		want = s.length > fz_w.max_reg ? EINVAL : EOVERFLOW, what = "wrapping range";
		break;
	case 4:	/* across the end of the buffer into whatever follows */
		s.length = fz_w.b[bi].len - off + PG * (1 + fz_rnd(&fz_w.r, 4));
		/*
		 * Read-only: what follows may be the fuzzer's own heap or rings,
		 * which descriptors writing there would corrupt (a worker died
		 * of SIGSEGV that way, a fuzzer bug).
		 */
		s.flags = NCCOM_MEM_READ;
		want = -1, what = "past the buffer";
		if (s.length > fz_w.max_reg)
			want = EINVAL;
		/* The next pages may be mapped by chance: then it may succeed. */
		if (msync((void *)(uintptr_t)(s.addr + fz_w.b[bi].len - off), PG, MS_ASYNC) == 0)
			want = 0;
		break;
	case 5:
		s.length = fz_w.max_reg + PG;
		want = EINVAL, what = "above max_reg_size";
		break;
	default:
		break;
	}
	if (fz_xioctl(fz_w.f[fi].fd, 2, &s, m, want, what) == 0 && m != M_BADPTR && m != M_CUTPTR) {
		o = fz_track(fi, s.out_handle, O_MEM);
		if (!o)
			return;
		o->len = s.length;
		o->access = s.flags & 3;
		o->buf = (want == 0 && kind != 4) ? bi : -2;
	}
}

void fz_op_mem_export(int fi)
{
	struct nccom_mem_export_dmabuf s = { .size = sizeof(s) };
	enum mut m = fz_pick_mut(&fz_iocs[3]);
	struct fobj *o = fz_obj_pick(fi, O_MEM);
	bool good = o && o->buf != -1 && !o->remote && fz_chance(&fz_w.r, 80);
	const char *what = good ? "registration" : "not a registration";
	int want = 0;

	if (good) {
		s.handle = o->h;
		if (fz_chance(&fz_w.r, 40)) {
			s.flags = NCCOM_MEM_EXPORT_MAP_WRITE;
			if (!(o->access & NCCOM_MEM_WRITE))
				want = EINVAL, what = "MAP_WRITE on a read-only registration";
		}
	} else if (o && o->buf == -1 && fz_chance(&fz_w.r, 50)) {
		s.handle = o->h;	/* an import: not exportable */
		want = -1;
	} else {
		s.handle = fz_bad_handle(fi, O_MEM);
		want = ENOENT;
	}
	if (fz_xioctl(fz_w.f[fi].fd, 3, &s, m, want, what) == 0 &&
	    m != M_BADPTR && m != M_CUTPTR)
		fz_x_add(s.out_fd, X_DMABUF, o ? o->len : 0,
			 (o ? o->access : 0) | (s.flags ? X_MAP_WRITE : 0));
}

void fz_op_mem_import(int fi)
{
	struct nccom_mem_import_dmabuf s = { .size = sizeof(s) };
	enum mut m = fz_pick_mut(&fz_iocs[4]);
	struct xfd *x = fz_x_pick(X_DMABUF);
	int want = 0;
	const char *what = "valid";
	uint64_t npg;
	struct fobj *o;
	bool closed = false;

	s.flags = 1 + fz_rnd(&fz_w.r, 3);
	if (!x || fz_chance(&fz_w.r, 15)) {
		s.fd = fz_bad_fd(&closed);
		want = EBADF, what = closed ? "closed fd" : "not a dma-buf";
		if (!closed && s.fd != fz_w.sock_next && s.fd != fz_w.f[0].fd)
			return;	/* open by coincidence: unknown kind */
	} else {
		s.fd = x->fd;
		npg = x->len / PG;
		switch (fz_rnd(&fz_w.r, 6)) {
		case 0:
			break;	/* whole */
		case 1:
			s.offset = fz_rnd(&fz_w.r, npg) * PG;
			s.length = fz_rnd(&fz_w.r, npg - s.offset / PG + 1) * PG;
			break;
		case 2:	/* across the end */
			s.offset = fz_rnd(&fz_w.r, npg + 1) * PG;
			s.length = (npg - s.offset / PG + 1 + fz_rnd(&fz_w.r, 3)) * PG;
			if (want == 0)
				want = EOVERFLOW, what = "window past the end";
			break;
		case 3:	/* offset at / past the end, length 0 = to the end: empty */
			s.offset = (npg + fz_rnd(&fz_w.r, 3)) * PG;
			if (want == 0)
				want = EOVERFLOW, what = "empty window";
			break;
		case 4:	/* wrapping */
			s.offset = -(PG * (1 + fz_rnd(&fz_w.r, 3)));
			s.length = PG * (2 + fz_rnd(&fz_w.r, 8));
			if (want == 0)
				want = EOVERFLOW, what = "wrapping window";
			break;
		default:
			s.offset = fz_rnd(&fz_w.r, npg) * PG + 1 + fz_rnd(&fz_w.r, PG - 1);
			want = EINVAL, what = "unaligned offset";
			break;
		}
		if (s.offset % PG == 0 && fz_chance(&fz_w.r, 10)) {
			s.length |= 1 + fz_rnd(&fz_w.r, PG - 1);
			want = EINVAL, what = "unaligned length";
		}
		/* The window is checked before the access rights. */
		if (!want && (s.flags & x->access) != s.flags)
			want = EINVAL, what = "more access than the registration";
	}
	if (fz_xioctl(fz_w.f[fi].fd, 4, &s, m, want, what) == 0 && m != M_BADPTR && m != M_CUTPTR) {
		o = fz_track(fi, s.out_handle, O_MEM);
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

void fz_op_queue_create(int fi)
{
	struct nccom_queue_create s = { .size = sizeof(s) };
	enum mut m = fz_pick_mut(&fz_iocs[5]);
	int want = 0, qi;
	const char *what = "valid";
	struct fobj *o;

	s.depth = 2u << fz_rnd(&fz_w.r, 5);
	s.dev_index = fz_rnd(&fz_w.r, fz_w.ndevs);
	switch (fz_rnd(&fz_w.r, 8)) {
	case 0:
		s.depth = fz_chance(&fz_w.r, 30) ? 0 : (fz_chance(&fz_w.r, 50) ? 1 : s.depth + 1);
		want = EINVAL, what = "bad depth";
		break;
	case 1:
		s.depth = fz_chance(&fz_w.r, 50) ? 131072 : 0x80000000u;
		want = EINVAL, what = "depth above max";
		break;
	case 2:
		s.dev_index = fz_w.ndevs + fz_rnd(&fz_w.r, 100);
		want = EINVAL, what = "bad device";
		break;
	case 3:
		/* Inputs in out_ members are ignored. */
		s.out_handle = 1 + fz_rnd(&fz_w.r, 100);
		break;
	default:
		break;
	}
	if (fz_xioctl(fz_w.f[fi].fd, 5, &s, m, want, what) || m == M_BADPTR || m == M_CUTPTR)
		return;
	o = fz_track(fi, s.out_handle, O_QUEUE);
	if (!o)
		return;
	for (qi = 0; qi < MAXQ; qi++)
		if (!fz_w.q[qi].used)
			break;
	if (qi == MAXQ)
		return;	/* not tracked: its handle can still be destroyed */
	fz_w.q[qi] = (struct fq){ .used = true, .fdi = fi, .h = s.out_handle,
			       .mapsz = s.out_mmap_size, .off = s.out_mmap_offset,
			       .depth = s.depth, .sq_off = s.out_sq_offset,
			       .cq_off = s.out_cq_offset };
	fz_w.q[qi].exp = calloc(2 * s.depth, sizeof(struct fexp));
	o->q = qi;
	if (fz_chance(&fz_w.r, 70)) {
		void *p = mmap(NULL, s.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fz_w.f[fi].fd, s.out_mmap_offset);

		fz_cov_ioctl(FZ_X_MMAP, p == MAP_FAILED ? -1 : 0, errno);
		if (p == MAP_FAILED && !fz_resource_err(errno))
			fz_finding("mmap of new queue %u: %s", s.out_handle, strerror(errno));
		else if (p != MAP_FAILED)
			fz_w.q[qi].map = p;
	}
}

void fz_op_queue_misc(int fi)
{
	struct fobj *o = fz_obj_pick(fi, O_QUEUE);
	bool good = o && fz_chance(&fz_w.r, 85);
	uint32_t h = good ? o->h : fz_bad_handle(fi, O_QUEUE);
	int want = good ? 0 : ENOENT, rc;
	struct fq *q = good && o->q >= 0 ? &fz_w.q[o->q] : NULL;
	struct timespec ts;

	switch (fz_rnd(&fz_w.r, 4)) {
	case 0: {
		struct nccom_queue_doorbell s = { .size = sizeof(s), .handle = h };

		fz_xioctl(fz_w.f[fi].fd, 6, &s, fz_pick_mut(&fz_iocs[6]), want, "doorbell");
		break;
	}
	case 1: {
		struct nccom_queue_get_state s = { .size = sizeof(s), .handle = h };

		rc = fz_xioctl(fz_w.f[fi].fd, 7, &s, fz_pick_mut(&fz_iocs[7]), want, "get-state");
		if (!rc && s.out_state > NCCOM_QUEUE_ERROR)
			fz_finding("GET_STATE: state %u", s.out_state);
		if (!rc && s.out_state == NCCOM_QUEUE_ACTIVE && s.out_error)
			fz_finding("GET_STATE: active with error %d", s.out_error);
		break;
	}
	case 2: {
		struct nccom_queue_reset s = { .size = sizeof(s), .handle = h };

		s.flags = fz_chance(&fz_w.r, 50) ? NCCOM_QUEUE_RESET_DISCARD : 0;
		fz_xioctl(fz_w.f[fi].fd, 8, &s, fz_pick_mut(&fz_iocs[8]), want, "reset");
		break;
	}
	default: {
		struct nccom_queue_wait s = { .size = sizeof(s), .handle = h };

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s.cq_tail = q && q->map ? ((struct nccom_ring_hdr *)q->map)->cq_tail :
					  (uint32_t)fz_next(&fz_w.r);
		s.timeout_ns = fz_chance(&fz_w.r, 50) ? 0 :
			       (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec +
				       fz_rnd(&fz_w.r, 2000000);
		fz_xioctl(fz_w.f[fi].fd, 9, &s, fz_pick_mut(&fz_iocs[9]), want, "wait");
		break;
	}
	}
	if (q && q->map)
		fz_reap(q, fi);
}

void fz_op_sem(int fi)
{
	struct fobj *o = fz_obj_pick(fi, O_SEM);
	bool good = o && fz_chance(&fz_w.r, 85);
	uint32_t h = good ? o->h : fz_bad_handle(fi, O_SEM);
	int want = good ? 0 : ENOENT, rc;
	struct timespec ts;

	switch (fz_rnd(&fz_w.r, 6)) {
	case 0: {
		struct nccom_sem_create s = { .size = sizeof(s) };
		struct fobj *n;

		s.initial_value = fz_chance(&fz_w.r, 80) ? fz_rnd(&fz_w.r, 10) : fz_next(&fz_w.r);
		if (fz_xioctl(fz_w.f[fi].fd, 10, &s, fz_pick_mut(&fz_iocs[10]), 0, "create") == 0) {
			n = fz_track(fi, s.out_handle, O_SEM);
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

			if (ioctl(fz_w.f[fi].fd, NCCOM_IOC_SEM_READ, &rd) == 0)
				o->semval = rd.out_value;
			if (fz_chance(&fz_w.r, 15) && o->semval) {
				s.value = o->semval - 1;
				want = EINVAL;	/* below the value; we own it, so never EPIPE */
			} else {
				s.value = o->semval + fz_rnd(&fz_w.r, 3);
			}
		} else {
			/* Imported: EINVAL or EPIPE depend on the peer, want stays 0. */
			s.value = fz_rnd(&fz_w.r, 20);
		}
		rc = fz_xioctl(fz_w.f[fi].fd, 11, &s, fz_pick_mut(&fz_iocs[11]), want, "signal");
		if (!rc && good && o->owner)
			o->semval = s.value > o->semval ? s.value : o->semval;
		break;
	}
	case 2: {
		struct nccom_sem_read s = { .size = sizeof(s), .handle = h };

		rc = fz_xioctl(fz_w.f[fi].fd, 12, &s, fz_pick_mut(&fz_iocs[12]), want, "read");
		if (!rc && good && o->owner && !s.out_owner_alive)
			fz_finding("SEM_READ: own semaphore %u reports its owner dead", h);
		break;
	}
	case 3: {
		struct nccom_sem_wait s = { .size = sizeof(s), .handle = h };

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s.value = good && o->owner ? o->semval + fz_rnd(&fz_w.r, 2) : fz_rnd(&fz_w.r, 10);
		s.timeout_ns = fz_chance(&fz_w.r, 60) ? 0 :
			       (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec +
				       fz_rnd(&fz_w.r, 1000000);
		fz_xioctl(fz_w.f[fi].fd, 13, &s, fz_pick_mut(&fz_iocs[13]), want, "wait");
		break;
	}
	case 4: {
		struct nccom_sem_export s = { .size = sizeof(s), .handle = h };

		if (fz_xioctl(fz_w.f[fi].fd, 14, &s, fz_pick_mut(&fz_iocs[14]), want,
			      "export") == 0)
			fz_x_add(s.out_fd, X_SEM, 0, 0);
		break;
	}
	default: {
		struct nccom_sem_import s = { .size = sizeof(s) };
		struct xfd *x = fz_x_pick(X_SEM);
		bool closed = false;
		struct fobj *n;

		if (x && fz_chance(&fz_w.r, 85)) {
			s.fd = x->fd;
			want = 0;
		} else {
			s.fd = fz_bad_fd(&closed);
			want = EBADF;
			if (!closed && s.fd != fz_w.sock_next && s.fd != fz_w.f[0].fd)
				return;
		}
		if (fz_xioctl(fz_w.f[fi].fd, 15, &s, fz_pick_mut(&fz_iocs[15]), want,
			      "import") == 0) {
			n = fz_track(fi, s.out_handle, O_SEM);
			if (n)
				n->remote = true;
		}
		break;
	}
	}
}

void fz_op_comm(int fi)
{
	struct nccom_comm_register s = { .size = sizeof(s) };
	int bi = fz_rnd(&fz_w.r, MAXBUF), want = 0;
	const char *what = "valid";
	uint8_t *p;
	struct fobj *o;

	if (!fz_w.b[bi].p)
		return;
	p = fz_w.b[bi].p + fz_rnd(&fz_w.r, fz_w.b[bi].len / PG) * PG;
	s.comm_hash = fz_next(&fz_w.r);
	s.nranks = 1 + fz_rnd(&fz_w.r, 8);
	s.rank = fz_rnd(&fz_w.r, s.nranks);
	s.state_uptr = (uintptr_t)p + 64 * fz_rnd(&fz_w.r, (PG - sizeof(struct nccom_comm_state)) / 64 + 1);
	s.state_size = sizeof(struct nccom_comm_state);
	switch (fz_rnd(&fz_w.r, 8)) {
	case 0:
		s.state_uptr += 1 + fz_rnd(&fz_w.r, 63);
		want = EINVAL, what = "misaligned";
		break;
	case 1:
		s.state_uptr = (uintptr_t)p + PG - 64 * (1 + fz_rnd(&fz_w.r, 5));
		want = EINVAL, what = "crosses a page";
		break;
	case 2:
		s.state_size = fz_rnd(&fz_w.r, sizeof(struct nccom_comm_state));
		want = EINVAL, what = "small state";
		break;
	case 3:
		s.rank = s.nranks + fz_rnd(&fz_w.r, 5);
		if (fz_chance(&fz_w.r, 30))
			s.nranks = 0;
		want = EINVAL, what = "bad rank";
		break;
	case 4:
		s.state_uptr = -(64 * (1 + fz_rnd(&fz_w.r, 4)));
		want = -1, what = "wrapping";
		break;
	default:
		break;
	}
	if (fz_xioctl(fz_w.f[fi].fd, 16, &s, fz_pick_mut(&fz_iocs[16]), want, what) == 0) {
		o = fz_track(fi, s.out_handle, O_COMM);
		(void)o;
	}
}

/* Random command numbers, random bytes: ENOTTY or a documented errno, no crash. */
void fz_op_raw(int fi)
{
	unsigned long cmd;
	uint8_t *a = fz_w.arg;
	unsigned int i, n = fz_rnd(&fz_w.r, 256);
	int rc;

	/*
	 * Nothing of an earlier call may survive in the buffer: a stale
	 * GET_INFO devs_uptr pointing into this worker's stack made the kernel
	 * write there (a worker died of SIGSEGV, a fuzzer bug).
	 */
	memset(a, 0, 512);
	for (i = 0; i < n; i++)
		a[i] = (uint8_t)fz_next(&fz_w.r);
	switch (fz_rnd(&fz_w.r, 4)) {
	case 0:
		cmd = _IO(NCCOM_TYPE, fz_rnd(&fz_w.r, 256));
		break;
	case 1:
		cmd = _IOWR(NCCOM_TYPE, NCCOM_CMD_BASE + fz_rnd(&fz_w.r, 20), struct nccom_info);
		break;
	case 2:
		cmd = (uint32_t)fz_next(&fz_w.r);
		break;
	default:
		cmd = _IO(NCCOM_TYPE, NCCOM_CMD_BASE + fz_rnd(&fz_w.r, FZ_NIOC));
		*(uint32_t *)a = fz_rnd(&fz_w.r, 300);
		break;
	}
	fz_sh->w[fz_slot].cur_op = FZ_X_BADCMD;
	rc = ioctl(fz_w.f[fi].fd, cmd, a);
	fz_cov_x(FZ_X_BADCMD, rc, errno);
	if (rc == 0) {
		/* A random struct that happens to be valid created something: forget it. */
		fz_epoch_bump_all();
		fz_op_close(fi);
		fz_op_open();
		return;
	}
	if (!fz_documented(errno))
		fz_finding("raw ioctl %#lx: undocumented errno %s", cmd, strerror(errno));
	if (_IOC_TYPE(cmd) == NCCOM_TYPE && (_IOC_NR(cmd) < NCCOM_CMD_BASE ||
					     _IOC_NR(cmd) >= NCCOM_CMD_BASE + FZ_NIOC ||
					     cmd != _IO(NCCOM_TYPE, _IOC_NR(cmd))) &&
	    errno != ENOTTY)
		fz_finding("raw ioctl %#lx: %s, expected ENOTTY", cmd, strerror(errno));
}
