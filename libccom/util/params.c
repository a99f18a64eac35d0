// SPDX-License-Identifier: MIT
/*
 * params.c - THE table of CCOM_* environment variables.  Every variable
 * libccom reads is declared here once, with its default and a one-line doc
 * (Documentation/libccom/environment.rst is written from this table).  Other
 * layers add rows here instead of calling getenv() themselves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

static const struct ccom_param_desc params[] = {
	/* Logging */
	{ "CCOM_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE." },
	{ "CCOM_DEBUG_SUBSYS", "ALL",
	  "Comma-separated subsystems logged at INFO/TRACE (INIT,BOOT,NET,SHM,COLL,TUNE,TOPO,PROXY,KDEV,ENV,ALL); ^ excludes." },
	{ "CCOM_DEBUG_FILE", NULL, "Log to this file instead of stderr; %h expands to the host name, %p to the pid." },
	/* Bootstrap */
	{ "CCOM_COMM_ID", NULL,
	  "Fixed rendezvous address <ipv4>:<port> | [<ipv6>]:<port> | <host>:<port>; rank 0 hosts the root there." },
	{ "CCOM_BOOTSTRAP_TIMEOUT", "300",
	  "Seconds every bootstrap wait (rendezvous, ring, all-gather, p2p) may last before ccomTimeout." },
	{ "CCOM_SOCKET_IFNAME", NULL,
	  "Interfaces for bootstrap sockets: comma-separated prefixes; ^ excludes, = requires exact names (e.g. =eth0)." },
	{ "CCOM_SOCKET_FAMILY", NULL, "Address family of bootstrap sockets: AF_INET (4) or AF_INET6 (6)." },
	{ "CCOM_UID_STAGGER_THRESHOLD", "256", "Above this many ranks, ranks spread their root check-ins over time." },
	{ "CCOM_UID_STAGGER_RATE", "7000", "Check-ins per second the root is offered when staggering." },
	{ "CCOM_HOSTID", NULL, "Overrides the host identity used to group ranks into nodes (default: hostname + boot id)." },
	/* Launchers (ccomCommInitFromEnv) */
	{ "CCOM_RANK", NULL, "This process's rank for ccomCommInitFromEnv (wins over launcher variables)." },
	{ "CCOM_NRANKS", NULL, "Number of ranks for ccomCommInitFromEnv (wins over launcher variables)." },
	/* Devices */
	{ "CCOM_DEVICE", NULL, "nccom device index this process binds to (when config.device is unset)." },
	{ "CCOM_MULTI_RANK_DEVICE", "0", "1 allows several ranks of one host bound explicitly (config.device, CCOM_DEVICE) to one nccom device." },
	/* Data path (coll/, transport/, tune/) */
	{ "CCOM_OP_TIMEOUT", "300", "Seconds a collective or stream wait may last before ccomTimeout." },
	{ "CCOM_ALGO", NULL, "Force a collective algorithm: direct (ranks of one host, through shared memory), ring (over the transports) rd (recursive-doubling AllReduce and Bruck AllGather over the transports) or tree (binomial-tree Broadcast and Reduce over the transports); collectives the forced algorithm does not cover use ring." },
	{ "CCOM_PROTO", NULL, "Force a protocol of the direct algorithm: ll (flags in the data, small messages) or simple (staged chunks)." },
	{ "CCOM_TRANSPORT", NULL, "net forces the TCP transport (net_socket) between every pair of ranks, also on one host (testing)." },
	{ "CCOM_SHM_CHUNK", "0", "Bytes per rank and step of the shared-memory direct engine (4 KiB to 64 MiB; 0 = auto: 1 MiB for 2 local ranks, 512 KiB up to 4, else 256 KiB; same on every rank of a host)." },
	{ "CCOM_NCHANNELS", "0",
	  "Channels per rank of the shared-memory direct engine (0-8): N > 1 starts N - 1 worker threads that take part in every copy and reduction of 256 KiB or more; 0 = auto, this rank's share of the CPUs it may run on, at most 4 (one whenever local ranks match or outnumber them). May differ between ranks." },
	/* kdev room (libccom/transport/kdev/, schedules in libccom/coll/kdev_*.c) */
	{ "CCOM_KDEV", NULL,
	  "1 forces the kdev transport (/dev/nccom engine, single copy on user buffers) for every collective it runs and every Send/Recv between local ranks (error if the driver is unusable); 0 turns it off; unset: used when /dev/nccom is usable, per collective and size where it measured faster than shm (Documentation/libccom/kdev.rst), never below CCOM_KDEV_MIN_BYTES." },
	{ "CCOM_KDEV_MIN_BYTES", "65536",
	  "With CCOM_KDEV unset: no collective or Send/Recv smaller than this (bytes as ccom-perf counts them) runs on the nccom engine; above it the per-collective thresholds of Documentation/libccom/kdev.rst apply (same on every rank)." },
	{ "CCOM_KDEV_CACHE", "64", "User-buffer registrations kept by the kdev registration cache (LRU, 4-4096)." },
	{ "CCOM_NSOCKS", "2",
	  "TCP sockets per peer for net_socket (1-16); the byte stream is striped over them in CCOM_NET_CHUNK pieces." },
	{ "CCOM_NET_CHUNK", "131072", "Bytes per stripe piece on net_socket sockets (4096 to 64 MiB; same on every rank)." },
	{ "CCOM_NET", NULL,
	  "Network transport between hosts: ib (RDMA verbs, net_ib: error if a rank has no ACTIVE RDMA port), socket (TCP, net_socket); unset: ib when every rank has an ACTIVE RDMA port, else socket (same on every rank)." },
	{ "CCOM_IB_HCA", NULL,
	  "RDMA devices and ports net_ib may use: comma-separated device-name prefixes, each optionally :port; ^ excludes, = requires exact names (e.g. =mlx5_0:1); the first ACTIVE match is used." },
	{ "CCOM_IB_GID_INDEX", "-1",
	  "GID index net_ib uses on its port; -1 = auto: RoCE v2 (IPv4-mapped first) on Ethernet ports, index 0 on InfiniBand." },
	{ "CCOM_IB_SLOTS", "16", "Receive slots per direction of a net_ib connection (2-256): a sender has at most this many slots not yet credited back (same on every rank)." },
	{ "CCOM_IB_SLOT_SIZE", "131072", "Bytes per net_ib slot (4096 to 16 MiB, a multiple of 64; same on every rank); each connection registers 2 x CCOM_IB_SLOTS x this." },
	{ "CCOM_IB_LIB", "libibverbs.so.1", "The verbs library net_ib loads with dlopen (a name or path)." },
	{ "CCOM_IB_TIMEOUT", "18", "net_ib QP ack timeout exponent (1-31): an unacknowledged write is resent after 4.096 us x 2^N (18: 1.07 s), 7 times before the peer counts as gone." },
	{ "CCOM_TOPO_DUMP_FILE", NULL,
	  "Write the topology and graphs as JSON to this file; %r rank, %h host, %p pid; without %r only rank 0 writes." },
	/* Inspection (publish/) */
	{ "CCOM_PUBLISH", "1",
	  "0 turns off the per-communicator state file read by ccomd and ccomctl (publish/)." },
	{ "CCOM_PUBLISH_DIR", "/dev/shm/ccom",
	  "Directory of the per-communicator state files (created 1777 if missing)." },
	/* Test hooks: never set in production */
	{ "CCOM_TEST_FAKE_BUILD_HASH", NULL, "TEST ONLY: pretend this library has this build hash (hex)." },
	{ "CCOM_TEST_FAKE_VERSION", NULL, "TEST ONLY: pretend this library has this version code." },
	{ "CCOM_TEST_FAKE_ABI", NULL, "TEST ONLY: pretend this library has this ABI compat id." },
	{ "CCOM_TEST_FORCE_DEVICE", NULL,
	  "TEST ONLY: bind to this device index even without /dev/nccom (duplicate-device tests)." },
};

