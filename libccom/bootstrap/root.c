// SPDX-License-Identifier: MIT
/*
 * root.c - the bootstrap root: a detached thread that collects one check-in
 * (struct ccom_bs_hello) per rank, checks that the ranks agree (nranks,
 * distinct ranks, same version/ABI/build), and answers every rank on the
 * connection it checked in with: the address of its ring successor, or the
 * reason the job cannot start.  It is a rendezvous point, not a data plane:
 * it exits once every rank has its answer.
 *
 * The loop is poll()-driven so that a foreign connection (wrong magic,
 * garbage, a half-sent hello) is dropped and logged without delaying the
 * ranks.  Its deadline is derived from the ranks' own remaining time (minus
 * a margin), so that a missing rank is reported by the root, naming the
 * ranks that never checked in, before the present ranks time out alone.
 * Of the folder it uses only id.c (the identity it checks the ranks'
 * against); bootstrap.c starts it with ccom_bs_root_start().
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define ROOT_HELLO_GRACE_US 10000000	/* a connection must send its hello within 10 s */
#define ROOT_MAX_PENDING 4096

struct root_pending {
	int fd;
	int64_t since;
	size_t got;
	union ccom_sockaddr from;
	struct ccom_bs_hello hello;
};

struct root_rank {
	int fd;			/* -1 until checked in, and after answered */
	struct ccom_bs_hello hello;
};

struct root {
	int lfd;
	uint64_t magic;
	int nranks;		/* fixed by the first check-in, -1 before */
	int first_rank;
	int count;
	struct root_rank *ranks;
	int64_t first_us;
	int64_t deadline;	/* report a timeout at this time (0: no rank yet) */
	int64_t linger;		/* after a failure, keep answering until then */
	int64_t latest;		/* when the last checked-in rank gives up by itself */
	int failed;		/* -errno once the job cannot start */
	char msg[CCOM_BS_MAX_MSG];
	struct root_pending *pend;	/* connections that have not checked in yet */
	int npend;
	int cap;
	struct pollfd *pfd;		/* poll set of one round */
	int *who;			/* rank of each polled checked-in connection */
	int pfd_cap;
};

/* Send a verdict followed by @len bytes of @data (error text or address entries). */
static void root_send_reply_data(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
				 const void *msg, size_t len)
{
	struct ccom_bs_reply r;
	char buf[sizeof(r) + CCOM_BS_MAX_MSG];

	memset(&r, 0, sizeof(r));
	r.magic = magic;
	r.type = CCOM_BS_REPLY;
	r.err = err;
	r.msg_len = len;
	if (next)
		r.next = *next;
	memcpy(buf, &r, sizeof(r));
	if (len)
		memcpy(buf + sizeof(r), msg, len);
	/* A rank that vanished meanwhile only costs this one send. */
	ccom_sock_send_all(fd, buf, sizeof(r) + len, ccom_now_us() + 1000000, NULL);
}

static void root_send_reply(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
			    const char *msg)
{
	size_t len = msg ? strlen(msg) : 0;

	root_send_reply_data(fd, magic, err, next, msg,
			     len < CCOM_BS_MAX_MSG ? len : CCOM_BS_MAX_MSG);
}

/* The job cannot start: tell every rank that checked in, and later ones too. */
static void root_fail(struct root *rt, int err, int64_t linger)
{
	int r;

	rt->failed = err;
	rt->linger = linger;
	ccom_warn("Bootstrap root: %s", rt->msg);
	for (r = 0; rt->ranks && r < rt->nranks; r++) {
		if (rt->ranks[r].fd < 0)
			continue;
		root_send_reply(rt->ranks[r].fd, rt->magic, err, NULL, rt->msg);
		close(rt->ranks[r].fd);
		rt->ranks[r].fd = -1;
	}
}

static void root_drop(struct root *rt, int i, const char *why)
{
	char a[80];

	ccom_warn("Bootstrap root: dropped connection from %s: %s (not a rank of this job: another job, a stale process or a port scanner?)",
		  ccom_addr_str(&rt->pend[i].from, a, sizeof(a)), why);
	close(rt->pend[i].fd);
	rt->pend[i] = rt->pend[--rt->npend];
}

