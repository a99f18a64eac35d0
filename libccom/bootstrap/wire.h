/* SPDX-License-Identifier: MIT */
/*
 * wire.h - bootstrap wire format (private to bootstrap/), version
 * CCOM_BS_WIRE_VERSION.  Every connection starts with a 64-bit magic (the
 * unique id's towards the root, the comm magic between ranks) and a type.
 * Since version 2 every connection is first authenticated (struct
 * ccom_bs_auth_*: a challenge-response keyed by the unique id's secret,
 * which is never sent; Documentation/libccom/bootstrap.rst); version 1
 * started with the check-in or hello itself.  Version 3 added the
 * hierarchical multi-root check-ins (CCOM_BS_HELLO_HOST_MULTI,
 * CCOM_BS_LOCAL_MULTI) and struct ccom_bs_subroot's @hier.  Layout changes bump
 * CCOM_BS_WIRE_VERSION; the first fields of struct ccom_bs_hello and struct
 * ccom_bs_reply never change, so that a rank of another version can still
 * be told why it was refused.
 */
#ifndef CCOM_BOOTSTRAP_WIRE_H
#define CCOM_BOOTSTRAP_WIRE_H

#include <stdint.h>

#include "ccom.h"
#include "util/socket.h"

#define CCOM_BS_FIXED_MAGIC 0x63636f6d2d636f6dULL /* "ccom-com", ids from CCOM_COMM_ID */
#define CCOM_BS_ID_VERSION 2
#define CCOM_BS_ID_ROOT_AT_RANK0 0x1u
/* From ccomCommGetUniqueId: serves one ccomCommGrow; its root is up before the id is handed out. */
#define CCOM_BS_ID_GROW 0x2u
/* In memory only (never in an id's bytes): the job secret is mixed into @secret. */
#define CCOM_BS_ID_KEYED 0x100u
/* The longest CCOM_COMM_SECRET (or CCOM_COMM_SECRET_FILE's contents), in bytes. */
#define CCOM_BS_SECRET_MAX 4096
#define CCOM_BS_WIRE_VERSION 3
#define CCOM_BS_KEY_BYTES 32
#define CCOM_BS_NONCE_BYTES 16
#define CCOM_BS_MAC_BYTES 32

enum ccom_bs_msg {
	CCOM_BS_HELLO = 0x4c454831,	/* rank -> root check-in */
	CCOM_BS_REPLY = 0x504c5231,	/* root -> rank verdict */
	CCOM_BS_RING = 0x474e5231,	/* rank -> next rank, ring connection */
	CCOM_BS_P2P = 0x50325031,	/* rank -> rank, p2p connection */
	CCOM_BS_HELLO_MULTI = 0x4d454831, /* rank -> root check-in, struct ccom_bs_hello_ext follows */
	CCOM_BS_SUBROOT = 0x42555331,	/* root k > 0 -> root 0: its ranks' table, or its failure */
	CCOM_BS_HELLO_HOST = 0x54534832, /* host leader -> root check-in (hierarchical) */
	CCOM_BS_LOCAL = 0x4c434c32,	/* rank -> its host leader check-in (hierarchical) */
	CCOM_BS_MEMBERS = 0x424d4d32,	/* host leader -> root: ranks of its host, or its failure */
	CCOM_BS_AUTH = 0x48545532,	/* connector -> acceptor: first message of every connection */
	CCOM_BS_CHALLENGE = 0x4c484332,	/* acceptor -> connector: its nonce and proof */
	CCOM_BS_HELLO_HOST_MULTI = 0x4d534833, /* host leader -> root k, struct ccom_bs_hello_ext follows */
	CCOM_BS_LOCAL_MULTI = 0x4d434c33, /* rank -> its host leader, several ids: ext follows */
};

/*
 * The 128-byte ccomUniqueId, seen from inside.  @secret keys the
 * authentication of every connection of the job; it never goes on the wire
 * (ids from CCOM_COMM_ID carry a fixed, public one: no authentication).
 */
