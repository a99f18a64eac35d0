// SPDX-License-Identifier: MIT
/*
 * Description: a rank of the second host dies during a hierarchical
 * AllReduce (simulated hosts in network namespaces; needs root and
 * iproute2, skipped otherwise).  2 hosts x 2 ranks, CCOM_ALGO=rail and
 * CCOM_ALGO=rab, the victim rank 3 (a rail member of host 1) and rank 2
 * (host 1's leader): after one good AllReduce the victim exits without a
 * word while the others run a 4 MiB AllReduce; every survivor must fail
 * within 2 s with an error, and the survivors that talk to the victim
 * directly (its host peer and, for rail, its rail partner; for rab the
 * leader of host 0) must name it ("rank N").
 */
#include <time.h>

#include "hier_util.h"

#define COUNT (1u << 20)

static int ready[2];

struct dead_case {
	const char *algo;
	int victim;
	int names[HT_MAX_RANKS];	/* 1: this survivor must name the victim */
};

static int body(ccomComm_t comm, int rank, int nranks, void *arg, uint64_t *result)
{
	const struct dead_case *dc = arg;
	float *in = calloc(COUNT, sizeof(float)), *out = calloc(COUNT, sizeof(float));
	struct timespec t0, t1;
	ccomResult_t res;
	char want[32];

	if (!in || !out)
		return 1;
	if (nett_sync(comm, ccomAllReduce(in, out, COUNT, ccomFloat32, ccomSum, comm, NULL),
		      "first allreduce", rank))
		return 1;
	if (nett_die_when_ready(rank, nranks, dc->victim, ready))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	res = ccomAllReduce(in, out, COUNT, ccomFloat32, ccomSum, comm, NULL);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*result = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
	printf("  rank %d: after rank %d died: %s after %.3f s: %s\n", rank, dc->victim,
	       ccomGetErrorString(res), (double)*result / 1e6, ccomGetLastError(comm));
	fflush(stdout);
	snprintf(want, sizeof(want), "rank %d", dc->victim);
	if (res == ccomSuccess) {
		fprintf(stderr, "rank %d: the AllReduce succeeded without rank %d\n", rank, dc->victim);
		return 1;
	}
	if (dc->names[rank] && !strstr(ccomGetLastError(comm), want)) {
		fprintf(stderr, "rank %d: the error does not name %s\n", rank, want);
		return 1;
	}
	ccomCommAbort(comm);
	return 0;
}

int main(void)
{
	/* Hosts {0, 0, 1, 1}: rank 3's host peer is 2, its rail partner 1; host leaders 0 and 2. */
	static const struct dead_case cases[] = {
		{ "CCOM_ALGO=rail", 3, { 0, 1, 1, 0 } },
		{ "CCOM_ALGO=rail", 2, { 1, 0, 0, 1 } },
		{ "CCOM_ALGO=rab", 3, { 0, 0, 1, 0 } },
		{ "CCOM_ALGO=rab", 2, { 1, 0, 0, 1 } },
	};
	int c, r, rc, fails = 0;

	rc = ht_hosts_up(2);
	if (rc)
		return rc;
	for (c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); c++) {
		struct ht_job j = { .nranks = 4, .host_of = { 0, 0, 1, 1 }, .fn = body,
				    .arg = (void *)&cases[c], .fn_ends_comm = 1,
				    .allow_fail = 1u << cases[c].victim };

		if (pipe(ready))
			return 1;
		j.env[0] = cases[c].algo;
		j.env[1] = "CCOM_OP_TIMEOUT=30";
		printf("%s, rank %d dies:\n", cases[c].algo, cases[c].victim);
		rc = ht_run(&j);
		close(ready[0]);
		close(ready[1]);
		for (r = 0; r < 4 && !rc; r++)
			if (r != cases[c].victim && j.result[r] > 2000000) {
				fprintf(stderr, "FAIL: rank %d took %.3f s to fail (limit 2 s)\n", r,
					(double)j.result[r] / 1e6);
				rc = 1;
			}
		printf("%s: %s, rank %d dies mid-AllReduce\n", rc ? "FAIL" : "ok", cases[c].algo,
		       cases[c].victim);
		fails += rc != 0;
	}
	printf("%s: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}
