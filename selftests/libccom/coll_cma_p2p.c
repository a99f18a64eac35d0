// SPDX-License-Identifier: MIT
/*
 * Description: Send/Recv, Gather and Scatter on the CMA path
 * (libccom/coll/cma_p2p.c, coll/cma.c, malloc() buffers).  With CCOM_CMA=1
 * on 2, 3 and 4 ranks: a Send/Recv ring for every dtype of one element
 * below, at and above CCOM_CMA_P2P_MIN_BYTES (set to 64 KiB; only the last two
 * may move on CMA, and must) and of 1 Mi + 3 floats; a group where every
 * rank sends to every rank (itself included) 1 KiB or 96 KiB by pair; n - 1
 * ccomRecvAny of 128 KiB on rank 0 against one ccomSend from each peer;
 * Gather and Scatter of 65,549 elements for every dtype, out of place, in
 * place and mixed, roots rotating, each counted as a CMA operation; and
 * the big-count matrix (every collective, 1 Mi + 3 elements).  Each result
 * is checked.  Then: a seccomp filter (EPERM) on rank 1 of 3 (the path
 * off from init on every rank, nothing moved on CMA, all correct);
 * CCOM_CMA_P2P_MIN_BYTES of 64 KiB on rank 0 and 1 MiB on rank 1 (the
 * sender's choice travels in its header: only rank 0's 128 KiB sends move
 * on CMA); CCOM_CMA=auto on 2 ranks (42 exchanges of 1 MiB: none decided
 * after 12, the sender's race of turns of 4 sends per path needing 24;
 * decided after 42, each sender's verdict cached in its own file as
 * "0 20 1|-1"; then 42 Gathers of 1 MiB decided and cached as
 * "6 20 1|-1"; a second communicator starts with both caches); and a
 * receive expecting more than the CMA send
 * carries, and one whose receiver installed a seccomp filter after init
 * (both ranks fail, the receiver naming the sizes or process_vm_readv;
 * neither hangs); last, with the default threshold (256 KiB), both ranks
 * send 128 KiB before they receive, ungrouped, and neither waits (the
 * sends stay on the stream, whose FIFO takes them).
 */
#include "coll_cma.h"
#include "coll_matrix.h"

#include "coll/cma.h"
#include "core/comm.h"

/* Operations until auto decides: every turn of the race (extra ones too) on both paths, and one more. */
#define AUTO_OPS (2 * (CCOM_RACE_TURNS + CCOM_RACE_EXTRA_MAX) * CCOM_RACE_RUN + 2)
_Static_assert(AUTO_OPS == 42, "the header and the job's title say 42");

#define MIN_BYTES (64u << 10)
#define GS_COUNT 65549u		/* >= 64 KiB per rank even for int8 */
#define GROUP_BIG (96u << 10)
#define GROUP_SMALL (1u << 10)

enum p2p_mode { M_FULL, M_DENIED, M_SPLIT_MIN, M_AUTO, M_AUTO_CACHED, M_MISMATCH, M_LATE_DENY,
		M_EAGER };

struct p2p_job {
	struct ct_job ct;
	enum p2p_mode mode;
};

static int deny_rank = -1;

static void p2p_at_init(int rank)
{
	if (rank == deny_rank)
		cma_seccomp_deny(rank, EPERM);
}

static void split_min_at_init(int rank)
{
	setenv("CCOM_CMA_P2P_MIN_BYTES", rank == 0 ? "65536" : "1048576", 1);
}

