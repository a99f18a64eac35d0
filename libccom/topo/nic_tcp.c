// SPDX-License-Identifier: MIT
/*
 * nic_tcp.c - the nearest TCP interface per rank (topo/ layer), the TCP
 * twin of nic.c's RDMA port: of this host's up, non-loopback interfaces
 * that CCOM_SOCKET_IFNAME allows (util/socket.c's rule, the bootstrap's)
 * with an address of the bootstrap address's family, sorted by name, the
 * ones on the rank's NUMA node, else all, spread over the local ranks
 * (ccom_topo_nearest()): local rank l of every host takes the l-th, so
 * that on hosts built alike the split-rail schedule's per-local-rank
 * inter-host traffic stays on one rail.  net_socket listens on the chosen
 * address (comm->tcp_nic) and binds its connections' source to it when
 * the peer's address is on the same subnet.  Without CCOM_SOCKET_IFNAME
 * only interfaces backed by a device (and the bootstrap's) are candidates.  One host, one candidate, or
 * a bootstrap address outside the candidates: nothing chosen, net_socket
 * stays on the bootstrap address.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "util/log.h"
#include "util/numa.h"
#include "util/params.h"
#include "util/socket.h"

int ccom_topo_tcp_rule(const struct ccom_topo_tcp_nic *c, int n, int boot, int node, int lrank,
		       int nhosts, const char *spec, char *why, size_t len)
{
	int nodes[CCOM_TOPO_TCP_NICS], i, pick, nnear = 0;
	char from[160] = "";

	if (spec)
		snprintf(from, sizeof(from), " CCOM_SOCKET_IFNAME=%s allows", spec);
	if (nhosts <= 1) {
		snprintf(why, len, "the bootstrap address (one host: no TCP between hosts)");
		return -1;
	}
	if (boot < 0) {
		snprintf(why, len, "the bootstrap address (its interface is not one of the%s %d candidate(s))",
			 spec ? " ones" : "", n);
		return -1;
	}
	if (n < 2) {
		snprintf(why, len, "%s %s (the only interface%s)", c[boot].name, c[boot].addr,
			 spec ? " CCOM_SOCKET_IFNAME allows" :
			 "; without CCOM_SOCKET_IFNAME a virtual one counts only if the bootstrap uses it");
		return -1;
	}
	n = n > CCOM_TOPO_TCP_NICS ? CCOM_TOPO_TCP_NICS : n;
	for (i = 0; i < n; i++)
		nodes[i] = c[i].numa_node;
	pick = ccom_topo_nearest(nodes, n, node, lrank, &nnear);
	if (pick < 0)
		return -1;
	snprintf(why, len, "%s %s (NUMA node %d; local rank %d of %d interfaces %s;%s %d)",
		 c[pick].name, c[pick].addr, c[pick].numa_node, lrank < 0 ? 0 : lrank, nnear,
		 nnear < n ? "on this rank's node" : "(none nearer than another)",
		 spec ? from : " candidates", n);
	return pick;
}

/* @sa as a v4-mapped or native IPv6 address (the form of peer_info.listen_addr). */
static void to_in6(const struct sockaddr *sa, struct sockaddr_in6 *out)
{
	memset(out, 0, sizeof(*out));
	out->sin6_family = AF_INET6;
	if (sa->sa_family == AF_INET) {
		out->sin6_addr.s6_addr[10] = 0xff;
		out->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&out->sin6_addr.s6_addr[12], &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else {
		out->sin6_addr = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	}
}

static int prefix_len(const struct sockaddr *mask)
{
	const uint8_t *b;
	int n, i, bits = 0;

	if (!mask)
		return 0;
	if (mask->sa_family == AF_INET) {
		b = (const uint8_t *)&((const struct sockaddr_in *)(const void *)mask)->sin_addr;
		n = 4;
	} else {
		b = ((const struct sockaddr_in6 *)(const void *)mask)->sin6_addr.s6_addr;
		n = 16;
	}
	for (i = 0; i < n; i++)
		bits += __builtin_popcount(b[i]);
	return bits;
}

/* One TCP candidate: its topo->tcp row and the address as net_socket takes it. */
struct tcp_cand {
	struct ccom_topo_tcp_nic row;
	struct sockaddr_in6 addr;
};

static int cand_by_name(const void *a, const void *b)
{
	return strcmp(((const struct tcp_cand *)a)->row.name, ((const struct tcp_cand *)b)->row.name);
}

/* Is @name backed by a device (/sys/class/net/NAME/device: a NIC, not a bridge, veth or tunnel)? */
static bool has_device(const char *name)
{
	char path[64 + IF_NAMESIZE];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
	return access(path, F_OK) == 0;
}

/*
 * The candidates of family @family; an interface with several addresses
 * counts once, with the bootstrap address @bs if it has it, else its first.
 * Without CCOM_SOCKET_IFNAME (@named false) a virtual interface counts
 * only if it carries the bootstrap address: a bridge such as virbr0 has
 * the same address on every host and reaches none of the others.
 */
static int list_candidates(struct tcp_cand *out, int max, int family,
			   const struct sockaddr_in6 *bs, bool named)
{
	struct ifaddrs *list = NULL, *ifa;
	int n = 0, i;

	if (getifaddrs(&list))
		return 0;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		struct sockaddr_in6 a6;
		bool boot;

		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
		    !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK) ||
		    strlen(ifa->ifa_name) >= IF_NAMESIZE || !ccom_iface_allowed(ifa->ifa_name))
			continue;
		if (family == AF_INET6 &&
		    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr))
			continue;
		to_in6(ifa->ifa_addr, &a6);
		boot = !memcmp(&a6.sin6_addr, &bs->sin6_addr, sizeof(a6.sin6_addr));
		if (!named && !boot && !has_device(ifa->ifa_name))
			continue;
		for (i = 0; i < n && strcmp(out[i].row.name, ifa->ifa_name); i++)
			;
		if (i == n) {
			if (n == max)
				continue;
			n++;
		} else if (!boot) {
			continue;	/* keep the first address, or the bootstrap one */
		}
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].row.name, sizeof(out[i].row.name), "%s", ifa->ifa_name);
		inet_ntop(family, family == AF_INET ?
			  (const void *)&((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr :
			  (const void *)&a6.sin6_addr, out[i].row.addr, sizeof(out[i].row.addr));
		out[i].row.prefix = prefix_len(ifa->ifa_netmask);
		out[i].row.numa_node = ccom_numa_netdev_node(ifa->ifa_name);
		out[i].row.bootstrap = boot;
		out[i].addr = a6;
	}
	freeifaddrs(list);
	qsort(out, n, sizeof(*out), cand_by_name);
	return n;
}

