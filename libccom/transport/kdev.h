/* SPDX-License-Identifier: MIT */
/*
 * kdev.h - the kdev transport: one /dev/nccom file descriptor per
 * communicator and rank, its submission/completion ring, its timeline
 * semaphore and the grant channel (Unix sockets) to the other ranks of the
 * host.  The collective schedules that use it live in kdev/.
 *
 * Ring helpers follow liburing's split: the mapping is the kernel's, fields
 * that point into it carry a k prefix; the library keeps private copies of
 * the indices it owns (sq_tail, cq_head) and publishes them with release
 * stores; indices the engine owns are read with acquire loads.
 */
#ifndef CCOM_TRANSPORT_KDEV_H
#define CCOM_TRANSPORT_KDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/nccom.h>

struct ccomComm;

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

/* Per-communicator kdev state (comm->coll->kdev). */
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
	struct ccom_kdev_cache *cache;	/* kdev/regcache.c */
	struct ccom_kdev_imports *imports; /* kdev/grant.c: per peer */
	struct ccom_kdev_p2p *p2p;	/* kdev/p2p.c: per-peer Send/Recv state */
	void *scratch;			/* Reduce: where non-root ranks leave their slice */
	size_t scratch_size;
	bool warned_fallback;
};

/*
 * Collective over the communicator, at init's connect stage (through
 * coll/): decides whether kdev is used (/dev/nccom usable on every rank,
 * compat id matching, CCOM_KDEV not 0; collectives only when every rank of
 * the comm is on one host, else Send/Recv between the ranks of a host);
 * if so opens the device, creates the queue and semaphore and connects the
 * grant channel.  Leaves comm->coll->kdev NULL and logs one INFO line when
 * kdev is not used.  Returns 0, or -errno when CCOM_KDEV=1 and kdev cannot
 * be used (the error names the reason and the rank).
 */
int ccom_kdev_comm_init(struct ccomComm *comm);
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

#endif