/* A Send/Recv ring of @count @dt: the data checked, the CMA messages counted into *@moved. */
static int ring(ccomComm_t comm, int rank, int n, ccomDataType_t dt, size_t count, char *sb,
		char *rb, uint64_t *moved)
{
	size_t i, esz = ct_size(dt);
	uint64_t before = ccom_cma_p2p_ops(comm);
	int prev = (rank + n - 1) % n;

	for (i = 0; i < count; i++)
		ct_put(sb, i, dt, ct_in(rank, i, ccomSum));
	memset(rb, CT_CANARY, count * esz + 64);
	T_CCOM(ccomGroupStart(), ccomSuccess);
	T_CCOM(ccomSend(sb, count, dt, (rank + 1) % n, comm, NULL), ccomSuccess);
	T_CCOM(ccomRecv(rb, count, dt, prev, comm, NULL), ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		if (!ct_same(ct_get(rb, i, dt), ct_in(prev, i, ccomSum), dt)) {
			fprintf(stderr, "rank %d/%d: ring dtype %d count %zu: element %zu is %g, want %g\n",
				rank, n, dt, count, i, ct_get(rb, i, dt), ct_in(prev, i, ccomSum));
			return T_FAIL;
		}
	for (i = count * esz; i < count * esz + 64; i++)
		T_CHECK((unsigned char)rb[i] == CT_CANARY, "ring: a byte after the output was written");
	*moved = ccom_cma_p2p_ops(comm) - before;
	return T_PASS;
}

/* Below, at and above the threshold for every dtype, then 1 Mi + 3 floats. */
static int ring_sizes(ccomComm_t comm, int rank, int n, char *sb, char *rb, bool on)
{
	uint64_t moved;
	size_t esz, count;
	int dt, k;

	for (dt = 0; dt < ccomNumTypes; dt++)
		for (k = -1; k <= 1; k++) {
			esz = ct_size((ccomDataType_t)dt);
			count = MIN_BYTES / esz + (size_t)k;
			if (ring(comm, rank, n, (ccomDataType_t)dt, count, sb, rb, &moved))
				return T_FAIL;
			/* One send and one receive per rank, on CMA from the threshold only. */
			if (moved != (on && k >= 0 ? 2u : 0u)) {
				fprintf(stderr, "rank %d/%d: ring dtype %d of %zu bytes: %llu messages on CMA, want %d\n",
					rank, n, dt, count * esz, (unsigned long long)moved,
					on && k >= 0 ? 2 : 0);
				return T_FAIL;
			}
		}
	if (ring(comm, rank, n, ccomFloat32, CT_BIG, sb, rb, &moved))
		return T_FAIL;
	T_CHECK(moved == (on ? 2u : 0u), "ring of 1 Mi + 3 floats: wrong path");
	return T_PASS;
}

static size_t pair_bytes(int a, int b)
{
	return (a + b) % 2 ? GROUP_BIG : GROUP_SMALL;
}

/* One group: every rank sends to every rank (itself too) and receives from each. */
static int all_pairs(ccomComm_t comm, int rank, int n, char *sb, char *rb, bool on)
{
	uint64_t before = ccom_cma_p2p_ops(comm), want = 0;
	int p;
	size_t i;

	for (p = 0; p < n; p++)
		for (i = 0; i < pair_bytes(rank, p); i++)
			sb[(size_t)p * GROUP_BIG + i] = (char)(rank * 31 + p * 7 + (int)(i % 251));
	T_CCOM(ccomGroupStart(), ccomSuccess);
	for (p = 0; p < n; p++) {
		T_CCOM(ccomSend(sb + (size_t)p * GROUP_BIG, pair_bytes(rank, p), ccomInt8, p, comm, NULL),
		       ccomSuccess);
		T_CCOM(ccomRecv(rb + (size_t)p * GROUP_BIG, pair_bytes(rank, p), ccomInt8, p, comm, NULL),
		       ccomSuccess);
		want += on && p != rank && pair_bytes(rank, p) >= MIN_BYTES ? 2 : 0;
	}
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (p = 0; p < n; p++)
		for (i = 0; i < pair_bytes(rank, p); i++)
			if (rb[(size_t)p * GROUP_BIG + i] != (char)(p * 31 + rank * 7 + (int)(i % 251))) {
				fprintf(stderr, "rank %d/%d: group: byte %zu from rank %d is wrong\n", rank,
					n, i, p);
				return T_FAIL;
			}
	T_CHECK(ccom_cma_p2p_ops(comm) - before == want, "group: wrong number of CMA messages");
	return T_PASS;
}

/* Rank 0: n - 1 ccomRecvAny of 128 KiB; the others: one ccomSend each. */
static int any_source(ccomComm_t comm, int rank, int n, char *sb, char *rb, bool on)
{
	size_t count = (128u << 10) / 4, i;
	uint64_t before = ccom_cma_p2p_ops(comm);
	int k, peer, seen = 0;

	if (rank) {
		for (i = 0; i < count; i++)
			((int32_t *)sb)[i] = rank * 1000003 + (int32_t)i;
		T_CCOM(ccomSend(sb, count, ccomInt32, 0, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(ccom_cma_p2p_ops(comm) - before == (on ? 1u : 0u), "any: sender's path");
		return T_PASS;
	}
	for (k = 0; k < n - 1; k++) {
		peer = -1;
		T_CCOM(ccomRecvAny(rb, count, ccomInt32, &peer, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		T_CHECK(peer > 0 && peer < n && !(seen & (1 << peer)), "any: bad or repeated peer");
		seen |= 1 << peer;
		for (i = 0; i < count; i++)
			T_CHECK(((int32_t *)rb)[i] == peer * 1000003 + (int32_t)i, "any: wrong data");
	}
	T_CHECK(ccom_cma_p2p_ops(comm) - before == (on ? (uint64_t)n - 1 : 0u), "any: receiver's path");
	return T_PASS;
}

/* Gather and Scatter for every dtype, out of place, in place, mixed: each one CMA op when on. */
static int rooted(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz, bool on)
{
	static const int kinds[] = { K_GA, K_SC };
	struct ct_case c;
	uint64_t before;
	int k, dt, ip;

	for (k = 0; k < 2; k++)
		for (dt = 0; dt < ccomNumTypes; dt++)
			for (ip = 0; ip < 3; ip++) {
				c = (struct ct_case){ kinds[k], ip == 2 ? rank % 2 : ip, (dt + ip) % n,
						      (ccomDataType_t)dt, ccomSum, GS_COUNT };
				before = ccom_cma_ops(comm);
				if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
					return T_FAIL;
				if (ccom_cma_ops(comm) - before != (on ? 1u : 0u)) {
					fprintf(stderr, "rank %d/%d: %s dtype %d: CMA ran %llu times, want %d\n",
						rank, n, k_names[c.kind], dt,
						(unsigned long long)(ccom_cma_ops(comm) - before), on);
					return T_FAIL;
				}
			}
	return T_PASS;
}

/*
 * Rank 1 expects twice what rank 0 sends on CMA (@late: the same size, but
 * rank 1 forbade itself process_vm_readv after init): both fail, neither
 * hangs.
 */
static int mismatch(ccomComm_t comm, int rank, char *sb, char *rb, bool late)
{
	size_t count = (128u << 10) / 4;
	ccomResult_t r;

	memset(sb, 1, count * 4);
	if (late && rank == 1)
		cma_seccomp_deny(rank, EPERM);
	if (rank == 0)
		r = ccomSend(sb, count, ccomInt32, 1, comm, NULL);
	else
		r = ccomRecv(rb, (late ? 1 : 2) * count, ccomInt32, 0, comm, NULL);
	if (r == ccomSuccess)
		r = ccomCommSynchronize(comm);
	if (r == ccomSuccess) {
		fprintf(stderr, "rank %d: a mismatched CMA send/recv succeeded\n", rank);
		return T_FAIL;
	}
	if (rank == 1 && !strstr(ccomGetLastError(comm), late ? "process_vm_readv" : "expects")) {
		fprintf(stderr, "rank 1: mismatch reported as \"%s\"\n", ccomGetLastError(comm));
		return T_FAIL;
	}
	printf("rank %d: mismatched CMA send/recv failed: %s\n", rank, ccomGetLastError(comm));
	return T_PASS;
}

/*
 * Default threshold: each rank sends 128 KiB, then receives, ungrouped;
 * the sends fit the stream's FIFO, so neither waits for the other's
 * receive (on CMA both would wait for ever).
 */
static int eager(ccomComm_t comm, int rank, char *sb, char *rb)
{
	size_t count = 128u << 10, i;

	for (i = 0; i < count; i++)
		sb[i] = (char)(rank + (int)(i % 101));
	T_CCOM(ccomSend(sb, count, ccomInt8, 1 - rank, comm, NULL), ccomSuccess);
	T_CCOM(ccomRecv(rb, count, ccomInt8, 1 - rank, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		T_CHECK(rb[i] == (char)(1 - rank + (int)(i % 101)), "eager: wrong data");
	T_CHECK(ccom_cma_p2p_ops(comm) == 0, "eager: 128 KiB moved on CMA by default");
	return T_PASS;
}

static int p2p_rank(int rank, int n, void *arg)
{
	struct p2p_job *j = arg;
	size_t bufsz = ((size_t)CT_BIG + 8) * 8 * 2 + 4096;
	char *sb = malloc(bufsz), *rb = malloc(bufsz);
	ccomComm_t comm;
	uint64_t moved = 0;
	bool on = j->mode == M_FULL;
	int rc = T_FAIL, k;

	if (!sb || !rb || ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	if (j->mode == M_DENIED && (strncmp(ccom_cma_describe(comm), "off", 3) ||
				    !strstr(ccom_cma_describe(comm), "could not read"))) {
		fprintf(stderr, "rank %d: CMA \"%s\" with rank 1 denied\n", rank,
			ccom_cma_describe(comm));
		goto out;
	}
	switch (j->mode) {
	case M_FULL:
	case M_DENIED:
		rc = ring_sizes(comm, rank, n, sb, rb, on);
		if (!rc)
			rc = all_pairs(comm, rank, n, sb, rb, on);
		if (!rc)
			rc = any_source(comm, rank, n, sb, rb, on);
		if (!rc)
			rc = rooted(comm, rank, n, sb, rb, bufsz, on);
		if (!rc && on)
			rc = ct_matrix_big(comm, rank, n, sb, rb, bufsz);
		break;
	case M_SPLIT_MIN:
		/* 128 KiB: over rank 0's threshold only; each rank sees rank 0's send once. */
		rc = ring(comm, rank, n, ccomInt8, 128u << 10, sb, rb, &moved);
		if (!rc && moved != 1) {
			fprintf(stderr, "rank %d: %llu CMA messages, want 1 (rank 0's send)\n", rank,
				(unsigned long long)moved);
			rc = T_FAIL;
		}
		break;
	case M_AUTO:
	case M_AUTO_CACHED:
		for (k = 0, rc = T_PASS; k < AUTO_OPS && !rc; k++) {
			rc = ring(comm, rank, n, ccomFloat32, (1u << 20) / 4, sb, rb, &moved);
			/* The race takes 2 x 3 turns of 4 sends: none decides in 12 (best of 3 did). */
			if (!rc && k == 11 && j->mode == M_AUTO && ccom_cma_decided(comm)) {
				fprintf(stderr, "rank %d: a Send size decided after 12 sends\n", rank);
				rc = T_FAIL;
			}
		}
		/*
		 * Gather is measured (and cached) like the other collectives: the
		 * race's turns on both paths, then the operation that decides.
		 */
		for (k = 0; k < AUTO_OPS && !rc; k++) {
			struct ct_case c = { K_GA, 0, 0, ccomFloat32, ccomSum, (1u << 20) / 4 };

			rc = ct_case_run(comm, &c, rank, n, sb, rb, bufsz);
		}
		if (!rc && j->mode == M_AUTO && ccom_cma_decided(comm) < 2) {
			fprintf(stderr, "rank %d: CCOM_CMA=auto decided %llu sizes in %d sends and %d Gathers of 1 MiB, want 2\n",
				rank, (unsigned long long)ccom_cma_decided(comm), AUTO_OPS, AUTO_OPS);
			rc = T_FAIL;
		}
		if (!rc && j->mode == M_AUTO_CACHED && ccom_cma_cached(comm) != 2) {
			fprintf(stderr, "rank %d: %d verdicts taken from the caches, want 2 (Gather, this sender's 1 MiB)\n",
				rank, ccom_cma_cached(comm));
			rc = T_FAIL;
		}
		break;
	case M_EAGER:
		rc = eager(comm, rank, sb, rb);
		break;
	case M_MISMATCH:
	case M_LATE_DENY:
		rc = mismatch(comm, rank, sb, rb, j->mode == M_LATE_DENY);
		ccomCommDestroy(comm);
		free(sb);
		free(rb);
		return rc;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
out:
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return rc;
}

/* The auto cache at @path (@suffix appended) holds a verdict of row @kind for 2^20 bytes. */
static int verdict_cached(const char *path, const char *suffix, int kind)
{
	char line[64], name[256], want[2][16];
	FILE *f;
	int ok = 0;

	snprintf(name, sizeof(name), "%s%s", path, suffix);
	snprintf(want[0], sizeof(want[0]), "%d 20 1\n", kind);
	snprintf(want[1], sizeof(want[1]), "%d 20 -1\n", kind);
	f = fopen(name, "r");
	while (f && !ok && fgets(line, sizeof(line), f))
		ok = !strcmp(line, want[0]) || !strcmp(line, want[1]);
	if (f)
		fclose(f);
	if (!ok)
		fprintf(stderr, "cache %s: no line \"%d 20 1|-1\"\n", name, kind);
	return ok;
}

static int run(struct p2p_job *j, int n, const char *what)
{
	double t0 = t_now();

	if (ct_run(&j->ct, n, p2p_rank, 280))
		return T_FAIL;
	printf("%d ranks, %s: passed in %.1f s\n", n, what, t_now() - t0);
	fflush(stdout);
	return T_PASS;
}

int main(void)
{
	struct p2p_job j = { .ct = { .env = { "CCOM_CMA=1", "CCOM_CMA_P2P_MIN_BYTES=65536" },
				     .at_init = p2p_at_init },
			     .mode = M_FULL };
	static char cache[128], file2[144], send0[160], send1[160];
	const char *path;
	int n;

	for (n = 2; n <= 4; n++)
		if (run(&j, n, "CCOM_CMA=1: Send/Recv, groups, any-source, Gather, Scatter on CMA"))
			return T_FAIL;
#ifdef __x86_64__
	j.mode = M_DENIED;
	deny_rank = 1;
	if (run(&j, 3, "seccomp EPERM on rank 1: all off from init, all correct"))
		return T_FAIL;
	deny_rank = -1;
#endif
	j.mode = M_SPLIT_MIN;
	j.ct.at_init = split_min_at_init;
	if (run(&j, 2, "CCOM_CMA_P2P_MIN_BYTES 64 KiB on rank 0, 1 MiB on rank 1: the sender decides"))
		return T_FAIL;
	j.ct.at_init = NULL;
	j.mode = M_AUTO;
	j.ct.env[0] = "CCOM_CMA=auto";
	snprintf(cache, sizeof(cache), "CCOM_CMA_CALIB_FILE=/tmp/ccom-test-cma-p2p-%d", (int)getpid());
	j.ct.env[2] = cache;
	/* The library appends the local rank count: 2 ranks' verdicts are in -2. */
	snprintf(file2, sizeof(file2), "%s-2", cache + strlen("CCOM_CMA_CALIB_FILE="));
	path = file2;
	unlink(path);
	snprintf(send0, sizeof(send0), "%s-send0", path);
	snprintf(send1, sizeof(send1), "%s-send1", path);
	unlink(send0);
	unlink(send1);
	if (run(&j, 2, "CCOM_CMA=auto: 42 exchanges and 42 Gathers of 1 MiB correct, both decided"))
		return T_FAIL;
	T_CHECK(verdict_cached(path, "", 6), "Gather verdict not cached");
	T_CHECK(verdict_cached(path, "-send0", 0) && verdict_cached(path, "-send1", 0),
		"a sender's verdict not cached in its own file");
	j.mode = M_AUTO_CACHED;
	if (run(&j, 2, "CCOM_CMA=auto again: the Gather and each sender's verdict from the caches"))
		return T_FAIL;
	unlink(path);
	unlink(send0);
	unlink(send1);
	j.mode = M_MISMATCH;
	j.ct.env[0] = "CCOM_CMA=1";
	j.ct.env[2] = "CCOM_OP_TIMEOUT=60";
	if (run(&j, 2, "CMA send of 128 KiB, receive of 256 KiB: both fail"))
		return T_FAIL;
#ifdef __x86_64__
	j.mode = M_LATE_DENY;
	if (run(&j, 2, "CMA send whose receiver may no longer read: both fail"))
		return T_FAIL;
#endif
	j.mode = M_EAGER;
	j.ct.env[1] = "CCOM_OP_TIMEOUT=60";
	if (run(&j, 2, "default threshold: both ranks send 128 KiB before they receive, no wait"))
		return T_FAIL;
	return T_PASS;
}
