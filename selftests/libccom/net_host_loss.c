// SPDX-License-Identifier: MIT
/*
 * Description: a host that goes silent (powered off, cut off: no FIN, no
 * RST) is found within CCOM_PEER_TIMEOUT and named.  Two simulated hosts
 * (network namespaces joined by a veth pair; as root, skipped otherwise),
 * ranks 0,1 on host A and 2,3 on host B, shm inside a host and TCP between.
 * After a checked AllReduce, B's ranks enqueue a 16 MiB AllReduce and stop
 * themselves (SIGSTOP), and the parent removes B's address: B's kernel
 * drops every packet silently, as a host that vanished (its neighbour entry
 * goes stale, then fails, as for a powered-off host).  With
 * CCOM_PEER_TIMEOUT=4 and CCOM_OP_TIMEOUT=40, ranks 0 and 1 must each get
 * ccomRemoteError within 20 s (before: the op timeout at 40 s, naming no
 * lost rank), an error naming ranks 2 and 3, ccomCommGetFailedRanks
 * exactly {2, 3}, and a ccomCommShrink to the two of them that runs a
 * checked AllReduce.  Run twice: mixed transports, then CCOM_TRANSPORT=net
 * (every pair over TCP, so each survivor must find the loss itself).  In
 * the first run B's ranks stay stopped for 3 x CCOM_PEER_TIMEOUT before
 * the cut: a stopped process on a live host is no lost host (its kernel
 * answers), so the survivors must not fail before the cut.
 */
#include <poll.h>
#include <signal.h>

#include "net_util.h"
#include "test_util.h"

#define HL_BIG ((16u << 20) / sizeof(float))
#define HL_PEER_TIMEOUT "4"
#define HL_LIMIT_S 20.0

/* Seconds B's ranks stay stopped before the cut (set before the fork). */
static int hl_stopped_s;

