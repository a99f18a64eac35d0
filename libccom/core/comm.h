/* SPDX-License-Identifier: MIT */
/*
 * comm.h - struct ccomComm, the communicator: the one structure every
 * folder of libccom sees (the core of the one-way house, see
 * Documentation/libccom/architecture.rst).
 *
 * Its lifecycle is owned by init/.  Every data-path room hangs its own
 * state off one pointer (opaque here, defined in the room's header): a room
 * reads the identity fields, which are immutable once init has reached the
 * connect stage, and its own state, never another room's.
 */
#ifndef CCOM_CORE_COMM_H
#define CCOM_CORE_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "ccom.h"

#define CCOM_COMM_MAGIC 0x0cc0c0aa0cc0c0aaULL

/* Init stages, in order (see Documentation/libccom/init-stages.rst). */
enum ccom_init_stage {
	CCOM_STAGE_VALIDATE,
	CCOM_STAGE_BOOTSTRAP,
	CCOM_STAGE_PEERINFO,
	CCOM_STAGE_RANKS,
	CCOM_STAGE_TOPO,
	CCOM_STAGE_ALIGN,
	CCOM_STAGE_CONNECT,
	CCOM_STAGE_BARRIER,
	CCOM_STAGE_READY,
	CCOM_INIT_NSTAGES,
};

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
	uint64_t config_digest;	/* hash of settings every rank must share */
	struct sockaddr_in6 listen_addr; /* bootstrap p2p listen address (v4 mapped or v6) */
	char host[40];		/* host name, for messages */
	int32_t ndevices;	/* nccom devices visible on this host (0: no driver) */
	int32_t ncpus;		/* online CPUs of this rank's machine (the tuner's input) */
	uint32_t machine_id;	/* hash of host name + boot id, CCOM_HOSTID ignored: the
				 * same on simulated hosts sharing one machine's CPUs */
	uint8_t reserved[12];
};

/* The communicator.  Fields marked [init] are set by init and then constant. */
struct ccomComm {
	uint64_t start_magic;
	int rank;			/* [init] */
	int nranks;			/* [init] */
	uint64_t comm_hash;		/* [init] hash of the unique id (+ split salt) */
	uint64_t magic;			/* [init] bootstrap magic */
	ccomConfig_t config;		/* [init] effective config */
	/* [init] config.commName's copy ("" if none); config.commName points here. */
	char name[CCOM_COMM_NAME_MAX];
	int device;			/* [init] nccom device or -1 */
	/*
	 * [init] The RDMA port topo/ chose for this rank (topo/nic.c: the
	 * nearest ACTIVE port CCOM_IB_HCA allows); "" leaves net_ib to take
	 * the first one.
	 */
	char ib_dev[64];
	int ib_port;
	/*
	 * [init] The TCP data address topo/ chose for this rank (topo/nic_tcp.c:
	 * the nearest interface CCOM_SOCKET_IFNAME allows; IPv4 v4-mapped) and
	 * its subnet's prefix length; family 0 leaves net_socket on the
	 * bootstrap address.
	 */
	struct {
		struct sockaddr_in6 addr;
		int prefix;
	} tcp_nic;

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
	/* Set (before abort_flag) by ccomCommRevoke(): the comm stays allocated. */
	atomic_int revoked;
	/* ccomInProgress during init, ccomSuccess after, or the first error. */
	_Atomic ccomResult_t async_result;

	/* Topology and graphs, set by ccom_topo_init() (topo/topo.h). */
	struct ccom_topo *topo;

	/*
	 * Data-path rooms, from the top down; each is set up by coll/ at the
	 * connect stage of init and is NULL before (and when unused).
	 */
	struct ccom_coll_state *coll;	/* coll/coll.h: the algorithms' state */
	struct ccom_tune *tune;		/* tune/tune.h: overrides and choices made */
	struct ccom_kdev *kdev;		/* transport/kdev/kdev.h: NULL unless /dev/nccom is used */
	struct ccom_shm *shm;		/* transport/shm.h: NULL if no local peer */
	struct ccom_proxy *proxy;	/* proxy/proxy.h: op queue, progress thread, op deadline */
	/* transport/select.c: the network transport agreed at connect (NULL before: net_socket) */
	const struct ccom_transport_ops *net;

	/* Lifecycle, owned by init/. */
	pthread_mutex_t lock;		/* protects the fields below */
	pthread_cond_t cond;		/* signalled when init_running drops */
	int init_running;		/* an init or nonblocking finalize still uses the comm */
	int init_thread_valid;		/* init_thread must be joined */
	pthread_t init_thread;		/* the nonblocking init's or finalize's thread */
	int finalizing;			/* ccomCommFinalize was called */
	int finalized;			/* ... and its drain completed */
	int split_count;		/* children created by ccomCommSplit */
	int shrink_count;		/* ccomCommShrink calls that reached the exchange */
	/* init/grow.c: ccomCommGrow calls that passed their checks, and this rank's grow id */
	int grow_count;
	int grow_id_state;		/* 0: none, 1: handed out, not used yet, 2: used */
	ccomUniqueId grow_id;		/* from ccomCommGetUniqueId (states 1 and 2) */
	/*
	 * init/shrink.c: run by init at the start of the bootstrap stage (on
	 * the init thread when nonblocking) to agree with the survivors over
	 * the old communicator's bootstrap and fill @id and @magic; it frees
	 * @init_prepare_arg and clears both.  NULL for every other init.
	 */
	int (*init_prepare)(struct ccomComm *comm);
	void *init_prepare_arg;
	ccomUniqueId id;		/* [init] copy of the rendezvous id (ids[0] with several) */
	ccomUniqueId *ids;		/* [init] ccomCommInitRankScalable's nids ids, or NULL */
	int nids;
	int64_t init_start_us;
	int64_t timings_us[CCOM_INIT_NSTAGES]; /* time spent in each stage */
	int64_t init_total_us;		/* API call to ready (0 until ready) */
	char last_error[1024];		/* sentence of the error in async_result */

	struct ccom_publish *publish;	/* publish/: state file, NULL if off */

	uint64_t end_magic;
};

/* True if @comm is a live communicator (magic check), for argument validation. */
static inline int ccom_comm_valid(const struct ccomComm *comm)
{
	return comm && comm->start_magic == CCOM_COMM_MAGIC && comm->end_magic == CCOM_COMM_MAGIC;
}

static inline int ccom_comm_aborted(const struct ccomComm *comm)
{
	return atomic_load_explicit(&comm->abort_flag, memory_order_relaxed);
}

/* How a wait that saw the abort flag says why ("was aborted", "was revoked ..."). */
static inline const char *ccom_comm_stop_reason(const struct ccomComm *comm)
{
	return atomic_load(&comm->revoked) ?
	       "was revoked (ccomCommRevoke); destroy it" : "was aborted";
}

#endif
