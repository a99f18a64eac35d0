/* SPDX-License-Identifier: MIT */
/*
 * tune.h - the tuner (tune/): one decision per call, the algorithm x
 * protocol that coll/ runs, among the candidates this communicator has:
 * the nccom engine (engine.c: its measured per-collective table and the
 * votes ranks cast for it), and the host algorithms priced by the cost
 * model (tune.c).  Every input is identical on every rank, so is every
 * choice.
 */
#ifndef CCOM_TUNE_TUNE_H
#define CCOM_TUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ccomComm;
struct ccom_op;

enum ccom_algo {
	CCOM_ALGO_AUTO = -1,
	CCOM_ALGO_DIRECT = 0,
	CCOM_ALGO_RING = 1,
	CCOM_ALGO_RD = 2,	/* doubling: AllReduce (recursive), AllGather (Bruck); ring for the rest */
	CCOM_ALGO_TREE = 3,	/* binomial tree: Broadcast and Reduce only */
	/*
	 * Hierarchical, between hosts (coll/hier.c): split-rail AllReduce
	 * (same number of ranks on every host), and reduce / leaders /
	 * broadcast AllReduce; both run Broadcast and Reduce through the
	 * hosts' leaders (logged as rab); ring for the rest.
	 */
	CCOM_ALGO_RAIL = 4,
	CCOM_ALGO_RAB = 5,
	/* AlltoAll aggregated per host pair (coll/hier_alltoall.c); ring for the rest. */
	CCOM_ALGO_HOSTPAIR = 6,
	CCOM_ALGO_NUM,
	/*
	 * The nccom engine's descriptor schedules (coll/kdev_sched.c): chosen
	 * by engine.c's table or CCOM_KDEV=1, never by CCOM_ALGO, and not
	 * logged with the host choices.
	 */
	CCOM_ALGO_ENGINE = CCOM_ALGO_NUM,
};
enum ccom_proto {
	CCOM_PROTO_AUTO = -1,
	CCOM_PROTO_LL = 0,
	CCOM_PROTO_SIMPLE = 1,
	CCOM_PROTO_LL128 = 2,	/* coll/ll128.c: a flag per cache line */
	CCOM_PROTO_NUM
};

/* (collective, algorithm, protocol) triples the log-once bitmap covers (16 kinds at most). */
#define CCOM_TUNE_NPICKS (16 * CCOM_ALGO_NUM * CCOM_PROTO_NUM)

/**
 * struct ccom_tune_engine - the nccom engine as the tuner prices it: how
 *	the kdev room (transport/kdev/) was configured and what its
 *	calibration measured, handed to ccom_tune_init() by coll/
 * @present: the engine runs this communicator's collectives or, with
 *	@p2p_only, its Send/Recv between the ranks of a host
 * @forced: CCOM_KDEV=1: every candidate operation runs on the engine
 * @p2p_only: the communicator spans hosts: Send/Recv only
 * @reduce_fp: the driver reduces floating point (NCCOM_FEAT_REDUCE_FP)
 * @slow: the calibration (transport/kdev/calibrate.c) found the engine's
 *	copy slower than memcpy() on some rank: never chosen automatically
 * @nlocal: ranks on this host
 * @min_bytes: CCOM_KDEV_MIN_BYTES (0: unset)
 * @map_feature: the driver maps grants (NCCOM_FEAT_DMABUF_MMAP): the
 *	mapped path is a candidate of AllReduce (kdev_race.c)
 * @load_key: boot id and driver load ("" unknown): the key of the cache
 *	of kdev_race.c's verdicts
 */
struct ccom_tune_engine {
	bool present;
	bool forced;
	bool p2p_only;
	bool reduce_fp;
	bool slow;
	int nlocal;
	int64_t min_bytes;
	bool map_feature;
	char load_key[128];
};

/**
 * struct ccom_tune_paths - what the data path below the tuner hands it at
 *	init (coll/ fills it): the figures it prices, so that tune/ reads
 *	no transport's state (tools/check-layers keeps tune/ and transport/
 *	apart)
 * @scratch_bytes: coll/'s scratch buffer, the bound of Bruck's AllGather
 *	and of LL128
 * @shm: a host segment joins this host's ranks (transport/shm.c)
 * @shm_oversub: more ranks on this host than online CPUs
 * @shm_chunk: the host segment's staging chunk (bytes)
 * @ll_max_bytes: the payload of an LL slot (per rank)
 * @ll128_fits: whether @op fits LL128 on @nlocal ranks with @scratch
 *	bytes of scratch: the host segment's own rule (transport/shm.h)
 * @net_ib: between hosts the bytes go over verbs (net_ib), else TCP
 * @engine: the nccom engine
 */
