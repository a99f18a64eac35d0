/* SPDX-License-Identifier: MIT */
/*
 * coll.h - the data path's private state of a communicator and the
 * operation record that travels from the API (coll/api.c) through the
 * stream queue (stream/) to an algorithm (coll/direct.c, coll/ll.c,
 * coll/ring.c, coll/p2p.c).
 */
#ifndef CCOM_COLL_COLL_H
#define CCOM_COLL_COLL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccom.h"

struct ccomComm;
struct ccom_shm;
struct ccom_transport_conn;
struct ccom_stream_queue;
struct ccom_kdev;

enum ccom_coll_kind {
	CCOM_COLL_ALLREDUCE,
	CCOM_COLL_BROADCAST,
	CCOM_COLL_REDUCE,
	CCOM_COLL_ALLGATHER,
	CCOM_COLL_REDUCESCATTER,
	CCOM_COLL_ALLTOALL,
	CCOM_COLL_SEND,
	CCOM_COLL_RECV,
	CCOM_COLL_P2P_GROUP,	/* the sends/recvs of one group, run concurrently */
	CCOM_COLL_NKINDS
};

enum ccom_algo {
	CCOM_ALGO_AUTO = -1,
	CCOM_ALGO_DIRECT = 0,
	CCOM_ALGO_RING = 1,
	CCOM_ALGO_RD = 2,	/* doubling: AllReduce (recursive), AllGather (Bruck); ring for the rest */
	CCOM_ALGO_TREE = 3,	/* binomial tree: Broadcast and Reduce only */
	CCOM_ALGO_NUM
};
enum ccom_proto { CCOM_PROTO_AUTO = -1, CCOM_PROTO_LL = 0, CCOM_PROTO_SIMPLE = 1, CCOM_PROTO_NUM };

/*
 * One operation.  @count follows the API of its kind: elements per rank
 * for allreduce/broadcast/reduce, sendcount for allgather, recvcount for
 * reducescatter, elements per peer block for alltoall, elements for p2p.
 */
struct ccom_op {
	enum ccom_coll_kind kind;
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ccomDataType_t dtype;
	ccomRedOp_t op;
	int root;			/* root, or peer for send/recv */
	struct ccomStream *stream;
	uint64_t stream_seq;		/* position in its stream */
	struct ccom_op *subs;		/* P2P_GROUP: array of nsubs SEND/RECV ops */
	int nsubs;
	struct ccom_op *next;		/* queue / group list link */
};

/* The per-communicator data-path state (comm->coll). */
struct ccom_coll_state {
	struct ccomComm *comm;
	struct ccom_shm *shm;		/* NULL if this rank has no local peer */
	struct ccom_channels *channels;	/* direct-engine workers (channels.h), NULL: one */
	struct ccom_transport_conn **conns; /* nranks entries, NULL for self */
	int *ring;			/* ring order (global ranks) */
	int ring_pos;			/* this rank's position in @ring */
	int ncpus;
	bool all_local;			/* every rank of the comm on this host */

	/* Per op: set by the executor before running an algorithm. */
	int64_t deadline_us;
	int64_t op_timeout_us;
	char *tmp;			/* scratch for the ring algorithms */
	size_t tmp_size;
	uint64_t *p2p_send_seq;		/* unused placeholder for ordering checks */

	/* First failure: every later op fails with it at once. */
	int broken_err;

	/* Tuner overrides (CCOM_ALGO / CCOM_PROTO), -1 = auto. */
	int force_algo;
	int force_proto;
	size_t ll_max_bytes;
	/* Tuner choices (kind, algo, proto) made so far: each is logged once. */
	uint64_t picks_seen[2];

	struct ccom_kdev *kdev;		/* kdev/: NULL unless /dev/nccom is used */

	struct ccom_stream_queue *queue;
	struct ccomStream *default_stream;
	/* Threads inside ccomStreamSynchronize/Query: abort waits for them to leave. */
	atomic_int api_busy;
};

/* Run one op on the calling thread (the progress thread).  0 or -errno. */
int ccom_coll_execute(struct ccomComm *comm, struct ccom_op *op);

/* Algorithms: 0 or -errno after ccom_set_last_error(). */
int ccom_direct_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_ll_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_ring_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_rd_allreduce(struct ccomComm *comm, struct ccom_op *op);
/* Two ranks: pipelined full-duplex reduce-scatter + all-gather with @peer (@pos: 0 or 1). */
int ccom_pair_allreduce(struct ccomComm *comm, struct ccom_op *op, struct ccom_transport_conn *peer,
			int pos);
int ccom_bruck_allgather(struct ccomComm *comm, struct ccom_op *op);
bool ccom_bruck_fits(const struct ccomComm *comm, size_t total_bytes);
int ccom_tree_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops);

/* Tuner: pick algorithm and protocol for @op (tune/tune.c). */
void ccom_tune_pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto);
int ccom_tune_init(struct ccomComm *comm);
const char *ccom_algo_name(int algo);
const char *ccom_proto_name(int proto);

/* Bytes one rank contributes ("size" in ccom-perf terms) for @op. */
size_t ccom_op_bytes(const struct ccomComm *comm, const struct ccom_op *op);

/* Transport-driven progress of a set of transfers (coll/p2p.c). */
struct ccom_xfer {
	struct ccom_transport_conn *conn;
	bool is_send;
	char *buf;
	size_t size;
	size_t done;
	/*
	 * Optional streaming reduction of a receive: as whole elements
	 * arrive in buf, red_dst[i] = red_src[i] OP buf[i] (red_dst may be
	 * red_src), overlapping the reduction with the transfer.
	 */
	char *red_dst;
	const char *red_src;
	const struct ccom_op *red_op;
	size_t red_done;		/* bytes already reduced */
};
int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n);

#endif