static int64_t rank_deadline(const struct ccom_bs_hello *h, int64_t now)
{
	int64_t rem = (int64_t)h->remaining_ms * 1000;
	int64_t margin = rem / 10;

	if (margin < 500000)
		margin = 500000;
	if (margin > 2000000)
		margin = 2000000;
	if (margin > rem / 2)
		margin = rem / 2;
	return now + rem - margin;
}

/* Check a skew of version, ABI or build against the root's own library. */
static int root_check_skew(struct root *rt, const struct ccom_bs_hello *h)
{
	if (h->abi == ccom_abi_id() && h->version == ccom_version_code() &&
	    h->build_hash == ccom_build_hash())
		return 0;
	snprintf(rt->msg, sizeof(rt->msg),
		 "version skew: rank %d (%s pid %d) runs libccom version %u ABI %u build %016llx but the root runs version %u ABI %u build %016llx; use the same libccom build on every rank",
		 h->rank, h->host, h->pid, h->version, h->abi, (unsigned long long)h->build_hash,
		 ccom_version_code(), ccom_abi_id(), (unsigned long long)ccom_build_hash());
	return -EBADE;
}

static void root_all_in(struct root *rt)
{
	int r;

	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap root: all %d ranks checked in after %.3f ms",
		  rt->nranks, (ccom_now_us() - rt->first_us) / 1e3);
	for (r = 0; r < rt->nranks; r++) {
		struct ccom_bs_addr_entry e[CCOM_BS_MAX_MSG / sizeof(struct ccom_bs_addr_entry)];
		int n = rt->nranks, next = (r + 1) % n, k = 0;
		int64_t dist;

		/* The successor, plus the partners of the address all-gather. */
		memset(e, 0, sizeof(e));
		for (dist = 1; dist < n; dist <<= 1, k++) {
			e[k].rank = (int32_t)((r - dist + n) % n);
			e[k].addr = rt->ranks[e[k].rank].hello.listen;
		}
		root_send_reply_data(rt->ranks[r].fd, rt->magic, 0, &rt->ranks[next].hello.listen, e,
				     k * sizeof(e[0]));
		close(rt->ranks[r].fd);
		rt->ranks[r].fd = -1;
	}
}

/* A complete, well-formed hello arrived on pending connection @i. */
static void root_checkin(struct root *rt, int i)
{
	struct root_pending p = rt->pend[i];
	const struct ccom_bs_hello *h = &p.hello;
	int64_t now = ccom_now_us();
	int64_t dl = rank_deadline(h, now);
	int err = 0;

	rt->pend[i] = rt->pend[--rt->npend];
	if (now + (int64_t)h->remaining_ms * 1000 > rt->latest)
		rt->latest = now + (int64_t)h->remaining_ms * 1000;
	if (rt->failed) {
		/* Later ranks of a failed job get the verdict too. */
		root_send_reply(p.fd, rt->magic, rt->failed, NULL, rt->msg);
		close(p.fd);
		if (dl > rt->linger)
			rt->linger = dl;
		return;
	}
	if (h->abi != ccom_abi_id()) {
		err = root_check_skew(rt, h);
	} else if (h->nranks < 1 || h->rank < 0 || h->rank >= h->nranks) {
		snprintf(rt->msg, sizeof(rt->msg), "rank %d of %d (%s pid %d) is out of range",
			 h->rank, h->nranks, h->host, h->pid);
		err = -EINVAL;
	} else if (rt->nranks < 0) {
		rt->ranks = calloc(h->nranks, sizeof(*rt->ranks));
		if (!rt->ranks) {
			snprintf(rt->msg, sizeof(rt->msg), "out of memory for %d ranks", h->nranks);
			err = -ENOMEM;
		} else {
			int r;

			for (r = 0; r < h->nranks; r++)
				rt->ranks[r].fd = -1;
			rt->nranks = h->nranks;
			rt->first_rank = h->rank;
			rt->first_us = now;
		}
	}
	if (!err && rt->nranks != h->nranks) {
		const struct ccom_bs_hello *f = &rt->ranks[rt->first_rank].hello;

		snprintf(rt->msg, sizeof(rt->msg),
			 "nranks mismatch: rank %d (%s pid %d) checked in with nranks %d but rank %d (%s pid %d) with nranks %d; every rank must pass the same nranks",
			 h->rank, h->host, h->pid, h->nranks, rt->first_rank, f->host, f->pid,
			 rt->nranks);
		err = -EPERM;
	} else if (!err && rt->ranks[h->rank].fd >= 0) {
		const struct ccom_bs_hello *o = &rt->ranks[h->rank].hello;

		snprintf(rt->msg, sizeof(rt->msg),
			 "duplicate rank: rank %d checked in twice (%s pid %d and %s pid %d); every process must pass a distinct rank",
			 h->rank, o->host, o->pid, h->host, h->pid);
		err = -EPERM;
	} else if (!err) {
		err = root_check_skew(rt, h);
	}
	if (err) {
		/* The refused connection gets the verdict as well. */
		root_send_reply(p.fd, rt->magic, err, NULL, rt->msg);
		close(p.fd);
		root_fail(rt, err, dl > rt->deadline ? dl : rt->deadline);
		return;
	}
	rt->ranks[h->rank].fd = p.fd;
	rt->ranks[h->rank].hello = *h;
	rt->count++;
	if (!rt->deadline || dl < rt->deadline)
		rt->deadline = dl;
	ccom_trace(CCOM_SUBSYS_BOOT, "Bootstrap root: rank %d/%d checked in (%d so far)", h->rank,
		   h->nranks, rt->count);
}

