// SPDX-License-Identifier: MIT
/*
 * dump.c - CCOM_TOPO_DUMP_FILE: the topology and the graphs of a
 * communicator as one JSON object, for humans and for tests.  The file is
 * written to a temporary name and renamed, so a reader never sees half.
 *
 * Layout: {"version", "rank", "nranks", "comm_hash", "hosts": [{"index",
 * "host_hash", "ranks"}], "local": {"hostname", "cpus_online", "affinity",
 * "local_numa", "numa": [...], "nics": [...], "rdma": [...], "rdma_status",
 * "bootstrap_nic", "placement": {"bind", "mem_node", "mem_policy", "nic_numa",
 * "rdma", "tcp": {"choice", "interfaces": [...]}}, "nccom"},
 * "graphs": {"peer_transport": [...], "ring": [...], "ring_host_crossings",
 * "tree_parent": [...], "tree_root", "host_leaders"}}.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "transport/net_ib.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/json.h"
#include "util/log.h"

static void int_array(struct ccom_json *w, const char *key, const int *v, int n)
{
	int i;

	ccom_json_array(w, key, CCOM_JSON_INLINE);
	for (i = 0; i < n; i++)
		ccom_json_int(w, NULL, v[i]);
	ccom_json_end(w);
}

static void dump_hosts(struct ccom_json *w, const struct ccom_topo *topo)
{
	int h;

	ccom_json_array(w, "hosts", CCOM_JSON_BLOCK);
	for (h = 0; h < topo->nhosts; h++) {
		ccom_json_object(w, NULL, CCOM_JSON_INLINE);
		ccom_json_int(w, "index", h);
		ccom_json_strf(w, "host_hash", "0x%016llx", (unsigned long long)topo->hosts[h].host_hash);
		int_array(w, "ranks", topo->hosts[h].ranks, topo->hosts[h].nranks);
		ccom_json_end(w);
	}
	ccom_json_end(w);
}

static void dump_numa(struct ccom_json *w, const struct ccom_topo *topo)
{
	int i;

	ccom_json_array(w, "numa", CCOM_JSON_BLOCK);
	for (i = 0; i < topo->nnuma; i++) {
		const struct ccom_topo_numa *nd = &topo->numa[i];

		ccom_json_object(w, NULL, CCOM_JSON_INLINE);
		ccom_json_int(w, "id", nd->id);
		ccom_json_int(w, "ncpus", nd->ncpus);
		ccom_json_str(w, "cpus", nd->cpulist);
		ccom_json_uint(w, "mem_kb", nd->mem_kb);
		ccom_json_end(w);
	}
	ccom_json_end(w);
}

static void dump_nics(struct ccom_json *w, const struct ccom_topo *topo)
{
	int i, a;

	ccom_json_array(w, "nics", CCOM_JSON_BLOCK);
	for (i = 0; i < topo->nnics; i++) {
		const struct ccom_topo_nic *nic = &topo->nics[i];

		ccom_json_object(w, NULL, CCOM_JSON_INLINE);
		ccom_json_str(w, "name", nic->name);
		ccom_json_bool(w, "up", nic->up);
		ccom_json_bool(w, "loopback", nic->loopback);
		ccom_json_int(w, "speed_mbps", nic->speed_mbps);
		ccom_json_int(w, "mtu", nic->mtu);
		ccom_json_int(w, "numa_node", nic->numa_node);
		ccom_json_array(w, "addrs", CCOM_JSON_INLINE);
		for (a = 0; a < nic->naddrs; a++)
			ccom_json_str(w, NULL, nic->addrs[a]);
		ccom_json_end(w);
		ccom_json_end(w);
	}
	ccom_json_end(w);
}

/*
 * "rdma": the verbs ports net_ib's enumeration finds (device, port,
 * state, link layer, MTU, GID index chosen, whether CCOM_IB_HCA selects
 * it and whether it is the one net_ib opens); [] without libibverbs or
 * devices, with the reason in "rdma_status".
 */
