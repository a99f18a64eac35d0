// SPDX-License-Identifier: MIT
/*
 * topo.c - the topology object of a communicator: host grouping from the
 * peer-info host hashes, the ring and tree graphs built on it, and the
 * init/fini pair init/ calls at the topology stage.  Local discovery
 * (sysfs, NICs, nccom) lives in discover.c, the JSON dump in dump.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "util/err.h"
#include "util/log.h"
#include "util/params.h"

int ccom_topo_group_hosts(struct ccom_topo *topo, const uint64_t *host_hash, int nranks)
{
	int r, h;

	if (!topo || !host_hash || nranks <= 0)
		return -EINVAL;
	topo->nranks = nranks;
	topo->rank_host = calloc(nranks, sizeof(*topo->rank_host));
	topo->hosts = calloc(nranks, sizeof(*topo->hosts));
	if (!topo->rank_host || !topo->hosts)
		return -ENOMEM;
	topo->nhosts = 0;
	/* Hosts get indices in order of their lowest rank. */
	for (r = 0; r < nranks; r++) {
		for (h = 0; h < topo->nhosts; h++)
			if (topo->hosts[h].host_hash == host_hash[r])
				break;
		if (h == topo->nhosts) {
			topo->hosts[h].host_hash = host_hash[r];
			topo->hosts[h].ranks = calloc(nranks, sizeof(int));
			if (!topo->hosts[h].ranks)
				return -ENOMEM;
			topo->nhosts++;
		}
		topo->hosts[h].ranks[topo->hosts[h].nranks++] = r;
		topo->rank_host[r] = h;
	}
	return 0;
}

/*
 * Binary tree over @n members of @list (list[0] is the root): parent of
 * member i is member (i - 1) / 2.
 */
static void tree_over(int *parent, const int *list, int n)
{
	int i;

	for (i = 1; i < n; i++)
		parent[list[i]] = list[(i - 1) / 2];
}

int ccom_topo_build_graphs(struct ccom_topo *topo)
{
	int n = topo->nranks, h, i, pos = 0;
	int *leaders;

	topo->ring = calloc(n, sizeof(int));
	topo->ring_pos = calloc(n, sizeof(int));
	topo->tree_parent = calloc(n, sizeof(int));
	leaders = calloc(topo->nhosts, sizeof(int));
	if (!topo->ring || !topo->ring_pos || !topo->tree_parent || !leaders) {
		free(leaders);
		return -ENOMEM;
	}
	/*
	 * Ring: host after host, ranks of one host consecutive, so the ring
	 * crosses the network exactly nhosts times (once if there are 2).
	 */
	for (h = 0; h < topo->nhosts; h++)
		for (i = 0; i < topo->hosts[h].nranks; i++) {
			topo->ring[pos] = topo->hosts[h].ranks[i];
			topo->ring_pos[topo->ring[pos]] = pos;
			pos++;
		}
	/* Tree: binary tree of host leaders, binary tree inside each host. */
	for (i = 0; i < n; i++)
		topo->tree_parent[i] = -1;
	for (h = 0; h < topo->nhosts; h++) {
		leaders[h] = topo->hosts[h].ranks[0];
		tree_over(topo->tree_parent, topo->hosts[h].ranks, topo->hosts[h].nranks);
	}
	tree_over(topo->tree_parent, leaders, topo->nhosts);
	free(leaders);
	return 0;
}

void ccom_topo_free(struct ccom_topo *topo)
{
	int h;

	if (!topo)
		return;
	if (topo->hosts)
		for (h = 0; h < topo->nhosts; h++)
			free(topo->hosts[h].ranks);
	free(topo->hosts);
	free(topo->rank_host);
	free(topo->numa);
	free(topo->nics);
	free(topo->ring);
	free(topo->ring_pos);
	free(topo->tree_parent);
	free(topo);
}

int ccom_topo_ring_next(const struct ccom_topo *topo, int rank)
{
	return topo->ring[(topo->ring_pos[rank] + 1) % topo->nranks];
}

int ccom_topo_ring_prev(const struct ccom_topo *topo, int rank)
{
	return topo->ring[(topo->ring_pos[rank] + topo->nranks - 1) % topo->nranks];
}

