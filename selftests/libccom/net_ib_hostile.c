// SPDX-License-Identifier: MIT
/*
 * Description: a net_ib receiver bounds what its peer's completions tell it
 * (in the VM with soft-RoCE: selftests/libccom/ib/run-vm; SKIPs without an
 * RDMA device).  Two simulated hosts (CCOM_HOSTID), one rank each,
 * CCOM_NET=ib, 2 slots of 4 KiB per direction, no mismatch signature (the
 * stream is raw).  After a matched Send/Recv that rank 1 has read, rank 0
 * turns hostile and posts on its own QP to rank 1 (reached through the
 * library's internals: the test links libccom statically) one of:
 *   --imm      a data write whose immediate (the slot's byte count) is
 *              0x7fff0000, far beyond the 4 KiB slot; rank 1 then receives
 *              a 256 KiB Broadcast from rank 0 (collectives carry no
 *              header, so the first recv asks for all of it): without the
 *              bound it copies 256 KiB out of its 8 KiB ring (ASan:
 *              heap-buffer-overflow; without: success with garbage);
 *   --credit   a credit for 1000 slots it was never sent; rank 1 then sends
 *              64 KiB that rank 0 never receives: without the bound its
 *              credit count passes its posted count and the send stalls
 *              until CCOM_OP_TIMEOUT (ccomTimeout);
 *   --overrun  3 data writes of 64 bytes into a 2-slot ring that credited
 *              none of them; rank 1 receives a 192-byte Broadcast: without
 *              the bound the third overwrites an unread slot and the
 *              receive succeeds.
 * Rank 1's operation must fail with ccomRemoteError whose sentence names
 * peer rank 0, the comm's async error must say so, and rank 1 must exit
 * normally (the connection fails, not the process).  Rank 0 keeps its comm
 * until rank 1 is done, so no liveness hang-up can end the wait instead.
 */
#include <arpa/inet.h>

#include "coll/coll.h"
#include "core/comm.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "net_util.h"
#include "test_util.h"

#define WARM 1024		/* bytes of the matched warm-up */
#define HOSTILE_WR_ID 0x686f7374ull

enum mode { M_IMM, M_CREDIT, M_OVERRUN };
static enum mode mode = M_IMM;

/* One zero-copy-free RDMA WRITE WITH IMMEDIATE of @len bytes into slot @slot of the peer. */
static int hostile_write(struct ib_conn *c, uint32_t imm, uint64_t slot, uint32_t len)
{
	struct ccib_sge sge = { .addr = (uintptr_t)c->stage, .length = len,
				.lkey = c->stage_mr->lkey };
	struct ccib_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = HOSTILE_WR_ID;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = CCIB_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = CCIB_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = c->remote_ring + (slot % c->nslots) * c->slot;
	wr.wr.rdma.rkey = c->remote_rkey;
	/* Its completion decrements sq_out like any send's. */
	c->sq_out[0]++;
	return c->qp->context->ops.post_send(c->qp, &wr, &bad);
}

static int misbehave(ccomComm_t comm)
{
	struct ib_conn *c;
	int i, r = 0;

	T_CHECK(comm->coll && comm->coll->conns && comm->coll->conns[1], "no conn to rank 1");
	T_CHECK(comm->coll->conns[1]->ops == &ccom_transport_net_ib,
		"the conn to rank 1 is %s, not net_ib", comm->coll->conns[1]->ops->name);
	c = to_ib(comm->coll->conns[1]);
	switch (mode) {
	case M_IMM:
		r = hostile_write(c, 0x7fff0000u, c->tx_posted, 64);
		break;
	case M_CREDIT:
		r = hostile_write(c, 0x80000000u | 1000u, 0, 0);
		break;
	case M_OVERRUN:
		for (i = 0; i < 3 && !r; i++)
			r = hostile_write(c, 64, c->tx_posted + (uint64_t)i, 64);
		break;
	}
	T_CHECK(r == 0, "rank 0: post_send failed: %s", strerror(r));
	printf("rank 0: posted the hostile write(s)\n");
	fflush(stdout);
	return T_PASS;
}

