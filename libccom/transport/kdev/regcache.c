// SPDX-License-Identifier: MIT
/*
 * regcache.c - the user-buffer registration cache (kdev room).
 *
 * Collectives on kdev run on the user's own buffers: each needs a
 * MEM_REGISTER handle covering it.  Registering (pinning) costs a syscall
 * and a page walk, so registrations are kept in a small cache keyed by the
 * page-aligned address range, bounded by CCOM_KDEV_CACHE entries and
 * evicted least-recently-used first.
 *
 * A cached range may have been freed and its address reused by a new
 * mapping.  The driver watches every registration (mmu notifier): an
 * unmapped or remapped range is dead, and any descriptor touching it
 * completes with -EFAULT.  So before a cache hit is used, one 1-byte COPY
 * "probe" per hit runs through the engine (all hits of a collective in one
 * batch); a failed probe drops the entry and registers the range again.
 * Results are therefore never computed from stale pages; a freed buffer
 * whose pages are still mapped (small heap chunks) is legitimately reused.
 *
 * Each entry carries an id that is never reused and a bitmask of the local
 * peers that imported its dma-buf grant (grant.c); evicting an entry queues
 * its id for those peers, which drop their import at the next exchange.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/comm.h"
#include "proxy/wait.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define KDEV_PAGE 4096UL
#define PROBE_COOKIE (1ull << 63)

struct kdev_drops {
	uint64_t *ids;
	int n, cap;
};

struct ccom_kdev_cache {
	struct ccom_kdev_reg *e;	/* @cap slots; free where handle == 0 */
	int cap;
	uint64_t next_id;
	uint64_t clock;
	void *probe_page;		/* destination of the probes */
	uint32_t probe_handle;
	struct kdev_drops *drops;	/* per local peer */
	/*
	 * ccomCommRegister's ranges (ccom_kdev_cache_pin()): entries with
	 * exactly such a range are never evicted for room.  @lock serializes
	 * the API thread's pins with the progress thread's lookups.
	 */
	pthread_mutex_t lock;
	struct { uintptr_t start, end; } *pins;
	int npins;
};

static int reg_destroy(struct ccom_kdev *kd, uint32_t handle)
{
	struct nccom_destroy d = { .size = sizeof(d), .handle = handle };

	return ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d);
}

static int reg_register(struct ccom_kdev *kd, uintptr_t start, uintptr_t end, uint32_t access,
			uint32_t *handle)
{
	struct nccom_mem_register mr = { .size = sizeof(mr), .flags = access, .addr = start,
					  .length = end - start };
	int err = ccom_kdev_ioctl(kd, NCCOM_IOC_MEM_REGISTER, &mr);

	if (err)
		return err;
	*handle = mr.out_handle;
	return 0;
}

int ccom_kdev_cache_init(struct ccom_kdev *kd)
{
	struct ccom_kdev_cache *c = calloc(1, sizeof(*c));
	int64_t cap = ccom_param_int("CCOM_KDEV_CACHE");
	int err;

	if (!c)
		return -ENOMEM;
	kd->cache = c;
	pthread_mutex_init(&c->lock, NULL);
	if (cap < 4 || cap > 4096) {
		ccom_warn("CCOM_KDEV_CACHE=%lld is outside 4..4096; using 64", (long long)cap);
		cap = 64;
	}
	c->cap = (int)cap;
	c->next_id = 1;
	c->e = calloc((size_t)c->cap, sizeof(*c->e));
	c->drops = calloc((size_t)kd->nlocal, sizeof(*c->drops));
	if (!c->e || !c->drops)
		return -ENOMEM;
	c->probe_page = mmap(NULL, KDEV_PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->probe_page == MAP_FAILED) {
		c->probe_page = NULL;
		return -ENOMEM;
	}
	err = reg_register(kd, (uintptr_t)c->probe_page, (uintptr_t)c->probe_page + KDEV_PAGE,
			   NCCOM_MEM_READ | NCCOM_MEM_WRITE, &c->probe_handle);
	return err;
}

