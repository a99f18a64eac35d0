// SPDX-License-Identifier: MIT
/*
 * Description: the topology building blocks without a communicator: host
 * grouping from host hashes (hosts ordered by lowest rank), the ring keeps
 * the ranks of one host together (interleaved and uneven hosts), the
 * two-level tree has one root and parents inside the host or among host
 * leaders, cpulist parsing accepts sysfs syntax and rejects garbage, local
 * discovery finds CPUs, a NUMA node and the loopback interface, and the
 * JSON dump is written (with %r expanded) and holds the graphs; the
 * nearest-port rule (ccom_topo_nearest) takes a port on the rank's NUMA
 * node, spreads the local ranks over equally near ports, and falls back to
 * all ports when none is on the node or the node is unknown; the TCP
 * interface rule (ccom_topo_tcp_rule) applies it to the interfaces by local
 * rank (rails) and keeps the bootstrap address for one candidate, one
 * host, or a bootstrap interface outside the candidates; the helpers it
 * and net_socket use (ccom_iface_allowed: CCOM_SOCKET_IFNAME prefixes,
 * ^ and =; ccom_addr_in_subnet: IPv4/IPv6 prefixes) answer as documented.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "topo/topo.h"
#include "util/socket.h"

static int fails;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		fails++;						\
	}								\
} while (0)

static struct ccom_topo *build(const uint64_t *hashes, int n)
{
	struct ccom_topo *t = calloc(1, sizeof(*t));

	if (!t || ccom_topo_group_hosts(t, hashes, n) || ccom_topo_build_graphs(t)) {
		fprintf(stderr, "cannot build a topology of %d ranks\n", n);
		exit(1);
	}
	return t;
}

static void test_ring_interleaved(void)
{
	/* Hosts A B A B C A: three hosts, A = {0,2,5}, B = {1,3}, C = {4}. */
	static const uint64_t h[] = { 0xa, 0xb, 0xa, 0xb, 0xc, 0xa };
	static const int want[] = { 0, 2, 5, 1, 3, 4 };
	struct ccom_topo *t = build(h, 6);
	int i, cross = 0, roots = 0;

	CHECK(t->nhosts == 3, "%d hosts, want 3", t->nhosts);
	for (i = 0; i < 6; i++) {
		CHECK(t->ring[i] == want[i], "ring[%d] = %d, want %d", i, t->ring[i], want[i]);
		CHECK(t->ring[t->ring_pos[i]] == i, "ring_pos of %d inconsistent", i);
		if (!ccom_topo_same_host(t, t->ring[i], t->ring[(i + 1) % 6]))
			cross++;
	}
	CHECK(cross == 3, "ring crosses hosts %d times, want 3 (once per host)", cross);
	CHECK(ccom_topo_ring_next(t, 5) == 1 && ccom_topo_ring_prev(t, 0) == 4,
	      "ring neighbours wrong");
	for (i = 0; i < 6; i++) {
		int p = t->tree_parent[i];

		if (p < 0) {
			roots++;
			continue;
		}
		/* Parent is on the same host, or i is a host leader and p a leader. */
		CHECK(ccom_topo_same_host(t, i, p) ||
		      (t->hosts[t->rank_host[i]].ranks[0] == i && t->hosts[t->rank_host[p]].ranks[0] == p),
		      "tree parent of %d is %d: neither same host nor leader link", i, p);
	}
	CHECK(roots == 1 && t->tree_parent[0] == -1, "tree has %d roots, want only rank 0", roots);
	ccom_topo_free(t);
}

static void test_single_host(void)
{
	static const uint64_t h[] = { 7, 7, 7, 7, 7, 7, 7, 7 };
	struct ccom_topo *t = build(h, 8);
	int i;

	CHECK(t->nhosts == 1 && t->hosts[0].nranks == 8, "one host of 8 expected");
	for (i = 0; i < 8; i++)
		CHECK(t->ring[i] == i, "single-host ring is not rank order at %d", i);
	CHECK(t->tree_parent[7] == 3 && t->tree_parent[1] == 0, "binary tree parents wrong");
	ccom_topo_free(t);
}

