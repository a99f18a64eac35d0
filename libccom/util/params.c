// SPDX-License-Identifier: MIT
/*
 * params.c - THE table of CCOM_* parameters.  Every variable libccom reads
 * is declared here once, with its default and a one-line doc
 * (Documentation/libccom/environment.rst is written from this table).  Other
 * layers add rows here instead of calling getenv() themselves.
 *
 * A value comes from, in this order: the environment; the configuration
 * file (CCOM_CONF_FILE if set, else ~/.ccom.conf over /etc/ccom.conf);
 * the table's default.  Files hold KEY=VALUE lines (blank lines and
 * # comments allowed, the value may be quoted).  Loaded once per process,
 * on the first parameter read.  An environment variable or a file key that
 * starts with CCOM_ but is not in the table gets one WARN naming the
 * nearest known name; so does an unreadable or malformed file.  The WARNs
 * are queued while loading (the logger itself reads parameters) and printed
 * by ccom_params_flush_warnings(), which the logger calls once it is set up.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#ifndef CCOM_SYSCONF_FILE
#define CCOM_SYSCONF_FILE "/etc/ccom.conf"
#endif

extern char **environ;

static const struct ccom_param_desc params[] = {
	/* Logging */
	{ "CCOM_DEBUG", "WARN", "Log level: NONE, WARN, INFO or TRACE." },
	{ "CCOM_DEBUG_SUBSYS", "ALL",
	  "Comma-separated subsystems logged at INFO/TRACE (INIT,BOOT,NET,COLL,TUNE,TOPO,KDEV,ENV,ALL); ^ excludes." },
	{ "CCOM_DEBUG_FILE", NULL, "Log to this file instead of stderr; %h expands to the host name, %p to the pid." },
	/* Configuration files */
	{ "CCOM_CONF_FILE", NULL,
	  "Read settings from this file instead of /etc/ccom.conf and ~/.ccom.conf (KEY=VALUE lines, # comments); the environment wins over every file." },
	/* Bootstrap */
	{ "CCOM_COMM_ID", NULL,
	  "Fixed rendezvous address <ipv4>:<port> | [<ipv6>]:<port> | <host>:<port>; rank 0 hosts the root there." },
	{ "CCOM_COMM_SECRET", NULL,
	  "Job secret (1 to 4096 bytes) mixed into the key of every unique id: ranks must all set the same one; with it, neither CCOM_COMM_ID nor the 128 bytes of an id (e.g. in torch's TCPStore) are enough to join." },
	{ "CCOM_COMM_SECRET_FILE", NULL,
	  "A file holding the job secret instead of CCOM_COMM_SECRET (trailing newline ignored); refused unless a regular file of this user that no one else can read (chmod 600)." },
	{ "CCOM_BOOTSTRAP_TIMEOUT", "300",
	  "Seconds every bootstrap wait (rendezvous, ring, all-gather, p2p) may last before ccomTimeout." },
	{ "CCOM_SOCKET_IFNAME", NULL,
	  "Interfaces for bootstrap sockets: comma-separated prefixes; ^ excludes, = requires exact names (e.g. =eth0)." },
	{ "CCOM_SOCKET_FAMILY", NULL, "Address family of bootstrap sockets: AF_INET (4) or AF_INET6 (6)." },
	{ "CCOM_UID_STAGGER_THRESHOLD", "256", "Above this many ranks, ranks spread their root check-ins over time." },
	{ "CCOM_UID_STAGGER_RATE", "7000", "Check-ins per second the root is offered when staggering." },
	{ "CCOM_BOOTSTRAP_HIER", NULL,
	  "1 forces the hierarchical bootstrap (ranks check in with a leader per host, only leaders with the root), 0 the flat one; unset: hierarchical from CCOM_BOOTSTRAP_HIER_THRESHOLD ranks (also with several unique ids: one leader per host and root). Same on every rank." },
	{ "CCOM_BOOTSTRAP_HIER_THRESHOLD", "128", "With CCOM_BOOTSTRAP_HIER unset, jobs of at least this many ranks bootstrap hierarchically." },
	{ "CCOM_HOSTID", NULL, "Overrides the host identity used to group ranks into nodes (default: hostname + boot id)." },
	/* Launchers (ccomCommInitFromEnv) */
	{ "CCOM_RANK", NULL, "This process's rank for ccomCommInitFromEnv (wins over launcher variables)." },
	{ "CCOM_NRANKS", NULL, "Number of ranks for ccomCommInitFromEnv (wins over launcher variables)." },
	/* Devices */
	{ "CCOM_DEVICE", NULL, "nccom device index this process binds to (when config.device is unset)." },
	{ "CCOM_MULTI_RANK_DEVICE", "0", "1 allows several ranks of one host bound explicitly (config.device, CCOM_DEVICE) to one nccom device." },
	/* Data path (coll/, transport/, tune/) */
	{ "CCOM_OP_TIMEOUT", "300", "Seconds a collective or stream wait may last before ccomTimeout." },
	{ "CCOM_PEER_TIMEOUT", "30",
	  "Seconds a remote host may leave every TCP packet unacknowledged, keepalive probes included, before its ranks count as lost (a powered-off or cut-off host sends no FIN or RST): a stuck operation then fails with ccomRemoteError naming the host and its ranks, which ccomCommGetFailedRanks lists (1-3600; 0: off, such a loss ends only at CCOM_OP_TIMEOUT). A live host's kernel answers the probes even while its ranks are stopped or slow." },
	{ "CCOM_ALGO", NULL, "Force a collective algorithm: direct (ranks of one host, through shared memory), ring (over the transports) rd (recursive-doubling AllReduce and Bruck AllGather over the transports), tree (binomial-tree Broadcast and Reduce over the transports), rail (hosts of equal rank counts: split-rail AllReduce), rab (ranks on several hosts: AllReduce through the hosts' leaders) or hostpair (ranks on several hosts: AlltoAll aggregated per host pair); rail and rab run Broadcast and Reduce through the hosts' leaders; rail, rab and hostpair fall back to the flat choice on layouts they cannot run on; collectives the forced algorithm does not cover use ring." },
	{ "CCOM_PROTO", NULL, "Force a protocol of the direct algorithm: ll (a flag per 4 data bytes, small messages), ll128 (a flag per 64-byte cache line, small and medium messages, up to 64 KiB per rank) or simple (staged chunks); a message the forced protocol cannot carry takes the tuner's choice among the others." },
	{ "CCOM_CHECK_MISMATCH", "1", "1 checks that the ranks call the same collective (kind, count, datatype, op, root) as their n-th collective (on one host through the host segment, between hosts as a 32-byte signature on each network connection the collective uses) and fails a mismatch on every rank that exchanges with the mismatched one with ccomInvalidUsage naming both calls; 0 turns the check off. Must be the same on every rank of a multi-host communicator (init fails otherwise)." },
	{ "CCOM_TRANSPORT", NULL, "net forces the TCP transport (net_socket) between every pair of ranks, also on one host (testing)." },
	{ "CCOM_SHM_CHUNK", "0", "Bytes per rank and step of the shared-memory direct engine (4 KiB to 64 MiB; 0 = auto: 1 MiB for 2 local ranks, 512 KiB up to 4, else 256 KiB; same on every rank of a host)." },
	{ "CCOM_NCHANNELS", "0",
	  "Channels per rank of the shared-memory direct engine (0-8): N > 1 starts N - 1 worker threads that take part in every copy and reduction of 256 KiB or more; 0 = auto, this rank's share of the CPUs it may run on, at most 4 (one whenever local ranks match or outnumber them). May differ between ranks." },
	{ "CCOM_CMA", "auto",
	  "The CMA path (process_vm_readv/writev on the ranks' own buffers, one host, no driver needed) for AllReduce, Reduce, ReduceScatter, AllGather, Broadcast, AlltoAll, Gather and Scatter from 64 KiB per rank, and Send/Recv from CCOM_CMA_P2P_MIN_BYTES: 1 forces it, 0 turns it off, auto uses it per collective and size where it measured faster than the staged path on the first operations. Where a rank may not read its peers (Yama ptrace_scope, another uid, seccomp), it is off for the whole communicator from init, with the reason at INFO." },
	{ "CCOM_CMA_CALIB_FILE", NULL,
	  "Where CCOM_CMA=auto caches its verdicts (which of CMA and the staged path measured faster, per collective, power of two of the size per rank, and out of place or with every rank in place): the file is this name followed by -NLOCAL, the number of local ranks (verdicts depend on it); unset: /dev/shm/ccom-cma-calib3-UID-BOOTID-NLOCAL. Lines 'kind log2 1|-1' (kind 0-7 out of place, 8-15 in place); each sender's Send/Recv verdicts (CMA or the stream) go to the same name followed by -sendL, L its local rank, lines '0 log2 1|-1'; a malformed file is ignored (INFO) and the paths measured again." },
	{ "CCOM_CMA_CALIB_TTL", "600",
	  "Seconds a CMA verdict cache (CCOM_CMA_CALIB_FILE) is trusted after its first verdicts were written (adding one keeps the file's time): a communicator that finds an older file measures the paths again and rewrites it (a race run while other jobs loaded the machine would otherwise decide for the whole boot); 0: for the whole boot." },
	{ "CCOM_TUNE_AUDIT_OPS", "256",
	  "Operations a measured path choice (CCOM_CMA=auto, the kdev race) runs on its verdict before it measures the candidate paths again although the verdict runs at its price (an audit: one race is a sample, and a wrong verdict that runs at its own price never looks wrong); twice as many after each audit that keeps the verdict. 0: no audits (a verdict is then measured again only when its operations run clearly slower than its price)." },
	{ "CCOM_CMA_P2P_MIN_BYTES", "262144",
	  "Send/Recv: the smallest message (bytes) a sender moves on the CMA path (its receiver reads the send buffer with one process_vm_readv) when CCOM_CMA is 1 or auto and the path is on; smaller ones go through the stream. The sender's choice travels in the message's header, so the ranks may differ. A CMA send completes only once its receive ran; the default keeps every send that the shared-memory FIFO (256 KiB) could take before its receive was posted on the stream, so a program that sends before it receives never waits for ever because of CMA; lower it only for programs that post matching sends and receives together (groups)." },
	/* kdev room (libccom/transport/kdev/, schedules in libccom/coll/kdev_*.c) */
	{ "CCOM_KDEV", NULL,
	  "1 forces the kdev transport (/dev/nccom engine, single copy on user buffers) for every collective it runs and every Send/Recv between local ranks (error if the driver is unusable); 0 turns it off; unset: used when /dev/nccom is usable, per collective and size where it measured faster than shm (Documentation/libccom/kdev.rst), never below CCOM_KDEV_MIN_BYTES." },
	{ "CCOM_KDEV_MIN_BYTES", "65536",
	  "With CCOM_KDEV unset: no collective or Send/Recv smaller than this (bytes as ccom-perf counts them) runs on the nccom engine; above it the per-collective thresholds of Documentation/libccom/kdev.rst apply (same on every rank)." },
	{ "CCOM_KDEV_CALIB_FILE", NULL,
	  "Where the kdev engine's calibration (one engine copy timed against memcpy at the first init after the driver was loaded; a verdict of slow keeps the automatic choice off the engine: the staged and mapped paths are still measured) is cached; unset: /dev/shm/ccom-kdev-calib-UID-BOOTID-DEVICE. The file holds 'engine_us memcpy_us slow(0|1)'; a file without a verdict is measured and written." },
	{ "CCOM_KDEV_MAP", "auto",
	  "1: with the kdev transport in use and a driver with NCCOM_FEAT_DMABUF_MMAP, every collective of the kdev schedule and Send/Recv read the local peers' user buffers through mmap()s of their grants and copy or reduce in userspace (mapped single copy, no engine copy per operation); 0: the engine does the copies; auto: grants are mapped and, with CCOM_KDEV unset, the mapped path is one of the candidates the automatic choice measures per collective and size for every collective of the kdev schedule (Send/Recv: the engine; with CCOM_KDEV=1: the engine). May differ between ranks." },
	{ "CCOM_KDEV_RACE_FILE", NULL,
	  "Where the automatic kdev choice (CCOM_KDEV unset: the staged shm path, the engine and the mapped path timed on the operations themselves per collective and power of two of the size) caches its verdicts; unset: /dev/shm/ccom-kdev-race-UID-BOOTID-DEVICE-NLOCAL. Lines 'kind log2 path' (path 0 staged, 1 engine, 2 mapped); a malformed file is ignored (INFO) and the paths measured again." },
	{ "CCOM_KDEV_CACHE", "64", "User-buffer registrations kept by the kdev registration cache (LRU, 4-4096)." },
	{ "CCOM_NSOCKS", "2",
	  "TCP sockets per peer for net_socket (1-16); the byte stream is striped over them in CCOM_NET_CHUNK pieces." },
	{ "CCOM_SOCKET_TOS", NULL,
	  "IP TOS / IPv6 traffic class byte (0-255) of net_socket's data sockets; a communicator's config trafficClass wins; unset: the system default. On TCP the kernel keeps the two ECN bits its own." },
	{ "CCOM_NET_CHUNK", "131072", "Bytes per stripe piece on net_socket sockets (4096 to 64 MiB; same on every rank)." },
	{ "CCOM_NET_CONNECT", "auto",
	  "When net_socket connects a pair of ranks: eager (every pair at init, CCOM_NSOCKS + 1 sockets per remote peer), lazy (a pair in the first operation that uses it; init opens only the listener), auto (lazy when some rank has more than 64 remote peers; same on every rank)." },
	{ "CCOM_NET", NULL,
	  "Network transport between hosts: ib (RDMA verbs, net_ib: error if a rank has no ACTIVE RDMA port), socket (TCP, net_socket); unset: ib when every rank has an ACTIVE RDMA port, else socket (same on every rank); a communicator's config netName wins." },
	{ "CCOM_IB_HCA", NULL,
	  "RDMA devices and ports net_ib may use: comma-separated device-name prefixes, each optionally :port; ^ excludes, = requires exact names (e.g. =mlx5_0:1); the first ACTIVE match is used." },
	{ "CCOM_IB_GID_INDEX", "-1",
	  "GID index net_ib uses on its port; -1 = auto: RoCE v2 (IPv4-mapped first) on Ethernet ports, index 0 on InfiniBand." },
	{ "CCOM_IB_SLOTS", "16", "Receive slots per direction of a net_ib connection (2-256): a sender has at most this many slots not yet credited back (same on every rank)." },
	{ "CCOM_IB_SLOT_SIZE", "131072", "Bytes per net_ib slot (4096 to 16 MiB, a multiple of 64; same on every rank); each connection registers 2 x CCOM_IB_SLOTS x this." },
	{ "CCOM_IB_LIB", "libibverbs.so.1", "The verbs library net_ib loads with dlopen (a name or path)." },
	{ "CCOM_IB_REG_CACHE", "16", "User-buffer ranges net_ib may hold registered at once per device context (0-1024; 0: no zero-copy sends); a registration lives only while writes from it are in flight." },
	{ "CCOM_IB_ZCOPY_MIN", "262144", "net_ib writes a send of at least this many bytes straight from the user's buffer (registered for the send) instead of copying it through the staging slots." },
	{ "CCOM_IB_QPS_PER_CONN", "1", "RC queue pairs per net_ib connection (1-8; same on every rank): the slots of the byte stream are striped over them round robin." },
	{ "CCOM_IB_TC", NULL,
	  "GRH traffic class (0-255) of net_ib's queue pairs, like NCCL_IB_TC; a communicator's config trafficClass wins; unset: 0." },
	{ "CCOM_IB_SL", NULL, "Service level (0-15) of net_ib's queue pairs, like NCCL_IB_SL; unset: 0." },
	{ "CCOM_IB_TIMEOUT", "18", "net_ib QP ack timeout exponent (1-31): an unacknowledged write is resent after 4.096 us x 2^N (18: 1.07 s), 7 times before the peer counts as gone." },
	{ "CCOM_BIND", "auto",
	  "CPU binding at init: auto binds a rank the launcher left unbound (affinity = every online CPU) to the CPUs of the NUMA node of its network interface when that node has a CPU per local rank, else of node local_rank mod nodes; a narrower affinity is kept; none never binds." },
	{ "CCOM_TOPO_DUMP_FILE", NULL,
	  "Write the topology and graphs as JSON to this file; %r rank, %h host, %p pid; without %r only rank 0 writes." },
	{ "CCOM_FLIGHT_RECORDER_ENTRIES", "64",
	  "Operations each communicator's flight recorder keeps (its last N: collective, count, dtype, op, root/peer, algorithm, state, times); dumped at WARN and to CCOM_FLIGHT_RECORDER_FILE when an operation fails or the comm is aborted with operations pending; 0 turns it off." },
	{ "CCOM_FLIGHT_RECORDER_FILE", NULL,
	  "Also write the flight recorder's dump as JSON to this file; %h host, %p pid, %r rank." },
	{ "CCOM_FLIGHT_RECORDER_SIGNAL", NULL,
	  "A signal (name such as USR2, or number) that dumps every communicator's flight recorder of the process on request, like a failure does; unset (the default): no handler is installed." },
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