void ccom_topo_pick_tcp(struct ccom_topo *topo, struct ccomComm *comm)
{
	struct tcp_cand c[CCOM_TOPO_TCP_NICS];
	const struct sockaddr_in6 *bs = &comm->peers[comm->rank].listen_addr;
	struct sockaddr_in6 b6;
	int family, n, i, boot = -1, pick;

	memset(&comm->tcp_nic, 0, sizeof(comm->tcp_nic));
	topo->ntcp = 0;
	/* The bootstrap's family decides which addresses the peers can reach. */
	if (bs->sin6_family == AF_INET) {
		to_in6((const struct sockaddr *)(const void *)bs, &b6);
		bs = &b6;
	}
	family = bs->sin6_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&bs->sin6_addr) ? AF_INET6 :
		 AF_INET;
	n = bs->sin6_family == AF_INET6 ?
	    list_candidates(c, CCOM_TOPO_TCP_NICS, family, bs, ccom_param_str("CCOM_SOCKET_IFNAME") != NULL) :
	    0;
	for (i = 0; i < n; i++) {
		topo->tcp[i] = c[i].row;
		if (c[i].row.bootstrap && boot < 0)
			boot = i;
	}
	topo->ntcp = n;
	pick = ccom_topo_tcp_rule(topo->tcp, n, boot, topo->local_numa, comm->local_rank,
				  comm->nnodes, ccom_param_str("CCOM_SOCKET_IFNAME"),
				  topo->tcp_choice, sizeof(topo->tcp_choice));
	if (pick >= 0) {
		comm->tcp_nic.addr = c[pick].addr;
		comm->tcp_nic.prefix = c[pick].row.prefix;
		topo->tcp[pick].selected = true;
	} else if (boot >= 0) {
		topo->tcp[boot].selected = true;
	}
	ccom_info(CCOM_SUBSYS_TOPO | CCOM_SUBSYS_NET, "rank %d: TCP interface: %s", comm->rank,
		  topo->tcp_choice);
}