static void test_cpulist(void)
{
	uint64_t bits[16];

	CHECK(ccom_topo_parse_cpulist("0-3,8,10-11\n", bits, 1024) == 7, "count of 0-3,8,10-11");
	CHECK(bits[0] == 0xd0fULL, "bits of 0-3,8,10-11: %llx", (unsigned long long)bits[0]);
	CHECK(ccom_topo_parse_cpulist("5", bits, 1024) == 1, "single cpu");
	CHECK(ccom_topo_parse_cpulist("", bits, 1024) == 0, "empty list");
	CHECK(ccom_topo_parse_cpulist("3-1", bits, 1024) < 0, "reversed range accepted");
	CHECK(ccom_topo_parse_cpulist("1,x", bits, 1024) < 0, "garbage accepted");
	CHECK(ccom_topo_parse_cpulist("2000", bits, 1024) < 0, "out-of-range cpu accepted");
}

static void test_discover_and_dump(void)
{
	static const uint64_t h[] = { 1, 2 };
	struct ccom_topo *t = build(h, 2);
	struct ccomComm comm = { .rank = 1, .nranks = 2, .comm_hash = 0x1234 };
	char path[128], want[128], buf[65536];
	int i, lo = -1;
	size_t n;
	FILE *f;

	CHECK(ccom_topo_discover_local(t, NULL) == 0, "local discovery failed");
	CHECK(t->ncpus_online >= 1 && t->naffinity >= 1, "no CPUs found");
	CHECK(t->nnuma >= 1 && t->numa[0].ncpus >= 1, "no NUMA node with CPUs");
	for (i = 0; i < t->nnics; i++)
		if (t->nics[i].loopback)
			lo = i;
	CHECK(lo >= 0, "loopback interface not found among %d NICs", t->nnics);
	if (lo >= 0)
		CHECK(t->nics[lo].naddrs >= 1 && !strcmp(t->nics[lo].addrs[0], "127.0.0.1"),
		      "loopback address not found");
	snprintf(path, sizeof(path), "/tmp/ccom-topo-graph-%d-%%r.json", (int)getpid());
	snprintf(want, sizeof(want), "/tmp/ccom-topo-graph-%d-1.json", (int)getpid());
	CHECK(ccom_topo_dump_write(t, &comm, path) == 0, "dump failed");
	f = fopen(want, "r");
	CHECK(f, "dump not written to %s", want);
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		CHECK(strstr(buf, "\"ring\": [0, 1]") && strstr(buf, "\"ring_host_crossings\": 2") &&
		      strstr(buf, "\"nranks\": 2") && strstr(buf, "\"comm_hash\": \"0x0000000000001234\""),
		      "dump content wrong:\n%s", buf);
		CHECK(buf[n - 2] == '}', "dump does not end with a closing brace");
		unlink(want);
	}
	CHECK(ccom_topo_dump_write(t, &comm, "/nonexistent-dir/x.json") < 0,
	      "dump to a missing directory did not fail");
	ccom_topo_free(t);
}

