// SPDX-License-Identifier: MIT
/*
 * bootstrap.c - the rank side of the bootstrap, its lifecycle: a fresh
 * unique id (and its root thread), then ccom_bootstrap_init(): listen,
 * check in with the root (which answers with the ring successor and the
 * partners of the address all-gather), connect the ring, gather every
 * rank's listen address; and ccom_bootstrap_close().  The messages and
 * collectives that run on a connected bootstrap are msg.c's and
 * allgather.c's; bootstrap_private.h shows how the files call each other.
 */
#include <errno.h>
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
#include "util/params.h"
#include "util/socket.h"

#define BS_RING_ALLGATHER_MAX 8		/* address exchange on the ring up to this many ranks */

/* ------------------------------------------------------------------ */
/* Unique id                                                           */

/*
 * Listen socket on the selected interface, for the root (@toward NULL) or
 * a rank (@toward: the root, whose route names the interface peers reach).
 */
static int bs_listen(const union ccom_sockaddr *toward, union ccom_sockaddr *addr, int *fd,
		     const char *role)
{
	char ifname[64], why[400], a[80];
	int rc;

	rc = ccom_iface_select_toward(toward, addr, ifname, sizeof(ifname), why, sizeof(why));
	if (rc) {
		ccom_set_last_error("Bootstrap: %s", why);
		return rc == -EINVAL ? -EINVAL : -ENETDOWN;
	}
	rc = ccom_sock_listen(addr, SOMAXCONN, fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: cannot listen for the %s on %s: %s", role,
				    ccom_addr_str(addr, a, sizeof(a)), strerror(-rc));
		return rc;
	}
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : Using %s:%s for the %s", ifname,
		  ccom_addr_str(addr, a, sizeof(a)), role);
	return 0;
}

int ccom_bootstrap_get_unique_id(ccomUniqueId *id)
{
	if (ccom_param_is_set("CCOM_COMM_ID"))
		return ccom_bootstrap_id_from_addr(ccom_param_str("CCOM_COMM_ID"), "CCOM_COMM_ID", id);
	return ccom_bootstrap_new_root(id);
}

/* A fresh root thread and its id; @flags and the grow fields go into the id. */
static int bs_new_root(ccomUniqueId *id, uint32_t flags, int grow_base, uint64_t grow_hash)
{
	uint8_t key[CCOM_BS_KEY_BYTES];
	struct ccom_bs_id h;
	int fd, rc;

	memset(&h, 0, sizeof(h));
	rc = bs_listen(NULL, &h.root, &fd, "bootstrap root");
	if (rc)
		return rc;
	h.id_version = CCOM_BS_ID_VERSION;
	h.flags = flags;
	h.grow_base = grow_base;
	h.grow_hash = grow_hash;
	rc = ccom_bs_random_magic(&h.magic);
	if (!rc)
		rc = ccom_bs_secret_new(h.secret);
	if (!rc) {
		/* The ranks mix the job secret into the id's at init: so does their root. */
		memcpy(key, h.secret, sizeof(key));
		rc = ccom_bs_id_mix_secret(key);
		rc = rc < 0 ? rc : 0;
	}
	if (rc) {
		close(fd);
		explicit_bzero(&h, sizeof(h));
		explicit_bzero(key, sizeof(key));
		return rc;
	}
	rc = ccom_bs_root_start(fd, h.magic, key);
	explicit_bzero(key, sizeof(key));
	if (rc) {
		close(fd);
		explicit_bzero(&h, sizeof(h));
		ccom_set_last_error("Bootstrap: cannot start the root thread: %s", strerror(-rc));
		return rc;
	}
	ccom_bs_id_encode(&h, id);
	explicit_bzero(&h, sizeof(h));
	return 0;
}

int ccom_bootstrap_new_root(ccomUniqueId *id)
{
	return bs_new_root(id, 0, 0, 0);
}

int ccom_bootstrap_new_grow_root(int base, uint64_t hash, ccomUniqueId *id)
{
	return bs_new_root(id, CCOM_BS_ID_GROW, base, hash);
}

/* ------------------------------------------------------------------ */
/* Rendezvous                                                          */

