// SPDX-License-Identifier: MIT
/*
 * live.c - liveness of remote hosts (see live.h): keepalive probes on one
 * idle TCP socket per remote peer, and a look at their TCP_INFO from the
 * waits that are stuck.
 *
 * Why the kernel's probes and not a heartbeat of our own: a heartbeat
 * thread stops answering when its process is stopped, swapped or starved
 * (a debugger, a TCG guest at load 10), which is no failure; the peer
 * host's TCP stack answers keepalive probes in softirq context as long as
 * the host runs and the path works.  Why not TCP_USER_TIMEOUT: on Linux it
 * also aborts a connection whose receiver keeps a zero window that long,
 * i.e. a live peer that is merely late to the collective.  Why we decide
 * and not the keepalive count: the kernel's abort would be an error on a
 * socket no wait watches (the control socket carries no data); reading
 * TCP_INFO lets the wait that is stuck name the host, and TCP_KEEPCNT is
 * set so high that the kernel never aborts first.
 *
 * The verdict: a socket in ESTABLISHED that has had no acknowledgment of
 * any kind for CCOM_PEER_TIMEOUT (tcpi_last_ack_recv) while at least two
 * of our probes or retransmissions in a row went unanswered
 * (tcpi_probes, tcpi_retransmits; any answer resets them).  A live peer
 * answers each probe within a round trip, so it would need two probes lost
 * in a row and no other answer for the whole timeout.  Probes start after
 * P/3 of idleness and repeat every P/6, so a lost host is declared between
 * 2P/3 and P after it went silent, plus one look (at most 1 s).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/comm.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define LIVE_MAX_TIMEOUT_S 3600
/* Looks at the sockets: P/8 apart, within these bounds. */
#define LIVE_MIN_EVERY_US 100000LL
#define LIVE_MAX_EVERY_US 1000000LL
/* The kernel's own abort after this many unanswered probes (its maximum): never before ours. */
#define LIVE_KEEPCNT 127

struct live_sock {
	int fd;
	int peer;
};

/**
 * struct ccom_live - the sockets watched for one comm (comm->proxy->live).
 * @lock: protects @socks and @n (watch/unwatch on setup, teardown and the
 *	lazy connect; looks from the progress thread and the API thread)
 * @timeout_s: CCOM_PEER_TIMEOUT, 0: off
 * @every_us: the checks' spacing
 * @next_us: the next check (any thread may take it)
 */
struct ccom_live {
	pthread_mutex_t lock;
	int timeout_s;
	int64_t every_us;
	_Atomic int64_t next_us;
	struct live_sock *socks;
	int n, cap;
};

int ccom_live_create(struct ccomComm *comm, struct ccom_live **out)
{
	int64_t p = ccom_param_int("CCOM_PEER_TIMEOUT");
	struct ccom_live *lv;

	*out = NULL;
	if (p < 0 || p > LIVE_MAX_TIMEOUT_S) {
		ccom_set_last_error("rank %d: CCOM_PEER_TIMEOUT=%lld is out of range; use 0 (no host liveness check) or 1 to %d seconds",
				    comm->rank, (long long)p, LIVE_MAX_TIMEOUT_S);
		return -EINVAL;
	}
	lv = calloc(1, sizeof(*lv));
	if (!lv) {
		ccom_set_last_error("rank %d: out of memory for the host liveness registry", comm->rank);
		return -ENOMEM;
	}
	pthread_mutex_init(&lv->lock, NULL);
	lv->timeout_s = (int)p;
	lv->every_us = p * 1000000 / 8;
	if (lv->every_us < LIVE_MIN_EVERY_US)
		lv->every_us = LIVE_MIN_EVERY_US;
	if (lv->every_us > LIVE_MAX_EVERY_US)
		lv->every_us = LIVE_MAX_EVERY_US;
	atomic_init(&lv->next_us, 0);
	*out = lv;
	return 0;
}

void ccom_live_destroy(struct ccom_live *lv)
{
	if (!lv)
		return;
	pthread_mutex_destroy(&lv->lock);
	free(lv->socks);
	free(lv);
}

static struct ccom_live *live_of(const struct ccomComm *comm)
{
	return comm && comm->proxy ? comm->proxy->live : NULL;
}

/* Keepalive spaced for a verdict at @p seconds; false (errno set) if refused. */
static bool arm(int fd, int p)
{
	int on = 1, idle = p / 3 > 0 ? p / 3 : 1, intvl = p / 6 > 0 ? p / 6 : 1;
	int cnt = LIVE_KEEPCNT;

	return !setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) &&
	       !setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) &&
	       !setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) &&
	       !setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

void ccom_live_watch(struct ccomComm *comm, int peer, int fd)
{
	struct ccom_live *lv = live_of(comm);
	struct live_sock *s;

	if (!lv || !lv->timeout_s || fd < 0 || peer < 0 || peer >= comm->nranks)
		return;
	if (!arm(fd, lv->timeout_s)) {
		ccom_info(CCOM_SUBSYS_NET, "rank %d: no keepalive on the connection to rank %d (%s): its host's loss is found only by CCOM_OP_TIMEOUT",
			  comm->rank, peer, strerror(errno));
		return;
	}
	pthread_mutex_lock(&lv->lock);
	if (lv->n == lv->cap) {
		int cap = lv->cap ? lv->cap * 2 : 16;

		s = realloc(lv->socks, (size_t)cap * sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&lv->lock);
			ccom_info(CCOM_SUBSYS_NET, "rank %d: out of memory watching the connection to rank %d: its host's loss is found only by CCOM_OP_TIMEOUT",
				  comm->rank, peer);
			return;
		}
		lv->socks = s;
		lv->cap = cap;
	}
	lv->socks[lv->n++] = (struct live_sock){ .fd = fd, .peer = peer };
	pthread_mutex_unlock(&lv->lock);
}