static void test_nearest(void)
{
	const int two_nodes[4] = { 1, 0, 1, 0 }, virt[3] = { -1, -1, -1 };
	int nn = 0, r;

	/* Ports 1 and 3 are on node 0: local ranks alternate between them. */
	CHECK(ccom_topo_nearest(two_nodes, 4, 0, 0, &nn) == 1 && nn == 2, "node 0, rank 0");
	CHECK(ccom_topo_nearest(two_nodes, 4, 0, 1, NULL) == 3, "node 0, rank 1");
	CHECK(ccom_topo_nearest(two_nodes, 4, 0, 2, NULL) == 1, "node 0, rank 2 wraps");
	CHECK(ccom_topo_nearest(two_nodes, 4, 1, 1, NULL) == 2, "node 1, rank 1");
	/* No port on the rank's node, or the node unknown: all ports, spread by rank. */
	CHECK(ccom_topo_nearest(two_nodes, 4, 2, 3, &nn) == 3 && nn == 4, "node 2: all ports");
	CHECK(ccom_topo_nearest(two_nodes, 4, -1, 1, NULL) == 1, "node unknown");
	for (r = 0; r < 6; r++)
		CHECK(ccom_topo_nearest(virt, 3, 0, r, NULL) == r % 3, "virtual ports, rank %d", r);
	CHECK(ccom_topo_nearest(virt, 0, 0, 0, NULL) == -1, "no port");
	CHECK(ccom_topo_nearest(virt, 1, 0, -4, NULL) == 0, "a negative local rank counts as 0");
}

/* A TCP candidate for ccom_topo_tcp_rule(). */
static struct ccom_topo_tcp_nic tcp_nic(const char *name, int node)
{
	struct ccom_topo_tcp_nic c = { .numa_node = node, .prefix = 24 };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.addr, sizeof(c.addr), "10.0.%s.1", name + strlen(name) - 1);
	return c;
}

static void test_tcp_rule(void)
{
	struct ccom_topo_tcp_nic virt[2] = { tcp_nic("eth0", -1), tcp_nic("eth1", -1) };
	struct ccom_topo_tcp_nic numa[4] = { tcp_nic("eth0", 0), tcp_nic("eth1", 1),
					     tcp_nic("eth2", 0), tcp_nic("eth3", 1) };
	char why[256];
	int r;

	/* Rail-aligned: local rank l takes interface l mod n, whichever the bootstrap one is. */
	for (r = 0; r < 4; r++) {
		CHECK(ccom_topo_tcp_rule(virt, 2, 0, -1, r, 2, NULL, why, sizeof(why)) == r % 2,
		      "virtual interfaces, local rank %d: %s", r, why);
		CHECK(ccom_topo_tcp_rule(virt, 2, 1, 0, r, 3, "eth", why, sizeof(why)) == r % 2,
		      "bootstrap on eth1, local rank %d: %s", r, why);
	}
	CHECK(strstr(why, "eth1 10.0.1.1") && strstr(why, "local rank 3 of 2 interfaces") &&
	      strstr(why, "CCOM_SOCKET_IFNAME=eth allows 2"), "sentence: %s", why);
	/* On the rank's NUMA node first, spread among those. */
	CHECK(ccom_topo_tcp_rule(numa, 4, 0, 1, 0, 2, NULL, why, sizeof(why)) == 1, "node 1, lrank 0");
	CHECK(strstr(why, "on this rank's node"), "sentence: %s", why);
	CHECK(ccom_topo_tcp_rule(numa, 4, 0, 1, 1, 2, NULL, why, sizeof(why)) == 3, "node 1, lrank 1");
	CHECK(ccom_topo_tcp_rule(numa, 4, 0, 0, 3, 2, NULL, why, sizeof(why)) == 2, "node 0, lrank 3");
	CHECK(ccom_topo_tcp_rule(numa, 4, 0, -1, 3, 2, NULL, why, sizeof(why)) == 3,
	      "node unknown: all four");
	CHECK(strstr(why, "none nearer"), "sentence: %s", why);
	/* Today's behaviour: one candidate, one host, or a bootstrap interface not among them. */
	CHECK(ccom_topo_tcp_rule(virt, 1, 0, -1, 1, 2, NULL, why, sizeof(why)) == -1 &&
	      strstr(why, "eth0 10.0.0.1 (the only interface; without CCOM_SOCKET_IFNAME"),
	      "one candidate: %s", why);
	CHECK(ccom_topo_tcp_rule(virt + 1, 1, 0, -1, 1, 2, "=eth1", why, sizeof(why)) == -1 &&
	      strstr(why, "the only interface CCOM_SOCKET_IFNAME allows"), "forced: %s", why);
	CHECK(ccom_topo_tcp_rule(virt, 2, 0, -1, 1, 1, NULL, why, sizeof(why)) == -1 &&
	      strstr(why, "one host"), "one host: %s", why);
	CHECK(ccom_topo_tcp_rule(virt, 2, -1, -1, 1, 2, NULL, why, sizeof(why)) == -1 &&
	      strstr(why, "not one of the 2"), "bootstrap elsewhere: %s", why);
	CHECK(ccom_topo_tcp_rule(virt, 0, -1, -1, 0, 2, NULL, why, sizeof(why)) == -1, "none");
}

