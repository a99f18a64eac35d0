/* SPDX-License-Identifier: MIT */
/*
 * shrink_util.h - the recovery scenario of the shrink_* tests, on any
 * placement of the ranks (one host over shm, simulated hosts over TCP):
 *
 *   4 ranks; SIGKILL rank 2 in the middle of a 64 MiB AllReduce; ranks 0,
 *   1, 3 must get ccomRemoteError naming rank 2 within 2 s, see {2} from
 *   ccomCommGetFailedRanks, shrink with CCOM_SHRINK_ABORT and pass the
 *   collective matrix on the 3-rank communicator; then the new rank 1 is
 *   killed the same way and the last two shrink to 2 and check an
 *   AllReduce.  Finally the open fds and mapped shm segments must be what one
 *   live communicator of those ranks holds (measured with a sibling made by
 *   ccomCommSplit), and what the process had before init once it is gone.
 *
 * The runner forks the ranks first (each enters its simulated host), then
 * rank 0 makes the unique id and hands it over pipes.
 */
#ifndef CCOM_SHRINK_UTIL_H
#define CCOM_SHRINK_UTIL_H

#include <signal.h>

#include "coll_matrix.h"
#include "net_util.h"

#define SH_BIG (16u << 20)	/* floats: 64 MiB */
/* How soon survivors must see the death; the kdev test in the emulated VM allows more. */
static double sh_detect_max_s = 2.0;
/* Simulated hosts by CCOM_HOSTID alone, in this namespace (shrink_ib: soft-RoCE is here). */
static int sh_hostid_only;

/*
 * Shared-memory segments this process maps now: distinct inodes of
 * /dev/shm files and memfds in /proc/self/maps (the system-wide /dev/shm
 * listing would count other jobs' segments too).
 */
static int sh_count_dev_shm(void)
{
	unsigned long inodes[256], ino;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, i;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%*s %*s %*s %*s %lu %255s", &ino, path) < 2 ||
		    (strncmp(path, "/dev/shm/", 9) && strncmp(path, "/memfd:", 7)))
			continue;
		for (i = 0; i < n && inodes[i] != ino; i++)
			;
		if (i == n && n < 256)
			inodes[n++] = ino;
	}
	fclose(f);
	return n;
}

/*
 * Kill rank @victim of @comm in the middle of a 64 MiB AllReduce; the
 * survivors check the error, agree on the failed ranks and shrink.
 * Returns the new communicator in *@out (the old one destroyed), or exits.
 */