void ccom_live_unwatch(struct ccomComm *comm, int fd)
{
	struct ccom_live *lv = live_of(comm);
	int i;

	if (!lv || fd < 0)
		return;
	pthread_mutex_lock(&lv->lock);
	for (i = 0; i < lv->n; i++)
		if (lv->socks[i].fd == fd)
			lv->socks[i--] = lv->socks[--lv->n];
	pthread_mutex_unlock(&lv->lock);
}

/*
 * Milliseconds since @fd's peer host last acknowledged anything, when at
 * least @need probes or retransmissions in a row are unanswered now; -1
 * when it answers (or the socket is no established TCP connection: a
 * closed or reset one is the data path's to report).
 */
static int64_t silent_ms(int fd, unsigned int need)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	unsigned int unanswered;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) || ti.tcpi_state != TCP_ESTABLISHED)
		return -1;
	unanswered = ti.tcpi_probes > ti.tcpi_retransmits ? ti.tcpi_probes : ti.tcpi_retransmits;
	return unanswered >= need ? (int64_t)ti.tcpi_last_ack_recv : -1;
}

/* True if a socket to @rank acknowledged something within @ms (the rank's host answers). */
static bool answers(struct ccom_live *lv, int rank, int64_t ms)
{
	struct tcp_info ti;
	socklen_t len;
	bool yes = false;
	int i;

	pthread_mutex_lock(&lv->lock);
	for (i = 0; i < lv->n && !yes; i++) {
		if (lv->socks[i].peer != rank)
			continue;
		len = sizeof(ti);
		memset(&ti, 0, sizeof(ti));
		yes = !getsockopt(lv->socks[i].fd, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
		      ti.tcpi_state == TCP_ESTABLISHED && ti.tcpi_last_ack_recv < ms;
	}
	pthread_mutex_unlock(&lv->lock);
	return yes;
}

/*
 * @peer's host is silent: note it and the other ranks of its host (those
 * with no socket of ours that answered within half the timeout: a host's
 * ranks share its kernel and, almost always, its link) failed, and name
 * them.
 */
static int host_lost(struct ccomComm *comm, struct ccom_live *lv, int peer, int64_t ms,
		     bool quiet)
{
	int node = comm->rank_to_node ? comm->rank_to_node[peer] : -1, r, n = 0;
	char list[192];
	size_t off = 0;

	/* A peer of this host over TCP (CCOM_TRANSPORT=net) shares our kernel: only itself. */
	if (node == comm->node)
		node = -1;
	list[0] = '\0';
	ccom_proxy_note_failed(comm, peer);
	for (r = 0; r < comm->nranks; r++) {
		bool same = r == peer || (node >= 0 && comm->rank_to_node[r] == node);

		if (!same || r == comm->rank ||
		    (r != peer && answers(lv, r, (int64_t)lv->timeout_s * 500)))
			continue;
		ccom_proxy_note_failed(comm, r);
		/* The sentence lists the first ~20 (ccomCommGetFailedRanks has all). */
		if (off < sizeof(list) - 24)
			off += snprintf(list + off, sizeof(list) - off, "%s%d", n ? ", " : "", r);
		else if (off < sizeof(list) - 8 && list[off - 1] != '.')
			off += snprintf(list + off, sizeof(list) - off, ", ...");
		n++;
	}
	if (quiet)
		return -ECONNRESET;
	ccom_set_last_error("rank %d: lost host %.40s (rank%s %s): rank %d's connection acknowledged nothing, not even TCP keepalive probes, for %.1f s (CCOM_PEER_TIMEOUT=%d s), so that host is down or cut off the network; shrink the communicator excluding %s %s (ccomCommShrink) or destroy it",
			    comm->rank, comm->peers ? comm->peers[peer].host : "?", n > 1 ? "s" : "",
			    list, peer, ms / 1000.0, lv->timeout_s, n > 1 ? "ranks" : "rank", list);
	return -ECONNRESET;
}

/* One look at every watched socket: the first silent for @thr_ms with @need unanswered. */
static int sweep(struct ccomComm *comm, struct ccom_live *lv, int64_t thr_ms, unsigned int need,
		 bool quiet)
{
	int i, peer = -1;
	int64_t ms = -1;

	pthread_mutex_lock(&lv->lock);
	for (i = 0; i < lv->n; i++) {
		ms = silent_ms(lv->socks[i].fd, need);
		if (ms >= thr_ms) {
			peer = lv->socks[i].peer;
			break;
		}
	}
	pthread_mutex_unlock(&lv->lock);
	return peer < 0 ? 0 : host_lost(comm, lv, peer, ms, quiet);
}

int ccom_live_check(struct ccomComm *comm)
{
	struct ccom_live *lv = live_of(comm);
	int64_t now, next;

	if (!lv || !lv->timeout_s)
		return 0;
	now = ccom_now_us();
	next = atomic_load(&lv->next_us);
	if (now < next || !atomic_compare_exchange_strong(&lv->next_us, &next, now + lv->every_us))
		return 0;
	return sweep(comm, lv, (int64_t)lv->timeout_s * 1000, 2, false);
}

int ccom_live_confirm(struct ccomComm *comm, bool quiet)
{
	struct ccom_live *lv = live_of(comm);

	if (!lv || !lv->timeout_s)
		return 0;
	return sweep(comm, lv, (int64_t)lv->timeout_s * 500, 2, quiet);
}
