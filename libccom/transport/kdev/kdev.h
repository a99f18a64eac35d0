/* SPDX-License-Identifier: MIT */
/*
 * kdev.h - the kdev room: everything that talks to /dev/nccom.  One file
 * descriptor per communicator and rank (device.c), its submission /
 * completion ring (ring.c), its timeline semaphores (device.c, pair_sem.c),
 * the grant channel of Unix sockets to the other ranks of the host
 * (channel.c), the grants themselves (grant.c) and the registration cache
 * (regcache.c).  The schedules that decide what descriptors a collective
 * becomes live in coll/ (kdev_sched.c, kdev_p2p.c) and emit only through
 * the ring interface below; the choice of the engine is tune/'s, from the
 * figures coll/ copies out of struct ccom_kdev into tune/'s struct
 * ccom_tune_engine at init (forced, p2p_only, the features, engine_slow,
 * nlocal, min_bytes): tune/ includes nothing from here.
 *
 * Ring helpers follow liburing's split: the mapping is the kernel's, fields
 * that point into it carry a k prefix; the library keeps private copies of
 * the indices it owns (sq_tail, cq_head) and publishes them with release
 * stores; indices the engine owns are read with acquire loads.
 */
#ifndef CCOM_TRANSPORT_KDEV_KDEV_H
#define CCOM_TRANSPORT_KDEV_KDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/nccom.h>

#include "bootstrap/bootstrap.h"

struct ccomComm;
struct ccom_op;

#define CCOM_KDEV_DEPTH 1024		/* ring entries (power of two) */
#define CCOM_KDEV_MAX_LOCAL 64		/* ranks per host (peers_have masks) */
#define CCOM_TAG_KDEV_BASE (CCOM_BOOTSTRAP_TAG_USER_BASE + 0x300)

/* The mmap'd queue. */
struct ccom_kdev_ring {
	void *map;
	size_t map_size;
	uint32_t handle;
	uint32_t mask;
	uint32_t depth;
	struct nccom_ring_hdr *khdr;
	struct nccom_desc *ksqes;
	struct nccom_cqe *kcqes;
	uint32_t sq_tail;		/* private copy: descriptors written */
	uint32_t sq_published;		/* last sq_tail stored into the header */
	uint32_t cq_head;		/* private copy: completions consumed */
};

struct ccom_kdev_cache;
struct ccom_kdev_imports;
struct ccom_kdev_p2p;

/* Per-communicator kdev state (comm->kdev). */
struct ccom_kdev {
	struct ccomComm *comm;
	int fd;				/* /dev/nccom */
	struct nccom_info info;
	struct ccom_kdev_ring ring;
	uint32_t sem;			/* my semaphore (owner) */
	int nlocal;
	int me;				/* my local rank */
	int *sock;			/* nlocal Unix sockets (SOCK_SEQPACKET), -1 for me */
	uint32_t *peer_sem;		/* nlocal imported semaphore handles, 0 for me */
	uint64_t coll_seq;		/* kdev collectives run (semaphore epoch) */
	bool forced;			/* CCOM_KDEV=1 */
	bool p2p_only;			/* the comm spans hosts: Send/Recv between local ranks only */
	bool dead;			/* queue destroyed after abort/failure */
	int64_t min_bytes;		/* CCOM_KDEV_MIN_BYTES */
	struct ccom_kdev_cache *cache;	/* regcache.c */
	struct ccom_kdev_imports *imports; /* grant.c: per peer */
	struct ccom_kdev_p2p *p2p;	/* pair_sem.c + coll/kdev_p2p.c: per-peer Send/Recv state */
	void *scratch;			/* Reduce: where non-root ranks leave their slice */
	size_t scratch_size;
	bool warned_fallback;		/* coll/kdev_sched.c: a registration fallback was logged */
	bool engine_slow;		/* calibrate.c, any rank: the automatic choice never picks the engine */
	bool map;			/* CCOM_KDEV_MAP=1|auto: peers' grants are mmap()ed (mapped single copy) */
	int map_mode;			/* CCOM_KDEV_MAP: 0, 1, 2 auto (the tuner's race picks per op) */
	bool map_skip;			/* auto: this op runs the engine's copies (set by coll/coll.c) */
	bool warned_map;		/* grant.c: an mmap failure was logged */
};

