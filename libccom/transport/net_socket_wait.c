// SPDX-License-Identifier: MIT
/*
 * net_socket_wait.c - how the TCP transport spends a stall (->wait()).
 *
 * ->wait() first lets the caller busy-poll for a budget that adapts per
 * stall (a stall that ends while polling raises it by NET_SPIN_STEP_US, one
 * that must sleep halves it), then sleeps in ppoll on the sockets the
 * group's transfers are stuck on.  Waking a sleeping
 * vCPU costs 10-50 us, while a peer running on another CPU answers within
 * a few: busy-polling took the 2-rank 8-byte AllReduce between two
 * namespaces from 19-24 us to 6-7 us on an idle 2-CPU machine (the budget
 * is capped at NET_SPIN_MAX_US, see there).  When the
 * peer cannot run because we hold its CPU, polls time out and the budget
 * decays to NET_SPIN_MIN_US, i.e. the old sleep-at-once behaviour.  At
 * most every 250 ms a stall polls and yields for up to 5 ms instead of
 * sleeping, so that two ranks stuck on one CPU by sync wake-ups get
 * spread by the scheduler (2-rank 1 MiB AllReduce between namespaces on
 * an idle machine: median 325 us with it, 616 us without, Open MPI 459;
 * 18 interleaved runs).  More ranks on this host than CPUs: no busy-poll
 * at all.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "transport/net_socket_private.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/misc.h"

/* Add the sockets @c is stuck on (or asked about) to @pfd; returns the new count. */
static int watch(struct pollfd *pfd, int n, struct net_conn *c, bool tx, bool rx,
		 bool *lfd_added)
{
	if (c->dead || (!tx && !rx))
		return n;
	if (atomic_load_explicit(&c->state, memory_order_relaxed) != NET_READY)
		return net_lazy_watch(pfd, n, c, lfd_added);
	/*
	 * POLLRDHUP: a peer that refused our stream (a revoke) shuts its
	 * sockets down without reading; its FIN is all a sender stuck on a
	 * full buffer can see (no POLLHUP or EPIPE until the peer closes).
	 */
	if (tx)
		pfd[n++] = (struct pollfd){ .fd = c->fds[c->tx.cur], .events = POLLOUT | POLLRDHUP };
	if (rx)
		pfd[n++] = (struct pollfd){ .fd = c->fds[c->rx.cur], .events = POLLIN };
	return n;
}

/*
 * Lazy groups: room in g->pfds for everything a wait may watch (conns on
 * their way watch their connecting sockets, the listener, the accepted
 * connections waiting for a hello and a liveness probe).
 */
static int ensure_pfds(struct net_group *g)
{
	struct pollfd *p;
	int i, need = 0;

	for (i = 0; i < g->nconns; i++)
		need += atomic_load_explicit(&g->conns[i]->state, memory_order_relaxed) == NET_READY ?
			2 : net_lazy_watch_max(g->conns[i]);
	need += 1 + g->npending;
	if (need <= g->pfds_cap)
		return 0;
	p = realloc(g->pfds, (size_t)need * 2 * sizeof(*p));
	if (!p) {
		ccom_set_last_error("net_socket: out of memory for %d poll entries", need * 2);
		return -ENOMEM;
	}
	g->pfds = p;
	g->pfds_cap = need * 2;
	return 0;
}

/*
 * A conn we send on whose peer shut its side down never takes our bytes:
 * fail it now (the control note names a revoke), or the sender waits for
 * CCOM_OP_TIMEOUT.  ccom never half-closes, so a FIN while we still send
 * means the peer left.  Another conn of the group is marked dead (its next
 * send reports it; the level-triggered POLLRDHUP would spin the wait).
 */
