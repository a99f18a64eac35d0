// SPDX-License-Identifier: MIT
/*
 * root.c - the bootstrap root: a detached thread that collects one check-in
 * (struct ccom_bs_hello) per rank, checks that the ranks agree (nranks,
 * distinct ranks, same version/ABI/build), and answers every rank on the
 * connection it checked in with: the address of its ring successor, or the
 * reason the job cannot start.  It is a rendezvous point, not a data plane:
 * it exits once every rank has its answer.
 *
 * This file owns the poll loop, the connections that have not checked in
 * yet, their authentication and the flat check-in.  The loop is
 * poll()-driven so that a foreign connection (wrong magic, garbage, a
 * half-sent hello, a failed proof of the id's secret) is dropped and logged
 * without delaying the ranks.  Every connection first authenticates
 * (auth.h): only a peer that holds the unique id's secret can check in, so
 * only it can fail the job (skew, duplicate rank).  A check-in of bootstrap
 * wire version 1 (an older libccom) cannot prove anything: it is told why
 * it is refused, and the job goes on without it (its absence is named, with
 * the reason, when the root times out).  Its deadline is derived from the
 * ranks' own remaining time (minus a margin), so that a missing rank is
 * reported by the root, naming the ranks that never checked in, before the
 * present ranks time out alone.
 *
 * Several roots (the combine step) are in root_multi.c, host leaders (the
 * hierarchical bootstrap) in root_hier.c; root_private.h is what the three
 * share.  Of the folder it uses id.c (the identity it checks the ranks'
 * against) and auth.c; bootstrap.c starts it with ccom_bs_root_start().
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/root_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

/* Send a verdict followed by @len bytes of @data (error text or address entries). */
void ccom_bs_root_send_reply_data(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
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

void ccom_bs_root_send_reply(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
			    const char *msg)
{
	size_t len = msg ? strlen(msg) : 0;

	ccom_bs_root_send_reply_data(fd, magic, err, next, msg,
			     len < CCOM_BS_MAX_MSG ? len : CCOM_BS_MAX_MSG);
}

void ccom_bs_root_conn_add(struct root *rt, int r, int fd)
{
	rt->ranks[r].fd = fd;
	rt->open[rt->nopen++] = r;
	rt->ranks[r].open_at = rt->nopen;
}

void ccom_bs_root_conn_close(struct root *rt, int r)
{
	int at = rt->ranks[r].open_at - 1, last;

	if (at < 0)
		return;
	close(rt->ranks[r].fd);
	last = rt->open[--rt->nopen];
	rt->open[at] = last;
	rt->ranks[last].open_at = at + 1;
	rt->ranks[r].open_at = 0;
	rt->ranks[r].fd = -1;
}

/* The job cannot start: tell every rank that checked in, and later ones too. */
void ccom_bs_root_fail(struct root *rt, int err, int64_t linger)
{
	int r;

	rt->failed = err;
	rt->linger = linger;
	ccom_warn("Bootstrap root: %s", rt->msg);
	/* Root 0 first: its own timeout is only half a margin later (a loaded host). */
	if (rt->nids > 1 && rt->idx > 0 && !rt->reported)
		ccom_bs_root_sub_report(rt, err);
	while (rt->nopen > 0) {
		r = rt->open[rt->nopen - 1];
		ccom_bs_root_send_reply(rt->ranks[r].fd, rt->magic, err, NULL, rt->msg);
		ccom_bs_root_conn_close(rt, r);
	}
	if (rt->nids > 1 && rt->idx == 0)
		ccom_bs_root_tell_subs(rt, err);
}

/* One log line per dropped connection, naming the peer. */
static void root_drop_as(struct root *rt, int i, const char *why, const char *hint)
{
	char a[80];

	ccom_warn("Bootstrap root: dropped connection from %s: %s%s",
		  ccom_addr_str(&rt->pend[i].from, a, sizeof(a)), why, hint);
	close(rt->pend[i].fd);
	rt->pend[i] = rt->pend[--rt->npend];
}

static void root_drop(struct root *rt, int i, const char *why)
{
	root_drop_as(rt, i, why,
		     " (not a rank of this job: another job, a stale process or a port scanner?)");
}

static int64_t rank_deadline(const struct ccom_bs_hello *h, int64_t now, int root0_of_many)
{
	int64_t rem = (int64_t)h->remaining_ms * 1000;
	int64_t margin = rem / 10;

	if (margin < 500000)
		margin = 500000;
	if (margin > 2000000)
		margin = 2000000;
	if (margin > rem / 2)
		margin = rem / 2;
	return now + rem - (root0_of_many ? margin / 2 : margin);
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

	if (is_host(rt->mode)) {
		ccom_bs_root_all_in_hier(rt);
		return;
	}
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap root %d/%d: all %d ranks checked in after %.3f ms",
		  rt->idx, rt->nids, rt->nranks, (ccom_now_us() - rt->first_us) / 1e3);
	for (r = rt->lo; r < rt->hi; r++) {
		struct ccom_bs_addr_entry e[CCOM_BS_MAX_MSG / sizeof(struct ccom_bs_addr_entry)];
		int n = rt->nranks, next = (r + 1) % n, k = 0;
		int64_t dist;

		/* The successor, plus the partners of the address all-gather. */
		memset(e, 0, sizeof(e));
		for (dist = 1; dist < n; dist <<= 1, k++) {
			e[k].rank = (int32_t)((r - dist + n) % n);
			e[k].addr = rt->addrs[e[k].rank];
		}
		ccom_bs_root_send_reply_data(root_rank_fd(rt, r), rt->magic, 0, &rt->addrs[next], e,
				     k * sizeof(e[0]));
		ccom_bs_root_conn_close(rt, r);
	}
}