#define NPARAMS ((int)(CCOM_ARRAY_SIZE(params)))

static const struct ccom_param_desc *find(const char *name)
{
	int i;

	for (i = 0; i < NPARAMS; i++)
		if (!strcmp(params[i].name, name))
			return &params[i];
	ccom_warn("internal: parameter %s is not declared in util/params.c", name);
	return NULL;
}

const char *ccom_param_str(const char *name)
{
	const struct ccom_param_desc *p = find(name);
	const char *v;

	if (!p)
		return NULL;
	v = getenv(name);
	if (v && v[0])
		return v;
	return p->def;
}

int64_t ccom_param_int(const char *name)
{
	const struct ccom_param_desc *p = find(name);
	const char *v;
	char *end;
	long long x;

	if (!p)
		return 0;
	v = getenv(name);
	if (v && v[0]) {
		errno = 0;
		x = strtoll(v, &end, 0);
		if (!errno && end != v && *end == '\0')
			return x;
		ccom_warn("%s=%s is not an integer; using the default %s", name, v,
			  p->def ? p->def : "(none)");
	}
	if (!p->def)
		return 0;
	return strtoll(p->def, NULL, 0);
}

int ccom_param_is_set(const char *name)
{
	const char *v = getenv(name);

	return find(name) && v && v[0];
}

int ccom_params_list(const struct ccom_param_desc **table)
{
	*table = params;
	return NPARAMS;
}