static void bs_stagger(const struct ccom_bootstrap_args *a)
{
	int64_t thr = ccom_param_int("CCOM_UID_STAGGER_THRESHOLD");
	int64_t rate = ccom_param_int("CCOM_UID_STAGGER_RATE");

	int64_t us;

	if (a->nranks <= thr || rate <= 0)
		return;
	us = (int64_t)a->rank * 1000000 / rate;
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : %d ranks > CCOM_UID_STAGGER_THRESHOLD %lld: rank %d checks in after %lld us",
		  a->nranks, (long long)thr, a->rank, (long long)us);
	ccom_sleep_us(us, a->abort);
}

/* This rank's check-in, of @type. */
static void bs_make_hello(const struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
			  const struct ccom_bs_id *id, uint32_t type, struct ccom_bs_hello *h)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;

	memset(h, 0, sizeof(*h));
	h->magic = id->magic;
	h->type = type;
	h->abi = ccom_abi_id();
	h->size = sizeof(*h);
	h->rank = a->rank;
	h->nranks = a->nranks;
	h->version = ccom_version_code();
	h->build_hash = ccom_build_hash();
	h->remaining_ms = (uint32_t)((deadline - ccom_now_us()) / 1000);
	h->pid = getpid();
	gethostname(h->host, sizeof(h->host) - 1);
	h->listen = bs->listen_addr;
}

