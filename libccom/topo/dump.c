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
#include "util/log.h"

/* Write @s as a JSON string literal. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_int_array(FILE *f, const int *v, int n)
{
	int i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? ", " : "", v[i]);
	fputc(']', f);
}

static void dump_hosts(FILE *f, const struct ccom_topo *topo)
{
	int h;

	fprintf(f, "  \"hosts\": [\n");
	for (h = 0; h < topo->nhosts; h++) {
		fprintf(f, "    {\"index\": %d, \"host_hash\": \"0x%016llx\", \"ranks\": ", h,
			(unsigned long long)topo->hosts[h].host_hash);
		json_int_array(f, topo->hosts[h].ranks, topo->hosts[h].nranks);
		fprintf(f, "}%s\n", h + 1 < topo->nhosts ? "," : "");
	}
	fprintf(f, "  ],\n");
}

static void dump_numa(FILE *f, const struct ccom_topo *topo)
{
	int i;

	fprintf(f, "    \"numa\": [\n");
	for (i = 0; i < topo->nnuma; i++) {
		const struct ccom_topo_numa *nd = &topo->numa[i];

		fprintf(f, "      {\"id\": %d, \"ncpus\": %d, \"cpus\": ", nd->id, nd->ncpus);
		json_str(f, nd->cpulist);
		fprintf(f, ", \"mem_kb\": %llu}%s\n", (unsigned long long)nd->mem_kb,
			i + 1 < topo->nnuma ? "," : "");
	}
	fprintf(f, "    ],\n");
}

static void dump_nics(FILE *f, const struct ccom_topo *topo)
{
	int i, a;

	fprintf(f, "    \"nics\": [\n");
	for (i = 0; i < topo->nnics; i++) {
		const struct ccom_topo_nic *nic = &topo->nics[i];

		fprintf(f, "      {\"name\": ");
		json_str(f, nic->name);
		fprintf(f, ", \"up\": %s, \"loopback\": %s, \"speed_mbps\": %d, \"mtu\": %d, \"numa_node\": %d, \"addrs\": [",
			nic->up ? "true" : "false", nic->loopback ? "true" : "false",
			nic->speed_mbps, nic->mtu, nic->numa_node);
		for (a = 0; a < nic->naddrs; a++) {
			fprintf(f, "%s", a ? ", " : "");
			json_str(f, nic->addrs[a]);
		}
		fprintf(f, "]}%s\n", i + 1 < topo->nnics ? "," : "");
	}
	fprintf(f, "    ],\n");
}

/*
 * "rdma": the verbs ports net_ib's enumeration finds (device, port,
 * state, link layer, MTU, GID index chosen, whether CCOM_IB_HCA selects
 * it and whether it is the one net_ib opens); [] without libibverbs or
 * devices, with the reason in "rdma_status".
 */
static void dump_rdma(FILE *f, const struct ccomComm *comm)
{
	struct ccom_net_ib_port_info p[16];
	char why[512] = "";
	int n = ccom_net_ib_list_ports(p, 16, why, sizeof(why)), i;

	fprintf(f, "    \"rdma\": [");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s\n      {\"device\": ", i ? "," : "");
		json_str(f, p[i].dev);
		fprintf(f, ", \"port\": %d, \"state\": ", p[i].port);
		json_str(f, p[i].state);
		fprintf(f, ", \"link_layer\": ");
		json_str(f, p[i].link_layer);
		fprintf(f, ", \"mtu\": %d, \"gid_index\": %d, \"gid_kind\": ", p[i].mtu,
			p[i].gid_index);
		json_str(f, p[i].gid_kind);
		fprintf(f, ", \"gid\": ");
		json_str(f, p[i].gid);
		fprintf(f, ", \"numa_node\": %d, \"hca_match\": %s, \"selected\": %s}",
			p[i].numa_node, p[i].hca_match ? "true" : "false",
			(comm->ib_dev[0] ? !strcmp(comm->ib_dev, p[i].dev) && comm->ib_port == p[i].port
					 : p[i].selected) ? "true" : "false");
	}
	fprintf(f, "%s],\n    \"rdma_status\": ", n ? "\n    " : "");
	json_str(f, n ? "ok" : why);
	fprintf(f, ",\n");
}

/*
 * "tcp" of "placement": nic_tcp.c's choice (a sentence) and its candidates
 * (name, address, prefix, numa_node, bootstrap, selected).
 */
static void dump_tcp(FILE *f, const struct ccom_topo *topo)
{
	int i;

	fprintf(f, ",\n      \"tcp\": {\"choice\": ");
	json_str(f, topo->tcp_choice);
	fprintf(f, ", \"interfaces\": [");
	for (i = 0; i < topo->ntcp; i++) {
		const struct ccom_topo_tcp_nic *t = &topo->tcp[i];

		fprintf(f, "%s\n        {\"name\": ", i ? "," : "");
		json_str(f, t->name);
		fprintf(f, ", \"address\": ");
		json_str(f, t->addr);
		fprintf(f, ", \"prefix\": %d, \"numa_node\": %d, \"bootstrap\": %s, \"selected\": %s}",
			t->prefix, t->numa_node, t->bootstrap ? "true" : "false",
			t->selected ? "true" : "false");
	}
	fprintf(f, "%s]}", topo->ntcp ? "\n      " : "");
}