/* Memory only: the handles die with the file descriptor (closed after this). */
void ccom_kdev_cache_fini(struct ccom_kdev *kd)
{
	struct ccom_kdev_cache *c = kd->cache;
	int l;

	if (!c)
		return;
	if (c->drops)
		for (l = 0; l < kd->nlocal; l++)
			free(c->drops[l].ids);
	free(c->drops);
	free(c->e);
	free(c->pins);
	pthread_mutex_destroy(&c->lock);
	if (c->probe_page)
		munmap(c->probe_page, KDEV_PAGE);
	free(c);
	kd->cache = NULL;
}

static void queue_drop(struct ccom_kdev_cache *c, int l, uint64_t id)
{
	struct kdev_drops *d = &c->drops[l];
	uint64_t *n;

	if (d->n == d->cap) {
		n = realloc(d->ids, (size_t)(d->cap ? d->cap * 2 : 16) * sizeof(*n));
		if (!n)
			return;	/* the peer keeps a stale import until destroy: harmless */
		d->ids = n;
		d->cap = d->cap ? d->cap * 2 : 16;
	}
	d->ids[d->n++] = id;
}

static void entry_evict(struct ccom_kdev *kd, struct ccom_kdev_reg *e)
{
	struct ccom_kdev_cache *c = kd->cache;
	int l;

	for (l = 0; l < kd->nlocal; l++)
		if (e->peers_have & (1ull << l))
			queue_drop(c, l, e->id);
	reg_destroy(kd, e->handle);
	ccom_trace(CCOM_SUBSYS_KDEV, "kdev: dropped registration %llu [%#lx, %#lx)",
		   (unsigned long long)e->id, (unsigned long)e->start, (unsigned long)e->end);
	memset(e, 0, sizeof(*e));
}

int ccom_kdev_cache_take_drops(struct ccom_kdev *kd, int l, uint64_t *ids, int max)
{
	struct kdev_drops *d = &kd->cache->drops[l];
	int n;

	pthread_mutex_lock(&kd->cache->lock);
	n = d->n < max ? d->n : max;
	if (n > 0) {	/* d->ids may still be NULL */
		memcpy(ids, d->ids, (size_t)n * sizeof(*ids));
		memmove(d->ids, d->ids + n, (size_t)(d->n - n) * sizeof(*ids));
		d->n -= n;
	}
	pthread_mutex_unlock(&kd->cache->lock);
	return n > 0 ? n : 0;
}

void ccom_kdev_cache_forget(struct ccom_kdev *kd, const void *addr, size_t len)
{
	struct ccom_kdev_cache *c = kd->cache;
	uintptr_t s = (uintptr_t)addr, e = s + len;
	int i;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->cap; i++)
		if (c->e[i].handle && c->e[i].start < e && s < c->e[i].end)
			entry_evict(kd, &c->e[i]);
	pthread_mutex_unlock(&c->lock);
}

static struct ccom_kdev_reg *cache_find(struct ccom_kdev_cache *c, uintptr_t s, uintptr_t e,
					uint32_t access)
{
	struct ccom_kdev_reg *best = NULL;
	int i;

	for (i = 0; i < c->cap; i++) {
		struct ccom_kdev_reg *r = &c->e[i];

		if (r->handle && r->start <= s && e <= r->end && (r->access & access) == access &&
		    (!best || r->id > best->id))
			best = r;
	}
	return best;
}

/* Is @r one of ccomCommRegister's ranges (ccom_kdev_cache_pin())? */
static bool entry_pinned(const struct ccom_kdev_cache *c, const struct ccom_kdev_reg *r)
{
	int i;

	for (i = 0; i < c->npins; i++)
		if (c->pins[i].start == r->start && c->pins[i].end == r->end)
			return true;
	return false;
}

/* A free slot, evicting the least recently used entry not in use nor pinned. */
static struct ccom_kdev_reg *cache_slot(struct ccom_kdev *kd)
{
	struct ccom_kdev_cache *c = kd->cache;
	struct ccom_kdev_reg *lru = NULL;
	int i;

	for (i = 0; i < c->cap; i++) {
		if (!c->e[i].handle)
			return &c->e[i];
		if (!c->e[i].in_use && !entry_pinned(c, &c->e[i]) &&
		    (!lru || c->e[i].last_use < lru->last_use))
			lru = &c->e[i];
	}
	if (lru)
		entry_evict(kd, lru);
	return lru;
}

