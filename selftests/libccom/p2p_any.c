// SPDX-License-Identifier: MIT
/*
 * Description: ccomRecvAny, the receive from any peer, on shm (the
 * default between the forked ranks of this host) and on TCP
 * (CCOM_TRANSPORT=net), small and large messages:
 *  - 4 ranks: rank 0 takes 3 sends from each of ranks 1-3 with
 *    ccomRecvAny; each message names its sender and number, so the test
 *    checks the reported peer, the data and the per-peer order;
 *  - a ccomRecv(peer) after a ccomRecvAny that matched peer gets that
 *    peer's next send;
 *  - a peer already in a collective (an AllReduce with CCOM_ALGO=ring, or
 *    a Gather, which moves its data as sends: their bytes at the head of
 *    the stream) is not matched, and the collective then succeeds;
 *  - a send of another size fails with ccomInvalidArgument naming both;
 *    every peer in a collective fails at once with ccomInvalidUsage;
 *    nobody sending ends with ccomTimeout after CCOM_OP_TIMEOUT, and
 *    ccomCommAbort() ends the wait;
 *  - two ccomRecvAny in one group take two sends of one peer;
 *  - arguments: a NULL peer, a group mixing ccomRecvAny and ccomSend, a
 *    1-rank communicator.
 */
#include <pthread.h>

#include "coll_util.h"

#define MSGS 3

static const char *transport;	/* NULL: shm, else "CCOM_TRANSPORT=net" */
static size_t count;		/* elements of each message */

static void job_env(struct ct_job *j, const char *algo)
{
	memset(j, 0, sizeof(*j));
	j->env[0] = transport;
	j->env[transport ? 1 : 0] = algo;
}

static void fill(int64_t *b, int from, int k)
{
	size_t i;

	for (i = 0; i < count; i++)
		b[i] = (int64_t)from * 1000000 + k * 1000 + (int64_t)(i % 997);
}

/* Does @b hold message @k of @from? */
static int holds(const int64_t *b, int from, int k)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (b[i] != (int64_t)from * 1000000 + k * 1000 + (int64_t)(i % 997))
			return 0;
	return 1;
}

