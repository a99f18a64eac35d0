// SPDX-License-Identifier: MIT
/*
 * Description: the collective matrix over net_ib (CCOM_NET=ib) between 2
 * simulated hosts x 2 ranks (CCOM_HOSTID; ranks interleaved 0,2 on host A
 * and 1,3 on host B, so shm runs inside a host and RDMA between them):
 * every collective and Send/Recv, in and out of place, for int8/max,
 * float32/sum and float64/prod with 0, 1, 7 and 1023 (odd) elements, and
 * 4 MiB + 12 bytes of float32/sum (per block for AllGather, ReduceScatter,
 * AlltoAll; out of place, AllReduce in place too), each result checked
 * against the reference of coll_util.h and the bytes after it for
 * overruns; then the same with CCOM_ALGO=ring and with every pair on RDMA
 * (CCOM_TRANSPORT=net) up to 256 KiB + 12, and with 2 slots of 4 KiB
 * (CCOM_IB_SLOTS=2, CCOM_IB_SLOT_SIZE=4096, up to 64 KiB + 12) so that
 * credits stall the senders all the time; with 2 QPs per connection
 * (CCOM_IB_QPS_PER_CONN=2) up to 512 KiB + 12 and 4 QPs with 8 KiB slots
 * up to 256 KiB + 12 (the slots striped over the QPs), and on 4 hosts x 1
 * rank up to 256 KiB + 12; and with the buffers registered
 * (ccomCommRegister) for the whole job and CCOM_IB_ZCOPY_MIN out of
 * reach, where each rank must have sent zero-copy from them (up to 256
 * KiB + 12: sends of one 128 KiB slot and more).  Sends of 256 KiB and more go zero-copy (CCOM_IB_ZCOPY_MIN).
 * --run N runs only the Nth of these runs (from 0).  Needs an RDMA device with an ACTIVE port (in
 * the VM: soft-RoCE, selftests/libccom/ib/run-vm); skipped without one.
 *
 * With --auto: CCOM_NET unset must choose net_ib on every rank (INFO log),
 * small counts only.  With --dead: a rank SIGKILLed before an AllReduce is
 * ccomRemoteError on every other rank within 60 s.  With --abort:
 * ccomCommAbort() interrupts a wait on net_ib within 10 s.  With --reuse:
 * zero-copy sends from buffers unmapped and remapped at the same address
 * between operations, new contents each round, results checked.  With
 * --big: a 64 MiB AllReduce, checked.  With --abort-big: ccomCommAbort()
 * while a 256 MiB AllReduce is in flight ends the wait, and the abort
 * itself (which frees the communicator) returns, within 10 s each.  With --hca: a rank whose CCOM_IB_HCA matches nothing fails init
 * on every rank at once, naming it.  With --bench: AllReduce float32 64 KiB..16 MiB on the same 2 x 2 job,
 * once with CCOM_NET=ib and once with CCOM_NET=socket, median of the
 * iterations (see Documentation/libccom/net_ib.rst).
 */
#include <pthread.h>
#include <signal.h>

#include <sys/mman.h>

#include "coll_matrix.h"
#include "fail_util.h"
#include "transport/net_ib.h"

#define NIB_BIG ((4u << 20) + 12)

static int nib_host_of[4] = { 0, 1, 0, 1 };
static int nib_4x1;		/* 4 hosts x 1 rank instead of 2 x 2 */
static size_t nib_big;		/* bytes of the big case, 0: none */

/* The jobs' at_init: this rank's simulated host. */
static void nib_set_host(int rank)
{
	t_set_host("nibhost", nib_4x1 ? rank : nib_host_of[rank]);
}

