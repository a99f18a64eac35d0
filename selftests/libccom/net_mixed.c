// SPDX-License-Identifier: MIT
/*
 * Description: a mixed job, 2 simulated hosts x 2 ranks (as root; skipped
 * otherwise), ranks interleaved over the hosts (0,2 on host A; 1,3 on host
 * B) so the ring must reorder them: shm inside each host, net_socket
 * between them, every collective checked for several dtypes/ops and counts
 * 0/1/7/1023 and 64 Ki + 5 elements.
 */
#include "net_util.h"

static int body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	(void)arg;
	return nett_battery(comm, rank, nranks, (1u << 16) + 5);
}

int main(void)
{
	static const int host_of[] = { 0, 1, 0, 1 };
	int rc = nett_hosts_up();

	if (rc)
		return rc;
	setenv("CCOM_OP_TIMEOUT", "60", 1);
	rc = nett_run(4, host_of, body, NULL, 0);
	printf("%s: mixed shm + TCP job, 2 hosts x 2 ranks\n", rc ? "FAIL" : "PASS");
	return rc ? 1 : 0;
}
