// SPDX-License-Identifier: MIT
/*
 * Description: a peer dies over TCP (as root; skipped otherwise).  2 hosts
 * x 1 rank: after one good AllReduce, rank 1 exits without a word; rank 0's
 * next AllReduce must fail with ccomRemoteError naming peer rank 1, well
 * before CCOM_OP_TIMEOUT (not hang).  Then 2 hosts x 2 ranks: rank 3 dies
 * and every other rank must return ccomRemoteError (rank 0, which receives
 * from rank 3 in the ring, naming it).
 */
#include "net_util.h"

#define COUNT (1u << 18)

/* Survivors write one byte here after their first AllReduce; the victim waits for all. */
static int ready[2];

static int body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	int victim = nranks - 1;
	float *in = calloc(COUNT, sizeof(float)), *out = calloc(COUNT, sizeof(float));
	ccomResult_t res;
	char want[32];

	(void)arg;
	if (!in || !out)
		return 1;
	if (nett_sync(comm, ccomAllReduce(in, out, COUNT, ccomFloat32, ccomSum, comm, NULL),
		      "first allreduce", rank) ||
	    nett_die_when_ready(rank, nranks, victim, ready))
		return 1;
	res = ccomAllReduce(in, out, COUNT, ccomFloat32, ccomSum, comm, NULL);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	printf("rank %d: after peer %d died: %s: %s\n", rank, victim, ccomGetErrorString(res),
	       ccomGetLastError(comm));
	fflush(stdout);
	if (res == ccomSuccess)
		return 1;
	/*
	 * Rank 0 receives from the victim in the ring and must name it.  Others
	 * may learn it second hand (through their host's shm segment or a
	 * survivor's TCP failure note): they must fail with ccomRemoteError.
	 */
	snprintf(want, sizeof(want), "rank %d", rank == 0 ? victim : 0);
	if (res != ccomRemoteError || (rank == 0 && !strstr(ccomGetLastError(comm), want))) {
		fprintf(stderr, "rank %d: expected ccomRemoteError naming %s\n", rank, want);
		return 1;
	}
	ccomCommAbort(comm);
	_exit(0);
}

int main(void)
{
	static const int hosts2[] = { 0, 1 }, hosts4[] = { 0, 1, 0, 1 };
	int rc = nett_hosts_up();

	if (rc)
		return rc;
	if (pipe(ready))
		return 1;
	/* A hang would end at the timeout with ccomTimeout: keep it short. */
	setenv("CCOM_OP_TIMEOUT", "30", 1);
	/* Rank 0 names the victim because it receives from it in the flat ring (hier_dead.c covers rail/rab). */
	setenv("CCOM_ALGO", "ring", 1);
	rc = nett_run(2, hosts2, body, NULL, 1u << 1);
	printf("%s: 2 ranks over TCP, peer dies -> ccomRemoteError naming it\n",
	       rc ? "FAIL" : "PASS");
	if (!rc) {
		rc = nett_run(4, hosts4, body, NULL, 1u << 3);
		printf("%s: 2 hosts x 2 ranks, rank 3 dies -> every survivor returns ccomRemoteError\n",
		       rc ? "FAIL" : "PASS");
	}
	return rc ? 1 : 0;
}
