// SPDX-License-Identifier: MIT
/*
 * Description: the CCOM_1.3 config fields at work, two forked ranks on two
 * simulated hosts (CCOM_HOSTID), so that they talk over the network
 * transport.
 *
 * Named job: config commName "cfg-test.dp0", netName "Socket" while
 * CCOM_NET=ib (this host has no RDMA device: the config must win or init
 * fails), trafficClass 0xb8 while CCOM_SOCKET_TOS=32 (the config must
 * win).  Each rank checks an AllReduce, counts its connected TCP sockets
 * whose IP_TOS / IPV6_TCLASS (getsockopt) is 0xb8 (at least the
 * CCOM_NSOCKS + 1 data sockets of its peer), finds the name in its
 * published state file and, after SIGUSR2 (CCOM_FLIGHT_RECORDER_SIGNAL),
 * in the flight recorder's JSON dump; it splits with a NULL config (the
 * child inherits name and traffic class: twice the marked sockets) and
 * with a config named "child".  The INFO logs hold Init BEGIN / COMPLETE
 * lines with each name.
 *
 * Env only: CCOM_SOCKET_TOS=32 without a trafficClass marks the sockets 32.
 *
 * Refused: netName "socket" on one rank and unset on the other (differs);
 * netName "ib" on both without an RDMA device (names the rank and netName).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <signal.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "ccom_pubstate.h"
#include "test_util.h"

#define NAME "cfg-test.dp0"
#define TOS 0xb8

static char dir[64];
static int port;

struct job {
	const char *name;	/* commName, NULL: none */
	const char *net[2];	/* each rank's netName */
	int tc;			/* trafficClass, or CCOM_CONFIG_UNDEF_INT */
	int want_tos;		/* TOS of the data sockets, -1: the checks of a refused job */
	ccomResult_t want;	/* init result */
	const char *words[3];	/* in a refused init's message */
};

/* Connected TCP sockets of this process whose TOS byte (ECN bits aside) is @tos. */
static int count_tos(int tos)
{
	char path[300], link[64];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = atoi(e->d_name), type = 0, v = -1;
		socklen_t olen = sizeof(type);
		ssize_t l;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0 || strncmp(link, "socket:", 7))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &olen) || type != SOCK_STREAM ||
		    getpeername(fd, (struct sockaddr *)&ss, &len))
			continue;
		olen = sizeof(v);
		if (ss.ss_family == AF_INET)
			getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &olen);
		else if (ss.ss_family == AF_INET6 &&
			 IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&ss)->sin6_addr))
			getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &olen);
		else if (ss.ss_family == AF_INET6)
			getsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, &olen);
		n += v >= 0 && (v & 0xfc) == tos;
	}
	closedir(d);
	return n;
}

/* The comm_name of this process's published state file of rank @rank, "" if none. */
static int published_name(int rank, char *out, size_t len)
{
	char suffix[32], path[sizeof(dir) + 258];
	struct ccom_pub_file f;
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t sl;
	int found = -1;

	snprintf(suffix, sizeof(suffix), ".%d.%d", rank, (int)getpid());
	sl = strlen(suffix);
	out[0] = '\0';
	while (d && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		FILE *fp;

		if (nl <= sl || strcmp(e->d_name + nl - sl, suffix))
			continue;
		snprintf(path, sizeof(path), "%.63s/%.255s", dir, e->d_name);
		fp = fopen(path, "r");
		if (fp && fread(&f, sizeof(f), 1, fp) == 1 && f.magic == CCOM_PUB_MAGIC &&
		    f.size >= offsetof(struct ccom_pub_file, comm_name) + sizeof(f.comm_name)) {
			snprintf(out, len, "%.*s", (int)sizeof(f.comm_name) - 1, f.comm_name);
			found = 0;
		}
		if (fp)
			fclose(fp);
	}
	if (d)
		closedir(d);
	return found;
}