static int nib_matrix(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz)
{
	static const struct { ccomDataType_t dt; ccomRedOp_t op; } sel[] = {
		{ ccomInt8, ccomMax }, { ccomFloat32, ccomSum }, { ccomFloat64, ccomProd },
	};
	static const size_t elems[] = { 0, 1, 7, 1023 };
	struct ct_case c;
	int k, s, ip, ci;

	for (k = 0; k < K_N; k++)
		for (s = 0; s < 3; s++)
			for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++)
				for (ci = 0; ci < 4; ci++) {
					c = (struct ct_case){ k, ip, (int)(elems[ci] % (size_t)n),
							      sel[s].dt, sel[s].op, elems[ci] };
					if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
						return T_FAIL;
				}
	/* The big size: float32/sum out of place, AllReduce also in place. */
	for (k = 0; nib_big && k < K_N; k++)
		for (ip = 0; ip < (k == K_AR ? 2 : 1); ip++) {
			size_t bytes = ct_blocked(k) ? nib_big / (size_t)n : nib_big;

			c = (struct ct_case){ k, ip, n - 1, ccomFloat32, ccomSum, bytes / 4 };
			if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
				return T_FAIL;
		}
	return T_PASS;
}

static int nib_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	int rc = ct_matrix_rank_sized(rank, n, arg, nib_matrix, (size_t)NIB_BIG * 2 + 8192);

	/*
	 * Registered buffers with CCOM_IB_ZCOPY_MIN out of reach: only the
	 * ccomCommRegister ranges can have gone zero-copy.
	 */
	if (!rc && j->reg) {
		uint64_t zc = ccom_net_ib_zcopy_bytes();

		printf("rank %d: %llu bytes sent zero-copy from registered buffers\n", rank,
		       (unsigned long long)zc);
		T_CHECK(zc > 0, "rank %d: nothing went zero-copy from the registered buffers", rank);
	}
	return rc;
}

/* ---------------------------------------------------------------- --big, --abort-big, --hca */

#define BIG_BYTES (64u << 20)

/* --big: one 64 MiB float32 AllReduce (out of place) on 2 hosts x 2 ranks, checked. */
static int big_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t count = BIG_BYTES / 4, i;
	ccomComm_t comm;
	float *s, *r;
	double t0;
	int k;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	s = malloc(BIG_BYTES);
	r = malloc(BIG_BYTES);
	T_CHECK(s && r, "no memory for 2 x 64 MiB");
	for (i = 0; i < count; i++)
		s[i] = (float)(rank + 1 + (int)(i % 13));
	t0 = t_now();
	T_CCOM(ccomAllReduce(s, r, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++) {
		float want = 0;

		for (k = 0; k < n; k++)
			want += (float)(k + 1 + (int)(i % 13));
		T_CHECK(r[i] == want, "rank %d: element %zu is %g, want %g", rank, i, r[i], want);
	}
	if (rank == 0)
		printf("64 MiB AllReduce on 2 hosts x 2 ranks: %.1f s, checked\n", t_now() - t0);
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	free(s);
	free(r);
	return T_PASS;
}

static int run_big(void)
{
	struct ct_job j = { .at_init = nib_set_host,
			    .env = { "CCOM_NET=ib", "CCOM_OP_TIMEOUT=300" } };
	int rc = ct_run(&j, 4, big_rank, 330);

	printf("%s: 64 MiB AllReduce over net_ib\n", rc ? "FAIL" : "PASS");
	return rc;
}

/*
 * --abort-big: 2 hosts x 1 rank start an in-place 256 MiB AllReduce (minutes
 * on soft-RoCE); each rank aborts its communicator after 300 ms; the
 * synchronize must fail and destroy must return, both within 10 s.
 */