/*
 * CCOM_* variables of ccom's own test runners, read by them and not by the
 * library: known, so that setting them draws no WARN.
 */
static const char *const not_library[] = {
	"CCOM_TEST_SANITIZER",	/* selftests/libccom: built with ASan/UBSan */
	"CCOM_TEST_TIMEOUT",	/* selftests/libccom/run: seconds per test */
};

#define FILE_VALUE_MAX 1024
#define PENDING_MAX 32

struct file_value {
	char *value;		/* NULL: not set by a file */
	char origin[300];	/* "path:line" */
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct file_value file_values[NPARAMS];
/* WARN/INFO lines found while loading, printed by ccom_params_flush_warnings(). */
static struct {
	int level;
	char msg[600];
} pending[PENDING_MAX];
static int npending;
static atomic_int flushed;

static void queue_line(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void queue_line(int level, const char *fmt, ...)
{
	va_list ap;

	if (npending >= PENDING_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(pending[npending].msg, sizeof(pending[npending].msg), fmt, ap);
	va_end(ap);
	pending[npending++].level = level;
}

static int index_of(const char *name)
{
	int i;

	for (i = 0; i < NPARAMS; i++)
		if (!strcmp(params[i].name, name))
			return i;
	return -1;
}

static int is_known(const char *name)
{
	size_t i;

	if (index_of(name) >= 0)
		return 1;
	for (i = 0; i < CCOM_ARRAY_SIZE(not_library); i++)
		if (!strcmp(not_library[i], name))
			return 1;
	return 0;
}

/* Levenshtein distance of @a and @b (both shorter than 64 bytes; else large). */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[64], prev, tmp;

	if (la >= 64 || lb >= 64)
		return 1000;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int best = prev + (toupper((unsigned char)a[i - 1]) !=
					   toupper((unsigned char)b[j - 1]));

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

const char *ccom_param_nearest(const char *name)
{
	const char *best = NULL;
	int i, d, bestd = 1 << 30;

	for (i = 0; i < NPARAMS; i++) {
		/* Test hooks are never suggested. */
		if (!strncmp(params[i].name, "CCOM_TEST_", 10))
			continue;
		d = edit_distance(name, params[i].name);
		if (d < bestd) {
			bestd = d;
			best = params[i].name;
		}
	}
	return best;
}

static void unknown_name(const char *name, const char *where)
{
	queue_line(CCOM_LOG_WARN, "%s%s is not a ccom variable; did you mean %s? (%s lists every variable)",
		   where, name, ccom_param_nearest(name), "Documentation/libccom/environment.rst");
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * Read one configuration file into file_values (a later file overrides an
 * earlier one).  @must_exist: a missing file is worth a WARN (CCOM_CONF_FILE).
 */
static void load_file(const char *path, int must_exist)
{
	char line[FILE_VALUE_MAX + 128], where[300];
	int lineno = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		if (must_exist || errno != ENOENT)
			queue_line(CCOM_LOG_WARN, "cannot read the configuration file %s: %s; its settings are ignored (check the path%s and the file's permissions)",
				   path, strerror(errno), must_exist ? " in CCOM_CONF_FILE" : "");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, *eq;
		size_t vl;
		int idx;

		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			queue_line(CCOM_LOG_WARN, "%s: line longer than %d bytes; ignored", where,
				   FILE_VALUE_MAX);
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		key = trim(line);
		if (!key[0] || key[0] == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			queue_line(CCOM_LOG_WARN, "%s: \"%s\" is not a KEY=VALUE line; ignored", where, key);
			continue;
		}
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		vl = strlen(val);
		if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
			val[vl - 1] = '\0';
			val++;
		}
		idx = index_of(key);
		if (idx < 0) {
			char prefix[320];

			snprintf(prefix, sizeof(prefix), "%s: ", where);
			if (!strncmp(key, "CCOM_", 5) && !is_known(key))
				unknown_name(key, prefix);
			else if (strncmp(key, "CCOM_", 5))
				queue_line(CCOM_LOG_WARN, "%s: %s is not a ccom variable (keys start with CCOM_); ignored",
					   where, key);
			continue;
		}
		if (!strcmp(key, "CCOM_CONF_FILE")) {
			queue_line(CCOM_LOG_WARN, "%s: CCOM_CONF_FILE has no effect inside a configuration file; set it in the environment",
				   where);
			continue;
		}
		free(file_values[idx].value);
		file_values[idx].value = strdup(val);
		snprintf(file_values[idx].origin, sizeof(file_values[idx].origin), "%s", where);
	}
	if (ferror(f))
		queue_line(CCOM_LOG_WARN, "error reading the configuration file %s: %s; the rest of it is ignored",
			   path, strerror(errno));
	fclose(f);
}

static void load(void)
{
	const char *conf = getenv("CCOM_CONF_FILE");
	char **e;
	int i;

	if (conf && conf[0]) {
		load_file(conf, 1);
	} else {
		const char *home = getenv("HOME");
		char path[512];

		load_file(CCOM_SYSCONF_FILE, 0);
		if (!home || !home[0]) {
			struct passwd pw, *res = NULL;
			char buf[1024];

			if (!getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) && res)
				home = res->pw_dir;
		}
		if (home && home[0]) {
			snprintf(path, sizeof(path), "%s/.ccom.conf", home);
			load_file(path, 0);
		}
	}
	for (e = environ; e && *e; e++) {
		char name[128];
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);

		if (strncmp(*e, "CCOM_", 5) || len >= sizeof(name))
			continue;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (!is_known(name))
			unknown_name(name, "");
	}
	/* One ENV line per parameter that is set, and where it came from. */
	for (i = 0; i < NPARAMS; i++) {
		const char *v = getenv(params[i].name);

		if (v && v[0])
			queue_line(CCOM_LOG_INFO, "%s=%s (environment%s)", params[i].name, v,
				   file_values[i].value ? ", overrides the file" : "");
		else if (file_values[i].value)
			queue_line(CCOM_LOG_INFO, "%s=%s (%s)", params[i].name, file_values[i].value,
				   file_values[i].origin);
	}
}