static int cache_insert(struct ccom_kdev *kd, uintptr_t s, uintptr_t e, uint32_t access,
			struct ccom_kdev_reg **out)
{
	struct ccom_kdev_cache *c = kd->cache;
	struct ccom_kdev_reg *r = cache_slot(kd);
	uint32_t handle;
	int i, err;

	if (!r)
		return -ENOSPC;
	err = reg_register(kd, s, e, access, &handle);
	if (err) {
		ccom_set_last_error("kdev: rank %d: MEM_REGISTER of [%#lx, %#lx) failed: %s%s",
				    kd->comm->rank, (unsigned long)s, (unsigned long)e, strerror(-err),
				    err == -ENOMEM ? " (raise ulimit -l or set CCOM_KDEV=0)" : "");
		return err;
	}
	*r = (struct ccom_kdev_reg){ .start = s, .end = e, .handle = handle, .access = access,
				     .id = c->next_id++, .last_use = ++c->clock, .in_use = true,
				     .fresh = true };
	*out = r;
	/* Entries the new one covers are redundant pins: drop them now. */
	for (i = 0; i < c->cap; i++) {
		struct ccom_kdev_reg *x = &c->e[i];

		if (x != r && x->handle && !x->in_use && !entry_pinned(c, x) && x->start >= s &&
		    x->end <= e && (x->access & access) == x->access)
			entry_evict(kd, x);
	}
	return 0;
}

/*
 * A failed probe leaves the queue in the error state (set right after its
 * completion is written, so it may not be visible yet): reset it, waiting
 * a little for the state if needed.
 */
static int queue_recover(struct ccom_kdev *kd)
{
	struct nccom_queue_reset rs = { .size = sizeof(rs), .handle = kd->ring.handle };
	int i, err = 0;

	for (i = 0; i < 2000; i++) {
		if (__atomic_load_n(&kd->ring.khdr->state, __ATOMIC_ACQUIRE) != NCCOM_QUEUE_ERROR) {
			ccom_sleep_us(100, NULL);
			continue;
		}
		err = ccom_kdev_ioctl(kd, NCCOM_IOC_QUEUE_RESET, &rs);
		if (err != -EBUSY)
			break;
	}
	if (err || i == 2000) {
		ccom_set_last_error("kdev: rank %d: cannot reset the queue after a failed probe: %s",
				    kd->comm->rank, err ? strerror(-err) : "it never entered the error state");
		return err ? err : -EIO;
	}
	return 0;
}

/*
 * Probe every cache hit of this collective through the engine: a 1-byte
 * COPY from the registration; -EFAULT means the driver found it dead.
 * The queue is idle here (the previous collective completed).
 */
static int cache_probe(struct ccom_kdev *kd, struct ccom_kdev_reg **hits, int n, bool *dead)
{
	struct ccom_kdev_ring *r = &kd->ring;
	struct ccom_kdev_cache *c = kd->cache;
	struct ccom_kdev_spin sp;
	struct ccom_wait w;
	uint32_t want = r->sq_tail + (uint32_t)n, i, ready;
	int k, failed = 0, resets = 0, err = 0;

	for (k = 0; k < n; k++) {
		struct nccom_desc *d = ccom_kdev_get_sqe(r);

		if (!d)
			return -EOVERFLOW;	/* cannot happen: batches of PROBE_BATCH on an idle ring */
		d->opcode = NCCOM_OP_COPY;
		d->cookie = PROBE_COOKIE | (uint64_t)k;
		d->dst_handle = c->probe_handle;
		d->src_handle = hits[k]->handle;
		d->length = 1;
		dead[k] = false;
	}
	err = ccom_kdev_publish(kd);
	if (err)
		return err;
	ccom_kdev_spin_reset(&sp);
	ccom_wait_begin(&w, kd->comm);
	while (!err && r->cq_head != want) {
		ready = ccom_kdev_cq_ready(r);
		for (i = 0; i < ready; i++) {
			struct nccom_cqe *cqe = ccom_kdev_cqe(r, i);
			uint64_t idx = cqe->cookie & ~PROBE_COOKIE;

			if (!(cqe->cookie & PROBE_COOKIE) || idx >= (uint64_t)n) {
				err = -EPROTO;
				ccom_set_last_error("kdev: rank %d: unexpected completion cookie %#llx during a probe",
						    kd->comm->rank, (unsigned long long)cqe->cookie);
				break;
			}
			if (cqe->status)
				dead[idx] = true;
		}
		ccom_kdev_cq_advance(r, i);
		if (err || r->cq_head == want)
			break;
		if (__atomic_load_n(&r->khdr->state, __ATOMIC_ACQUIRE) == NCCOM_QUEUE_ERROR) {
			/* The failed probe completed; the ones after it resume. */
			err = queue_recover(kd);
			resets++;
			continue;
		}
		err = ccom_wait_check(&w);
		if (!err && !ccom_kdev_spin(&sp))
			err = ccom_kdev_wait_cq(kd, 20000);
	}
	ccom_wait_end(&w);
	for (k = 0; k < n; k++)
		failed += dead[k];
	for (; !err && resets < failed; resets++)
		err = queue_recover(kd);
	return err;
}

