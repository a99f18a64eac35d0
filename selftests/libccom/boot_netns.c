// SPDX-License-Identifier: MIT
/*
 * Description: two hosts simulated with network namespaces joined by a
 * veth pair (needs root and iproute2; skipped otherwise).  Four ranks, two
 * per namespace, with CCOM_SOCKET_IFNAME naming their veth end,
 * CCOM_COMM_ID on host A's veth address and CCOM_HOSTID per host: init
 * succeeds with 2 nodes of 2 local ranks each, every rank listening on its
 * veth address.  Then a job where one rank of host B picks lo
 * (CCOM_SOCKET_IFNAME=lo, unreachable from host A) must fail on every rank
 * within the 3 s timeout instead of hanging.  The namespaces and the veth
 * are removed on every exit path.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>

#include "core/comm.h"
#include "test_util.h"

static char ns[2][32], veth[2][16], subnet[32];
static int created;

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void cleanup(void)
{
	if (!created)
		return;
	sh("ip netns del %s 2>/dev/null", ns[0]);
	sh("ip netns del %s 2>/dev/null", ns[1]);
	sh("ip link del %s 2>/dev/null", veth[0]);
	created = 0;
}

static int setup(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(ns[i], sizeof(ns[i]), "ccomt%c-%d", 'a' + i, (int)getpid());
		snprintf(veth[i], sizeof(veth[i]), "cv%c%d", 'a' + i, (int)getpid() % 1000000);
	}
	snprintf(subnet, sizeof(subnet), "10.213.%d", (int)getpid() % 250 + 1);
	created = 1;
	if (sh("ip netns add %s", ns[0]) || sh("ip netns add %s", ns[1]))
		return -1;
	if (sh("ip link add %s type veth peer name %s", veth[0], veth[1]))
		return -1;
	for (i = 0; i < 2; i++) {
		if (sh("ip link set %s netns %s", veth[i], ns[i]) ||
		    sh("ip -n %s addr add %s.%d/24 dev %s", ns[i], subnet, i + 1, veth[i]) ||
		    sh("ip -n %s link set %s up", ns[i], veth[i]) ||
		    sh("ip -n %s link set lo up", ns[i]))
			return -1;
	}
	return 0;
}

static int enter_ns(int host)
{
	char path[128];
	int fd, rc;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns[host]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

struct job {
	int port;
	int bad_rank;	/* rank that binds to lo, or -1 */
};

static int rank_main(int rank, int nranks, void *arg)
{
	const struct job *j = arg;
	int host = rank / 2, r;
	char v[64];
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;

	T_CHECK(!enter_ns(host), "setns %s", ns[host]);
	setenv("CCOM_SOCKET_IFNAME", rank == j->bad_rank ? "lo" : veth[host], 1);
	snprintf(v, sizeof(v), "%s.1:%d", subnet, j->port);
	setenv("CCOM_COMM_ID", v, 1);
	snprintf(v, sizeof(v), "simulated-host-%d", host);
	setenv("CCOM_HOSTID", v, 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", j->bad_rank >= 0 ? "3" : "30", 1);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	res = ccomCommInitRank(&comm, nranks, id, rank);
	if (j->bad_rank >= 0) {
		T_CHECK(res != ccomSuccess, "rank %d initialised with an unreachable rank", rank);
		printf("rank %d: %s: %s\n", rank, ccomGetErrorString(res), ccomGetLastError(NULL));
		ccomCommDestroy(comm);
		return 0;
	}
	T_CHECK(res == ccomSuccess, "rank %d: %s", rank, ccomGetLastError(NULL));
	T_CHECK(comm->nnodes == 2 && comm->node == host && comm->local_nranks == 2 &&
			comm->local_rank == rank % 2,
		"rank %d: nodes %d node %d local %d/%d", rank, comm->nnodes, comm->node,
		comm->local_rank, comm->local_nranks);
	for (r = 0; r < nranks; r++) {
		const struct sockaddr_in *a = (const void *)&comm->peers[r].listen_addr;
		char want[64], got[32];

		snprintf(want, sizeof(want), "%s.%d", subnet, r / 2 + 1);
		inet_ntop(AF_INET, &a->sin_addr, got, sizeof(got));
		T_CHECK(a->sin_family == AF_INET && !strcmp(got, want),
			"rank %d listens on %s, want %s", r, got, want);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int run(struct job *j)
{
	int codes[4];

	j->port = 20000 + (int)getpid() % 20000;
	return t_fork_ranks(4, rank_main, j, codes, 60);
}

int main(void)
{
	struct job ok = { .bad_rank = -1 }, bad = { .bad_rank = 3 };
	int rc = T_PASS;

	if (geteuid() != 0)
		return t_skip("needs root for network namespaces");
	if (sh("ip -V >/dev/null 2>&1"))
		return t_skip("iproute2 (ip) is not installed");
	atexit(cleanup);
	if (setup()) {
		cleanup();
		return t_skip("cannot create network namespaces and a veth pair here");
	}
	if (run(&ok)) {
		fprintf(stderr, "FAIL: two-host job over veth did not initialise\n");
		rc = T_FAIL;
	} else {
		printf("2 simulated hosts x 2 ranks over %s/%s: ok\n", veth[0], veth[1]);
	}
	if (rc == T_PASS && run(&bad)) {
		fprintf(stderr, "FAIL: job with a rank on an unreachable interface did not fail cleanly\n");
		rc = T_FAIL;
	}
	cleanup();
	return rc;
}
