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
 * garbage, a half-sent hello, a failed proof of the id's secret) is
 * dropped and logged without delaying the ranks.  Every connection first
 * authenticates (auth.h): only a peer that holds the unique id's secret
 * can check in, so only it can fail the job (skew, duplicate rank).  A
 * check-in of bootstrap wire version 1 (an older libccom) cannot prove
 * anything: it is told why it is refused, and the job goes on without it
 * (its absence is named, with the reason, when the root times out).  Its deadline is derived from the ranks' own remaining time (minus
 * a margin), so that a missing rank is reported by the root, naming the
 * ranks that never checked in, before the present ranks time out alone.
 * Of the folder it uses id.c (the identity it checks the ranks' against)
 * and auth.c; bootstrap.c starts it with ccom_bs_root_start().
 *
 * Several roots (ccomCommInitRankScalable, nIds > 1, wire.h): each root
 * serves the ranks r with r * nids / nranks == its index; a root k > 0
 * whose ranks are in sends their addresses to root 0 and gets everyone's
 * back (a blocking exchange), root 0 waits for its own ranks and every
 * other root, then each answers its own ranks.  A failure anywhere (a
 * missing rank, a mismatch, a hang-up) is reported to root 0, which tells
 * every root, so every present rank gets the same sentence.  Root 0 waits
 * half a margin longer than the others, so that a root k's report of a
 * missing rank arrives before root 0 would time out on its own.
 * Hierarchical with several roots, each root runs the hierarchical
 * protocol for its own range (its host leaders forward runs of that
 * range); in the combine step a root k > 0 reports only its leaders and
 * root 0 sends every root the table of all leaders, from which each root
 * tells its leaders their neighbours in the ring of all leaders.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define ROOT_HELLO_GRACE_US 10000000	/* per step: hello, answer to the challenge, check-in */
#define ROOT_MAX_PENDING 4096

/* What a connection that has not checked in yet reads next. */
enum root_stage {
	RP_HEAD,	/* magic and type: of an auth hello, or of a wire version 1 check-in */
	RP_AUTH,	/* the rest of struct ccom_bs_auth_hello */
	RP_V1,		/* the rest of a wire version 1 check-in (to be refused) */
	RP_ANSWER,	/* struct ccom_bs_auth_answer, after our challenge */
	RP_CHECKIN,	/* struct ccom_bs_hello (and ext), after the proof */
};

#define RP_HEAD_BYTES (sizeof(uint64_t) + sizeof(uint32_t))

struct root_pending {
	int fd;
	int64_t since;
	enum root_stage stage;
	size_t got;		/* bytes of the stage's message (hello + ext in RP_CHECKIN) */
	union ccom_sockaddr from;
	struct ccom_bs_auth_hello ah;
	uint8_t nonce[CCOM_BS_NONCE_BYTES];	/* our challenge's */
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_hello hello;
	struct ccom_bs_hello_ext ext;
};

struct root_rank {
	int fd;			/* -1 until checked in, and after answered (members: always) */
	int in;			/* checked in, itself or through its host leader */
	int leader;		/* checked in as a host leader (hierarchical): @fd carries members */
	int via;		/* members: the rank of their host leader */
	struct ccom_bs_hello hello;
};

struct root {
	int lfd;
	uint64_t magic;
	uint8_t key[CCOM_BS_KEY_BYTES];		/* the id's secret */
	uint8_t sub_key[CCOM_BS_KEY_BYTES];	/* root k > 0: its key towards root 0 */
	int have_sub_key;
	char refused[400];	/* the last check-in refused unauthenticated, for the timeout */
	int nranks;		/* fixed by the first check-in, -1 before */
	int first_rank;
	int count;
	struct root_rank *ranks;
	int64_t first_us;
	int64_t deadline;	/* report a timeout at this time (0: no rank yet) */
	int64_t linger;		/* after a failure, keep answering until then */
	int64_t latest;		/* when the last checked-in rank gives up by itself */
	int failed;		/* -errno once the job cannot start */
	int mode;		/* of the first check-in: 0 none yet, CCOM_BS_HELLO(_MULTI) or _HELLO_HOST */
	int nleaders;
	char msg[CCOM_BS_MAX_MSG];
	/* Several roots (nids > 1); nids 1: one root, lo 0, hi nranks. */
	int nids, idx, lo, hi;
	uint64_t root0_magic;
	union ccom_sockaddr root0;
	union ccom_sockaddr *addrs;	/* every rank's listen address as known here */
	int *sub_fd;			/* root 0: connection of each root k > 0, or -1 */
	int subs_in;
	int reported;			/* root k > 0: root 0 was told (table or failure) */
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

/* A host leader's check-in (hierarchical bootstrap), with one root or several. */
static int is_host(uint32_t type)
{
	return type == CCOM_BS_HELLO_HOST || type == CCOM_BS_HELLO_HOST_MULTI;
}

/* First rank of root @idx's range: ceil(idx * nranks / nids). */
static int range_lo(int idx, int nranks, int nids)
{
	return (int)(((int64_t)idx * nranks + nids - 1) / nids);
}

/* Root 0: pass a failure on to every root k > 0 that is waiting for the table. */
static void root_tell_subs(struct root *rt, int err)
{
	int k;

	for (k = 1; rt->sub_fd && k < rt->nids; k++) {
		if (rt->sub_fd[k] < 0)
			continue;
		root_send_reply(rt->sub_fd[k], rt->magic, err, NULL, rt->msg);
		close(rt->sub_fd[k]);
		rt->sub_fd[k] = -1;
	}
}

/* Send root 0 a struct ccom_bs_subroot and @len bytes of @data; 0 or -errno. */
static int root_sub_send(struct root *rt, int fd, int err, uint32_t count, const void *data,
			 size_t len, int64_t deadline)
{
	struct ccom_bs_subroot m;
	int64_t now = ccom_now_us();
	int rc;

	memset(&m, 0, sizeof(m));
	m.magic = rt->root0_magic;
	m.type = CCOM_BS_SUBROOT;
	m.abi = ccom_abi_id();
	m.idx = rt->idx;
	m.nids = rt->nids;
	m.nranks = rt->nranks;
	m.err = err;
	m.count = count;
	m.msg_len = err ? (uint32_t)len : 0;
	m.remaining_ms = rt->latest > now ? (uint32_t)((rt->latest - now) / 1000) : 0;
	m.hier = (uint32_t)is_host(rt->mode);
	rc = ccom_sock_send_all(fd, &m, sizeof(m), deadline, NULL);
	if (!rc && len)
		rc = ccom_sock_send_all(fd, data, len, deadline, NULL);
	return rc;
}

/* Root k > 0 towards root 0: prove the key derived from ids[0]'s secret; 0, 1 refused, or -errno. */
static int root_sub_auth(struct root *rt, int fd, int64_t deadline)
{
	struct ccom_bs_reply head;

	return ccom_bs_auth_connect(fd, rt->sub_key, rt->root0_magic, CCOM_BS_SUBROOT, rt->idx,
				    deadline, NULL, NULL, NULL, &head);
}

/* Root k > 0 failed: tell root 0 (best effort, 1 s), which tells everyone. */
static void root_sub_report(struct root *rt, int err)
{
	int64_t deadline = ccom_now_us() + 1000000;
	int fd;

	rt->reported = 1;
	if (!rt->have_sub_key || ccom_sock_connect(&rt->root0, deadline, NULL, &fd))
		return;
	if (!root_sub_auth(rt, fd, deadline))
		root_sub_send(rt, fd, err, 0, rt->msg, strlen(rt->msg), deadline);
	close(fd);
}

/* The job cannot start: tell every rank that checked in, and later ones too. */
static void root_fail(struct root *rt, int err, int64_t linger)
{
	int r;

	rt->failed = err;
	rt->linger = linger;
	ccom_warn("Bootstrap root: %s", rt->msg);
	/* Root 0 first: its own timeout is only half a margin later (a loaded host). */
	if (rt->nids > 1 && rt->idx > 0 && !rt->reported)
		root_sub_report(rt, err);
	for (r = 0; rt->ranks && r < rt->nranks; r++) {
		if (rt->ranks[r].fd < 0)
			continue;
		root_send_reply(rt->ranks[r].fd, rt->magic, err, NULL, rt->msg);
		close(rt->ranks[r].fd);
		rt->ranks[r].fd = -1;
	}
	if (rt->nids > 1 && rt->idx == 0)
		root_tell_subs(rt, err);
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

/* Hierarchical: every rank is in; tell each host leader its place in the leaders' ring. */
static void root_all_in_hier(struct root *rt)
{
	int *lead, h = 0, r, mine = rt->nleaders;

	/* With several roots the leaders of the other roots are marked too (root 0's table). */
	for (rt->nleaders = 0, r = 0; r < rt->nranks; r++)
		rt->nleaders += rt->ranks[r].leader;
	lead = malloc(rt->nleaders * sizeof(*lead));
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap root %d/%d: all %d ranks of its range checked in through %d host leaders (%d in the job) after %.3f ms",
		  rt->idx, rt->nids, rt->hi - rt->lo, mine, rt->nleaders,
		  (ccom_now_us() - rt->first_us) / 1e3);
	for (r = 0; lead && r < rt->nranks; r++)
		if (rt->ranks[r].leader)
			lead[h++] = r;
	for (h = 0; lead && h < rt->nleaders; h++) {
		struct ccom_bs_host_info hi = {
			.nhosts = rt->nleaders,
			.index = h,
			.prev_leader = lead[(h - 1 + rt->nleaders) % rt->nleaders],
			.next_leader = lead[(h + 1) % rt->nleaders],
		};
		int fd = rt->ranks[lead[h]].fd;

		if (fd < 0)
			continue;	/* a leader of another root */
		root_send_reply_data(fd, rt->magic, 0, &rt->addrs[hi.next_leader], &hi, sizeof(hi));
		close(fd);
		rt->ranks[lead[h]].fd = -1;
	}
	free(lead);
}

static void root_all_in(struct root *rt)
{
	int r;

	if (is_host(rt->mode)) {
		root_all_in_hier(rt);
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
		root_send_reply_data(rt->ranks[r].fd, rt->magic, 0, &rt->addrs[next], e,
				     k * sizeof(e[0]));
		close(rt->ranks[r].fd);
		rt->ranks[r].fd = -1;
	}
}

/* The job's shape, from its first check-in (or, at root 0, a root k's report). */
static int root_setup(struct root *rt, int nranks, int nids, int idx)
{
	int r;

	rt->ranks = calloc(nranks, sizeof(*rt->ranks));
	rt->addrs = calloc(nranks, sizeof(*rt->addrs));
	if (nids > 1 && idx == 0)
		rt->sub_fd = malloc(nids * sizeof(*rt->sub_fd));
	if (!rt->ranks || !rt->addrs || (nids > 1 && idx == 0 && !rt->sub_fd)) {
		snprintf(rt->msg, sizeof(rt->msg), "out of memory for %d ranks", nranks);
		return -ENOMEM;
	}
	for (r = 0; r < nranks; r++)
		rt->ranks[r].fd = -1;
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

/* Several roots: the rank's ids must match this root's and it must be one of its ranks. */
static int root_check_multi(struct root *rt, const struct ccom_bs_hello *h, int nids, int idx)
{
	if (nids != rt->nids) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "nIds mismatch: rank %d (%s pid %d) passed %d unique id(s) but this root (ids[%d]) serves a job of %d; every rank must pass the same nIds and ids",
			 h->rank, h->host, h->pid, nids, rt->idx, rt->nids);
		return -EPERM;
	}
	if (idx != rt->idx || h->rank < rt->lo || h->rank >= rt->hi) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "rank %d (%s pid %d) checked in with ids[%d], whose root serves ranks %d-%d of %d (rank r uses ids[r * nIds / nranks]); pass the ids in the same order on every rank",
			 h->rank, h->host, h->pid, idx, rt->lo, rt->hi - 1, rt->nranks);
		return -EPERM;
	}
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
	} else if (nids < 1 || nids > h->nranks || idx < 0 || idx >= nids) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "rank %d of %d (%s pid %d) checked in with ids[%d] of %d; nIds must be 1 to nranks",
			 h->rank, h->nranks, h->host, h->pid, idx, nids);
		err = -EINVAL;
	} else if (rt->nranks < 0) {
		err = root_setup(rt, h->nranks, nids, idx);
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
	} else if (!err && (err = root_check_multi(rt, h, nids, idx))) {
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
		root_send_reply(p.fd, rt->magic, err, NULL, rt->msg);
		close(p.fd);
		root_fail(rt, err, dl > rt->deadline ? dl : rt->deadline);
		return;
	}
	rt->ranks[h->rank].fd = p.fd;
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
	root_fail(rt, -ETIMEDOUT, rt->latest);
}

