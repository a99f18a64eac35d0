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
 *
 * The one exception is what the user promises: a ccomCommRegister range
 * (a "pin", ccom_net_ib_pin()) stays registered in every group of its
 * communicator until ccomCommDeregister, and sends of at least one slot
 * from inside it go zero-copy without a registration of their own.  Pins
 * live in a list of their own, under a lock (the API thread adds and
 * drops them while progress threads send from them).
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
	uintptr_t start, end;		/* page-aligned; a pin's: the caller's exact range */
	struct ccib_mr *mr;		/* NULL: free slot */
	int refs;
	uint64_t pin_id;		/* ccomCommRegister's record, 0: a transfer's window */
	bool doomed;			/* deregistered while in flight: freed by the last put */
	struct ib_reg *next;		/* a pin's: the next of its group */
};

struct ib_regs {
	struct ib_reg *e;		/* the transfers' windows (progress thread only) */
	int cap;
	/* ccomCommRegister's pins in this group, under pin_lock (API and progress threads) */
	struct ccomComm *comm;
	struct ccib_pd *pd;
	struct ib_reg *pins;		/* a list: conns hold pointers into it */
	struct ib_regs *next;		/* pin_groups */
};

/* ccomCommRegister's ranges of every communicator on net_ib. */
struct ib_pin {
	struct ccomComm *comm;
	uint64_t id;
	uintptr_t start, end;
	struct ib_pin *next;
};

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ib_pin *pin_list;
static struct ib_regs *pin_groups;	/* every live group's table */

int ccom_ib_regs_init(struct ib_group *g, struct ccomComm *comm)
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
	g->regs->comm = comm;
	g->regs->pd = g->pd;
	pthread_mutex_lock(&pin_lock);
	g->regs->next = pin_groups;
	pin_groups = g->regs;
	pthread_mutex_unlock(&pin_lock);
	return 0;
}

void ccom_ib_regs_fini(struct ib_group *g)
{
	struct ib_regs **pp;
	int i;

	if (!g->regs)
		return;
	pthread_mutex_lock(&pin_lock);
	for (pp = &pin_groups; *pp; pp = &(*pp)->next)
		if (*pp == g->regs) {
			*pp = g->regs->next;
			break;
		}
	pthread_mutex_unlock(&pin_lock);
	for (i = 0; i < g->regs->cap; i++)
		if (g->regs->e[i].mr)
			ccom_ibv.dereg_mr(g->regs->e[i].mr);
	while (g->regs->pins) {
		struct ib_reg *r = g->regs->pins;

		g->regs->pins = r->next;
		if (r->mr)
			ccom_ibv.dereg_mr(r->mr);
		free(r);
	}
	free(g->regs->e);
	free(g->regs);
	g->regs = NULL;
}

/* @t's MR of pin @p, registered now if it has none; NULL after a sentence. */
static struct ib_reg *pin_mr_locked(struct ib_regs *t, const struct ib_pin *p)
{
	struct ib_reg *r, *spare = NULL;

	for (r = t->pins; r; r = r->next) {
		if (r->mr && r->pin_id == p->id && !r->doomed)
			return r;
		if (!r->mr && !spare)
			spare = r;
	}
	r = spare;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			ccom_set_last_error("net_ib: out of memory for the registration table");
			return NULL;
		}
		r->next = t->pins;
		t->pins = r;
	}
	r->start = p->start;
	r->end = p->end;
	r->pin_id = p->id;
	r->refs = 0;
	r->doomed = false;
	r->mr = ccom_ibv.reg_mr(t->pd, (void *)p->start, p->end - p->start,
				CCIB_ACCESS_LOCAL_WRITE);
	if (!r->mr) {
		int e = errno ? errno : EIO;

		ccom_set_last_error("net_ib: registering [%#lx, %#lx) (ccomCommRegister) with the NIC failed: %s%s",
				    (unsigned long)p->start, (unsigned long)p->end, strerror(e),
				    e == ENOMEM || e == EAGAIN ?
				    "; raise the locked-memory limit (ulimit -l) or register less" :
				    "; check the RDMA device (ibv_devinfo, dmesg)");
		return NULL;
	}
	return r;
}