bool ccom_topo_same_host(const struct ccom_topo *topo, int a, int b)
{
	return topo->rank_host[a] == topo->rank_host[b];
}

/*
 * init/ computes its own node indices from the same hashes; both must agree,
 * or shm and net would be chosen against different pictures of the job.
 */
static int check_nodes(const struct ccom_topo *topo, const struct ccomComm *comm)
{
	int r;

	if (!comm->rank_to_node)
		return 0;
	if (comm->nnodes != topo->nhosts) {
		ccom_set_last_error("topology: init counted %d hosts but the peer host hashes give %d; this is a libccom bug, please report it",
				    comm->nnodes, topo->nhosts);
		return -EPROTO;
	}
	for (r = 0; r < comm->nranks; r++) {
		if (comm->rank_to_node[r] != topo->rank_host[r]) {
			ccom_set_last_error("topology: rank %d is on host %d for init but on host %d from the host hashes; this is a libccom bug, please report it",
					    r, comm->rank_to_node[r], topo->rank_host[r]);
			return -EPROTO;
		}
	}
	return 0;
}

static int topo_build(struct ccom_topo *topo, struct ccomComm *comm)
{
	uint64_t *hashes;
	int r, err;

	hashes = calloc(comm->nranks, sizeof(*hashes));
	if (!hashes)
		return -ENOMEM;
	for (r = 0; r < comm->nranks; r++)
		hashes[r] = comm->peers[r].host_hash;
	err = ccom_topo_group_hosts(topo, hashes, comm->nranks);
	free(hashes);
	if (err)
		return err;
	err = check_nodes(topo, comm);
	if (err)
		return err;
	err = ccom_topo_build_graphs(topo);
	if (err)
		return err;
	return ccom_topo_discover_local(topo, &comm->peers[comm->rank].listen_addr);
}

static void topo_log(const struct ccom_topo *topo, const struct ccomComm *comm)
{
	const char *nic = topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].name : "?";

	ccom_info(CCOM_SUBSYS_TOPO,
		  "topology: rank %d/%d, %d host(s), %d NUMA node(s), cpus %s, %d NIC(s) (bootstrap on %s), nccom %s, ring %d -> %d -> %d",
		  comm->rank, comm->nranks, topo->nhosts, topo->nnuma, topo->affinity,
		  topo->nnics, nic, topo->nccom.present ? topo->nccom.status : "absent",
		  ccom_topo_ring_prev(topo, comm->rank), comm->rank,
		  ccom_topo_ring_next(topo, comm->rank));
}

int ccom_topo_init(struct ccomComm *comm)
{
	struct ccom_topo *topo;
	int err;

	if (!comm || !comm->peers || comm->nranks <= 0 || comm->rank < 0 ||
	    comm->rank >= comm->nranks) {
		ccom_set_last_error("topology: called on a communicator without peer info; init must run the peer-info stage first");
		return -EINVAL;
	}
	topo = calloc(1, sizeof(*topo));
	if (!topo)
		return -ENOMEM;
	err = topo_build(topo, comm);
	if (err) {
		if (err == -ENOMEM)
			ccom_set_last_error("topology: out of memory for %d ranks", comm->nranks);
		ccom_topo_free(topo);
		return err;
	}
	comm->topo = topo;
	ccom_topo_place(topo, comm);
	ccom_topo_pick_rdma(topo, comm);
	ccom_topo_pick_tcp(topo, comm);
	topo_log(topo, comm);
	ccom_topo_dump(comm);
	return 0;
}

void ccom_topo_dump(const struct ccomComm *comm)
{
	const char *path = ccom_param_str("CCOM_TOPO_DUMP_FILE");

	/* Without "%r" in the name only rank 0 writes, as ranks would collide. */
	if (comm->topo && path && path[0] && (strstr(path, "%r") || comm->rank == 0))
		ccom_topo_dump_write(comm->topo, comm, path);
}

void ccom_topo_note_cma(struct ccomComm *comm, const char *cma)
{
	if (!comm->topo)
		return;
	snprintf(comm->topo->cma_path, sizeof(comm->topo->cma_path), "%s", cma);
	ccom_topo_dump(comm);
}

void ccom_topo_fini(struct ccomComm *comm)
{
	if (!comm)
		return;
	ccom_topo_free(comm->topo);
	comm->topo = NULL;
}
