// SPDX-License-Identifier: MIT
/*
 * boot_bench - bootstrap time of large jobs as simulated hosts, not a test
 * (not built by make; see the build line below).
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Ilibccom/include -Ilibccom -Iselftests/libccom \
 *       -o build/boot_bench selftests/libccom/bench/boot_bench.c build/lib/libccom.a -pthread -lm
 *   build/boot_bench [-r REPS] [-l LOCAL] [-i NIDS] MODE N...
 *
 * MODE is flat (one root, CCOM_BOOTSTRAP_HIER=0), multi (NIDS roots,
 * ccomCommInitRankScalable's bootstrap, default 4) or hier
 * (CCOM_BOOTSTRAP_HIER=1).  A job of N ranks runs as N / LOCAL processes
 * (default LOCAL 16), each a simulated host (its own CCOM_HOSTID) whose
 * LOCAL ranks are threads calling ccom_bootstrap_init() at the same
 * instant; the roots are threads of this process.  Per job: the time from
 * that instant until the last rank's ccom_bootstrap_init() returned; then
 * every rank runs a bootstrap barrier before it closes.  Prints the median
 * (and min, max) over REPS jobs (default 11) in milliseconds.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bootstrap/bootstrap.h"
#include "bench/hosts.h"
#include "test_util.h"
#include "util/misc.h"

#define MAX_IDS 64

struct start {
	int64_t t0;
	int nids;
	ccomUniqueId ids[MAX_IDS];
};

static int64_t *done_us;	/* per rank, shared */
static int *fails;

struct thr {
	const struct start *s;
	int rank, nranks;
	pthread_barrier_t *bar;
};

static void *rank_thread(void *arg)
{
	struct thr *t = arg;
	static atomic_int no_abort;
	struct ccom_bootstrap_args a = {
		.id = &t->s->ids[0],
		.ids = t->s->ids,
		.nids = t->s->nids,
		.rank = t->rank,
		.nranks = t->nranks,
		.timeout_ms = 60000,
		.abort = &no_abort,
	};
	struct ccom_bootstrap *bs = NULL;
	int64_t now;

	pthread_barrier_wait(t->bar);
	while ((now = ccom_now_us()) < t->s->t0)
		usleep((t->s->t0 - now) > 2000 ? 1000 : 50);
	a.start_us = t->s->t0;
	if (ccom_bootstrap_init(&a, &bs)) {
		fprintf(stderr, "rank %d: %s\n", t->rank, ccomGetLastError(NULL));
		__atomic_add_fetch(fails, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	done_us[t->rank] = ccom_now_us();
	if (ccom_bootstrap_barrier(bs))
		__atomic_add_fetch(fails, 1, __ATOMIC_SEQ_CST);
	ccom_bootstrap_close(bs);
	return NULL;
}

static int host_main(int host, int local, int nranks, int rfd)
{
	struct start s;
	pthread_t th[256];
	struct thr t[256];
	pthread_barrier_t bar;
	char hid[32];
	int i;

	snprintf(hid, sizeof(hid), "benchhost%d", host);
	setenv("CCOM_HOSTID", hid, 1);
	if (read(rfd, &s, sizeof(s)) != (ssize_t)sizeof(s))
		return 1;
	pthread_barrier_init(&bar, NULL, local);
	for (i = 0; i < local; i++) {
		t[i] = (struct thr){ .s = &s, .rank = host * local + i, .nranks = nranks, .bar = &bar };
		pthread_create(&th[i], NULL, rank_thread, &t[i]);
	}
	for (i = 0; i < local; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One job: its time in ms, or -1. */
static double job(int nranks, int local, int nids)
{
	int hosts = nranks / local, bad = 0, wfd[4096], i;
	pid_t pid[4096];
	struct start s;
	int64_t last = 0;

	memset(&s, 0, sizeof(s));
	*fails = 0;
	for (i = 0; i < nranks; i++)
		done_us[i] = 0;
	fflush(NULL);
	if (bench_hosts_fork(hosts, local, nranks, host_main, pid, wfd))
		return -1;
	s.nids = nids;
	for (i = 0; i < nids; i++)
		if (ccomGetUniqueId(&s.ids[i]) != ccomSuccess)
			return -1;
	/* Everyone starts together, once every host process is up. */
	s.t0 = ccom_now_us() + 200000 + hosts * 2000;
	bad = !bench_hosts_run(hosts, wfd, pid, &s, sizeof(s), false);
	for (i = 0; i < nranks; i++) {
		if (!done_us[i])
			bad = 1;
		if (done_us[i] > last)
			last = done_us[i];
	}
	if (bad || *fails)
		return -1;
	return (last - s.t0) / 1000.0;
}

int main(int argc, char **argv)
{
	int reps = 11, local = 16, nids = 4, opt, a;
	const char *mode;

	while ((opt = getopt(argc, argv, "r:l:i:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'l')
			local = atoi(optarg);
		else if (opt == 'i')
			nids = atoi(optarg);
	}
	if (optind >= argc - 1) {
		fprintf(stderr, "usage: boot_bench [-r REPS] [-l LOCAL] [-i NIDS] flat|multi|hier N...\n");
		return 2;
	}
	mode = argv[optind++];
	setenv("CCOM_BOOTSTRAP_HIER", !strcmp(mode, "hier") ? "1" : "0", 1);
	setenv("CCOM_DEBUG", "WARN", 1);
	if (strcmp(mode, "multi"))
		nids = 1;
	done_us = mmap(NULL, 65536 * sizeof(*done_us), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fails = mmap(NULL, sizeof(*fails), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (a = optind; a < argc; a++) {
		int n = atoi(argv[a]), r, ok = 0;
		double t[101];

		for (r = 0; r < reps && r < 101; r++) {
			double ms = job(n, local, nids);

			if (ms >= 0)
				t[ok++] = ms;
		}
		qsort(t, ok, sizeof(t[0]), cmp_d);
		printf("%-5s %5d ranks (%d hosts x %d, %d id(s)): median %.1f ms (min %.1f, max %.1f) over %d of %d jobs\n",
		       mode, n, n / local, local, nids, ok ? t[ok / 2] : -1.0, ok ? t[0] : -1.0,
		       ok ? t[ok - 1] : -1.0, ok, reps);
		fflush(stdout);
	}
	return 0;
}