struct ccom_bs_id {
	uint64_t magic;
	uint32_t id_version;
	uint32_t flags;
	union ccom_sockaddr root;
	uint8_t secret[CCOM_BS_KEY_BYTES];
	int32_t grow_base;	/* CCOM_BS_ID_GROW: size of the communicator that grows */
	uint64_t grow_hash;	/* CCOM_BS_ID_GROW: the grown communicator's hash */
};
_Static_assert(sizeof(struct ccom_bs_id) <= CCOM_UNIQUE_ID_BYTES, "unique id too large");

/*
 * Authentication (wire version 2), on every connection before anything
 * else: the connector sends struct ccom_bs_auth_hello (its nonce, and the
 * role of the connection: what it sends next, and as whom); the acceptor
 * answers struct ccom_bs_auth_challenge (its own nonce and its proof, a MAC
 * under the key of @role over both nonces and the hello) or, at a root,
 * a struct ccom_bs_reply that refuses the connection (another wire
 * version); the connector checks the proof and sends struct
 * ccom_bs_auth_answer (its own proof, over the same input with the other
 * direction's label), then the role's message.  The key is the unique id's
 * secret; between roots (@role CCOM_BS_SUBROOT) a key derived from ids[0]'s
 * secret and the root's index (bootstrap/auth.h).
 */
struct ccom_bs_auth_hello {
	uint64_t magic;
	uint32_t type;		/* CCOM_BS_AUTH */
	uint32_t wire;		/* CCOM_BS_WIRE_VERSION */
	uint32_t role;		/* CCOM_BS_HELLO, _HELLO_MULTI, _SUBROOT, _RING or _P2P */
	int32_t who;		/* the connector's rank, or its root index (CCOM_BS_SUBROOT) */
	uint8_t nonce[CCOM_BS_NONCE_BYTES];
};

struct ccom_bs_auth_challenge {
	uint64_t magic;
	uint32_t type;		/* CCOM_BS_CHALLENGE */
	uint32_t wire;
	uint8_t nonce[CCOM_BS_NONCE_BYTES];
	uint8_t mac[CCOM_BS_MAC_BYTES];
};

struct ccom_bs_auth_answer {
	uint8_t mac[CCOM_BS_MAC_BYTES];
};

/* The check-in; the layout up to @size is that of every wire version. */
struct ccom_bs_hello {
	uint64_t magic;
	uint32_t type;
	uint32_t abi;
	uint32_t size;		/* sizeof(struct ccom_bs_hello) */
	int32_t rank;
	int32_t nranks;
	uint32_t version;
	uint64_t build_hash;
	uint32_t remaining_ms;	/* time left before this rank gives up */
	int32_t pid;
	char host[64];
	union ccom_sockaddr listen;
};

/*
 * Multi-root bootstrap (ccomCommInitRankScalable with nIds > 1): rank r
 * checks in with root idx = r * nids / nranks, sending a hello of type
 * CCOM_BS_HELLO_MULTI followed by this.  Each root k > 0, once its ranks
 * are in, sends root 0 a struct ccom_bs_subroot and their addresses, and
 * gets back a struct ccom_bs_reply followed by every rank's listen address
 * (msg_len = nranks * sizeof(union ccom_sockaddr)) or root 0's verdict;
 * every root then answers its own ranks as a single root does.
 *
 * Hierarchical and several roots (wire version 3): the ranks of a host
 * that check in with the same root k elect one leader per (host, k) on
 * the socket derived from ids[k]'s secret; a member checks in with
 * CCOM_BS_LOCAL_MULTI followed by this (the leader refuses other nids or
 * idx), the leader with the root with CCOM_BS_HELLO_HOST_MULTI followed
 * by this, then forwards runs of its members as in the one-root case (all
 * in root k's range).  Root k > 0, once its range is in, reports only its
 * leaders (@hier 1, @count leader entries); root 0 answers each root with
 * a reply followed by every leader's entry (msg_len = nleaders * sizeof(
 * struct ccom_bs_addr_entry), sorted by rank), and every root answers its
 * own leaders with their place in the ring of all leaders.
 */
