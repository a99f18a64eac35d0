// SPDX-License-Identifier: MIT
/*
 * Description: the TCP interface per rank (topo/nic_tcp.c) between two
 * simulated hosts joined by TWO veth pairs, ccv0 on 10.236.P.0/24 and ccv1
 * on 10.237.P.0/24 (P = pid mod 250), strict reverse-path filtering on
 * (rp_filter=1: a connection whose source address is on the other subnet
 * than its route would be dropped), 2 ranks per host, a 16 MiB int32
 * AllReduce forced to the split-rail schedule (CCOM_ALGO=rail).  The veth
 * counters (tx_bytes of ccv0 and ccv1 in each host's namespace, through its
 * own sysfs) must show, with CCOM_SOCKET_IFNAME=ccv, each interface
 * carrying at least 30% of the host's bytes (local rank l on ccvl), and
 * with CCOM_SOCKET_IFNAME=ccv1 at least 99% on ccv1 (the bootstrap's
 * single interface, as before the rule existed), and with it unset at
 * least 99% on the bootstrap's ccv0 (virtual interfaces are candidates only
 * when named).  A third setup puts both rails on one subnet (a bridge, a
 * routing table per rail by source address, arp_ignore=1), where only the
 * source bind of the connecting side keeps its traffic on its rail.  The
 * two-subnet setup also carries IPv6 (fd00:<236+r>:P::/64), run once with
 * CCOM_SOCKET_FAMILY=AF_INET6 under the 30% rule.  Each rank's topology
 * dump (CCOM_TOPO_DUMP_FILE) must name the interface it selected, with the
 * reason, under placement.tcp.  Needs root and iproute2; skipped otherwise.
 */
#include <time.h>

#include "hier_util.h"

#define H 2
#define L 2
#define S (16u << 20)

/*
 * Two hosts, two rails.  Two subnets: rail r is a veth pair, 10.(236+r).P.h+1/24.
 * One subnet: every veth on one bridge (a switch namespace), rail r of host h at
 * 10.238.P.(2r+h+1)/24, a routing table per rail chosen by source address and
 * arp_ignore=1 (the usual multi-rail setup), so that only a connection bound
 * to a rail's address leaves through that rail.
 */
static int tcp_hosts_up(int one_subnet)
{
	int h, r, pid = (int)getpid(), p = pid % 100000, net = pid % 250;

	if (nett_ns_prologue("TCP rails", ht_hosts_down))
		return NETT_SKIP;
	for (h = 0; h < H; h++) {
		snprintf(ht_ns[h], sizeof(ht_ns[h]), "cctr%dh%d", pid, h);
		if (nett_sh("ip netns add %s", ht_ns[h])) {
			printf("SKIP: cannot create a network namespace (no CAP_SYS_ADMIN or no CONFIG_NET_NS)\n");
			return NETT_SKIP;
		}
		ht_nhosts++;
		if (nett_sh("ip -n %s link set lo up && ip netns exec %s sh -c 'sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.default.rp_filter=1 net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 net.ipv6.conf.all.disable_ipv6=%d net.ipv6.conf.default.disable_ipv6=%d'",
			    ht_ns[h], ht_ns[h], one_subnet, one_subnet))
			return 1;
	}
	if (one_subnet) {
		snprintf(ht_sw, sizeof(ht_sw), "cctr%dsw", pid);
		if (nett_sh("ip netns add %s", ht_sw))
			return 1;
		ht_sw_up = 1;
		if (nett_sh("ip -n %s link add br0 type bridge && ip -n %s link set br0 up", ht_sw,
			    ht_sw)) {
			printf("SKIP: cannot create a bridge (no CONFIG_BRIDGE)\n");
			return NETT_SKIP;
		}
	}
	for (r = 0; r < 2; r++) {
		for (h = 0; h < H; h++) {
			const char *peer_ns = one_subnet ? ht_sw : ht_ns[1];
			char addr[32];

			if (one_subnet || h == 0) {
				if (nett_sh("ip link add ctr%dr%dh%d type veth peer name ctr%dr%dp%d", p, r,
					    h, p, r, h)) {
					printf("SKIP: cannot create a veth pair (no CONFIG_VETH)\n");
					return NETT_SKIP;
				}
				if (nett_sh("ip link set ctr%dr%dh%d netns %s && ip link set ctr%dr%dp%d netns %s",
					    p, r, h, ht_ns[h], p, r, h, peer_ns))
					return 1;
			}
			if (one_subnet)
				snprintf(addr, sizeof(addr), "10.238.%d.%d", net, 2 * r + h + 1);
			else
				snprintf(addr, sizeof(addr), "10.%d.%d.%d", 236 + r, net, h + 1);
			if (nett_sh("ip -n %s link set ctr%dr%d%c%d name ccv%d && ip -n %s addr add %s/24 dev ccv%d && ip -n %s link set ccv%d up",
				    ht_ns[h], p, r, one_subnet || !h ? 'h' : 'p', one_subnet ? h : 0, r,
				    ht_ns[h], addr, r, ht_ns[h], r))
				return 1;
			/* The two-subnet setup also has IPv6: fd00:<236+r>:P::<h+1>/64. */
			if (!one_subnet && nett_sh("ip -n %s addr add fd00:%d:%d::%d/64 dev ccv%d nodad",
						   ht_ns[h], 236 + r, net, h + 1, r))
				return 1;
			if (one_subnet &&
			    (nett_sh("ip -n %s link set ctr%dr%dp%d master br0 && ip -n %s link set ctr%dr%dp%d up",
				     ht_sw, p, r, h, ht_sw, p, r, h) ||
			     nett_sh("ip -n %s rule add from %s table %d && ip -n %s route add 10.238.%d.0/24 dev ccv%d src %s table %d",
				     ht_ns[h], addr, 100 + r, ht_ns[h], net, r, addr, 100 + r)))
				return 1;
		}
	}
	/* Carrier on both rails of each host before the job (up to 5 s; a veth needs both ends up). */
	for (h = 0; h < H; h++)
		if (nett_sh("for i in $(seq 50); do [ $(ip -n %s -o link show | grep -c 'ccv[01]@.*LOWER_UP') = 2 ] && exit 0; sleep 0.1; done; exit 1",
			    ht_ns[h])) {
			fprintf(stderr, "host %d: ccv0 and ccv1 have no carrier after 5 s\n", h);
			return 1;
		}
	return 0;
}

