// SPDX-License-Identifier: MIT
/*
 * Description: the automatic kdev choice (CCOM_KDEV unset, 2 ranks, the
 * driver present).  A 16 KiB AllReduce stays on shm, a 1 MiB AllReduce and
 * an out-of-place 1 MiB AlltoAll run on the engine, an in-place 1 MiB
 * AlltoAll of 2 ranks runs on shm (by the ranks' vote in the exchange; the
 * engine wins there only from 16 MiB on), and so does
 * one where only rank 0 is in place (the ranks differ, the choice must
 * not).  Then again with the engine's calibration verdict (the cache
 * file of transport/kdev/calibrate.c, seeded) saying the engine is slow:
 * no collective runs on the engine (each size's first operation is the
 * race's staged trial; kdev_race tests the mapped path's turns there).
 * Every result is checked; which path ran is read from each rank's KDEV
 * trace log.  From 64 KiB the choice is
 * measured on the operations (tune/kdev_race.c, tested by kdev_race): its
 * cache (CCOM_KDEV_RACE_FILE) is seeded with the engine for the 1 MiB
 * AllReduce and the AlltoAlls, so these cases test the votes and the
 * calibration filter, not a timing.  Skips (77) without a usable
 * /dev/nccom.
 */
#include <sys/stat.h>

#include "kdev_util.h"

#define SMALL 4096		/* floats: 16 KiB */
#define BIG (256 * 1024)	/* floats: 1 MiB */

static char logdir[64];

static int check_allreduce(float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		T_CHECK(b[i] == (float)(3 + 2 * (i % 5)), "allreduce[%zu] = %g", i, b[i]);
	return T_PASS;
}

/* Block p of rank r's input: r * 100 + p + (i % 7) / 2. */
static void fill_a2a(float *b, int rank, size_t per)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < per; i++)
			b[p * per + i] = (float)(rank * 100 + p) + (float)(i % 7) / 2;
}

static int check_a2a(const float *b, int rank, size_t per, const char *what)
{
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < per; i++)
			T_CHECK(b[p * per + i] == (float)(p * 100 + rank) + (float)(i % 7) / 2,
				"%s: block %d [%zu] = %g", what, p, i, b[p * per + i]);
	return T_PASS;
}

static int auto_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t per = BIG / 2;
	float *a = malloc(BIG * sizeof(float)), *b = malloc(BIG * sizeof(float));
	char path[128];
	ccomComm_t comm;
	size_t i;

	(void)n;
	T_CHECK(a && b, "malloc");
	ct_setenv(j);
	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	setenv("CCOM_DEBUG_FILE", path, 1);
	T_CCOM(ccomCommInitRank(&comm, 2, j->id, rank), ccomSuccess);
	for (size_t len = SMALL; len <= BIG; len += BIG - SMALL) {
		for (i = 0; i < len; i++)
			a[i] = (float)(rank + 1 + i % 5);
		T_CCOM(ccomAllReduce(a, b, len, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		if (check_allreduce(b, len))
			return T_FAIL;
	}
	fill_a2a(a, rank, per);
	T_CCOM(ccomAlltoAll(a, b, per, ccomFloat32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (check_a2a(b, rank, per, "out of place"))
		return T_FAIL;
	fill_a2a(a, rank, per);
	T_CCOM(ccomAlltoAll(a, a, per, ccomFloat32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (check_a2a(a, rank, per, "in place"))
		return T_FAIL;
	/* Rank 0 in place, rank 1 not. */
	fill_a2a(a, rank, per);
	T_CCOM(ccomAlltoAll(a, rank ? b : a, per, ccomFloat32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (check_a2a(rank ? b : a, rank, per, "rank 0 in place, rank 1 not"))
		return T_FAIL;
	ccomCommDestroy(comm);
	free(a);
	free(b);
	return T_PASS;
}

/* Occurrences of @s in rank @rank's log. */
static int log_count(int rank, const char *s)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	return t_file_count(path, s);
}

/* Write the engine calibration's cache file with verdict @slow (CCOM_KDEV_CALIB_FILE). */
static int seed_calibration(int slow)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/calib", logdir);
	f = fopen(path, "w");
	T_CHECK(f, "fopen %s", path);
	fprintf(f, "1 1 %d\n", slow);
	fclose(f);
	setenv("CCOM_KDEV_CALIB_FILE", path, 1);
	/* The race's verdicts: AllReduce of 2^20 and AlltoAll of 2^19 bytes per rank on the engine. */
	snprintf(path, sizeof(path), "%s/race", logdir);
	f = fopen(path, "w");
	T_CHECK(f, "fopen %s", path);
	fprintf(f, "0 20 1\n5 19 1\n5 20 1\n");
	fclose(f);
	setenv("CCOM_KDEV_RACE_FILE", path, 1);
	return T_PASS;
}

/* One run of auto_rank() on 2 ranks, the calibration verdict seeded to @slow. */
static int run_job(int slow)
{
	struct ct_job j = { .nranks = 2,
			    .env = { "CCOM_DEBUG=TRACE", "CCOM_DEBUG_SUBSYS=KDEV" } };

	snprintf(logdir, sizeof(logdir), "/tmp/kdev_auto.%d.%d", (int)getpid(), slow);
	T_CHECK(mkdir(logdir, 0700) == 0, "mkdir %s", logdir);
	if (seed_calibration(slow))
		return T_FAIL;
	return kt_job_in_child(&j, auto_rank, slow ? "kdev_auto, the engine seeded slow" :
						       "kdev_auto, the engine seeded fast");
}

int main(void)
{
	int r;
	char what[64];

	KT_REQUIRE(2);
	unsetenv("CCOM_KDEV");
	unsetenv("CCOM_KDEV_MIN_BYTES");
	/* The engine calibrated as fast (seeded: a timing under load must not decide). */
	if (run_job(0))
		return T_FAIL;
	for (r = 0; r < 2; r++) {
		snprintf(what, sizeof(what), "rank %d", r);
		T_CHECK(log_count(r, "kind 0 4096 elements: registrations") == 0,
			"%s: the 16 KiB AllReduce ran on the engine (log %s/rank%d.log)", what, logdir, r);
		T_CHECK(log_count(r, "kind 0 262144 elements: registrations") == 1,
			"%s: the 1 MiB AllReduce did not run on the engine (log %s/rank%d.log)", what, logdir, r);
		T_CHECK(log_count(r, "kind 5 131072 elements: registrations") == 1,
			"%s: the out-of-place AlltoAll did not run on the engine (log %s/rank%d.log)", what, logdir, r);
		T_CHECK(log_count(r, "shm for every rank (automatic choice)") == 2,
			"%s: the in-place AlltoAlls did not both go to shm by the vote (log %s/rank%d.log)", what, logdir, r);
	}
	/* The engine calibrated as slow: the automatic choice never runs the engine. */
	if (run_job(1))
		return T_FAIL;
	for (r = 0; r < 2; r++) {
		snprintf(what, sizeof(what), "rank %d (engine calibrated slow)", r);
		T_CHECK(log_count(r, "more than 2x slower") == 1,
			"%s: the seeded verdict was not read (log %s/rank%d.log)", what, logdir, r);
		T_CHECK(log_count(r, "elements: registrations") == 0,
			"%s: a collective ran on the engine (log %s/rank%d.log)", what, logdir, r);
	}
	return kt_counters_zero("after the automatic-choice cases");
}
