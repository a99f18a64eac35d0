// SPDX-License-Identifier: MIT
/*
 * hosts_coll.c - one rank of a job across the guests of tools/vm/run
 * --hosts N, started by tools/vm/launch (or any launcher): the
 * communicator comes from ccomCommInitFromEnv() alone, so libccom finds
 * the hosts, the interface and the transports by itself.
 *
 *   hosts_coll matrix [KIND,...]   every collective (or the listed ones:
 *	allreduce broadcast reduce allgather reducescatter alltoall gather
 *	scatter sendrecv), in and out of place, float32/sum, counts 0, 1, 7
 *	and 1 Mi + 5 (blocked collectives: (1 Mi + 5) / nranks + 1 per
 *	block), the rooted ones at the last rank (on another host than rank
 *	0), each result compared with coll_util.h's reference.
 *   hosts_coll allreduce MIB ITERS   ITERS AllReduces of MIB MiB, checked;
 *	a failure must name a peer ("rank N") in its message: exit 3 then.
 *   hosts_coll loss VICTIM_HOST HOSTS [MARK]   a 64 MiB AllReduce of a
 *	job over HOSTS hosts (same rank count each) during which guest
 *	VICTIM_HOST powers itself off (its first rank creates the file MARK,
 *	which tells tools/vm/hosts, then writes 'o' to /proc/sysrq-trigger:
 *	QEMU quits); the other ranks must fail within
 *	CCOM_OP_TIMEOUT, and within CCOM_PEER_TIMEOUT when it is set (+ 30 s
 *	for a loaded TCG guest either way), never succeed, name a lost rank
 *	in the error and list exactly the lost host's ranks in
 *	ccomCommGetFailedRanks() (exit 4 if not), then ccomCommShrink() them
 *	away and run a checked AllReduce on the survivors.
 *   hosts_coll scalable DIR   ccomCommInitRankScalable() with 2 ids: the
 *	first rank of each half of the job starts a root (ccomGetUniqueId
 *	without CCOM_COMM_ID) and writes its id to DIR/id.<k>, a folder all
 *	hosts share; every rank reads both and initialises, then a checked
 *	AllReduce of 1 Mi + 5 elements.
 *   hosts_coll stall RANK FILE   a stalled job for `ccomctl job`: every
 *	rank runs a checked 1 MiB AllReduce, then rank RANK prints "stalled"
 *	and does not call the next AllReduce until FILE exists (at most
 *	300 s) while the others wait in it; then that one is checked too.
 *
 * Exit status: 0 pass, 1 wrong result or broken expectation, 2 bad usage
 * or setup, 3 (allreduce) a failure that names its peer, 4 (loss) the
 * error or ccomCommGetFailedRanks() did not name exactly the lost ranks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_matrix.h"

#define HC_BIG ((1u << 20) + 5)

static int hc_rank, hc_n;

static double hc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int hc_init(ccomComm_t *comm)
{
	ccomResult_t res = ccomCommInitFromEnv(comm, NULL);

	if (res != ccomSuccess) {
		fprintf(stderr, "FAIL: ccomCommInitFromEnv: %s: %s\n", ccomGetErrorString(res),
			ccomGetLastError(NULL));
		return 2;
	}
	ccomCommUserRank(*comm, &hc_rank);
	ccomCommCount(*comm, &hc_n);
	return 0;
}

static int hc_listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	if (!list)
		return 1;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

static int run_matrix(const char *kinds)
{
	static const size_t counts[] = { 0, 1, 7, HC_BIG };
	size_t bufsz = ((size_t)HC_BIG + 64) * sizeof(float) * 2 + 4096;
	int k, ip, ci, fails = 0, cases = 0;
	char *sb, *rb;
	ccomComm_t comm;

	if (hc_init(&comm))
		return 2;
	bufsz += (size_t)hc_n * 4096;
	sb = malloc(bufsz);
	rb = malloc(bufsz);
	if (!sb || !rb) {
		fprintf(stderr, "FAIL: no memory for 2 x %zu bytes\n", bufsz);
		return 2;
	}
	for (k = 0; k < K_N; k++) {
		if (!hc_listed(kinds, k_names[k]))
			continue;
		for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++)
			for (ci = 0; ci < 4; ci++) {
				struct ct_case c = { k, ip, hc_n - 1, ccomFloat32, ccomSum, counts[ci] };
				double t0 = hc_now();

				if (c.count == HC_BIG && ct_blocked(k))
					c.count = HC_BIG / (size_t)hc_n + 1;
				cases++;
				if (ct_case_run(comm, &c, hc_rank, hc_n, sb, rb, bufsz)) {
					fails++;
					printf("FAIL rank %d: %s %s count %zu\n", hc_rank, k_names[k],
					       ip ? "in-place" : "out-of-place", c.count);
					if (ccomCommGetAsyncError(comm, &(ccomResult_t){ 0 }) != ccomSuccess)
						goto out;
				} else if (c.count >= 1000) {
					printf("ok rank %d: %s %s count %zu (%.1f s)\n", hc_rank, k_names[k],
					       ip ? "in-place" : "out-of-place", c.count, hc_now() - t0);
				}
			}
	}
out:
	printf("%s rank %d of %d: %d cases, %d failed\n", fails ? "FAIL" : "PASS", hc_rank, hc_n,
	       cases, fails);
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return fails ? 1 : 0;
}

/* Fills, reduces and checks @count floats of AllReduce over @comm. */
static ccomResult_t hc_allreduce(ccomComm_t comm, float *buf, size_t count, int rank, int n,
				 int *wrong)
{
	ccomResult_t res;
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = (float)ct_in(rank, i, ccomSum);
	res = ccomAllReduce(buf, buf, count, ccomFloat32, ccomSum, comm, NULL);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	*wrong = 0;
	if (res != ccomSuccess)
		return res;
	for (i = 0; i < count; i++)
		if (!ct_same(buf[i], ct_reduce(n, i, ccomFloat32, ccomSum), ccomFloat32)) {
			fprintf(stderr, "FAIL rank %d: AllReduce element %zu is %g, want %g\n", rank, i,
				buf[i], ct_reduce(n, i, ccomFloat32, ccomSum));
			*wrong = 1;
			break;
		}
	return res;
}

