// SPDX-License-Identifier: MIT
/*
 * Description: interface selection of bootstrap sockets.
 * CCOM_SOCKET_IFNAME=lo (prefix), =lo (exact) and ^<every other
 * interface> put the root and every rank on 127.0.0.1; a name that matches
 * nothing makes ccomGetUniqueId fail with ccomSystemError naming the
 * variable and the interfaces that are up; CCOM_SOCKET_FAMILY=AF_INET6
 * gives IPv6 addresses (when the host has a global or loopback IPv6
 * address); a bad family is ccomInvalidArgument.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include "core/comm.h"
#include "test_util.h"

static ccomUniqueId id;
static int want_family;

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	int r;

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	for (r = 0; r < nranks; r++) {
		const struct sockaddr_in6 *a = &comm->peers[r].listen_addr;
		const struct sockaddr_in *a4 = (const void *)a;

		T_CHECK(a->sin6_family == want_family, "rank %d listens with family %d", r,
			a->sin6_family);
		if (want_family == AF_INET)
			T_CHECK(a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK),
				"rank %d not on 127.0.0.1", r);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int job(const char *ifname, const char *family, int fam)
{
	int codes[3];

	if (ifname)
		setenv("CCOM_SOCKET_IFNAME", ifname, 1);
	if (family)
		setenv("CCOM_SOCKET_FAMILY", family, 1);
	want_family = fam;
	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "IFNAME=%s FAMILY=%s: ranks failed",
		ifname ? ifname : "", family ? family : "");
	printf("CCOM_SOCKET_IFNAME=%s CCOM_SOCKET_FAMILY=%s: ok\n", ifname ? ifname : "(unset)",
	       family ? family : "(unset)");
	unsetenv("CCOM_SOCKET_IFNAME");
	unsetenv("CCOM_SOCKET_FAMILY");
	return 0;
}

/* "^a,b,c" listing every IPv4 interface except lo. */
static void exclude_all_but_lo(char *buf, size_t len)
{
	struct ifaddrs *list, *ifa;
	size_t o = snprintf(buf, len, "^");

	if (getifaddrs(&list))
		return;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!strcmp(ifa->ifa_name, "lo") || strstr(buf, ifa->ifa_name))
			continue;
		o += snprintf(buf + o, len - o, "%s=%s", o > 1 ? "," : "", ifa->ifa_name);
	}
	freeifaddrs(list);
	/* Written as "^=a,b": exact names, so "lo" is not excluded by a prefix. */
	if (o > 1) {
		char tmp[512];
		char *p, *q = tmp;

		for (p = buf + 1; *p; p++)
			if (*p != '=')
				*q++ = *p;
		*q = '\0';
		snprintf(buf, len, "^=%s", tmp);
	}
}

static int has_ipv6(void)
{
	struct ifaddrs *list, *ifa;
	int found = 0;

	if (getifaddrs(&list))
		return 0;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_in6 *a = (const void *)ifa->ifa_addr;

		if (a && a->sin6_family == AF_INET6 && (ifa->ifa_flags & IFF_UP) &&
		    !IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
			found = 1;
	}
	freeifaddrs(list);
	return found;
}

int main(void)
{
	char excl[600];
	ccomResult_t res;

	if (job("lo", NULL, AF_INET) || job("=lo", NULL, AF_INET))
		return T_FAIL;
	exclude_all_but_lo(excl, sizeof(excl));
	if (strcmp(excl, "^") && job(excl, NULL, AF_INET))
		return T_FAIL;

	setenv("CCOM_SOCKET_IFNAME", "=no-such-if0", 1);
	res = ccomGetUniqueId(&id);
	T_CHECK(res == ccomSystemError, "unknown interface: got %d", res);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "no usable interface", "no-such-if0",
			    "interfaces up", NULL), "message");
	unsetenv("CCOM_SOCKET_IFNAME");
	setenv("CCOM_SOCKET_FAMILY", "AF_BANANA", 1);
	T_CCOM(ccomGetUniqueId(&id), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(NULL), "CCOM_SOCKET_FAMILY=AF_BANANA", NULL), "msg");
	unsetenv("CCOM_SOCKET_FAMILY");

	if (has_ipv6()) {
		if (job(NULL, "AF_INET6", AF_INET6))
			return T_FAIL;
	} else {
		printf("no usable IPv6 address: CCOM_SOCKET_FAMILY=AF_INET6 case not run\n");
	}
	return T_PASS;
}
