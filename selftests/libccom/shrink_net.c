// SPDX-License-Identifier: MIT
/*
 * Description: the recovery scenario of shrink_util.h between two
 * simulated hosts (network namespaces joined by a veth pair; as root,
 * skipped otherwise), ranks 0,2 on host A and 1,3 on host B: first with
 * CCOM_TRANSPORT=net and CCOM_ALGO=ring (every pair over TCP), then mixed
 * (shm inside a host, TCP between them).  Rank 2 is SIGKILLed in the middle
 * of a 64 MiB AllReduce; ranks 0, 1, 3 get ccomRemoteError naming it within
 * 2 s, agree through ccomCommGetFailedRanks, shrink with
 * CCOM_SHRINK_ABORT, pass the collective matrix on 3 ranks, lose the new
 * rank 1 the same way and shrink to 2; fds then match one live comm.
 */
#include "shrink_util.h"

int main(void)
{
	static const int hosts[] = { 0, 1, 0, 1 };
	int rc = nett_hosts_up();
	double t0;

	if (rc)
		return rc;
	setenv("CCOM_TRANSPORT", "net", 1);
	setenv("CCOM_ALGO", "ring", 1);
	t0 = t_now();
	if (sh_run(hosts, 150))
		return T_FAIL;
	printf("PASS: TCP between namespaces: kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n",
	       t_now() - t0);
	unsetenv("CCOM_TRANSPORT");
	unsetenv("CCOM_ALGO");
	t0 = t_now();
	if (sh_run(hosts, 150))
		return T_FAIL;
	printf("PASS: mixed (shm in a host, TCP between): kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n",
	       t_now() - t0);
	return T_PASS;
}