static int run_allreduce(size_t mib, int iters)
{
	size_t count = (mib << 20) / sizeof(float);
	ccomComm_t comm;
	ccomResult_t res;
	int it, wrong;
	float *buf;
	double t0;

	if (hc_init(&comm))
		return 2;
	buf = malloc(count * sizeof(float));
	if (!buf)
		return 2;
	for (it = 0; it < iters; it++) {
		t0 = hc_now();
		res = hc_allreduce(comm, buf, count, hc_rank, hc_n, &wrong);
		if (wrong)
			return 1;
		if (res != ccomSuccess) {
			const char *msg = ccomGetLastError(comm);
			int named = strstr(msg, "rank ") != NULL;

			printf("%s rank %d: AllReduce %zu MiB #%d failed after %.1f s: %s: %s\n",
			       named ? "FAILED-NAMED" : "FAIL", hc_rank, mib, it, hc_now() - t0,
			       ccomGetErrorString(res), msg);
			ccomCommAbort(comm);
			free(buf);
			return named ? 3 : 1;
		}
		printf("ok rank %d: AllReduce %zu MiB #%d correct in %.1f s\n", hc_rank, mib, it,
		       hc_now() - t0);
	}
	ccomCommDestroy(comm);
	free(buf);
	return 0;
}

static int run_loss(int victim, int hosts, const char *mark)
{
	size_t count = (64u << 20) / sizeof(float);
	const char *to = getenv("CCOM_OP_TIMEOUT"), *pt = getenv("CCOM_PEER_TIMEOUT");
	int ppn, lost[64], nlost = 0, failed[64], nf = 64, i, wrong, named, in_error;
	double t0, secs, limit = to ? atof(to) : 300;
	const char *bound = "CCOM_OP_TIMEOUT";
	ccomComm_t comm, shrunk;
	ccomResult_t res;
	float *buf;
	char want[32];

	if (hosts < 2 || victim < 0 || victim >= hosts) {
		fprintf(stderr, "FAIL: loss needs HOSTS >= 2 and a victim host below it\n");
		return 2;
	}
	if (hc_init(&comm))
		return 2;
	ppn = hc_n / hosts;
	for (i = victim * ppn; i < (victim + 1) * ppn && nlost < 64; i++)
		lost[nlost++] = i;
	buf = malloc(count * sizeof(float));
	if (!buf)
		return 2;
	/* One correct AllReduce first: the job works before the host goes. */
	res = hc_allreduce(comm, buf, 1024, hc_rank, hc_n, &wrong);
	if (res != ccomSuccess || wrong) {
		printf("FAIL rank %d: the AllReduce before the loss failed: %s\n", hc_rank,
		       ccomGetLastError(comm));
		return 1;
	}
	if (hc_rank == victim * ppn) {
		/* Power the guest off while the 64 MiB AllReduce runs. */
		if (fork() == 0) {
			FILE *f;

			sleep(2);
			printf("rank %d: powering this guest off now\n", hc_rank);
			fflush(stdout);
			/* Tells tools/vm/hosts this guest goes on purpose: it returns without it. */
			f = mark ? fopen(mark, "w") : NULL;
			if (f)
				fclose(f);
			f = fopen("/proc/sysrq-trigger", "w");
			if (f) {
				fputs("o", f);
				fclose(f);
			}
			_exit(0);
		}
	}
	t0 = hc_now();
	res = hc_allreduce(comm, buf, count, hc_rank, hc_n, &wrong);
	secs = hc_now() - t0;
	if (res == ccomSuccess) {
		printf("FAIL rank %d: the 64 MiB AllReduce %s after %.1f s although host %d was lost\n",
		       hc_rank, wrong ? "gave a wrong result" : "succeeded", secs, victim);
		return 1;
	}
	printf("rank %d: 64 MiB AllReduce failed after %.1f s: %s: %s\n", hc_rank, secs,
	       ccomGetErrorString(res), ccomGetLastError(comm));
	/*
	 * A host that vanishes sends no FIN or RST: the survivors' keepalive
	 * probes go unanswered and CCOM_PEER_TIMEOUT ends the op (the victim
	 * powers off 2 s in); plus the abort's unwinding on a loaded guest.
	 */
	if (pt && atof(pt) > 0 && atof(pt) < limit) {
		limit = atof(pt) + 2;
		bound = "CCOM_PEER_TIMEOUT (+ 2 s before the power-off)";
	}
	if (secs > limit + 30) {
		printf("FAIL rank %d: the failure took %.1f s, more than %s = %.0f s + 30 s\n", hc_rank,
		       secs, bound, limit);
		return 1;
	}
	/* The error names a lost rank; the failed ranks are exactly the lost host's. */
	for (i = 0; i < nlost; i++) {
		snprintf(want, sizeof(want), "rank %d", lost[i]);
		if (strstr(ccomGetLastError(comm), want))
			break;
	}
	in_error = i < nlost;
	named = in_error;
	ccomCommGetFailedRanks(comm, failed, &nf);
	if (nf != nlost)
		named = 0;
	for (i = 0; i < nf && i < 64; i++)
		if (failed[i] < lost[0] || failed[i] > lost[nlost - 1])
			named = 0;
	printf("rank %d: the error %s the lost ranks %d..%d; ccomCommGetFailedRanks lists %d rank(s)",
	       hc_rank, in_error ? "names one of" : "names none of", lost[0], lost[nlost - 1], nf);
	for (i = 0; i < nf && i < 64; i++)
		printf(" %d", failed[i]);
	printf("\n");
	res = ccomCommShrink(comm, lost, nlost, &shrunk, NULL, CCOM_SHRINK_ABORT);
	if (res != ccomSuccess) {
		printf("FAIL rank %d: ccomCommShrink without ranks %d..%d: %s: %s\n", hc_rank, lost[0],
		       lost[nlost - 1], ccomGetErrorString(res), ccomGetLastError(comm));
		return 1;
	}
	ccomCommUserRank(shrunk, &hc_rank);
	ccomCommCount(shrunk, &hc_n);
	res = hc_allreduce(shrunk, buf, (1u << 20) + 5, hc_rank, hc_n, &wrong);
	if (res != ccomSuccess || wrong) {
		printf("FAIL rank %d: AllReduce on the shrunk communicator: %s\n", hc_rank,
		       res ? ccomGetLastError(shrunk) : "wrong result");
		return 1;
	}
	printf("%s rank %d of %d survivors: host %d lost, failure in %.1f s%s, shrink works\n",
	       named ? "PASS" : "FAIL", hc_rank, hc_n, victim, secs,
	       named ? " naming it" : " NOT naming exactly the lost ranks");
	ccomCommDestroy(shrunk);
	ccomCommDestroy(comm);
	free(buf);
	return named ? 0 : 4;
}

