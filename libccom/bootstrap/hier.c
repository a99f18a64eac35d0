// SPDX-License-Identifier: MIT
/*
 * hier.c - the hierarchical bootstrap (wire.h, Documentation/libccom/
 * bootstrap.rst): above CCOM_BOOTSTRAP_HIER_THRESHOLD ranks (or with
 * CCOM_BOOTSTRAP_HIER=1) the ranks of a host elect a host leader, the
 * first of them to bind the host's abstract Unix socket (its name is
 * derived from the id's secret and the host identity), and check in with
 * it; only the leaders check in with the root, forwarding their ranks as
 * runs as they arrive, so the root's connections and messages grow with
 * hosts, not ranks.  The root answers each leader with its neighbours in
 * the ring of leaders; the leaders pass their hosts' address tables
 * around that ring (p2p messages of msg.c, nhosts - 1 steps), then each
 * answers its ranks with every rank's listen address (or the verdict that
 * refused the job).  Every local connection is authenticated like the
 * others (auth.h), every wait is bounded by the rank's deadline and polls
 * the abort flag; a leader reports its host's failures (skew, nranks
 * mismatch, a rank that hung up) to the root, which fails the job on
 * every host.  With several ids (ccomCommInitRankScalable) the ranks of a
 * host that check in with the same root elect one leader per (host, root)
 * on the socket of that root's id, and each root runs this protocol for
 * its range; root.c combines the roots' leaders into one ring.  Calls
 * msg.c, auth.c and id.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "bootstrap/mac.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

#define HIER_TAG_SIZE 0x70	/* leaders' ring: block size, then the block */
#define HIER_TAG_DATA 0x71
#define HIER_LOCAL_WAIT_US 5000000	/* a local connection's handshake and check-in */

int ccom_bs_hier_wanted(const struct ccom_bootstrap_args *a)
{
	if (ccom_param_is_set("CCOM_BOOTSTRAP_HIER"))
		return ccom_param_int("CCOM_BOOTSTRAP_HIER") != 0;
	return a->nranks >= ccom_param_int("CCOM_BOOTSTRAP_HIER_THRESHOLD");
}

/* CCOM_HOSTID, else host name and boot id (as init groups ranks into hosts). */
static void hier_host_id(char *buf, size_t len)
{
	ccom_host_identity(ccom_param_str("CCOM_HOSTID"), buf, len);
}

/* The abstract socket of this job on this host: unguessable without the secret. */
static socklen_t hier_sockname(const uint8_t *key, uint64_t magic, struct sockaddr_un *sa)
{
	uint8_t mac[CCOM_SHA256_BYTES];
	char hid[400], name[80];
	const void *parts[2] = { hid, &magic };
	size_t lens[2], i;
	int n;

	hier_host_id(hid, sizeof(hid));
	lens[0] = strlen(hid);
	lens[1] = sizeof(magic);
	ccom_hmac_sha256_v(key, CCOM_BS_KEY_BYTES, 2, parts, lens, mac);
	n = snprintf(name, sizeof(name), "ccom-bootstrap-");
	for (i = 0; i < 12; i++)
		n += snprintf(name + n, sizeof(name) - n, "%02x", mac[i]);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, n);	/* sun_path[0] = 0: abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* ------------------------------------------------------------------ */
/* A rank that is not its host's leader                               */

