// SPDX-License-Identifier: MIT
/*
 * Description: a rank's bootstrap address follows the route to the root.
 * In a fresh network namespace (needs root and iproute2; skipped
 * otherwise) with two up veth interfaces, aaa0 (192.168.5.1/24, first in the
 * interface order, the "management network" no peer would reach) and
 * zzz0 (10.9.0.1/24, where CCOM_COMM_ID puts the root): without
 * CCOM_SOCKET_IFNAME every rank must listen on 10.9.0.1, the address the
 * kernel routes the root through (before, every rank took the first
 * interface, aaa0, which on real hosts is an address the other hosts
 * cannot reach: a hang until the bootstrap timeout).  With
 * CCOM_SOCKET_IFNAME=aaa0 the operator's choice still wins.
 */
#include <arpa/inet.h>
#include <sched.h>

#include "core/comm.h"
#include "test_util.h"

struct job {
	int port;
	const char *ifname;	/* CCOM_SOCKET_IFNAME, or NULL */
	const char *want;	/* the address every rank must listen on */
};

static int rank_main(int rank, int nranks, void *arg)
{
	const struct job *j = arg;
	ccomUniqueId id;
	ccomComm_t comm;
	char v[64];
	int r;

	if (j->ifname)
		setenv("CCOM_SOCKET_IFNAME", j->ifname, 1);
	else
		unsetenv("CCOM_SOCKET_IFNAME");
	snprintf(v, sizeof(v), "10.9.0.1:%d", j->port);
	setenv("CCOM_COMM_ID", v, 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "30", 1);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	for (r = 0; r < nranks; r++) {
		const struct sockaddr_in *a = (const void *)&comm->peers[r].listen_addr;
		char got[32] = "";

		inet_ntop(AF_INET, &a->sin_addr, got, sizeof(got));
		T_CHECK(a->sin_family == AF_INET && !strcmp(got, j->want),
			"CCOM_SOCKET_IFNAME=%s: rank %d listens on %s, want %s",
			j->ifname ? j->ifname : "(unset)", r, got, j->want);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int run(struct job *j)
{
	int codes[2];

	if (!j->port)
		j->port = 20000 + (int)getpid() % 20000;
	return t_fork_ranks(2, rank_main, j, codes, 60);
}

int main(void)
{
	struct job routed = { .want = "10.9.0.1" };
	struct job forced = { .ifname = "aaa0", .want = "192.168.5.1" };
	int rc = T_PASS;

	if (unshare(CLONE_NEWNET)) {
		printf("SKIP: no network namespace (needs root): %s\n", strerror(errno));
		return T_SKIP;
	}
	/* aaa0 is made first: it comes first in getifaddrs()'s order. */
	if (system("ip link set lo up && "
		   "ip link add aaa0 type veth peer name aaa0p && "
		   "ip addr add 192.168.5.1/24 dev aaa0 && ip link set aaa0p up && ip link set aaa0 up && "
		   "ip link add zzz0 type veth peer name zzz0p && "
		   "ip addr add 10.9.0.1/24 dev zzz0 && ip link set zzz0p up && ip link set zzz0 up")) {
		printf("SKIP: cannot make veth interfaces (iproute2, CONFIG_VETH)\n");
		return T_SKIP;
	}
	if (run(&routed)) {
		fprintf(stderr, "FAIL: ranks did not listen on the interface that routes to the root\n");
		rc = T_FAIL;
	} else {
		printf("root on zzz0 behind aaa0: every rank listens on 10.9.0.1: ok\n");
	}
	forced.port = routed.port + 1;
	if (run(&forced)) {
		fprintf(stderr, "FAIL: CCOM_SOCKET_IFNAME=aaa0 was not followed\n");
		rc = T_FAIL;
	} else {
		printf("CCOM_SOCKET_IFNAME=aaa0: every rank listens on 192.168.5.1: ok\n");
	}
	return rc;
}
