// SPDX-License-Identifier: MIT
/*
 * Description: grouped Send/Recv on the kdev path (coll/kdev_p2p.c).
 *
 * With CCOM_KDEV=1 on 2 and 4 ranks, groups of ccomSend/ccomRecv: a ring
 * exchange in sizes 0, 1, 4095 (odd) bytes and 4 MiB + 12 (int32), a
 * float exchange; pairwise trades where each rank sends from the first
 * half of one buffer and receives into its second half (same pages); one
 * to all (distinct blocks) and all to one; 12 sends to the same peer in
 * one group (more than one round of 8, matched in order); a send and a
 * receive to self in a group with peers; and the invalidation case: a
 * send buffer unmapped and mapped again at the same address (MAP_FIXED)
 * with new contents, and a receive buffer freed and malloc'd again, between
 * two groups.  Every byte received is checked.  Each rank's KDEV trace log
 * must show exactly one "on the engine" line per non-empty transfer with
 * another rank (the engine path was taken, nothing fell back).
 *
 * Then without CCOM_KDEV (automatic choice), 2 ranks: a 4 KiB exchange
 * stays on shm, a 4 MiB one runs on the engine.  A mixed job of 2 simulated
 * hosts (network namespaces) x 2 ranks with CCOM_KDEV=1: local Send/Recv on
 * the engine (counted in the logs), between hosts on net_socket, an
 * AllReduce across hosts.  Then kill-a-peer: of 3 ranks exchanging 16 MiB
 * in a ring, rank 2 SIGKILLs itself after its third group while the others
 * have a fourth queued (they cannot complete it without rank 2); they must
 * fail with ccomRemoteError naming rank 2.  Last, abort: of 2 ranks
 * with 1 GiB of Send/Recv queued, rank 0 calls ccomCommAbort after 0.3 s;
 * its synchronize must fail and rank 1 must get ccomRemoteError saying
 * that rank 0 aborted.  The driver's counters must be zero after each
 * part.  SKIPs (77) without a usable /dev/nccom.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fail_util.h"
#include "kdev_util.h"
#include "net_util.h"

#define BIGN ((4u << 20) / 4 + 3)	/* int32 elements: 4 MiB + 12 bytes */

static char logdir[64];

static uint8_t v8(int src, int dst, int tag, size_t i)
{
	return (uint8_t)((size_t)src * 31 + (size_t)dst * 7 + (size_t)tag * 13 + i * 3 + i / 251);
}

static void fill8(uint8_t *b, size_t len, int src, int dst, int tag)
{
	for (size_t i = 0; i < len; i++)
		b[i] = v8(src, dst, tag, i);
}

static int check8(const uint8_t *b, size_t len, int src, int dst, int tag, const char *what)
{
	for (size_t i = 0; i < len; i++)
		T_CHECK(b[i] == v8(src, dst, tag, i), "%s: byte %zu from rank %d to %d is %u, want %u",
			what, i, src, dst, b[i], v8(src, dst, tag, i));
	return T_PASS;
}

static int sync_ok(ccomComm_t comm, ccomResult_t res)
{
	T_CHECK(res == ccomSuccess, "group: %s: %s", ccomGetErrorString(res),
		ccomGetLastError(comm));
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	return T_PASS;
}

/* Per rank: how many non-empty transfers with other ranks it posted. */
struct expect {
	int sends, recvs;
};

static int ring_bytes(ccomComm_t comm, int rank, int n, size_t len, int tag, struct expect *e)
{
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	uint8_t *s = malloc(len + 1), *r = malloc(len + 1);
	char what[64];

	T_CHECK(s && r, "malloc");
	fill8(s, len, rank, next, tag);
	memset(r, 0xee, len + 1);
	ccomGroupStart();
	ccomSend(s, len, ccomUint8, next, comm, NULL);
	ccomRecv(r, len, ccomUint8, prev, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()))
		return T_FAIL;
	snprintf(what, sizeof(what), "ring of %zu bytes", len);
	if (check8(r, len, prev, rank, tag, what))
		return T_FAIL;
	T_CHECK(r[len] == 0xee, "%s: wrote past the end", what);
	e->sends += len > 0;
	e->recvs += len > 0;
	free(s);
	free(r);
	return T_PASS;
}

