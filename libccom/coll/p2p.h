/* SPDX-License-Identifier: MIT */
/*
 * p2p.h - what the point-to-point files of coll/ share: the header every
 * message carries on its stream (p2p.c writes and checks it, p2p_any.c
 * recognises it at the head of a stream) and the any-source match.
 */
#ifndef CCOM_COLL_P2P_H
#define CCOM_COLL_P2P_H

#include <stddef.h>
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
 * "CCPA": the first word of a CMA acknowledgement (coll/cma_p2p.c), which
 * travels on the same streams; a receiver that finds it where a header
 * must be fails (ccomRemoteError).
 */
#define CCOM_CMA_P2P_ACK_MAGIC 0x41504343u

/*
 * Version 2 added @version, @path, @reserved and @addr (version 1 was 24
 * bytes); version 3 grew the CMA acknowledgement to 32 bytes (a receiver
 * that refuses a CMA header answers it: coll/cma_p2p.c).
 */
#define CCOM_P2P_VERSION 3

/*
 * struct ccom_p2p_hdr - goes before every send's data on its stream
 * (host byte order: the ranks of a comm share an ABI).  The receiver
 * checks every field (p2p.c, cma_p2p.c) before it uses one.
 * @magic: CCOM_P2P_MAGIC (CCOM_P2P_MAGIC_COLL in a collective); a collective's bytes on a network stream start
 *	with its signature's magic instead (proxy/xfer.h)
 * @from: the sender's rank
 * @seq: 1, 2, ...: the sends from @from to this receiver so far, so a
 *	receiver knows which one it expects next
 * @bytes: the size of the message
 * @version: CCOM_P2P_VERSION
 * @path: CCOM_P2P_PATH_STREAM (coll/cma.h): @bytes of data follow on the
 *	stream; CCOM_P2P_PATH_CMA: nothing follows, the receiver reads them
 *	at @addr in the sender (a user send between ranks of one host,
 *	chosen by the sender: coll/cma_p2p.c)
 * @reserved: 0
 * @addr: CMA: the send buffer in the sender's address space; else 0
 */
struct ccom_p2p_hdr {
	uint32_t magic;
	int32_t from;
	uint64_t seq;
	uint64_t bytes;
	uint16_t version;
	uint16_t path;
	uint32_t reserved;
	uint64_t addr;
};

_Static_assert(sizeof(struct ccom_p2p_hdr) == 40, "the header has no padding");

/*
 * p2p_any.c: wait for the first send that @op, a ccomRecvAny (@op->root ==
 * CCOM_P2P_ANY), matches; take its header into *@h and set @op->root and
 * *@op->any_peer to its sender.  0 or -errno.
 */
int ccom_p2p_any_match(struct ccomComm *comm, struct ccom_op *op, struct ccom_p2p_hdr *h);

/*
 * After a wait over @n transfers failed with @err: the index of the first
 * receive in @x not complete (-1: none), and in @why (@len bytes) the
 * wait's own sentence without this rank's "rank R: " prefix (or @err's
 * text), for a sentence that names that receive's peer (p2p.c's headers,
 * cma_p2p.c's acknowledgements).
 */
struct ccom_xfer;
int ccom_p2p_first_short(const struct ccomComm *comm, const struct ccom_xfer *x, int n, int err,
			 char *why, size_t len);

#endif