/* Local rank 0's tx_bytes of ccv0 and ccv1 on either side of the measured call. */
static int read_tx(int rank, int after, void *ctx)
{
	long long (*b)[2] = ctx;
	int i;

	for (i = 0; rank % L == 0 && i < 2; i++)
		if ((b[after][i] = ht_if_counter(i, "tx_bytes")) < 0) {
			fprintf(stderr, "rank %d: cannot read /sys/class/net/ccv%d/statistics/tx_bytes\n",
				rank, i);
			return 1;
		}
	return 0;
}

/* Local rank 0 of each host reports (ccv0 bytes << 32) | ccv1 bytes sent by the AllReduce. */
static int body(ccomComm_t comm, int rank, int nranks, void *arg, uint64_t *result)
{
	long long b[2][2] = { { 0 } };

	(void)arg;
	if (ht_measured_allreduce(comm, rank, nranks, S, read_tx, b))
		return 1;
	if (rank % L == 0) {
		printf("  host %d: ccv0 tx_bytes %lld -> %lld, ccv1 tx_bytes %lld -> %lld\n",
		       rank / L, b[0][0], b[1][0], b[0][1], b[1][1]);
		fflush(stdout);	/* the rank leaves with _exit() */
		*result = (uint64_t)(b[1][0] - b[0][0]) << 32 | (uint64_t)(b[1][1] - b[0][1]);
	}
	return 0;
}

/*
 * Rank @rank's dump must select exactly interface @want under
 * placement.tcp, and its choice must contain @why.
 */
static int check_dump(const char *pattern, int rank, const char *want, const char *why,
		      const char *addr_prefix)
{
	char path[128], buf[65536], name[32] = "", addr[64] = "", *p, *q;
	int nsel = 0, rc = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), pattern, rank);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "FAIL: rank %d wrote no topology dump %s\n", rank, path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	p = strstr(buf, "\"tcp\": {\"choice\": \"");
	if (!p) {
		fprintf(stderr, "FAIL: rank %d's dump has no placement.tcp\n", rank);
		return 1;
	}
	q = strchr(p + 19, '"');
	if (!q || !memmem(p, (size_t)(q - p), why, strlen(why))) {
		fprintf(stderr, "FAIL: rank %d's placement.tcp choice lacks \"%s\": %.200s\n", rank,
			why, p);
		rc = 1;
	}
	for (q = strstr(p, "{\"name\": \""); q; q = strstr(q + 1, "{\"name\": \"")) {
		char *end = strchr(q, '}');

		if (!end)
			break;
		if (memmem(q, (size_t)(end - q), "\"selected\": true", 16)) {
			char *a = strstr(q, "\"address\": \"");

			nsel++;
			sscanf(q + 10, "%31[^\"]", name);
			if (a && a < end)
				sscanf(a + 12, "%63[^\"]", addr);
		}
		if (!memmem(q, (size_t)(end - q), "\"numa_node\": -1", 15)) {
			fprintf(stderr, "FAIL: rank %d: a veth with a NUMA node: %.*s\n", rank,
				(int)(end - q), q);
			rc = 1;
		}
	}
	if (nsel != 1 || strcmp(name, want) || strncmp(addr, addr_prefix, strlen(addr_prefix))) {
		fprintf(stderr, "FAIL: rank %d's dump selects %d interface(s) (%s %s), want %s %s...\n",
			rank, nsel, name, addr, want, addr_prefix);
		rc = 1;
	}
	return rc;
}