static void dump_rdma(struct ccom_json *w, const struct ccomComm *comm)
{
	struct ccom_net_ib_port_info p[16];
	char why[512] = "";
	int n = ccom_net_ib_list_ports(p, 16, why, sizeof(why)), i;

	ccom_json_array(w, "rdma", CCOM_JSON_BLOCK);
	for (i = 0; i < n; i++) {
		ccom_json_object(w, NULL, CCOM_JSON_INLINE);
		ccom_json_str(w, "device", p[i].dev);
		ccom_json_int(w, "port", p[i].port);
		ccom_json_str(w, "state", p[i].state);
		ccom_json_str(w, "link_layer", p[i].link_layer);
		ccom_json_int(w, "mtu", p[i].mtu);
		ccom_json_int(w, "gid_index", p[i].gid_index);
		ccom_json_str(w, "gid_kind", p[i].gid_kind);
		ccom_json_str(w, "gid", p[i].gid);
		ccom_json_int(w, "numa_node", p[i].numa_node);
		ccom_json_bool(w, "hca_match", p[i].hca_match);
		ccom_json_bool(w, "selected", comm->ib_dev[0] ?
			       !strcmp(comm->ib_dev, p[i].dev) && comm->ib_port == p[i].port :
			       p[i].selected);
		ccom_json_end(w);
	}
	ccom_json_end(w);
	ccom_json_str(w, "rdma_status", n ? "ok" : why);
}

/*
 * "tcp" of "placement", on a line of its own: nic_tcp.c's choice (a
 * sentence) and its candidates (name, address, prefix, numa_node,
 * bootstrap, selected).
 */
static void dump_tcp(struct ccom_json *w, const struct ccom_topo *topo)
{
	int i;

	ccom_json_wrap(w);
	ccom_json_object(w, "tcp", CCOM_JSON_INLINE);
	ccom_json_str(w, "choice", topo->tcp_choice);
	ccom_json_array(w, "interfaces", CCOM_JSON_BLOCK);
	for (i = 0; i < topo->ntcp; i++) {
		const struct ccom_topo_tcp_nic *t = &topo->tcp[i];

		ccom_json_object(w, NULL, CCOM_JSON_INLINE);
		ccom_json_str(w, "name", t->name);
		ccom_json_str(w, "address", t->addr);
		ccom_json_int(w, "prefix", t->prefix);
		ccom_json_int(w, "numa_node", t->numa_node);
		ccom_json_bool(w, "bootstrap", t->bootstrap);
		ccom_json_bool(w, "selected", t->selected);
		ccom_json_end(w);
	}
	ccom_json_end(w);
	ccom_json_end(w);
}

static void dump_placement(struct ccom_json *w, const struct ccom_topo *topo)
{
	ccom_json_object(w, "placement", CCOM_JSON_INLINE);
	ccom_json_str(w, "bind", topo->bind);
	ccom_json_int(w, "mem_node", topo->mem_node);
	ccom_json_str(w, "mem_policy", topo->mem_node >= 0 ? "preferred" : "first-touch");
	ccom_json_int(w, "nic_numa",
		      topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].numa_node : -1);
	ccom_json_str(w, "rdma", topo->rdma_choice);
	dump_tcp(w, topo);
	ccom_json_end(w);
}

static void dump_local(struct ccom_json *w, const struct ccom_topo *topo,
		       const struct ccomComm *comm)
{
	const struct ccom_topo_nccom *nc = &topo->nccom;

	ccom_json_object(w, "local", CCOM_JSON_BLOCK);
	ccom_json_str(w, "hostname", topo->hostname);
	ccom_json_int(w, "cpus_online", topo->ncpus_online);
	ccom_json_str(w, "affinity", topo->affinity);
	ccom_json_int(w, "naffinity", topo->naffinity);
	ccom_json_int(w, "local_numa", topo->local_numa);
	dump_numa(w, topo);
	dump_nics(w, topo);
	dump_rdma(w, comm);
	ccom_json_str(w, "bootstrap_nic",
		      topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].name : NULL);
	dump_placement(w, topo);
	ccom_json_object(w, "nccom", CCOM_JSON_INLINE);
	ccom_json_bool(w, "present", nc->present);
	ccom_json_bool(w, "usable", nc->usable);
	ccom_json_int(w, "devices", nc->ndevs);
	ccom_json_uint(w, "abi_version", nc->abi_version);
	ccom_json_strf(w, "features", "0x%llx", (unsigned long long)nc->features);
	ccom_json_str(w, "status", nc->status);
	ccom_json_end(w);
	ccom_json_end(w);
}