/*
 * Collective over the communicator, at init's connect stage (through
 * coll/): decides whether kdev is used (/dev/nccom usable on every rank,
 * compat id matching, CCOM_KDEV not 0; collectives only when every rank of
 * the comm is on one host, else Send/Recv between the ranks of a host);
 * if so opens the device, creates the queue and semaphore and connects the
 * grant channel.  Leaves comm->kdev NULL and logs one INFO line when
 * kdev is not used.  Returns 0, or -errno when CCOM_KDEV=1 and kdev cannot
 * be used (the error names the reason and the rank).
 */
int ccom_kdev_comm_init(struct ccomComm *comm);
/*
 * calibrate.c: time one engine COPY against memcpy() (once per boot and
 * driver load, cached in /dev/shm); *@slow when the engine copies more
 * than 2x slower.  0, or -errno when the engine's copy failed.
 */
int ccom_kdev_calibrate(struct ccom_kdev *kd, bool *slow);
/* "BOOTID-INODE-CTIME" of the loaded driver (/dev/nccom), a key of per-load caches; 0 or -ENOENT. */
int ccom_kdev_load_key(char *buf, size_t len);
/* Close everything (not collective, never blocks on peers). */
void ccom_kdev_comm_fini(struct ccomComm *comm);
/* From ccomCommAbort (any thread): nothing to do but let waits see the flag. */
void ccom_kdev_comm_abort(struct ccomComm *comm);

/* Cancel the queue and fail peers waiting on this rank (after an error). */
void ccom_kdev_cancel(struct ccom_kdev *kd);

/* Thin ioctl wrapper: 0 or -errno. */
int ccom_kdev_ioctl(struct ccom_kdev *kd, unsigned long cmd, void *arg);

/* ---- ring helpers ---- */

/* Free submission slots right now (engine progress included). */
static inline uint32_t ccom_kdev_sq_space(struct ccom_kdev_ring *r)
{
	/* Acquire: pairs with the engine's release store of sq_head. */
	uint32_t head = __atomic_load_n(&r->khdr->sq_head, __ATOMIC_ACQUIRE);

	return r->depth - (r->sq_tail - head);
}

/*
 * Next descriptor slot, zeroed, or NULL when the ring is full (publish,
 * reap and retry).  Descriptors are not visible to the engine until
 * ccom_kdev_publish().
 */
static inline struct nccom_desc *ccom_kdev_get_sqe(struct ccom_kdev_ring *r)
{
	struct nccom_desc *d;

	if (ccom_kdev_sq_space(r) == 0)
		return NULL;
	d = &r->ksqes[r->sq_tail & r->mask];
	__builtin_memset(d, 0, sizeof(*d));
	r->sq_tail++;
	return d;
}

/* Completions the engine has written that we did not consume yet. */
static inline uint32_t ccom_kdev_cq_ready(struct ccom_kdev_ring *r)
{
	/* Acquire: the cqe contents are visible once cq_tail is. */
	return __atomic_load_n(&r->khdr->cq_tail, __ATOMIC_ACQUIRE) - r->cq_head;
}

static inline struct nccom_cqe *ccom_kdev_cqe(struct ccom_kdev_ring *r, uint32_t i)
{
	return &r->kcqes[(r->cq_head + i) & r->mask];
}

/* Consume @n completions (the slots may be reused by the engine). */
static inline void ccom_kdev_cq_advance(struct ccom_kdev_ring *r, uint32_t n)
{
	r->cq_head += n;
	/* Release: our reads of the cqes happen before the engine reuses them. */
	__atomic_store_n(&r->khdr->cq_head, r->cq_head, __ATOMIC_RELEASE);
}

/*
 * Publish the written descriptors (release store of sq_tail: the
 * descriptor stores happen before it) and ring the doorbell.  0 or -errno
 * (-EIO: the queue is in the error state).
 */
int ccom_kdev_publish(struct ccom_kdev *kd);

/*
 * Sleep until cq_tail moves past what we consumed or until @timeout_us
 * passes (QUEUE_WAIT with an absolute CLOCK_MONOTONIC deadline).  0 or
 * -errno (-ETIMEDOUT is returned as 0: the caller re-checks).
 */
