// SPDX-License-Identifier: MIT
/*
 * Description: every collective (allreduce, broadcast, reduce, allgather,
 * reducescatter, alltoall, gather, scatter, grouped send/recv) x every
 * dtype x every op x out-of-place/in-place x counts {0, 1, 7, 1023} on 1, 2, 3, 4 and 8
 * forked ranks of one host, with the tuner's own choices (LL128 for small
 * messages, the direct engine above), compared with a reference computed
 * here; count 1 Mi + 3 for float32/sum and int8/max (see coll_matrix.h).
 * coll_matrix_ll and coll_matrix_ll128 force each small-message protocol.
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main(NULL, NULL);
}
