// SPDX-License-Identifier: MIT
/*
 * Description: the CMA path (libccom/coll/cma.c, process_vm_readv/writev
 * on malloc() buffers).  With CCOM_CMA=1 on 2, 3 and 4 ranks: the small
 * collective matrix, then AllReduce, Reduce, ReduceScatter, AllGather,
 * Broadcast, AlltoAll, Gather and Scatter of 65,549 elements (at least
 * 64 KiB per rank) for every dtype x op, out-of-place, in-place, and
 * mixed (odd ranks in place), every root for the rooted ones, and 1 Mi + 3 fp32
 * AllReduce, each checked against the reference and for overruns; every
 * rank must have run the CMA path (CCOM_CMA_P2P_MIN_BYTES=1: the small
 * matrix's Send/Recv rings of 1 to 1023 elements move on it too).  Then the permission matrix, with
 * CCOM_CMA=1 asked for on every rank: a seccomp filter on one of 3 ranks
 * making process_vm_readv/writev fail with EPERM, the same on both of 2
 * ranks with ENOSYS, and one rank of 3 with CCOM_CMA=0: each time every
 * rank must leave the path off from init (no CMA operation, the reason
 * naming the rank) and every collective must still succeed.  Last,
 * CCOM_CMA=auto on 2 ranks: 60 AllReduces of 1 MiB out of place, then 60
 * in place, correct whichever path the measurement keeps; both verdicts
 * (in place measured apart) land in the cache file (CCOM_CMA_CALIB_FILE)
 * as "0 20 1|-1" and "8 20 1|-1", a second communicator starts with
 * them, a file an hour old (past CCOM_CMA_CALIB_TTL) is measured again
 * and rewritten, a verdict added to a young file keeps its time, and a
 * malformed cache is ignored.  With CMA_TEST_YAMA=1 (in a
 * throwaway guest: it changes kernel.yama.ptrace_scope and restores it;
 * "only": nothing else):
 * ranks that dropped to uid 65534 (root's CAP_SYS_PTRACE passes Yama),
 * scope 1 with 2 sibling ranks (on, through PR_SET_PTRACER) and with 3
 * (off), scope 2 (off).
 */
#include <grp.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "coll_cma.h"
#include "coll_matrix.h"

#include "coll/cma.h"
#include "core/comm.h"

#define CMA_COUNT 65549u	/* >= 64 KiB per rank even for int8 */

struct cma_job {
	struct ct_job ct;
	int expect_on;		/* the path must run (1) or stay off (0); auto: 2 decided, 3 all, 5 one, 4 none cached */
	const char *why;	/* off: what the reason must contain */
	int light;		/* one AllReduce instead of the matrices (slow guests) */
};

struct cma_job;
static int run_case(struct cma_job *j, int n, const char *what);

static int cma_deny_rank = -1, cma_deny_errno, cma_off_rank = -1, cma_nobody;

/* at_init: the denied rank installs a filter failing both CMA calls with cma_deny_errno. */
static void cma_at_init(int rank)
{
	if (cma_deny_rank == rank || cma_deny_rank == -2)
		cma_seccomp_deny(rank, cma_deny_errno);
	if (cma_off_rank == rank)
		setenv("CCOM_CMA", "0", 1);
	/* A process whose uid changed is not dumpable: no one but root could read it. */
	if (cma_nobody && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			   setresuid(65534, 65534, 65534) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)))
		fprintf(stderr, "rank %d: cannot drop to uid 65534: %s\n", rank, strerror(errno));
}

static int yama_set(const char *v)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "w");

	return f && fputs(v, f) >= 0 && !fclose(f) ? 0 : -1;
}

/* Yama ptrace_scope 1 and 2, in a guest only (CMA_TEST_YAMA=1). */
static int cma_yama(struct cma_job *j)
{
	char old[8] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int rc = T_FAIL;

	if (!f || !fgets(old, sizeof(old), f)) {
		fprintf(stderr, "CMA_TEST_YAMA=1 but no readable ptrace_scope\n");
		return T_FAIL;
	}
	fclose(f);
	T_CHECK(!yama_set("1"), "cannot set ptrace_scope 1");
	j->light = 1;
	cma_nobody = 1;	/* root's CAP_SYS_PTRACE passes Yama 1 and 2 */
	j->expect_on = 1;
	if (run_case(j, 2, "uid 65534, Yama ptrace_scope 1, 2 sibling ranks: on (PR_SET_PTRACER)"))
		goto out;
	j->expect_on = 0;
	j->why = "could not read";
	if (run_case(j, 3, "uid 65534, Yama ptrace_scope 1, 3 ranks: all off from init"))
		goto out;
	if (yama_set("2"))
		goto out;
	if (run_case(j, 2, "uid 65534, Yama ptrace_scope 2: all off from init"))
		goto out;
	rc = T_PASS;
out:
	cma_nobody = 0;
	j->light = 0;
	if (yama_set(old))
		fprintf(stderr, "could not restore ptrace_scope %s\n", old);
	return rc;
}

