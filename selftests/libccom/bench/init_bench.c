// SPDX-License-Identifier: MIT
/*
 * init_bench - communicator init time per stage, not a test (not built by
 * make; see the build line below).
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Ilibccom/include -Ilibccom -Iselftests/libccom \
 *       -o build/init_bench selftests/libccom/bench/init_bench.c build/lib/libccom.a -pthread -lm
 *   build/init_bench [-r REPS] [-t] N...      (-t: ranks are threads, ccomCommInitAll)
 *
 * For each N, runs REPS (default 21) jobs of N local ranks (processes by
 * default, forked before the root thread exists) and prints, per stage, the
 * median over jobs of the slowest rank's time in microseconds, plus the
 * median total (API call to ready) of the slowest rank.  When a stage after
 * peerinfo fails (e.g. the data path refuses that many local ranks), the
 * earlier stages are still reported and the line is marked.
 */
#include <sys/mman.h>

#include "core/comm.h"
#include "test_util.h"

struct slot {
	int64_t t[CCOM_INIT_NSTAGES];
	int64_t total;
	int rc;
};

static struct slot *slots;

static int rank_main(int rank, int nranks, void *arg)
{
	ccomUniqueId *id = arg;
	ccomComm_t comm;
	ccomResult_t res = ccomCommInitRank(&comm, nranks, *id, rank);

	slots[rank].rc = res;
	/* Stage times are kept also when a later stage (e.g. connect) failed. */
	if (comm)
		memcpy(slots[rank].t, comm->timings_us, sizeof(slots[rank].t));
	if (res == ccomSuccess)
		slots[rank].total = comm->init_total_us;
	ccomCommDestroy(comm);
	return 0;
}

static int run_threads(int n)
{
	ccomComm_t *c = calloc(n, sizeof(*c));
	int r;

	if (!c || ccomCommInitAll(c, n, NULL) != ccomSuccess) {
		fprintf(stderr, "InitAll(%d): %s\n", n, ccomGetLastError(NULL));
		free(c);
		return -1;
	}
	for (r = 0; r < n; r++) {
		memcpy(slots[r].t, c[r]->timings_us, sizeof(slots[r].t));
		slots[r].total = c[r]->init_total_us;
		slots[r].rc = 0;
	}
	for (r = 0; r < n; r++)
		ccomCommDestroy(c[r]);
	free(c);
	return 0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int reps = 21, threads = 0, a = 1;

	if (a < argc && !strcmp(argv[a], "-r")) {
		reps = atoi(argv[a + 1]);
		a += 2;
	}
	if (a < argc && !strcmp(argv[a], "-t")) {
		threads = 1;
		a++;
	}
	printf("%-6s %-5s %9s", "ranks", "mode", "total");
	for (int s = CCOM_STAGE_VALIDATE; s < CCOM_STAGE_READY; s++)
		printf(" %9s", ccom_init_stage_name(s));
	printf("   (median of %d jobs, slowest rank, microseconds)\n", reps);
	for (; a < argc; a++) {
		int n = atoi(argv[a]);
		int64_t *tot = calloc(reps, sizeof(int64_t));
		int64_t (*st)[CCOM_INIT_NSTAGES] = calloc(reps, sizeof(*st));
		int rep, fails = 0, incomplete = 0;

		slots = mmap(NULL, n * sizeof(*slots), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		for (rep = 0; rep < reps; rep++) {
			ccomUniqueId id;
			int r, bad;

			memset(slots, 0, n * sizeof(*slots));
			if (threads)
				bad = run_threads(n);
			else
				bad = t_fork_ranks_id(n, rank_main, &id, NULL, 300, &id);
			if (bad) {
				fails++;
				continue;
			}
			for (r = 0; r < n; r++) {
				incomplete += slots[r].rc != 0;
				if (slots[r].total > tot[rep])
					tot[rep] = slots[r].total;
				for (int s = 0; s < CCOM_INIT_NSTAGES; s++)
					if (slots[r].t[s] > st[rep][s])
						st[rep][s] = slots[r].t[s];
			}
		}
		qsort(tot, reps, sizeof(int64_t), cmp64);
		printf("%-6d %-5s %9lld", n, threads ? "thr" : "proc", (long long)tot[reps / 2]);
		for (int s = CCOM_STAGE_VALIDATE; s < CCOM_STAGE_READY; s++) {
			int64_t v[1024];

			for (rep = 0; rep < reps && rep < 1024; rep++)
				v[rep] = st[rep][s];
			qsort(v, rep, sizeof(int64_t), cmp64);
			printf(" %9lld", (long long)v[rep / 2]);
		}
		printf("%s%s\n", fails ? "  (some jobs failed)" : "",
		       incomplete ? "  (init failed after peerinfo on some ranks)" : "");
		fflush(stdout);
		munmap(slots, n * sizeof(*slots));
		free(tot);
		free(st);
	}
	return 0;
}