static int sh_kill_and_shrink(ccomComm_t comm, int rank, int n, int victim, float *buf,
			      ccomComm_t *out)
{
	ccomResult_t res;
	ccomComm_t next = NULL;
	int failed[8], nf = 8, cnt = -1, newrank = -1;
	char want[32];
	double t0, dt;

	T_CCOM(ccomAllReduce(buf, buf, 1024, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CCOM(ccomAllReduce(buf, buf, SH_BIG, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	if (rank == victim) {
		usleep(20000);
		raise(SIGKILL);
	}
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank %d/%d: AllReduce with rank %d killed returned %s after %.3f s: %s\n", rank, n,
	       victim, ccomGetErrorString(res), dt, ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank %d: got %s, want ccomRemoteError", rank,
		ccomGetErrorString(res));
	snprintf(want, sizeof(want), "rank %d", victim);
	T_CHECK(strstr(ccomGetLastError(comm), want), "rank %d: the error does not name %s: %s", rank,
		want, ccomGetLastError(comm));
	T_CHECK(dt < sh_detect_max_s, "rank %d: the failure took %.2f s to surface (limit %.1f s)",
		rank, dt, sh_detect_max_s);
	T_CCOM(ccomCommGetFailedRanks(comm, failed, &nf), ccomSuccess);
	T_CHECK(nf == 1 && failed[0] == victim,
		"rank %d: ccomCommGetFailedRanks gave %d rank(s) (first %d), want just rank %d",
		rank, nf, nf > 0 ? failed[0] : -1, victim);
	t0 = t_now();
	res = ccomCommShrink(comm, failed, nf, &next, NULL, CCOM_SHRINK_ABORT);
	T_CHECK(res == ccomSuccess, "rank %d: ccomCommShrink: %s: %s", rank,
		ccomGetErrorString(res), ccomGetLastError(NULL));
	printf("rank %d: shrink to %d ranks took %.3f s\n", rank, n - 1, t_now() - t0);
	T_CCOM(ccomCommCount(next, &cnt), ccomSuccess);
	T_CCOM(ccomCommUserRank(next, &newrank), ccomSuccess);
	T_CHECK(cnt == n - 1 && newrank == (rank < victim ? rank : rank - 1),
		"rank %d: the shrunk communicator has rank %d of %d, want %d of %d", rank, newrank,
		cnt, rank < victim ? rank : rank - 1, n - 1);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	*out = next;
	return T_PASS;
}

/* The scenario, on one rank of 4 whose unique id is @id; @fd0/@shm0: counts before any libccom call. */
static int sh_scenario(int rank, ccomUniqueId id, int fd0, int shm0)
{
	size_t bufsz = 64 * 1024 * 8 * 2;
	int fd1, shm1, fd2, shm2, r3, r2;
	ccomComm_t comm, c3, c2, sib;
	char *sb, *rb;
	float *buf;
	double t0;

	setenv("CCOM_OP_TIMEOUT", "60", 1);
	T_CCOM(ccomCommInitRank(&comm, 4, id, rank), ccomSuccess);
	buf = calloc(SH_BIG, sizeof(float));
	sb = malloc(bufsz);
	rb = malloc(bufsz);
	T_CHECK(buf && sb && rb, "out of memory");
	if (sh_kill_and_shrink(comm, rank, 4, 2, buf, &c3))
		return T_FAIL;
	r3 = rank < 2 ? rank : rank - 1;
	t0 = t_now();
	if (ct_matrix_small(c3, r3, 3, sb, rb, bufsz))
		return T_FAIL;
	printf("rank %d (new rank %d of 3): collective matrix passed in %.1f s\n", rank, r3,
	       t_now() - t0);
	/* Kill the new rank 1 (old rank 1) and shrink again. */
	if (sh_kill_and_shrink(c3, r3, 3, 1, buf, &c2))
		return T_FAIL;
	r2 = r3 < 1 ? r3 : r3 - 1;
	if (ct_allreduce_ok(c2, r2, 2, buf, 1u << 20))
		return T_FAIL;
	/* What one live 2-rank communicator holds: a sibling made by split. */
	fd1 = t_count_fds();
	shm1 = sh_count_dev_shm();
	T_CCOM(ccomCommSplit(c2, 0, r2, &sib, NULL), ccomSuccess);
	if (ct_allreduce_ok(sib, r2, 2, buf, 1024))
		return T_FAIL;
	fd2 = t_count_fds();
	shm2 = sh_count_dev_shm();
	T_CCOM(ccomCommDestroy(sib), ccomSuccess);
	printf("rank %d: fds before init %d, with the shrunk comm %d, with a sibling %d; shm segments %d, %d, %d\n",
	       rank, fd0, fd1, fd2, shm0, shm1, shm2);
	/* <=: the leader's fresh root thread may not have closed its socket yet. */
	T_CHECK(fd1 - fd0 <= fd2 - fd1,
		"rank %d: the shrunk comm holds %d fds, a fresh comm of its ranks %d: the dead ranks' or old comms' fds leaked",
		rank, fd1 - fd0, fd2 - fd1);
	T_CHECK(shm1 - shm0 == shm2 - shm1,
		"rank %d: %d shm segments mapped for the shrunk comm, %d for a fresh one", rank,
		shm1 - shm0, shm2 - shm1);
	T_CCOM(ccomCommFinalize(c2), ccomSuccess);
	T_CCOM(ccomCommDestroy(c2), ccomSuccess);
	for (t0 = t_now(); t_count_fds() != fd0 && t_now() - t0 < 1.0;)
		usleep(10000);	/* a root thread that answered its last rank is on its way out */
	T_CHECK(t_count_fds() == fd0, "rank %d: %d fds after destroying everything, %d before init",
		rank, t_count_fds(), fd0);
	T_CHECK(sh_count_dev_shm() == shm0,
		"rank %d: %d shm segments mapped after destroying everything, %d before init", rank,
		sh_count_dev_shm(), shm0);
	free(buf);
	free(sb);
	free(rb);
	return T_PASS;
}

/* Rank @rank: enter host @host (-1: stay), get the id from rank 0 over @pipes, run the scenario. */
static int sh_rank_main(int rank, int host, int pipes[][2])
{
	ccomUniqueId id;
	int r, fd0, shm0;

	if (host >= 0 && sh_hostid_only) {
		t_set_host("shhost", host);
	} else if (host >= 0 && nett_enter_host(host)) {
		return 2;
	}
	/* Keep only what this rank uses: rank 0 the write ends to 1-3, the others their read end. */
	for (r = 0; r < 4; r++) {
		if (r != rank || r == 0)
			close(pipes[r][0]);
		if (rank != 0 || r == 0)
			close(pipes[r][1]);
	}
	/* Before rank 0's id (its root thread's socket goes away on its own later), less the pipes. */
	fd0 = t_count_fds() - (rank == 0 ? 3 : 1);
	shm0 = sh_count_dev_shm();
	if (rank == 0) {
		if (ccomGetUniqueId(&id) != ccomSuccess) {
			fprintf(stderr, "rank 0: ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
			return 2;
		}
		for (r = 1; r < 4; r++)
			if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
				return 2;
	} else if (read(pipes[rank][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		fprintf(stderr, "rank %d: rank 0 did not send the unique id\n", rank);
		return 2;
	}
	for (r = 1; r < 4; r++) {
		if (r == rank)
			close(pipes[r][0]);
		if (rank == 0)
			close(pipes[r][1]);
	}
	return sh_scenario(rank, id, fd0, shm0);
}

/*
 * Run the scenario on 4 forked ranks, rank r on simulated host host_of[r]
 * (NULL: this namespace).  Ranks 2 and 1 must die of SIGKILL, 0 and 3 pass.
 */
static int sh_run(const int *host_of, int timeout_s)
{
	int pipes[4][2], status, r, bad = 0;
	double end = t_now() + timeout_s;
	pid_t pids[4];

	fflush(NULL);
	for (r = 0; r < 4; r++)
		if (pipe(pipes[r]))
			return T_FAIL;
	for (r = 0; r < 4; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			int code = sh_rank_main(r, host_of ? host_of[r] : -1, pipes);

			fflush(NULL);
			_exit(code);
		}
	}
	for (r = 0; r < 4; r++) {
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	for (r = 0; r < 4; r++) {
		int want = (r == 1 || r == 2) ? 128 + SIGKILL : 0, got;

		while (waitpid(pids[r], &status, WNOHANG) == 0) {
			if (t_now() > end) {
				fprintf(stderr, "rank %d still running after %d s: killed\n", r,
					timeout_s);
				kill(pids[r], SIGKILL);
				waitpid(pids[r], &status, 0);
				status = -1;
				break;
			}
			usleep(5000);
		}
		got = status == -1 ? 124 : WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
		if (got != want) {
			fprintf(stderr, "FAIL: rank %d exited with %d, want %d\n", r, got, want);
			bad = 1;
		}
	}
	return bad ? T_FAIL : T_PASS;
}

#endif
