// SPDX-License-Identifier: MIT
/*
 * init_hosts_bench - whole-communicator init time of large jobs as
 * simulated hosts, not a test (not part of make check).
 *
 *   make build/bench/init_hosts_bench
 *   build/bench/init_hosts_bench [-r REPS] [-l LOCAL] [-i NIDS] [-m MODES] [-c CONNECT] N...
 *
 * MODES is a comma list of flat (ccomCommInitRank, one root,
 * CCOM_BOOTSTRAP_HIER=0), multi (ccomCommInitRankScalable with NIDS roots,
 * default 4, CCOM_BOOTSTRAP_HIER=0) and hier (ccomCommInitRank,
 * CCOM_BOOTSTRAP_HIER=1); default all three.  CONNECT is a comma list of
 * CCOM_NET_CONNECT values (eager, lazy, auto) run interleaved as well;
 * default: the environment's (or the library's default).  The bench raises
 * its RLIMIT_NOFILE soft limit to the hard limit (a full TCP mesh needs
 * (CCOM_NSOCKS + 1) descriptors per remote peer per rank).  A job of N ranks runs as
 * N / LOCAL processes (default LOCAL 16), each a simulated host (its own
 * CCOM_HOSTID) whose LOCAL ranks are threads calling the init function at
 * one instant; the roots are threads of this process.  Per job: the time
 * from that instant until the last rank's init returned a usable
 * communicator (bootstrap, peer info, topology, alignment, transport
 * connect, final barrier); then every rank runs a 1-element int32 AllReduce
 * of its rank, checks the sum and destroys its communicator.  The modes run
 * interleaved (job r of every mode before job r + 1).  Prints per N and
 * mode the median (min, max) over REPS jobs (default 11) in milliseconds,
 * the median over jobs of the slowest rank's time in each init stage, and
 * the median of the slowest rank's first AllReduce.
 *
 * Built with -DINIT_BENCH_SPLIT and the linker wraps below, it also splits
 * the connect stage (the slowest rank per part, median over jobs):
 *
 *   gcc -std=gnu11 -O2 -DINIT_BENCH_SPLIT -D_GNU_SOURCE -Ilibccom/include -Ilibccom \
 *       -Iselftests/libccom -o build/bench/init_hosts_bench_split \
 *       selftests/libccom/bench/init_hosts_bench.c build/lib/libccom.a -pthread -lm \
 *       -Wl,--wrap=ccom_proxy_create,--wrap=ccom_shm_init,--wrap=ccom_channels_start \
 *       -Wl,--wrap=ccom_transport_net_agree,--wrap=ccom_bootstrap_send \
 *       -Wl,--wrap=ccom_bootstrap_recv,--wrap=ccom_kdev_comm_init \
 *       -Wl,--wrap=ccom_tune_init,--wrap=ccom_proxy_start
 */
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "init/init.h"
#include "tune/tune.h"
#include "bench/hosts.h"
#include "test_util.h"
#include "util/misc.h"

#define MAX_IDS 64
#define MAX_REPS 101
#define MAX_HOSTS 1024
#define MAX_LOCAL 256

enum mode { FLAT, MULTI, HIER, NMODES };
static const char *const mode_name[NMODES] = { "flat", "multi", "hier" };

struct start {
	int64_t t0;
	int nids;
	enum mode mode;
	ccomUniqueId ids[MAX_IDS];
};

/* Per rank, in memory shared with the host processes. */
struct slot {
	int64_t done_us;		/* init returned (absolute) */
	int64_t allreduce_us;		/* first AllReduce, call to synchronized */
	int64_t stage_us[CCOM_INIT_NSTAGES];
	int ok;				/* init and AllReduce correct */
	int64_t part_us[8];		/* INIT_BENCH_SPLIT: the connect stage's parts */
};

static struct slot *slots;

static const char *const part_name[8] = {
	"proxy-create", "net-agree", "shm-init", "channels", "net-cards(bootstrap p2p)",
	"kdev", "tune", "proxy-start",
};

#ifdef INIT_BENCH_SPLIT
/*
 * The connect stage's external calls, timed per rank thread.  What the
 * stage spends outside them is the ring setup, the TCP full mesh
 * (connect_all) and the shm FIFOs; net-cards is the bootstrap p2p time
 * spent inside the stage (net_socket's address exchange).
 */
