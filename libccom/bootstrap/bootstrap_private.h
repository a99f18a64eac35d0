/* SPDX-License-Identifier: MIT */
/*
 * bootstrap_private.h - what the files of bootstrap/ share (private to the
 * folder; the rest of libccom uses bootstrap.h).  The files call each other
 * one way only, top to bottom:
 *
 *   bootstrap.c   unique id and root start, init (check-in, ring), close
 *   allgather.c   ring / Bruck all-gather, barriers, subset versions
 *   msg.c         connections between ranks, (peer, tag) messages, progress
 *   hier.c        the hierarchical bootstrap: host leaders, their ring
 *   root.c        the root thread
 *   id.c          unique id encode/decode and magic, job secret, announced identity
 *   rebuild.c     what ccomCommShrink needs of a live bootstrap (calls msg.c)
 *   auth.c        the challenge-response of every connection (auth.h)
 *   mac.c         SHA-256, HMAC-SHA-256 (mac.h)
 *   datakey.c     the MAC of the transports' data-connection hellos
 *
 * bootstrap.c calls all below it, allgather.c calls msg.c, hier.c calls
 * msg.c, auth.c and mac.c, root.c calls
 * id.c and auth.c, msg.c calls auth.c, id.c calls auth.c and mac.c,
 * auth.c and datakey.c call mac.c, which calls no other file of the folder.
 */
#ifndef CCOM_BOOTSTRAP_PRIVATE_H
#define CCOM_BOOTSTRAP_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ccom.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/wire.h"

/* A message that arrived (or was sent to this rank itself), not yet received. */
struct bs_msg {
	struct bs_msg *next;
	int peer;
	uint32_t tag;
	size_t size;
	char data[];
};

/* Receive state of the p2p connection from one peer. */
struct bs_rx {
	int fd;			/* -1: not connected yet */
	int closed;		/* peer closed it, or it was dropped (@err) */
	int err;		/* -errno: dropped for breaking the protocol (-EMSGSIZE) */
	struct ccom_bs_frame hdr;
	size_t hdr_got;
	struct bs_msg *msg;	/* payload being read */
	size_t got;
};

/*
 * An accepted connection that has not authenticated yet: it reads the
 * connector's struct ccom_bs_auth_hello (@answering 0), sends the
 * challenge, then reads the answer (@answering 1).
 */
struct bs_pending {
	int fd;
	int answering;
	size_t got;		/* bytes of the message being read */
	int64_t since;
	union ccom_sockaddr from;
	struct ccom_bs_auth_hello ah;
	uint8_t nonce[CCOM_BS_NONCE_BYTES];	/* the challenge's */
	struct ccom_bs_auth_answer ans;
};

struct ccom_bootstrap {
	int rank;
	int nranks;
	uint64_t magic;		/* comm magic of rank-to-rank connections */
	uint8_t key[CCOM_BS_KEY_BYTES];	/* their key: the secret of the id (ids[0]) */
	int64_t timeout_us;
	const atomic_int *abort;
	pthread_mutex_t lock;	/* serialises every operation on this bootstrap */
	int listen_fd;
	union ccom_sockaddr listen_addr;
	int ring_send_fd;
	int ring_recv_fd;		/* filed by msg.c when the predecessor connects */
	union ccom_sockaddr *addrs;	/* listen address of every rank */
	/* Owned by msg.c (ccom_bs_msg_init/fini): */
	int *send_fds;			/* p2p connection to each peer, -1 until used */
	struct bs_rx *rx;		/* p2p connection from each peer */
	struct bs_pending *pend;	/* accepted connections whose hello is incomplete */
	int npend;
	int pend_cap;
	struct bs_msg *q_head;		/* arrived, unmatched messages (FIFO) */
	struct bs_msg *q_tail;
};

/* id.c: the unique id seen from inside (struct ccom_bs_id). */

/* Copy @h into a zeroed @id. */
void ccom_bs_id_encode(const struct ccom_bs_id *h, ccomUniqueId *id);

/*
 * Copy @id into @h, the job secret mixed into @h->secret (ccom_bs_id_mix_secret,
 * CCOM_BS_ID_KEYED then set in @h->flags); -EINVAL after
 * ccom_set_last_error() unless it is a valid id and the secret is usable.
 */
int ccom_bs_id_decode(const ccomUniqueId *id, struct ccom_bs_id *h);