static int tx_shut(struct net_group *g, struct net_conn *c, int n)
{
	int i, j, r = 0;

	for (i = 0; i < n; i++) {
		if (!(g->pfds[i].events & POLLOUT) || !(g->pfds[i].revents & POLLRDHUP))
			continue;
		for (j = 0; j < g->nconns; j++) {
			struct net_conn *o = g->conns[j];

			if (o->dead || atomic_load_explicit(&o->state, memory_order_relaxed) != NET_READY ||
			    o->fds[o->tx.cur] != g->pfds[i].fd)
				continue;
			net_peer_gone(o, "was shut down by the peer while we sent", 0);
			if (o == c)
				r = -ECONNRESET;
		}
	}
	return r;
}

/*
 * Sleep until a socket the group's transfers are stuck on can move, or
 * @timeout_us.  Readable data is progress even with POLLHUP (the stream
 * must be drained first; recv() then sees the end and names the peer).  A
 * hang-up on another conn returns 0: that conn's own send/recv reports it.
 */
int net_wait(struct ccom_transport_conn *conn, int dir, int timeout_us)
{
	struct net_conn *c = to_net(conn);
	struct net_group *g = c->group;
	bool lfd_added = false, ready;
	struct timespec ts;
	int n, i, r;

	if (c->dead)
		return -ECONNRESET;
	if (g->nactive)
		net_group_progress(g);
	if (g->lazy) {
		r = ensure_pfds(g);
		if (r)
			return r;
	}
	n = watch(g->pfds, 0, c, c->tx_want || (dir & CCOM_TRANSPORT_WAIT_SEND),
		  c->rx_want || (dir & CCOM_TRANSPORT_WAIT_RECV), &lfd_added);
	for (i = 0; i < g->nconns; i++)
		if (g->conns[i] != c)
			n = watch(g->pfds, n, g->conns[i], g->conns[i]->tx_want,
				  g->conns[i]->rx_want, &lfd_added);
	if (!n || timeout_us <= 0)
		return 0;
	if (g->spin_max_us && !g->slept) {
		int64_t now = ccom_now_us();

		if (!g->idle_since)
			g->idle_since = now;
		if (now - g->idle_since < g->spin_us)
			return 0;	/* busy-poll: the caller retries its send/recv */
		/*
		 * Now and then stay runnable (poll and yield) instead of
		 * sleeping: two ranks that wake each other through sockets
		 * end up on one CPU (socket wake-ups are sync wake-ups: the
		 * woken task goes to the waker's CPU) and stay there while
		 * each sleeps as the other runs.  Two runnable tasks on one
		 * CPU let the idle CPU take one of them.
		 */
		if (now >= g->next_probe_us) {
			g->next_probe_us = now + NET_PROBE_EVERY_US;
			g->probe_until_us = now + NET_PROBE_US;
		}
		if (now < g->probe_until_us) {
			sched_yield();
			return 0;
		}
		/* The peer did not come in time: it may need this CPU; sleep, spin less next time. */
		g->slept = true;
		if (g->spin_us > NET_SPIN_MIN_US)
			g->spin_us /= 2;
	}
	ts.tv_sec = timeout_us / 1000000;
	ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
	r = ppoll(g->pfds, n, &ts, NULL);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	r = tx_shut(g, c, n);
	if (r)
		return r;
	/* A connection on its way reports its errors through net_lazy_progress(). */
	ready = atomic_load_explicit(&c->state, memory_order_relaxed) == NET_READY;
	for (i = 0; ready && i < n; i++) {
		if (g->pfds[i].revents & POLLIN)
			continue;
		if ((g->pfds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) &&
		    (g->pfds[i].fd == c->fds[c->tx.cur] || g->pfds[i].fd == c->fds[c->rx.cur]))
			return (int)net_peer_gone(c, "reported an error or hang-up", 0);
	}
	return 0;
}

/*
 * Ranks of this host <= its CPUs: stalls busy-poll for an adaptive budget
 * before sleeping (a sleeping vCPU takes 10-50 us to wake, a peer on
 * another CPU answers within a few).  More ranks than CPUs: sleep at once.
 */
void net_spin_policy(const struct ccomComm *comm, struct net_group *g)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	g->spin_max_us = comm->local_nranks > ncpu ? 0 : NET_SPIN_MAX_US;
	g->spin_us = g->spin_max_us / 2;
}