static int abort_big_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t bytes = 256u << 20;
	ccomComm_t comm;
	ccomResult_t res;
	pthread_t t;
	double t0;
	float *b;

	(void)n;
	nib_4x1 = 1;
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	b = malloc(bytes);
	T_CHECK(b, "no memory for 256 MiB");
	memset(b, 0, bytes);
	T_CCOM(ccomAllReduce(b, b, bytes / 4, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CHECK(pthread_create(&t, NULL, ct_aborter, comm) == 0, "pthread_create");
	t0 = t_now();
	res = ccomCommSynchronize(comm);
	printf("rank %d: synchronize of a 256 MiB AllReduce aborted after 300 ms: %s after %.2f s\n",
	       rank, ccomGetErrorString(res), t_now() - t0);
	T_CHECK(res != ccomSuccess, "rank %d: 256 MiB AllReduce completed before the abort", rank);
	T_CHECK(t_now() - t0 < 10, "rank %d: the abort took %.1f s to end the wait", rank,
		t_now() - t0);
	/* ccomCommAbort frees the communicator: its return ends the test, no destroy. */
	t0 = t_now();
	pthread_join(t, NULL);
	printf("rank %d: ccomCommAbort returned %.2f s after the wait ended\n", rank, t_now() - t0);
	T_CHECK(t_now() - t0 < 10, "rank %d: ccomCommAbort took %.1f s more to free the communicator",
		rank, t_now() - t0);
	free(b);
	return T_PASS;
}

static int run_abort_big(void)
{
	struct ct_job j = { .at_init = nib_set_host, .env = { "CCOM_NET=ib" } };
	int rc = ct_run(&j, 2, abort_big_rank, 100);

	printf("%s: abort with 256 MiB in flight on net_ib\n", rc ? "FAIL" : "PASS");
	return rc;
}

/*
 * --hca: 2 hosts x 1 rank, CCOM_NET=ib, rank 1's CCOM_IB_HCA matches no
 * device: init must fail on both ranks within 30 s (init itself takes
 * 2-10 s in the loaded TCG guest; no wait for CCOM_BOOTSTRAP_TIMEOUT,
 * 60 s here), rank 1's error naming CCOM_IB_HCA and rank 0's naming rank 1.
 */
static int hca_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	ccomResult_t res;
	const char *e;
	double t0;

	nib_4x1 = 1;
	nib_set_host(rank);
	ct_setenv(j);
	if (rank == 1)
		setenv("CCOM_IB_HCA", "=nosuchhca0", 1);
	t0 = t_now();
	res = ccomCommInitRank(&comm, n, j->id, rank);
	e = ccomGetLastError(NULL);
	printf("rank %d: init with %s: %s after %.2f s: %s\n", rank,
	       rank == 1 ? "CCOM_IB_HCA=nosuchhca0" : "a peer whose CCOM_IB_HCA matches nothing",
	       ccomGetErrorString(res), t_now() - t0, e);
	if (res == ccomSuccess)
		ccomCommDestroy(comm);
	T_CHECK(res != ccomSuccess, "rank %d: init succeeded although rank 1 has no RDMA port", rank);
	T_CHECK(t_now() - t0 < 30, "rank %d: the failure took %.1f s (CCOM_BOOTSTRAP_TIMEOUT is 60 s)",
		rank, t_now() - t0);
	T_CHECK(strstr(e, "rank 1") && strstr(e, "CCOM_IB_HCA"),
		"rank %d: the error names neither rank 1 nor CCOM_IB_HCA: %s", rank, e);
	return T_PASS;
}

static int run_hca(void)
{
	struct ct_job j = { .at_init = nib_set_host,
			    .env = { "CCOM_NET=ib", "CCOM_BOOTSTRAP_TIMEOUT=60" } };
	int rc = ct_run(&j, 2, hca_rank, 60);

	printf("%s: a peer whose CCOM_IB_HCA matches nothing fails init on every rank\n",
	       rc ? "FAIL" : "PASS");
	return rc;
}

/* ---------------------------------------------------------------- --reuse */

#define REUSE_BYTES (2u << 20)
#define REUSE_ROUNDS 3

static float reuse_val(int round, int rank, size_t i)
{
	return (float)((round + 1) * 1000 + rank * 10 + (int)(i % 7));
}

/*
 * One round: map the send and receive buffers at @at (fixed addresses
 * after the first round), fill the send buffer with this round's values,
 * AllReduce and Send/Recv around the ring, check, unmap.
 */
