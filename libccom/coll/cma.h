/* SPDX-License-Identifier: MIT */
/*
 * cma.h - the CMA path: collectives of one host through
 * process_vm_readv/writev on the ranks' own buffers (cma.c), and
 * Send/Recv above a threshold (cma_p2p.c, on coll/p2p.c's headers).
 */
#ifndef CCOM_COLL_CMA_H
#define CCOM_COLL_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/op.h"
#include "tune/race.h"

struct ccomComm;
struct ccom_p2p_hdr;

#define CCOM_CMA_BUCKETS 48		/* powers of two of the per-rank bytes */

/*
 * auto, one collective and size (power of two), out of place ([0]) or
 * with every rank in place ([1]): race path 0 the staged path, 1 CMA
 * (tune/race.c).
 */
struct ccom_cma_trial {
	struct ccom_race race;
	uint32_t staged_ops;		/* [0]: operations of a staged verdict (cma.c's check-ins) */
	bool open;			/* [1]: measured apart (cached, or every rank was in place) */
};

/*
 * auto, one Send size (power of two), whatever the peer: race path 0 the
 * stream, 1 CMA, measured and decided by the sender alone (cma_p2p.c).
 */
struct ccom_cma_p2p_trial {
	struct ccom_race race;
};

/* A communicator's CMA state (comm->coll->cma), shared by cma.c and cma_p2p.c. */
struct ccom_cma {
	int mode;			/* agreed CCOM_CMA: 0 off, 1 forced, 2 auto */
	bool on;			/* every rank may read every peer */
	char *buf;			/* two bounce blocks and the accumulator */
	volatile uint64_t probe_word;
	uint64_t ops;			/* collectives run on the path */
	uint64_t p2p_ops;		/* Send/Recv messages moved by it (either side) */
	size_t p2p_min;			/* CCOM_CMA_P2P_MIN_BYTES: smaller sends stay on the stream */
	struct ccom_cma_trial trial[CCOM_COLL_NKINDS][CCOM_CMA_BUCKETS][2];
	struct ccom_cma_p2p_trial p2p_trial[CCOM_CMA_BUCKETS];
	struct ccom_cma_trial *pending;	/* a staged operation timed now (auto) */
	uint64_t pending_t0;		/* when it started */
	size_t pending_bytes;
	int pending_idx;
	int cached;			/* verdicts taken from the cache at init */
	int p2p_cached;			/* ... of which this rank's Send/Recv verdicts */
	int32_t recheck_seen;		/* own request every rank has read at this op's barrier */
	uint64_t decided;		/* verdicts measured by this communicator */
	char why[256];			/* the choice, for the topology dump and ccomctl */
};

/* At init, collective over a one-host communicator's ranks: the permission probe and CCOM_CMA. */
int ccom_cma_init(struct ccomComm *comm);
void ccom_cma_fini(struct ccomComm *comm);
/*
 * Run @op on the CMA path: 0 done, 1 not this path (run the staged one;
 * the same answer on every rank), or -errno after ccom_set_last_error().
 */
int ccom_cma_run(struct ccomComm *comm, struct ccom_op *op);
/* The staged path ran the operation ccom_cma_run() answered 1 to (auto's trials time it). */
void ccom_cma_staged_done(struct ccomComm *comm);
/* auto (tests): verdicts taken from the per-boot cache at init, and measured since. */
int ccom_cma_cached(const struct ccomComm *comm);
uint64_t ccom_cma_decided(const struct ccomComm *comm);
/* auto (tests): a verdict kept for @kind and @bytes, out of or (measured apart) in place. */
bool ccom_cma_kept(const struct ccomComm *comm, enum ccom_coll_kind kind, size_t bytes,
		   bool inplace);
/* Operations the CMA path ran on this rank (tests): collectives, Send/Recv messages. */
uint64_t ccom_cma_ops(const struct ccomComm *comm);
uint64_t ccom_cma_p2p_ops(const struct ccomComm *comm);
/* The path's state and why, for the topology dump and the published state. */
const char *ccom_cma_describe(const struct ccomComm *comm);
/*
 * Copy @len bytes between this process and rank @rank's address space at
 * @raddr (a read, or a write with @write) within an operation: 0, or
 * -errno after ccom_set_last_error() naming the peer and the call.
 */
int ccom_cma_move(struct ccomComm *comm, int rank, void *local, uint64_t raddr, size_t len,
		  bool write);

/*
 * cma_p2p.c: Send/Recv of CCOM_CMA_P2P_MIN_BYTES and more between the
 * ranks of one host.  The sender chooses (ccom_cma_p2p_choose()) and
 * says so in its p2p header; the receiver checks the header
 * (ccom_cma_p2p_check()), reads the send buffer with one
 * process_vm_readv (ccom_cma_p2p_read()) and acknowledges it on its own
 * stream back (ccom_cma_p2p_acks()), which the sender waits for before
 * its buffer may change.
 */
#define CCOM_P2P_PATH_STREAM 0		/* the data follows the header on the stream */
#define CCOM_P2P_PATH_CMA 1		/* the receiver reads it at the header's address */

/*
 * The path of a user send of @bytes to @peer: CCOM_P2P_PATH_*.  @trial:
 * the group is this send alone (auto measures only such groups).
 */
int ccom_cma_p2p_choose(struct ccomComm *comm, int peer, size_t bytes, bool trial);
/* A received header's path fields: 0, or -EBADMSG (the peer's fault) after ccom_set_last_error(). */
int ccom_cma_p2p_check(struct ccomComm *comm, const struct ccom_p2p_hdr *h);
/* Receive @len bytes of CMA header @h into @buf: 0 or -errno (the error set). */
int ccom_cma_p2p_read(struct ccomComm *comm, const struct ccom_p2p_hdr *h, void *buf, size_t len);
/*
 * The acknowledgements of a group's CMA messages: for each i with
 * @cma[i], a receive sends the status of its read (@status[i], 0 or an
 * errno) to its peer and a send waits for its peer's.  @refused >= 0: the
 * group's headers failed at receive @refused (@status[@refused]: its
 * errno), whose acknowledgement says so; the other receives were not
 * read.  0, or -errno.
 */
int ccom_cma_p2p_acks(struct ccomComm *comm, const struct ccom_op *ops, int nops,
		      const struct ccom_p2p_hdr *hdr, const bool *cma, const int *status,
		      int refused);
/*
 * Receive @bad of the group refused its header with @err (its sentence
 * set): answer every CMA send of the group (those of this build, whose
 * senders wait) with a refusal, so they fail at once naming the reason,
 * and wait for the acknowledgements of this rank's own CMA sends
 * (@cma_send), whose buffers a peer may still read.  The sentence set
 * stays the refusal's.
 */
void ccom_cma_p2p_refuse(struct ccomComm *comm, const struct ccom_op *ops, int nops,
			 const struct ccom_p2p_hdr *hdr, const bool *cma_send, int bad, int err);
/* auto: the single-send group the sender measured took @ns on path @path. */
void ccom_cma_p2p_timed(struct ccomComm *comm, size_t bytes, int path, uint64_t ns);
/* auto, at init: the Send/Recv races, with this rank's cached verdicts. */
void ccom_cma_p2p_auto_init(struct ccomComm *comm);

#endif
