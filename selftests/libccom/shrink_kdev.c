// SPDX-License-Identifier: MIT
/*
 * Description: the recovery scenario of shrink_util.h on the driver's
 * engine (CCOM_KDEV=1, in the VM: selftests/libccom/kdev/run-vm; SKIPs
 * without /dev/nccom): rank 2 SIGKILLed in a 64 MiB AllReduce, survivors
 * name it, agree, shrink with CCOM_SHRINK_ABORT (no semaphore, queue or
 * grant of the dead rank is waited on), pass the collective matrix on 3
 * ranks, lose the new rank 1 and shrink to 2; fds and shm segments are
 * those of one live comm, and after every rank is gone the driver's object
 * and pinned-page counters are back at zero.  Detection may take up to
 * 30 s here (the VM is emulated; the host tests hold it to 2 s).
 */
#include "kdev_util.h"
#include "shrink_util.h"

int main(void)
{
	double t0 = t_now();

	KT_REQUIRE(4);
	setenv("CCOM_KDEV", "1", 1);
	sh_detect_max_s = 30.0;
	if (sh_run(NULL, 300))
		return T_FAIL;
	printf("PASS: kdev engine: kill, agree, shrink 4 -> 3 -> 2 (%.1f s)\n", t_now() - t0);
	return kt_counters_zero("after the shrink scenario");
}