/*
 * The job secret (CCOM_COMM_SECRET, or the contents of
 * CCOM_COMM_SECRET_FILE, which must be a regular file of this user that no
 * one else can read), hashed into @out: 1; 0 when neither is set; -EINVAL
 * after ccom_set_last_error() when it is unusable.
 */
int ccom_bs_comm_secret(uint8_t out[CCOM_BS_KEY_BYTES]);

/*
 * Replace an id's @key by HMAC(job secret, key) when a job secret is set:
 * 1, 0 (none) or -EINVAL after ccom_set_last_error().
 */
int ccom_bs_id_mix_secret(uint8_t key[CCOM_BS_KEY_BYTES]);

/*
 * A random magic for a fresh root: never 0 (invalid) nor the fixed
 * CCOM_COMM_ID one.  0, or -EIO after ccom_set_last_error().
 */
int ccom_bs_random_magic(uint64_t *magic);

/*
 * root.c: start a detached root thread serving @listen_fd (taken over),
 * authenticating its connections with the id's @secret.  0 or -errno.
 */
int ccom_bs_root_start(int listen_fd, uint64_t magic, const uint8_t secret[CCOM_BS_KEY_BYTES]);

/*
 * msg.c: connections between ranks, (peer, tag) messages and their
 * progress.  The _locked functions are called with bs->lock held (or by
 * ccom_bootstrap_init, before @bs is shared); they return 0 or -errno, the
 * send/recv ones after ccom_set_last_error().
 */

/* Allocate the per-peer connection state of @bs (bs->nranks set): 0 or -ENOMEM. */
int ccom_bs_msg_init(struct ccom_bootstrap *bs);

/* Close the p2p and pending connections, free queued messages and the state. */
void ccom_bs_msg_fini(struct ccom_bootstrap *bs);

/* The largest frame @bs sends or accepts: nranks all-gather slots, at least CCOM_BS_MIN_FRAME. */
static inline size_t ccom_bs_max_frame(const struct ccom_bootstrap *bs)
{
	size_t f = (size_t)bs->nranks * CCOM_BS_MAX_SLOT;

	return f > CCOM_BS_MIN_FRAME ? f : CCOM_BS_MIN_FRAME;
}

/* The sentence for a bootstrap -errno (timeouts, abort, peer gone, foreign peer). */
const char *ccom_bs_err_str(int rc);

/* -EINVAL after ccom_set_last_error() unless 0 <= @peer < nranks. */
int ccom_bs_check_peer(struct ccom_bootstrap *bs, int peer);

/*
 * Wait up to one poll slice for incoming connections and messages; queue
 * everything that arrived.  @wfd (or -1) is also polled for @wevents.
 * -ETIMEDOUT past @deadline, -ECANCELED on abort.  Sets no error text.
 */
int ccom_bs_progress(struct ccom_bootstrap *bs, int64_t deadline, int wfd, short wevents);

/* Connect to @peer's listen address and send the hello of @type (CCOM_BS_RING/P2P). */
int ccom_bs_connect_peer(struct ccom_bootstrap *bs, int peer, uint32_t type, int64_t deadline,
			 int *out);

int ccom_bs_send_locked(struct ccom_bootstrap *bs, int peer, int tag, const void *data,
			size_t size);
int ccom_bs_recv_locked(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size);
/* Copy a dequeued message of @tag into @data (@size bytes expected) and free it. */
int ccom_bs_msg_consume(struct ccom_bootstrap *bs, struct bs_msg *m, int tag, void *data,
			size_t size);

/*
 * hier.c: 1 if this job bootstraps hierarchically (CCOM_BOOTSTRAP_HIER,
 * else nranks >= CCOM_BOOTSTRAP_HIER_THRESHOLD; with one id or several).
 */
int ccom_bs_hier_wanted(const struct ccom_bootstrap_args *a);

/*
 * hier.c: check in through this host's leader (or be it), fill every
 * rank's address in bs->addrs.  @id is the id this rank checks in with
 * (ids[rank * nids / nranks] with several, @ext then their shape, else
 * NULL); @h is this rank's check-in (its type is set here).  0 or -errno
 * after ccom_set_last_error().
 */
int ccom_bs_hier_init(struct ccom_bootstrap *bs, const struct ccom_bootstrap_args *a,
		      const struct ccom_bs_id *id, const struct ccom_bs_hello_ext *ext,
		      struct ccom_bs_hello *h);

/* allgather.c: the all-gathers of bootstrap.h, for a caller holding bs->lock. */
int ccom_bs_ring_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot);
int ccom_bs_bruck_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot);

#endif
