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
#include "net_util.h"
#include "test_util.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

enum { K_ALLREDUCE, K_BROADCAST, K_REDUCE };

struct call {
	int kind;
	size_t count;
	ccomDataType_t dt;
	ccomRedOp_t op;
	int root;
	const char *text;	/* how the message must name it */
};

struct mcase {
	const char *name;
	struct call c[2];
	const char *why;
};

static const struct mcase cases[] = {
	{ "count", { { K_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		     { K_ALLREDUCE, 200, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 200, float, sum)" } },
	  "the element counts differ" },
	{ "count-big", { { K_ALLREDUCE, 4u << 20, ccomFloat32, ccomSum, 0,
			   "ccomAllReduce(count 4194304, float, sum)" },
			 { K_ALLREDUCE, 2u << 20, ccomFloat32, ccomSum, 0,
			   "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ" },
	{ "kind", { { K_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		    { K_BROADCAST, 100, ccomFloat32, ccomSum, 0, "ccomBroadcast(count 100, float, root 0)" } },
	  "they called different collectives" },
	{ "dtype", { { K_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		     { K_ALLREDUCE, 100, ccomInt32, ccomSum, 0, "ccomAllReduce(count 100, int32, sum)" } },
	  "the datatypes differ" },
	{ "op", { { K_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
		  { K_ALLREDUCE, 100, ccomFloat32, ccomMax, 0, "ccomAllReduce(count 100, float, max)" } },
	  "the reduction ops differ" },
	{ "root", { { K_BROADCAST, 100, ccomFloat32, ccomSum, 0, "ccomBroadcast(count 100, float, root 0)" },
		    { K_BROADCAST, 100, ccomFloat32, ccomSum, 1, "ccomBroadcast(count 100, float, root 1)" } },
	  "the roots differ" },
	{ "reduce-root", { { K_REDUCE, 1000, ccomFloat32, ccomSum, 1, "ccomReduce(count 1000, float, sum, root 1)" },
			   { K_REDUCE, 1000, ccomFloat32, ccomSum, 0, "ccomReduce(count 1000, float, sum, root 0)" } },
	  "the roots differ" },
};

#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static int use_ib;		/* --ib: hosts by CCOM_HOSTID, CCOM_NET=ib */

enum { MODE_CASE, MODE_ENV_DIFFERS, MODE_MATCHED };

struct job {
	int mode;
	int k;			/* cases[k] for MODE_CASE */
};

static int guard_ok(const unsigned char *g)
{
	int i;

	for (i = 0; i < GUARD; i++)
		if (g[i] != GUARD_BYTE)
			return 0;
	return 1;
}

static ccomResult_t issue(const struct call *c, void *sb, void *rb, ccomComm_t comm)
{
	if (c->kind == K_ALLREDUCE)
		return ccomAllReduce(sb, rb, c->count, c->dt, c->op, comm, NULL);
	if (c->kind == K_BROADCAST)
		return ccomBroadcast(sb, rb, c->count, c->dt, c->root, comm, NULL);
	return ccomReduce(sb, rb, c->count, c->dt, c->op, c->root, comm, NULL);
}

/* A mismatched call: fail fast, both calls named, guards intact. */
static int run_case(ccomComm_t comm, int rank, const struct mcase *mc)
{
	const struct call *c = &mc->c[rank];
	size_t esz = nett_tsize(c->dt), bytes = c->count * esz, i;
	unsigned char *sb = malloc(bytes + GUARD), *rb = malloc(bytes + GUARD);
	ccomResult_t res, async;
	float one = 1;
	const char *msg;
	double t0, dt;

	T_CHECK(sb && rb, "out of memory");
	for (i = 0; i < c->count; i++) {
		nett_store(sb, c->dt, i, 1.0);
		nett_store(rb, c->dt, i, 0.0);
	}
	memset(sb + bytes, GUARD_BYTE, GUARD);
	memset(rb + bytes, GUARD_BYTE, GUARD);
	/* The first collective matches: the check must not fire on it. */
	T_CCOM(ccomAllReduce(&one, &one, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(one == 2.0f, "matched AllReduce gave %g", (double)one);

	t0 = t_now();
	res = issue(c, sb, rb, comm);
	T_CHECK(res == ccomSuccess, "enqueue: %s", ccomGetErrorString(res));
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	msg = ccomGetLastError(comm);
	printf("rank %d [%s]: %s after %.3f s: %s\n", rank, mc->name, ccomGetErrorString(res), dt, msg);
	fflush(stdout);
	T_CHECK(guard_ok(sb + bytes) && guard_ok(rb + bytes), "rank %d [%s]: a guard byte after a buffer changed",
		rank, mc->name);
	T_CHECK(dt < 5.0, "rank %d [%s]: took %.2f s", rank, mc->name, dt);
	T_CHECK(res == ccomInvalidUsage, "rank %d [%s]: got %s, want ccomInvalidUsage", rank, mc->name,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(msg, "collective mismatch", mc->c[0].text, mc->c[1].text, mc->why,
			    "collective 2", NULL),
		"rank %d [%s]: the message does not name both calls (%s / %s) and '%s'", rank, mc->name,
		mc->c[0].text, mc->c[1].text, mc->why);
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async == ccomInvalidUsage, "async error %s", ccomGetErrorString(async));
	free(sb);
	free(rb);
	return T_PASS;
}

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
	rc = j->mode == MODE_MATCHED ? run_matched(comm, rank) : run_case(comm, rank, &cases[j->k]);
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