/* Transport this rank uses towards each peer ("self" for itself), as coll/ selects it. */
static void dump_transports(struct ccom_json *w, const struct ccomComm *comm)
{
	const struct ccom_transport_ops *ops;
	int r;

	if (!comm->rank_to_node)
		return;
	ccom_json_array(w, "peer_transport", CCOM_JSON_INLINE);
	for (r = 0; r < comm->nranks; r++) {
		ops = r == comm->rank ? NULL : ccom_transport_select(comm, r);
		ccom_json_str(w, NULL, r == comm->rank ? "self" : ops ? ops->name : "none");
	}
	ccom_json_end(w);
}

static void dump_graphs(struct ccom_json *w, const struct ccom_topo *topo,
			const struct ccomComm *comm)
{
	int h, cross = 0, i;

	/* Network crossings of the ring: a check that hosts stay together. */
	for (i = 0; i < topo->nranks; i++)
		if (topo->rank_host[topo->ring[i]] !=
		    topo->rank_host[topo->ring[(i + 1) % topo->nranks]])
			cross++;
	ccom_json_object(w, "graphs", CCOM_JSON_BLOCK);
	dump_transports(w, comm);
	if (topo->cma_path[0])
		ccom_json_str(w, "cma", topo->cma_path);
	int_array(w, "ring", topo->ring, topo->nranks);
	ccom_json_int(w, "ring_host_crossings", cross);
	int_array(w, "tree_parent", topo->tree_parent, topo->nranks);
	ccom_json_int(w, "tree_root", topo->ring[0]);
	ccom_json_array(w, "host_leaders", CCOM_JSON_INLINE);
	for (h = 0; h < topo->nhosts; h++)
		ccom_json_int(w, NULL, topo->hosts[h].ranks[0]);
	ccom_json_end(w);
	ccom_json_end(w);
}

/* Expand %r (rank), %h (hostname), %p (pid) in @pattern. */
static int expand_path(char *out, size_t len, const char *pattern, int rank, const char *host)
{
	size_t o = 0;
	int n;

	for (; *pattern; pattern++) {
		if (pattern[0] == '%' && pattern[1] == 'r')
			n = snprintf(out + o, len - o, "%d", rank);
		else if (pattern[0] == '%' && pattern[1] == 'h')
			n = snprintf(out + o, len - o, "%s", host);
		else if (pattern[0] == '%' && pattern[1] == 'p')
			n = snprintf(out + o, len - o, "%d", (int)getpid());
		else
			n = snprintf(out + o, len - o, "%c", *pattern);
		if (n < 0 || (size_t)n >= len - o)
			return -ENAMETOOLONG;
		o += n;
		if (pattern[0] == '%' && pattern[1] && strchr("rhp", pattern[1]))
			pattern++;
	}
	return 0;
}

int ccom_topo_dump_write(const struct ccom_topo *topo, const struct ccomComm *comm,
			 const char *path)
{
	char final[4096], tmp[4200];
	struct ccom_json w;
	FILE *f;
	int err;

	err = expand_path(final, sizeof(final), path, comm->rank, topo->hostname);
	if (err) {
		ccom_warn("CCOM_TOPO_DUMP_FILE=%s is too long after expansion; use a shorter path",
			  path);
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", final, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		err = -errno;
		ccom_warn("cannot write the topology dump %s: %s; check CCOM_TOPO_DUMP_FILE",
			  tmp, strerror(-err));
		return err;
	}
	ccom_json_init_file(&w, f);
	ccom_json_object(&w, NULL, CCOM_JSON_BLOCK);
	ccom_json_int(&w, "version", CCOM_VERSION_CODE);
	ccom_json_int(&w, "rank", comm->rank);
	ccom_json_int(&w, "nranks", comm->nranks);
	ccom_json_strf(&w, "comm_hash", "0x%016llx", (unsigned long long)comm->comm_hash);
	dump_hosts(&w, topo);
	dump_local(&w, topo, comm);
	dump_graphs(&w, topo, comm);
	ccom_json_end(&w);
	err = ccom_json_error(&w);
	if (fclose(f) || err || rename(tmp, final)) {
		err = err ? err : -errno;
		unlink(tmp);
		ccom_warn("cannot write the topology dump %s: %s; check CCOM_TOPO_DUMP_FILE",
			  final, strerror(-err));
		return err;
	}
	ccom_info(CCOM_SUBSYS_TOPO, "topology written to %s", final);
	return 0;
}
