/* SPDX-License-Identifier: MIT */
/*
 * wire.h - bootstrap wire format (private to bootstrap/).  Every connection
 * starts with a 64-bit magic: the unique id's magic towards the root, the
 * comm magic between ranks.  Layout changes bump CCOM_ABI_COMPAT_ID; struct
 * ccom_bs_reply's first fields never change so that a skewed rank can still
 * be told why it was refused.
 */
#ifndef CCOM_BOOTSTRAP_WIRE_H
#define CCOM_BOOTSTRAP_WIRE_H

#include <stdint.h>

#include "ccom.h"
#include "util/socket.h"

#define CCOM_BS_FIXED_MAGIC 0x63636f6d2d636f6dULL /* "ccom-com", ids from CCOM_COMM_ID */
#define CCOM_BS_ID_VERSION 1
#define CCOM_BS_ID_ROOT_AT_RANK0 0x1u

enum ccom_bs_msg {
	CCOM_BS_HELLO = 0x4c454831,	/* rank -> root check-in */
	CCOM_BS_REPLY = 0x504c5231,	/* root -> rank verdict */
	CCOM_BS_RING = 0x474e5231,	/* rank -> next rank, ring connection */
	CCOM_BS_P2P = 0x50325031,	/* rank -> rank, p2p connection */
};

/* The 128-byte ccomUniqueId, seen from inside. */
struct ccom_bs_id {
	uint64_t magic;
	uint32_t id_version;
	uint32_t flags;
	union ccom_sockaddr root;
};
_Static_assert(sizeof(struct ccom_bs_id) <= CCOM_UNIQUE_ID_BYTES, "unique id too large");

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

struct ccom_bs_conn_hello {
	uint64_t magic;
	uint32_t type;
	int32_t rank;
};

struct ccom_bs_frame {
	uint32_t tag;
	uint32_t pad;
	uint64_t size;
};

#define CCOM_BS_MAX_MSG 1024

#endif