static int ring_typed(ccomComm_t comm, int rank, int n, struct expect *e)
{
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	int32_t *s = malloc(BIGN * sizeof(int32_t)), *r = malloc(BIGN * sizeof(int32_t));
	float fs[1023], fr[1023];
	size_t i;

	T_CHECK(s && r, "malloc");
	for (i = 0; i < BIGN; i++)
		s[i] = (int32_t)(i * 5 + (size_t)rank * 1000003);
	for (i = 0; i < 1023; i++)
		fs[i] = (float)rank + (float)i / 4;
	ccomGroupStart();
	/* Receives and sends interleaved differently: they match in order per peer. */
	ccomRecv(fr, 1023, ccomFloat32, prev, comm, NULL);
	ccomSend(fs, 1023, ccomFloat32, next, comm, NULL);
	ccomSend(s, BIGN, ccomInt32, next, comm, NULL);
	ccomRecv(r, BIGN, ccomInt32, prev, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()))
		return T_FAIL;
	for (i = 0; i < BIGN; i++)
		T_CHECK(r[i] == (int32_t)(i * 5 + (size_t)prev * 1000003), "int32 ring [%zu] = %d", i,
			r[i]);
	for (i = 0; i < 1023; i++)
		T_CHECK(fr[i] == (float)prev + (float)i / 4, "float ring [%zu] = %g", i, fr[i]);
	e->sends += 2;
	e->recvs += 2;
	free(s);
	free(r);
	return T_PASS;
}

/* Pairs (0,1), (2,3): send from the first half of a buffer, receive into its second half. */
static int pairwise(ccomComm_t comm, int rank, int n, struct expect *e)
{
	size_t half = 300001;	/* odd, the halves share a page */
	int peer = rank ^ 1;
	uint8_t *b = malloc(2 * half);

	if (peer >= n)
		return T_PASS;
	T_CHECK(b, "malloc");
	fill8(b, half, rank, peer, 7);
	memset(b + half, 0, half);
	ccomGroupStart();
	ccomRecv(b + half, half, ccomUint8, peer, comm, NULL);
	ccomSend(b, half, ccomUint8, peer, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()))
		return T_FAIL;
	if (check8(b + half, half, peer, rank, 7, "pairwise, received half") ||
	    check8(b, half, rank, peer, 7, "pairwise, sent half unchanged"))
		return T_FAIL;
	e->sends++;
	e->recvs++;
	free(b);
	return T_PASS;
}

/* Rank 0 sends a distinct block to every rank (and itself), then all send to rank 0. */
static int one_all(ccomComm_t comm, int rank, int n, struct expect *e)
{
	size_t len = 70000;
	uint8_t *b = malloc(len * (size_t)n), *r = malloc(len * (size_t)n);
	int p;

	T_CHECK(b && r, "malloc");
	memset(r, 0, len * (size_t)n);
	ccomGroupStart();
	if (rank == 0) {
		for (p = 0; p < n; p++) {
			fill8(b + (size_t)p * len, len, 0, p, 11);
			ccomSend(b + (size_t)p * len, len, ccomUint8, p, comm, NULL);
		}
	}
	ccomRecv(r, len, ccomUint8, 0, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()) || check8(r, len, 0, rank, 11, "one to all"))
		return T_FAIL;
	if (rank == 0)
		e->sends += n - 1;
	else
		e->recvs++;
	fill8(b, len, rank, 0, 12);
	ccomGroupStart();
	ccomSend(b, len, ccomUint8, 0, comm, NULL);
	if (rank == 0)
		for (p = 0; p < n; p++)
			ccomRecv(r + (size_t)p * len, len, ccomUint8, p, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()))
		return T_FAIL;
	for (p = 0; rank == 0 && p < n; p++)
		if (check8(r + (size_t)p * len, len, p, 0, 12, "all to one"))
			return T_FAIL;
	if (rank == 0)
		e->recvs += n - 1;
	else
		e->sends++;
	free(b);
	free(r);
	return T_PASS;
}