int ccom_kdev_wait_cq(struct ccom_kdev *kd, int64_t timeout_us);

/*
 * Spin, then yield, then sleep: a sleep/wake pair through the driver costs
 * far more than a short poll of the ring (a few us on hardware, ms under
 * emulation), and peers usually arrive together.  ccom_kdev_spin() returns
 * true while the caller should poll again (it paused or yielded), false
 * once CCOM_KDEV_SPIN_US passed without progress: then sleep.
 */
#define CCOM_KDEV_SPIN_US 300
struct ccom_kdev_spin {
	int64_t until_us;
	unsigned int n;
};

static inline void ccom_kdev_spin_reset(struct ccom_kdev_spin *s)
{
	s->n = 0;
	s->until_us = 0;
}

bool ccom_kdev_spin(struct ccom_kdev_spin *s);

/* channel.c: the grant channel. */
#define CCOM_KDEV_SETUP_TIMEOUT_US (60 * 1000000LL)
#define CCOM_KDEV_HELLO_MAGIC 0x6b646576u	/* "kdev" */

/* First packet on a channel socket, and the semaphore grant's header. */
struct ccom_kdev_hello {
	uint32_t magic;
	int32_t rank;
};

/* Connect the mesh of Unix sockets to every local peer (collective over the host). */
int ccom_kdev_connect_mesh(struct ccom_kdev *kd);

/* Send/receive one grant-channel packet with up to @nfds (<= CCOM_KDEV_MAX_FDS) descriptors. */
#define CCOM_KDEV_MAX_FDS 16
int ccom_kdev_sendmsg(struct ccom_kdev *kd, int lpeer, const void *buf, size_t len,
		      const int *fds, int nfds);
/*
 * Receive one packet of exactly @len bytes from local peer @lpeer, with up
 * to @maxfds descriptors into @fds (*@nfds set).  Waits in slices, checking
 * abort, the op deadline and peer liveness; a closed socket is
 * -ECONNRESET naming the peer.
 */
int ccom_kdev_recvmsg(struct ccom_kdev *kd, int lpeer, void *buf, size_t len, int *fds,
		      int maxfds, int *nfds);

/* ---- registrations, grants and the descriptors the schedules emit ---- */

/* A registration of the cache (regcache.c). */
struct ccom_kdev_reg {
	uintptr_t start, end;		/* page-aligned user range */
	uint32_t handle;		/* MEM_REGISTER handle */
	uint32_t access;		/* enum nccom_mem_flags */
	uint64_t id;			/* never reused: names the grant towards peers */
	uint64_t last_use;		/* LRU clock */
	uint64_t peers_have;		/* bit l: local rank l imported it */
	bool in_use;			/* referenced by the collective being set up */
	bool fresh;			/* registered by this lookup: no probe needed */
};

/* What a peer (or this rank) exposes for one collective: handle + offset. */
struct ccom_kdev_view {
	uint32_t handle;		/* in this rank's fd: own registration or import */
	uint64_t off;			/* byte offset of the buffer in it */
	const char *cpu;		/* kd->map: the buffer in this process, or NULL */
	uint64_t cpu_len;		/* bytes readable from @cpu */
};

/* Up to this many buffers per collective are published to peers. */
#define CCOM_KDEV_NPUB 2

/* regcache.c */
int ccom_kdev_cache_init(struct ccom_kdev *kd);
void ccom_kdev_cache_fini(struct ccom_kdev *kd);
/*
 * Registrations covering [addr, addr + len) with at least @access, one per
 * request, validated against the driver's invalidation (a cached entry
 * whose range was unmapped or remapped is dropped and registered again).
 * Returns 0, or -errno when a registration fails (the caller falls back).
 */
