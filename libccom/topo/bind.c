// SPDX-License-Identifier: MIT
/*
 * bind.c - placement at the topology stage (topo/ layer): CCOM_BIND and
 * the NUMA node of this rank's shared memory; see ccom_topo_place() in
 * topo.h and Documentation/libccom/topology-and-tcp.rst ("Placement").
 * The NIC is chosen earlier, when the bootstrap picks its interface
 * (util/socket.c prefers one on the node of a bound rank's CPUs), so an
 * unbound rank is bound near the NIC it already uses.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "util/err.h"
#include "util/log.h"
#include "util/numa.h"
#include "util/params.h"

/* Ranks of this communicator in this process besides this one. */
static int ranks_in_process(const struct ccomComm *comm)
{
	const struct ccom_peer_info *me = &comm->peers[comm->rank];
	int r, n = 0;

	for (r = 0; r < comm->nranks; r++)
		if (r != comm->rank && comm->peers[r].host_hash == me->host_hash &&
		    comm->peers[r].pid_hash == me->pid_hash)
			n++;
	return n;
}

static void bind_auto(struct ccom_topo *topo, const struct ccomComm *comm)
{
	const char *nic = topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].name : NULL;
	int nic_node = topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].numa_node : -1;
	int others = ranks_in_process(comm), node;
	char why[160];
	cpu_set_t set;

	if (topo->naffinity < topo->ncpus_online) {
		snprintf(topo->bind, sizeof(topo->bind),
			 "kept the launcher's binding (cpus %.120s of %d online)", topo->affinity,
			 topo->ncpus_online);
		return;
	}
	if (others) {
		snprintf(topo->bind, sizeof(topo->bind),
			 "not bound: %d other rank(s) of this communicator share the process", others);
		return;
	}
	/* The NIC's node if it has a CPU for every rank of this host (they all see that NIC). */
	if (nic_node >= 0 && !ccom_numa_node_cpus(nic_node, &set) &&
	    CPU_COUNT(&set) >= comm->local_nranks) {
		node = nic_node;
		snprintf(why, sizeof(why), "the node of its NIC %s", nic);
	} else {
		node = topo->nnuma > 0 ? topo->numa[comm->local_rank % topo->nnuma].id : 0;
		snprintf(why, sizeof(why), "local rank %d mod %d node(s); NIC %s: %s", comm->local_rank,
			 topo->nnuma, nic ? nic : "?",
			 nic_node < 0 ? "no NUMA node" : "its node has fewer CPUs than local ranks");
	}
	if (ccom_numa_node_cpus(node, &set)) {
		snprintf(topo->bind, sizeof(topo->bind),
			 "not bound: sysfs lists no CPUs of NUMA node %d", node);
		return;
	}
	if (sched_setaffinity(0, sizeof(set), &set)) {
		snprintf(topo->bind, sizeof(topo->bind), "not bound: binding to NUMA node %d failed (%s)",
			 node, ccom_errno_str(errno));
		return;
	}
	ccom_topo_refresh_affinity(topo);
	snprintf(topo->bind, sizeof(topo->bind), "bound to NUMA node %d, cpus %.80s (%.110s)", node,
		 topo->affinity, why);
}

void ccom_topo_place(struct ccom_topo *topo, const struct ccomComm *comm)
{
	const char *mode = ccom_param_str("CCOM_BIND");
	char mem[64];

	if (mode && !strcasecmp(mode, "none")) {
		snprintf(topo->bind, sizeof(topo->bind), "not bound (CCOM_BIND=none), cpus %.120s",
			 topo->affinity);
	} else {
		if (mode && mode[0] && strcasecmp(mode, "auto"))
			ccom_warn("CCOM_BIND=%s is neither auto nor none; using auto", mode);
		bind_auto(topo, comm);
	}
	topo->mem_node = topo->local_numa;
	if (topo->mem_node >= 0)
		snprintf(mem, sizeof(mem), "prefer NUMA node %d (mbind)", topo->mem_node);
	else
		snprintf(mem, sizeof(mem), "by first touch (the cpus span NUMA nodes)");
	ccom_info(CCOM_SUBSYS_TOPO,
		  "placement: rank %d: %s; shared-memory staging and FIFOs %s; NIC %s (NUMA node %d)",
		  comm->rank, topo->bind, mem,
		  topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].name : "?",
		  topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].numa_node : -1);
}
