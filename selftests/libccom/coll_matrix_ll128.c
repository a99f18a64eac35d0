// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_PROTO=ll128,
 * so that every message LL128 can carry (up to 64 KiB per rank slot) goes
 * through its cache lines, header and flags instead of the tuner's choice;
 * larger ones (count 1 Mi + 3) take the tuner's other protocols.
 * Every rank of the jobs of 2 to 8 ranks must log (CCOM_DEBUG=INFO, TUNE)
 * that the tuner picked direct/ll128 for some collective.
 */
#include "coll_matrix_proto.h"

int main(void)
{
	return ct_matrix_proto_main("ll128");
}