static void cache_release_locked(struct ccom_kdev_cache *c)
{
	int i;

	for (i = 0; i < c->cap; i++)
		c->e[i].in_use = false;
}

void ccom_kdev_cache_release(struct ccom_kdev *kd)
{
	pthread_mutex_lock(&kd->cache->lock);
	cache_release_locked(kd->cache);
	pthread_mutex_unlock(&kd->cache->lock);
}

#define PROBE_BATCH 256		/* probes per engine batch (the ring is idle: 1024 slots) */

/*
 * Look up or register every request; @each: a failed registration leaves
 * that request's reg NULL and goes on (p2p), else it fails the call.  Hits
 * are probed in batches; dead ones are registered again.
 */
static int cache_get_common(struct ccom_kdev *kd, struct ccom_kdev_req *reqs, int n, bool each)
{
	struct ccom_kdev_cache *c = kd->cache;
	struct ccom_kdev_reg *hits_s[8], **hits = hits_s;
	bool dead_s[8], *dead = dead_s;
	int i, j, nh = 0, err = 0;

	if (n > 8) {
		hits = malloc((size_t)n * sizeof(*hits));
		dead = malloc((size_t)n * sizeof(*dead));
		if (!hits || !dead) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n && !err; i++) {
		uintptr_t s = (uintptr_t)reqs[i].addr & ~(KDEV_PAGE - 1);
		uintptr_t e = ((uintptr_t)reqs[i].addr + reqs[i].len + KDEV_PAGE - 1) &
			      ~(KDEV_PAGE - 1);
		struct ccom_kdev_reg *r;

		reqs[i].reg = NULL;
		if (!reqs[i].len)
			continue;
		r = cache_find(c, s, e, reqs[i].access);
		if (r) {
			r->last_use = ++c->clock;
			if (!r->in_use && !r->fresh)
				hits[nh++] = r;
			r->in_use = true;
			reqs[i].reg = r;
			continue;
		}
		err = cache_insert(kd, s, e, reqs[i].access, &reqs[i].reg);
		if (err && each && err != -ECANCELED) {
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d: %s", kd->comm->rank,
				  err == -ENOSPC ? "the registration cache is full of buffers in use (raise CCOM_KDEV_CACHE)" :
				  ccom_last_error());
			reqs[i].reg = NULL;
			err = 0;
		}
	}
	for (j = 0; !err && j < nh; j += PROBE_BATCH)
		err = cache_probe(kd, hits + j, nh - j < PROBE_BATCH ? nh - j : PROBE_BATCH, dead + j);
	for (i = 0; !err && i < nh; i++) {
		struct ccom_kdev_reg *old = hits[i];
		int k;

		if (!dead[i])
			continue;
		ccom_info(CCOM_SUBSYS_KDEV, "kdev: registration [%#lx, %#lx) was invalidated (buffer freed or remapped); registering the buffers again",
			  (unsigned long)old->start, (unsigned long)old->end);
		entry_evict(kd, old);	/* frees the slot: cache_insert reuses it */
		/*
		 * Register what the requests cover, not the old range: that may
		 * have been a larger buffer, now partly unmapped.
		 */
		for (k = 0; !err && k < n; k++) {
			uintptr_t s = (uintptr_t)reqs[k].addr & ~(KDEV_PAGE - 1);
			uintptr_t e = ((uintptr_t)reqs[k].addr + reqs[k].len + KDEV_PAGE - 1) &
				      ~(KDEV_PAGE - 1);

			if (reqs[k].reg != old)
				continue;
			/* Only entries checked in this call (probed or new) may serve. */
			reqs[k].reg = cache_find(c, s, e, reqs[k].access);
			if (reqs[k].reg && reqs[k].reg->in_use)
				continue;
			err = cache_insert(kd, s, e, reqs[k].access, &reqs[k].reg);
			if (err && each) {
				reqs[k].reg = NULL;
				err = 0;
			}
		}
	}
