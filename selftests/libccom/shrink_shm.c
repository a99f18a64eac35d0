// SPDX-License-Identifier: MIT
/*
 * Description: in-process recovery on one host (shm): 4 ranks, rank 2
 * SIGKILLed in the middle of a 64 MiB AllReduce; ranks 0, 1, 3 get
 * ccomRemoteError naming rank 2 within 2 s, ccomCommGetFailedRanks gives
 * {2} on each, ccomCommShrink(CCOM_SHRINK_ABORT) makes a 3-rank
 * communicator that passes the collective matrix; the new rank 1 is killed
 * the same way and the last two shrink to 2 ranks; their fds and mapped shm
 * segments are then what one live communicator holds (see shrink_util.h).
 * Run with the direct engine and with CCOM_ALGO=ring (shm FIFOs).
 */
#include "shrink_util.h"

int main(void)
{
	double t0 = t_now();

	if (sh_run(NULL, 120))
		return T_FAIL;
	printf("PASS: shm, direct engine: kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n", t_now() - t0);
	setenv("CCOM_ALGO", "ring", 1);
	t0 = t_now();
	if (sh_run(NULL, 120))
		return T_FAIL;
	printf("PASS: shm, ring: kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n", t_now() - t0);
	return T_PASS;
}
