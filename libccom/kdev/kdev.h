/* SPDX-License-Identifier: MIT */
/*
 * kdev.h - collectives through the nccom engine (kdev/ layer): the
 * user-buffer registration cache (regcache.c), the per-collective grant
 * exchange (grant.c) and the descriptor schedules of the direct intra-host
 * algorithms (sched.c).  The device, ring and grant channel are in
 * transport/kdev.h.
 */
#ifndef CCOM_KDEV_KDEV_H
#define CCOM_KDEV_KDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/kdev.h"

struct ccomComm;
struct ccom_op;

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
 * Grants outside the collective exchange (p2p.c): export @r as a dma-buf
 * fd (*@fd must be -1 or an fd from an earlier call, kept); import local
 * peer @l's grant @id from @fd (>= 0: new or re-sent, replaces an older
 * import of the id) or look up the import it sent before (@fd -1; an id
 * never sent is -EPROTO); drop @n imports of @l.
 */
int ccom_kdev_grant_export(struct ccom_kdev *kd, struct ccom_kdev_reg *r, int *fd);
int ccom_kdev_grant_import(struct ccom_kdev *kd, int l, uint64_t id, int fd, uint32_t *handle);
void ccom_kdev_grant_drop(struct ccom_kdev *kd, int l, const uint64_t *ids, int n);

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
/* After a failure: mark the host segment broken, cancel queue and semaphores; returns @err. */
int ccom_kdev_fail(struct ccom_kdev *kd, int err);

/* p2p.c: grouped Send/Recv between local ranks on the engine. */
int ccom_kdev_p2p_init(struct ccom_kdev *kd);
void ccom_kdev_p2p_fini(struct ccom_kdev *kd);
/* Destroy the p2p semaphores this rank owns (peers waiting on them fail). */
void ccom_kdev_p2p_cancel(struct ccom_kdev *kd);
/*
 * True if a transfer of @bytes with rank @peer runs on the engine; both
 * sides compute it from the same (peer locality, size) and get the same
 * answer.
 */
bool ccom_kdev_p2p_wants(struct ccomComm *comm, int peer, size_t bytes);
/*
 * Run the sends/recvs of @ops (their sizes already agreed by coll/p2p.c's
 * header pass) that ccom_kdev_p2p_wants(): single copy from the sender's
 * buffer into the receiver's by the receiver's engine, the sender waiting
 * on the receiver's semaphore.  Sets done[i] for every op it completed;
 * the others (self, remote, small, or a registration that failed on
 * either side, decided identically on both) are left to the shm path.
 * 0 or -errno naming the cause.
 */
int ccom_kdev_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops, bool *done);

/* sched.c: called by coll/ */
/* True if @op should run on the engine (same answer on every rank). */
bool ccom_kdev_wants(struct ccomComm *comm, const struct ccom_op *op);
/* Run @op through the engine; falls back to coll/'s direct path collectively. */
int ccom_kdev_run(struct ccomComm *comm, struct ccom_op *op);

/* Complete every submitted descriptor (sched.c); 0 or -errno naming the cause. */
int ccom_kdev_complete(struct ccom_kdev *kd);

#endif
