// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_PROTO=ll,
 * so that every message LL can carry (16 KiB per rank slot) goes through
 * its flag words (the tuner gives small messages LL128); larger ones take
 * the tuner's other protocols.
 * Every rank of the jobs of 2 to 8 ranks must log (CCOM_DEBUG=INFO, TUNE)
 * that the tuner picked direct/ll for some collective.
 */
#include "coll_matrix_proto.h"

int main(void)
{
	return ct_matrix_proto_main("ll");
}
