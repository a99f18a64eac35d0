// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_ALGO=ring
 * and CCOM_TRANSPORT=net: every collective runs over TCP sockets
 * (net_socket) between the forked ranks of this host, with the ring
 * algorithms' streaming reductions (at 2 ranks AllReduce is the pipelined
 * full-duplex exchange of coll/pair.c, in and out of place, the 1 Mi + 3
 * count wrapping its receive ring), compared with a reference computed
 * here.
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main("CCOM_ALGO=ring", "CCOM_TRANSPORT=net");
}
