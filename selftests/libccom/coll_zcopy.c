// SPDX-License-Identifier: MIT
/*
 * Description: the zero-copy direct AllReduce, ReduceScatter and AllGather
 * on ccomMemAlloc buffers.  On 2, 3, 4 and 8 ranks whose buffers all come
 * from ccomMemAlloc: the small collective matrix (every collective, dtype,
 * op, in/out-of-place, counts 0, 1, 7, 1023: the staged paths on shareable
 * memory), then AllReduce, ReduceScatter and AllGather of 65,549 elements
 * per block for every dtype x op x in/out-of-place, and AllReduce of
 * 1 Mi + 3 fp32 (large enough for the zero-copy path), checked against
 * the reference and for overruns; every rank must have run the zero-copy
 * path (its counter in the host segment state).  Then 3 ranks where rank 1
 * passes malloc() buffers: every rank must fall back to the staged engine
 * (counter stays 0) with correct results.  Last, 3 ranks cycle 60
 * AllReduces over 24 ccomMemAlloc buffers each (more than the 32 cached
 * peer mappings, an operation often pairing a cached buffer with a new
 * one), so that mappings are evicted while others are in use.
 */
#include "coll_matrix.h"

#include "core/comm.h"
#include "transport/shm.h"

#define ZC_COUNT 65549u		/* >= 64 KiB per rank even for int8 */

struct zc_job {
	struct ct_job ct;
	int malloc_rank;	/* this rank uses malloc() buffers, -1: none */
};

static uint64_t zc_ops(ccomComm_t comm)
{
	return comm->shm ? comm->shm->zcopy_ops : 0;
}

static int zc_cases(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz, int all)
{
	static const int kinds[] = { K_AR, K_RS, K_AG };
	struct ct_case c;
	int k, dt, op, ip;

	for (k = 0; k < 3; k++)
		for (dt = 0; dt < ccomNumTypes; dt++)
			for (op = 0; op < (kinds[k] == K_AG ? 1 : ccomNumOps); op++)
				for (ip = 0; ip < 2; ip++) {
					if (!all && (dt != ccomFloat32 || op != ccomSum))
						continue;
					c = (struct ct_case){ kinds[k], ip, 0, (ccomDataType_t)dt,
							      (ccomRedOp_t)op, ZC_COUNT };
					if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
						return T_FAIL;
				}
	for (ip = 0; ip < 2; ip++) {
		c = (struct ct_case){ K_AR, ip, 0, ccomFloat32, ccomSum, CT_BIG };
		if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
			return T_FAIL;
	}
	return T_PASS;
}