struct ccom_kdev_req {
	const void *addr;
	size_t len;
	uint32_t access;
	struct ccom_kdev_reg *reg;	/* out */
};
int ccom_kdev_cache_get(struct ccom_kdev *kd, struct ccom_kdev_req *reqs, int n);
/* Drop every cache entry inside [addr, addr + len) (memory the library frees). */
void ccom_kdev_cache_forget(struct ccom_kdev *kd, const void *addr, size_t len);
/*
 * ccomCommRegister / ccomCommDeregister (coll/register.c): pin
 * [addr, addr + len) in the cache now and keep it from eviction until the
 * unpin; 0 or -errno after a sentence (-ENOSPC: half the cache is pinned).
 */
int ccom_kdev_cache_pin(struct ccom_kdev *kd, const void *addr, size_t len);
void ccom_kdev_cache_unpin(struct ccom_kdev *kd, const void *addr, size_t len);
/* Pop up to @max grant ids local peer @l must drop; returns how many. */
int ccom_kdev_cache_take_drops(struct ccom_kdev *kd, int l, uint64_t *ids, int max);

/* grant.c */
int ccom_kdev_grant_init(struct ccom_kdev *kd);
void ccom_kdev_grant_fini(struct ccom_kdev *kd);
/*
 * The per-collective exchange with every local peer: publishes @pub
 * (NULL entries: nothing) with the dma-buf grants peers lack, checks that
 * every peer runs the same collective (@sig), and fills views[l * NPUB + i]
 * with handles usable in this fd (own registrations for l == me).  *@all
 * combines every rank's @vote (below): unless it is OK, every rank runs
 * the collective on shm together.  0 or -errno.
 */
struct ccom_kdev_sig {
	uint32_t kind, dtype, op, root;
	uint64_t count;
};
/*
 * A rank's vote in the exchange: its buffers are registered and published
 * (OK), it could not register them (FAIL), or it runs this collective on
 * shm by the automatic choice (SHM).  @all returns OK when every rank
 * voted OK, else FAIL if any rank failed, else SHM: every rank then runs
 * the collective on shm.
 */
enum { CCOM_KDEV_VOTE_FAIL = 0, CCOM_KDEV_VOTE_OK = 1, CCOM_KDEV_VOTE_SHM = 2 };
int ccom_kdev_exchange(struct ccom_kdev *kd, const struct ccom_kdev_sig *sig, int vote,
		       struct ccom_kdev_reg *const *pub, const uint64_t *pub_off,
		       struct ccom_kdev_view *views, int *all);

/*
 * Grants outside the collective exchange (coll/kdev_p2p.c): export @r as a dma-buf
 * fd (*@fd must be -1 or an fd from an earlier call, kept); import local
 * peer @l's grant @id from @fd (>= 0: new or re-sent, replaces an older
 * import of the id) or look up the import it sent before (@fd -1; an id
 * never sent is -EPROTO); drop @n imports of @l.
 */
int ccom_kdev_grant_export(struct ccom_kdev *kd, struct ccom_kdev_reg *r, int *fd);
int ccom_kdev_grant_import(struct ccom_kdev *kd, int l, uint64_t id, int fd, uint32_t *handle);
void ccom_kdev_grant_drop(struct ccom_kdev *kd, int l, const uint64_t *ids, int n);
/*
 * kd->map: the CPU address of bytes [@off, @off + @len) of local peer @l's
 * import @handle (its read-only mapping), or NULL when it is not mapped
 * that far (then the engine copies).  Valid until the import is dropped.
 */
const char *ccom_kdev_grant_cpu(struct ccom_kdev *kd, int l, uint32_t handle, uint64_t off,
				uint64_t len);
/*
 * A copy from a mapped grant returned -EFAULT: its owner unmapped the
 * buffer or exited under it.  A peer that aborted or died is named by the
 * communicator's health checks within milliseconds, so look for that a
 * while (@w begun on kd->comm); otherwise the owner (@rank, or -1 when
 * the copy read several peers) freed its buffer during @what.  Returns
 * -errno after ccom_set_last_error().
 */
struct ccom_wait;
int ccom_kdev_grant_revoked(struct ccom_kdev *kd, struct ccom_wait *w, int rank, const char *what);

/*
 * Like ccom_kdev_cache_get() for @n requests of any number, but a request
 * whose registration fails is left with reg NULL (last error set) instead
 * of failing the call, and entries stay in use since the last
 * ccom_kdev_cache_release().  0 or -errno (queue failure during the probe).
 */
