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

#include "core/comm.h"
#include "net_util.h"
#include "test_util.h"

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

	/* Also CCOM_HOSTID per host and CCOM_SOCKET_IFNAME=ccv, the veth end. */
	T_CHECK(!nett_enter_host(host), "setns %s", nett_ns[host]);
	if (rank == j->bad_rank)
		setenv("CCOM_SOCKET_IFNAME", "lo", 1);
	snprintf(v, sizeof(v), "%s.1:%d", NETT_SUBNET, j->port);
	setenv("CCOM_COMM_ID", v, 1);
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

		snprintf(want, sizeof(want), "%s.%d", NETT_SUBNET, r / 2 + 1);
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
	int rc;

	rc = nett_hosts_up();
	if (rc)
		return rc;
	if (run(&ok)) {
		fprintf(stderr, "FAIL: two-host job over veth did not initialise\n");
		rc = T_FAIL;
	} else {
		printf("2 simulated hosts x 2 ranks over a veth pair: ok\n");
	}
	if (rc == T_PASS && run(&bad)) {
		fprintf(stderr, "FAIL: job with a rank on an unreachable interface did not fail cleanly\n");
		rc = T_FAIL;
	}
	nett_hosts_down();
	return rc;
}