/* 12 messages to the next rank in one group: more than one round, matched in order. */
static int many(ccomComm_t comm, int rank, int n, struct expect *e)
{
	enum { M = 12 };
	size_t len = 5000;
	int next = (rank + 1) % n, prev = (rank + n - 1) % n, k;
	uint8_t *s = malloc(len * M), *r = malloc(len * M);

	T_CHECK(s && r, "malloc");
	memset(r, 0, len * M);
	ccomGroupStart();
	for (k = 0; k < M; k++) {
		fill8(s + k * len, len - (size_t)k, rank, next, 20 + k);
		ccomSend(s + k * len, len - (size_t)k, ccomUint8, next, comm, NULL);
		ccomRecv(r + k * len, len - (size_t)k, ccomUint8, prev, comm, NULL);
	}
	if (sync_ok(comm, ccomGroupEnd()))
		return T_FAIL;
	for (k = 0; k < M; k++)
		if (check8(r + k * len, len - (size_t)k, prev, rank, 20 + k, "12 in one group"))
			return T_FAIL;
	e->sends += M;
	e->recvs += M;
	free(s);
	free(r);
	return T_PASS;
}

/* A send/recv to self in the same group as peers. */
static int with_self(ccomComm_t comm, int rank, int n, struct expect *e)
{
	size_t len = 100000;
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	uint8_t *s = malloc(len), *ss = malloc(len), *r = malloc(len), *rs = malloc(len);

	T_CHECK(s && ss && r && rs, "malloc");
	fill8(s, len, rank, next, 30);
	fill8(ss, len, rank, rank, 31);
	ccomGroupStart();
	ccomSend(ss, len, ccomUint8, rank, comm, NULL);
	ccomSend(s, len, ccomUint8, next, comm, NULL);
	ccomRecv(r, len, ccomUint8, prev, comm, NULL);
	ccomRecv(rs, len, ccomUint8, rank, comm, NULL);
	if (sync_ok(comm, ccomGroupEnd()) || check8(r, len, prev, rank, 30, "with self: peer") ||
	    check8(rs, len, rank, rank, 31, "with self: self"))
		return T_FAIL;
	e->sends++;
	e->recvs++;
	free(s);
	free(ss);
	free(r);
	free(rs);
	return T_PASS;
}

/* A send buffer remapped and a receive buffer freed and reused between two groups. */
static int inval(ccomComm_t comm, int rank, int n, struct expect *e)
{
	size_t len = 3u << 20;
	int next = (rank + 1) % n, prev = (rank + n - 1) % n, gen;
	uint8_t *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *r = malloc(len), *s2;

	T_CHECK(s != MAP_FAILED && r, "mmap/malloc");
	for (gen = 0; gen < 3; gen++) {
		fill8(s, len, rank, next, 40 + gen);
		memset(r, 0, len);
		ccomGroupStart();
		ccomSend(s, len, ccomUint8, next, comm, NULL);
		ccomRecv(r, len, ccomUint8, prev, comm, NULL);
		if (sync_ok(comm, ccomGroupEnd()) ||
		    check8(r, len, prev, rank, 40 + gen, "invalidation (stale registration?)"))
			return T_FAIL;
		e->sends++;
		e->recvs++;
		/* New memory at the same addresses. */
		T_CHECK(munmap(s, len) == 0, "munmap");
		s2 = mmap(s, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			  -1, 0);
		T_CHECK(s2 == s, "mmap MAP_FIXED at the old address");
		free(r);
		r = malloc(len);
		T_CHECK(r, "malloc");
	}
	munmap(s, len);
	free(r);
	return T_PASS;
}