/* The job's shape, from its first check-in (or, at root 0, a root k's report). */
int ccom_bs_root_setup(struct root *rt, int nranks, int nids, int idx)
{
	int r;

	/* Zeroed (untouched) pages until ranks check in: nranks costs no memory by itself. */
	rt->ranks = calloc(nranks, sizeof(*rt->ranks));
	rt->addrs = calloc(nranks, sizeof(*rt->addrs));
	rt->open = calloc(nranks, sizeof(*rt->open));
	if (nids > 1 && idx == 0)
		rt->sub_fd = malloc(nids * sizeof(*rt->sub_fd));
	if (!rt->ranks || !rt->addrs || !rt->open || (nids > 1 && idx == 0 && !rt->sub_fd)) {
		snprintf(rt->msg, sizeof(rt->msg), "out of memory for %d ranks", nranks);
		return -ENOMEM;
	}
	for (r = 0; rt->sub_fd && r < nids; r++)
		rt->sub_fd[r] = -1;
	rt->nranks = nranks;
	rt->nids = nids;
	rt->idx = idx;
	rt->lo = range_lo(idx, nranks, nids);
	rt->hi = range_lo(idx + 1, nranks, nids);
	rt->first_us = ccom_now_us();
	return 0;
}

/* A complete, well-formed hello arrived on pending connection @i. */
static void root_checkin(struct root *rt, int i)
{
	struct root_pending p = rt->pend[i];
	const struct ccom_bs_hello *h = &p.hello;
	int multi = h->type == CCOM_BS_HELLO_MULTI || h->type == CCOM_BS_HELLO_HOST_MULTI;
	int nids = multi ? (int)p.ext.nids : 1, idx = multi ? (int)p.ext.idx : 0;
	int64_t now = ccom_now_us();
	int64_t dl = rank_deadline(h, now, nids > 1 && idx == 0);
	int err = 0;

	rt->pend[i] = rt->pend[--rt->npend];
	if (now + (int64_t)h->remaining_ms * 1000 > rt->latest)
		rt->latest = now + (int64_t)h->remaining_ms * 1000;
	if (rt->failed) {
		/* Later ranks of a failed job get the verdict too. */
		ccom_bs_root_send_reply(p.fd, rt->magic, rt->failed, NULL, rt->msg);
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
	} else if (h->nranks > CCOM_BS_MAX_RANKS) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "rank %d (%s pid %d) checked in with nranks %d, above the bootstrap's limit of %d ranks",
			 h->rank, h->host, h->pid, h->nranks, CCOM_BS_MAX_RANKS);
		err = -EINVAL;
	} else if (nids < 1 || nids > h->nranks || idx < 0 || idx >= nids) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "rank %d of %d (%s pid %d) checked in with ids[%d] of %d; nIds must be 1 to nranks",
			 h->rank, h->nranks, h->host, h->pid, idx, nids);
		err = -EINVAL;
	} else if (rt->nranks < 0) {
		err = ccom_bs_root_setup(rt, h->nranks, nids, idx);
		rt->first_rank = h->rank;
		if (multi) {
			rt->root0 = p.ext.root0;
			rt->root0_magic = p.ext.root0_magic;
			memcpy(rt->sub_key, p.ext.subroot_key, sizeof(rt->sub_key));
			rt->have_sub_key = idx > 0;
		}
	}
	if (!err && rt->nranks != h->nranks) {
		char who[128];

		if (rt->first_rank >= 0)
			snprintf(who, sizeof(who), "rank %d (%s pid %d)", rt->first_rank,
				 rt->ranks[rt->first_rank].hello.host, rt->ranks[rt->first_rank].hello.pid);
		else
			snprintf(who, sizeof(who), "the root of another id");
		snprintf(rt->msg, sizeof(rt->msg),
			 "nranks mismatch: rank %d (%s pid %d) checked in with nranks %d but %s with nranks %d; every rank must pass the same nranks",
			 h->rank, h->host, h->pid, h->nranks, who, rt->nranks);
		err = -EPERM;
	} else if (!err && (err = ccom_bs_root_check_multi(rt, h, nids, idx))) {
		/* rt->msg says which */
	} else if (!err && rt->mode && is_host(rt->mode) != is_host(h->type)) {
		char who[64];

		if (rt->first_rank >= 0)
			snprintf(who, sizeof(who), "rank %d", rt->first_rank);
		else
			snprintf(who, sizeof(who), "the ranks of another root");
		snprintf(rt->msg, sizeof(rt->msg),
			 "bootstrap mode mismatch: rank %d (%s pid %d) checked in %s but %s %s; set the same CCOM_BOOTSTRAP_HIER (and CCOM_BOOTSTRAP_HIER_THRESHOLD) on every rank",
			 h->rank, h->host, h->pid,
			 is_host(h->type) ? "as a host leader (hierarchical bootstrap)" : "flat", who,
			 is_host(rt->mode) ? "as host leaders" : "flat");
		err = -EPERM;
	} else if (!err && rt->ranks[h->rank].in) {
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
		ccom_bs_root_send_reply(p.fd, rt->magic, err, NULL, rt->msg);
		close(p.fd);
		ccom_bs_root_fail(rt, err, dl > rt->deadline ? dl : rt->deadline);
		return;
	}
	ccom_bs_root_conn_add(rt, h->rank, p.fd);
	rt->ranks[h->rank].in = 1;
	rt->ranks[h->rank].leader = is_host(h->type);
	rt->ranks[h->rank].via = h->rank;
	rt->ranks[h->rank].hello = *h;
	rt->addrs[h->rank] = h->listen;
	rt->nleaders += is_host(h->type);
	if (!rt->mode)
		rt->mode = (int)h->type;
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

	int k, missing = 0;

	/* Ranks of other roots count as in, at root 0 those of the roots that reported. */
	for (r = 0; in && r < rt->nranks; r++)
		in[r] = rt->ranks[r].in || r < rt->lo || r >= rt->hi;
	for (k = 1; in && rt->sub_fd && k < rt->nids; k++)
		for (r = range_lo(k, rt->nranks, rt->nids);
		     r < range_lo(k + 1, rt->nranks, rt->nids); r++)
			in[r] = rt->sub_fd[k] >= 0;
	for (r = 0; in && r < rt->nranks; r++)
		missing += !in[r];
	if (in)
		ccom_format_rank_list(in, rt->nranks, 0, list, sizeof(list));
	else
		snprintf(list, sizeof(list), "(unknown)");
	snprintf(rt->msg, sizeof(rt->msg),
		 "timed out after %.1f s waiting for %d of %d ranks; ranks that never checked in%s: %s. Check that they were started, reached ccomCommInitRank with the same unique id, and can reach the root",
		 (ccom_now_us() - rt->first_us) / 1e6, missing, rt->nranks,
		 rt->sub_fd ? " (or whose root never reported to root 0)" : "", list);
	if (rt->refused[0]) {
		size_t len = strlen(rt->msg);

		snprintf(rt->msg + len, sizeof(rt->msg) - len, "; refused meanwhile: %s",
			 rt->refused);
	}
	free(in);
	/* Ranks arriving late get the verdict too, as long as the others wait. */
	ccom_bs_root_fail(rt, -ETIMEDOUT, rt->latest);
}