int ccom_kdev_cache_get_each(struct ccom_kdev *kd, struct ccom_kdev_req *reqs, int n);
void ccom_kdev_cache_release(struct ccom_kdev *kd);

/* Descriptor cookies: bits 0-15 local peer involved (0xffff: none), 16-23 what. */
enum { CCOM_KDEV_W_COPY = 1, CCOM_KDEV_W_REDUCE, CCOM_KDEV_W_SIGNAL, CCOM_KDEV_W_WAIT };
#define CCOM_KDEV_COOKIE(what, l) (((uint64_t)(what) << 16) | (uint64_t)((l) & 0xffff))
#define CCOM_KDEV_NO_PEER 0xffff

/*
 * The next free descriptor slot (zeroed); when the ring is full, publishes
 * and waits for room.  NULL with *@err set on failure (the caller fails
 * through ccom_kdev_fail()).
 */
struct nccom_desc *ccom_kdev_next_desc(struct ccom_kdev *kd, int *err);
/*
 * Queue one COPY (@len bytes, nothing for 0) or one SEM_SIGNAL/SEM_WAIT
 * descriptor, its cookie naming local peer @l.  0 or -errno as
 * ccom_kdev_next_desc().
 */
int ccom_kdev_emit_copy(struct ccom_kdev *kd, uint32_t dh, uint64_t doff, uint32_t sh,
			uint64_t soff, uint64_t len, int l);
int ccom_kdev_emit_sem(struct ccom_kdev *kd, int opcode, uint32_t sem, uint64_t value, int l);
/*
 * Queue one REDUCE descriptor: @count elements of driver dtype @dtype,
 * from sources @sh and @s2h (0: none; see struct nccom_desc), cookie naming
 * local peer @l; nothing for 0.  0 or -errno as ccom_kdev_next_desc().
 */
int ccom_kdev_emit_reduce(struct ccom_kdev *kd, uint8_t dtype, uint8_t op, uint32_t dh,
			  uint64_t doff, uint32_t sh, uint64_t soff, uint32_t s2h, uint64_t s2off,
			  uint64_t count, int l);
/* After a failure: mark the host segment broken, cancel queue and semaphores; returns @err. */
int ccom_kdev_fail(struct ccom_kdev *kd, int err);

/* pair_sem.c: the per-pair semaphores of Send/Recv on the engine (coll/kdev_p2p.c). */
struct ccom_kdev_p2p {
	uint32_t *sem;		/* [l]: mine, signalled after receiving from l (0: none yet) */
	bool *sem_sent;		/* [l]: its grant went to l */
	uint32_t *peer_sem;	/* [l]: l's semaphore for me (imported), 0: none yet */
	uint64_t *rx;		/* [l]: transfers received from l (value of sem[l]) */
	uint64_t *tx;		/* [l]: transfers sent to l (what peer_sem[l] reaches) */
	uint64_t *seq_out;	/* [l]: packets sent to l */
	uint64_t *seq_in;	/* [l]: packets received from l */
};

int ccom_kdev_p2p_init(struct ccom_kdev *kd);
void ccom_kdev_p2p_fini(struct ccom_kdev *kd);
/* Destroy the p2p semaphores this rank owns (peers waiting on them fail). */
void ccom_kdev_p2p_cancel(struct ccom_kdev *kd);
/* My semaphore for receptions from local peer @l, created at the first one. */
int ccom_kdev_p2p_sem_get(struct ccom_kdev *kd, int l);
/* Export my semaphore for receptions from @l as an fd (*@fd) for the grant channel. */
int ccom_kdev_p2p_sem_export(struct ccom_kdev *kd, int l, int *fd);

/* ring.c: completion of what the schedules emitted. */
/* Complete every submitted descriptor; 0 or -errno naming the cause. */
int ccom_kdev_complete(struct ccom_kdev *kd);
/*
 * Publish what was emitted and wait until the ring completed descriptors
 * up to @until and this rank's semaphore reached @sem_value (0: no
 * semaphore), spinning first when @spin.  0 or -errno naming the cause.
 */
int ccom_kdev_drain(struct ccom_kdev *kd, uint32_t until, uint64_t sem_value, bool spin);

#endif
