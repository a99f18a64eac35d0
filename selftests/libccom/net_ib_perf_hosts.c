// SPDX-License-Identifier: MIT
/*
 * Description: ccom-perf's simulated hosts (-H): `ccom-perf allreduce -n 4
 * -H 2` (found next to this test: BUILD/bin/ccom-perf) runs 2 blocks of 2
 * ranks as 2 hosts, so every rank's INFO log (CCOM_DEBUG_SUBSYS=NET) names
 * the network transport it agreed on and the results check out (exit 0);
 * without -H the 4 ranks are one host and no rank sets up a network
 * transport; -H that does not divide -n exits 2.  On a machine without an
 * RDMA device the network transport is net_socket; with one (the VM's
 * soft-RoCE, selftests/libccom/ib/run-vm) it is net_ib.
 */
#include <dirent.h>
#include <limits.h>
#include <libgen.h>

#include "test_util.h"

static char perf[PATH_MAX];

static int find_perf(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(perf, sizeof(perf), "%s/../../bin/ccom-perf", dirname(self));
	return access(perf, X_OK);
}

/* Run ccom-perf @args with the NET log in @dir; the logs of every rank into @log. */
static int run(const char *dir, const char *args, char *log, size_t len)
{
	char cmd[PATH_MAX + 512];
	size_t n = 0, r;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "rm -rf %s && mkdir -p %s && CCOM_DEBUG=INFO CCOM_DEBUG_SUBSYS=NET CCOM_DEBUG_FILE=%s/%%p.log %s %s > %s/out.txt 2>&1",
		 dir, dir, dir, perf, args, dir);
	st = system(cmd);
	snprintf(cmd, sizeof(cmd), "cat %s/*.log %s/out.txt 2>/dev/null", dir, dir);
	f = popen(cmd, "r");
	if (f) {
		while (n < len - 1 && (r = fread(log + n, 1, len - 1 - n, f)) > 0)
			n += r;
		pclose(f);
	}
	log[n] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
	static char log[1 << 16];
	char dir[64], what[64];
	const char *net;
	DIR *d;
	int rc, r, rdma = 0;

	if (find_perf())
		return t_skip("ccom-perf is not built next to this test (%s)", perf);
	d = opendir("/sys/class/infiniband");
	if (d) {
		struct dirent *e;

		while ((e = readdir(d)))
			rdma += e->d_name[0] != '.';
		closedir(d);
	}
	net = rdma ? "net_ib" : "net_socket";
	snprintf(dir, sizeof(dir), "/tmp/ccom-perfhosts-%d", (int)getpid());

	rc = run(dir, "allreduce -n 4 -H 2 -b 4K -e 32K -f 8 -w 1 -i 2", log, sizeof(log));
	T_CHECK(rc == 0, "ccom-perf -n 4 -H 2 exited %d:\n%s", rc, log);
	for (r = 0; r < 4; r++) {
		snprintf(what, sizeof(what), "rank %d: network transport %s", r, net);
		T_CHECK(strstr(log, what), "with -H 2, rank %d did not set up %s:\n%s", r, net, log);
	}
	T_CHECK(strstr(log, "# Out of bounds values : 0 OK"), "wrong values:\n%s", log);

	rc = run(dir, "allreduce -n 4 -b 4K -e 4K -w 1 -i 2", log, sizeof(log));
	T_CHECK(rc == 0, "ccom-perf -n 4 exited %d:\n%s", rc, log);
	T_CHECK(!strstr(log, "network transport"), "without -H the 4 ranks are one host, yet a network transport was set up:\n%s",
		log);

	rc = run(dir, "allreduce -n 3 -H 2", log, sizeof(log));
	T_CHECK(rc == 2 && strstr(log, "-H 2 needs -n with a multiple of 2"),
		"-n 3 -H 2 exited %d:\n%s", rc, log);
	snprintf(log, sizeof(log), "rm -rf %s", dir);
	if (system(log))
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("PASS: ccom-perf -H 2 runs 2 simulated hosts over %s\n", net);
	return T_PASS;
}
