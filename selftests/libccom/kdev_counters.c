// SPDX-License-Identifier: MIT
/*
 * Description: after every kdev test of a run (selftests/libccom/kdev/
 * run-vm runs this one last), the nccom driver holds no object and no
 * pinned page: every communicator's destroy, abort or death released its
 * queue, semaphores, registrations, imports and dma-bufs.  SKIPs without
 * /dev/nccom.
 */
#include "kdev_util.h"

int main(void)
{
	KT_REQUIRE(1);
	return kt_counters_zero("at the end of the kdev tests");
}
