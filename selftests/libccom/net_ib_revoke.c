// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommRevoke reaches verbs peers (in the VM with
 * soft-RoCE: selftests/libccom/ib/run-vm; SKIPs without an RDMA device).
 * Two simulated hosts (CCOM_HOSTID), one rank each, CCOM_NET=ib.  After a
 * matched AllReduce, rank 1 waits in a 4 MiB AllReduce that rank 0 never
 * issues; rank 0 revokes the comm 500 ms later.  RC tells a receiver
 * nothing, so without net_ib's revoke note rank 1 would wait for
 * CCOM_OP_TIMEOUT (60 s here); it must return ccomRemoteError saying that
 * rank 0 revoked the communicator within 5 s of the revoke, and must not
 * list rank 0 in ccomCommGetFailedRanks (nobody died).  Rank 0 keeps its
 * (revoked) comm open until rank 1 is done, so no closed connection can
 * end the wait instead.
 */
#include "net_util.h"
#include "test_util.h"

#define COUNT (1u << 20)

static int rank_main(int rank, int pipes[2], int done[2])
{
	float *buf = calloc(COUNT, sizeof(float));
	int failed[2], nf = 2;
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;
	double t0, dt;
	char b;

	T_CHECK(buf, "out of memory");
	t_set_host("nirhost", rank);
	T_SETENV("CCOM_NET=ib", "CCOM_OP_TIMEOUT=60");
	if (rank == 0) {
		T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
		T_CHECK(write(pipes[1], &id, sizeof(id)) == (ssize_t)sizeof(id), "pipe");
	} else {
		T_CHECK(read(pipes[0], &id, sizeof(id)) == (ssize_t)sizeof(id), "no unique id");
	}
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	T_CCOM(ccomAllReduce(buf, buf, 1024, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == 0) {
		usleep(500000);
		T_CCOM(ccomCommRevoke(comm, 0), ccomSuccess);
		printf("rank 0: revoked\n");
		fflush(stdout);
		/* Until rank 1 is done (or gone): the comm's connections stay open. */
		close(done[1]);
		if (read(done[0], &b, 1) < 0)
			perror("rank 0: read");
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		return T_PASS;
	}
	close(done[0]);
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank 1: AllReduce its peer revoked returned %s after %.3f s: %s\n",
	       ccomGetErrorString(res), dt, ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank 1: got %s, want ccomRemoteError", ccomGetErrorString(res));
	T_CHECK(dt < 5.5, "rank 1: the revoke took %.2f s to reach it (limit 5 s after the revoke)", dt);
	T_CHECK(t_has_words(ccomGetLastError(comm), "peer rank 0", "revoked the communicator", NULL),
		"rank 1: the error does not say that rank 0 revoked");
	T_CCOM(ccomCommGetFailedRanks(comm, failed, &nf), ccomSuccess);
	T_CHECK(nf == 0, "rank 1: %d failed rank(s) listed (first %d) after a revoke", nf,
		nf ? failed[0] : -1);
	ccomCommDestroy(comm);
	free(buf);
	return T_PASS;	/* exiting closes done[1]: rank 0 may go */
}

int main(void)
{
	int pipes[2], done[2], status, r, bad = 0;
	pid_t pids[2];

	if (!t_rdma_devices())
		return t_skip("no RDMA device (/sys/class/infiniband is empty): run it in the VM with soft-RoCE, selftests/libccom/ib/run-vm");
	if (pipe(pipes) || pipe(done))
		return T_FAIL;
	fflush(NULL);
	for (r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm(120);
			_exit(rank_main(r, pipes, done));
		}
	}
	close(pipes[0]);
	close(pipes[1]);
	close(done[0]);
	close(done[1]);
	for (r = 0; r < 2; r++) {
		if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			bad = 1;
		}
	}
	printf("%s: a revoke over net_ib ends the peer's wait\n", bad ? "FAIL" : "PASS");
	return bad ? T_FAIL : T_PASS;
}
