// SPDX-License-Identifier: MIT
/*
 * register.c - user buffer registration (coll/ room): ccomCommRegister()
 * and ccomCommDeregister(), NCCL's ncclCommRegister/ncclCommDeregister.
 *
 * A registration is a record of the communicator (this table) that the
 * transports which pin memory act on at once: the nccom engine's
 * registration cache pins the range now and keeps it out of its LRU
 * until the deregistration (ccom_kdev_cache_pin()), and net_ib registers
 * it with the NIC of every verbs group of the communicator (and of those
 * it connects later) and sends from it without copying
 * (ccom_net_ib_pin()).  On shm and TCP nothing is pinned: the calls
 * succeed and only keep the record, as NCCL does without a network
 * plugin that registers.
 *
 * Handles are the record's id, never reused, not a pointer: an unknown,
 * foreign or twice-deregistered handle is found and refused, never
 * dereferenced.  Ranges of one communicator may not overlap (the rules
 * of the pins below would otherwise depend on which one an operation
 * found first).  The rules on freeing, munmap and fork are in ccom.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "transport/kdev/kdev.h"
#include "transport/net_ib.h"
#include "util/err.h"
#include "util/log.h"

/* Bounds a caller that registers in a loop without deregistering. */
#define REG_MAX 65536

struct reg_rec {
	uint64_t id;			/* 0: free slot */
	uintptr_t start, end;		/* the caller's bytes, not page-rounded */
	bool kdev;			/* pinned in the engine's cache */
	bool ib;			/* pinned by net_ib */
};

struct ccom_regs {
	pthread_mutex_t lock;		/* API threads */
	struct reg_rec *e;
	int n, cap;
	uint64_t next_id;
};

static int regs_get(struct ccom_coll_state *cs, struct ccom_regs **out)
{
	static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
	struct ccom_regs *r;

	pthread_mutex_lock(&init_lock);
	r = cs->regs;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (r) {
			pthread_mutex_init(&r->lock, NULL);
			r->next_id = 1;
			cs->regs = r;
		}
	}
	pthread_mutex_unlock(&init_lock);
	*out = r;
	return r ? 0 : -ENOMEM;
}

static int reg_check_comm(struct ccomComm *comm, const char *fn)
{
	if (!ccom_comm_valid(comm) || !comm->coll) {
		ccom_set_last_error("%s: comm is not a ready communicator (initialize it first; after ccomCommDestroy it is gone)",
				    fn);
		return -EINVAL;
	}
	if (ccom_comm_aborted(comm)) {
		ccom_set_last_error("%s: rank %d: the communicator %s", fn, comm->rank,
				    ccom_comm_stop_reason(comm));
		return -ECANCELED;
	}
	return 0;
}

/* Is every page of [@s, @e) mapped?  mincore() fails with ENOMEM on a hole. */
static bool range_mapped(uintptr_t s, uintptr_t e)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t ps = s & ~((uintptr_t)pg - 1), pe = (e + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	unsigned char vec[256];
	uintptr_t at;

	for (at = ps; at < pe; at += 256 * (uintptr_t)pg) {
		size_t len = pe - at < 256 * (uintptr_t)pg ? pe - at : 256 * (size_t)pg;

		if (mincore((void *)at, len, vec) && errno == ENOMEM)
			return false;
	}
	return true;
}

static struct reg_rec *rec_of(struct ccom_regs *r, const void *handle)
{
	uint64_t id = (uintptr_t)handle;
	int i;

	for (i = 0; id && i < r->n; i++)
		if (r->e[i].id == id)
			return &r->e[i];
	return NULL;
}

static struct reg_rec *rec_alloc_locked(struct ccom_regs *r)
{
	struct reg_rec *n;
	int i, cap;

	for (i = 0; i < r->n; i++)
		if (!r->e[i].id)
			return &r->e[i];
	if (r->n == REG_MAX)
		return NULL;
	if (r->n == r->cap) {
		cap = r->cap ? r->cap * 2 : 8;
		n = realloc(r->e, (size_t)cap * sizeof(*n));
		if (!n)
			return NULL;
		r->e = n;
		r->cap = cap;
	}
	return &r->e[r->n++];
}

/* Undo the pins of @x (the transports' part of a deregistration). */
static void rec_unpin(struct ccomComm *comm, struct reg_rec *x)
{
	if (x->kdev && comm->kdev)
		ccom_kdev_cache_unpin(comm->kdev, (const void *)x->start, x->end - x->start);
	if (x->ib)
		ccom_net_ib_unpin(comm, x->id);
	x->kdev = x->ib = false;
}