static int zc_rank(int rank, int n, void *arg)
{
	struct zc_job *j = arg;
	size_t bufsz = ((size_t)CT_BIG + 8) * 8 * 2 + 4096;
	int use_malloc = rank == j->malloc_rank, rc;
	ccomComm_t comm;
	char *sb = NULL, *rb = NULL;

	if (ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	if (use_malloc) {
		sb = malloc(bufsz);
		rb = malloc(bufsz);
	} else if (ccomMemAlloc(comm, (void **)&sb, bufsz) != ccomSuccess ||
		   ccomMemAlloc(comm, (void **)&rb, bufsz) != ccomSuccess) {
		fprintf(stderr, "rank %d: ccomMemAlloc: %s\n", rank, ccomGetLastError(comm));
		return T_FAIL;
	}
	if (!sb || !rb)
		return T_FAIL;
	rc = ct_matrix_small(comm, rank, n, sb, rb, bufsz);
	if (!rc)
		rc = zc_cases(comm, rank, n, sb, rb, bufsz, n <= 4 || !t_sanitizer());
	if (!rc && j->malloc_rank < 0 && zc_ops(comm) == 0) {
		fprintf(stderr, "rank %d/%d: every buffer is ccomMemAlloc memory but the zero-copy path never ran\n",
			rank, n);
		rc = T_FAIL;
	}
	if (!rc && j->malloc_rank >= 0 && zc_ops(comm) != 0) {
		fprintf(stderr, "rank %d/%d: rank %d uses malloc() buffers but the zero-copy path ran %llu times\n",
			rank, n, j->malloc_rank, (unsigned long long)zc_ops(comm));
		rc = T_FAIL;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	if (use_malloc) {
		free(sb);
		free(rb);
	} else {
		ccomMemFree(comm, sb);
		ccomMemFree(comm, rb);
	}
	ccomCommDestroy(comm);
	return rc;
}

#define ZC_NBUF 24
#define ZC_CYCLE_COUNT 65536u	/* fp32: 256 KiB per buffer */

static int zc_cycle_rank(int rank, int n, void *arg)
{
	struct zc_job *j = arg;
	size_t bytes = ZC_CYCLE_COUNT * sizeof(float), i;
	float *b[ZC_NBUF], *in, *out;
	ccomComm_t comm;
	int k, rc = T_PASS;

	if (ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	for (k = 0; k < ZC_NBUF; k++)
		if (ccomMemAlloc(comm, (void **)&b[k], bytes) != ccomSuccess)
			return T_FAIL;
	for (k = 0; k < 60 && !rc; k++) {
		in = b[k % ZC_NBUF];
		out = b[(k * 7 + 5) % ZC_NBUF];
		if (out == in)
			out = b[(k + 1) % ZC_NBUF];
		for (i = 0; i < ZC_CYCLE_COUNT; i++)
			in[i] = (float)(rank + 1 + (int)(i % 5) + k);
		if (ccomAllReduce(in, out, ZC_CYCLE_COUNT, ccomFloat32, ccomSum, comm, NULL) !=
		    ccomSuccess || ccomCommSynchronize(comm) != ccomSuccess) {
			fprintf(stderr, "rank %d: op %d: %s\n", rank, k, ccomGetLastError(comm));
			rc = T_FAIL;
			break;
		}
		for (i = 0; i < ZC_CYCLE_COUNT; i++) {
			float want = (float)(n * (n + 1) / 2 + n * ((int)(i % 5) + k));

			if (out[i] != want) {
				fprintf(stderr, "rank %d/%d: cycle op %d element %zu is %g, want %g\n",
					rank, n, k, i, out[i], want);
				rc = T_FAIL;
				break;
			}
		}
	}
	if (!rc && zc_ops(comm) < 60) {
		fprintf(stderr, "rank %d: only %llu of 60 AllReduces went zero-copy\n", rank,
			(unsigned long long)zc_ops(comm));
		rc = T_FAIL;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	for (k = 0; k < ZC_NBUF; k++)
		ccomMemFree(comm, b[k]);
	ccomCommDestroy(comm);
	return rc;
}

int main(void)
{
	static const int sizes[] = { 2, 3, 4, 8 };
	struct zc_job j = { .malloc_rank = -1 };
	double t0;
	int i;

	for (i = 0; i < 4; i++) {
		t0 = t_now();
		if (ct_run(&j.ct, sizes[i], zc_rank, 280))
			return T_FAIL;
		printf("%d ranks, ccomMemAlloc buffers: passed in %.1f s\n", sizes[i], t_now() - t0);
		fflush(stdout);
	}
	j.malloc_rank = 1;
	t0 = t_now();
	if (ct_run(&j.ct, 3, zc_rank, 280))
		return T_FAIL;
	printf("3 ranks, rank 1 on malloc() buffers: fallback passed in %.1f s\n", t_now() - t0);
	j.malloc_rank = -1;
	t0 = t_now();
	if (ct_run(&j.ct, 3, zc_cycle_rank, 280))
		return T_FAIL;
	printf("3 ranks, 60 AllReduces over 24 buffers each: passed in %.1f s\n", t_now() - t0);
	return T_PASS;
}
