// SPDX-License-Identifier: MIT
/*
 * Description: the shm transport bounds the FIFO counters a local peer
 * writes into the host segment.  Two ranks of one host, CCOM_ALGO=ring
 * (the collectives go through the shm FIFOs), 1 MiB Broadcasts from rank 0.
 * After a matched warm-up, one rank corrupts the counter it owns (through
 * the library's internals: the test links libccom statically):
 *   --head (default: rank 0, the sender): the head of its FIFO to rank 1
 *     claims 16 FIFOs' worth of unread bytes; without the bound rank 1
 *     copies 1 MiB out of a 256 KiB FIFO, past the end of the segment
 *     (SIGSEGV or SIGBUS);
 *   --tail (rank 1, the receiver): the tail of rank 0's FIFO to it passes
 *     the head; without the bound rank 0 finds 2^64 - 16 FIFOs of room and
 *     writes its 1 MiB past the FIFO.
 * The other rank's operation must fail with ccomRemoteError whose sentence
 * names the corrupting rank, and that rank must exit normally; the
 * corrupting rank aborts its comm once the other is done.  No argument
 * runs both.
 */
#include "coll/coll.h"
#include "core/comm.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "test_util.h"

#define BIG (1u << 20)

static int corrupt_tail;
static int done_pipe[2];	/* EOF at the corrupting rank once the victim exited */

static int rank_main(int rank, int nranks, void *arg)
{
	static char buf[BIG];
	const ccomUniqueId *id = arg;
	int bad_rank = corrupt_tail ? 1 : 0, victim = 1 - bad_rank;
	ccomResult_t res, async = ccomSuccess;
	struct ccom_shm_fifo *f;
	ccomComm_t comm;

	T_CCOM(ccomCommInitRank(&comm, nranks, *id, rank), ccomSuccess);
	T_CHECK(comm->coll && comm->coll->conns[1 - rank] &&
		comm->coll->conns[1 - rank]->ops == &ccom_transport_shm && comm->shm,
		"rank %d: the conn to its peer is not shm", rank);
	T_CCOM(ccomBroadcast(buf, buf, 4096, ccomUint8, 0, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	/* Both ranks past the warm-up before the counters change. */
	T_CCOM(ccomAllReduce(buf, buf, 1, ccomUint8, ccomMax, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == bad_rank) {
		f = ccom_shm_fifo(comm->shm, 0, 1);	/* rank 0 -> rank 1 */
		if (corrupt_tail)
			atomic_store(&f->tail, atomic_load(&f->head) + 16 * comm->shm->fifo_bytes);
		else
			atomic_store(&f->head, atomic_load(&f->tail) + 16 * comm->shm->fifo_bytes);
		printf("rank %d: corrupted the %s of the FIFO 0 -> 1\n", rank,
		       corrupt_tail ? "tail" : "head");
		fflush(stdout);
		/* Until the victim is done (it exits): the segment's peer stays alive. */
		close(done_pipe[1]);
		if (read(done_pipe[0], buf, 1) < 0)
			perror("read");
		ccomCommAbort(comm);
		return T_PASS;
	}
	usleep(300000);
	T_CCOM(ccomBroadcast(buf, buf, BIG, ccomUint8, 0, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	printf("rank %d: the Broadcast after rank %d's corruption returned %s: %s\n", rank, bad_rank,
	       ccomGetErrorString(res), ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank %d: got %s, want ccomRemoteError", victim,
		ccomGetErrorString(res));
	{
		char want[32];

		snprintf(want, sizeof(want), "local peer rank %d", bad_rank);
		T_CHECK(t_has_words(ccomGetLastError(comm), want, NULL),
			"rank %d: the error does not name %s", victim, want);
	}
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomRemoteError, "rank %d: async error %s", victim,
		ccomGetErrorString(async));
	ccomCommAbort(comm);
	return T_PASS;
}

static int run_mode(int tail)
{
	struct t_ranks t;
	ccomUniqueId id;
	int codes[2] = { -1, -1 }, bad;

	corrupt_tail = tail;
	if (pipe(done_pipe))
		return T_FAIL;
	if (t_ranks_start(&t, 2, rank_main, &id, &id)) {
		t_ranks_wait(&t, codes, 60);
		return T_FAIL;
	}
	close(done_pipe[0]);
	close(done_pipe[1]);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	t_ranks_release(&t, &id);
	bad = t_ranks_wait(&t, codes, 60);
	printf("%s: shm fails the operation of a peer whose FIFO %s is out of bounds (codes %d %d)\n",
	       bad ? "FAIL" : "PASS", tail ? "tail" : "head", codes[0], codes[1]);
	return bad ? T_FAIL : T_PASS;
}

int main(int argc, char **argv)
{
	int bad = 0;

	setenv("CCOM_ALGO", "ring", 1);
	setenv("CCOM_KDEV", "0", 1);
	setenv("CCOM_OP_TIMEOUT", "20", 1);
	if (argc > 1 && !strcmp(argv[1], "--head"))
		return run_mode(0);
	if (argc > 1 && !strcmp(argv[1], "--tail"))
		return run_mode(1);
	bad |= run_mode(0);
	bad |= run_mode(1);
	return bad ? T_FAIL : T_PASS;
}