/* Read what is available on pending connection @i; 1 if it was consumed. */
static void root_subroot_in(struct root *rt, int i);

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
	root_send_reply(rt->pend[i].fd, rt->magic, -EBADE, NULL, msg);
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
		root_send_reply(p->fd, rt->magic, -EBADE, NULL, why);
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
	ccom_bs_auth_challenge_init(&ch, key, &p->ah);
	memset(key, 0, sizeof(key));
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
	memset(key, 0, sizeof(key));
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

static int root_read_pending(struct root *rt, int i)
{
	struct root_pending *p = &rt->pend[i];
	size_t want, cap;
	char *buf = root_pending_buf(p, &want, &cap);
	ssize_t n = recv(p->fd, buf, cap, 0);

	if (n == 0) {
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
			root_drop_as(rt, i, CCOM_BS_AUTH_FAILED, "");
			return 1;
		}
		if (p->ah.role == CCOM_BS_SUBROOT) {
			root_subroot_in(rt, i);
			return 1;
		}
		p->stage = RP_CHECKIN;
		p->got = 0;
		p->since = ccom_now_us();
		return 0;
	}
}

/* Root 0: a root k > 0 reports its ranks' addresses (kept, with its connection) or its failure. */
static void root_subroot_in(struct root *rt, int i)
{
	struct root_pending p = rt->pend[i];
	int64_t now = ccom_now_us(), until = now + 2000000;
	struct ccom_bs_subroot m;
	struct ccom_bs_addr_entry *e = NULL;
	char text[CCOM_BS_MAX_MSG + 1];
	int lo, hi, err = 0;
	uint32_t k;

	rt->pend[i] = rt->pend[--rt->npend];
	if (ccom_sock_recv_all(p.fd, &m, sizeof(m), until, NULL) || m.magic != rt->magic ||
	    m.type != CCOM_BS_SUBROOT || m.idx != p.ah.who ||
	    m.abi != ccom_abi_id() || m.nids < 2 || m.idx < 1 || m.idx >= m.nids ||
	    m.nranks < m.nids || m.msg_len > CCOM_BS_MAX_MSG) {
		ccom_warn("Bootstrap root: dropped a malformed report of another root");
		close(p.fd);
		return;
	}
	if (now + (int64_t)m.remaining_ms * 1000 > rt->latest)
		rt->latest = now + (int64_t)m.remaining_ms * 1000;
	if (rt->failed) {
		root_send_reply(p.fd, rt->magic, rt->failed, NULL, rt->msg);
		close(p.fd);
		return;
	}
	lo = range_lo(m.idx, m.nranks, m.nids);
	hi = range_lo(m.idx + 1, m.nranks, m.nids);
	if (m.err) {
		size_t len = m.msg_len;

		if (ccom_sock_recv_all(p.fd, text, len, until, NULL))
			len = 0;
		text[len] = '\0';
		snprintf(rt->msg, sizeof(rt->msg), "root %d of %d (ranks %d-%d) reports: %.900s", m.idx,
			 m.nids, lo, hi - 1, len ? text : "(no reason given)");
		close(p.fd);
		root_fail(rt, m.err, rt->latest);
		return;
	}
	if (rt->nranks < 0) {
		err = root_setup(rt, m.nranks, m.nids, 0);
		rt->first_rank = -1;
	}
	if (!err && rt->nranks == (int)m.nranks && rt->mode &&
	    is_host(rt->mode) != (m.hier != 0)) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "bootstrap mode mismatch: the ranks of root %d of %d (ranks %d-%d) checked in %s but those of root 0 %s; set the same CCOM_BOOTSTRAP_HIER (and CCOM_BOOTSTRAP_HIER_THRESHOLD) on every rank",
			 m.idx, m.nids, lo, hi - 1, m.hier ? "through host leaders" : "flat",
			 is_host(rt->mode) ? "through host leaders" : "flat");
		err = -EPERM;
	} else if (err) {
		/* rt->msg says which */
	} else if (m.nranks != rt->nranks || m.nids != rt->nids || rt->idx != 0) {
		snprintf(rt->msg, sizeof(rt->msg),
			 "root %d of a job of %d ranks and %d ids reported to the root of ids[%d] of a job of %d ranks and %d ids; every rank must pass the same nranks, nIds and ids in the same order",
			 m.idx, m.nranks, m.nids, rt->idx, rt->nranks, rt->nids);
		err = -EPERM;
	} else if (rt->sub_fd[m.idx] >= 0) {
		snprintf(rt->msg, sizeof(rt->msg), "root %d of %d reported twice", m.idx, m.nids);
		err = -EPERM;
	} else if (m.hier ? m.count < 1 || m.count > (uint32_t)(hi - lo) :
			    m.count != (uint32_t)(hi - lo)) {
		snprintf(rt->msg, sizeof(rt->msg), "root %d of %d reported %u %s instead of %s%d",
			 m.idx, m.nids, m.count, m.hier ? "host leaders" : "ranks",
			 m.hier ? "1 to " : "", hi - lo);
		err = -EPROTO;
	}
	if (!err && !rt->mode)
		rt->mode = m.hier ? CCOM_BS_HELLO_HOST_MULTI : CCOM_BS_HELLO_MULTI;
	if (!err) {
		e = calloc(m.count, sizeof(*e));
		if (!e || ccom_sock_recv_all(p.fd, e, m.count * sizeof(*e), until, NULL)) {
			snprintf(rt->msg, sizeof(rt->msg), "root %d of %d: its table of %u ranks did not arrive",
				 m.idx, m.nids, m.count);
			err = -EPROTO;
		}
	}
	for (k = 0; !err && k < m.count; k++) {
		if (e[k].rank < lo || e[k].rank >= hi) {
			snprintf(rt->msg, sizeof(rt->msg), "root %d of %d reported rank %d, not one of its ranks %d-%d",
				 m.idx, m.nids, e[k].rank, lo, hi - 1);
			err = -EPROTO;
			break;
		}
		rt->addrs[e[k].rank] = e[k].addr;
		/* Hierarchical: the leaders of root k join the ring of all leaders. */
		rt->ranks[e[k].rank].leader = m.hier != 0;
	}
	free(e);
	if (err) {
		root_send_reply(p.fd, rt->magic, err, NULL, rt->msg);
		close(p.fd);
		root_fail(rt, err, rt->latest);
		return;
	}
	rt->sub_fd[m.idx] = p.fd;
	rt->subs_in++;
	if (!rt->deadline)
		rt->deadline = now + (int64_t)m.remaining_ms * 1000;
	ccom_trace(CCOM_SUBSYS_BOOT, "Bootstrap root: root %d of %d reported ranks %d-%d", m.idx,
		   m.nids, lo, hi - 1);
}