struct ccom_bs_hello_ext {
	uint32_t nids;
	uint32_t idx;		/* the id this rank checks in with */
	uint64_t root0_magic;	/* ids[0]: where roots k > 0 report */
	union ccom_sockaddr root0;
	/*
	 * The key this root uses towards root 0 (derived from ids[0]'s
	 * secret, which this root does not hold), encrypted with a pad derived
	 * from this root's secret and the nonces of this connection.
	 */
	uint8_t subroot_key[CCOM_BS_KEY_BYTES];
};

struct ccom_bs_subroot {
	uint64_t magic;		/* ids[0]'s magic */
	uint32_t type;		/* CCOM_BS_SUBROOT */
	uint32_t abi;
	int32_t idx;
	int32_t nids;
	int32_t nranks;
	int32_t err;		/* 0: count address entries follow; -errno: msg_len bytes of text */
	uint32_t count;
	uint32_t msg_len;
	uint32_t remaining_ms;	/* until the last of its ranks gives up */
	uint32_t hier;		/* 1: hierarchical; @count entries are its host leaders */
};

struct ccom_bs_reply {
	uint64_t magic;
	uint32_t type;
	int32_t err;		/* 0 or -errno */
	uint32_t msg_len;	/* bytes following: error text, or address entries */
	uint32_t pad;
	union ccom_sockaddr next;
};

/*
 * A successful reply is followed by msg_len bytes of these: the listen
 * addresses of the ranks this rank sends to in the all-gather of
 * addresses (rank - 2^k for every 2^k < nranks).
 */
struct ccom_bs_addr_entry {
	int32_t rank;
	int32_t pad;
	union ccom_sockaddr addr;
};

struct ccom_bs_frame {
	uint32_t tag;
	uint32_t pad;
	uint64_t size;
};

/*
 * Hierarchical bootstrap (bootstrap/hier.c): the ranks of a host check in
 * with their host leader (the first of them to bind the host's abstract
 * Unix socket) with a struct ccom_bs_hello of type CCOM_BS_LOCAL; only the
 * leaders check in with the root (CCOM_BS_HELLO_HOST) and then send it,
 * as their ranks arrive, frames of struct ccom_bs_members followed by
 * @count runs (err 0) or @msg_len bytes of text (err -errno: the host's
 * failure).  Once every rank is in, the root answers each leader with a
 * struct ccom_bs_reply whose next is the next leader's listen address,
 * followed by a struct ccom_bs_host_info; the leaders pass their hosts'
 * address tables around their ring, and each answers its ranks with a
 * reply followed by every rank's listen address (msg_len = nranks *
 * sizeof(union ccom_sockaddr)) or the verdict's text.
 */
struct ccom_bs_members {
	uint64_t magic;
	uint32_t type;		/* CCOM_BS_MEMBERS */
	int32_t err;
	uint32_t count;		/* struct ccom_bs_run entries that follow */
	uint32_t msg_len;
};

struct ccom_bs_run {
	int32_t first;
	int32_t n;
};

struct ccom_bs_host_info {
	int32_t nhosts;
	int32_t index;		/* of this leader, leaders sorted by rank */
	int32_t prev_leader;	/* rank */
	int32_t next_leader;
};

#define CCOM_BS_MAX_MSG 1024

/*
 * The most ranks a bootstrap serves (a root refuses a check-in above it):
 * what a root allocates is bounded by what an authenticated peer sends.
 */
#define CCOM_BS_MAX_RANKS (1 << 20)

/*
 * The largest slot of a bootstrap all-gather and the largest frame a rank
 * accepts on a p2p connection: a frame never exceeds an all-gather's
 * largest block, nranks slots (at least CCOM_BS_MIN_FRAME bytes).
 */
#define CCOM_BS_MAX_SLOT 4096
#define CCOM_BS_MIN_FRAME (1024 * 1024)

#endif
