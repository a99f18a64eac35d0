// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the ioctl layer of the nccom fuzzer's workers: the table of
 * every /dev/nccom ioctl (size, minimum size, valid flags, reserved
 * members), the errnos the uapi header documents, the generic argument
 * mutations (size below the minimum, above the struct with a zero or a
 * non-zero tail, unknown flag bits, non-zero reserved members, bad and
 * straddling pointers) and fz_xioctl(), which applies one, issues the call,
 * counts the result in the coverage table and checks it against what the
 * caller and the mutation expect.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/nccom.h>

#include "fuzz.h"

#ifndef offsetofend
#define offsetofend(T, M) (offsetof(T, M) + sizeof(((T *)0)->M))
#endif

void fz_cov_ioctl(unsigned int idx, int rc, int err)
{
	if (idx < FZ_NIOCTL)
		fz_count(&fz_sh->ioctl_cov[idx][fz_errslot(rc, err)]);
}

void fz_cov_x(int idx, int rc, int err)
{
	fz_cov_ioctl(idx, rc, err);
}

#define IOC(n, c, s, last, fl, r0, r1)                                                \
	[NCCOM_CMD_##n - NCCOM_CMD_BASE] = { #n, c, sizeof(s), offsetofend(s, last), fl, \
					   { r0, r1, -1 } }

const struct fz_ioc fz_iocs[] = {
	IOC(GET_INFO, NCCOM_IOC_GET_INFO, struct nccom_info, out_fd_pinned_pages, 0, -1, -1),
	IOC(DESTROY, NCCOM_IOC_DESTROY, struct nccom_destroy, __reserved, 0,
	    offsetof(struct nccom_destroy, __reserved), -1),
	IOC(MEM_REGISTER, NCCOM_IOC_MEM_REGISTER, struct nccom_mem_register, __reserved, 3,
	    offsetof(struct nccom_mem_register, __reserved), -1),
	IOC(MEM_EXPORT_DMABUF, NCCOM_IOC_MEM_EXPORT_DMABUF, struct nccom_mem_export_dmabuf,
	    out_fd, NCCOM_MEM_EXPORT_MAP_WRITE, -1, -1),
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

_Static_assert(sizeof(fz_iocs) / sizeof(fz_iocs[0]) == FZ_NIOC,
	       "FZ_NIOC (fuzz.h) is the number of entries of fz_iocs[]");

/* The errnos the uapi header documents; anything else is a finding. */
bool fz_documented(int e)
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
bool fz_resource_err(int e)
{
	return e == ENOMEM || e == ENOSPC || e == EMFILE || e == ENFILE;
}

static const char *const mut_name[] = {
	"none", "small", "bigzero", "bigtail", "flags", "reserved", "badptr", "cutptr",
};

enum mut fz_pick_mut(const struct fz_ioc *d)
{
	enum mut m;

	if (fz_chance(&fz_w.r, 72))
		return M_NONE;
	m = (enum mut)(1 + fz_rnd(&fz_w.r, M_NMUT - 1));
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
int fz_xioctl(int fd, unsigned int idx, void *s, enum mut m, int want, const char *what)
{
	const struct fz_ioc *d = &fz_iocs[idx];
	uint8_t *a = fz_w.arg;
	uint32_t size = d->size;
	void *argp = a;
	int rc, err, expect = want;

	memset(a, 0, d->size + 256);
	memcpy(a, s, d->size);
	switch (m) {
	case M_NONE:
		break;
	case M_SMALL:
		size = fz_rnd(&fz_w.r, d->min);
		expect = EINVAL;
		break;
	case M_BIGZERO:
		size = d->size + 1 + fz_rnd(&fz_w.r, 200);
		break;
	case M_BIGTAIL:
		size = d->size + 1 + fz_rnd(&fz_w.r, 200);
		a[d->size + fz_rnd(&fz_w.r, size - d->size)] = 1 + fz_rnd(&fz_w.r, 255);
		expect = E2BIG;
		break;
	case M_FLAGS: {
		uint32_t bit = 1u << fz_rnd(&fz_w.r, 32);

		while (bit & d->flags_ok)
			bit <<= 1;
		if (!bit)
			bit = 1u << 31;
		((uint32_t *)a)[1] |= bit;
		expect = EINVAL;
		break;
	}
	case M_RESV:
		*(uint32_t *)(a + d->resv[fz_rnd(&fz_w.r, d->resv[1] >= 0 ? 2 : 1)]) =
			1 + (uint32_t)fz_rnd(&fz_w.r, UINT32_MAX);
		expect = EINVAL;
		break;
	case M_BADPTR:
		argp = fz_chance(&fz_w.r, 50) ? NULL : (void *)(fz_w.arg + ARGBUF);
		expect = EFAULT;
		break;
	case M_CUTPTR:
		/* The size is readable, the rest runs into the PROT_NONE page. */
		argp = fz_w.arg + ARGBUF - 4 - fz_rnd(&fz_w.r, d->size - 4);
		memcpy(argp, s, fz_w.arg + ARGBUF - (uint8_t *)argp);
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
	fz_cov_ioctl(idx, rc, err);
	if (rc < 0 && !fz_documented(err))
		fz_finding("%s (%s, mutation %s): undocumented errno %d (%s)", d->name, what,
			   mut_name[m], err, strerror(err));
	else if (expect > 0 && rc == 0)
		fz_finding("%s (%s, mutation %s): succeeded, expected %s", d->name, what,
			   mut_name[m], strerror(expect));
	else if (expect > 0 && err != expect && !(fz_resource_err(err) && m == M_NONE))
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
