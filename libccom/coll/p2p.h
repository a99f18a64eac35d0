/* SPDX-License-Identifier: MIT */
/*
 * p2p.h - what the point-to-point files of coll/ share: the header every
 * message carries on its stream (p2p.c writes and checks it, p2p_any.c
 * recognises it at the head of a stream) and the data phase.
 */
#ifndef CCOM_COLL_P2P_H
#define CCOM_COLL_P2P_H

#include <stdint.h>

struct ccomComm;
struct ccom_op;

/*
 * The first word of a p2p header on the wire, little-endian: "CCP2" for
 * the user's ccomSend(), "CCPC" for a collective's (coll/rooted.c), which
 * an any-source receive must not take.
 */
#define CCOM_P2P_MAGIC 0x32504343u
#define CCOM_P2P_MAGIC_COLL 0x43504343u

/*
 * struct ccom_p2p_hdr - goes before every send's data on its stream
 * (host byte order: the ranks of a comm share an ABI).
 * @magic: CCOM_P2P_MAGIC (CCOM_P2P_MAGIC_COLL in a collective); a collective's bytes on a network stream start
 *	with its signature's magic instead (proxy/xfer.h)
 * @from: the sender's rank
 * @seq: 1, 2, ...: the sends from @from to this receiver so far, so a
 *	receiver knows which one it expects next
 * @bytes: the data that follows
 */
struct ccom_p2p_hdr {
	uint32_t magic;
	int32_t from;
	uint64_t seq;
	uint64_t bytes;
};

_Static_assert(sizeof(struct ccom_p2p_hdr) == 24, "the header has no padding");

/*
 * Move the data of @ops[0..@nops) whose headers went through (@bytes[i]:
 * the size both ends agreed on; sends to or receives from self are done):
 * the nccom engine first where it takes them, the transports for the
 * rest.  0 or -errno.
 */
int ccom_p2p_data(struct ccomComm *comm, struct ccom_op *ops, int nops, const uint64_t *bytes);

/* p2p_any.c: run one ccomRecvAny (@op->root == CCOM_P2P_ANY); 0 or -errno. */
int ccom_p2p_recv_any(struct ccomComm *comm, struct ccom_op *op);

#endif
