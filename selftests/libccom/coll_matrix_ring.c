// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_ALGO=ring:
 * ring allreduce/allgather/reducescatter, chain broadcast/reduce and
 * pairwise alltoall over the shm transport's FIFOs (the algorithms used
 * between hosts), compared with a reference computed here.
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main("CCOM_ALGO=ring", NULL);
}
