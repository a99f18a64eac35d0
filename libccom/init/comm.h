/* SPDX-License-Identifier: MIT */
/*
 * comm.h - struct ccomComm, the communicator, shared by every layer.
 *
 * Owned by init/ (lifecycle); coll/, transport/ etc. hang their state off
 * @coll and read the identity fields, which are immutable once init has
 * reached the connect stage.
 */
#ifndef CCOM_INIT_COMM_H
#define CCOM_INIT_COMM_H

#include <stdatomic.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "ccom.h"

#define CCOM_COMM_MAGIC 0x0cc0c0aa0cc0c0aaULL

/* Per-rank identity exchanged in the peer-info all-gather. */
struct ccom_peer_info {
	int32_t rank;
	int32_t device;		/* nccom device index or -1 */
	uint64_t host_hash;	/* hostname/boot id hash salted with comm_hash */
	uint64_t pid_hash;	/* pid namespace + pid hash salted with comm_hash */
	int32_t pid;
	uint32_t version;	/* CCOM_VERSION_CODE */
	uint64_t build_hash;
	uint64_t shm_dev;	/* st_dev of /dev/shm: same value => shm usable */
	struct sockaddr_in6 listen_addr; /* bootstrap p2p listen address (v4 mapped or v6) */
	uint8_t reserved[32];
};

/* The communicator.  Fields marked [init] are set by init and then constant. */
struct ccomComm {
	uint64_t start_magic;
	int rank;			/* [init] */
	int nranks;			/* [init] */
	uint64_t comm_hash;		/* [init] hash of the unique id (+ split salt) */
	uint64_t magic;			/* [init] bootstrap magic */
	ccomConfig_t config;		/* [init] effective config */
	int device;			/* [init] nccom device or -1 */

	/* Topology of ranks, [init] after the peer-info stage. */
	struct ccom_peer_info *peers;	/* nranks entries */
	int node;			/* index of this rank's host */
	int nnodes;
	int *rank_to_node;		/* nranks entries */
	int *rank_to_local;		/* local rank of each rank */
	int local_rank;
	int local_nranks;
	int *local_to_rank;		/* local_nranks entries, sorted by rank */
	int intra_proc_rank;		/* rank among ranks of this process on this host */
	int intra_proc_nranks;

	struct ccom_bootstrap *bootstrap; /* [init] */

	/*
	 * Abort flag: set by ccomCommAbort() (any thread), read by every
	 * blocking loop in bootstrap, transports and progress.
	 */
	atomic_int abort_flag;
	/* ccomInProgress during init, ccomSuccess after, or the first error. */
	_Atomic ccomResult_t async_result;

	/* Topology and graphs, set by ccom_topo_init() (topo/topo.h). */
	struct ccom_topo *topo;

	/* Data-path state owned by coll/ (opaque here). */
	struct ccom_coll_state *coll;

	uint64_t end_magic;
};

/*
 * Hooks implemented by the data path (coll/, transport/, stream/) and called
 * by init/: ccom_coll_comm_init() at the connect stage (collective over the
 * comm: it may use the bootstrap), _fini() in destroy after finalize, and
 * _abort() from ccomCommAbort() (any thread: wake and fail every wait).
 * All return 0 or -errno after ccom_set_last_error().
 */
int ccom_coll_comm_init(struct ccomComm *comm);
int ccom_coll_comm_finalize(struct ccomComm *comm);
void ccom_coll_comm_abort(struct ccomComm *comm);
void ccom_coll_comm_fini(struct ccomComm *comm);

/* Record an asynchronous error (first one wins) and its sentence. */
void ccom_comm_set_async_error(struct ccomComm *comm, ccomResult_t res);

/* True if @comm is a live communicator (magic check), for argument validation. */
int ccom_comm_valid(const struct ccomComm *comm);

static inline int ccom_comm_aborted(const struct ccomComm *comm)
{
	return atomic_load_explicit(&comm->abort_flag, memory_order_relaxed);
}

#endif