static int rank_main(int rank, int pipes[2], int done[2], int warm[2])
{
	size_t big = 256 << 10;
	char *buf = calloc(1, big);
	ccomResult_t res, async = ccomSuccess;
	ccomUniqueId id;
	ccomComm_t comm;
	char host[48];
	double t0, dt;

	T_CHECK(buf, "out of memory");
	snprintf(host, sizeof(host), "nihhost%d-%d", rank, (int)getppid());
	setenv("CCOM_HOSTID", host, 1);
	setenv("CCOM_NET", "ib", 1);
	setenv("CCOM_IB_SLOTS", "2", 1);
	setenv("CCOM_IB_SLOT_SIZE", "4096", 1);
	setenv("CCOM_IB_ZCOPY_MIN", "0", 1);
	setenv("CCOM_CHECK_MISMATCH", "0", 1);
	setenv("CCOM_OP_TIMEOUT", "30", 1);
	if (rank == 0) {
		T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
		T_CHECK(write(pipes[1], &id, sizeof(id)) == (ssize_t)sizeof(id), "pipe");
	} else {
		T_CHECK(read(pipes[0], &id, sizeof(id)) == (ssize_t)sizeof(id), "no unique id");
	}
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	if (rank == 0)
		T_CCOM(ccomSend(buf, WARM, ccomUint8, 1, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomRecv(buf, WARM, ccomUint8, 0, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == 0) {
		int r;

		/* Rank 1 has read the warm-up: the hostile writes cannot land in it. */
		close(warm[1]);
		T_CHECK(read(warm[0], host, 1) == 1, "rank 0: rank 1 did not finish the warm-up");
		r = misbehave(comm);

		/* Until rank 1 is done (or gone): the comm's connections stay open. */
		close(done[1]);
		if (read(done[0], host, 1) < 0)
			perror("rank 0: read");
		ccomCommAbort(comm);
		free(buf);
		return r;
	}
	close(done[0]);
	T_CHECK(write(warm[1], "w", 1) == 1, "rank 1: pipe");
	usleep(300000);		/* the hostile writes land before rank 1 polls */
	if (mode == M_CREDIT)
		T_CCOM(ccomSend(buf, 64 << 10, ccomUint8, 0, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomBroadcast(buf, buf, mode == M_IMM ? big : 192, ccomUint8, 0, comm,
				     NULL), ccomSuccess);
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank 1: the operation after rank 0's hostile write returned %s after %.3f s: %s\n",
	       ccomGetErrorString(res), dt, ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank 1: got %s, want ccomRemoteError",
		ccomGetErrorString(res));
	T_CHECK(t_has_words(ccomGetLastError(comm), "peer rank 0", NULL),
		"rank 1: the error does not name peer rank 0");
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomRemoteError, "rank 1: async error %s, want ccomRemoteError",
		ccomGetErrorString(async));
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;	/* exiting closes done[1]: rank 0 may go */
}

int main(int argc, char **argv)
{
	int pipes[2], done[2], warm[2], status, r, bad = 0;
	pid_t pids[2];

	if (argc > 1 && !strcmp(argv[1], "--credit"))
		mode = M_CREDIT;
	else if (argc > 1 && !strcmp(argv[1], "--overrun"))
		mode = M_OVERRUN;
	else if (argc > 1 && strcmp(argv[1], "--imm")) {
		fprintf(stderr, "usage: %s [--imm | --credit | --overrun]\n", argv[0]);
		return T_FAIL;
	}
	if (!t_rdma_devices())
		return t_skip("no RDMA device (/sys/class/infiniband is empty): run it in the VM with soft-RoCE, selftests/libccom/ib/run-vm");
	if (pipe(pipes) || pipe(done) || pipe(warm))
		return T_FAIL;
	fflush(NULL);
	for (r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm(120);
			_exit(rank_main(r, pipes, done, warm));
		}
	}
	close(pipes[0]);
	close(pipes[1]);
	close(done[0]);
	close(done[1]);
	close(warm[0]);
	close(warm[1]);
	for (r = 0; r < 2; r++) {
		if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			bad = 1;
		}
	}
	printf("%s: net_ib fails the connection of a peer whose %s is out of bounds\n",
	       bad ? "FAIL" : "PASS",
	       mode == M_IMM ? "byte count" : mode == M_CREDIT ? "credit" : "slot count");
	return bad ? T_FAIL : T_PASS;
}