void ccom_params_flush_warnings(void)
{
	int i;

	if (atomic_load_explicit(&flushed, memory_order_relaxed))
		return;
	pthread_once(&load_once, load);
	if (atomic_exchange(&flushed, 1))
		return;
	for (i = 0; i < npending; i++) {
		if (pending[i].level == CCOM_LOG_WARN)
			ccom_log(CCOM_LOG_WARN, CCOM_SUBSYS_ALL, __FILE__, __LINE__, "%s", pending[i].msg);
		else
			ccom_log(CCOM_LOG_INFO, CCOM_SUBSYS_ENV, __FILE__, __LINE__, "%s", pending[i].msg);
	}
}

static const struct ccom_param_desc *find(const char *name, int *idx)
{
	int i = index_of(name);

	pthread_once(&load_once, load);
	if (i < 0) {
		ccom_warn("internal: parameter %s is not declared in util/params.c", name);
		return NULL;
	}
	*idx = i;
	return &params[i];
}

/* The value and where it came from: environment, a file, or the default. */
static const char *value_of(const struct ccom_param_desc *p, int idx, const char **origin)
{
	const char *v = getenv(p->name);

	if (v && v[0]) {
		*origin = "environment";
		return v;
	}
	if (file_values[idx].value && file_values[idx].value[0]) {
		*origin = file_values[idx].origin;
		return file_values[idx].value;
	}
	*origin = NULL;
	return NULL;
}