/* A survivor: the AllReduces that must fail, the naming, then the shrink. */
static int hl_survivor(ccomComm_t comm, int rank, float *buf)
{
	int failed[8], nf = 8, lost[2] = { 2, 3 }, cnt = -1, nr = -1, i;
	ccomResult_t res = ccomSuccess;
	const char *msg;
	ccomComm_t next;
	double t0 = 0, dt = 0;

	/* B's ranks may finish their part of the first before they stop: then the second hangs. */
	for (i = 0; i < 3 && res == ccomSuccess; i++) {
		t0 = t_now();
		res = ccomAllReduce(buf, buf, HL_BIG, ccomFloat32, ccomSum, comm, NULL);
		if (res == ccomSuccess)
			res = ccomCommSynchronize(comm);
		dt = t_now() - t0;
	}
	msg = ccomGetLastError(comm);
	printf("rank %d: AllReduce #%d with host B silent returned %s after %.1f s: %s\n", rank,
	       i - 1, ccomGetErrorString(res), dt, msg);
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank %d: got %s, want ccomRemoteError", rank,
		ccomGetErrorString(res));
	T_CHECK(dt >= hl_stopped_s - 0.5,
		"rank %d: failed after %.1f s, while host B's ranks were only stopped (%d s before the cut): a false loss",
		rank, dt, hl_stopped_s);
	T_CHECK(dt <= hl_stopped_s + HL_LIMIT_S,
		"rank %d: the loss took %.1f s to surface (cut after %d s, CCOM_PEER_TIMEOUT=%s, limit %.0f s)",
		rank, dt, hl_stopped_s, HL_PEER_TIMEOUT, HL_LIMIT_S);
	T_CHECK(strstr(msg, "ranks 2, 3") && strstr(msg, "ccomCommShrink"),
		"rank %d: the error does not name the lost ranks 2, 3 and the fix: %s", rank, msg);
	T_CCOM(ccomCommGetFailedRanks(comm, failed, &nf), ccomSuccess);
	T_CHECK(nf == 2 && failed[0] == 2 && failed[1] == 3,
		"rank %d: ccomCommGetFailedRanks gave %d rank(s) (%d %d), want exactly 2 3", rank, nf,
		nf > 0 ? failed[0] : -1, nf > 1 ? failed[1] : -1);
	T_CCOM(ccomCommShrink(comm, lost, 2, &next, NULL, CCOM_SHRINK_ABORT), ccomSuccess);
	T_CCOM(ccomCommCount(next, &cnt), ccomSuccess);
	T_CCOM(ccomCommUserRank(next, &nr), ccomSuccess);
	T_CHECK(cnt == 2 && nr == rank, "rank %d: the shrunk comm has rank %d of %d, want %d of 2",
		rank, nr, cnt, rank);
	if (ct_allreduce_ok(next, nr, 2, buf, (1u << 20) + 5))
		return T_FAIL;
	printf("rank %d: shrunk to 2 ranks, AllReduce correct\n", rank);
	T_CCOM(ccomCommDestroy(next), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

static int hl_rank(int rank, int pipes[][2], int stopped)
{
	ccomUniqueId id;
	ccomComm_t comm;
	float *buf;
	int r;

	if (nett_enter_host(rank / 2))
		return 2;
	if (rank == 0) {
		T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
		for (r = 1; r < 4; r++)
			T_CHECK(write(pipes[r][1], &id, sizeof(id)) == (ssize_t)sizeof(id), "id pipe");
	} else {
		T_CHECK(read(pipes[rank][0], &id, sizeof(id)) == (ssize_t)sizeof(id),
			"rank %d: no unique id from rank 0", rank);
	}
	T_CCOM(ccomCommInitRank(&comm, 4, id, rank), ccomSuccess);
	buf = calloc(HL_BIG, sizeof(float));
	T_CHECK(buf, "out of memory");
	if (ct_allreduce_ok(comm, rank, 4, buf, 1024))
		return T_FAIL;
	if (rank < 2)
		return hl_survivor(comm, rank, buf);
	/* Host B: an AllReduce in flight, then the whole host goes quiet. */
	T_CCOM(ccomAllReduce(buf, buf, HL_BIG, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CHECK(write(stopped, "s", 1) == 1, "stop pipe");
	raise(SIGSTOP);
	return T_FAIL;	/* never resumed: the parent kills it */
}

/* Reap @pid within @secs (SIGKILL after); its exit code, 124 if killed. */
static int hl_reap(pid_t pid, double secs)
{
	double end = t_now() + secs;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (t_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return 124;
		}
		usleep(10000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int hl_run(const char *what, int stopped_s)
{
	int pipes[4][2], stop[2], r, rc = T_PASS, code;
	struct pollfd pfd;
	pid_t pids[4];
	char b[2];
	double t0 = t_now();

	code = nett_hosts_up();
	if (code == NETT_SKIP)
		return T_SKIP;
	T_CHECK(code == 0, "cannot set the two hosts up");
	hl_stopped_s = stopped_s;
	T_CHECK(!pipe(stop), "pipe");
	for (r = 0; r < 4; r++)
		T_CHECK(!pipe(pipes[r]), "pipe");
	fflush(NULL);
	for (r = 0; r < 4; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			code = hl_rank(r, pipes, stop[1]);
			fflush(NULL);
			_exit(code);
		}
	}
	/* Both of B's ranks stopped (or 60 s): cut B off. */
	pfd = (struct pollfd){ .fd = stop[0], .events = POLLIN };
	for (r = 0; r < 2 && poll(&pfd, 1, 60000) == 1 && read(stop[0], b, 1) == 1;)
		r++;
	if (r == 2 && hl_stopped_s)
		sleep((unsigned int)hl_stopped_s);
	if (r < 2) {
		fprintf(stderr, "FAIL: host B's ranks did not reach their stop within 60 s\n");
		rc = T_FAIL;
	} else if (nett_sh("ip -n %s addr flush dev ccv0", nett_ns[1])) {
		fprintf(stderr, "FAIL: cannot remove host B's address\n");
		rc = T_FAIL;
	}
	for (r = 0; r < 2; r++) {
		code = hl_reap(pids[r], 90);
		if (code) {
			fprintf(stderr, "FAIL: rank %d exited %d%s\n", r, code,
				code == 124 ? " (killed after 90 s)" : "");
			rc = T_FAIL;
		}
	}
	for (r = 2; r < 4; r++) {
		kill(pids[r], SIGKILL);
		waitpid(pids[r], NULL, 0);
	}
	nett_hosts_down();
	for (r = 0; r < 4; r++) {
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	close(stop[0]);
	close(stop[1]);
	if (rc == T_PASS)
		printf("PASS: %s: host B silenced, ranks 0 and 1 named ranks 2, 3 and shrank (%.1f s)\n",
		       what, t_now() - t0);
	return rc;
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0)
		return t_skip("network namespaces need root (run as root to test host loss)");
	setenv("CCOM_PEER_TIMEOUT", HL_PEER_TIMEOUT, 1);
	setenv("CCOM_OP_TIMEOUT", "40", 1);
	rc = hl_run("mixed (shm in a host, TCP between), stopped 12 s first", 3 * atoi(HL_PEER_TIMEOUT));
	if (rc)
		return rc;
	setenv("CCOM_TRANSPORT", "net", 1);
	setenv("CCOM_ALGO", "ring", 1);
	return hl_run("CCOM_TRANSPORT=net, ring", 0);
}