struct ccom_tune_paths {
	size_t scratch_bytes;
	bool shm;
	bool shm_oversub;
	size_t shm_chunk;
	size_t ll_max_bytes;
	bool (*ll128_fits)(const struct ccom_op *op, int nlocal, size_t scratch);
	bool net_ib;
	struct ccom_tune_engine engine;
};

/**
 * struct ccom_tune - the tuner's state of a communicator (comm->tune).
 * @paths: what the data path handed ccom_tune_init()
 * @force_algo: CCOM_ALGO, or CCOM_ALGO_AUTO
 * @force_proto: CCOM_PROTO, or CCOM_PROTO_AUTO
 * @direct_ok: every rank on this host and a host segment: the direct
 *	engine and LL are candidates
 * @hier_rab: ranks span hosts and some host holds several: the
 *	hierarchical schedules through the hosts' leaders are candidates
 * @hier_rail: also the same number of ranks on every host: split-rail
 *	AllReduce is a candidate
 * @hier_lmax: most ranks on one host
 * @hier_cpus: CPUs per host: the fewest over the hosts of their
 *	machine's online CPUs divided by the (simulated) hosts sharing
 *	that machine
 * @hier_oversub: some host has fewer CPUs than ranks: the hierarchical
 *	AllReduce is priced by CPU work, not by the critical path
 * @why: the prices behind the latest hierarchical choice, for the log
 * @picks_seen: (collective, algorithm, protocol) choices made so far:
 *	each is logged once
 * @engine_logged: collective kinds whose first engine pick was logged
 * @engine_fp_told: the engine's lack of floating-point reductions was logged
 * @krace: the measured choice between the staged, engine and mapped
 *	paths (kdev_race.c), NULL when not automatic
 */
struct ccom_tune {
	struct ccom_tune_paths paths;
	int force_algo;
	int force_proto;
	bool direct_ok;
	bool hier_rab;
	bool hier_rail;
	int hier_lmax;
	double hier_cpus;
	bool hier_oversub;
	char why[192];
	uint64_t picks_seen[(CCOM_TUNE_NPICKS + 63) / 64];
	uint32_t engine_logged;
	bool engine_fp_told;
	struct ccom_tune_krace *krace;
};

/*
 * Read the overrides into comm->tune (allocated here), with what the data
 * path hands the tuner (@paths, copied); 0 or -ENOMEM.
 */
int ccom_tune_init(struct ccomComm *comm, const struct ccom_tune_paths *paths);
void ccom_tune_fini(struct ccomComm *comm);

/*
 * The choice for @op: CCOM_ALGO_ENGINE when the nccom engine takes it,
 * else the cheapest host algorithm (ccom_tune_pick_host()).
 */
void ccom_tune_pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto);
/*
 * The cheapest host algorithm for @op (also after the engine fell back
 * collectively); the first use of each choice is logged at INFO (TUNE).
 */
void ccom_tune_pick_host(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto);
const char *ccom_algo_name(int algo);
const char *ccom_proto_name(int proto);

/* Capacity rules the algorithms share with the tuner. */
/* True if Bruck's AllGather of @total_bytes fits coll/'s scratch buffer. */
bool ccom_tune_bruck_fits(const struct ccomComm *comm, size_t total_bytes);

/* engine.c: the nccom engine as a candidate. */
/* True if @op should run on the engine (same answer on every rank). */
bool ccom_tune_engine_wants(struct ccomComm *comm, const struct ccom_op *op);
/*
 * This rank's vote for @op in the engine's exchange: true if it prefers
 * shm (an in-place AlltoAll of 2 ranks below 16 MiB).  Ranks may differ in
 * being in place, so this is a vote, not part of ccom_tune_engine_wants().
 */
bool ccom_tune_engine_prefers_shm(struct ccomComm *comm, const struct ccom_op *op);
/*
 * True if a Send/Recv of @bytes with rank @peer runs on the engine; both
 * sides compute it from the same (peer locality, size).
 */
bool ccom_tune_engine_p2p_wants(struct ccomComm *comm, int peer, size_t bytes);

#endif