static int bs_checkin(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		      const struct ccom_bs_id *id, const struct ccom_bs_hello_ext *ext,
		      union ccom_sockaddr *next)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;
	int64_t grace = a->timeout_ms * 100; /* 10 % of the timeout, in us */
	int64_t verdict_deadline;
	struct ccom_bs_hello h;
	struct ccom_bs_reply rep;
	struct ccom_bs_auth_hello ah;
	uint8_t nonce_a[CCOM_BS_NONCE_BYTES];
	char msg[CCOM_BS_MAX_MSG + 1] __attribute__((aligned(8))), ra[80];
	int fd, rc, refused;

	ccom_addr_str(&id->root, ra, sizeof(ra));
	/*
	 * A grow id's root listens before the id is handed out: a refused
	 * connection means it is gone (its grow ended), not "not started yet".
	 */
	if (id->flags & CCOM_BS_ID_GROW) {
		rc = ccom_sock_connect_once(&id->root, deadline, a->abort, &fd);
		if (rc == -ECONNREFUSED) {
			ccom_set_last_error("Bootstrap: rank %d: the root of this grow id at %s is gone: the id was already used by a ccomCommGrow (which consumes it, whether it succeeded or failed) or its communicator was destroyed; get a fresh id with ccomCommGetUniqueId on the existing communicator",
					    a->rank, ra);
			return -EPERM;
		}
	} else {
		rc = ccom_sock_connect(&id->root, deadline, a->abort, &fd);
	}
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d could not connect to the bootstrap root at %s: %s%s",
				    a->rank, ra, ccom_bs_err_str(rc),
				    rc == -ECANCELED ? "" :
				     " (is the process that called ccomGetUniqueId, or rank 0 with CCOM_COMM_ID, alive and reachable? A unique id serves one communicator: its root exits once the ranks have their answer)");
		return rc == -ECONNREFUSED ? -ETIMEDOUT : rc;
	}
	/* Both sides prove they hold the id's secret; a root of another version may refuse instead. */
	rc = ccom_bs_auth_connect(fd, id->secret, id->magic, ext ? CCOM_BS_HELLO_MULTI : CCOM_BS_HELLO,
				  a->rank, deadline, a->abort, &ah, nonce_a, &rep);
	if (rc == -EIO) {
		char why[200];

		close(fd);
		snprintf(why, sizeof(why), "%s", ccomGetLastError(NULL));
		ccom_set_last_error("Bootstrap: rank %d: no nonce for the connection to the root at %s: %s",
				    a->rank, ra, why);
		return rc;
	}
	if (rc == -EKEYREJECTED) {
		close(fd);
		ccom_set_last_error("Bootstrap: rank %d: authentication failed with the bootstrap root at %s: it does not hold this job's key (another job's id, different CCOM_COMM_SECRET or CCOM_COMM_SECRET_FILE contents on the ranks, or the root's address now belongs to another program); pass every rank the same unique id (or CCOM_COMM_ID) and the same secret",
				    a->rank, ra);
		return -EBADMSG;
	}
	refused = rc == 1;
	if (refused)
		rc = 0;
	bs_make_hello(bs, a, id, ext ? CCOM_BS_HELLO_MULTI : CCOM_BS_HELLO, &h);
	/*
	 * The root reports missing ranks before this rank's deadline; give its
	 * verdict a short grace (10 % of the timeout, 0.5 to 5 s) beyond it so
	 * that a loaded host does not turn "ranks 2,4 never checked in" into
	 * an anonymous timeout.
	 */
	grace = grace < 500000 ? 500000 : grace > 5000000 ? 5000000 : grace;
	verdict_deadline = deadline + grace;
	if (refused) {
		/* The magic and type are in; the rest of the verdict follows. */
		rc = ccom_sock_recv_all(fd, (char *)&rep + sizeof(uint64_t) + sizeof(uint32_t),
					sizeof(rep) - sizeof(uint64_t) - sizeof(uint32_t),
					verdict_deadline, a->abort);
	} else if (!rc) {
		rc = ccom_sock_send_all(fd, &h, sizeof(h), deadline, a->abort);
		if (!rc && ext) {
			struct ccom_bs_hello_ext x = *ext;

			/* Only this root can unwrap the key it will use towards root 0. */
			ccom_bs_key_wrap(id->secret, &ah, nonce_a, ext->subroot_key, x.subroot_key);
			rc = ccom_sock_send_all(fd, &x, sizeof(x), deadline, a->abort);
			explicit_bzero(&x, sizeof(x));
		}
		if (!rc) {
			ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d/%d checked in with the root at %s",
				  a->rank, a->nranks, ra);
			rc = ccom_sock_recv_all(fd, &rep, sizeof(rep), verdict_deadline, a->abort);
		}
	}
	if (!rc && (rep.magic != id->magic || rep.type != CCOM_BS_REPLY ||
		    rep.msg_len > CCOM_BS_MAX_MSG))
		rc = -EBADMSG;
	/*
	 * A refusal comes before any proof: it may only fail this rank (with
	 * its text, marked as unproven), never hand it a ring or addresses.
	 */
	if (!rc && refused && !rep.err) {
		close(fd);
		ccom_set_last_error("Bootstrap: rank %d: authentication failed with the bootstrap root at %s: it answered with a success before proving it holds the job's key (not a ccom root of this job); pass every rank the same unique id (or CCOM_COMM_ID) and the same secret",
				    a->rank, ra);
		return -EBADMSG;
	}
	if (!rc && rep.msg_len)
		rc = ccom_sock_recv_all(fd, msg, rep.msg_len, verdict_deadline, a->abort);
	close(fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d of %d got no usable answer from the bootstrap root at %s: %s%s",
				    a->rank, a->nranks, ra, ccom_bs_err_str(rc),
				    rc == -ETIMEDOUT ? " (other ranks did not check in and the root did not report in time; CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	if (!rep.err) {
		const struct ccom_bs_addr_entry *e = (const void *)msg;
		size_t i;

		/* Addresses of the partners of the Bruck address all-gather. */
		for (i = 0; i < rep.msg_len / sizeof(*e); i++) {
			if (e[i].rank < 0 || e[i].rank >= a->nranks) {
				ccom_set_last_error("Bootstrap: rank %d: malformed answer from the root at %s (address of rank %d)",
						    a->rank, ra, e[i].rank);
				return -EPROTO;
			}
			bs->addrs[e[i].rank] = e[i].addr;
		}
	}
	if (rep.err) {
		msg[rep.msg_len] = '\0';
		if (refused) {
			ccom_set_last_error("Bootstrap: rank %d: the root at %s refused this rank before authenticating (an unproven answer, from an older libccom or another program): %s",
					    a->rank, ra, rep.msg_len ? msg : "(no reason given)");
			return -EBADE;
		}
		ccom_set_last_error("Bootstrap: rank %d: the root refused the job: %s", a->rank,
				    rep.msg_len ? msg : "(no reason given)");
		return rep.err < 0 ? rep.err : -EPROTO;
	}
	*next = rep.next;
	return 0;
}

