// SPDX-License-Identifier: MIT
/*
 * Description: TCP on one host without root: CCOM_TRANSPORT=net forces the
 * net_socket transport between 3 local ranks and CCOM_ALGO=ring keeps the
 * collectives on the transport path (the one-host direct engine would
 * otherwise bypass it); odd rank count, so rings and reductions see uneven
 * splits; every collective checked for several dtypes/ops and counts
 * 0/1/7/1023 and 256 Ki + 1 elements.
 */
#include "net_util.h"

static int body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	(void)arg;
	return nett_battery(comm, rank, nranks, (1u << 18) + 1);
}

int main(void)
{
	int rc;

	T_SETENV("CCOM_TRANSPORT=net", "CCOM_ALGO=ring", "CCOM_NSOCKS=2", "CCOM_OP_TIMEOUT=60");
	rc = nett_run(3, NULL, body, NULL, 0);
	printf("%s: collectives with CCOM_TRANSPORT=net on one host, 3 ranks\n",
	       rc ? "FAIL" : "PASS");
	return rc ? 1 : 0;
}
