// SPDX-License-Identifier: MIT
/*
 * net_ib_mr.c - net_ib's memory registrations beyond its own slots: the
 * dma-buf probe, the registration of nccom-exported dma-bufs, and the
 * table of user-buffer registrations the zero-copy send path of net_ib.c
 * uses (net_ib_private.h lists what the files share).
 *
 * dma-buf: ibv_reg_dmabuf_mr() lets the NIC map a dma-buf (here one that
 * /dev/nccom exported from a registration, MEM_EXPORT_DMABUF) without the
 * process's page tables.  Whether the provider and kernel can is probed
 * as NCCL does: a call with fd -1 fails with EOPNOTSUPP or EPROTONOSUPPORT
 * where they cannot, with EBADF where they can.  Where they cannot
 * (soft-RoCE), an nccom registration is registered by its address instead:
 * the same pages, reached through the mapping the registration pinned.
 *
 * User buffers: a send of at least CCOM_IB_ZCOPY_MIN bytes is written
 * straight from the caller's buffer, registered here a window of twice
 * the ring (2 x CCOM_IB_SLOTS x CCOM_IB_SLOT_SIZE, 4 MiB by default) at a
 * time, so that no registration pins a whole 256 MiB buffer in one long
 * system call that an abort cannot interrupt.  The rule: a
 * registration of user memory lives only while one transfer of the
 * caller uses it (the send() calls that continue one region, until a call
 * whose whole request completed) and is deregistered before send()
 * reports the last of those bytes as taken, i.e. before the operation can
 * end and the user free, unmap or remap the memory.  Nothing is reused
 * across that point: an
 * unprivileged process cannot learn that the pages behind an address
 * changed (munmap + mmap at the same address, madvise(MADV_DONTNEED)), and
 * a pinned registration would keep writing the old pages.  Within that
 * window a range is shared: conns of the group sending the same buffer
 * (a broadcast, a ring whose two neighbours are both remote) find the
 * registration in the table, which holds at most CCOM_IB_REG_CACHE ranges
 * at once (0: no zero copy); when it is full, sends copy through their
 * staging slots as before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/net_ib.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/params.h"

#define IB_PAGE 4096UL
#define IB_MAX_REGS 1024

/* ---------------------------------------------------------------- dma-buf */

static pthread_mutex_t probe_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char probe_logged[8][64];	/* devices whose probe result was logged */

static bool probe_log_once(const char *dev)
{
	bool first = true;
	int i;

	pthread_mutex_lock(&probe_log_lock);
	for (i = 0; i < 8 && probe_logged[i][0]; i++)
		if (!strcmp(probe_logged[i], dev))
			first = false;
	if (first && i < 8)
		snprintf(probe_logged[i], sizeof(probe_logged[i]), "%s", dev);
	pthread_mutex_unlock(&probe_log_lock);
	return first;
}

int ccom_ib_dmabuf_probe(struct ib_group *g, int rank, char *why, size_t len)
{
	struct ccib_mr *mr;
	int e;

	g->dmabuf = 0;
	if (!ccom_ibv.reg_dmabuf_mr) {
		snprintf(why, len, "%s lacks ibv_reg_dmabuf_mr (rdma-core before 34)", ccom_ibv.name);
	} else {
		errno = 0;
		mr = ccom_ibv.reg_dmabuf_mr(g->pd, 0, 0, 0, -1, 0);
		e = errno;
		if (mr) {
			ccom_ibv.dereg_mr(mr);
			g->dmabuf = 1;
			snprintf(why, len, "ibv_reg_dmabuf_mr accepted a probe");
		} else if (e == EOPNOTSUPP || e == EPROTONOSUPPORT) {
			snprintf(why, len, "ibv_reg_dmabuf_mr with an invalid fd: %s", strerror(e));
		} else {
			g->dmabuf = 1;
			snprintf(why, len, "ibv_reg_dmabuf_mr with an invalid fd: %s (not EOPNOTSUPP)",
				 e ? strerror(e) : "no errno");
		}
	}
	if (probe_log_once(g->port.dev))
		ccom_info(CCOM_SUBSYS_NET, "net_ib: rank %d: dma-buf registration on %s: %s (%s)%s",
			  rank, g->port.dev, g->dmabuf ? "supported" : "unsupported", why,
			  g->dmabuf ? "" : "; nccom memory is registered by address instead");
	return g->dmabuf;
}

int ccom_ib_reg_nccom(struct ib_group *g, int rank, int fd, uint64_t offset, void *addr,
		      size_t len, int access, struct ccib_mr **mr, const char **via)
{
	*via = g->dmabuf ? "dma-buf" : "address (fallback)";
	if (g->dmabuf)
		*mr = ccom_ibv.reg_dmabuf_mr(g->pd, offset, len, (uintptr_t)addr, fd, access);
	else
		*mr = ccom_ibv.reg_mr(g->pd, addr, len, access);
	if (!*mr) {
		int e = errno ? errno : EIO;

		ccom_set_last_error("net_ib: rank %d: registering %zu bytes of nccom dma-buf fd %d on %s by %s failed: %s%s",
				    rank, len, fd, g->port.dev, *via, strerror(e),
				    e == ENOMEM ? "; raise the locked-memory limit (ulimit -l)" :
				    "; check the RDMA device (ibv_devinfo, dmesg)");
		return -e;
	}
	ccom_info(CCOM_SUBSYS_NET, "net_ib: rank %d: nccom dma-buf fd %d (%zu bytes at %p) registered with %s by %s",
		  rank, fd, len, addr, g->port.dev,
		  g->dmabuf ? "dma-buf (ibv_reg_dmabuf_mr)" :
		  "address (ibv_reg_mr fallback: dma-buf unsupported)");
	return 0;
}

