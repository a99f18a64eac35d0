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
#include <limits.h>

#include "test_util.h"

static char perf[PATH_MAX];

static int find_perf(void)
{
	return t_build_file("bin/ccom-perf", perf, sizeof(perf)) ? -1 : access(perf, X_OK);
}

/* Run ccom-perf @args with the NET log in @dir; the logs of every rank into @log. */
static int run(const char *dir, const char *args, char *log, size_t len)
{
	char cmd[PATH_MAX + 512];
	int st;

	snprintf(cmd, sizeof(cmd),
		 "rm -rf %s && mkdir -p %s && CCOM_DEBUG=INFO CCOM_DEBUG_SUBSYS=NET CCOM_DEBUG_FILE=%s/%%p.log %s %s > %s/out.txt 2>&1",
		 dir, dir, dir, perf, args, dir);
	st = system(cmd);
	snprintf(cmd, sizeof(cmd), "cat %s/*.log %s/out.txt 2>/dev/null", dir, dir);
	t_read_cmd(cmd, log, len);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
	static char log[1 << 16];
	char dir[64], what[64];
	const char *net;
	int rc, r;

	if (find_perf())
		return t_skip("ccom-perf is not built next to this test (%s)", perf);
	net = t_rdma_devices() ? "net_ib" : "net_socket";
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
