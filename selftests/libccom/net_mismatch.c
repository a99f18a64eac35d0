// SPDX-License-Identifier: MIT
/*
 * Description: collective-mismatch detection between hosts (as root;
 * skipped otherwise).  Two simulated hosts (network namespaces joined by a
 * veth pair), one rank each, so every byte between them goes over TCP and
 * the host segment's board sees nothing.  After a matched AllReduce, the
 * ranks call different collectives: count (small: one send() with the
 * signature, and 4 Mi vs 2 Mi floats: the two-rank pipelined AllReduce),
 * kind (AllReduce vs Broadcast), datatype, op, root (Broadcast from root 0
 * vs root 1: both ranks only send, so only the end-of-op exchange can see
 * it) and Reduce roots.  Every rank must fail with ccomInvalidUsage within
 * 5 s, with the sentence naming both calls and what differs, and no byte
 * outside the buffers (64 guard bytes after each) may change.  Then
 * CCOM_CHECK_MISMATCH=0 on one rank only must fail init on both with a
 * sentence naming the variable, and a matched op sequence (AllReduce,
 * Broadcast, a p2p exchange, AllReduce) must still pass with the check on.
 * With --ib (net_ib_mismatch in the VM, selftests/libccom/ib/run-vm) the
 * two hosts are CCOM_HOSTID values in one namespace and CCOM_NET=ib puts
 * every byte between them on net_ib (soft-RoCE there); no root needed.
 */
#include "mismatch_util.h"
#include "net_util.h"