static int reuse_round(ccomComm_t comm, int rank, int n, int round, char **at)
{
	size_t count = REUSE_BYTES / 4, i;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (*at ? MAP_FIXED_NOREPLACE : 0);
	char *m = mmap(*at, 2 * REUSE_BYTES, PROT_READ | PROT_WRITE, flags, -1, 0);
	float *s, *r;
	int k;

	T_CHECK(m != MAP_FAILED, "mmap at %p: %s", (void *)*at, strerror(errno));
	T_CHECK(!*at || m == *at, "the remap landed at %p, not %p", (void *)m, (void *)*at);
	*at = m;
	s = (float *)m;
	r = (float *)(m + REUSE_BYTES);
	for (i = 0; i < count; i++)
		s[i] = reuse_val(round, rank, i);
	T_CCOM(ccomAllReduce(s, r, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++) {
		float want = 0;

		for (k = 0; k < n; k++)
			want += reuse_val(round, k, i);
		T_CHECK(r[i] == want, "round %d: AllReduce element %zu is %g, want %g (stale pages?)",
			round, i, r[i], want);
	}
	T_CCOM(ccomGroupStart(), ccomSuccess);
	T_CCOM(ccomSend(s, count, ccomFloat32, (rank + 1) % n, comm, NULL), ccomSuccess);
	T_CCOM(ccomRecv(r, count, ccomFloat32, (rank + n - 1) % n, comm, NULL), ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		T_CHECK(r[i] == reuse_val(round, (rank + n - 1) % n, i),
			"round %d: Send/Recv element %zu is %g, want %g (stale pages?)", round, i,
			r[i], reuse_val(round, (rank + n - 1) % n, i));
	T_CHECK(munmap(m, 2 * REUSE_BYTES) == 0, "munmap: %s", strerror(errno));
	return T_PASS;
}

static int reuse_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	ccomComm_t comm;
	char *at = NULL;
	int round;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (round = 0; round < REUSE_ROUNDS; round++)
		if (reuse_round(comm, rank, n, round, &at))
			return T_FAIL;
	T_CHECK(ccom_net_ib_zcopy_bytes() >= REUSE_BYTES,
		"rank %d: only %llu bytes went zero-copy: the test did not exercise the registrations",
		rank, (unsigned long long)ccom_net_ib_zcopy_bytes());
	printf("rank %d: %llu bytes sent zero-copy over %d rounds at %p\n", rank,
	       (unsigned long long)ccom_net_ib_zcopy_bytes(), REUSE_ROUNDS, (void *)at);
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	return T_PASS;
}

/*
 * --reuse: zero-copy sends from buffers that are unmapped and mapped again
 * at the same address between operations, with new contents each time:
 * every result must show the new contents (a registration kept across the
 * remap would send the old pages).
 */
static int run_reuse(void)
{
	struct ct_job j = { .at_init = nib_set_host,
			    .env = { "CCOM_NET=ib", "CCOM_IB_ZCOPY_MIN=65536" } };
	int rc = ct_run(&j, 4, reuse_rank, 200);

	printf("%s: zero-copy sends from buffers unmapped and remapped at the same address\n",
	       rc ? "FAIL" : "PASS");
	return rc;
}

/* ---------------------------------------------------------------- --bench */

struct nib_bench {
	size_t bytes;
	int iters;
	double med_us;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bench_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t maxb = 16u << 20, minb = 64u << 10, b;
	double t[40], t0;
	ccomComm_t comm;
	float *s, *r;
	int i, si, iters, stop;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	s = malloc(maxb);
	r = malloc(maxb);
	if (!s || !r)
		return T_FAIL;
	memset(s, 0, maxb);
	if (getenv("NIB_BENCH_MIN"))
		minb = strtoul(getenv("NIB_BENCH_MIN"), NULL, 0);
	if (getenv("NIB_BENCH_MAX") && strtoul(getenv("NIB_BENCH_MAX"), NULL, 0) < maxb)
		maxb = strtoul(getenv("NIB_BENCH_MAX"), NULL, 0);
	for (si = 0, b = minb; b <= maxb; b *= 2, si++) {
		double start = t_now();

		iters = 20;
		for (i = -1; i < iters; i++) {
			/* A 1-element AllReduce lines the ranks up. */
			T_CCOM(ccomAllReduce(s, r, 1, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			t0 = t_now();
			T_CCOM(ccomAllReduce(s, r, b / 4, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			if (i >= 0)
				t[i] = (t_now() - t0) * 1e6;
			/* At least 5 timed iterations, then stop after 4 s of this size (rank 0 decides). */
			stop = i >= 4 && t_now() - start > 4.0;
			T_CCOM(ccomBroadcast(&stop, &stop, 1, ccomInt32, 0, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			if (stop) {
				iters = i + 1;
				break;
			}
		}
		qsort(t, (size_t)iters, sizeof(t[0]), cmp_double);
		if (rank == 0) {
			double med = t[iters / 2];

			printf("BENCH %s allreduce %zu bytes: median %.0f us, %.1f MB/s algbw, %.1f MB/s busbw (%d iters)\n",
			       getenv("CCOM_NET"), b, med, b / med, b / med * 2.0 * (n - 1) / n, iters);
			fflush(stdout);
		}
	}
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	free(s);
	free(r);
	return T_PASS;
}

static int run_bench(void)
{
	static const char *const nets[] = { "CCOM_NET=ib", "CCOM_NET=socket" };
	int i;

	for (i = 0; i < 2; i++) {
		struct ct_job j = { .at_init = nib_set_host, .env = { nets[i] } };

		if (ct_run(&j, 4, bench_rank, 580))
			return T_FAIL;
	}
	return T_PASS;
}

/*
 * Rank 0's CCOM_TOPO_DUMP_FILE in @dir must list the RDMA port net_ib
 * used as selected, ACTIVE, with the GID index its INFO line (in @log)
 * names.
 */
static int topo_check(const char *dir, const char *log)
{
	char path[96], js[16384], dev[64], want[160];
	const char *at = strstr(log, "net_ib: rank 0 connected to");
	int port, gid;
	size_t n;
	FILE *f;

	T_CHECK(at && sscanf(strstr(at, " on ") ? strstr(at, " on ") : "", " on %63s port %d", dev,
			     &port) == 2, "no net_ib connect line for rank 0 in the log:\n%s", log);
	at = strstr(at, "GID ");
	T_CHECK(at && sscanf(at, "GID %d", &gid) == 1, "no GID index in the connect line");
	snprintf(path, sizeof(path), "%s/topo-0.json", dir);
	f = fopen(path, "r");
	T_CHECK(f, "no topology dump %s", path);
	n = fread(js, 1, sizeof(js) - 1, f);
	fclose(f);
	js[n] = '\0';
	snprintf(want, sizeof(want), "{\"device\": \"%s\", \"port\": %d, \"state\": \"ACTIVE\", \"link_layer\": \"Ethernet\"",
		 dev, port);
	at = strstr(js, want);
	T_CHECK(at, "the topology dump lacks %s:\n%s", want, js);
	snprintf(want, sizeof(want), "\"gid_index\": %d,", gid);
	T_CHECK(strstr(at, want) && strstr(at, "\"selected\": true"),
		"the dump's entry for %s:%d does not show GID index %d selected:\n%s", dev, port,
		gid, js);
	printf("topology dump: %s port %d ACTIVE, GID index %d, selected\n", dev, port, gid);
	return T_PASS;
}

/*
 * --auto: CCOM_NET unset with an ACTIVE port on every rank must choose
 * net_ib (read from each rank's INFO log); the small counts of the matrix.
 */
static int run_auto(void)
{
	char dir[64], file[80], cmd[200], buf[16384], what[96];
	struct ct_job j = { .at_init = nib_set_host };
	int rc, r;

	snprintf(dir, sizeof(dir), "/tmp/ccom-nibauto-%d", (int)getpid());
	snprintf(file, sizeof(file), "%s/%%p.log", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
	if (system(cmd))
		return T_FAIL;
	unsetenv("CCOM_NET");
	t_log_to(file, "INFO", "NET");
	snprintf(what, sizeof(what), "%s/topo-%%r.json", dir);
	setenv("CCOM_TOPO_DUMP_FILE", what, 1);
	nib_big = 0;
	rc = ct_run(&j, 4, nib_rank, 300);
	t_read_logs(dir, buf, sizeof(buf));
	for (r = 0; r < 4; r++) {
		snprintf(what, sizeof(what), "rank %d: network transport net_ib", r);
		if (!strstr(buf, what)) {
			fprintf(stderr, "FAIL: rank %d did not choose net_ib automatically; its log:\n%s\n",
				r, buf);
			rc = T_FAIL;
		}
	}
	if (!rc && topo_check(dir, buf))
		rc = T_FAIL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("%s: automatic choice of net_ib, 2 hosts x 2 ranks; the topology dump shows the port and GID it used\n",
	       rc ? "FAIL" : "PASS");
	return rc;
}

/*
 * --dead: rank 3 (host B) is SIGKILLed 2 s into a 4 MiB AllReduce; every
 * other rank must get ccomRemoteError well before CCOM_OP_TIMEOUT (120 s):
 * rank 1 from the host segment, ranks 0 and 2 from net_ib (the dead
 * rank's liveness connection closed) or from their host segment once a
 * neighbour failed.
 */
static int dead_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t count = (4u << 20) / 4;
	ccomComm_t comm;
	ccomResult_t res;
	float *s, *r;
	double t0;
	int it;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	s = calloc(count, sizeof(float));
	r = calloc(count, sizeof(float));
	if (!s || !r)
		return T_FAIL;
	for (it = 0; it < 2; it++) {
		T_CCOM(ccomAllReduce(s, r, count, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	}
	/*
	 * Writes still in flight die with a killed process (unlike TCP's
	 * socket buffers): let rank 3's last ones land before it dies, so
	 * that the death shows in the next operation.
	 */
	if (rank == 3) {
		usleep(2000000);
		raise(SIGKILL);
	}
	t0 = t_now();
	res = ccomAllReduce(s, r, count, ccomFloat32, ccomSum, comm, NULL);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	printf("rank %d/%d: after %.1f s: %s: %s\n", rank, n, t_now() - t0, ccomGetErrorString(res),
	       ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == ccomRemoteError, "rank %d: the AllReduce with a dead peer returned %s, want ccomRemoteError",
		rank, ccomGetErrorString(res));
	T_CHECK(t_now() - t0 < 60, "rank %d: noticing the dead peer took %.1f s", rank, t_now() - t0);
	ccomCommDestroy(comm);
	free(s);
	free(r);
	return T_PASS;
}

/*
 * --abort: 2 ranks on 2 hosts; rank 0's AllReduce waits on net_ib for rank
 * 1, which never joins; ccomCommAbort() from a second thread after 300 ms
 * must make ccomCommSynchronize() fail promptly (CCOM_OP_TIMEOUT is 120 s).
 */
static int abort_rank(int rank, int n, void *arg)
{
	float buf[64] = { 0 };
	ccomComm_t comm;

	(void)n;
	if (ct_init(arg, rank, &comm))
		return T_FAIL;
	/* One good collective first: the connections are up, the wait is on net_ib. */
	T_CCOM(ccomAllReduce(buf, buf, 64, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	return ct_abort_absent_peer_on(comm, rank, buf, 64, 3, "a net_ib wait", 10);
}

static int run_abort(void)
{
	struct ct_job j = { .at_init = nib_set_host, .env = { "CCOM_NET=ib" } };
	int rc = ct_run(&j, 2, abort_rank, 100);

	printf("%s: ccomCommAbort interrupts a net_ib wait\n", rc ? "FAIL" : "PASS");
	return rc;
}

static int run_dead(void)
{
	struct ct_job j = { .at_init = nib_set_host, .env = { "CCOM_NET=ib" } };
	int rc = ct_run_with_victim(&j, 4, dead_rank, 200, 3);

	printf("%s: ranks 0-2 saw rank 3's death as ccomRemoteError\n", rc ? "FAIL" : "PASS");
	return rc;
}

int main(int argc, char **argv)
{
	static const struct { const char *name, *env[3]; size_t big; int four_hosts, reg; } runs[] = {
		{ "2 hosts x 2 ranks, default algorithms, up to 4 MiB + 12", { "CCOM_NET=ib" },
		  NIB_BIG, 0, 0 },
		{ "2 hosts x 2 ranks, CCOM_ALGO=ring, up to 256 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_ALGO=ring" }, (256u << 10) + 12, 0, 0 },
		{ "4 ranks, every pair on net_ib (CCOM_TRANSPORT=net), up to 256 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_TRANSPORT=net" }, (256u << 10) + 12, 0, 0 },
		{ "2 hosts x 2 ranks, 2 QPs per connection, up to 512 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_IB_QPS_PER_CONN=2" }, (512u << 10) + 12, 0, 0 },
		{ "2 hosts x 2 ranks, 4 QPs per connection, 16 slots of 8 KiB, up to 256 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_IB_QPS_PER_CONN=4", "CCOM_IB_SLOT_SIZE=8192" },
		  (256u << 10) + 12, 0, 0 },
		{ "4 hosts x 1 rank, up to 256 KiB + 12", { "CCOM_NET=ib" }, (256u << 10) + 12, 1, 0 },
		{ "2 hosts x 2 ranks, 2 slots of 4 KiB, up to 64 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_IB_SLOTS=2", "CCOM_IB_SLOT_SIZE=4096" }, (64u << 10) + 12, 0, 0 },
		{ "2 hosts x 2 ranks, buffers registered (ccomCommRegister), no other zero copy, up to 256 KiB + 12",
		  { "CCOM_NET=ib", "CCOM_IB_ZCOPY_MIN=1073741824" }, (256u << 10) + 12, 0, 1 },
	};
	int i, bad = 0, only = -1;
	double t0;

	if (!t_rdma_devices())
		return t_skip("no RDMA device (/sys/class/infiniband is empty): run it in the VM with soft-RoCE, selftests/libccom/ib/run-vm");
	if (!getenv("CCOM_OP_TIMEOUT"))
		setenv("CCOM_OP_TIMEOUT", "120", 1);
	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return run_bench();
	if (argc > 1 && !strcmp(argv[1], "--auto"))
		return run_auto();
	if (argc > 1 && !strcmp(argv[1], "--dead"))
		return run_dead();
	if (argc > 1 && !strcmp(argv[1], "--abort"))
		return run_abort();
	if (argc > 1 && !strcmp(argv[1], "--reuse"))
		return run_reuse();
	if (argc > 1 && !strcmp(argv[1], "--big"))
		return run_big();
	if (argc > 1 && !strcmp(argv[1], "--abort-big"))
		return run_abort_big();
	if (argc > 1 && !strcmp(argv[1], "--hca"))
		return run_hca();
	if (argc > 2 && !strcmp(argv[1], "--run")) {
		only = atoi(argv[2]);
		if (only < 0 || only >= (int)(sizeof(runs) / sizeof(runs[0]))) {
			fprintf(stderr, "net_ib_matrix: --run %s: the runs are 0 to %d\n", argv[2],
				(int)(sizeof(runs) / sizeof(runs[0])) - 1);
			return T_FAIL;
		}
	}
	for (i = 0; i < (int)(sizeof(runs) / sizeof(runs[0])); i++) {
		struct ct_job j = { .at_init = nib_set_host,
				    .env = { runs[i].env[0], runs[i].env[1], runs[i].env[2] },
				    .reg = runs[i].reg };
		int rc;

		if (only >= 0 && i != only)
			continue;
		nib_big = runs[i].big;
		nib_4x1 = runs[i].four_hosts;
		t0 = t_now();
		rc = ct_run(&j, 4, nib_rank, 300);
		printf("%s: %s (%.1f s)\n", rc ? "FAIL" : "PASS", runs[i].name, t_now() - t0);
		fflush(stdout);
		bad += rc != 0;
	}
	printf("%d passed, %d failed\n", (int)(sizeof(runs) / sizeof(runs[0])) - bad, bad);
	return bad ? T_FAIL : T_PASS;
}