static void rank_log(int rank, const char *tag)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s%d.log", logdir, tag, rank);
	setenv("CCOM_DEBUG_FILE", path, 1);
}

static int write_expect(int rank, const char *tag, const struct expect *e)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%d.expect", logdir, tag, rank);
	f = fopen(path, "w");
	T_CHECK(f, "fopen %s", path);
	fprintf(f, "%d %d\n", e->sends, e->recvs);
	fclose(f);
	return T_PASS;
}

static int forced_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	struct expect e = { 0, 0 };
	char tag[16];
	ccomComm_t comm;

	snprintf(tag, sizeof(tag), "n%d-", n);
	rank_log(rank, tag);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	if (ring_bytes(comm, rank, n, 0, 1, &e) || ring_bytes(comm, rank, n, 1, 2, &e) ||
	    ring_bytes(comm, rank, n, 4095, 3, &e) || ring_typed(comm, rank, n, &e) ||
	    pairwise(comm, rank, n, &e) || one_all(comm, rank, n, &e) ||
	    many(comm, rank, n, &e) || with_self(comm, rank, n, &e) ||
	    inval(comm, rank, n, &e))
		return T_FAIL;
	/* A collective after the groups: the grant channel is still in sequence. */
	{
		int32_t x = rank + 1, y = 0;

		T_CCOM(ccomAllReduce(&x, &y, 1, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(y == n * (n + 1) / 2, "allreduce after the groups: %d", y);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return write_expect(rank, tag, &e);
}

static int auto_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	struct expect e = { 0, 0 };
	ccomComm_t comm;

	rank_log(rank, "auto-");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	if (ring_bytes(comm, rank, n, 4096, 50, &e))
		return T_FAIL;
	e.sends = e.recvs = 0;	/* 4 KiB: shm */
	if (ring_bytes(comm, rank, n, 4u << 20, 51, &e))
		return T_FAIL;
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return write_expect(rank, "auto-", &e);
}

static int dead_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t len = 16u << 20;
	int next = (rank + 1) % n, prev = (rank + n - 1) % n, i;
	uint8_t *s = calloc(1, len), *r = calloc(1, len);
	ccomComm_t comm;

	setenv("CCOM_OP_TIMEOUT", "60", 1);
	T_CHECK(s && r, "calloc");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (i = 0; i < 4; i++) {
		if (rank == 2 && i == 3) {
			/* The others wait for this rank in their 4th group. */
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			usleep(50000);
			raise(SIGKILL);
		}
		ccomGroupStart();
		ccomSend(s, len, ccomUint8, next, comm, NULL);
		ccomRecv(r, len, ccomUint8, prev, comm, NULL);
		T_CCOM(ccomGroupEnd(), ccomSuccess);
		if (i == 0)
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	}
	if (ct_sync_after_kill(comm, rank, 2, "Send/Recv", 0.05))
		return T_FAIL;
	ccomCommDestroy(comm);
	free(s);
	free(r);
	return T_PASS;
}

/* Rank 0 aborts while 1 GiB of Send/Recv is queued on the engine. */
static int abort_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t len = 32u << 20;
	uint8_t *s = calloc(1, len), *r = calloc(1, len);
	ccomResult_t res;
	ccomComm_t comm;
	int i;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "120", 1);
	T_CHECK(s && r, "calloc");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (i = 0; i < 32; i++) {
		ccomGroupStart();
		ccomSend(s, len, ccomUint8, 1 - rank, comm, NULL);
		ccomRecv(r, len, ccomUint8, 1 - rank, comm, NULL);
		T_CCOM(ccomGroupEnd(), ccomSuccess);
		if (i == 0)
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	}
	res = ct_sync_under_abort(comm, rank, "Send/Recv");
	if (rank == 0) {
		T_CHECK(res != ccomSuccess, "31 exchanges of 32 MiB finished within 0.3 s; the abort had nothing to cancel");
		return T_PASS;
	}
	if (ct_check_aborted_by_rank0(comm, rank, res))
		return T_FAIL;
	ccomCommDestroy(comm);
	free(s);
	free(r);
	return T_PASS;
}