static union ccom_sockaddr addr4(const char *s)
{
	union ccom_sockaddr a = { .sin = { .sin_family = AF_INET } };

	inet_pton(AF_INET, s, &a.sin.sin_addr);
	return a;
}

/* The util/socket.c helpers nic_tcp.c and net_socket rely on. */
static void test_tcp_helpers(void)
{
	union ccom_sockaddr a = addr4("10.1.2.3"), n = addr4("10.1.3.1");
	union ccom_sockaddr v6 = { .sin6 = { .sin6_family = AF_INET6 } };
	union ccom_sockaddr w6 = { .sin6 = { .sin6_family = AF_INET6 } };

	CHECK(ccom_addr_in_subnet(&a, &n, 16) && ccom_addr_in_subnet(&a, &n, 23) &&
	      !ccom_addr_in_subnet(&a, &n, 24) && ccom_addr_in_subnet(&a, &n, 0),
	      "IPv4 prefixes 16/23/24/0");
	CHECK(ccom_addr_in_subnet(&a, &a, 32) && !ccom_addr_in_subnet(&a, &a, 33) &&
	      !ccom_addr_in_subnet(&a, &a, -1), "IPv4 /32 and bad prefixes");
	inet_pton(AF_INET6, "fd00:1::5", &v6.sin6.sin6_addr);
	inet_pton(AF_INET6, "fd00:1::9", &w6.sin6.sin6_addr);
	CHECK(ccom_addr_in_subnet(&v6, &w6, 64) && !ccom_addr_in_subnet(&v6, &w6, 127) &&
	      !ccom_addr_in_subnet(&v6, &a, 0), "IPv6 /64, /127, family mismatch");
	unsetenv("CCOM_SOCKET_IFNAME");
	CHECK(ccom_iface_allowed("eth0") && !ccom_iface_allowed("lo") &&
	      !ccom_iface_allowed("docker0"), "default rule");
	setenv("CCOM_SOCKET_IFNAME", "ccv,ib", 1);
	CHECK(ccom_iface_allowed("ccv1") && ccom_iface_allowed("ib0") && !ccom_iface_allowed("eth0"),
	      "prefixes");
	setenv("CCOM_SOCKET_IFNAME", "^ccv1,lo", 1);
	CHECK(!ccom_iface_allowed("ccv1") && !ccom_iface_allowed("lo") && ccom_iface_allowed("ccv0"),
	      "exclusion");
	setenv("CCOM_SOCKET_IFNAME", "=ccv1", 1);
	CHECK(ccom_iface_allowed("ccv1") && !ccom_iface_allowed("ccv10"), "exact name");
	setenv("CCOM_SOCKET_IFNAME", "^=ccv1", 1);
	CHECK(!ccom_iface_allowed("ccv1") && ccom_iface_allowed("ccv10"), "exact exclusion");
	unsetenv("CCOM_SOCKET_IFNAME");
}

int main(void)
{
	test_ring_interleaved();
	test_single_host();
	test_cpulist();
	test_nearest();
	test_tcp_rule();
	test_tcp_helpers();
	test_discover_and_dump();
	printf("%s: topology graphs, discovery and dump\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
