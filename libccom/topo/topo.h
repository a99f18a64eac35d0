/* SPDX-License-Identifier: MIT */
/*
 * topo.h - topology of a communicator: which ranks share a host (from the
 * peer-info host hashes), this host's CPUs / NUMA nodes / NICs / nccom
 * devices (sysfs, getifaddrs, the nccom uapi), and the graphs built from
 * them (a ring that keeps the ranks of one host together, and a two-level
 * tree).  CCOM_TOPO_DUMP_FILE writes all of it as JSON.
 *
 * Lifecycle: init/ calls ccom_topo_init() at the topology stage (after the
 * peer-info all-gather has filled comm->peers) and ccom_topo_fini() when
 * the communicator is freed.  The result hangs off comm->topo and is
 * constant afterwards, so every layer may read it without locking.
 */
#ifndef CCOM_TOPO_H
#define CCOM_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

struct ccomComm;

#define CCOM_TOPO_MAX_NICS 64
#define CCOM_TOPO_NIC_ADDRS 4
#define CCOM_TOPO_ADDR_LEN 64	/* INET6_ADDRSTRLEN plus "%scope" */
#define CCOM_TOPO_CPULIST_LEN 256

/* One NUMA node of this host (from /sys/devices/system/node/nodeN). */
struct ccom_topo_numa {
	int id;
	int ncpus;
	uint64_t mem_kb;			/* MemTotal of the node, 0 if unknown */
	char cpulist[CCOM_TOPO_CPULIST_LEN];	/* as sysfs prints it */
};

/* One network interface of this host (from /sys/class/net and getifaddrs). */
struct ccom_topo_nic {
	char name[IF_NAMESIZE];
	int speed_mbps;			/* -1 when the driver does not report it */
	int mtu;
	int numa_node;			/* -1 for virtual devices */
	bool up;			/* operstate "up" or "unknown" with IFF_UP */
	bool loopback;
	int naddrs;
	char addrs[CCOM_TOPO_NIC_ADDRS][CCOM_TOPO_ADDR_LEN];
};

/* An interface the TCP transport may use (nic_tcp.c), for the dump. */
#define CCOM_TOPO_TCP_NICS 16
struct ccom_topo_tcp_nic {
	char name[IF_NAMESIZE];
	char addr[CCOM_TOPO_ADDR_LEN];	/* the address the listener would take */
	int prefix;			/* of its subnet */
	int numa_node;			/* -1 for virtual devices */
	bool bootstrap;			/* carries this rank's bootstrap address */
	bool selected;			/* net_socket listens and connects from here */
};

/* Ranks of one host, sorted by rank. */
struct ccom_topo_host {
	uint64_t host_hash;
	int nranks;
	int *ranks;
};

/* Presence of /dev/nccom and what GET_INFO says about it. */
struct ccom_topo_nccom {
	bool present;			/* /dev/nccom exists */
	bool usable;			/* opened and GET_INFO succeeded */
	int ndevs;
	uint32_t abi_version;
	uint64_t features;
	char status[96];		/* why not usable, or "ok" */
};

struct ccom_topo {
	/* The CMA path's state and why (coll/cma.c, after connect; "" before). */
	char cma_path[256];
	/* Hosts, in order of their lowest rank; rank_host[r] indexes hosts[]. */
	int nhosts;
	struct ccom_topo_host *hosts;
	int *rank_host;

	/* This host (the calling rank's view). */
	char hostname[256];
	int ncpus_online;
	int naffinity;				/* CPUs this rank may run on */
	char affinity[CCOM_TOPO_CPULIST_LEN];
	int nnuma;
	struct ccom_topo_numa *numa;
	int local_numa;				/* NUMA node of the affinity, -1 if several */
	int nnics;
	struct ccom_topo_nic *nics;
	int bootstrap_nic;			/* nics[] index carrying the bootstrap address, -1 */
	struct ccom_topo_nccom nccom;

