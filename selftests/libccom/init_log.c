// SPDX-License-Identifier: MIT
/*
 * Description: logging of init.  Two forked ranks run with CCOM_DEBUG=INFO
 * and CCOM_DEBUG_FILE=<dir>/ccom-%h-%p.log: each writes its own file named
 * after host and pid, holding the milestones in order (Bootstrap : Using,
 * checked in, Init START, Init PEERINFO, Init TOPO, Init CONNECTED, Init
 * COMPLETE) and an "Init timings" line in microseconds.  A second job with
 * CCOM_DEBUG_SUBSYS=^INIT logs the bootstrap lines but no Init lines.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "test_util.h"

static char dir[64];
static int port;

static int rank_main(int rank, int nranks, void *arg)
{
	const char *subsys = arg;
	char path[128], addr[64];
	ccomUniqueId id;
	ccomComm_t comm;

	snprintf(path, sizeof(path), "%s/ccom-%%h-%%p.log", dir);
	t_log_to(path, "INFO", subsys);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	setenv("CCOM_COMM_ID", addr, 1);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

/* Read the whole file into a malloc'ed string. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int check_file(const char *text, int init_lines)
{
	static const char *const order[] = { "Bootstrap : Using", "checked in with the root",
					     "Init START", "Init PEERINFO", "Init TOPO",
					     "Init CONNECTED", "Init COMPLETE", "Init timings: rank" };
	const char *p = text;
	unsigned int i;

	if (!init_lines) {
		T_CHECK(strstr(text, "Bootstrap : Using"), "no bootstrap line with ^INIT");
		T_CHECK(!strstr(text, "Init START") && !strstr(text, "Init timings"),
			"INIT lines printed despite CCOM_DEBUG_SUBSYS=^INIT");
		return 0;
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *q = strstr(p, order[i]);

		T_CHECK(q, "milestone \"%s\" missing or out of order", order[i]);
		p = q;
	}
	T_CHECK(strstr(p, " us (validate") && strstr(p, "bootstrap") && strstr(p, "connect"),
		"timings line lacks microseconds / stages");
	return 0;
}

static int run(const char *subsys)
{
	char host[64] = "", path[512], *dot;
	int codes[2] = { 0 }, r;

	port = t_free_port(AF_INET);
	T_CHECK(!t_fork_ranks(2, rank_main, (void *)subsys, codes, 60), "ranks failed %d %d",
		codes[0], codes[1]);
	gethostname(host, sizeof(host) - 1);
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	/* One file per rank process: find them by the host part of the name. */
	r = 0;
	{
		DIR *d = opendir(dir);
		struct dirent *e;

		T_CHECK(d, "opendir");
		while ((e = readdir(d))) {
			char *text;
			int rc;

			if (strncmp(e->d_name, "ccom-", 5))
				continue;
			T_CHECK(strstr(e->d_name, host), "file %s lacks the host name %s", e->d_name,
				host);
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			text = slurp(path);
			T_CHECK(text, "read %s", path);
			rc = check_file(text, subsys == NULL);
			free(text);
			unlink(path);
			if (rc) {
				closedir(d);
				return T_FAIL;
			}
			r++;
		}
		closedir(d);
	}
	T_CHECK(r == 2, "found %d log files, want one per rank (2)", r);
	return 0;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ccom-init-log-%d", (int)getpid());
	T_CHECK(!mkdir(dir, 0700), "mkdir %s", dir);
	if (run(NULL) || run("^INIT")) {
		fprintf(stderr, "logs left in %s\n", dir);
		return T_FAIL;
	}
	rmdir(dir);
	printf("per-rank log files with milestones and µs timings; ^INIT filters\n");
	return T_PASS;
}