static int cma_cases(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz)
{
	static const int kinds[] = { K_AR, K_RED, K_RS, K_AG, K_BC, K_A2A, K_GA, K_SC };
	struct ct_case c;
	int k, dt, op, ip, root;

	for (k = 0; k < 8; k++)
		for (dt = 0; dt < ccomNumTypes; dt++)
			for (op = 0; op < (ct_is_reduction(kinds[k]) ? ccomNumOps : 1); op++)
				for (ip = 0; ip < 3; ip++) {
					/* ip 2: mixed, the odd ranks in place */
					root = (dt + op + ip) % n;
					c = (struct ct_case){ kinds[k], ip == 2 ? rank % 2 : ip, root,
							      (ccomDataType_t)dt, (ccomRedOp_t)op,
							      CMA_COUNT };
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

static int cma_rank(int rank, int n, void *arg)
{
	struct cma_job *j = arg;
	size_t bufsz = ((size_t)CT_BIG + 8) * 8 * 2 + 4096;
	char *sb = malloc(bufsz), *rb = malloc(bufsz);
	const char *why;
	ccomComm_t comm;
	int rc;

	if (!sb || !rb || ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	why = ccom_cma_describe(comm);
	if (j->expect_on >= 0 && !j->expect_on && (strncmp(why, "off", 3) || !strstr(why, j->why))) {
		fprintf(stderr, "rank %d/%d: CMA state \"%s\", want off because \"%s\"\n", rank, n,
			why, j->why);
		return T_FAIL;
	}
	if (j->light) {
		struct ct_case c = { K_AR, 0, 0, ccomFloat32, ccomSum, CMA_COUNT };

		rc = ct_case_run(comm, &c, rank, n, sb, rb, bufsz);
	} else {
		rc = ct_matrix_small(comm, rank, n, sb, rb, bufsz);
		if (!rc)
			rc = cma_cases(comm, rank, n, sb, rb, bufsz);
	}
	if (!rc && j->expect_on == 1 && ccom_cma_ops(comm) == 0) {
		fprintf(stderr, "rank %d/%d: CCOM_CMA=1 but the CMA path never ran (%s)\n", rank, n,
			why);
		rc = T_FAIL;
	}
	if (!rc && j->expect_on == 0 && ccom_cma_ops(comm) != 0) {
		fprintf(stderr, "rank %d/%d: CMA is off (%s) but ran %llu operations\n", rank, n, why,
			(unsigned long long)ccom_cma_ops(comm));
		rc = T_FAIL;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return rc;
}

/*
 * CCOM_CMA=auto: AUTO_OPS AllReduces of 1 MiB out of place, then as many in
 * place, each checked.  Enough for a race with all its extra turns and the
 * operation that decides, after (in place) up to a check-in's wait.  A
 * slow re-check (a noisy machine: CI once restarted the out-of-place race
 * late, its turns ran on into the in-place calls, and the in-place race
 * had no verdict after 60) measures again: each phase then goes on until
 * every rank keeps a verdict for it, up to AUTO_MAX_OPS.
 */
#define AUTO_OPS (2 * (CCOM_RACE_TURNS + CCOM_RACE_EXTRA_MAX) * CCOM_RACE_RUN + 20)
#define AUTO_MAX_OPS (5 * AUTO_OPS)
_Static_assert(AUTO_OPS == 60, "the header says 60");

/* One AllReduce of 1 MiB, checked (op @k: the values differ from op to op). */
static int cma_auto_op(float *src, float *out, size_t count, int rank, int n, int k,
		       ccomComm_t comm)
{
	size_t i;

	for (i = 0; i < count; i++)
		src[i] = (float)(rank + 1 + (int)(i % 7) + k);
	if (ccomAllReduce(src, out, count, ccomFloat32, ccomSum, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess) {
		fprintf(stderr, "rank %d: op %d: %s\n", rank, k, ccomGetLastError(comm));
		return T_FAIL;
	}
	for (i = 0; i < count; i++)
		if (out[i] != (float)(n * (n + 1) / 2 + n * ((int)(i % 7) + k))) {
			fprintf(stderr, "rank %d: auto op %d element %zu is %g\n", rank, k, i, out[i]);
			return T_FAIL;
		}
	return T_PASS;
}

/* Has every rank a verdict for this phase (out of or in place)?  Asked collectively. */
static int cma_auto_all_kept(ccomComm_t comm, bool inplace, int32_t *all)
{
	int32_t kept = ccom_cma_kept(comm, CCOM_COLL_ALLREDUCE, 1u << 20, inplace);

	if (ccomAllReduce(&kept, all, 1, ccomInt32, ccomMin, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess)
		return T_FAIL;
	return T_PASS;
}

static int cma_auto_rank(int rank, int n, void *arg)
{
	struct cma_job *j = arg;
	size_t count = (1u << 20) / sizeof(float);
	float *in = malloc(count * sizeof(float)), *out = malloc(count * sizeof(float));
	int32_t all = 0;
	ccomComm_t comm;
	int k = 0, ph, n_ph, rc = T_PASS;

	if (!in || !out || ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	for (ph = 0; ph < 2 && !rc; ph++) {	/* out of place, then in place */
		for (n_ph = 0, all = 0; !rc && !all && n_ph < AUTO_MAX_OPS; n_ph++, k++) {
			rc = cma_auto_op(ph ? out : in, out, count, rank, n, k, comm);
			if (!rc && n_ph + 1 >= AUTO_OPS)
				rc = cma_auto_all_kept(comm, ph, &all);
		}
		if (!rc && !all) {
			fprintf(stderr, "rank %d: CCOM_CMA=auto kept no verdict %s after %d AllReduces\n",
				rank, ph ? "in place" : "out of place", AUTO_MAX_OPS);
			rc = T_FAIL;
		} else if (!rc && n_ph > AUTO_OPS && rank == 0) {
			printf("2 ranks, CCOM_CMA=auto: the %s verdict came after %d AllReduces\n",
			       ph ? "in-place" : "out-of-place", n_ph);
		}
	}
	if (!rc && j->expect_on == 2 && ccom_cma_decided(comm) < 2) {
		fprintf(stderr, "rank %d: CCOM_CMA=auto decided %llu races, out of place and in place, want 2\n",
			rank, (unsigned long long)ccom_cma_decided(comm));
		rc = T_FAIL;
	}
	if (!rc && j->expect_on == 3 && ccom_cma_cached(comm) != 2) {
		fprintf(stderr, "rank %d: CCOM_CMA=auto took %d verdicts from the cache, want 2\n",
			rank, ccom_cma_cached(comm));
		rc = T_FAIL;
	}
	if (!rc && j->expect_on == 5 && ccom_cma_cached(comm) != 1) {
		fprintf(stderr, "rank %d: CCOM_CMA=auto took %d verdicts from the cache, want 1\n",
			rank, ccom_cma_cached(comm));
		rc = T_FAIL;
	}
	if (!rc && j->expect_on == 4 && ccom_cma_cached(comm) != 0) {
		fprintf(stderr, "rank %d: CCOM_CMA=auto took verdicts from a malformed or stale cache\n",
			rank);
		rc = T_FAIL;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	ccomCommDestroy(comm);
	free(in);
	free(out);
	return rc;
}

/* The cache file holds AllReduce verdicts for 2^20 bytes per rank, out of place and in place. */
static int cma_cache_line(const char *path)
{
	char line[128] = "";
	FILE *f = fopen(path, "r");
	int oop = 0, ip = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		oop += !strcmp(line, "0 20 1\n") || !strcmp(line, "0 20 -1\n");
		ip += !strcmp(line, "8 20 1\n") || !strcmp(line, "8 20 -1\n");
	}
	fclose(f);
	if (oop != 1 || ip != 1)
		fprintf(stderr, "cache %s: %d lines \"0 20 1|-1\", %d \"8 20 1|-1\", want one each\n",
			path, oop, ip);
	return oop == 1 && ip == 1;
}

static int run_case(struct cma_job *j, int n, const char *what)
{
	double t0 = t_now();

	if (ct_run(&j->ct, n, cma_rank, 280))
		return T_FAIL;
	printf("%d ranks, %s: passed in %.1f s\n", n, what, t_now() - t0);
	fflush(stdout);
	return T_PASS;
}

int main(void)
{
	/* Send/Recv from 1 byte: the small matrix's sendrecv cases on CMA too. */
	struct cma_job j = { .ct = { .env = { "CCOM_CMA=1", "CCOM_CMA_P2P_MIN_BYTES=1" },
				     .at_init = cma_at_init },
			     .expect_on = 1 };
	static char cache[128];
	struct timeval old[2] = { { 0 } };
	char file2[160];
	struct stat st;
	FILE *f;
	int n;

	if (getenv("CMA_TEST_YAMA") && !strcmp(getenv("CMA_TEST_YAMA"), "only"))
		return cma_yama(&j);
	for (n = 2; n <= 4; n++)
		if (run_case(&j, n, "CCOM_CMA=1, malloc() buffers, CMA ran"))
			return T_FAIL;
	j.expect_on = 0;
#ifdef __x86_64__
	cma_deny_rank = 1;
	cma_deny_errno = EPERM;
	j.why = "local rank 1 could not read";
	if (run_case(&j, 3, "seccomp EPERM on rank 1: all off from init"))
		return T_FAIL;
	cma_deny_rank = -2;
	cma_deny_errno = ENOSYS;
	j.why = "Function not implemented";
	if (run_case(&j, 2, "seccomp ENOSYS on every rank: all off from init"))
		return T_FAIL;
	cma_deny_rank = -1;
#endif
	cma_off_rank = 2;
	j.why = "local rank 2 has CCOM_CMA=0";
	if (run_case(&j, 3, "CCOM_CMA=0 on rank 2 only: all off from init"))
		return T_FAIL;
	cma_off_rank = -1;
	if (getenv("CMA_TEST_YAMA") && !strcmp(getenv("CMA_TEST_YAMA"), "1") && cma_yama(&j))
		return T_FAIL;
	snprintf(cache, sizeof(cache), "CCOM_CMA_CALIB_FILE=/tmp/ccom-test-cma-calib-%d", (int)getpid());
	/* The library appends the local rank count: 2 ranks' verdicts are in -2. */
	snprintf(file2, sizeof(file2), "%s-2", cache + strlen("CCOM_CMA_CALIB_FILE="));
	unlink(file2);
	j.ct.env[0] = "CCOM_CMA=auto";
	j.ct.env[1] = cache;
	j.expect_on = 2;
	if (ct_run(&j.ct, 2, cma_auto_rank, 280))
		return T_FAIL;
	T_CHECK(cma_cache_line(file2), "no verdict cached in the 2-rank file");
	printf("2 ranks, CCOM_CMA=auto: at least %d AllReduces of 1 MiB out of place and %d in place correct, both verdicts cached\n",
	       AUTO_OPS, AUTO_OPS);
	j.expect_on = 3;
	if (ct_run(&j.ct, 2, cma_auto_rank, 280))
		return T_FAIL;
	printf("2 ranks, CCOM_CMA=auto: a second communicator starts with both cached verdicts\n");
	/* Written an hour ago, past CCOM_CMA_CALIB_TTL's 600 s: measured again, rewritten. */
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 3600;
	T_CHECK(!utimes(file2, old), "utimes %s: %s", file2, strerror(errno));
	j.expect_on = 4;
	if (ct_run(&j.ct, 2, cma_auto_rank, 280))
		return T_FAIL;
	T_CHECK(!stat(file2, &st) && time(NULL) - st.st_mtime < 600 && cma_cache_line(file2),
		"the stale cache %s was not rewritten with the new verdicts", file2);
	printf("2 ranks, CCOM_CMA=auto: a cache older than CCOM_CMA_CALIB_TTL is measured again and rewritten\n");
	/*
	 * A young file (300 s) with the out-of-place verdict only: the in-place
	 * one is measured and added, and the file keeps its time (adding a
	 * verdict must not make the old one young again).
	 */
	f = fopen(file2, "w");
	T_CHECK(f && fputs("0 20 -1\n", f) >= 0 && !fclose(f), "cannot write the cache");
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 300;
	T_CHECK(!utimes(file2, old), "utimes %s: %s", file2, strerror(errno));
	j.expect_on = 5;
	if (ct_run(&j.ct, 2, cma_auto_rank, 280))
		return T_FAIL;
	T_CHECK(!stat(file2, &st) && cma_cache_line(file2) && st.st_mtime == old[1].tv_sec,
		"adding the in-place verdict to %s failed or changed its time (%lld, was %lld)", file2,
		(long long)st.st_mtime, (long long)old[1].tv_sec);
	printf("2 ranks, CCOM_CMA=auto: a verdict added to a young cache keeps the file's time\n");
	f = fopen(file2, "w");
	T_CHECK(f && fputs("0 20 7\n", f) >= 0 && !fclose(f), "cannot write the cache");
	j.expect_on = 4;
	if (ct_run(&j.ct, 2, cma_auto_rank, 280))
		return T_FAIL;
	unlink(file2);
	printf("2 ranks, CCOM_CMA=auto: a malformed cache is ignored\n");
	return T_PASS;
}
