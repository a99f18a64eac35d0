// SPDX-License-Identifier: MIT
/*
 * net_tclass.c - the traffic class of a communicator's network traffic
 * (see net_tclass.h).  The config's trafficClass is per communicator and
 * wins; the environment gives the process-wide default, like NCCL_IB_TC and
 * NCCL_IB_SL.  Out-of-range environment values get one WARN and are
 * ignored (the config's range was checked at init).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#include "core/comm.h"
#include "transport/net_tclass.h"
#include "util/log.h"
#include "util/params.h"

/* @name's value if it is set and within [0, @max], else -1 (one WARN per process). */
static int env_byte(const char *name, int max)
{
	static _Atomic int warned;
	int64_t v;

	if (!ccom_param_is_set(name))
		return -1;
	v = ccom_param_int(name);
	if (v >= 0 && v <= max)
		return (int)v;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		ccom_warn("%s=%lld is out of range [0, %d]; ignored: set a value in range or unset it",
			  name, (long long)v, max);
	return -1;
}

int ccom_net_socket_tos(const struct ccomComm *comm)
{
	if (comm->config.trafficClass != CCOM_CONFIG_UNDEF_INT)
		return comm->config.trafficClass;
	return env_byte("CCOM_SOCKET_TOS", 255);
}

void ccom_net_socket_set_tos(const struct ccomComm *comm, int fd)
{
	static _Atomic int warned;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int tos = ccom_net_socket_tos(comm);
	int rc;

	if (tos < 0)
		return;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET6) {
		rc = setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
		/* A v4-mapped peer's packets are IPv4: they take IP_TOS. */
		if (!rc && IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&ss)->sin6_addr))
			rc = setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	} else {
		rc = setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	}
	if (rc && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		ccom_warn("net_socket: rank %d cannot set traffic class %#x on its data socket: %s; its traffic goes unmarked",
			  comm->rank, tos, strerror(errno));
}

uint8_t ccom_net_ib_tc(const struct ccomComm *comm)
{
	int tc;

	if (comm->config.trafficClass != CCOM_CONFIG_UNDEF_INT)
		return (uint8_t)comm->config.trafficClass;
	tc = env_byte("CCOM_IB_TC", 255);
	return tc < 0 ? 0 : (uint8_t)tc;
}

uint8_t ccom_net_ib_sl(void)
{
	int sl = env_byte("CCOM_IB_SL", 15);

	return sl < 0 ? 0 : (uint8_t)sl;
}
