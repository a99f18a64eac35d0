// SPDX-License-Identifier: MIT
/*
 * Description: an AlltoAll of 2 ranks where only one rank is in place,
 * with CCOM_KDEV=1 (the engine forced, so no automatic vote steers it):
 * every result is checked, 20 times in each direction (rank 0 in place
 * and rank 1 not, then the other way round).  The engine's in-place
 * schedule trades blocks with in-place peers only; before the mixed case
 * was sent to shm (coll/kdev_sched.c) the out-of-place rank got the wrong
 * block in 19-25 of 40 runs in a 6.12 guest.  Then the same under the
 * automatic choice (CCOM_KDEV unset, a private race cache), after 64 calls
 * with both ranks in place, which the kdev race measures: its engine turns
 * must run the engine (each rank's TRACE log shows in-place AlltoAlls on
 * the engine; before 2026-12-07 the tables' vote for shm ran shm in every
 * turn of the race, so none did).
 * Skips (77) without a usable /dev/nccom.
 */

#include "kdev_util.h"

#define PER (128 * 1024)	/* floats per block: 1 MiB per rank */
#define ITERS 20

/* Block p of rank r's input: r * 100 + p + (i % 7) / 2. */
static void fill(float *b, int rank)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < PER; i++)
			b[p * PER + i] = (float)(rank * 100 + p) + (float)(i % 7) / 2;
}

static int check(const float *b, int rank, int inplace_rank, int it)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < PER; i++)
			T_CHECK(b[p * PER + i] == (float)(p * 100 + rank) + (float)(i % 7) / 2,
				"rank %d (rank %d in place), run %d: block %d [%zu] = %g", rank,
				inplace_rank, it, p, i, b[p * PER + i]);
	return T_PASS;
}

static int mixed_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	float *a = malloc(2 * PER * sizeof(float)), *b = malloc(2 * PER * sizeof(float));
	ccomComm_t comm;
	int in, it;

	(void)n;
	T_CHECK(a && b, "malloc");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (it = 0; j->count && it < (int)j->count; it++) {
		fill(a, rank);
		T_CCOM(ccomAlltoAll(a, a, PER, ccomFloat32, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		if (check(a, rank, -1, it))
			return T_FAIL;
	}
	for (in = 0; in < 2; in++) {
		for (it = 0; it < ITERS; it++) {
			float *out = rank == in ? a : b;

			fill(a, rank);
			memset(b, 0, 2 * PER * sizeof(float));
			T_CCOM(ccomAlltoAll(a, out, PER, ccomFloat32, comm, NULL), ccomSuccess);
			T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
			if (check(out, rank, in, it))
				return T_FAIL;
		}
	}
	ccomCommDestroy(comm);
	free(a);
	free(b);
	return T_PASS;
}

/* The automatic choice's job: every rank's log (CCOM_DEBUG_FILE %p: its pid). */
static int auto_rank(int rank, int n, void *arg)
{
	char path[96], head[64];
	int engine;

	if (mixed_rank(rank, n, arg))
		return T_FAIL;
	snprintf(path, sizeof(path), "/tmp/kdev_mixed_a2a.%d.log", (int)getpid());
	/* kdev_sched.c's line for an operation on the engine (the job runs AlltoAlls only). */
	snprintf(head, sizeof(head), " %d elements: registrations", PER);
	engine = t_file_lines(path, head, NULL);
	T_CHECK(engine > 0, "rank %d: the race's engine turns ran no in-place AlltoAll on the engine (%s: %d)",
		rank, path, engine);
	unlink(path);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .nranks = 2, .env = { "CCOM_KDEV=1" } };
	char race[96], env_race[128];
	int err;

	KT_REQUIRE(2);
	if (kt_job_in_child(&j, mixed_rank, "kdev_mixed_a2a, the engine forced"))
		return T_FAIL;
	snprintf(race, sizeof(race), "/tmp/kdev_mixed_a2a.%d.cache", (int)getpid());
	unlink(race);
	snprintf(env_race, sizeof(env_race), "CCOM_KDEV_RACE_FILE=%s", race);
	unsetenv("CCOM_KDEV");
	unsetenv("CCOM_KDEV_MAP");
	unsetenv("CCOM_KDEV_MIN_BYTES");
	j = (struct ct_job){ .nranks = 2, .count = 64, .env = { env_race } };
	/* Each rank logs KDEV at TRACE to /tmp/kdev_mixed_a2a.<pid>.log (auto_rank() reads it). */
	setenv("CCOM_DEBUG", "TRACE", 1);
	setenv("CCOM_DEBUG_SUBSYS", "KDEV", 1);
	setenv("CCOM_DEBUG_FILE", "/tmp/kdev_mixed_a2a.%p.log", 1);
	err = kt_job_in_child(&j, auto_rank, "kdev_mixed_a2a, the automatic choice");
	unlink(race);
	return err;
}