static int check_sum(ccomComm_t comm, int nranks)
{
	enum { N = 1 << 16 };
	float *b = malloc(N * sizeof(float));
	int i, bad = 0;

	T_CHECK(b, "malloc");
	for (i = 0; i < N; i++)
		b[i] = (float)(i % 7);
	T_CCOM(ccomAllReduce(b, b, N, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < N; i++)
		bad += b[i] != (float)(nranks * (i % 7));
	free(b);
	T_CHECK(!bad, "%d wrong elements", bad);
	return 0;
}

/* What the named job checks once its comm is up. */
static int named_checks(ccomComm_t comm, int rank, int nranks, const struct job *j)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	char name[CCOM_COMM_NAME_MAX], path[128];
	ccomComm_t child, named;
	int base, n, i;

	base = count_tos(j->want_tos);
	T_CHECK(base >= 3, "rank %d: %d connected TCP socket(s) with TOS %#x, want the 3 data sockets of the peer",
		rank, base, j->want_tos);
	if (!j->name)
		return 0;
	T_CHECK(!published_name(rank, name, sizeof(name)) && !strcmp(name, j->name),
		"rank %d: published name \"%s\", want \"%s\"", rank, name, j->name);
	raise(SIGUSR2);
	snprintf(path, sizeof(path), "%s/flight-%d.json", dir, rank);
	for (i = 0; i < 500 && t_file_count(path, "\"ops\"") < 1; i++)
		usleep(20000);
	n = t_file_count(path, "\"comm_name\": \"" NAME "\"");
	T_CHECK(n == 1, "rank %d: %s holds \"comm_name\": \"%s\" %d time(s)", rank, path, NAME, n);
	/* NULL config: the parent's name and traffic class. */
	T_CCOM(ccomCommSplit(comm, 0, rank, &child, NULL), ccomSuccess);
	if (check_sum(child, nranks))
		return 1;
	n = count_tos(j->want_tos);
	T_CHECK(n >= base + 3, "rank %d: %d sockets with TOS %#x after a split that inherits it (%d before)",
		rank, n, j->want_tos, base);
	/* A config is taken as it is: without its own netName, CCOM_NET=ib would apply. */
	cfg.commName = "child";
	cfg.netName = "socket";
	T_CCOM(ccomCommSplit(comm, 0, rank, &named, &cfg), ccomSuccess);
	if (check_sum(named, nranks))
		return 1;
	T_CCOM(ccomCommDestroy(named), ccomSuccess);
	T_CCOM(ccomCommDestroy(child), ccomSuccess);
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	const struct job *j = arg;
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	char path[128], addr[64];
	ccomUniqueId id;
	ccomComm_t comm = NULL;
	ccomResult_t res;
	int rc;

	snprintf(path, sizeof(path), "%s/rank%d-%%p.log", dir, rank);
	t_log_to(path, "INFO", "INIT,NET");
	t_set_host("cfghost", rank);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	setenv("CCOM_COMM_ID", addr, 1);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	cfg.commName = j->name;
	cfg.netName = j->net[rank];
	cfg.trafficClass = j->tc;
	res = ccomCommInitRankConfig(&comm, nranks, id, rank, &cfg);
	if (j->want != ccomSuccess)
		return t_init_refused(comm, res, j->want, "refused job", rank, j->words[0],
				      j->words[1], j->words[2], NULL);
	T_CHECK(res == ccomSuccess, "rank %d: init: %s", rank, ccomGetLastError(NULL));
	rc = check_sum(comm, nranks) || named_checks(comm, rank, nranks, j);
	ccomCommDestroy(comm);
	return rc;
}

static int run(const char *what, const struct job *j)
{
	int codes[2] = { 0 };

	port = t_free_port(AF_INET);
	T_CHECK(!t_fork_ranks(2, rank_main, (void *)j, codes, 120), "%s: ranks exited %d %d", what,
		codes[0], codes[1]);
	return 0;
}

int main(void)
{
	const struct job named = { NAME, { "Socket", "socket" }, TOS, TOS, ccomSuccess, { NULL } };
	const struct job env = { NULL, { NULL, NULL }, CCOM_CONFIG_UNDEF_INT, 32, ccomSuccess,
				 { NULL } };
	const struct job differs = { NULL, { "socket", NULL }, CCOM_CONFIG_UNDEF_INT, -1,
				     ccomInvalidUsage, { "differs between ranks", "netName", NULL } };
	const struct job ib = { NULL, { "ib", "IB" }, CCOM_CONFIG_UNDEF_INT, -1,
				ccomUnhandledDeviceError,
				{ "netName=ib", "cannot use RDMA", NULL } };
	char logs[1 << 16], cmd[128];
	const char *p;
	int n;

	if (t_rdma_devices())
		return t_skip("this host has an RDMA device: netName ib would work; the VM covers net_ib");
	snprintf(dir, sizeof(dir), "/tmp/ccom-named.XXXXXX");
	T_CHECK(mkdtemp(dir), "mkdtemp");
	T_SETENV("CCOM_NSOCKS=2", "CCOM_NET_CONNECT=eager", "CCOM_FLIGHT_RECORDER_SIGNAL=USR2",
		 "CCOM_OP_TIMEOUT=60", "CCOM_BOOTSTRAP_TIMEOUT=60");
	setenv("CCOM_PUBLISH_DIR", dir, 1);
	snprintf(logs, sizeof(logs), "%s/flight-%%r.json", dir);
	setenv("CCOM_FLIGHT_RECORDER_FILE", logs, 1);
	setenv("CCOM_NET", "ib", 1);
	setenv("CCOM_SOCKET_TOS", "32", 1);
	if (run("named job", &named))
		return T_FAIL;
	t_read_logs(dir, logs, sizeof(logs));
	T_CHECK(strstr(logs, "Init BEGIN rank 0 nranks 2") &&
			strstr(logs, "commName \"" NAME "\" timeout") &&
			strstr(logs, "Init COMPLETE") && strstr(logs, "commName \"child\""),
		"INFO lines lack the names:\n%s", logs);
	/* Init COMPLETE ends with the name: each rank's comm and its NULL-config child. */
	n = 0;
	for (p = logs; (p = strstr(p, "commName \"" NAME "\"\n")); p++)
		n++;
	T_CHECK(n == 4, "%d Init COMPLETE line(s) with commName \"%s\", want 4", n, NAME);
	unsetenv("CCOM_NET");
	if (run("CCOM_SOCKET_TOS only", &env) || run("netName differs", &differs) ||
	    run("netName ib", &ib))
		return T_FAIL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return T_FAIL;
	printf("PASS: commName in INFO lines, published state and flight dump; trafficClass and CCOM_SOCKET_TOS on the data sockets; netName over CCOM_NET, its refusals; split inherits\n");
	return T_PASS;
}