out:
	for (i = 0; i < c->cap; i++)
		c->e[i].fresh = false;
	if (hits != hits_s)
		free(hits);
	if (dead != dead_s)
		free(dead);
	return err;
}

int ccom_kdev_cache_get(struct ccom_kdev *kd, struct ccom_kdev_req *reqs, int n)
{
	int err;

	pthread_mutex_lock(&kd->cache->lock);
	cache_release_locked(kd->cache);
	err = cache_get_common(kd, reqs, n, false);
	pthread_mutex_unlock(&kd->cache->lock);
	return err;
}

int ccom_kdev_cache_get_each(struct ccom_kdev *kd, struct ccom_kdev_req *reqs, int n)
{
	int err;

	pthread_mutex_lock(&kd->cache->lock);
	err = cache_get_common(kd, reqs, n, true);
	pthread_mutex_unlock(&kd->cache->lock);
	return err;
}

/*
 * ccomCommRegister: register [@addr, @addr + @len) (read and write) now
 * and keep it from eviction until ccom_kdev_cache_unpin().  At most half
 * the cache may be pinned, so that operations on other buffers still find
 * room.  A pinned range whose memory is unmapped or remapped is found dead
 * by the probe of its next use like any other entry, and registered again.
 */
int ccom_kdev_cache_pin(struct ccom_kdev *kd, const void *addr, size_t len)
{
	struct ccom_kdev_cache *c = kd->cache;
	uintptr_t s = (uintptr_t)addr & ~(KDEV_PAGE - 1);
	uintptr_t e = ((uintptr_t)addr + len + KDEV_PAGE - 1) & ~(KDEV_PAGE - 1);
	uint32_t access = NCCOM_MEM_READ | NCCOM_MEM_WRITE;
	struct ccom_kdev_reg *r;
	void *n;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	if (c->npins >= c->cap / 2) {
		ccom_set_last_error("kdev: rank %d: %d buffers are registered already, half of the engine's registration cache; deregister some or raise CCOM_KDEV_CACHE (now %d)",
				    kd->comm->rank, c->npins, c->cap);
		err = -ENOSPC;
		goto out;
	}
	n = realloc(c->pins, (size_t)(c->npins + 1) * sizeof(*c->pins));
	if (!n) {
		ccom_set_last_error("kdev: out of memory for the registration cache");
		err = -ENOMEM;
		goto out;
	}
	c->pins = n;
	r = cache_find(c, s, e, access);
	if (!r || r->start != s || r->end != e)
		err = cache_insert(kd, s, e, access, &r);
	if (!err) {
		c->pins[c->npins].start = s;
		c->pins[c->npins].end = e;
		c->npins++;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* ccomCommDeregister: the range is an ordinary entry again (evicted when room is needed). */
void ccom_kdev_cache_unpin(struct ccom_kdev *kd, const void *addr, size_t len)
{
	struct ccom_kdev_cache *c = kd->cache;
	uintptr_t s = (uintptr_t)addr & ~(KDEV_PAGE - 1);
	uintptr_t e = ((uintptr_t)addr + len + KDEV_PAGE - 1) & ~(KDEV_PAGE - 1);
	int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->npins; i++)
		if (c->pins[i].start == s && c->pins[i].end == e) {
			c->pins[i] = c->pins[--c->npins];
			break;
		}
	pthread_mutex_unlock(&c->lock);
}
