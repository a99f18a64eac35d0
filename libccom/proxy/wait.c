// SPDX-License-Identifier: MIT
/*
 * wait.c - the waiting policy (proxy/ room); see wait.h.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "proxy/wait.h"
#include "util/err.h"
#include "util/misc.h"

static long futex_op(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

void ccom_bell_ring(struct ccom_bell *bell)
{
	/* Pairs with the fetch_add of sleepers in ccom_wait_step() / shm_wait(). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&bell->sleepers, memory_order_relaxed)) {
		atomic_fetch_add(&bell->seq, 1);
		futex_op(&bell->seq, FUTEX_WAKE, INT_MAX, NULL);
	}
}

void ccom_bell_wake_all(struct ccom_bell *bell)
{
	atomic_fetch_add(&bell->seq, 1);
	futex_op(&bell->seq, FUTEX_WAKE, INT_MAX, NULL);
}

int ccom_bell_sleep(struct ccom_bell *bell, uint32_t seq, const struct timespec *ts)
{
	return (int)futex_op(&bell->seq, FUTEX_WAIT, seq, ts);
}

void ccom_wait_init(struct ccom_wait *w, struct ccomComm *comm, const struct ccom_wait_source *src,
		    int64_t deadline_us, int64_t timeout_us)
{
	w->comm = comm;
	w->src = src;
	w->bell = src ? src->host_bell : NULL;
	w->peer = -1;
	w->iter = 0;
	w->spin_until_us = 0;
	if (src)
		src->ops->on_cpu(src->ctx);
	w->registered = false;
	w->no_yield = false;
	w->ring_first = NULL;
	w->next_check_us = 0;
	w->live_at_us = 0;
	w->deadline_us = deadline_us;
	w->timeout_us = timeout_us;
}

void ccom_wait_begin(struct ccom_wait *w, struct ccomComm *comm)
{
	ccom_wait_init(w, comm, comm->proxy ? comm->proxy->wait_src : NULL,
		       ccom_proxy_deadline(comm), ccom_proxy_op_timeout(comm));
}

void ccom_wait_end(struct ccom_wait *w)
{
	if (w->registered)
		atomic_fetch_sub(&w->bell->sleepers, 1);
	w->registered = false;
}

/*
 * A peer failure or the deadline: a host found silent behind it is the
 * cause to name (a local peer reports only the first rank it saw fail).
 */
static int with_lost_host(struct ccom_wait *w, int err)
{
	if ((err == -ECONNRESET || err == -ETIMEDOUT) && ccom_live_confirm(w->comm, false))
		return -ECONNRESET;
	return err;
}

int ccom_wait_check(struct ccom_wait *w)
{
	int64_t now = ccom_now_us();
	int err;

	if (ccom_comm_aborted(w->comm)) {
		ccom_set_last_error("rank %d: the communicator %s", w->comm->rank,
				    ccom_comm_stop_reason(w->comm));
		return -ECANCELED;
	}
	if (w->deadline_us && now > w->deadline_us) {
		ccom_set_last_error("rank %d: operation did not complete within CCOM_OP_TIMEOUT (%lld s); a peer is stuck or not calling the same collectives",
				    w->comm->rank, (long long)(w->timeout_us / 1000000));
		return with_lost_host(w, -ETIMEDOUT);
	}
	/* Remote hosts' liveness once a wait is stuck (live.c spaces the looks). */
	if (!w->live_at_us) {
		w->live_at_us = now + CCOM_WAIT_LIVE_AFTER_US;
	} else if (now >= w->live_at_us) {
		err = ccom_live_check(w->comm);
		if (err)
			return err;
	}
	/* Peers are checked after 2 ms of waiting, then every 5 ms (a poll() each). */
	if (w->src && !w->next_check_us) {
		w->next_check_us = now + 2000;
	} else if (w->src && now >= w->next_check_us) {
		w->next_check_us = now + 5000;
		return with_lost_host(w, w->src->ops->check_peers(w->src->ctx));
	}
	return 0;
}

int ccom_wait_step(struct ccom_wait *w)
{
	const struct ccom_wait_source *s = w->src;
	struct timespec ts = { 0, 2000000 };
	unsigned int i = ++w->iter;

	if (w->registered) {
		ccom_bell_sleep(w->bell, w->seq, &ts);
		w->seq = atomic_load(&w->bell->seq);
		s->ops->on_cpu(s->ctx);
		return ccom_wait_check(w);
	}
	if (s->spin_us > 0) {
		/*
		 * Ranks <= CPUs: spin for a bounded time; a peer running on
		 * another CPU usually arrives within microseconds and a futex
		 * wake-up costs more than that.  A peer that last ran on this
		 * CPU cannot arrive while we spin: sleep at once.
		 */
		bool stop = false;

		if ((i & 15) == 0)
			stop = s->ops->peer_on_my_cpu(s->ctx, w->peer);
		if ((i & 255) == 0 && !stop) {	/* the clock is not free: read it rarely */
			int64_t now = ccom_now_us();

			if (!w->spin_until_us)
				w->spin_until_us = now + s->spin_us;
			stop = now >= w->spin_until_us;
		}
		if (!stop) {
			__builtin_ia32_pause();
			return (i & 1023) ? 0 : ccom_wait_check(w);
		}
	} else if (i < (unsigned int)s->spin_limit) {
		__builtin_ia32_pause();
		return (i & 1023) ? 0 : ccom_wait_check(w);
	} else if (!w->no_yield && i < (unsigned int)(s->spin_limit + s->yield_limit)) {
		if (w->ring_first) {
			ccom_bell_ring(w->ring_first);
			w->ring_first = NULL;
		}
		sched_yield();
		return (i & 15) ? 0 : ccom_wait_check(w);
	}
	if (w->ring_first) {
		ccom_bell_ring(w->ring_first);
		w->ring_first = NULL;
	}
	atomic_fetch_add(&w->bell->sleepers, 1);
	w->registered = true;
	w->seq = atomic_load(&w->bell->seq);
	return ccom_wait_check(w);	/* the caller re-checks its condition first */
}