/*
 * Mixed job: 2 simulated hosts x 2 ranks (0, 1 on host A; 2, 3 on host B).
 * The ring's local links (0->1, 2->3) and the local pairwise trades run on
 * the engine, the links between hosts (1->2, 3->0) on net_socket; an
 * AllReduce runs on shm + net (kdev takes no collective across hosts).
 */
static int mixed_body(ccomComm_t comm, int rank, int n, void *arg)
{
	struct expect *e = arg;
	int32_t x = rank + 1, y = 0;

	if (ring_bytes(comm, rank, n, 1u << 20, 60, e) || pairwise(comm, rank, n, e))
		return T_FAIL;
	T_CCOM(ccomAllReduce(&x, &y, 1, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(y == n * (n + 1) / 2, "allreduce across hosts: %d", y);
	return T_PASS;
}

/* Engine lines in every log file of @prefix (one per rank process). */
static int mixed_count(const char *what)
{
	char cmd[256];
	int c = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cat %s/mixed-*.log 2>/dev/null | grep -c '%s'", logdir, what);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &c) != 1)
		c = -1;
	pclose(f);
	return c;
}

static int mixed(void)
{
	static const int host_of[] = { 0, 0, 1, 1 };
	struct expect e = { 0, 0 };
	char path[128];
	int rc, gs, gr;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* A fresh process: the ranks' logs go to their own files. */
		snprintf(path, sizeof(path), "%s/mixed-%%p.log", logdir);
		setenv("CCOM_DEBUG_FILE", path, 1);
		setenv("CCOM_DEBUG", "TRACE", 1);
		setenv("CCOM_DEBUG_SUBSYS", "KDEV", 1);
		setenv("CCOM_KDEV", "1", 1);
		setenv("CCOM_OP_TIMEOUT", "60", 1);
		rc = nett_hosts_up();
		if (!rc)
			rc = nett_run(4, host_of, mixed_body, &e, 0);
		nett_hosts_down();
		_exit(rc);
	}
	T_CHECK(pid > 0 && waitpid(pid, &rc, 0) == pid, "fork/waitpid");
	T_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
		"mixed job (2 simulated hosts x 2 ranks) failed or could not set up its hosts (status %#x)",
		rc);
	/* Ring: 0->1 and 2->3 are local; pairwise: 0<->1 and 2<->3. */
	gs = mixed_count("kdev: p2p send to rank");
	gr = mixed_count("kdev: p2p recv from rank");
	printf("mixed job: %d sends and %d receives on the engine (expected 6 and 6)\n", gs, gr);
	T_CHECK(gs == 6 && gr == 6, "mixed job: %d sends / %d receives on the engine, expected 6 / 6 (logs %s/mixed-*.log)",
		gs, gr, logdir);
	return T_PASS;
}

/* Each rank's log has exactly its expected number of engine sends and receives. */
static int check_logs(const char *tag, int n)
{
	char path[128];
	int r, es, er, gs, gr;
	FILE *f;

	for (r = 0; r < n; r++) {
		snprintf(path, sizeof(path), "%s/%s%d.expect", logdir, tag, r);
		f = fopen(path, "r");
		T_CHECK(f && fscanf(f, "%d %d", &es, &er) == 2, "rank %d left no %s", r, path);
		fclose(f);
		snprintf(path, sizeof(path), "%s/%s%d.log", logdir, tag, r);
		gs = t_file_count(path, "kdev: p2p send to rank");
		gr = t_file_count(path, "kdev: p2p recv from rank");
		printf("%s rank %d: %d sends and %d receives on the engine (expected %d and %d)\n",
		       tag, r, gs, gr, es, er);
		if (gs != es || gr != er) {
			char cmd[256];

			snprintf(cmd, sizeof(cmd), "grep -v -E 'p2p (send to|recv from)' %s | tail -n 40 >&2", path);
			if (system(cmd))
				fprintf(stderr, "(no log lines)\n");
		}
		T_CHECK(gs == es && gr == er,
			"%s rank %d: %d sends / %d receives ran on the engine, expected %d / %d (log %s)",
			tag, r, gs, gr, es, er, path);
		T_CHECK(t_file_count(path, "runs on shm") == 0, "%s rank %d: a transfer fell back to shm (log %s)",
			tag, r, path);
	}
	return T_PASS;
}

