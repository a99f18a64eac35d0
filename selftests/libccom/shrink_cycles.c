// SPDX-License-Identifier: MIT
/*
 * Description: shrink cycles with flat fds and RSS.  Two long-lived
 * survivor processes and, per cycle, a fresh victim process: a new 3-rank
 * communicator, the victim SIGKILLs itself right after init, the
 * survivors' AllReduce fails with ccomRemoteError, ccomCommGetFailedRanks
 * gives {2}, ccomCommShrink(CCOM_SHRINK_ABORT) makes a 2-rank comm that
 * passes an AllReduce, both are destroyed.  After a warm-up of 10 cycles
 * the survivors' fd count must not change and their RSS may grow by at
 * most 4 MiB.  make check runs 200 cycles (13 ms each on the 2-core build
 * machine at load 23, 97 ms at load 33 with VMs running: 3-20 s); make
 * check-shrink-cycles runs 1000 (CCOM_SHRINK_CYCLES sets the count).
 * Under ASan/UBSan 50 cycles (280 ms each) and no RSS bound (the
 * quarantine keeps freed memory resident; LeakSanitizer checks at exit).
 */
#include <signal.h>

#include "test_util.h"

#define WARM 10
#define RSS_SLACK_KB 4096

static int to_b[2], to_parent[2];

static int fds_settled(int want)
{
	double t0 = t_now();
	int n;

	/* The roots of the last cycle (unique id, shrink) close their sockets on their own. */
	while ((n = t_count_fds()) != want && t_now() - t0 < 1.0)
		usleep(5000);
	return n;
}

static int survivor(int rank, int cycles)
{
	int fd_warm = -1, c, failed[3], nf, fd, r;
	long rss_warm = 0, rss = 0;
	ccomComm_t comm, small;
	ccomUniqueId id;
	ccomResult_t res;
	float v[256];
	double t0 = t_now();

	for (c = 0; c < cycles; c++) {
		if (c == WARM) {
			fd_warm = fds_settled(-1);
			rss_warm = t_rss_kb();
		} else if (c > WARM) {
			fd = fds_settled(fd_warm);
			T_CHECK(fd == fd_warm, "rank %d: cycle %d: %d fds, %d after the warm-up", rank, c,
				fd, fd_warm);
		}
		if (rank == 0) {
			T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
			T_CHECK(write(to_b[1], &id, sizeof(id)) == sizeof(id) &&
				write(to_parent[1], &id, sizeof(id)) == sizeof(id), "pipe write");
		} else {
			T_CHECK(read(to_b[0], &id, sizeof(id)) == sizeof(id), "pipe read");
		}
		T_CCOM(ccomCommInitRank(&comm, 3, id, rank), ccomSuccess);
		res = ccomAllReduce(v, v, 256, ccomFloat32, ccomSum, comm, NULL);
		if (res == ccomSuccess)
			res = ccomCommSynchronize(comm);
		T_CHECK(res == ccomRemoteError, "rank %d: cycle %d: AllReduce with rank 2 dead: %s",
			rank, c, ccomGetErrorString(res));
		nf = 3;
		T_CCOM(ccomCommGetFailedRanks(comm, failed, &nf), ccomSuccess);
		T_CHECK(nf == 1 && failed[0] == 2, "rank %d: cycle %d: %d failed ranks", rank, c, nf);
		T_CCOM(ccomCommShrink(comm, failed, nf, &small, NULL, CCOM_SHRINK_ABORT), ccomSuccess);
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		for (r = 0; r < 256; r++)
			v[r] = (float)(rank + 1);
		T_CCOM(ccomAllReduce(v, v, 256, ccomFloat32, ccomSum, small, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(small), ccomSuccess);
		T_CHECK(v[0] == 3 && v[255] == 3, "rank %d: cycle %d: AllReduce on 2 ranks gave %g",
			rank, c, v[0]);
		T_CCOM(ccomCommDestroy(small), ccomSuccess);
	}
	rss = t_rss_kb();
	printf("rank %d: %d cycles in %.1f s (%.1f ms each); fds %d; RSS %ld KiB after %d cycles, %ld KiB at the end\n",
	       rank, cycles, t_now() - t0, (t_now() - t0) * 1000 / cycles, fd_warm, rss_warm, WARM,
	       rss);
	/* ASan's quarantine keeps freed memory resident: there LeakSanitizer checks at exit instead. */
	T_CHECK(cycles <= WARM || t_sanitizer() || rss - rss_warm <= RSS_SLACK_KB,
		"rank %d: RSS grew by %ld KiB over %d cycles", rank, rss - rss_warm, cycles - WARM);
	return T_PASS;
}

int main(void)
{
	const char *env = getenv("CCOM_SHRINK_CYCLES");
	int cycles = env ? atoi(env) : t_sanitizer() ? 50 : 200, r, st, bad = 0, n = 0;
	pid_t pid[2], v;
	ccomUniqueId id;

	if (cycles < 1)
		cycles = 1;
	setenv("CCOM_OP_TIMEOUT", "30", 1);
	if (pipe(to_b) || pipe(to_parent))
		return T_FAIL;
	fflush(NULL);
	for (r = 0; r < 2; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			int code = survivor(r, cycles);

			fflush(NULL);
			_exit(code);
		}
	}
	close(to_parent[1]);
	/* Per cycle: a fresh victim with rank 0's new id; it dies right after init. */
	while (read(to_parent[0], &id, sizeof(id)) == (ssize_t)sizeof(id)) {
		fflush(NULL);
		v = fork();
		if (v == 0) {
			ccomComm_t comm;

			if (ccomCommInitRank(&comm, 3, id, 2) != ccomSuccess)
				_exit(2);
			raise(SIGKILL);
		}
		if (waitpid(v, &st, 0) != v || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
			fprintf(stderr, "FAIL: victim of cycle %d ended with status %#x\n", n, st);
			bad = 1;
		}
		n++;
	}
	for (r = 0; r < 2; r++) {
		if (waitpid(pid[r], &st, 0) != pid[r] || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "FAIL: survivor %d ended with status %#x\n", r, st);
			bad = 1;
		}
	}
	if (bad || n != cycles)
		return T_FAIL;
	printf("PASS: %d shrink cycles, fds flat, RSS within %d KiB\n", cycles, RSS_SLACK_KB);
	return T_PASS;
}
