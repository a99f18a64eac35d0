// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_PROTO=ll,
 * so that every message LL can carry (16 KiB per rank slot) goes through
 * its flag words (the tuner gives small messages LL128); larger ones take
 * the tuner's other protocols.
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main("CCOM_PROTO=ll", NULL);
}