static int bs_ring_connect(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
			   const union ccom_sockaddr *next)
{
	int64_t deadline = a->start_us + a->timeout_ms * 1000;
	int nxt = (bs->rank + 1) % bs->nranks;
	char na[80];
	int rc;

	bs->addrs[nxt] = *next;
	rc = ccom_bs_connect_peer(bs, nxt, CCOM_BS_RING, deadline, &bs->ring_send_fd);
	if (rc) {
		ccom_set_last_error("Bootstrap: rank %d could not connect to rank %d at %s: %s",
				    bs->rank, nxt, ccom_addr_str(next, na, sizeof(na)),
				    ccom_bs_err_str(rc));
		return rc == -EKEYREJECTED ? -EBADMSG : rc;
	}
	while (bs->ring_recv_fd < 0) {
		rc = ccom_bs_progress(bs, deadline, -1, 0);
		if (rc) {
			ccom_set_last_error("Bootstrap: rank %d waiting for the ring connection from rank %d: %s",
					    bs->rank, (bs->rank - 1 + bs->nranks) % bs->nranks,
					    ccom_bs_err_str(rc));
			return rc;
		}
	}
	bs->addrs[bs->rank] = bs->listen_addr;
	/*
	 * The ring all-gather takes nranks - 1 steps in sequence; Bruck over
	 * p2p takes log2(nranks) rounds (the root sent the partner addresses).
	 * On small jobs they cost the same: keep the ring there.
	 */
	if (bs->nranks <= BS_RING_ALLGATHER_MAX)
		return ccom_bs_ring_allgather_locked(bs, bs->addrs, sizeof(*bs->addrs));
	return ccom_bs_bruck_allgather_locked(bs, bs->addrs, sizeof(*bs->addrs));
}

static struct ccom_bootstrap *bs_alloc(const struct ccom_bootstrap_args *a, uint64_t magic,
				       const uint8_t *key)
{
	struct ccom_bootstrap *bs = calloc(1, sizeof(*bs));

	if (!bs)
		return NULL;
	bs->rank = a->rank;
	bs->nranks = a->nranks;
	bs->magic = magic;
	memcpy(bs->key, key, sizeof(bs->key));
	bs->timeout_us = a->timeout_ms * 1000;
	bs->abort = a->abort;
	bs->listen_fd = bs->ring_send_fd = bs->ring_recv_fd = -1;
	pthread_mutex_init(&bs->lock, NULL);
	bs->addrs = calloc(a->nranks, sizeof(*bs->addrs));
	if (!bs->addrs || ccom_bs_msg_init(bs)) {
		ccom_bootstrap_close(bs);
		return NULL;
	}
	return bs;
}

/*
 * Several ids: this rank checks in with the root of ids[rank * nids /
 * nranks] (into @id), telling it where root 0 is (@ext); the ring's magic
 * is ids[0]'s (@magic0).
 */
static int bs_multi_ids(const struct ccom_bootstrap_args *a, struct ccom_bs_id *id,
			struct ccom_bs_hello_ext *ext, uint64_t *magic0, uint8_t *key0)
{
	struct ccom_bs_id id0;
	int idx = (int)((int64_t)a->rank * a->nids / a->nranks), rc;

	rc = ccom_bs_id_decode(&a->ids[0], &id0);
	if (!rc)
		rc = ccom_bs_id_decode(&a->ids[idx], id);
	if (rc)
		return rc;
	if ((id0.flags | id->flags) & CCOM_BS_ID_ROOT_AT_RANK0) {
		ccom_set_last_error("Bootstrap: rank %d: an id made from CCOM_COMM_ID (root hosted by rank 0) cannot be one of several ids; create each id with ccomGetUniqueId",
				    a->rank);
		return -EINVAL;
	}
	memset(ext, 0, sizeof(*ext));
	ext->nids = (uint32_t)a->nids;
	ext->idx = (uint32_t)idx;
	ext->root0_magic = id0.magic;
	ext->root0 = id0.root;
	if (idx > 0)
		ccom_bs_subroot_key(id0.secret, idx, ext->subroot_key);
	*magic0 = id0.magic;
	memcpy(key0, id0.secret, CCOM_BS_KEY_BYTES);
	explicit_bzero(&id0, sizeof(id0));
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank %d checks in with root %d of %d", a->rank, idx,
		  a->nids);
	return 0;
}

/* Rank 0 of a job whose key anyone can compute (CCOM_COMM_ID, no secret): one WARN. */
static void bs_warn_public(const struct ccom_bootstrap_args *a, const struct ccom_bs_id *id)
{
	char ra[80];

	if (a->rank || !(id->flags & CCOM_BS_ID_ROOT_AT_RANK0) || (id->flags & CCOM_BS_ID_KEYED))
		return;
	ccom_warn("Bootstrap: this job's unique id is made from the address %s alone (CCOM_COMM_ID, MASTER_ADDR): its key is public, so anyone who can reach that port can join or fail the job; set CCOM_COMM_SECRET (or CCOM_COMM_SECRET_FILE, a file only this user can read) to the same secret on every rank",
		  ccom_addr_str(&id->root, ra, sizeof(ra)));
}