const char *ccom_param_str(const char *name)
{
	const char *v, *origin;
	int idx;
	const struct ccom_param_desc *p = find(name, &idx);

	if (!p)
		return NULL;
	v = value_of(p, idx, &origin);
	return v ? v : p->def;
}

int64_t ccom_param_int(const char *name)
{
	const char *v, *origin;
	char *end;
	long long x;
	int idx;
	const struct ccom_param_desc *p = find(name, &idx);

	if (!p)
		return 0;
	v = value_of(p, idx, &origin);
	if (v) {
		errno = 0;
		x = strtoll(v, &end, 0);
		if (!errno && end != v && *end == '\0')
			return x;
		ccom_warn("%s=%s (%s) is not an integer; using the default %s", name, v, origin,
			  p->def ? p->def : "(none)");
	}
	if (!p->def)
		return 0;
	return strtoll(p->def, NULL, 0);
}

int ccom_param_is_set(const char *name)
{
	const char *origin;
	int idx;
	const struct ccom_param_desc *p = find(name, &idx);

	return p && value_of(p, idx, &origin) != NULL;
}

const char *ccom_param_origin(const char *name)
{
	const char *origin;
	int idx;
	const struct ccom_param_desc *p = find(name, &idx);

	if (!p || !value_of(p, idx, &origin))
		return "default";
	return origin;
}

int ccom_params_list(const struct ccom_param_desc **table)
{
	*table = params;
	return NPARAMS;
}