ccomResult_t ccomCommRegister(const ccomComm_t comm, void *buff, size_t size, void **handle)
{
	static const char fn[] = "ccomCommRegister";
	uintptr_t s = (uintptr_t)buff, e = s + size;
	struct ccom_regs *r;
	struct reg_rec *x = NULL;
	int err, i;

	ccom_clear_last_error();
	err = reg_check_comm(comm, fn);
	if (err)
		return ccom_result_from_errno(err);
	if (!buff || !handle || !size) {
		ccom_set_last_error("%s: %s; pass a buffer, its size in bytes and where to put the handle",
				    fn, !buff ? "buff is NULL" : !handle ? "handle is NULL" : "size is 0");
		return ccomInvalidArgument;
	}
	*handle = NULL;
	if (e < s || !range_mapped(s, e)) {
		ccom_set_last_error("%s: [%p, +%zu) is not mapped memory of this process; register a buffer you allocated",
				    fn, buff, size);
		return ccomInvalidArgument;
	}
	if (regs_get(comm->coll, &r))
		return ccomSystemError;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++)
		if (r->e[i].id && r->e[i].start < e && s < r->e[i].end) {
			ccom_set_last_error("%s: [%p, +%zu) overlaps registration %#llx [%#lx, %#lx) of this communicator; deregister it first or register one range that covers both",
					    fn, buff, size, (unsigned long long)r->e[i].id,
					    (unsigned long)r->e[i].start, (unsigned long)r->e[i].end);
			pthread_mutex_unlock(&r->lock);
			return ccomInvalidUsage;
		}
	x = rec_alloc_locked(r);
	if (!x) {
		pthread_mutex_unlock(&r->lock);
		ccom_set_last_error("%s: %s", fn, r->n == REG_MAX ?
				    "65536 registrations exist on this communicator; deregister unused ones" :
				    "out of memory for the registration table");
		return r->n == REG_MAX ? ccomInvalidUsage : ccomSystemError;
	}
	*x = (struct reg_rec){ .id = r->next_id++, .start = s, .end = e };
	err = 0;
	if (comm->kdev) {
		err = ccom_kdev_cache_pin(comm->kdev, buff, size);
		x->kdev = !err;
	}
	if (!err) {
		err = ccom_net_ib_pin(comm, x->id, buff, size);
		x->ib = err == 0;
		if (err == -ENOENT)
			err = 0;	/* no verbs group on this comm: nothing to pin */
	}
	if (err) {
		rec_unpin(comm, x);
		x->id = 0;
		pthread_mutex_unlock(&r->lock);
		return err == -ENOSPC ? ccomInvalidUsage : ccom_result_from_errno(err);
	}
	*handle = (void *)(uintptr_t)x->id;
	ccom_info(CCOM_SUBSYS_COLL, "rank %d: registered [%p, +%zu) as %#llx (%s%s%s)", comm->rank,
		  buff, size, (unsigned long long)x->id, x->kdev ? "nccom engine pinned, " : "",
		  x->ib ? "net_ib pinned, " : "", "recorded");
	pthread_mutex_unlock(&r->lock);
	return ccomSuccess;
}

ccomResult_t ccomCommDeregister(const ccomComm_t comm, void *handle)
{
	static const char fn[] = "ccomCommDeregister";
	struct ccom_regs *r;
	struct reg_rec *x;
	bool freed;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !comm->coll) {
		ccom_set_last_error("%s: comm is not a ready communicator", fn);
		return ccomInvalidArgument;
	}
	r = comm->coll->regs;
	if (!r) {
		ccom_set_last_error("%s: handle %p is not a registration of this communicator (nothing was registered on it)",
				    fn, handle);
		return ccomInvalidArgument;
	}
	pthread_mutex_lock(&r->lock);
	x = rec_of(r, handle);
	if (!x) {
		pthread_mutex_unlock(&r->lock);
		ccom_set_last_error("%s: handle %p is not a registration of this communicator (deregistered already, or made on another one)",
				    fn, handle);
		return ccomInvalidArgument;
	}
	freed = !range_mapped(x->start, x->end);
	rec_unpin(comm, x);
	x->id = 0;
	pthread_mutex_unlock(&r->lock);
	if (freed) {
		ccom_set_last_error("%s: rank %d: the buffer [%#lx, %#lx) of handle %p was freed or unmapped while registered (its registration is released now); call ccomCommDeregister before freeing a registered buffer",
				    fn, comm->rank, (unsigned long)x->start, (unsigned long)x->end, handle);
		return ccomInvalidUsage;
	}
	return ccomSuccess;
}

/* With the communicator: release what is still registered (the pins die with their groups). */
void ccom_regs_free(struct ccomComm *comm, struct ccom_regs *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		if (r->e[i].id)
			rec_unpin(comm, &r->e[i]);
	pthread_mutex_destroy(&r->lock);
	free(r->e);
	free(r);
}