static const struct mm_case cases[] = {
	MM_BASIC_CASES,
	{ "count-big", { { MM_ALLREDUCE, 4u << 20, ccomFloat32, ccomSum, 0,
			   "ccomAllReduce(count 4194304, float, sum)" },
			 { MM_ALLREDUCE, 2u << 20, ccomFloat32, ccomSum, 0,
			   "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "reduce-root", { { MM_REDUCE, 1000, ccomFloat32, ccomSum, 1, "ccomReduce(count 1000, float, sum, root 1)" },
			   { MM_REDUCE, 1000, ccomFloat32, ccomSum, 0, "ccomReduce(count 1000, float, sum, root 0)" } },
	  "the roots differ", 0, 0 },
};

#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static int use_ib;		/* --ib: hosts by CCOM_HOSTID, CCOM_NET=ib */

enum { MODE_CASE, MODE_ENV_DIFFERS, MODE_MATCHED };

struct job {
	int mode;
	int k;			/* cases[k] for MODE_CASE */
};

/* Matched collectives and a p2p exchange in between: the signatures stay framed. */
static int run_matched(ccomComm_t comm, int rank)
{
	static float big[1u << 20];
	float v[64], p[64];
	size_t i;
	int peer = 1 - rank, round;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 64; i++)
			v[i] = (float)(rank + 1);
		T_CCOM(ccomAllReduce(v, v, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomBroadcast(v, v, 64, ccomFloat32, 1, comm, NULL), ccomSuccess);
		for (i = 0; i < 64; i++)
			p[i] = (float)(10 + rank);
		T_CCOM(ccomGroupStart(), ccomSuccess);
		T_CCOM(ccomSend(p, 64, ccomFloat32, peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomRecv(p, 64, ccomFloat32, peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomGroupEnd(), ccomSuccess);
		for (i = 0; i < (1u << 20); i++)
			big[i] = (float)rank;
		T_CCOM(ccomAllReduce(big, big, 1u << 20, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(v[0] == 3.0f && v[63] == 3.0f, "round %d: AllReduce+Broadcast gave %g", round,
			(double)v[0]);
		T_CHECK(p[0] == (float)(10 + peer), "round %d: Recv gave %g", round, (double)p[0]);
		T_CHECK(big[0] == 1.0f && big[(1u << 20) - 1] == 1.0f, "round %d: big AllReduce gave %g",
			round, (double)big[0]);
	}
	return T_PASS;
}

/* One rank: its host, the unique id from rank 0 through @pipes, init, the job. */
static int rank_main(int rank, int pipes[2][2], const struct job *j)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;
	int rc;

	setenv("CCOM_OP_TIMEOUT", "30", 1);	/* a timeout is not what must end it */
	if (use_ib) {
		t_set_host("nmmhost", rank);
		setenv("CCOM_NET", "ib", 1);
	} else if (nett_enter_host(rank)) {
		return 2;
	}
	if (j->mode == MODE_ENV_DIFFERS && rank == 1)
		setenv("CCOM_CHECK_MISMATCH", "0", 1);
	if (rank == 0) {
		if (ccomGetUniqueId(&id) != ccomSuccess ||
		    write(pipes[1][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			return 2;
	} else if (read(pipes[1][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		return 2;
	}
	res = ccomCommInitRank(&comm, 2, id, rank);
	if (j->mode == MODE_ENV_DIFFERS) {
		printf("rank %d [env differs]: init %s: %s\n", rank, ccomGetErrorString(res),
		       ccomGetLastError(NULL));
		T_CHECK(res == ccomInvalidUsage, "rank %d: init with CCOM_CHECK_MISMATCH on one rank only gave %s",
			rank, ccomGetErrorString(res));
		T_CHECK(t_has_words(ccomGetLastError(NULL), "CCOM_CHECK_MISMATCH differs", "same value", NULL),
			"rank %d: the init error does not name CCOM_CHECK_MISMATCH", rank);
		return T_PASS;
	}
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: init: %s: %s\n", rank, ccomGetErrorString(res), ccomGetLastError(NULL));
		return 2;
	}
	rc = j->mode == MODE_MATCHED ? run_matched(comm, rank) : mm_run_case(comm, rank, &cases[j->k]);
	if (j->mode == MODE_MATCHED && rc == T_PASS) {
		T_CCOM(ccomCommFinalize(comm), ccomSuccess);
		ccomCommDestroy(comm);
	} else {
		ccomCommAbort(comm);
	}
	return rc;
}

static int run_job(const struct job *j, const char *name)
{
	int pipes[2][2], status, r, bad = 0;
	pid_t pids[2];
	double t0 = t_now();

	fflush(NULL);
	if (pipe(pipes[0]) || pipe(pipes[1]))
		return 1;
	for (r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm(40);	/* a hang is a failure, not a stuck make check */
			_exit(rank_main(r, pipes, j));
		}
	}
	for (r = 0; r < 2; r++) {
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	for (r = 0; r < 2; r++) {
		if (waitpid(pids[r], &status, 0) < 0)
			return 1;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "[%s] rank %d failed (status 0x%x)\n", name, r, status);
			bad = 1;
		}
	}
	printf("%s [%s] (%.1f s)\n", bad ? "FAIL" : "PASS", name, t_now() - t0);
	return bad;
}

int main(int argc, char **argv)
{
	struct job j = { 0 };
	int rc, bad = 0, k;

	use_ib = argc > 1 && !strcmp(argv[1], "--ib");
	if (use_ib && access("/sys/class/infiniband/rxe0", F_OK) && !getenv("CCOM_IB_HCA"))
		return t_skip("--ib: no soft-RoCE device rxe0 (run it in the VM: selftests/libccom/ib/run-vm)");
	rc = use_ib ? 0 : nett_hosts_up();
	if (rc)
		return rc;
	for (k = 0; k < NCASES; k++) {
		j.mode = MODE_CASE;
		j.k = k;
		bad += run_job(&j, cases[k].name);
	}
	j.mode = MODE_ENV_DIFFERS;
	bad += run_job(&j, "CCOM_CHECK_MISMATCH on one rank only");
	j.mode = MODE_MATCHED;
	bad += run_job(&j, "matched collectives and p2p");
	return bad ? T_FAIL : T_PASS;
}
