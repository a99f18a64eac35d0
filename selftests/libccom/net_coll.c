// SPDX-License-Identifier: MIT
/*
 * Description: every collective over TCP between two simulated hosts
 * (network namespaces + veth, as root; skipped otherwise): AllReduce
 * (out-of-place and in-place), Reduce, ReduceScatter for eight dtype/op
 * pairs, Broadcast, AllGather, AlltoAll and grouped Send/Recv, counts
 * 0/1/7/1023 and 1 Mi + 3 elements (striped over CCOM_NSOCKS=3 sockets),
 * checked against references computed here.  The CCOM_TOPO_DUMP_FILE of
 * the job must show two hosts and a ring that crosses the network twice.
 */
#include "net_util.h"

static int body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	(void)arg;
	return nett_battery(comm, rank, nranks, (1u << 20) + 3);
}

static int check_dump(const char *path)
{
	char buf[16384];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		fprintf(stderr, "no topology dump at %s\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!strstr(buf, "\"ring_host_crossings\": 2") || !strstr(buf, "\"index\": 1,") ||
	    strstr(buf, "\"index\": 2,") || !strstr(buf, "\"bootstrap_nic\": \"ccv0\"") ||
	    !strstr(buf, "\"peer_transport\": [\"net_socket\", \"self\"]")) {
		fprintf(stderr, "topology dump %s does not show 2 hosts joined by ccv0:\n%s\n", path, buf);
		return 1;
	}
	unlink(path);
	return 0;
}

int main(void)
{
	static const int host_of[] = { 0, 1 };
	char dump[128];
	int rc = nett_hosts_up();

	if (rc)
		return rc;
	snprintf(dump, sizeof(dump), "/tmp/ccom-net-coll-%d-rank%%r.json", (int)getpid());
	setenv("CCOM_TOPO_DUMP_FILE", dump, 1);
	setenv("CCOM_NSOCKS", "3", 1);
	setenv("CCOM_OP_TIMEOUT", "60", 1);
	rc = nett_run(2, host_of, body, NULL, 0);
	snprintf(dump, sizeof(dump), "/tmp/ccom-net-coll-%d-rank1.json", (int)getpid());
	if (!rc)
		rc = check_dump(dump);
	snprintf(dump, sizeof(dump), "/tmp/ccom-net-coll-%d-rank0.json", (int)getpid());
	unlink(dump);
	printf("%s: collectives over TCP between two namespaces\n", rc ? "FAIL" : "PASS");
	return rc ? 1 : 0;
}