	/*
	 * Placement (bind.c), decided at the topology stage: what CCOM_BIND
	 * did (a sentence), and the NUMA node this rank's shared-memory
	 * staging and FIFOs prefer (transport/shm.c), -1 for first touch.
	 */
	char bind[256];
	int mem_node;
	/* The RDMA port nic.c chose (a sentence: "dev:port (why)"), or why none. */
	char rdma_choice[192];
	/*
	 * The interfaces CCOM_SOCKET_IFNAME allows with an address of the
	 * bootstrap's family (by name), and nic_tcp.c's choice as a sentence.
	 */
	int ntcp;
	struct ccom_topo_tcp_nic tcp[CCOM_TOPO_TCP_NICS];
	char tcp_choice[256];

	/*
	 * Graphs over all ranks.  ring[i] is the rank at ring position i;
	 * ring_pos[r] is rank r's position.  tree_parent[r] is -1 for the root
	 * (rank ring[0]); the tree is a binary tree over host leaders with a
	 * binary tree inside each host.
	 */
	int nranks;
	int *ring;
	int *ring_pos;
	int *tree_parent;
};

/**
 * ccom_topo_init() - discover the topology of @comm and build its graphs.
 * @comm: communicator whose rank, nranks and peers[] are set.
 *
 * Stores the result in comm->topo (freed by ccom_topo_fini()).  Writes the
 * dump when CCOM_TOPO_DUMP_FILE is set (a failure to write it is logged and
 * not fatal).  Local only: no communication.
 *
 * Return: 0, -EINVAL for an inconsistent comm, -ENOMEM, or -EPROTO when the
 * host grouping disagrees with comm->rank_to_node.
 */
int ccom_topo_init(struct ccomComm *comm);

/**
 * ccom_topo_dump() - write CCOM_TOPO_DUMP_FILE (if set) for @comm again.
 * @comm: communicator whose comm->topo is built.
 *
 * ccom_topo_init() writes it first; coll/ writes it again once the ranks
 * have agreed on the network transport, so that the dump's per-peer
 * transports name the one in use (net_ib or net_socket), not the default.
 */
void ccom_topo_dump(const struct ccomComm *comm);

/** ccom_topo_fini() - free comm->topo (NULL-safe) and clear the pointer. */
void ccom_topo_fini(struct ccomComm *comm);
/*
 * The data path's choice of the CMA path (@cma: its state and why),
 * known only after connect: kept for the dump, which is written again
 * where ccom_topo_init() wrote it.
 */
void ccom_topo_note_cma(struct ccomComm *comm, const char *cma);

/* The ranks before and after @rank in the ring. */
int ccom_topo_ring_next(const struct ccom_topo *topo, int rank);
int ccom_topo_ring_prev(const struct ccom_topo *topo, int rank);

/* True if ranks @a and @b are on the same host. */
bool ccom_topo_same_host(const struct ccom_topo *topo, int a, int b);

/*
 * Building blocks, exposed for the tests.
 *
 * ccom_topo_group_hosts() fills topo->hosts / rank_host from @nranks host
 * hashes (hosts ordered by their lowest rank).  ccom_topo_build_graphs()
 * fills ring, ring_pos and tree_parent from the host grouping.
 * ccom_topo_discover_local() fills the "this host" part.
 * ccom_topo_parse_cpulist() parses "0-3,8,10-11" into a bitmap of @nbits bits
 * (returns the number of CPUs or -EINVAL).
 * ccom_topo_free() frees a topo built by these.
 */
int ccom_topo_group_hosts(struct ccom_topo *topo, const uint64_t *host_hash, int nranks);
int ccom_topo_build_graphs(struct ccom_topo *topo);
int ccom_topo_discover_local(struct ccom_topo *topo, const struct sockaddr_in6 *bootstrap_addr);
int ccom_topo_parse_cpulist(const char *s, uint64_t *bits, int nbits);
void ccom_topo_free(struct ccom_topo *topo);
/* Re-read this thread's affinity into naffinity / affinity / local_numa (after a binding). */
void ccom_topo_refresh_affinity(struct ccom_topo *topo);