/* ---------------------------------------------------------------- user buffers */

struct ib_reg {
	uintptr_t start, end;		/* page-aligned */
	struct ccib_mr *mr;		/* NULL: free slot */
	int refs;
};

struct ib_regs {
	struct ib_reg *e;
	int cap;
};

int ccom_ib_regs_init(struct ib_group *g)
{
	int64_t cap = ccom_param_int("CCOM_IB_REG_CACHE");

	if (cap < 0 || cap > IB_MAX_REGS) {
		ccom_set_last_error("net_ib: CCOM_IB_REG_CACHE=%lld is out of range; use 0 (no zero-copy sends) to %d",
				    (long long)cap, IB_MAX_REGS);
		return -EINVAL;
	}
	g->regs = calloc(1, sizeof(*g->regs));
	if (!g->regs || (cap && !(g->regs->e = calloc((size_t)cap, sizeof(*g->regs->e))))) {
		free(g->regs);
		g->regs = NULL;
		ccom_set_last_error("net_ib: out of memory for the registration table");
		return -ENOMEM;
	}
	g->regs->cap = (int)cap;
	return 0;
}

void ccom_ib_regs_fini(struct ib_group *g)
{
	int i;

	if (!g->regs)
		return;
	for (i = 0; i < g->regs->cap; i++)
		if (g->regs->e[i].mr)
			ccom_ibv.dereg_mr(g->regs->e[i].mr);
	free(g->regs->e);
	free(g->regs);
	g->regs = NULL;
}

struct ib_reg *ccom_ib_reg_get(struct ib_group *g, const void *addr, size_t len)
{
	uintptr_t s = (uintptr_t)addr & ~(IB_PAGE - 1);
	uintptr_t e = ((uintptr_t)addr + len + IB_PAGE - 1) & ~(IB_PAGE - 1);
	struct ib_regs *t = g->regs;
	struct ib_reg *free_slot = NULL;
	int i;

	if (!t || !len)
		return NULL;
	for (i = 0; i < t->cap; i++) {
		struct ib_reg *r = &t->e[i];

		if (r->mr && r->start <= s && r->end >= e) {
			r->refs++;
			return r;
		}
		if (!r->mr && !free_slot)
			free_slot = r;
	}
	if (!free_slot)
		return NULL;
	free_slot->mr = ccom_ibv.reg_mr(g->pd, (void *)s, e - s, CCIB_ACCESS_LOCAL_WRITE);
	if (!free_slot->mr) {
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: registering [%#lx, %#lx) failed (%s): copying through the slots",
			   (unsigned long)s, (unsigned long)e, strerror(errno));
		return NULL;
	}
	free_slot->start = s;
	free_slot->end = e;
	free_slot->refs = 1;
	return free_slot;
}

void ccom_ib_reg_put(struct ib_group *g, struct ib_reg *r)
{
	(void)g;
	if (!r || --r->refs > 0)
		return;
	ccom_ibv.dereg_mr(r->mr);
	r->mr = NULL;
}

uint32_t ccom_ib_reg_lkey(const struct ib_reg *r)
{
	return r->mr->lkey;
}

uintptr_t ccom_ib_reg_end(const struct ib_reg *r)
{
	return r->end;
}

/* ---------------------------------------------------------------- for the tests */

int ccom_net_ib_dmabuf_check(int fd, uint64_t offset, void *addr, size_t len, int *supported,
			     char *via, size_t via_len, char *why, size_t why_len)
{
	struct ib_group g;
	struct ccib_mr *mr = NULL;
	const char *v = "";
	int err;

	memset(&g, 0, sizeof(g));
	err = ccom_ib_lib_load(why, why_len);
	if (!err)
		err = ccom_ib_open_port(&g.port, NULL, 0, why, why_len);
	if (err)
		return err;
	g.pd = ccom_ibv.alloc_pd(g.port.ctx);
	if (!g.pd) {
		snprintf(why, why_len, "cannot allocate a protection domain on %s", g.port.dev);
		ccom_ibv.close_device(g.port.ctx);
		return -ENOMEM;
	}
	*supported = ccom_ib_dmabuf_probe(&g, -1, why, why_len);
	if (fd >= 0) {
		err = ccom_ib_reg_nccom(&g, -1, fd, offset, addr, len,
					CCIB_ACCESS_LOCAL_WRITE | CCIB_ACCESS_REMOTE_WRITE, &mr, &v);
		if (mr)
			ccom_ibv.dereg_mr(mr);
	}
	snprintf(via, via_len, "%s", v);
	ccom_ibv.dealloc_pd(g.pd);
	ccom_ibv.close_device(g.port.ctx);
	return err;
}