/* A check-in of bootstrap wire version 1 (no authentication): tell it why, drop it. */
static void root_refuse_v1(struct root *rt, int i)
{
	const struct ccom_bs_hello *h = &rt->pend[i].hello;
	char msg[CCOM_BS_MAX_MSG];

	snprintf(msg, sizeof(msg),
		 "version skew: rank %d (%s pid %d) runs libccom version %u ABI %u build %016llx, whose bootstrap (wire version 1) cannot prove it holds the unique id, but the root runs version %u ABI %u build %016llx (bootstrap wire version %d); use the same libccom build on every rank",
		 h->rank, h->host, h->pid, h->version, h->abi, (unsigned long long)h->build_hash,
		 ccom_version_code(), ccom_abi_id(), (unsigned long long)ccom_build_hash(),
		 CCOM_BS_WIRE_VERSION);
	snprintf(rt->refused, sizeof(rt->refused), "%.390s", msg);
	ccom_bs_root_send_reply(rt->pend[i].fd, rt->magic, -EBADE, NULL, msg);
	root_drop_as(rt, i, msg,
		     " (refused without failing the job: an unauthenticated check-in could come from anyone who saw the magic)");
}

/* The auth hello is in: answer with our challenge (or a refusal); 0, or -1 after a drop. */
static int root_challenge(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	struct ccom_bs_auth_challenge ch;
	uint8_t key[CCOM_BS_KEY_BYTES];
	char why[200];

	if (p->ah.wire != CCOM_BS_WIRE_VERSION) {
		snprintf(why, sizeof(why),
			 "the peer speaks bootstrap wire version %u, this root version %d: use the same libccom build on every rank",
			 p->ah.wire, CCOM_BS_WIRE_VERSION);
		ccom_bs_root_send_reply(p->fd, rt->magic, -EBADE, NULL, why);
		root_drop(rt, i, why);
		return -1;
	}
	if ((p->ah.role != CCOM_BS_HELLO && p->ah.role != CCOM_BS_HELLO_MULTI &&
	     p->ah.role != CCOM_BS_HELLO_HOST && p->ah.role != CCOM_BS_HELLO_HOST_MULTI &&
	     p->ah.role != CCOM_BS_SUBROOT) ||
	    p->ah.who < (p->ah.role == CCOM_BS_SUBROOT ? 1 : 0)) {
		root_drop(rt, i, "malformed authentication hello");
		return -1;
	}
	if (p->ah.role == CCOM_BS_SUBROOT)
		ccom_bs_subroot_key(rt->key, p->ah.who, key);
	else
		memcpy(key, rt->key, sizeof(key));
	if (ccom_bs_auth_challenge_init(&ch, key, &p->ah)) {
		explicit_bzero(key, sizeof(key));
		root_drop_as(rt, i, ccomGetLastError(NULL), " (no nonce for the challenge)");
		return -1;
	}
	explicit_bzero(key, sizeof(key));
	if (send(p->fd, &ch, sizeof(ch), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(ch)) {
		root_drop(rt, i, "could not send the challenge");
		return -1;
	}
	memcpy(p->nonce, ch.nonce, sizeof(p->nonce));
	p->stage = RP_ANSWER;
	p->got = 0;
	/* Each step gets its own window: a genuine rank may wait long for a CPU on a loaded host. */
	p->since = ccom_now_us();
	return 0;
}

/* The answer is in: 1 if it proves the id's secret (the key of its role). */
static int root_answer_ok(struct root *rt, const struct root_pending *p)
{
	uint8_t key[CCOM_BS_KEY_BYTES];
	int ok;

	if (p->ah.role == CCOM_BS_SUBROOT)
		ccom_bs_subroot_key(rt->key, p->ah.who, key);
	else
		memcpy(key, rt->key, sizeof(key));
	ok = ccom_bs_auth_answer_ok(key, &p->ah, p->nonce, &p->ans);
	explicit_bzero(key, sizeof(key));
	return ok;
}

/*
 * Where the next bytes of pending connection @p go (*@cap of them at most)
 * and how many its stage wants in all (*@want).
 */
static char *root_pending_buf(struct root_pending *p, size_t *want, size_t *cap)
{
	char *base;

	switch (p->stage) {
	case RP_HEAD:
		*want = RP_HEAD_BYTES;
		base = (char *)&p->ah;
		break;
	case RP_AUTH:
		*want = sizeof(p->ah);
		base = (char *)&p->ah;
		break;
	case RP_V1:
		*want = sizeof(p->hello);
		base = (char *)&p->hello;
		break;
	case RP_ANSWER:
		*want = sizeof(p->ans);
		base = (char *)&p->ans;
		break;
	default:
		/* The hello's head first (checked before the rest is read), the hello, then the ext. */
		if (p->got >= sizeof(p->hello)) {
			*want = sizeof(p->hello) + sizeof(p->ext);
			*cap = *want - p->got;
			return (char *)&p->ext + (p->got - sizeof(p->hello));
		}
		*want = p->got < RP_HEAD_BYTES + 2 * sizeof(uint32_t) ?
				RP_HEAD_BYTES + 2 * sizeof(uint32_t) : sizeof(p->hello);
		base = (char *)&p->hello;
		break;
	}
	*cap = *want - p->got;
	return base + p->got;
}

/* The first bytes of a connection are in: an auth hello, an old check-in, or garbage. */
static int root_head_in(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	char why[64];

	if (p->ah.magic != rt->magic) {
		snprintf(why, sizeof(why), "wrong magic %016llx", (unsigned long long)p->ah.magic);
		root_drop(rt, i, why);
		return 1;
	}
	if (p->ah.type == CCOM_BS_AUTH) {
		p->stage = RP_AUTH;
		return 0;
	}
	if (p->ah.type == CCOM_BS_HELLO || p->ah.type == CCOM_BS_HELLO_MULTI) {
		memcpy(&p->hello, &p->ah, RP_HEAD_BYTES);
		p->stage = RP_V1;
		return 0;
	}
	root_drop(rt, i, p->ah.type == CCOM_BS_SUBROOT ?
			 "a report of another root without authentication (bootstrap wire version 1)" :
			 "malformed check-in message");
	return 1;
}

/* The check-in after the proof: its head must match the authenticated role. */
static int root_checkin_in(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	int multi = p->ah.role == CCOM_BS_HELLO_MULTI || p->ah.role == CCOM_BS_HELLO_HOST_MULTI;

	if (p->got < RP_HEAD_BYTES + 2 * sizeof(uint32_t))
		return 0;
	if (p->hello.magic != rt->magic || p->hello.type != p->ah.role ||
	    (p->hello.abi == ccom_abi_id() && p->hello.size != sizeof(p->hello)) ||
	    (p->got >= sizeof(p->hello) && p->hello.rank != p->ah.who)) {
		root_drop(rt, i, "malformed check-in message");
		return 1;
	}
	if (p->got < sizeof(p->hello) + (multi ? sizeof(p->ext) : 0))
		return 0;
	p->hello.host[sizeof(p->hello.host) - 1] = '\0';
	if (multi)
		ccom_bs_key_wrap(rt->key, &p->ah, p->nonce, p->ext.subroot_key,
				 p->ext.subroot_key);
	root_checkin(rt, i);
	return 1;
}

/* Read what is available on pending connection @i; 1 if it was consumed. */
/*
 * Named if the job times out: a rank with another key (another job's id,
 * or another CCOM_COMM_SECRET) fails the handshake like this.
 */
static void root_note_auth_failure(struct root *rt, const struct root_pending *p, const char *what)
{
	char a[80];

	if (p->ah.role == CCOM_BS_SUBROOT)
		return;
	snprintf(rt->refused, sizeof(rt->refused),
		 "a check-in as rank %d from %s %s (a rank with another unique id, or another CCOM_COMM_SECRET?)",
		 p->ah.who, ccom_addr_str(&p->from, a, sizeof(a)), what);
}

static int root_read_pending(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	size_t want, cap;
	char *buf = root_pending_buf(p, &want, &cap);
	ssize_t n = recv(p->fd, buf, cap, 0);

	if (n == 0) {
		if (p->stage == RP_ANSWER)
			root_note_auth_failure(rt, p, "hung up on the root's proof");
		root_drop(rt, i, p->stage == RP_ANSWER ? "closed before its answer to the challenge" :
							 "closed before a complete check-in");
		return 1;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		root_drop(rt, i, strerror(errno));
		return 1;
	}
	p->got += n;
	if (p->stage == RP_CHECKIN)
		return root_checkin_in(rt, i);
	if (p->got < want)
		return 0;
	switch (p->stage) {
	case RP_HEAD:
		return root_head_in(rt, i);
	case RP_AUTH:
		return root_challenge(rt, i) ? 1 : 0;
	case RP_V1:
		if (p->hello.abi == ccom_abi_id() && p->hello.size != sizeof(p->hello)) {
			root_drop(rt, i, "malformed check-in message");
			return 1;
		}
		p->hello.host[sizeof(p->hello.host) - 1] = '\0';
		root_refuse_v1(rt, i);
		return 1;
	default:
		if (!root_answer_ok(rt, p)) {
			root_note_auth_failure(rt, p, "failed authentication");
			root_drop_as(rt, i, CCOM_BS_AUTH_FAILED, "");
			return 1;
		}
		if (p->ah.role == CCOM_BS_SUBROOT) {
			ccom_bs_root_subroot_in(rt, i);
			return 1;
		}
		p->stage = RP_CHECKIN;
		p->got = 0;
		p->since = ccom_now_us();
		return 0;
	}
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
void ccom_bs_root_hangup(struct root *rt, int r)
{
	const struct ccom_bs_hello *h = &rt->ranks[r].hello;

	ccom_bs_root_conn_close(rt, r);
	rt->count--;
	snprintf(rt->msg, sizeof(rt->msg),
		 "rank %d (%s pid %d)%s disconnected after checking in (it died or was aborted) while %d of %d ranks were still missing",
		 h->rank, h->host, h->pid, rt->ranks[r].leader ? ", a host leader," : "",
		 rt->nranks - rt->count, rt->nranks);
	ccom_bs_root_fail(rt, -ECONNRESET, rt->deadline);
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

	if (root_pfd_reserve(rt, 1 + n + rt->nopen))
		return 1;
	pfd = rt->pfd;
	/* [0] listen, [1, n] pending connections, then the ranks that checked in. */
	pfd[0] = (struct pollfd){ .fd = rt->lfd, .events = POLLIN };
	for (i = 0; i < n; i++)
		pfd[i + 1] = (struct pollfd){ .fd = rt->pend[i].fd, .events = POLLIN };
	for (i = 0; !rt->failed && i < rt->nopen; i++) {
		pfd[1 + n + m] = (struct pollfd){ .fd = rt->ranks[rt->open[i]].fd, .events = POLLIN };
		rt->who[m++] = rt->open[i];
	}
	if (poll(pfd, 1 + n + m, CCOM_SOCK_POLL_MS) < 0 && errno != EINTR)
		return 1;
	for (i = 0; i < m && !rt->failed; i++)
		if (pfd[1 + n + i].revents && rt->ranks[rt->who[i]].leader)
			ccom_bs_root_members_in(rt, rt->who[i]);
		else if (pfd[1 + n + i].revents)
			ccom_bs_root_hangup(rt, rt->who[i]);
	/* Walk backwards: consuming entry i moves the last one into its slot. */
	for (i = n - 1; i >= 0; i--) {
		if (pfd[i + 1].revents)
			root_read_pending(rt, i);
		else if (now - rt->pend[i].since > ROOT_HELLO_GRACE_US)
			root_drop(rt, i, rt->pend[i].stage == RP_ANSWER ?
					 "no answer to the challenge within 10 s of it" :
					 "no complete check-in within 10 s");
	}
	if (pfd[0].revents)
		root_accept(rt);
	if (!rt->failed && rt->nranks > 0 && rt->count == rt->hi - rt->lo &&
	    (rt->nids <= 1 || rt->idx > 0 || rt->subs_in == rt->nids - 1)) {
		if (rt->nids > 1 && rt->idx > 0 && ccom_bs_root_sub_exchange(rt))
			return rt->failed && ccom_now_us() >= rt->linger;
		if (rt->nids > 1 && rt->idx == 0)
			ccom_bs_root_send_tables(rt);
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
	while (rt->nopen > 0)
		ccom_bs_root_conn_close(rt, rt->open[rt->nopen - 1]);
	for (i = 1; rt->sub_fd && i < rt->nids; i++)
		if (rt->sub_fd[i] >= 0)
			close(rt->sub_fd[i]);
	close(rt->lfd);
	explicit_bzero(rt->key, sizeof(rt->key));
	explicit_bzero(rt->sub_key, sizeof(rt->sub_key));
	free(rt->sub_fd);
	free(rt->open);
	free(rt->addrs);
	free(rt->pfd);
	free(rt->who);
	free(rt->pend);
	free(rt->ranks);
	free(rt);
	return NULL;
}

int ccom_bs_root_start(int listen_fd, uint64_t magic, const uint8_t secret[CCOM_BS_KEY_BYTES])
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
	memcpy(rt->key, secret, sizeof(rt->key));
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
