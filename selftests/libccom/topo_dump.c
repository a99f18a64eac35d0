// SPDX-License-Identifier: MIT
/*
 * Description: CCOM_TOPO_DUMP_FILE through a real communicator: 4 ranks on
 * one host, a name without %r, so only rank 0 writes it; the dump must say
 * 4 ranks on one host, shm towards every peer, and the ring 0-1-2-3 that
 * never crosses the network.
 */
#include <sys/stat.h>

#include "net_util.h"

static int body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	(void)comm;
	(void)rank;
	(void)nranks;
	(void)arg;
	return 0;
}

int main(void)
{
	char path[128], buf[65536];
	FILE *f;
	size_t n;
	int rc;

	snprintf(path, sizeof(path), "/tmp/ccom-topo-dump-%d.json", (int)getpid());
	unlink(path);
	setenv("CCOM_TOPO_DUMP_FILE", path, 1);
	if (nett_run(4, NULL, body, NULL, 0)) {
		printf("FAIL: job with CCOM_TOPO_DUMP_FILE did not complete\n");
		return 1;
	}
	f = fopen(path, "r");
	if (!f) {
		printf("FAIL: no dump at %s\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	unlink(path);
	buf[n] = '\0';
	rc = !strstr(buf, "\"rank\": 0,") || !strstr(buf, "\"nranks\": 4,") ||
	     !strstr(buf, "\"ranks\": [0, 1, 2, 3]") || !strstr(buf, "\"ring\": [0, 1, 2, 3]") ||
	     !strstr(buf, "\"ring_host_crossings\": 0") || strstr(buf, "\"index\": 1,") ||
	     !strstr(buf, "\"nics\": [") ||
	     !strstr(buf, "\"peer_transport\": [\"self\", \"shm\", \"shm\", \"shm\"]");
	if (rc)
		fprintf(stderr, "dump content wrong:\n%s\n", buf);
	printf("%s: CCOM_TOPO_DUMP_FILE from a 4-rank job\n", rc ? "FAIL" : "PASS");
	return rc;
}
