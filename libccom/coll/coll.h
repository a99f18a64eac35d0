/* SPDX-License-Identifier: MIT */
/*
 * coll.h - the algorithms' room (coll/): its per-communicator state and
 * the hooks init/ calls.  The algorithms themselves are private to coll/
 * (algo.h); the operation record is core/op.h.
 */
#ifndef CCOM_COLL_COLL_H
#define CCOM_COLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccom.h"
#include "proxy/xfer.h"

struct ccomComm;
struct ccom_op;
struct ccom_transport_conn;
struct ccom_hier;

/* The per-communicator state of the algorithms (comm->coll). */
struct ccom_coll_state {
	struct ccomComm *comm;
	struct ccom_channels *channels;	/* direct-engine workers (channels.h), NULL: one */
	struct ccom_transport_conn **conns; /* nranks entries, NULL for self */
	int *ring;			/* ring order (global ranks) */
	int ring_pos;			/* this rank's position in @ring */
	int ncpus;
	struct ccom_hier *hier;		/* hier.c's layout of hosts, built on first use */

	char *tmp;			/* scratch for the ring algorithms */
	size_t tmp_size;
	uint64_t *p2p_send_seq;		/* unused placeholder for ordering checks */
	int p2p_any_next;		/* ccomRecvAny's round robin: the peer it tries first */

	/* First failure: every later op fails with it at once. */
	int broken_err;

	/* Collective-mismatch check (CCOM_CHECK_MISMATCH), see coll_execute(). */
	bool check_mismatch;
	uint64_t coll_seq;		/* collectives (not p2p) executed so far */
	/* Its network half: the signature every network conn carries (xfer.h); cap 0: none. */
	struct ccom_xfer_sig wire_sig;

	/* PreMulSum (redop.c): the comm's custom ops; the premultiplied input (executor only). */
	struct ccom_redops *redops;
	char *premul_tmp;
	size_t premul_tmp_size;

	/* ccomCommRegister's records (register.c), NULL until the first. */
	struct ccom_regs *regs;
	struct ccom_cma *cma;		/* cma.c's state (CCOM_CMA), NULL until first used */

	/* coll.c's small-op memo: the last LL/LL128 choice and the call shape it was made for. */
	struct ccom_pick_memo {
		bool valid;
		int kind;		/* enum ccom_coll_kind */
		ccomDataType_t dtype;
		ccomRedOp_t op;
		int root;
		size_t count;
		int proto;
	} pick_memo;
};

/*
 * Hooks called by init/: ccom_coll_comm_init() at the connect stage
 * (collective over the comm: it may use the bootstrap) sets up every
 * data-path room (the host segment, the transports, the nccom engine, the
 * tuner, the progress thread), _finalize() drains the queue, _fini() in
 * destroy after finalize, and _abort() from ccomCommAbort() (any thread:
 * wake and fail every wait).  All return 0 or -errno after
 * ccom_set_last_error().
 */
int ccom_coll_comm_init(struct ccomComm *comm);
int ccom_coll_comm_finalize(struct ccomComm *comm);
int ccom_coll_comm_abort(struct ccomComm *comm);
/*
 * From ccomCommRevoke() (any thread, abort flag set): tell the local peers
 * (the host segment's broken flag) and wake every wait; frees nothing.
 */
void ccom_coll_comm_revoke(struct ccomComm *comm);
void ccom_coll_comm_fini(struct ccomComm *comm);

#endif
