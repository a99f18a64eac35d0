// SPDX-License-Identifier: MIT
/*
 * root_multi.c - several bootstrap roots (ccomCommInitRankScalable,
 * nIds > 1, wire.h): each root serves the ranks r with
 * r * nids / nranks == its index; a root k > 0 whose ranks are in sends
 * their addresses to root 0 and gets everyone's back (a blocking exchange),
 * root 0 waits for its own ranks and every other root, then each answers
 * its own ranks.  A failure anywhere (a missing rank, a mismatch, a
 * hang-up) is reported to root 0, which tells every root, so every present
 * rank gets the same sentence.  Root 0 waits half a margin longer than the
 * others, so that a root k's report of a missing rank arrives before root 0
 * would time out on its own.  Hierarchical with several roots, each root
 * runs the hierarchical protocol for its own range (its host leaders
 * forward runs of that range); in the combine step a root k > 0 reports
 * only its leaders and root 0 sends every root the table of all leaders,
 * from which each root tells its leaders their neighbours in the ring of
 * all leaders (root_hier.c).  The poll loop that calls it is root.c's.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/root_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

/* Root 0: pass a failure on to every root k > 0 that is waiting for the table. */
void ccom_bs_root_tell_subs(struct root *rt, int err)
{
	int k;

	for (k = 1; rt->sub_fd && k < rt->nids; k++) {
		if (rt->sub_fd[k] < 0)
			continue;
		ccom_bs_root_send_reply(rt->sub_fd[k], rt->magic, err, NULL, rt->msg);
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
void ccom_bs_root_sub_report(struct root *rt, int err)
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

/* Several roots: the rank's ids must match this root's and it must be one of its ranks. */
int ccom_bs_root_check_multi(struct root *rt, const struct ccom_bs_hello *h, int nids, int idx)
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

/* Root 0: a root k > 0 reports its ranks' addresses (kept, with its connection) or its failure. */
void ccom_bs_root_subroot_in(struct root *rt, int i)
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
	    m.nranks < m.nids || m.nranks > CCOM_BS_MAX_RANKS || m.msg_len > CCOM_BS_MAX_MSG) {
		ccom_warn("Bootstrap root: dropped a malformed report of another root");
		close(p.fd);
		return;
	}
	if (now + (int64_t)m.remaining_ms * 1000 > rt->latest)
		rt->latest = now + (int64_t)m.remaining_ms * 1000;
	if (rt->failed) {
		ccom_bs_root_send_reply(p.fd, rt->magic, rt->failed, NULL, rt->msg);
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
		ccom_bs_root_fail(rt, m.err, rt->latest);
		return;
	}
	if (rt->nranks < 0) {
		err = ccom_bs_root_setup(rt, m.nranks, m.nids, 0);
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
		ccom_bs_root_send_reply(p.fd, rt->magic, err, NULL, rt->msg);
		close(p.fd);
		ccom_bs_root_fail(rt, err, rt->latest);
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
 * address (or root 0's verdict) back.  0, or -1 after ccom_bs_root_fail().
 */
int ccom_bs_root_sub_exchange(struct root *rt)
{
	int hier = is_host(rt->mode);
	int fd = -1, rc, err = 0, r, k = 0, refused = 0;
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
		refused = 1;
		rc = ccom_sock_recv_all(fd, (char *)&rep + RP_HEAD_BYTES, sizeof(rep) - RP_HEAD_BYTES,
					deadline, NULL);
		/* Unproven: it may fail this root, never hand it a table. */
		if (!rc && !rep.err)
			rc = -EKEYREJECTED;
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
		snprintf(rt->msg, sizeof(rt->msg), "%s%.900s",
			 refused ? "root 0 refused this root before authenticating: " : "",
			 len ? text : "root 0 refused the job");
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
		ccom_bs_root_fail(rt, rc ? rc : err, rt->latest);
		return -1;
	}
	return 0;
}

/* Root 0, everyone in: every rank's address to each root k > 0. */
void ccom_bs_root_send_tables(struct root *rt)
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