static int hier_member(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		       const struct ccom_bs_id *id, const struct ccom_bs_hello_ext *ext,
		       const struct ccom_bs_hello *h, int fd, int64_t deadline,
		       int64_t verdict_deadline)
{
	struct ccom_bs_reply rep;
	char msg[CCOM_BS_MAX_MSG + 1];
	int rc;

	rc = ccom_bs_auth_connect(fd, id->secret, id->magic, h->type, a->rank, deadline,
				  a->abort, NULL, NULL, &rep);
	if (rc == 1 || rc == -EKEYREJECTED || rc == -EBADMSG) {
		ccom_set_last_error("Bootstrap: rank %d: the process on this host's bootstrap socket failed authentication: %s",
				    a->rank, ccom_bs_err_str(-EKEYREJECTED));
		return -EBADMSG;
	}
	if (!rc)
		rc = ccom_sock_send_all(fd, h, sizeof(*h), deadline, a->abort);
	if (!rc && ext) {
		/* Its ids, for the leader to compare; the key towards root 0 stays here. */
		struct ccom_bs_hello_ext x = *ext;

		memset(x.subroot_key, 0, sizeof(x.subroot_key));
		rc = ccom_sock_send_all(fd, &x, sizeof(x), deadline, a->abort);
	}
	if (!rc)
		rc = ccom_sock_recv_all(fd, &rep, sizeof(rep), verdict_deadline, a->abort);
	if (!rc && (rep.magic != id->magic || rep.type != CCOM_BS_REPLY))
		rc = -EBADMSG;
	/*
	 * Closed without a verdict: the leader left (it failed, or answered
	 * its ranks just before this one was accepted).  Elect again: as
	 * the new leader this rank hears the root's verdict itself.
	 */
	if (rc == -ECONNRESET && ccom_now_us() < deadline)
		return -EAGAIN;
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d of %d got no usable answer from its host leader: %s%s",
				    a->rank, a->nranks, ccom_bs_err_str(rc),
				    rc == -ECONNRESET ? " (the leader, another rank of this host, failed or was aborted)" :
				    rc == -ETIMEDOUT ? " (CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	if (rep.err) {
		size_t len = rep.msg_len < CCOM_BS_MAX_MSG ? rep.msg_len : CCOM_BS_MAX_MSG;

		if (ccom_sock_recv_all(fd, msg, len, verdict_deadline, a->abort))
			len = 0;
		msg[len] = '\0';
		ccom_set_last_error("Bootstrap: rank %d: the root refused the job: %s", a->rank,
				    len ? msg : "(no reason given)");
		return rep.err < 0 ? rep.err : -EPROTO;
	}
	if (rep.msg_len != (uint32_t)a->nranks * sizeof(*bs->addrs) ||
	    (rc = ccom_sock_recv_all(fd, bs->addrs, rep.msg_len, verdict_deadline, a->abort))) {
		ccom_set_last_error("Bootstrap: rank %d: its host leader sent a malformed address table (%u bytes for %d ranks)",
				    a->rank, rep.msg_len, a->nranks);
		return -EPROTO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The host leader                                                     */

struct hier_local {
	int fd;
	struct ccom_bs_hello h;
};

struct hier_leader {
	struct ccom_bootstrap *bs;
	const struct ccom_bootstrap_args *a;
	const struct ccom_bs_id *id;
	const struct ccom_bs_hello *me;
	const struct ccom_bs_hello_ext *ext;	/* several ids: this leader's, else NULL */
	int lfd, rfd;
	struct hier_local *loc;
	int nloc, cap;
	int *fresh;		/* ranks not yet forwarded to the root */
	int nfresh;
	int reported;		/* a failure of this host was sent to the root */
	char verdict[CCOM_BS_MAX_MSG + 1];	/* the root's refusal, as the root wrote it */
};

/* Send the root this host's failure (@msg); the root's verdict comes back to every host. */
static void hier_report(struct hier_leader *L, int err, const char *msg)
{
	struct ccom_bs_members m = { .magic = L->id->magic, .type = CCOM_BS_MEMBERS, .err = err };

	if (L->reported)
		return;
	L->reported = 1;
	m.msg_len = (uint32_t)strlen(msg);
	if (m.msg_len > CCOM_BS_MAX_MSG)
		m.msg_len = CCOM_BS_MAX_MSG;
	ccom_warn("Bootstrap: rank %d (host leader): %s", L->a->rank, msg);
	if (!ccom_sock_send_all(L->rfd, &m, sizeof(m), ccom_now_us() + 1000000, NULL))
		ccom_sock_send_all(L->rfd, msg, m.msg_len, ccom_now_us() + 1000000, NULL);
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return (a > b) - (a < b);
}

/* Forward the ranks that arrived since the last call, as runs. */
static int hier_forward(struct hier_leader *L)
{
	struct ccom_bs_members m = { .magic = L->id->magic, .type = CCOM_BS_MEMBERS };
	struct ccom_bs_run run[64];
	int i = 0, rc = 0;

	qsort(L->fresh, L->nfresh, sizeof(*L->fresh), cmp_int);
	while (i < L->nfresh && !rc) {
		m.count = 0;
		while (i < L->nfresh && m.count < 64) {
			run[m.count].first = L->fresh[i];
			run[m.count].n = 1;
			while (++i < L->nfresh && L->fresh[i] == run[m.count].first + run[m.count].n)
				run[m.count].n++;
			m.count++;
		}
		rc = ccom_sock_send_all(L->rfd, &m, sizeof(m), ccom_now_us() + 2000000, L->a->abort);
		if (!rc)
			rc = ccom_sock_send_all(L->rfd, run, m.count * sizeof(run[0]),
						ccom_now_us() + 2000000, L->a->abort);
	}
	L->nfresh = 0;
	return rc;
}

/* A local rank's check-in is in: 0 (kept), or a sentence why this host fails. */
static int hier_local_check(struct hier_leader *L, const struct ccom_bs_hello *h,
			    const struct ccom_bs_hello_ext *x, char *why, size_t len)
{
	const struct ccom_bs_hello *me = L->me;
	unsigned int mine = L->ext ? L->ext->nids : 1, theirs = x ? x->nids : 1;

	if (h->abi != me->abi || h->version != me->version || h->build_hash != me->build_hash) {
		snprintf(why, len,
			 "version skew: rank %d (%s pid %d) runs libccom version %u ABI %u build %016llx but the root runs version %u ABI %u build %016llx; use the same libccom build on every rank",
			 h->rank, h->host, h->pid, h->version, h->abi,
			 (unsigned long long)h->build_hash, me->version, me->abi,
			 (unsigned long long)me->build_hash);
		return -EBADE;
	}
	if (h->nranks != me->nranks) {
		snprintf(why, len,
			 "nranks mismatch: rank %d (%s pid %d) checked in with nranks %d but rank %d (%s pid %d) with nranks %d; every rank must pass the same nranks",
			 h->rank, h->host, h->pid, h->nranks, me->rank, me->host, me->pid,
			 me->nranks);
		return -EPERM;
	}
	if (mine != theirs || (x && x->idx != L->ext->idx)) {
		snprintf(why, len,
			 "nIds mismatch: rank %d (%s pid %d) passed %u unique id(s) (its root ids[%u]) but its host leader rank %d (%s pid %d) passed %u (ids[%u]); every rank must pass the same nIds and ids",
			 h->rank, h->host, h->pid, theirs, x ? x->idx : 0, me->rank, me->host,
			 me->pid, mine, L->ext ? L->ext->idx : 0);
		return -EPERM;
	}
	return 0;
}

/* Accept one local connection: authenticate it and read its check-in (bounded, 5 s). */
static void hier_accept_one(struct hier_leader *L, int fd)
{
	int64_t until = ccom_now_us() + HIER_LOCAL_WAIT_US;
	struct ccom_bs_auth_challenge ch;
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_auth_hello ah;
	struct ccom_bs_hello h;
	struct ccom_bs_hello_ext x;
	const char *why = NULL;
	char text[CCOM_BS_MAX_MSG];
	int err;

	if (ccom_sock_recv_all(fd, &ah, sizeof(ah), until, L->a->abort))
		why = "no complete hello within 5 s";
	else if (ah.magic != L->id->magic || ah.type != CCOM_BS_AUTH ||
		 ah.wire != CCOM_BS_WIRE_VERSION ||
		 (ah.role != CCOM_BS_LOCAL && ah.role != CCOM_BS_LOCAL_MULTI) || ah.who < 0 ||
		 ah.who >= L->a->nranks)
		why = "malformed hello";
	if (!why) {
		ccom_bs_auth_challenge_init(&ch, L->id->secret, &ah);
		if (ccom_sock_send_all(fd, &ch, sizeof(ch), until, L->a->abort) ||
		    ccom_sock_recv_all(fd, &ans, sizeof(ans), until, L->a->abort))
			why = "no answer to the challenge within 5 s";
		else if (!ccom_bs_auth_answer_ok(L->id->secret, &ah, ch.nonce, &ans))
			why = CCOM_BS_AUTH_FAILED;
	}
	if (!why && (ccom_sock_recv_all(fd, &h, sizeof(h), until, L->a->abort) ||
		     h.magic != L->id->magic || h.type != ah.role || h.rank != ah.who ||
		     h.size != sizeof(h) ||
		     (h.type == CCOM_BS_LOCAL_MULTI &&
		      ccom_sock_recv_all(fd, &x, sizeof(x), until, L->a->abort))))
		why = "malformed check-in message";
	if (why) {
		ccom_warn("Bootstrap: rank %d (host leader) dropped a local connection: %s",
			  L->a->rank, why);
		close(fd);
		return;
	}
	h.host[sizeof(h.host) - 1] = '\0';
	err = hier_local_check(L, &h, h.type == CCOM_BS_LOCAL_MULTI ? &x : NULL, text,
			       sizeof(text));
	if (err)
		hier_report(L, err, text);
	if (L->nloc == L->cap) {
		int cap = L->cap ? 2 * L->cap : 16;
		struct hier_local *nl = realloc(L->loc, cap * sizeof(*nl));
		int *nf = realloc(L->fresh, cap * sizeof(*nf));

		if (nl)
			L->loc = nl;
		if (nf)
			L->fresh = nf;
		if (!nl || !nf) {
			close(fd);
			hier_report(L, -ENOMEM, "a host leader ran out of memory for its ranks");
			return;
		}
		L->cap = cap;
	}
	L->loc[L->nloc].fd = fd;
	L->loc[L->nloc++].h = h;
	if (!err)
		L->fresh[L->nfresh++] = h.rank;
}

/* Answer every local rank with the verdict @err/@msg, or (err 0) the address table. */
static void hier_answer_locals(struct hier_leader *L, int err, const char *msg)
{
	int64_t until = ccom_now_us() + 2000000;
	struct ccom_bs_reply r;
	int i;

	memset(&r, 0, sizeof(r));
	r.magic = L->id->magic;
	r.type = CCOM_BS_REPLY;
	r.err = err;
	r.msg_len = err ? (uint32_t)strlen(msg) : (uint32_t)(L->a->nranks * sizeof(*L->bs->addrs));
	if (err && r.msg_len > CCOM_BS_MAX_MSG)
		r.msg_len = CCOM_BS_MAX_MSG;
	for (i = 0; i < L->nloc; i++) {
		if (!ccom_sock_send_all(L->loc[i].fd, &r, sizeof(r), until, NULL))
			ccom_sock_send_all(L->loc[i].fd, err ? (const void *)msg :
							       (const void *)L->bs->addrs,
					   r.msg_len, until, NULL);
		close(L->loc[i].fd);
		L->loc[i].fd = -1;
	}
	L->nloc = 0;
}

/*
 * Serve the local check-ins and forward them until the root's verdict;
 * 0 with *@rep and *@hi, or -errno after ccom_set_last_error().
 */
static int hier_wait_root(struct hier_leader *L, int64_t verdict_deadline,
			  struct ccom_bs_reply *rep, struct ccom_bs_host_info *hi)
{
	char msg[CCOM_BS_MAX_MSG + 1];
	int rc = 0, i;

	for (;;) {
		struct pollfd p[2 + 256];
		int n = 0, nl = L->nloc < 256 ? L->nloc : 256;
		int64_t left = verdict_deadline - ccom_now_us();

		if (atomic_load(L->a->abort)) {
			rc = -ECANCELED;
			break;
		}
		if (left <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		p[n++] = (struct pollfd){ .fd = L->rfd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = L->lfd, .events = POLLIN };
		for (i = 0; i < nl; i++)
			p[n++] = (struct pollfd){ .fd = L->loc[i].fd, .events = POLLIN };
		if (poll(p, n, CCOM_SOCK_POLL_MS) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (p[0].revents)
			break;		/* the verdict (or the root's close) */
		for (i = 0; i < nl; i++) {
			if (!p[2 + i].revents)
				continue;
			snprintf(msg, sizeof(msg),
				 "rank %d (%s pid %d) disconnected from its host leader after checking in (it died or was aborted)",
				 L->loc[i].h.rank, L->loc[i].h.host, L->loc[i].h.pid);
			hier_report(L, -ECONNRESET, msg);
			close(L->loc[i].fd);
			L->loc[i] = L->loc[--L->nloc];
			break;	/* the poll set changed */
		}
		if (p[1].revents) {
			int fd;

			while ((fd = accept4(L->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
				hier_accept_one(L, fd);
		}
		/* A root that closed may have sent its verdict already: read it. */
		if (L->nfresh && !L->reported && hier_forward(L))
			break;
	}
	if (!rc)
		rc = ccom_sock_recv_all(L->rfd, rep, sizeof(*rep), verdict_deadline, L->a->abort);
	if (!rc && (rep->magic != L->id->magic || rep->type != CCOM_BS_REPLY ||
		    rep->msg_len > CCOM_BS_MAX_MSG))
		rc = -EBADMSG;
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d (host leader) of %d got no usable answer from the bootstrap root: %s%s",
				    L->a->rank, L->a->nranks, ccom_bs_err_str(rc),
				    rc == -ETIMEDOUT ? " (other ranks did not check in and the root did not report in time; CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	if (rep->err) {
		size_t len = rep->msg_len;

		if (ccom_sock_recv_all(L->rfd, msg, len, verdict_deadline, L->a->abort))
			len = 0;
		msg[len] = '\0';
		snprintf(L->verdict, sizeof(L->verdict), "%s", len ? msg : "(no reason given)");
		ccom_set_last_error("Bootstrap: rank %d: the root refused the job: %s", L->a->rank,
				    L->verdict);
		return rep->err < 0 ? rep->err : -EPROTO;
	}
	if (rep->msg_len != sizeof(*hi) ||
	    ccom_sock_recv_all(L->rfd, hi, sizeof(*hi), verdict_deadline, L->a->abort) ||
	    hi->nhosts < 1 || hi->next_leader < 0 || hi->next_leader >= L->a->nranks ||
	    hi->prev_leader < 0 || hi->prev_leader >= L->a->nranks) {
		ccom_set_last_error("Bootstrap: rank %d (host leader): malformed answer from the root",
				    L->a->rank);
		return -EPROTO;
	}
	return 0;
}

/* The leaders' ring: pass the hosts' tables of (rank, address) around, nhosts - 1 steps. */
static int hier_leader_ring(struct hier_leader *L, const struct ccom_bs_host_info *hi)
{
	struct ccom_bootstrap *bs = L->bs;
	struct ccom_bs_addr_entry *blk;
	uint64_t n = (uint64_t)L->nloc + 1, got;
	int s, k, rc = 0, filled = (int)n;

	blk = malloc(bs->nranks * sizeof(*blk));
	if (!blk) {
		ccom_set_last_error("Bootstrap: rank %d: out of memory for %d addresses", bs->rank,
				    bs->nranks);
		return -ENOMEM;
	}
	memset(blk, 0, n * sizeof(*blk));
	blk[0].rank = bs->rank;
	blk[0].addr = bs->listen_addr;
	for (k = 0; k < L->nloc; k++) {
		blk[k + 1].rank = L->loc[k].h.rank;
		blk[k + 1].addr = L->loc[k].h.listen;
	}
	for (k = 0; k < (int)n; k++)
		bs->addrs[blk[k].rank] = blk[k].addr;
	for (s = 0; s < hi->nhosts - 1 && !rc; s++) {
		rc = ccom_bs_send_locked(bs, hi->next_leader, HIER_TAG_SIZE, &n, sizeof(n));
		if (!rc)
			rc = ccom_bs_send_locked(bs, hi->next_leader, HIER_TAG_DATA, blk,
						 n * sizeof(*blk));
		if (!rc)
			rc = ccom_bs_recv_locked(bs, hi->prev_leader, HIER_TAG_SIZE, &got,
						 sizeof(got));
		if (!rc && got > (uint64_t)bs->nranks) {
			ccom_set_last_error("Bootstrap: rank %d: the previous host leader (rank %d) sent a table of %llu ranks",
					    bs->rank, hi->prev_leader, (unsigned long long)got);
			rc = -EPROTO;
		}
		if (!rc)
			rc = ccom_bs_recv_locked(bs, hi->prev_leader, HIER_TAG_DATA, blk,
						 got * sizeof(*blk));
		for (k = 0; !rc && k < (int)got; k++) {
			if (blk[k].rank < 0 || blk[k].rank >= bs->nranks) {
				ccom_set_last_error("Bootstrap: rank %d: the previous host leader sent rank %d",
						    bs->rank, blk[k].rank);
				rc = -EPROTO;
				break;
			}
			bs->addrs[blk[k].rank] = blk[k].addr;
		}
		n = got;
		filled += (int)got;
	}
	free(blk);
	if (!rc && filled != bs->nranks) {
		ccom_set_last_error("Bootstrap: rank %d: the host leaders' tables hold %d ranks, not %d",
				    bs->rank, filled, bs->nranks);
		rc = -EPROTO;
	}
	return rc;
}

static int hier_leader(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		       const struct ccom_bs_id *id, const struct ccom_bs_hello_ext *ext,
		       struct ccom_bs_hello *h, int lfd, int64_t deadline, int64_t verdict_deadline)
{
	struct hier_leader L = { .bs = bs, .a = a, .id = id, .me = h, .ext = ext, .lfd = lfd,
				 .rfd = -1 };
	uint32_t role = ext ? CCOM_BS_HELLO_HOST_MULTI : CCOM_BS_HELLO_HOST;
	uint8_t nonce_a[CCOM_BS_NONCE_BYTES];
	struct ccom_bs_auth_hello ah;
	struct ccom_bs_host_info hi;
	struct ccom_bs_reply rep;
	char ra[80], msg[CCOM_BS_MAX_MSG + 1];
	int rc;

	ccom_addr_str(&id->root, ra, sizeof(ra));
	/* A grow id's root is up before the id exists: refused means used (bootstrap.c). */
	if (id->flags & CCOM_BS_ID_GROW)
		rc = ccom_sock_connect_once(&id->root, deadline, a->abort, &L.rfd);
	else
		rc = ccom_sock_connect(&id->root, deadline, a->abort, &L.rfd);
	if (rc == -ECONNREFUSED && (id->flags & CCOM_BS_ID_GROW)) {
		ccom_set_last_error("Bootstrap: rank %d (host leader): the root of this grow id at %s is gone: the id was already used by a ccomCommGrow or its communicator was destroyed; get a fresh id with ccomCommGetUniqueId",
				    a->rank, ra);
		rc = -EPERM;
		goto out;
	}
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d (host leader) could not connect to the bootstrap root at %s: %s",
				    a->rank, ra, ccom_bs_err_str(rc));
		rc = rc == -ECONNREFUSED ? -ETIMEDOUT : rc;
		goto out;
	}
	rc = ccom_bs_auth_connect(L.rfd, id->secret, id->magic, role, a->rank, deadline, a->abort,
				  &ah, nonce_a, &rep);
	if (rc == 1 || rc == -EKEYREJECTED) {
		ccom_set_last_error("Bootstrap: rank %d: the bootstrap root at %s %s", a->rank, ra,
				    rc == 1 ? "refused the check-in of a host leader (another bootstrap wire version: use the same libccom build on every rank)" :
				    "failed authentication: it does not hold this unique id's secret");
		rc = rc == 1 ? -EBADE : -EBADMSG;
		goto out;
	}
	h->type = role;
	/* From now: the election and the connection took some of it (the root's deadline). */
	h->remaining_ms = deadline > ccom_now_us() ? (uint32_t)((deadline - ccom_now_us()) / 1000) : 0;
	if (!rc)
		rc = ccom_sock_send_all(L.rfd, h, sizeof(*h), deadline, a->abort);
	if (!rc && ext) {
		struct ccom_bs_hello_ext x = *ext;

		/* As a flat rank of several ids: only this root can unwrap its key towards root 0. */
		ccom_bs_key_wrap(id->secret, &ah, nonce_a, ext->subroot_key, x.subroot_key);
		rc = ccom_sock_send_all(L.rfd, &x, sizeof(x), deadline, a->abort);
		memset(&x, 0, sizeof(x));
	}
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d (host leader) could not check in with the root at %s: %s",
				    a->rank, ra, ccom_bs_err_str(rc));
		goto out;
	}
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d/%d checked in with the root at %s (ids[%u] of %d) as its host's leader",
		  a->rank, a->nranks, ra, ext ? ext->idx : 0, ext ? (int)ext->nids : 1);
	rc = hier_wait_root(&L, verdict_deadline, &rep, &hi);
	if (rc) {
		int fd;

		/* Ranks of this host still in the accept queue hear the verdict too. */
		while ((fd = accept4(L.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
			hier_accept_one(&L, fd);
	}
	close(L.lfd);
	L.lfd = -1;
	if (!rc) {
		bs->addrs[hi.next_leader] = rep.next;
		rc = hier_leader_ring(&L, &hi);
	}
	if (!rc)
		ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d leads %d local ranks, host %d of %d",
			  a->rank, L.nloc + 1, hi.index, hi.nhosts);
	/* The root's own words when it refused the job, else what failed here. */
	snprintf(msg, sizeof(msg), "%s", !rc ? "" : L.verdict[0] ? L.verdict : ccom_last_error());
	hier_answer_locals(&L, rc, msg);
out:
	for (int i = 0; i < L.nloc; i++)
		close(L.loc[i].fd);
	if (L.lfd >= 0)
		close(L.lfd);
	if (L.rfd >= 0)
		close(L.rfd);
	free(L.loc);
	free(L.fresh);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Entry                                                               */

int ccom_bs_hier_init(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		      const struct ccom_bs_id *id, const struct ccom_bs_hello_ext *ext,
		      struct ccom_bs_hello *h)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;
	int64_t grace = a->timeout_ms * 100;
	struct sockaddr_un sa;
	socklen_t len = hier_sockname(id->secret, id->magic, &sa);
	int64_t verdict_deadline;

	grace = grace < 500000 ? 500000 : grace > 5000000 ? 5000000 : grace;
	verdict_deadline = deadline + grace;
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

		if (fd < 0) {
			rc = -errno;
			ccom_set_last_error("Bootstrap: rank %d: cannot create a Unix socket: %s",
					    a->rank, ccom_bs_err_str(rc));
			return rc;
		}
		if (!bind(fd, (struct sockaddr *)&sa, len) && !listen(fd, SOMAXCONN)) {
			ccom_sock_setup(fd);
			ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d is its host's leader (hierarchical bootstrap)",
				  a->rank);
			return hier_leader(bs, a, id, ext, h, fd, deadline, verdict_deadline);
		}
		if (errno == EADDRINUSE && !connect(fd, (struct sockaddr *)&sa, len)) {
			ccom_sock_setup(fd);
			h->type = ext ? CCOM_BS_LOCAL_MULTI : CCOM_BS_LOCAL;
			rc = hier_member(bs, a, id, ext, h, fd, deadline, verdict_deadline);
			close(fd);
			if (rc != -EAGAIN)
				return rc;
			ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d: its host leader left without a verdict; electing again",
				  a->rank);
			continue;
		}
		rc = -errno;
		close(fd);
		/* Between the leader's bind and listen, or a leader that just left: retry. */
		if (rc != -EADDRINUSE && rc != -ECONNREFUSED) {
			ccom_set_last_error("Bootstrap: rank %d: cannot reach this host's bootstrap socket: %s",
					    a->rank, ccom_bs_err_str(rc));
			return rc;
		}
		if (ccom_now_us() >= deadline) {
			ccom_set_last_error("Bootstrap: rank %d: timed out electing this host's leader (CCOM_BOOTSTRAP_TIMEOUT)",
					    a->rank);
			return -ETIMEDOUT;
		}
		if (ccom_sleep_us(1000, a->abort))
			return -ECANCELED;
	}
}
