// SPDX-License-Identifier: MIT
/*
 * Description: CCOM_COMM_ID.  Malformed values make ccomGetUniqueId fail
 * at once with ccomInvalidArgument and the message "Invalid CCOM_COMM_ID
 * [...], please use format: <ipv4>:<port> | [<ipv6>]:<port> |
 * <hostname>:<port>" (no network wait).  Well-formed values
 * (<ipv4>:<port>, [<ipv6>]:<port>, <hostname>:<port>) bootstrap a 3-rank
 * job in which rank 0 hosts the root at that address.  A well-formed
 * address that is not this host's (TEST-NET-3) fails differently: rank 0
 * cannot host the root (ccomSystemError naming the address), and another
 * rank gives up after its 2 s timeout (ccomTimeout naming the root
 * address), or, where a transparent proxy answers for every address,
 * fails with ccomRemoteError saying the answer is not a ccom message.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test_util.h"

static int check_invalid(const char *val)
{
	ccomUniqueId id;
	ccomResult_t res;

	setenv("CCOM_COMM_ID", val, 1);
	res = ccomGetUniqueId(&id);
	T_CHECK(res == ccomInvalidArgument, "CCOM_COMM_ID=%s: got %d (%s)", val, res,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "Invalid CCOM_COMM_ID", val,
			    "please use format: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>",
			    NULL), "CCOM_COMM_ID=%s: message", val);
	unsetenv("CCOM_COMM_ID");
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomUniqueId id;
	ccomComm_t comm;
	int v;

	setenv("CCOM_COMM_ID", arg, 1);
	/* Every rank builds the id itself from the environment. */
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	T_CCOM(ccomCommUserRank(comm, &v), ccomSuccess);
	T_CHECK(v == rank, "rank");
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int run_job(const char *addr)
{
	int codes[3];

	T_CHECK(!t_fork_ranks(3, rank_main, (void *)addr, codes, 60),
		"CCOM_COMM_ID=%s: ranks failed %d %d %d", addr, codes[0], codes[1], codes[2]);
	printf("CCOM_COMM_ID=%s: 3 ranks initialised\n", addr);
	return 0;
}

static int check_foreign_address(void)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;

	setenv("CCOM_COMM_ID", "203.0.113.7:5555", 1);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	res = t_init_cfg(&comm, 2, id, 0, 1, 2);
	T_CHECK(res == ccomSystemError, "rank 0: got %d (%s)", res, ccomGetErrorString(res));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "cannot host the root at 203.0.113.7:5555",
			    "CCOM_COMM_ID", NULL), "rank 0 message");
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	res = t_init_cfg(&comm, 2, id, 1, 1, 2);
	T_CHECK(res == ccomTimeout || res == ccomRemoteError, "rank 1: got %d (%s)", res,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "bootstrap root at 203.0.113.7:5555",
			    res == ccomTimeout ? "rank 1" : "not a ccom bootstrap message", NULL),
		"rank 1 message");
	printf("rank 1: %s\n", ccomGetLastError(NULL));
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	unsetenv("CCOM_COMM_ID");
	printf("foreign address: rank 0 cannot host the root, rank 1 fails naming it\n");
	return 0;
}

int main(void)
{
	static const char *const bad[] = {
		"not-an-address", "1.2.3.4", "1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:12ab",
		"[::1:5000", "::1:5000", "[zz::q]:80", "[]:80", ":80",
	};
	char addr[64];
	unsigned int i;
	int port;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check_invalid(bad[i]))
			return T_FAIL;
	printf("%u malformed CCOM_COMM_ID values refused\n", i);
	if (check_foreign_address())
		return T_FAIL;

	port = t_free_port(AF_INET);
	T_CHECK(port > 0, "no free port");
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	if (run_job(addr))
		return T_FAIL;
	port = t_free_port(AF_INET);
	snprintf(addr, sizeof(addr), "localhost:%d", port);
	if (run_job(addr))
		return T_FAIL;
	port = t_free_port(AF_INET6);
	if (port > 0) {
		snprintf(addr, sizeof(addr), "[::1]:%d", port);
		if (run_job(addr))
			return T_FAIL;
	} else {
		printf("no IPv6 loopback: [<ipv6>]:<port> case not run\n");
	}
	return T_PASS;
}
