// SPDX-License-Identifier: MIT
/*
 * nic.c - the nearest network port per rank (topo/ layer): among the
 * candidates a transport may use, those on the NUMA node of the rank's
 * CPUs (topo->local_numa after ccom_topo_place()), else all of them; the
 * ranks of a host spread over equally near ports by local rank, so that
 * on hosts built alike local rank l of every host takes the same port (a
 * rail).  Applied to the RDMA ports here (net_ib opens comm->ib_dev) and
 * to the TCP interfaces in nic_tcp.c (net_socket uses comm->tcp_nic); the
 * bootstrap's own interface is chosen before the topology exists, by
 * util/socket.c's rule (the first matching interface on the rank's node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "transport/net_ib.h"
#include "transport/transport.h"
#include "util/log.h"
#include "util/params.h"

int ccom_topo_nearest(const int *nodes, int n, int node, int lrank, int *nnear)
{
	int i, k = 0, near = 0;

	if (n <= 0)
		return -1;
	for (i = 0; node >= 0 && i < n; i++)
		near += nodes[i] == node;
	if (nnear)
		*nnear = near ? near : n;
	lrank = lrank < 0 ? 0 : lrank;
	if (!near)
		return lrank % n;
	lrank %= near;
	for (i = 0; i < n; i++)
		if (nodes[i] == node && k++ == lrank)
			return i;
	return -1;	/* not reached */
}

void ccom_topo_pick_rdma(struct ccom_topo *topo, struct ccomComm *comm)
{
	struct ccom_net_ib_port_info p[16];
	int idx[16], nodes[16], n, i, k = 0, pick, nnear = 0;
	const char *net = ccom_param_str("CCOM_NET");
	char why[512] = "";

	comm->ib_dev[0] = '\0';
	comm->ib_port = 0;
	snprintf(topo->rdma_choice, sizeof(topo->rdma_choice), "none");
	/* Only where net_ib may carry data: ranks on several hosts, CCOM_NET not socket. */
	if (comm->nnodes <= 1 || (net && !strcmp(net, "socket")))
		return;
	n = ccom_net_ib_list_ports(p, 16, why, sizeof(why));
	for (i = 0; i < n; i++)
		if (p[i].hca_match && !strcmp(p[i].state, "ACTIVE") && p[i].gid_index >= 0) {
			idx[k] = i;
			nodes[k++] = p[i].numa_node;
		}
	if (k < 2) {
		snprintf(topo->rdma_choice, sizeof(topo->rdma_choice), "%s",
			 k ? "the only ACTIVE port" : "no ACTIVE port");
		return;	/* nothing to choose: net_ib's own rule */
	}
	pick = ccom_topo_nearest(nodes, k, topo->local_numa, comm->local_rank, &nnear);
	if (pick < 0)
		return;
	i = idx[pick];
	snprintf(comm->ib_dev, sizeof(comm->ib_dev), "%s", p[i].dev);
	comm->ib_port = p[i].port;
	snprintf(topo->rdma_choice, sizeof(topo->rdma_choice),
		 "%s:%d (NUMA node %d; local rank %d of the %d ACTIVE ports %s)", p[i].dev,
		 p[i].port, p[i].numa_node, comm->local_rank, nnear,
		 nnear < k ? "on this rank's node" : "(none nearer than another)");
	ccom_info(CCOM_SUBSYS_TOPO | CCOM_SUBSYS_NET, "rank %d: RDMA port %s", comm->rank,
		  topo->rdma_choice);
}