/*
 * Run one job from a fresh child: the process that creates the unique id
 * initializes libccom's logging, and forked ranks inherit it, so each job
 * must start from a process that never used libccom (its ranks' logs go
 * to their own CCOM_DEBUG_FILE).
 */
static int job(struct ct_job *j, int n, t_rank_fn fn)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(ct_run(j, n, fn, 300));
	T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork/waitpid");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? T_PASS : T_FAIL;
}

int main(void)
{
	struct ct_job j = { .env = { "CCOM_KDEV=1", "CCOM_DEBUG=TRACE", "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct ct_job ja = { .env = { "CCOM_DEBUG=TRACE", "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct ct_job jd = { .env = { "CCOM_KDEV=1" } };
	static char calib_env[128];
	int codes[3], n;
	char tag[16];
	FILE *f;

	KT_REQUIRE(4);
	unsetenv("CCOM_KDEV");
	unsetenv("CCOM_KDEV_MIN_BYTES");
	snprintf(logdir, sizeof(logdir), "/tmp/kdev_p2p.%d", (int)getpid());
	T_CHECK(mkdir(logdir, 0700) == 0, "mkdir %s", logdir);
	for (n = 2; n <= 4; n += 2) {
		printf("CCOM_KDEV=1, %d ranks\n", n);
		fflush(stdout);
		T_CHECK(job(&j, n, forced_rank) == T_PASS, "%d ranks failed", n);
		snprintf(tag, sizeof(tag), "n%d-", n);
		if (check_logs(tag, n))
			return T_FAIL;
	}
	printf("automatic choice, 2 ranks\n");
	fflush(stdout);
	/* The engine's calibration seeded fast: a timing under load must not decide. */
	snprintf(calib_env, sizeof(calib_env), "CCOM_KDEV_CALIB_FILE=%s/calib", logdir);
	f = fopen(calib_env + strlen("CCOM_KDEV_CALIB_FILE="), "w");
	T_CHECK(f, "fopen %s", calib_env);
	fprintf(f, "1 1 0\n");
	fclose(f);
	ja.env[2] = calib_env;
	T_CHECK(job(&ja, 2, auto_rank) == T_PASS, "automatic choice failed");
	if (check_logs("auto-", 2))
		return T_FAIL;
	if (kt_counters_zero("after the Send/Recv cases"))
		return T_FAIL;
	printf("mixed job: 2 simulated hosts x 2 ranks\n");
	fflush(stdout);
	if (mixed() || kt_counters_zero("after the mixed job"))
		return T_FAIL;
	printf("kill a peer, 3 ranks\n");
	fflush(stdout);
	jd.nranks = 3;
	t_fork_ranks_id(3, dead_rank, &jd, codes, 200, &jd.id);
	for (n = 0; n < 3; n++)
		T_CHECK(codes[n] == (n == 2 ? 128 + SIGKILL : 0), "kill a peer: rank %d exited with %d, want %d",
			n, codes[n], n == 2 ? 128 + SIGKILL : 0);
	printf("every survivor failed with ccomRemoteError naming rank 2\n");
	if (kt_counters_zero("after kill-a-peer"))
		return T_FAIL;
	printf("abort, 2 ranks\n");
	fflush(stdout);
	T_CHECK(ct_run(&jd, 2, abort_rank, 200) == T_PASS, "abort during Send/Recv failed");
	return kt_counters_zero("after abort");
}