static int many_rank(int rank, int n, void *arg)
{
	int64_t *b = calloc(count, sizeof(*b));
	int next[8] = { 0 }, got = 0, k, peer, p;
	ccomComm_t comm;

	T_CHECK(b, "out of memory");
	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	if (rank) {
		for (k = 0; k < MSGS; k++) {
			fill(b, rank, k);
			T_CCOM(ccomSend(b, count, ccomInt64, 0, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		}
	} else {
		for (got = 0; got < MSGS * (n - 1); got++) {
			T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			T_CHECK(peer > 0 && peer < n, "message %d: peer %d", got, peer);
			T_CHECK(holds(b, peer, next[peer]), "message %d from %d: not its send %d (%lld)",
				got, peer, next[peer], (long long)b[0]);
			next[peer]++;
		}
		for (p = 1; p < n; p++)
			T_CHECK(next[p] == MSGS, "peer %d: %d messages", p, next[p]);
	}
	/* Everyone still agrees on a collective afterwards. */
	if (ct_allreduce_ok(comm, rank, n, (float *)b, count < 4 ? 1 : count / 4))
		return T_FAIL;
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(b);
	return T_PASS;
}

/*
 * Rank 0: RecvAny matches 1 or 2; Recv(that peer) gets its second send;
 * RecvAny the other's; then two groups of two RecvAny take a (tag, data)
 * pair each, both parts from one peer.
 */
static int mixed_rank(int rank, int n, void *arg)
{
	int64_t *b = calloc(count, sizeof(*b)), tag[1] = { 0 };
	int peer, other, k;
	ccomComm_t comm;

	(void)n;
	T_CHECK(b, "out of memory");
	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	if (rank) {
		for (k = 0; k < 2; k++) {
			fill(b, rank, k);
			T_CCOM(ccomSend(b, count, ccomInt64, 0, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		}
	} else {
		T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(peer == 1 || peer == 2, "peer %d", peer);
		T_CHECK(holds(b, peer, 0), "first from %d is not its send 0", peer);
		T_CCOM(ccomRecv(b, count, ccomInt64, peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(holds(b, peer, 1), "ccomRecv(%d) after ccomRecvAny is not its send 1", peer);
		other = 3 - peer;
		T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(peer == other, "second ccomRecvAny: peer %d, want %d", peer, other);
		T_CHECK(holds(b, peer, 0), "from %d: not its send 0", peer);
		T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(peer == other && holds(b, peer, 1), "third: peer %d", peer);
	}
	/* Grouped ccomRecvAny: the first picks the peer, the second takes its next send. */
	T_CCOM(ccomAllReduce(tag, tag, 1, ccomInt64, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank) {
		fill(b, rank, 2);
		tag[0] = rank;
		T_CCOM(ccomGroupStart(), ccomSuccess);
		T_CCOM(ccomSend(tag, 1, ccomInt64, 0, comm, NULL), ccomSuccess);
		T_CCOM(ccomSend(b, count, ccomInt64, 0, comm, NULL), ccomSuccess);
		T_CCOM(ccomGroupEnd(), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	} else {
		for (k = 0; k < 2; k++) {
			T_CCOM(ccomGroupStart(), ccomSuccess);
			T_CCOM(ccomRecvAny(tag, 1, ccomInt64, &peer, comm, NULL), ccomSuccess);
			T_CCOM(ccomRecvAny(b, count, ccomInt64, &other, comm, NULL), ccomSuccess);
			T_CCOM(ccomGroupEnd(), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			T_CHECK(peer == other && tag[0] == peer && holds(b, peer, 2),
				"grouped: peers %d and %d, tag %lld", peer, other, (long long)tag[0]);
		}
	}
	T_CCOM(ccomAllReduce(tag, tag, 1, ccomInt64, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(b);
	return T_PASS;
}

/*
 * Rank 2 enters the collective (its bytes reach rank 0's stream from
 * it) before it sends; rank 1 sends, after 0.3 s, then joins.  Rank 0's
 * RecvAny must take rank 1's send, not rank 2's collective bytes.
 */
static int ahead_gather;	/* the collective: 0 AllReduce, 1 Gather to rank 0 */

static int ahead_rank(int rank, int n, void *arg)
{
	int64_t *b = calloc(count, sizeof(*b));
	float f[64], g[3 * 64];
	int peer, i;
	ccomComm_t comm;

	T_CHECK(b, "out of memory");
	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	for (i = 0; i < 64; i++)
		f[i] = (float)(rank + 1);
	if (rank == 1) {
		usleep(300000);
		fill(b, 1, 0);
		T_CCOM(ccomSend(b, count, ccomInt64, 0, comm, NULL), ccomSuccess);
	} else if (rank == 0) {
		T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(peer == 1 && holds(b, 1, 0), "matched peer %d", peer);
	}
	if (ahead_gather)
		T_CCOM(ccomGather(f, g, 64, ccomFloat32, 0, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomAllReduce(f, f, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	if (rank == 2) {
		fill(b, 2, 0);
		T_CCOM(ccomSend(b, count, ccomInt64, 0, comm, NULL), ccomSuccess);
	} else if (rank == 0) {
		T_CCOM(ccomRecvAny(b, count, ccomInt64, &peer, comm, NULL), ccomSuccess);
	}
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < 64 && !ahead_gather; i++)
		T_CHECK(f[i] == (float)(n * (n + 1) / 2), "allreduce element %d: %g", i, f[i]);
	for (i = 0; i < 3 * 64 && ahead_gather && rank == 0; i++)
		T_CHECK(g[i] == (float)(i / 64 + 1), "gather element %d: %g", i, g[i]);
	if (rank == 0)
		T_CHECK(peer == 2 && holds(b, 2, 0), "after the collective: peer %d", peer);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(b);
	return T_PASS;
}

/* Failures: 0 = size mismatch, 1 = every peer in a collective, 2 = timeout, 3 = abort. */
static int fail_case;

static int fail_rank(int rank, int n, void *arg)
{
	int64_t b[8] = { 0 };
	float f[64] = { 0 };
	ccomResult_t res;
	ccomComm_t comm;
	pthread_t th;
	double t0;
	int peer;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "2", 1);
	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	if (rank == 1) {
		if (fail_case == 0)
			ccomSend(b, 3, ccomInt64, 0, comm, NULL);
		else if (fail_case == 1)
			ccomAllReduce(f, f, 64, ccomFloat32, ccomSum, comm, NULL);
		else
			sleep(4);
		ccomCommSynchronize(comm);	/* fails or not: rank 0's result is the test */
		ccomCommAbort(comm);
		return T_PASS;
	}
	t0 = t_now();
	if (fail_case == 3)
		T_CHECK(!pthread_create(&th, NULL, ct_aborter, comm), "pthread_create");
	T_CCOM(ccomRecvAny(b, 4, ccomInt64, &peer, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	printf("case %d: %s after %.2f s: %s\n", fail_case, ccomGetErrorString(res), t_now() - t0,
	       ccomGetLastError(comm));
	if (fail_case == 0) {
		T_CHECK(res == ccomInvalidArgument && peer == 1, "%s, peer %d", ccomGetErrorString(res), peer);
		T_CHECK(t_has_words(ccomGetLastError(comm), "24", "32", "ccomRecvAny", NULL),
			"message does not name the two sizes");
	} else if (fail_case == 1) {
		T_CHECK(res == ccomInvalidUsage, "got %s", ccomGetErrorString(res));
		T_CHECK(t_now() - t0 < 1.5, "took %.2f s", t_now() - t0);
		T_CHECK(strstr(ccomGetLastError(comm), "collective"), "message does not say why");
	} else if (fail_case == 2) {
		T_CHECK(res == ccomTimeout && t_now() - t0 >= 1.9, "got %s", ccomGetErrorString(res));
	} else {
		pthread_join(th, NULL);	/* its ccomCommAbort() freed the comm */
		T_CHECK(res != ccomSuccess && t_now() - t0 < 1.8, "got %s after %.2f s",
			ccomGetErrorString(res), t_now() - t0);
		return T_PASS;
	}
	ccomCommAbort(comm);
	return T_PASS;
}

static int check_args(void)
{
	ccomComm_t comms[2], one;
	int devs[1] = { 0 }, peer = 5;
	float x[4];

	T_CCOM(ccomCommInitAll(comms, 2, NULL), ccomSuccess);
	T_CCOM(ccomRecvAny(x, 4, ccomFloat32, NULL, comms[0], NULL), ccomInvalidArgument);
	T_CCOM(ccomRecvAny(NULL, 4, ccomFloat32, &peer, comms[0], NULL), ccomInvalidArgument);
	T_CHECK(peer == -1, "peer %d after a refused call", peer);
	T_CCOM(ccomRecvAny(x, 4, (ccomDataType_t)99, &peer, comms[0], NULL), ccomInvalidArgument);
	T_CCOM(ccomGroupStart(), ccomSuccess);
	T_CCOM(ccomRecvAny(x, 4, ccomFloat32, &peer, comms[0], NULL), ccomSuccess);
	T_CCOM(ccomSend(x, 4, ccomFloat32, 1, comms[0], NULL), ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomInvalidUsage);
	T_CCOM(ccomCommDestroy(comms[0]), ccomSuccess);
	T_CCOM(ccomCommDestroy(comms[1]), ccomSuccess);
	T_CCOM(ccomCommInitAll(&one, 1, devs), ccomSuccess);
	T_CCOM(ccomRecvAny(x, 4, ccomFloat32, &peer, one, NULL), ccomInvalidUsage);
	T_CCOM(ccomCommDestroy(one), ccomSuccess);
	return T_PASS;
}

static int run_all(void)
{
	static const size_t counts[] = { 4, 300000 };
	struct ct_job j;
	int bad = 0, c;

	for (c = 0; c < 2; c++) {
		count = counts[c];
		printf("%s, %zu elements\n", transport ? transport : "shm", count);
		job_env(&j, NULL);
		bad += ct_run(&j, 4, many_rank, 120);
		job_env(&j, NULL);
		bad += ct_run(&j, 3, mixed_rank, 120);
		for (ahead_gather = 0; ahead_gather < 2; ahead_gather++) {
			job_env(&j, ahead_gather ? NULL : "CCOM_ALGO=ring");
			bad += ct_run(&j, 3, ahead_rank, 120);
		}
	}
	for (fail_case = 0; fail_case < 4; fail_case++) {
		job_env(&j, fail_case == 1 ? "CCOM_ALGO=ring" : NULL);
		bad += ct_run(&j, 2, fail_rank, 60);
	}
	return bad;
}

int main(void)
{
	int bad;

	if (check_args())
		return T_FAIL;
	transport = NULL;
	bad = run_all();
	transport = "CCOM_TRANSPORT=net";
	bad += run_all();
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? T_FAIL : T_PASS;
}