static void root_timeout(struct root *rt)
{
	unsigned char *in = calloc(rt->nranks, 1);
	char list[600];
	int r;

	for (r = 0; in && r < rt->nranks; r++)
		in[r] = rt->ranks[r].fd >= 0;
	if (in)
		ccom_format_rank_list(in, rt->nranks, 0, list, sizeof(list));
	else
		snprintf(list, sizeof(list), "(unknown)");
	snprintf(rt->msg, sizeof(rt->msg),
		 "timed out after %.1f s waiting for %d of %d ranks; ranks that never checked in: %s. Check that they were started, reached ccomCommInitRank with the same unique id, and can reach the root",
		 (ccom_now_us() - rt->first_us) / 1e6, rt->nranks - rt->count, rt->nranks, list);
	free(in);
	/* Ranks arriving late get the verdict too, as long as the others wait. */
	root_fail(rt, -ETIMEDOUT, rt->latest);
}

/* Read what is available on pending connection @i; 1 if it was consumed. */
static int root_read_pending(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	ssize_t n = recv(p->fd, (char *)&p->hello + p->got, sizeof(p->hello) - p->got, 0);

	if (n == 0) {
		root_drop(rt, i, "closed before a complete check-in");
		return 1;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		root_drop(rt, i, strerror(errno));
		return 1;
	}
	p->got += n;
	if (p->got >= sizeof(uint64_t) && p->hello.magic != rt->magic) {
		char why[64];

		snprintf(why, sizeof(why), "wrong magic %016llx",
			 (unsigned long long)p->hello.magic);
		root_drop(rt, i, why);
		return 1;
	}
	if (p->got >= 3 * sizeof(uint32_t) + sizeof(uint64_t) &&
	    (p->hello.type != CCOM_BS_HELLO ||
	     (p->hello.abi == ccom_abi_id() && p->hello.size != sizeof(p->hello)))) {
		root_drop(rt, i, "malformed check-in message");
		return 1;
	}
	if (p->got < sizeof(p->hello))
		return 0;
	p->hello.host[sizeof(p->hello.host) - 1] = '\0';
	root_checkin(rt, i);
	return 1;
}

static int root_grow(struct root *rt)
{
	int cap = rt->cap ? rt->cap * 2 : 16;
	struct root_pending *pend;

	if (cap > ROOT_MAX_PENDING)
		return -ENOSPC;
	pend = realloc(rt->pend, cap * sizeof(*pend));
	if (!pend)
		return -ENOMEM;
	rt->pend = pend;
	rt->cap = cap;
	return 0;
}