/* Root k > 0, hierarchical: root 0's table of every host leader (@len bytes); 0 or -errno. */
static int root_sub_leaders_in(struct root *rt, int fd, uint32_t len, int64_t deadline)
{
	size_t n = len / sizeof(struct ccom_bs_addr_entry), k;
	struct ccom_bs_addr_entry *e;
	int rc;

	if (!n || n > (size_t)rt->nranks || len % sizeof(*e))
		return -EBADMSG;
	e = malloc(len);
	if (!e)
		return -ENOMEM;
	rc = ccom_sock_recv_all(fd, e, len, deadline, NULL);
	for (k = 0; !rc && k < n; k++) {
		if (e[k].rank < 0 || e[k].rank >= rt->nranks) {
			rc = -EBADMSG;
			break;
		}
		rt->addrs[e[k].rank] = e[k].addr;
		rt->ranks[e[k].rank].leader = 1;
	}
	free(e);
	return rc;
}

/*
 * Root k > 0, its ranks in: send them to root 0 and get every rank's
 * address (or root 0's verdict) back.  0, or -1 after root_fail().
 */
static int root_sub_exchange(struct root *rt)
{
	int hier = is_host(rt->mode);
	int fd = -1, rc, err = 0, r, k = 0;
	int64_t deadline = rt->latest;
	struct ccom_bs_addr_entry *e = calloc(rt->hi - rt->lo, sizeof(*e));
	struct ccom_bs_reply rep;
	char text[CCOM_BS_MAX_MSG + 1], a[80];

	rt->reported = 1;
	rc = e ? 0 : -ENOMEM;
	/* Hierarchical: only the leaders (the ranks' addresses travel on their ring). */
	for (r = rt->lo; e && r < rt->hi; r++) {
		if (hier && !rt->ranks[r].leader)
			continue;
		e[k].rank = r;
		e[k++].addr = rt->addrs[r];
	}
	if (!rc)
		rc = ccom_sock_connect(&rt->root0, deadline, NULL, &fd);
	if (!rc)
		rc = ccom_bs_auth_connect(fd, rt->sub_key, rt->root0_magic, CCOM_BS_SUBROOT,
					  rt->idx, deadline, NULL, NULL, NULL, &rep);
	if (rc == 1) {
		/* Root 0 refused (another wire version): the rest of its verdict follows. */
		rc = ccom_sock_recv_all(fd, (char *)&rep + RP_HEAD_BYTES, sizeof(rep) - RP_HEAD_BYTES,
					deadline, NULL);
	} else {
		if (!rc)
			rc = root_sub_send(rt, fd, 0, k, e, k * sizeof(*e), deadline);
		if (!rc)
			rc = ccom_sock_recv_all(fd, &rep, sizeof(rep), deadline, NULL);
	}
	if (!rc && (rep.magic != rt->root0_magic || rep.type != CCOM_BS_REPLY))
		rc = -EBADMSG;
	if (!rc && rep.err) {
		size_t len = rep.msg_len < CCOM_BS_MAX_MSG ? rep.msg_len : CCOM_BS_MAX_MSG;

		if (ccom_sock_recv_all(fd, text, len, deadline, NULL))
			len = 0;
		text[len] = '\0';
		snprintf(rt->msg, sizeof(rt->msg), "%.1000s", len ? text : "root 0 refused the job");
		err = rep.err;
	} else if (!rc && hier) {
		rc = root_sub_leaders_in(rt, fd, rep.msg_len, deadline);
	} else if (!rc && rep.msg_len != rt->nranks * sizeof(*rt->addrs)) {
		rc = -EBADMSG;
	} else if (!rc) {
		rc = ccom_sock_recv_all(fd, rt->addrs, rep.msg_len, deadline, NULL);
	}
	if (fd >= 0)
		close(fd);
	free(e);
	if (rc)
		snprintf(rt->msg, sizeof(rt->msg),
			 "root %d of %d could not exchange its ranks' addresses with root 0 at %s: %s (is the process that created ids[0] alive and reachable?)",
			 rt->idx, rt->nids, ccom_addr_str(&rt->root0, a, sizeof(a)),
			 rc == -EKEYREJECTED ? "root 0 failed authentication: it does not hold ids[0]'s secret; pass every rank the same ids in the same order" :
			 strerror(-rc));
	if (rc || err) {
		root_fail(rt, rc ? rc : err, rt->latest);
		return -1;
	}
	return 0;
}