static void dump_local(FILE *f, const struct ccom_topo *topo, const struct ccomComm *comm)
{
	const struct ccom_topo_nccom *nc = &topo->nccom;

	fprintf(f, "  \"local\": {\n    \"hostname\": ");
	json_str(f, topo->hostname);
	fprintf(f, ",\n    \"cpus_online\": %d,\n    \"affinity\": ", topo->ncpus_online);
	json_str(f, topo->affinity);
	fprintf(f, ",\n    \"naffinity\": %d,\n    \"local_numa\": %d,\n", topo->naffinity,
		topo->local_numa);
	dump_numa(f, topo);
	dump_nics(f, topo);
	dump_rdma(f, comm);
	fprintf(f, "    \"bootstrap_nic\": ");
	if (topo->bootstrap_nic >= 0)
		json_str(f, topo->nics[topo->bootstrap_nic].name);
	else
		fprintf(f, "null");
	fprintf(f, ",\n    \"placement\": {\"bind\": ");
	json_str(f, topo->bind);
	fprintf(f, ", \"mem_node\": %d, \"mem_policy\": \"%s\", \"nic_numa\": %d, \"rdma\": ",
		topo->mem_node, topo->mem_node >= 0 ? "preferred" : "first-touch",
		topo->bootstrap_nic >= 0 ? topo->nics[topo->bootstrap_nic].numa_node : -1);
	json_str(f, topo->rdma_choice);
	dump_tcp(f, topo);
	fprintf(f, "}");
	fprintf(f, ",\n    \"nccom\": {\"present\": %s, \"usable\": %s, \"devices\": %d, \"abi_version\": %u, \"features\": \"0x%llx\", \"status\": ",
		nc->present ? "true" : "false", nc->usable ? "true" : "false", nc->ndevs,
		nc->abi_version, (unsigned long long)nc->features);
	json_str(f, nc->status);
	fprintf(f, "}\n  },\n");
}

/* Transport this rank uses towards each peer ("self" for itself), as coll/ selects it. */
static void dump_transports(FILE *f, const struct ccomComm *comm)
{
	const struct ccom_transport_ops *ops;
	int r;

	if (!comm->rank_to_node)
		return;
	fprintf(f, "    \"peer_transport\": [");
	for (r = 0; r < comm->nranks; r++) {
		ops = r == comm->rank ? NULL : ccom_transport_select(comm, r);
		fprintf(f, "%s\"%s\"", r ? ", " : "",
			r == comm->rank ? "self" : ops ? ops->name : "none");
	}
	fprintf(f, "],\n");
}

static void dump_graphs(FILE *f, const struct ccom_topo *topo, const struct ccomComm *comm)
{
	int h, cross = 0, i;

	/* Network crossings of the ring: a check that hosts stay together. */
	for (i = 0; i < topo->nranks; i++)
		if (topo->rank_host[topo->ring[i]] !=
		    topo->rank_host[topo->ring[(i + 1) % topo->nranks]])
			cross++;
	fprintf(f, "  \"graphs\": {\n");
	dump_transports(f, comm);
	fprintf(f, "    \"ring\": ");
	json_int_array(f, topo->ring, topo->nranks);
	fprintf(f, ",\n    \"ring_host_crossings\": %d,\n    \"tree_parent\": ", cross);
	json_int_array(f, topo->tree_parent, topo->nranks);
	fprintf(f, ",\n    \"tree_root\": %d,\n    \"host_leaders\": [", topo->ring[0]);
	for (h = 0; h < topo->nhosts; h++)
		fprintf(f, "%s%d", h ? ", " : "", topo->hosts[h].ranks[0]);
	fprintf(f, "]\n  }\n");
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
	fprintf(f, "{\n  \"version\": %d,\n  \"rank\": %d,\n  \"nranks\": %d,\n  \"comm_hash\": \"0x%016llx\",\n",
		CCOM_VERSION_CODE, comm->rank, comm->nranks,
		(unsigned long long)comm->comm_hash);
	dump_hosts(f, topo);
	dump_local(f, topo, comm);
	dump_graphs(f, topo, comm);
	fprintf(f, "}\n");
	if (fclose(f) || rename(tmp, final)) {
		err = -errno;
		unlink(tmp);
		ccom_warn("cannot write the topology dump %s: %s; check CCOM_TOPO_DUMP_FILE",
			  final, strerror(-err));
		return err;
	}
	ccom_info(CCOM_SUBSYS_TOPO, "topology written to %s", final);
	return 0;
}