/* Drop @t's MRs of pin @id (the last put frees one still in flight). */
static void pin_drop_locked(struct ib_regs *t, uint64_t id)
{
	struct ib_reg *r;

	for (r = t->pins; r; r = r->next) {
		if (!r->mr || r->pin_id != id || r->doomed)
			continue;
		if (r->refs) {
			r->doomed = true;
			continue;
		}
		ccom_ibv.dereg_mr(r->mr);
		r->mr = NULL;
	}
}

int ccom_net_ib_pin(struct ccomComm *comm, uint64_t id, const void *addr, size_t len)
{
	struct ib_pin *p;
	struct ib_regs *t;
	int err = 0;

	if (comm->net != &ccom_transport_net_ib)
		return -ENOENT;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ccom_set_last_error("net_ib: out of memory for the registration table");
		return -ENOMEM;
	}
	*p = (struct ib_pin){ .comm = comm, .id = id, .start = (uintptr_t)addr,
			      .end = (uintptr_t)addr + len };
	pthread_mutex_lock(&pin_lock);
	/* The groups connected so far register now; later ones at their first send from it. */
	for (t = pin_groups; t && !err; t = t->next)
		if (t->comm == comm && !pin_mr_locked(t, p))
			err = -ENOMEM;
	if (err) {
		for (t = pin_groups; t; t = t->next)
			if (t->comm == comm)
				pin_drop_locked(t, id);
		free(p);
	} else {
		p->next = pin_list;
		__atomic_store_n(&pin_list, p, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pin_lock);
	return err;
}

void ccom_net_ib_unpin(struct ccomComm *comm, uint64_t id)
{
	struct ib_pin **pp, *p;
	struct ib_regs *t;

	pthread_mutex_lock(&pin_lock);
	for (pp = &pin_list; *pp; pp = &(*pp)->next) {
		p = *pp;
		if (p->comm == comm && p->id == id) {
			__atomic_store_n(pp, p->next, __ATOMIC_RELAXED);
			free(p);
			break;
		}
	}
	for (t = pin_groups; t; t = t->next)
		if (t->comm == comm)
			pin_drop_locked(t, id);
	pthread_mutex_unlock(&pin_lock);
}

/* A pin of @t's communicator covering [@s, @e), registered in @t, with a reference; or NULL. */
static struct ib_reg *pin_get(struct ib_regs *t, uintptr_t s, uintptr_t e)
{
	struct ib_reg *r = NULL;
	struct ib_pin *p;

	pthread_mutex_lock(&pin_lock);
	for (p = pin_list; p; p = p->next)
		if (p->comm == t->comm && p->start <= s && e <= p->end)
			break;
	if (p) {
		r = pin_mr_locked(t, p);
		if (r)
			r->refs++;
		else
			ccom_info(CCOM_SUBSYS_NET, "net_ib: %s; copying through the slots",
				  ccom_last_error());
	}
	pthread_mutex_unlock(&pin_lock);
	return r;
}

struct ib_reg *ccom_ib_reg_get(struct ib_group *g, const void *addr, size_t len, size_t win)
{
	uintptr_t s = (uintptr_t)addr & ~(IB_PAGE - 1);
	uintptr_t e = ((uintptr_t)addr + win + IB_PAGE - 1) & ~(IB_PAGE - 1);
	struct ib_regs *t = g->regs;
	struct ib_reg *free_slot = NULL, *pin;
	int i;

	if (!t || !len)
		return NULL;
	pin = __atomic_load_n(&pin_list, __ATOMIC_RELAXED) ? pin_get(t, (uintptr_t)addr, (uintptr_t)addr + len) : NULL;
	if (pin || !win)
		return pin;
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
	if (!r)
		return;
	if (r->pin_id) {
		/* A pin stays registered until ccomCommDeregister (or its group's teardown). */
		pthread_mutex_lock(&pin_lock);
		if (--r->refs == 0 && r->doomed) {
			ccom_ibv.dereg_mr(r->mr);
			r->mr = NULL;
			r->doomed = false;
		}
		pthread_mutex_unlock(&pin_lock);
		return;
	}
	if (--r->refs > 0)
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