static __thread int64_t *part_acc;
static __thread int in_connect;

#define WRAP(ret, name, idx, params, args)				\
	ret __real_##name params;					\
	ret __wrap_##name params;					\
	ret __wrap_##name params					\
	{								\
		int64_t t0 = ccom_now_us();				\
		ret r = __real_##name args;				\
									\
		if (part_acc && in_connect)				\
			part_acc[idx] += ccom_now_us() - t0;		\
		return r;						\
	}

struct ccom_shm;
struct ccom_channels;
struct ccom_op;
typedef int (*bench_exec_fn)(struct ccomComm *, struct ccom_op *);

int __real_ccom_proxy_create(struct ccomComm *comm);
int __wrap_ccom_proxy_create(struct ccomComm *comm);
int __wrap_ccom_proxy_create(struct ccomComm *comm)
{
	int64_t t0 = ccom_now_us();
	int r;

	in_connect = 1;
	r = __real_ccom_proxy_create(comm);
	if (part_acc)
		part_acc[0] += ccom_now_us() - t0;
	return r;
}

WRAP(int, ccom_transport_net_agree, 1, (struct ccomComm *comm), (comm))
WRAP(int, ccom_shm_init, 2, (struct ccomComm *comm, struct ccom_shm **out), (comm, out))
WRAP(int, ccom_channels_start, 3, (struct ccomComm *comm, struct ccom_channels **out),
     (comm, out))
WRAP(int, ccom_bootstrap_send, 4,
     (struct ccom_bootstrap *bs, int peer, int tag, const void *buf, size_t len),
     (bs, peer, tag, buf, len))
WRAP(int, ccom_bootstrap_recv, 4,
     (struct ccom_bootstrap *bs, int peer, int tag, void *buf, size_t len),
     (bs, peer, tag, buf, len))
WRAP(int, ccom_kdev_comm_init, 5, (struct ccomComm *comm), (comm))
WRAP(int, ccom_tune_init, 6, (struct ccomComm *comm, const struct ccom_tune_paths *paths),
     (comm, paths))

int __real_ccom_proxy_start(struct ccomComm *comm, bench_exec_fn exec);
int __wrap_ccom_proxy_start(struct ccomComm *comm, bench_exec_fn exec);
int __wrap_ccom_proxy_start(struct ccomComm *comm, bench_exec_fn exec)
{
	int64_t t0 = ccom_now_us();
	int r = __real_ccom_proxy_start(comm, exec);

	if (part_acc)
		part_acc[7] += ccom_now_us() - t0;
	in_connect = 0;
	return r;
}
#define SPLIT 1
#else
#define SPLIT 0
#endif

struct thr {
	const struct start *s;
	int rank, nranks;
	pthread_barrier_t *bar;
};

static void *rank_thread(void *arg)
{
	struct thr *t = arg;
	struct slot *sl = &slots[t->rank];
	ccomComm_t comm = NULL;
	ccomResult_t res;
	int32_t v = t->rank, sum = -1;
	int64_t now;

#ifdef INIT_BENCH_SPLIT
	part_acc = sl->part_us;
#endif
	pthread_barrier_wait(t->bar);
	while ((now = ccom_now_us()) < t->s->t0)
		usleep((t->s->t0 - now) > 2000 ? 1000 : 50);
	if (t->s->mode == MULTI)
		res = ccomCommInitRankScalable(&comm, t->nranks, t->rank, t->s->nids,
					       (ccomUniqueId *)t->s->ids, NULL);
	else
		res = ccomCommInitRank(&comm, t->nranks, t->s->ids[0], t->rank);
	sl->done_us = ccom_now_us();
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: init (%s): %s: %s\n", t->rank, mode_name[t->s->mode],
			ccomGetErrorString(res), ccomGetLastError(NULL));
		if (comm)
			ccomCommDestroy(comm);
		return NULL;
	}
	memcpy(sl->stage_us, comm->timings_us, sizeof(sl->stage_us));
	now = ccom_now_us();
	res = ccomAllReduce(&v, &sum, 1, ccomInt32, ccomSum, comm, NULL);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	sl->allreduce_us = ccom_now_us() - now;
	if (res != ccomSuccess || sum != t->nranks * (t->nranks - 1) / 2)
		fprintf(stderr, "rank %d: allreduce: %s, sum %d\n", t->rank,
			ccomGetErrorString(res), sum);
	else
		sl->ok = 1;
	ccomCommDestroy(comm);
	return NULL;
}