int main(void)
{
	static const struct {
		int one_subnet;
		const char *ifname;
		const char *family;
	} cases[5] = {
		{ 0, "CCOM_SOCKET_IFNAME=ccv", "CCOM_SOCKET_FAMILY=AF_INET" },
		{ 0, "CCOM_SOCKET_IFNAME=ccv", "CCOM_SOCKET_FAMILY=AF_INET6" },
		{ 0, "CCOM_SOCKET_IFNAME=ccv1", "CCOM_SOCKET_FAMILY=AF_INET" },
		{ 0, "CCOM_SOCKET_IFNAME=", "CCOM_SOCKET_FAMILY=AF_INET" },
		{ 1, "CCOM_SOCKET_IFNAME=ccv", "CCOM_SOCKET_FAMILY=AF_INET" },
	};
	char pattern[96], dumpenv[128];
	struct timespec t0, t1;
	int m, h, r, rc, fails = 0;

	snprintf(pattern, sizeof(pattern), "/tmp/ccom-tcp-rails-%d-%%d.json", (int)getpid());
	snprintf(dumpenv, sizeof(dumpenv), "CCOM_TOPO_DUMP_FILE=/tmp/ccom-tcp-rails-%d-%%r.json",
		 (int)getpid());
	for (m = 0; m < 5; m++) {
		struct ht_job j = { .nranks = H * L, .fn = body, .own_sysfs = 1 };
		/* 1: everything on ccv1; 2 (unset): only the bootstrap's ccv0, veths being virtual. */
		int single = !strcmp(cases[m].ifname, "CCOM_SOCKET_IFNAME=ccv1") ? 1 :
			     !strcmp(cases[m].ifname, "CCOM_SOCKET_IFNAME=") ? 2 : 0;

		if (m == 0 || cases[m].one_subnet != cases[m - 1].one_subnet) {
			ht_hosts_down();
			rc = tcp_hosts_up(cases[m].one_subnet);
			if (rc)
				return rc;
		}
		for (r = 0; r < H * L; r++)
			j.host_of[r] = r / L;
		j.env[0] = "CCOM_ALGO=rail";
		j.env[1] = "CCOM_OP_TIMEOUT=60";
		j.env[2] = cases[m].ifname;
		j.env[3] = dumpenv;
		/* A connection that cannot be made (a source address rp_filter drops) fails in time. */
		j.env[4] = "CCOM_BOOTSTRAP_TIMEOUT=15";
		j.env[5] = cases[m].family;
		printf("%s, %s, %s, CCOM_ALGO=rail, %d hosts x %d ranks, AllReduce of %u bytes:\n",
		       cases[m].one_subnet ? "one subnet, a routing table per rail" : "two subnets",
		       cases[m].ifname, cases[m].family, H, L, S);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (ht_run(&j)) {
			fprintf(stderr, "FAIL: %s: a rank failed\n", cases[m].ifname);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("  job (init, 2 AllReduces, finalize) took %.1f s\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		for (h = 0; h < H; h++) {
			double b0 = (double)(j.result[h * L] >> 32);
			double b1 = (double)(j.result[h * L] & 0xffffffffu), tot = b0 + b1;

			printf("  host %d sent %.0f bytes: ccv0 %.0f (%.1f%%), ccv1 %.0f (%.1f%%)\n", h,
			       tot, b0, tot > 0 ? 100 * b0 / tot : 0, b1, tot > 0 ? 100 * b1 / tot : 0);
			if (tot < S / 2) {
				fprintf(stderr, "FAIL: host %d sent %.0f bytes, less than S/2: the counters do not see the AllReduce\n",
					h, tot);
				fails++;
			} else if (!single && (b0 < 0.3 * tot || b1 < 0.3 * tot)) {
				fprintf(stderr, "FAIL: host %d: an interface carried under 30%% of the bytes\n",
					h);
				fails++;
			} else if (single && (single == 1 ? b1 : b0) < 0.99 * tot) {
				fprintf(stderr, "FAIL: host %d: %s but ccv%d carried under 99%% of the bytes\n",
					h, cases[m].ifname, single == 1);
				fails++;
			}
		}
		for (r = 0; r < H * L; r++) {
			char want[8], why[64];

			snprintf(want, sizeof(want), "ccv%d", single ? single == 1 : r % L);
			if (single == 1)
				snprintf(why, sizeof(why), "the only interface CCOM_SOCKET_IFNAME allows");
			else if (single == 2)
				snprintf(why, sizeof(why), "the only interface; without CCOM_SOCKET_IFNAME");
			else
				snprintf(why, sizeof(why), "local rank %d of 2 interfaces", r % L);
			fails += check_dump(pattern, r, want, why,
					    strstr(cases[m].family, "INET6") ? "fd00:" : "10.");
		}
	}
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