int ccom_bootstrap_init(const struct ccom_bootstrap_args *a, struct ccom_bootstrap **out)
{
	struct ccom_bs_id id;
	struct ccom_bs_hello_ext ext;
	struct ccom_bootstrap *bs;
	union ccom_sockaddr next;
	uint8_t key[CCOM_BS_KEY_BYTES];
	uint64_t magic = 0;
	int rc;

	if (a->nranks > CCOM_BS_MAX_RANKS) {
		ccom_set_last_error("Bootstrap: nranks %d is above the bootstrap's limit of %d ranks",
				    a->nranks, CCOM_BS_MAX_RANKS);
		return -EINVAL;
	}
	if (a->nids > 1)
		rc = bs_multi_ids(a, &id, &ext, &magic, key);
	else
		rc = ccom_bs_id_decode(a->id, &id);
	if (rc)
		return rc;
	bs_warn_public(a, &id);
	if (a->nids <= 1) {
		magic = id.magic;
		memcpy(key, id.secret, sizeof(key));
	}
	bs = bs_alloc(a, magic, key);
	explicit_bzero(key, sizeof(key));
	if (!bs) {
		ccom_set_last_error("Bootstrap: out of memory for %d ranks", a->nranks);
		return -ENOMEM;
	}
	if ((id.flags & CCOM_BS_ID_ROOT_AT_RANK0) && a->rank == 0) {
		union ccom_sockaddr ra = id.root;
		char s[80];
		int lfd;

		rc = ccom_sock_listen(&ra, SOMAXCONN, &lfd);
		if (rc) {
			ccom_set_last_error("Bootstrap: rank 0 cannot host the root at %s (CCOM_COMM_ID): %s; the address must belong to rank 0's host and the port be free",
					    ccom_addr_str(&ra, s, sizeof(s)), strerror(-rc));
			goto err_close;
		}
		rc = ccom_bs_root_start(lfd, id.magic, id.secret);
		if (rc) {
			close(lfd);
			ccom_set_last_error("Bootstrap: cannot start the root thread: %s", strerror(-rc));
			goto err_close;
		}
		ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : rank 0 hosts the root at %s", s);
	}
	rc = bs_listen(&id.root, &bs->listen_addr, &bs->listen_fd, "bootstrap ring and p2p");
	if (rc)
		goto err_close;
	if (ccom_bs_hier_wanted(a)) {
		struct ccom_bs_hello h;

		/* Only host leaders reach the root: no stagger. */
		bs_make_hello(bs, a, &id, CCOM_BS_LOCAL, &h);
		rc = ccom_bs_hier_init(bs, a, &id, a->nids > 1 ? &ext : NULL, &h);
		if (rc)
			goto err_close;
		ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : %d ranks' addresses gathered through the host leaders",
			  bs->nranks);
		*out = bs;
		return 0;
	}
	bs_stagger(a);
	rc = bs_checkin(bs, a, &id, a->nids > 1 ? &ext : NULL, &next);
	if (rc)
		goto err_close;
	rc = bs_ring_connect(bs, a, &next);
	if (rc)
		goto err_close;
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap : ring of %d ranks connected, addresses gathered",
		  bs->nranks);
	*out = bs;
	return 0;
err_close:
	ccom_bootstrap_close(bs);
	return rc;
}

const void *ccom_bootstrap_listen_addr(const struct ccom_bootstrap *bs, size_t *len)
{
	*len = ccom_addr_len(&bs->listen_addr);
	return &bs->listen_addr;
}

void ccom_bootstrap_close(struct ccom_bootstrap *bs)
{
	if (!bs)
		return;
	ccom_bs_msg_fini(bs);
	if (bs->listen_fd >= 0)
		close(bs->listen_fd);
	if (bs->ring_send_fd >= 0)
		close(bs->ring_send_fd);
	if (bs->ring_recv_fd >= 0)
		close(bs->ring_recv_fd);
	pthread_mutex_destroy(&bs->lock);
	free(bs->addrs);
	explicit_bzero(bs->key, sizeof(bs->key));
	free(bs);
}
