/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the waiting policy every room uses (proxy/wait.c): spin, then
 * sched_yield, then a futex sleep on a doorbell, checking on the way the
 * abort flag, the operation's deadline and the liveness of the peers, so
 * that more ranks than cores stay fast and a dead peer is noticed within
 * milliseconds.
 *
 * The policy knows no transport.  Where the peers share memory, the host
 * segment (transport/shm.c) plugs in a struct ccom_wait_source: the
 * doorbells, the spin limits it measured for this host, and callbacks for
 * the CPU placement and the peers' liveness.  Without one (no local peer)
 * a wait only checks abort and the deadline.
 *
 * Idiom:
 *	ccom_wait_begin(&w, comm);
 *	while (!condition) { err = ccom_wait_step(&w); if (err) break; }
 *	ccom_wait_end(&w);
 */
#ifndef CCOM_PROXY_WAIT_H
#define CCOM_PROXY_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ccomComm;

/* A doorbell: seq is the futex word, sleepers counts registered waiters. */
struct ccom_bell {
	_Atomic uint32_t seq;
	_Atomic uint32_t sleepers;
};

struct timespec;

/* Wake the sleepers of @bell, if any (after publishing what they wait for). */
void ccom_bell_ring(struct ccom_bell *bell);
/* Wake every sleeper of @bell unconditionally (failures: nobody may miss it). */
void ccom_bell_wake_all(struct ccom_bell *bell);
/* Sleep while @bell's seq is @seq, at most @ts (futex); returns the futex result. */
int ccom_bell_sleep(struct ccom_bell *bell, uint32_t seq, const struct timespec *ts);

/**
 * struct ccom_wait_ops - what a source of waits tells the policy.
 * @on_cpu: record the CPU the waiter runs on (peers read it)
 * @peer_on_my_cpu: true if local peer @peer (-1: any peer) last ran on the
 *	waiter's CPU, so that spinning cannot help
 * @check_peers: liveness of the peers: 0, or -errno after
 *	ccom_set_last_error() naming the peer
 */
struct ccom_wait_ops {
	void (*on_cpu)(void *ctx);
	bool (*peer_on_my_cpu)(void *ctx, int peer);
	int (*check_peers)(void *ctx);
};

/**
 * struct ccom_wait_source - memory shared with the peers that waits sleep on.
 * @ops: callbacks, called with @ctx
 * @ctx: the source (the host segment)
 * @host_bell: the bell of waits for no particular peer (barriers)
 * @spin_us: > 0: spin this long before sleeping (ranks <= CPUs)
 * @spin_limit: else spins, then @yield_limit yields, before sleeping
 * @yield_limit: see @spin_limit
 */
struct ccom_wait_source {
	const struct ccom_wait_ops *ops;
	void *ctx;
	struct ccom_bell *host_bell;
	int spin_us;
	int spin_limit;
	int yield_limit;
};

/* A wait stuck this long starts looking at the remote hosts' liveness (live.h). */
#define CCOM_WAIT_LIVE_AFTER_US 200000

/* A wait in progress. */
struct ccom_wait {
	struct ccomComm *comm;
	const struct ccom_wait_source *src;	/* NULL: no shared memory */
	struct ccom_bell *bell;		/* the bell this wait sleeps on */
	int peer;			/* local rank waited for, -1: any (host bell) */
	unsigned int iter;
	int64_t spin_until_us;
	bool registered;
	uint32_t seq;
	int64_t next_check_us;
	int64_t live_at_us;		/* remote hosts' liveness looked at from then (live.h) */
	int64_t deadline_us;		/* 0: none */
	int64_t timeout_us;		/* CCOM_OP_TIMEOUT, for the message */
	/*
	 * Skip the source's yield phase (spin, then sleep): set by waits of
	 * bulk steps, where the awaited ranks need whole slices of CPU and a
	 * yield on a loaded machine hands the CPU to another job instead.
	 */
	bool no_yield;
	/*
	 * A bell whose ring the caller deferred (it published without the
	 * fence): rung before this wait yields or sleeps, so that no peer
	 * sleeps on data this rank already stored.  NULL: none.
	 */
	struct ccom_bell *ring_first;
};

/*
 * Start a wait of @comm on @src (NULL: none) until @deadline_us (0: no
 * deadline; @timeout_us names the limit in the error).  It sleeps on the
 * source's host bell.
 */
void ccom_wait_init(struct ccom_wait *w, struct ccomComm *comm, const struct ccom_wait_source *src,
		    int64_t deadline_us, int64_t timeout_us);
/* Start a wait of @comm with its current operation's deadline and wait source. */
void ccom_wait_begin(struct ccom_wait *w, struct ccomComm *comm);
/* Sleep on @bell instead of the host bell (data published by local rank @peer). */
static inline void ccom_wait_on(struct ccom_wait *w, struct ccom_bell *bell, int peer)
{
	w->bell = bell;
	w->peer = peer;
}
/* One step: spin, yield or sleep; then 0 (re-check your condition) or -errno. */
int ccom_wait_step(struct ccom_wait *w);
void ccom_wait_end(struct ccom_wait *w);
/* Spins, then yields, before a loop over the wait policy sleeps. */
static inline unsigned int ccom_wait_spins(const struct ccom_wait *w)
{
	return w->src ? (unsigned int)w->src->spin_limit : 300;
}

static inline unsigned int ccom_wait_yields(const struct ccom_wait *w)
{
	return w->src ? (unsigned int)w->src->yield_limit : 0;
}

/*
 * Health check used by every wait: abort flag, deadline, broken or dead
 * peers.  0 or -errno after ccom_set_last_error().
 */
int ccom_wait_check(struct ccom_wait *w);

#endif