/* Root 0, everyone in: every rank's address to each root k > 0. */
static void root_send_tables(struct root *rt)
{
	int64_t deadline = ccom_now_us() + 2000000;
	struct ccom_bs_addr_entry *e = NULL;
	const void *table = rt->addrs;
	struct ccom_bs_reply r;
	int k, n = 0;

	memset(&r, 0, sizeof(r));
	r.magic = rt->magic;
	r.type = CCOM_BS_REPLY;
	r.msg_len = rt->nranks * sizeof(*rt->addrs);
	if (is_host(rt->mode)) {
		/* Hierarchical: every host leader, sorted by rank (the ring of all leaders). */
		e = calloc(rt->nranks, sizeof(*e));
		for (k = 0; e && k < rt->nranks; k++) {
			if (!rt->ranks[k].leader)
				continue;
			e[n].rank = k;
			e[n++].addr = rt->addrs[k];
		}
		r.msg_len = n * sizeof(*e);
		table = e;
	}
	for (k = 1; k < rt->nids; k++) {
		if (table && !ccom_sock_send_all(rt->sub_fd[k], &r, sizeof(r), deadline, NULL))
			ccom_sock_send_all(rt->sub_fd[k], table, r.msg_len, deadline, NULL);
		close(rt->sub_fd[k]);
		rt->sub_fd[k] = -1;
	}
	free(e);
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
		 "rank %d (%s pid %d)%s disconnected after checking in (it died or was aborted) while %d of %d ranks were still missing",
		 h->rank, h->host, h->pid, rt->ranks[r].leader ? ", a host leader," : "",
		 rt->nranks - rt->count, rt->nranks);
	root_fail(rt, -ECONNRESET, rt->deadline);
}