/*
 * Rank @stalled holds the job back before AllReduce #1 until @release
 * exists: the others issue it and wait, which is the hang `ccomctl job`
 * must localise (op, collective, the rank that has not issued it).
 */
static int run_stall(int stalled, const char *release)
{
	size_t count = (1u << 20) / sizeof(float);
	ccomComm_t comm;
	ccomResult_t res;
	int it, i, wrong;
	float *buf;

	if (hc_init(&comm))
		return 2;
	buf = malloc(count * sizeof(float));
	if (!buf)
		return 2;
	for (it = 0; it < 2; it++) {
		if (it == 1 && hc_rank == stalled) {
			printf("stalled rank %d before AllReduce #1 until %s exists\n", hc_rank,
			       release);
			for (i = 0; i < 3000 && access(release, F_OK); i++)
				usleep(100 * 1000);
			if (i == 3000) {
				printf("FAIL rank %d: %s did not appear within 300 s\n", hc_rank,
				       release);
				ccomCommAbort(comm);
				return 1;
			}
		}
		res = hc_allreduce(comm, buf, count, hc_rank, hc_n, &wrong);
		if (res != ccomSuccess || wrong) {
			printf("FAIL rank %d: AllReduce #%d: %s\n", hc_rank, it,
			       res ? ccomGetLastError(comm) : "wrong result");
			ccomCommAbort(comm);
			return 1;
		}
		printf("ok rank %d: AllReduce #%d correct\n", hc_rank, it);
	}
	ccomCommDestroy(comm);
	free(buf);
	return 0;
}