/**
 * ccom_topo_place() - apply CCOM_BIND and decide this rank's memory node.
 * @topo: the topology of @comm, its local part discovered.
 * @comm: the communicator (rank, local rank, peers' pids).
 *
 * CCOM_BIND=auto binds the calling thread (and the threads it starts
 * later, the progress thread among them) to the CPUs of one NUMA node when
 * the launcher did not bind it: its affinity holds every online CPU, and
 * no other rank of the communicator lives in this process.  The node is
 * that of the rank's network interface (sysfs numa_node) when it has a
 * CPU per local rank, else local rank mod nodes.  A narrower affinity (mpirun --bind-to, taskset,
 * srun --cpu-bind, a cpuset) is kept.  Sets topo->bind and
 * topo->mem_node and logs both at INFO (TOPO).  A failed binding is
 * logged and not fatal.
 */
void ccom_topo_place(struct ccom_topo *topo, const struct ccomComm *comm);

/**
 * ccom_topo_nearest() - the port a rank takes among @n candidates.
 * @nodes: NUMA node of each candidate (-1: unknown, e.g. a virtual device)
 * @n: number of candidates
 * @node: the rank's NUMA node, -1 when its CPUs span several
 * @lrank: the rank's index among the ranks of its host
 * @nnear: if not NULL, set to how many candidates were equally near
 *
 * The candidates on @node, else all; among them the (@lrank mod count)-th,
 * so that the ranks of a host spread over equally near ports.
 *
 * Return: the index into @nodes, -1 when @n is 0.
 */
int ccom_topo_nearest(const int *nodes, int n, int node, int lrank, int *nnear);

/*
 * ccom_topo_pick_rdma() - choose this rank's RDMA port (nic.c) when its
 * ranks span hosts and CCOM_NET is not socket: of the ACTIVE ports
 * CCOM_IB_HCA allows, the nearest (ccom_topo_nearest()); sets comm->ib_dev
 * and comm->ib_port (net_ib opens that port) and topo->rdma_choice, logged
 * at INFO (TOPO, NET).  With fewer than 2 such ports it leaves net_ib's
 * own rule (the first).
 */
void ccom_topo_pick_rdma(struct ccom_topo *topo, struct ccomComm *comm);

/**
 * ccom_topo_tcp_rule() - the TCP interface a rank takes (nic_tcp.c).
 * @c: the candidates (up, not loopback, allowed by CCOM_SOCKET_IFNAME), by name
 * @n: number of candidates
 * @boot: index in @c of the interface with the bootstrap address, -1 if none
 * @node: the rank's NUMA node, -1 when its CPUs span several
 * @lrank: the rank's index among the ranks of its host
 * @nhosts: hosts of the communicator
 * @spec: CCOM_SOCKET_IFNAME, or NULL
 * @why: the choice as a sentence ("ccv1 10.0.1.1 (...)", or why none)
 * @len: size of @why
 *
 * With ranks on several hosts and at least two candidates, the nearest
 * (ccom_topo_nearest()): local rank l of every host built alike takes the
 * same interface (a rail).  Otherwise none: net_socket keeps the bootstrap
 * address, as before this rule existed.
 *
 * Return: the index into @c, or -1 for the bootstrap address.
 */
int ccom_topo_tcp_rule(const struct ccom_topo_tcp_nic *c, int n, int boot, int node, int lrank,
		       int nhosts, const char *spec, char *why, size_t len);

/*
 * ccom_topo_pick_tcp() - list this host's TCP candidates into topo->tcp
 * (getifaddrs, sysfs numa_node), apply ccom_topo_tcp_rule() and set
 * comm->tcp_nic (net_socket's listener and connections) and
 * topo->tcp_choice, logged at INFO (TOPO, NET).
 */
void ccom_topo_pick_tcp(struct ccom_topo *topo, struct ccomComm *comm);

/*
 * ccom_topo_dump_write() - write @topo as JSON to @path ("%r" is replaced by
 * @rank, "%h" by the hostname, "%p" by the pid).  Return 0 or -errno.
 */
int ccom_topo_dump_write(const struct ccom_topo *topo, const struct ccomComm *comm,
			 const char *path);

#endif
