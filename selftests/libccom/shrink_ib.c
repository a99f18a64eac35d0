// SPDX-License-Identifier: MIT
/*
 * Description: the recovery scenario of shrink_util.h over net_ib (in the
 * VM with soft-RoCE: selftests/libccom/ib/run-vm; SKIPs without an RDMA
 * device): two simulated hosts (CCOM_HOSTID), ranks 0,2 on A and 1,3 on
 * B, CCOM_NET=ib and CCOM_TRANSPORT=net, so every pair is a verbs
 * connection.  Rank 2 is SIGKILLed in a 64 MiB AllReduce; ranks 0, 1, 3
 * get ccomRemoteError naming it, agree through ccomCommGetFailedRanks,
 * shrink with CCOM_SHRINK_ABORT (which revokes: net_ib's revoke note ends
 * a survivor's wait on another survivor), pass the collective matrix on 3
 * ranks, lose the new rank 1 the same way and shrink to 2 for a checked
 * AllReduce; fds then match one live comm.  Detection may take up to 30 s
 * (the guest is emulated).
 */
#include "shrink_util.h"

int main(void)
{
	static const int hosts[] = { 0, 1, 0, 1 };
	double t0 = t_now();

	if (!t_rdma_devices())
		return t_skip("no RDMA device (/sys/class/infiniband is empty): run it in the VM with soft-RoCE, selftests/libccom/ib/run-vm");
	setenv("CCOM_NET", "ib", 1);
	setenv("CCOM_TRANSPORT", "net", 1);
	sh_hostid_only = 1;
	sh_detect_max_s = 30.0;
	if (sh_run(hosts, 280))
		return T_FAIL;
	printf("PASS: net_ib between 2 simulated hosts: kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n",
	       t_now() - t0);
	return T_PASS;
}
