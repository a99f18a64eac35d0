// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix of coll_matrix.c with CCOM_PROTO=simple
 * and CCOM_SHM_CHUNK=4096, so that even small messages go through the
 * direct engine's staged chunks (and large ones take many steps).
 */
#include "coll_matrix.h"

int main(void)
{
	return ct_matrix_main("CCOM_PROTO=simple", "CCOM_SHM_CHUNK=4096");
}