/* Hierarchical: host leader @l sends ranks of its host (runs), or its host's failure. */
static void root_members_in(struct root *rt, int l)
{
	const struct ccom_bs_hello *lh = &rt->ranks[l].hello;
	int64_t until = ccom_now_us() + 2000000;
	struct ccom_bs_members m;
	struct ccom_bs_run run[64];
	char text[CCOM_BS_MAX_MSG + 1];
	uint32_t k;
	int r, fd = rt->ranks[l].fd;

	if (ccom_sock_recv_all(fd, &m, sizeof(m), until, NULL)) {
		root_hangup(rt, l);
		return;
	}
	if (m.magic != rt->magic || m.type != CCOM_BS_MEMBERS || m.msg_len > CCOM_BS_MAX_MSG ||
	    (!m.err && m.count > sizeof(run) / sizeof(run[0]))) {
		snprintf(rt->msg, sizeof(rt->msg), "host leader rank %d (%s pid %d) sent a malformed member list",
			 l, lh->host, lh->pid);
		root_fail(rt, -EPROTO, rt->deadline);
		return;
	}
	if (m.err) {
		size_t len = m.msg_len;

		if (ccom_sock_recv_all(fd, text, len, until, NULL))
			len = 0;
		text[len] = '\0';
		snprintf(rt->msg, sizeof(rt->msg), "%.1000s", len ? text : "a host leader failed");
		root_fail(rt, m.err, rt->latest);
		return;
	}
	if (ccom_sock_recv_all(fd, run, m.count * sizeof(run[0]), until, NULL)) {
		root_hangup(rt, l);
		return;
	}
	for (k = 0; k < m.count; k++) {
		/* With several roots a leader's members check in with its root: its range. */
		if (run[k].first < rt->lo || run[k].n < 1 || run[k].first >= rt->hi ||
		    run[k].n > rt->hi - run[k].first) {
			snprintf(rt->msg, sizeof(rt->msg),
				 "host leader rank %d (%s pid %d) reported ranks %d-%d to the root of ranks %d-%d of a job of %d",
				 l, lh->host, lh->pid, run[k].first, run[k].first + run[k].n - 1,
				 rt->lo, rt->hi - 1, rt->nranks);
			root_fail(rt, -EINVAL, rt->deadline);
			return;
		}
		for (r = run[k].first; r < run[k].first + run[k].n; r++) {
			if (rt->ranks[r].in) {
				const struct ccom_bs_hello *o = &rt->ranks[rt->ranks[r].via].hello;

				snprintf(rt->msg, sizeof(rt->msg),
					 "duplicate rank: rank %d checked in twice (on the host of rank %d, %s pid %d, and on that of rank %d, %s pid %d); every process must pass a distinct rank",
					 r, rt->ranks[r].via, o->host, o->pid, l, lh->host, lh->pid);
				root_fail(rt, -EPERM, rt->deadline);
				return;
			}
			rt->ranks[r].in = 1;
			rt->ranks[r].via = l;
			rt->count++;
		}
	}
	ccom_trace(CCOM_SUBSYS_BOOT, "Bootstrap root: host leader %d reported %u run(s), %d ranks in",
		   l, m.count, rt->count);
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

static void root_members_in(struct root *rt, int l);

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
		if (pfd[1 + n + i].revents && rt->ranks[rt->who[i]].leader)
			root_members_in(rt, rt->who[i]);
		else if (pfd[1 + n + i].revents)
			root_hangup(rt, rt->who[i]);
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
		if (rt->nids > 1 && rt->idx > 0 && root_sub_exchange(rt))
			return rt->failed && ccom_now_us() >= rt->linger;
		if (rt->nids > 1 && rt->idx == 0)
			root_send_tables(rt);
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
	for (i = 1; rt->sub_fd && i < rt->nids; i++)
		if (rt->sub_fd[i] >= 0)
			close(rt->sub_fd[i]);
	close(rt->lfd);
	memset(rt->key, 0, sizeof(rt->key));
	memset(rt->sub_key, 0, sizeof(rt->sub_key));
	free(rt->sub_fd);
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