static void root_accept(struct root *rt)
{
	for (;;) {
		struct root_pending p;
		socklen_t len = sizeof(p.from);

		memset(&p, 0, sizeof(p));
		p.fd = accept4(rt->lfd, &p.from.sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (p.fd < 0)
			return;
		if (rt->npend >= rt->cap && root_grow(rt)) {
			ccom_warn("Bootstrap root: more than %d connections without check-in; dropping one",
				  rt->npend);
			close(p.fd);
			continue;
		}
		p.since = ccom_now_us();
		rt->pend[rt->npend++] = p;
	}
}

/*
 * A rank that checked in sends nothing more until the answer: readability
 * of its connection means it closed it (died or was aborted), and the job
 * can no longer start.
 */
static void root_hangup(struct root *rt, int r)
{
	const struct ccom_bs_hello *h = &rt->ranks[r].hello;

	close(rt->ranks[r].fd);
	rt->ranks[r].fd = -1;
	rt->count--;
	snprintf(rt->msg, sizeof(rt->msg),
		 "rank %d (%s pid %d) disconnected after checking in (it died or was aborted) while %d of %d ranks were still missing",
		 h->rank, h->host, h->pid, rt->nranks - rt->count - 1, rt->nranks);
	root_fail(rt, -ECONNRESET, rt->deadline);
}

static int root_pfd_reserve(struct root *rt, int need)
{
	struct pollfd *pfd;
	int *who;

	if (need <= rt->pfd_cap)
		return 0;
	pfd = realloc(rt->pfd, need * sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	rt->pfd = pfd;
	who = realloc(rt->who, need * sizeof(*who));
	if (!who)
		return -ENOMEM;
	rt->who = who;
	rt->pfd_cap = need;
	return 0;
}

/* One poll round.  Returns 1 when the root is done. */
static int root_step(struct root *rt)
{
	int64_t now = ccom_now_us();
	struct pollfd *pfd;
	int i, n = rt->npend, m = 0;

	if (root_pfd_reserve(rt, 1 + n + (rt->nranks > 0 ? rt->nranks : 0)))
		return 1;
	pfd = rt->pfd;
	/* [0] listen, [1, n] pending connections, then the ranks that checked in. */
	pfd[0] = (struct pollfd){ .fd = rt->lfd, .events = POLLIN };
	for (i = 0; i < n; i++)
		pfd[i + 1] = (struct pollfd){ .fd = rt->pend[i].fd, .events = POLLIN };
	for (i = 0; !rt->failed && i < rt->nranks; i++) {
		if (rt->ranks[i].fd < 0)
			continue;
		pfd[1 + n + m] = (struct pollfd){ .fd = rt->ranks[i].fd, .events = POLLIN };
		rt->who[m++] = i;
	}
	if (poll(pfd, 1 + n + m, CCOM_SOCK_POLL_MS) < 0 && errno != EINTR)
		return 1;
	for (i = 0; i < m && !rt->failed; i++)
		if (pfd[1 + n + i].revents)
			root_hangup(rt, rt->who[i]);
	/* Walk backwards: consuming entry i moves the last one into its slot. */
	for (i = n - 1; i >= 0; i--) {
		if (pfd[i + 1].revents)
			root_read_pending(rt, i);
		else if (now - rt->pend[i].since > ROOT_HELLO_GRACE_US)
			root_drop(rt, i, "no complete check-in within 10 s");
	}
	if (pfd[0].revents)
		root_accept(rt);
	if (!rt->failed && rt->nranks > 0 && rt->count == rt->nranks) {
		root_all_in(rt);
		return 1;
	}
	now = ccom_now_us();
	if (!rt->failed && rt->deadline && now >= rt->deadline)
		root_timeout(rt);
	return rt->failed && now >= rt->linger;
}

static void *root_main(void *arg)
{
	struct root *rt = arg;
	int i;

	while (!root_step(rt))
		;
	for (i = 0; i < rt->npend; i++)
		close(rt->pend[i].fd);
	for (i = 0; rt->ranks && i < rt->nranks; i++)
		if (rt->ranks[i].fd >= 0)
			close(rt->ranks[i].fd);
	close(rt->lfd);
	free(rt->pfd);
	free(rt->who);
	free(rt->pend);
	free(rt->ranks);
	free(rt);
	return NULL;
}

int ccom_bs_root_start(int listen_fd, uint64_t magic)
{
	struct root *rt = calloc(1, sizeof(*rt));
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	if (!rt)
		return -ENOMEM;
	if (root_grow(rt)) {
		free(rt->pend);
		free(rt);
		return -ENOMEM;
	}
	rt->lfd = listen_fd;
	rt->magic = magic;
	rt->nranks = -1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = -pthread_create(&th, &attr, root_main, rt);
	pthread_attr_destroy(&attr);
	if (rc) {
		free(rt->pend);
		free(rt);
		return rc;
	}
	pthread_setname_np(th, "ccomBootRoot");
	return 0;
}
