// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with
 * CCOM_NCHANNELS=3: every copy and reduction of the direct engine of 256 KiB
 * or more is cut into three parts run at once by the rank and two worker
 * threads (coll/channels.c), here with more threads than CPUs.  The big
 * count (1 Mi + 3 elements, parts not multiples of the 64-byte cut) is what
 * takes the channels; results are compared with a reference computed here.
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main("CCOM_NCHANNELS=3", NULL);
}