/* Reads the @size bytes of @path once it exists, waiting up to 120 s. */
static int hc_read_file(const char *path, void *buf, size_t size)
{
	int i;

	for (i = 0; i < 1200; i++) {
		FILE *f = fopen(path, "rb");

		if (f) {
			size_t got = fread(buf, 1, size, f);

			fclose(f);
			if (got == size)
				return 0;
		}
		usleep(100 * 1000);
	}
	return -1;
}

static int run_scalable(const char *dir)
{
	const char *rs = getenv("CCOM_RANK"), *ns = getenv("CCOM_NRANKS");
	int rank = rs ? atoi(rs) : -1, n = ns ? atoi(ns) : 0, k, wrong;
	ccomUniqueId ids[2];
	char path[512], tmp[520];
	ccomComm_t comm;
	ccomResult_t res;
	float *buf;

	if (n < 2 || rank < 0 || rank >= n) {
		fprintf(stderr, "FAIL: scalable needs CCOM_RANK and CCOM_NRANKS (>= 2)\n");
		return 2;
	}
	/* A fresh root per id, on this host: not the launcher's address. */
	unsetenv("CCOM_COMM_ID");
	for (k = 0; k < 2; k++) {
		if (rank != k * n / 2)
			continue;
		res = ccomGetUniqueId(&ids[k]);
		snprintf(path, sizeof(path), "%s/id.%d", dir, k);
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		FILE *f = res == ccomSuccess ? fopen(tmp, "wb") : NULL;

		if (!f || fwrite(&ids[k], sizeof(ids[k]), 1, f) != 1 || fclose(f) ||
		    rename(tmp, path)) {
			fprintf(stderr, "FAIL rank %d: cannot publish id %d in %s: %s\n", rank, k, path,
				res ? ccomGetLastError(NULL) : strerror(errno));
			return 2;
		}
	}
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/id.%d", dir, k);
		if (hc_read_file(path, &ids[k], sizeof(ids[k]))) {
			fprintf(stderr, "FAIL rank %d: no id %s after 120 s\n", rank, path);
			return 2;
		}
	}
	res = ccomCommInitRankScalable(&comm, n, rank, 2, ids, NULL);
	if (res != ccomSuccess) {
		printf("FAIL rank %d: ccomCommInitRankScalable with 2 ids: %s: %s\n", rank,
		       ccomGetErrorString(res), ccomGetLastError(NULL));
		return 1;
	}
	buf = malloc(((1u << 20) + 5) * sizeof(float));
	if (!buf)
		return 2;
	res = hc_allreduce(comm, buf, (1u << 20) + 5, rank, n, &wrong);
	if (res != ccomSuccess || wrong) {
		printf("FAIL rank %d: AllReduce after the scalable init: %s\n", rank,
		       res ? ccomGetLastError(comm) : "wrong result");
		return 1;
	}
	printf("PASS rank %d of %d: 2 ids, AllReduce correct\n", rank, n);
	ccomCommDestroy(comm);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "matrix"))
		return run_matrix(argc > 2 ? argv[2] : NULL);
	if (argc == 4 && !strcmp(argv[1], "allreduce"))
		return run_allreduce(strtoul(argv[2], NULL, 10), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "scalable"))
		return run_scalable(argv[2]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "loss"))
		return run_loss(atoi(argv[2]), atoi(argv[3]), argc == 5 ? argv[4] : NULL);
	if (argc == 4 && !strcmp(argv[1], "stall"))
		return run_stall(atoi(argv[2]), argv[3]);
	fprintf(stderr, "usage: hosts_coll matrix [KIND,...] | allreduce MIB ITERS | loss VICTIM_HOST HOSTS [MARK] |\n"
		"       scalable DIR | stall RANK FILE\n");
	return 2;
}