static int host_main(int host, int local, int nranks, int rfd)
{
	static struct start s;
	static pthread_t th[MAX_LOCAL];
	static struct thr t[MAX_LOCAL];
	pthread_barrier_t bar;
	char hid[32];
	int i;

	alarm(120);	/* a hung job must not hold the machine */
	snprintf(hid, sizeof(hid), "benchhost%d", host);
	setenv("CCOM_HOSTID", hid, 1);
	if (read(rfd, &s, sizeof(s)) != (ssize_t)sizeof(s))
		return 1;
	pthread_barrier_init(&bar, NULL, local);
	for (i = 0; i < local; i++) {
		t[i] = (struct thr){ .s = &s, .rank = host * local + i, .nranks = nranks, .bar = &bar };
		if (pthread_create(&th[i], NULL, rank_thread, &t[i]))
			return 1;
	}
	for (i = 0; i < local; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct result {
	int64_t total_us;
	int64_t stage_us[CCOM_INIT_NSTAGES];	/* slowest rank per stage */
	int64_t allreduce_us;			/* slowest rank */
	int64_t part_us[8];			/* slowest rank per part */
};

/* One job; 0 and *r filled, or -1. */
static int job(int nranks, int local, int nids, enum mode mode, struct result *r)
{
	static int wfd[MAX_HOSTS];
	static pid_t pid[MAX_HOSTS];
	static struct start s;
	int hosts = nranks / local, bad = 0, i, k;

	memset(&s, 0, sizeof(s));
	memset(r, 0, sizeof(*r));
	memset(slots, 0, nranks * sizeof(*slots));
	setenv("CCOM_BOOTSTRAP_HIER", mode == HIER ? "1" : "0", 1);
	fflush(NULL);
	if (bench_hosts_fork(hosts, local, nranks, host_main, pid, wfd))
		return -1;
	s.mode = mode;
	s.nids = mode == MULTI ? nids : 1;
	for (i = 0; i < s.nids; i++)
		if (ccomGetUniqueId(&s.ids[i]) != ccomSuccess)
			bad = 1;
	/* Everyone starts together, once every host process is up. */
	s.t0 = ccom_now_us() + 200000 + hosts * 2000;
	bad = !bench_hosts_run(hosts, wfd, pid, &s, sizeof(s), bad);
	for (i = 0; i < nranks; i++) {
		const struct slot *sl = &slots[i];

		if (!sl->ok)
			bad = 1;
		if (sl->done_us - s.t0 > r->total_us)
			r->total_us = sl->done_us - s.t0;
		if (sl->allreduce_us > r->allreduce_us)
			r->allreduce_us = sl->allreduce_us;
		for (k = 0; k < CCOM_INIT_NSTAGES; k++)
			if (sl->stage_us[k] > r->stage_us[k])
				r->stage_us[k] = sl->stage_us[k];
		for (k = 0; k < 8; k++)
			if (sl->part_us[k] > r->part_us[k])
				r->part_us[k] = sl->part_us[k];
	}
	return bad ? -1 : 0;
}

static int64_t median_of(struct result *res, int n, size_t off)
{
	int64_t v[MAX_REPS];
	int i;

	for (i = 0; i < n; i++)
		v[i] = *(const int64_t *)((const char *)&res[i] + off);
	qsort(v, n, sizeof(v[0]), cmp_i64);
	return v[n / 2];
}

static void report(int n, int local, int nids, enum mode m, const char *conn, struct result *res,
		   int ok, int reps)
{
	int64_t t[MAX_REPS];
	int i, k;

	for (i = 0; i < ok; i++)
		t[i] = res[i].total_us;
	qsort(t, ok, sizeof(t[0]), cmp_i64);
	printf("%-5s %-5s %5d ranks (%d hosts x %d, %d id(s)): median %.1f ms (min %.1f, max %.1f) over %d of %d jobs\n",
	       mode_name[m], conn, n, n / local, local, m == MULTI ? nids : 1,
	       ok ? t[ok / 2] / 1000.0 : -1.0, ok ? t[0] / 1000.0 : -1.0,
	       ok ? t[ok - 1] / 1000.0 : -1.0, ok, reps);
	if (!ok)
		return;
	printf("      slowest rank, median ms:");
	for (k = CCOM_STAGE_VALIDATE; k < CCOM_STAGE_READY; k++)
		printf(" %s %.1f", ccom_init_stage_name(k),
		       median_of(res, ok, offsetof(struct result, stage_us) +
					  k * sizeof(int64_t)) / 1000.0);
	printf("; first allreduce %.1f\n",
	       median_of(res, ok, offsetof(struct result, allreduce_us)) / 1000.0);
	if (!SPLIT)
		return;
	printf("      connect parts, slowest rank, median ms:");
	for (k = 0; k < 8; k++)
		printf(" %s %.1f", part_name[k],
		       median_of(res, ok, offsetof(struct result, part_us) +
					  k * sizeof(int64_t)) / 1000.0);
	printf("\n");
}

#define MAX_CONNECT 3

int main(int argc, char **argv)
{
	static struct result res[NMODES][MAX_CONNECT][MAX_REPS];
	int reps = 11, local = 16, nids = 4, opt, a, m, c, nconn = 0, use[NMODES] = { 1, 1, 1 };
	const char *conn[MAX_CONNECT];
	char *list = NULL, *tok, *save;
	struct rlimit rl;

	while ((opt = getopt(argc, argv, "r:l:i:m:c:")) != -1) {
		if (opt == 'r') {
			reps = atoi(optarg);
		} else if (opt == 'l') {
			local = atoi(optarg);
		} else if (opt == 'i') {
			nids = atoi(optarg);
		} else if (opt == 'm') {
			for (m = 0; m < NMODES; m++)
				use[m] = strstr(optarg, mode_name[m]) != NULL;
		} else if (opt == 'c') {
			list = optarg;
		}
	}
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && nconn < MAX_CONNECT;
	     tok = strtok_r(NULL, ",", &save))
		conn[nconn++] = tok;
	if (!nconn)
		conn[nconn++] = getenv("CCOM_NET_CONNECT") ? getenv("CCOM_NET_CONNECT") : "dflt";
	if (optind >= argc || reps < 1 || reps > MAX_REPS || local < 1 || local > MAX_LOCAL ||
	    nids < 1 || nids > MAX_IDS) {
		fprintf(stderr, "usage: init_hosts_bench [-r REPS<=%d] [-l LOCAL<=%d] [-i NIDS<=%d] [-m flat,multi,hier] [-c eager,lazy,auto] N...\n",
			MAX_REPS, MAX_LOCAL, MAX_IDS);
		return 2;
	}
	/* A bench, not the library: take every descriptor the hard limit allows. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		printf("RLIMIT_NOFILE soft limit %llu\n", (unsigned long long)rl.rlim_cur);
	if (!getenv("CCOM_DEBUG"))
		setenv("CCOM_DEBUG", "WARN", 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "60", 1);
	signal(SIGPIPE, SIG_IGN);
	for (a = optind; a < argc; a++) {
		int n = atoi(argv[a]), r, ok[NMODES][MAX_CONNECT] = { { 0 } };

		if (n < local || n % local || n / local > MAX_HOSTS) {
			fprintf(stderr, "N %d: must be a multiple of LOCAL %d, at most %d hosts\n",
				n, local, MAX_HOSTS);
			return 2;
		}
		slots = mmap(NULL, n * sizeof(*slots), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (slots == MAP_FAILED)
			return 1;
		for (r = 0; r < reps; r++)
			for (m = 0; m < NMODES; m++)
				for (c = 0; c < nconn; c++) {
					if (!use[m])
						continue;
					if (strcmp(conn[c], "dflt"))
						setenv("CCOM_NET_CONNECT", conn[c], 1);
					if (!job(n, local, nids, m, &res[m][c][ok[m][c]]))
						ok[m][c]++;
				}
		for (m = 0; m < NMODES; m++)
			for (c = 0; c < nconn; c++)
				if (use[m])
					report(n, local, nids, m, conn[c], res[m][c], ok[m][c], reps);
		fflush(stdout);
		munmap(slots, n * sizeof(*slots));
	}
	return 0;
}
