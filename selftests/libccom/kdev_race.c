// SPDX-License-Identifier: MIT
/*
 * Description: the measured kdev choice (libccom/tune/kdev_race.c) on 2
 * ranks with nccom.ko loaded.  CCOM_KDEV and CCOM_KDEV_MAP unset, a fresh
 * verdict cache: 64 AllReduces of 1 MiB, each result checked; the ranks
 * log one verdict, which must be the path their log says measured fastest
 * (or the staged default within the 3 % margin: no timing is asserted,
 * only that the choice follows the measurement), the trials (3 turns of 4
 * operations per path, plus the extra turns the log announces when a
 * losing path was still getting faster) and every
 * operation after the verdict must have run on the paths the race named
 * (counted in the KDEV trace: engine schedules, mapped AllReduces), and
 * the verdict must land in the cache.  A second job reads it: all 24 on
 * that path.  Then the forced settings win over the race: CCOM_KDEV=0 (no
 * kdev operation), CCOM_KDEV=1 with CCOM_KDEV_MAP=0 (64 engine
 * operations) and with CCOM_KDEV_MAP=1 (64 mapped).  A job of 116
 * AllReduces on the cached verdict with CCOM_TUNE_AUDIT_OPS=40 audits it
 * once (measured again after 40 operations on it, tune/race.h) and
 * decides again.  Last, the race of
 * another collective the mapped path runs: 64 AllGathers of 1 MiB per
 * rank with the same cache, checked the same way (its own verdict,
 * trials and cache line), and then 80 AllGathers in place: the first
 * check-in (op 16) finds both ranks in place, in-place calls race apart
 * (logged), their verdict follows the measurement as above and is cached
 * on its own line (kind 3 + 6); a second in-place job reads both verdicts
 * and races nothing.  Last, with the engine's calibration seeded slow, 48
 * AllReduces race staged against mapped: no engine operation, and the
 * mapped turns (and a mapped verdict) run mapped.  Skips (77) without a
 * usable /dev/nccom.
 */
#include <sys/stat.h>

#include "kdev_util.h"

#include "tune/race.h"

#define COUNT (256 * 1024)	/* floats: 1 MiB per rank */
/*
 * >= the longest race (3 paths x (3 + 2 extra) turns x 4 = 60), and fewer
 * than CCOM_RACE_RECHECK_OPS past the shortest (36): no re-check fires.
 */
#define NOPS 64
/*
 * The job on a cached verdict runs fewer than CCOM_RACE_RECHECK_OPS: a
 * kept path may be measured again after that many operations when a few
 * in a row run far above its price, which TCG's stalls can cause.
 */
#define NOPS_CACHED 24
static int nops = NOPS;

/* The collective raced, and the lines its trace and verdict print. */
static struct kcase {
	int kind;			/* enum ccom_coll_kind: 0 AllReduce, 3 AllGather */
	const char *engine_line;
	const char *mapped_line;
	const char *verdict_line;	/* the CMA race's, with CCOM_KDEV=0, starts "CMA" */
	bool inplace;			/* AllGather only: from this rank's block of the output */
} K = { 0, "kind 0 262144 elements: registrations", "AllReduce 262144 elements from mapped grants",
	"ccomAllReduce of 1048576 bytes per rank: staged ", false };

#define ENGINE_LINE K.engine_line
#define MAPPED_LINE K.mapped_line
#define VERDICT_LINE K.verdict_line

static char logdir[96];

/* An AllGather of COUNT floats per rank, checked. */
static int allgather_op(ccomComm_t comm, int rank, int op, float *a, float *b)
{
	size_t i;
	int r;

	if (K.inplace)
		a = b + (size_t)rank * COUNT;
	for (i = 0; i < COUNT; i++)
		a[i] = (float)(rank * 7 + (i + (size_t)op) % 5);
	T_CCOM(ccomAllGather(a, b, COUNT, ccomFloat32, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (r = 0; r < 2; r++)
		for (i = 0; i < COUNT; i++)
			T_CHECK(b[(size_t)r * COUNT + i] == (float)(r * 7 + (i + (size_t)op) % 5),
				"op %d block %d [%zu] = %g", op, r, i, b[(size_t)r * COUNT + i]);
	return T_PASS;
}

static int race_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	float *a = malloc(COUNT * sizeof(float)), *b = malloc(2 * COUNT * sizeof(float));
	char path[160];
	ccomComm_t comm;
	size_t i;

	(void)n;
	T_CHECK(a && b, "malloc");
	ct_setenv(j);
	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	setenv("CCOM_DEBUG_FILE", path, 1);
	T_CCOM(ccomCommInitRank(&comm, 2, j->id, rank), ccomSuccess);
	for (int op = 0; op < nops; op++) {
		if (K.kind == 3) {
			if (allgather_op(comm, rank, op, a, b))
				return T_FAIL;
			continue;
		}
		for (i = 0; i < COUNT; i++)
			a[i] = (float)(rank + 1 + (i + (size_t)op) % 5);
		T_CCOM(ccomAllReduce(a, b, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		for (i = 0; i < COUNT; i++)
			T_CHECK(b[i] == (float)(3 + 2 * ((i + (size_t)op) % 5)), "op %d [%zu] = %g", op,
				i, b[i]);
	}
	ccomCommDestroy(comm);
	free(a);
	free(b);
	return T_PASS;
}

/* One 2-rank job with @env ("NAME=value", NULL-ended, at most 3) in a child process. */
static int run_job(const char *tag, const char *const *env)
{
	struct ct_job j = { .nranks = 2 };
	char what[96];
	int k;

	snprintf(logdir, sizeof(logdir), "/tmp/kdev_race.%d.%s", (int)getpid(), tag);
	T_CHECK(mkdir(logdir, 0700) == 0, "mkdir %s", logdir);
	j.env[0] = "CCOM_DEBUG=TRACE";
	for (k = 0; env[k] && k < 3; k++)
		j.env[k + 1] = env[k];
	setenv("CCOM_DEBUG_SUBSYS", "KDEV,TUNE", 1);
	snprintf(what, sizeof(what), "kdev_race, job %s", tag);
	return kt_job_in_child(&j, race_rank, what);
}

static int count(int rank, const char *s)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	return t_file_count(path, s);
}

/*
 * Turns per path the last job's race ran: CCOM_RACE_TURNS, plus one per
 * "one more turn" line (a losing path still getting faster, tune/race.h).
 */
static int turns_run(void)
{
	int extra = count(0, "one more turn of each");

	printf("race: %d turns per path (%d extra)\n", CCOM_RACE_TURNS + extra, extra);
	fflush(stdout);	/* before the next job's fork */
	return CCOM_RACE_TURNS + extra;
}

/*
 * The verdict line of rank @rank: "staged A us, engine B us[, mapped C
 * us] (...): P from now on".  *@kept: P's index (0 staged, 1 engine,
 * 2 mapped); checks that P measured fastest, or is the staged default
 * within the margin.
 */
static int verdict(int rank, int *kept)
{
	static const char *const names[3] = { "staged", "engine", "mapped" };
	char path[160], line[1024], *p, *q;
	long us[3] = { -1, -1, -1 }, best = -1;
	FILE *f;
	int k, found = 0;

	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	f = fopen(path, "r");
	T_CHECK(f, "no log %s", path);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, VERDICT_LINE);
		if (!p || strstr(line, "one more turn"))
			continue;
		found++;
		p += strlen(VERDICT_LINE) - strlen("staged ");
		for (k = 0; k < 3; k++) {
			q = strstr(p, names[k]);
			if (q && q < strstr(p, "("))
				us[k] = strtol(q + strlen(names[k]), NULL, 10);
		}
		q = strstr(p, "): ");
		T_CHECK(q, "verdict line without a path: %s", line);
		for (k = 0, *kept = -1; k < 3; k++)
			if (!strncmp(q + 3, names[k], strlen(names[k])))
				*kept = k;
	}
	fclose(f);
	T_CHECK(found == 1, "rank %d: %d verdict lines, want 1 (log %s)", rank, found, path);
	T_CHECK(*kept >= 0 && us[*kept] >= 0, "rank %d: verdict %d without its time", rank, *kept);
	for (k = 0; k < 3; k++)
		if (us[k] >= 0 && (best < 0 || us[k] < best))
			best = us[k];
	/* us are rounded: 1 us of slack; the staged default keeps a 1/32 tie. */
	T_CHECK(us[*kept] <= best + 1 || (*kept == 0 && us[0] <= best + best / 32 + 1),
		"rank %d kept %s at %ld us, but %ld us was measured (log %s)", rank, names[*kept],
		us[*kept], best, path);
	printf("rank %d: staged %ld us, engine %ld us, mapped %ld us: %s kept\n", rank, us[0], us[1],
	       us[2], names[*kept]);
	fflush(stdout);	/* before the next job's fork */
	return T_PASS;
}

static int forced(const char *tag, const char *const *env, int engine, int mapped)
{
	if (run_job(tag, env))
		return T_FAIL;
	for (int r = 0; r < 2; r++) {
		T_CHECK(count(r, ENGINE_LINE) == engine && count(r, MAPPED_LINE) == mapped,
			"%s, rank %d: %d engine and %d mapped operations, want %d and %d (log %s)", tag,
			r, count(r, ENGINE_LINE), count(r, MAPPED_LINE), engine, mapped, logdir);
		T_CHECK(count(r, VERDICT_LINE) == 0, "%s, rank %d: a race ran although forced", tag, r);
	}
	return T_PASS;
}

/* Lines "@kind 20 @path" in the cache file @race (-1: no file). */
static int cache_lines(const char *race, int kind, int path)
{
	char line[64], want[32];
	int found = 0;
	FILE *f = fopen(race, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%d 20 %d\n", kind, path);
	while (fgets(line, sizeof(line), f))
		found += !strcmp(line, want);
	fclose(f);
	return found;
}

/* The AllGather race, after AllReduce's verdict is cached in @race. */
static int allgather_race(const char *const *auto_env, const char *race, int nslots, int trials)
{
	struct kcase ag = { 3, "kind 3 262144 elements: registrations",
			    "AllGather 262144 elements from mapped grants",
			    "ccomAllGather of 1048576 bytes per rank: staged ", false };
	struct kcase ar = K;
	int kept[2], want[3] = { 0 }, r;

	K = ag;
	if (run_job("auto-allgather", auto_env))
		return T_FAIL;
	trials = nslots * turns_run() * CCOM_RACE_RUN;
	for (r = 0; r < 2; r++)
		if (verdict(r, &kept[r]))
			return T_FAIL;
	T_CHECK(kept[0] == kept[1], "AllGather: the ranks kept different paths (%d, %d)", kept[0],
		kept[1]);
	want[1] = trials / nslots + (kept[0] == 1 ? NOPS - trials : 0);
	want[2] = nslots == 3 ? trials / nslots + (kept[0] == 2 ? NOPS - trials : 0) : 0;
	for (r = 0; r < 2; r++)
		T_CHECK(count(r, ENGINE_LINE) == want[1] && count(r, MAPPED_LINE) == want[2],
			"AllGather, rank %d: %d engine and %d mapped operations, want %d and %d (log %s)",
			r, count(r, ENGINE_LINE), count(r, MAPPED_LINE), want[1], want[2], logdir);
	T_CHECK(cache_lines(race, 3, kept[0]) == 1, "AllGather: no cache line '3 20 %d' in %s",
		kept[0], race);
	K = ar;
	return T_PASS;
}

/*
 * In-place AllGathers after the out-of-place verdict is cached in @race:
 * they race apart from the first check-in on, keep their own verdict and
 * cache it; a second job reads it and races nothing.
 */
static int allgather_inplace(const char *const *auto_env, const char *race)
{
	struct kcase ar = K;
	int kept[2], r;

	K = (struct kcase){ 3, "kind 3 262144 elements: registrations",
			    "AllGather 262144 elements from mapped grants",
			    "ccomAllGather in place of 1048576 bytes per rank: staged ", true };
	nops = 16 + 3 * (CCOM_RACE_TURNS + CCOM_RACE_EXTRA_MAX) * CCOM_RACE_RUN + 4;
	if (run_job("auto-allgather-inplace", auto_env))
		return T_FAIL;
	for (r = 0; r < 2; r++) {
		T_CHECK(count(r, "in-place calls of that size race apart") == 1,
			"rank %d: in-place AllGathers did not race apart (log %s)", r, logdir);
		if (verdict(r, &kept[r]))
			return T_FAIL;
	}
	T_CHECK(kept[0] == kept[1], "AllGather in place: the ranks kept different paths (%d, %d)",
		kept[0], kept[1]);
	T_CHECK(cache_lines(race, 9, kept[0]) == 1,
		"AllGather in place: no cache line '9 20 %d' in %s", kept[0], race);
	/* Cached: both placements kept, nothing raced, nothing opened again. */
	nops = NOPS_CACHED;
	if (run_job("cached-allgather-inplace", auto_env))
		return T_FAIL;
	for (r = 0; r < 2; r++)
		T_CHECK(count(r, "from now on") == 0 && count(r, "race apart") == 0,
			"rank %d: in-place AllGathers on cached verdicts raced again (log %s)", r,
			logdir);
	printf("AllGather in place: %s kept, cached and read back\n",
	       kept[0] == 0 ? "staged" : kept[0] == 1 ? "engine" : "mapped");
	fflush(stdout);
	K = ar;
	nops = NOPS;
	return T_PASS;
}

/*
 * The engine calibrated slow (its cache file seeded, CCOM_KDEV_CALIB_FILE):
 * no candidate, but the mapped path still races the staged path, and its
 * turns and a mapped verdict run mapped (until 2026-12-07 they ran the
 * staged path: the calibration's filter came before the race's).  A fresh
 * cache; 48 AllReduces: >= the longest race of 2 paths (40) and fewer than
 * CCOM_RACE_RECHECK_OPS past the shortest (24), so no re-check fires.
 */
#define NOPS_SLOW_ENGINE 48

static int slow_engine(const char *race)
{
	char calib[160], env_calib[200], env_race[200];
	const char *env[] = { env_race, env_calib, NULL };
	int kept[2], trials, want, r;
	FILE *f;

	_Static_assert(2 * (CCOM_RACE_TURNS + CCOM_RACE_EXTRA_MAX) * CCOM_RACE_RUN <= NOPS_SLOW_ENGINE &&
		       NOPS_SLOW_ENGINE - 2 * CCOM_RACE_TURNS * CCOM_RACE_RUN < CCOM_RACE_RECHECK_OPS,
		       "the slow-engine job: a whole race, no re-check after it");
	snprintf(calib, sizeof(calib), "/tmp/kdev_race.%d.calib", (int)getpid());
	f = fopen(calib, "w");
	T_CHECK(f, "fopen %s", calib);
	fprintf(f, "1 1 1\n");	/* engine us, memcpy us, slow */
	fclose(f);
	unlink(race);
	snprintf(env_race, sizeof(env_race), "CCOM_KDEV_RACE_FILE=%s", race);
	snprintf(env_calib, sizeof(env_calib), "CCOM_KDEV_CALIB_FILE=%s", calib);
	nops = NOPS_SLOW_ENGINE;
	if (run_job("slow-engine", env))
		return T_FAIL;
	T_CHECK(count(0, "staged, mapped measured") == 1,
		"engine seeded slow: the race is not staged against mapped (log %s)", logdir);
	trials = 2 * turns_run() * CCOM_RACE_RUN;
	for (r = 0; r < 2; r++)
		if (verdict(r, &kept[r]))
			return T_FAIL;
	T_CHECK(kept[0] == kept[1] && kept[0] != 1,
		"engine seeded slow: the ranks kept %d and %d (0 staged, 2 mapped)", kept[0], kept[1]);
	want = trials / 2 + (kept[0] == 2 ? nops - trials : 0);
	for (r = 0; r < 2; r++)
		T_CHECK(count(r, ENGINE_LINE) == 0 && count(r, MAPPED_LINE) == want,
			"engine seeded slow, rank %d: %d engine and %d mapped operations, want 0 and %d (log %s)",
			r, count(r, ENGINE_LINE), count(r, MAPPED_LINE), want, logdir);
	printf("engine seeded slow: staged against mapped, %s kept, %d mapped operations\n",
	       kept[0] == 2 ? "mapped" : "staged", want);
	fflush(stdout);
	unlink(calib);
	nops = NOPS;
	return T_PASS;
}

int main(void)
{
	const char *auto_env[] = { NULL, NULL };
	const char *audit_env[] = { NULL, "CCOM_TUNE_AUDIT_OPS=40", NULL };
	const char *k0[] = { "CCOM_KDEV=0", NULL };
	const char *k1m0[] = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=0", NULL };
	const char *k1m1[] = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=1", NULL };
	char race[160], env_race[200], line[64];
	int kept[2], nslots, trials, want[3] = { 0 }, r;
	FILE *f;

	KT_REQUIRE(2);
	unsetenv("CCOM_KDEV");
	unsetenv("CCOM_KDEV_MAP");
	unsetenv("CCOM_KDEV_MIN_BYTES");
	snprintf(race, sizeof(race), "/tmp/kdev_race.%d.cache", (int)getpid());
	unlink(race);
	snprintf(env_race, sizeof(env_race), "CCOM_KDEV_RACE_FILE=%s", race);
	auto_env[0] = env_race;
	audit_env[0] = env_race;
	if (run_job("auto", auto_env))
		return T_FAIL;
	for (r = 0; r < 2; r++)
		if (verdict(r, &kept[r]))
			return T_FAIL;
	T_CHECK(kept[0] == kept[1], "the ranks kept different paths (%d, %d)", kept[0], kept[1]);
	/* Slots: staged, engine, and mapped when the driver maps grants (the log names it). */
	nslots = count(0, ", mapped measured") == 1 ? 3 : 2;
	trials = nslots * turns_run() * CCOM_RACE_RUN;
	want[1] = trials / nslots + (kept[0] == 1 ? NOPS - trials : 0);
	want[2] = nslots == 3 ? trials / nslots + (kept[0] == 2 ? NOPS - trials : 0) : 0;
	for (r = 0; r < 2; r++)
		T_CHECK(count(r, ENGINE_LINE) == want[1] && count(r, MAPPED_LINE) == want[2],
			"rank %d: %d engine and %d mapped operations, want %d and %d (log %s)", r,
			count(r, ENGINE_LINE), count(r, MAPPED_LINE), want[1], want[2], logdir);
	f = fopen(race, "r");
	T_CHECK(f, "the verdict was not cached in %s", race);
	T_CHECK(fgets(line, sizeof(line), f), "empty cache %s", race);
	fclose(f);
	T_CHECK(atoi(line) == 0 && atoi(strchr(line, ' ') + 1) == 20 &&
		atoi(strrchr(line, ' ') + 1) == kept[0], "cache line '%s', want '0 20 %d'", line,
		kept[0]);
	if (allgather_race(auto_env, race, nslots, trials) || allgather_inplace(auto_env, race))
		return T_FAIL;
	/* The cached verdict: every operation on it, no race. */
	_Static_assert(NOPS_CACHED < CCOM_RACE_RECHECK_OPS &&
		       NOPS - 3 * CCOM_RACE_TURNS * CCOM_RACE_RUN < CCOM_RACE_RECHECK_OPS,
		       "no re-check after a verdict");
	nops = NOPS_CACHED;
	if (forced("cached", auto_env, kept[0] == 1 ? nops : 0, kept[0] == 2 ? nops : 0))
		return T_FAIL;
	/*
	 * The audit (tune/race.h): a cached verdict is measured again after
	 * CCOM_TUNE_AUDIT_OPS operations on it, at the next check-in (every
	 * 16), then decided again; every result still checked.  40, not the
	 * default 256: a slow re-check (TCG's stalls cause them, from the
	 * 32nd operation) restarts the count, and did in 6.1's first run.
	 */
	nops = 40 + 16 + 3 * (CCOM_RACE_TURNS + CCOM_RACE_EXTRA_MAX) * CCOM_RACE_RUN;
	if (run_job("audit", audit_env))
		return T_FAIL;
	for (r = 0; r < 2; r++) {
		int audits = count(r, "(an audit)");
		/* A slow re-check (TCG's stalls can cause one) restarts the count. */
		int slow = count(r, "measuring the kdev paths again") - audits;

		T_CHECK((audits == 1 || (!audits && slow > 0)) && count(r, "from now on") >= 1,
			"rank %d: %d audits, %d slow re-checks and %d verdicts in %d operations on a cached verdict, want 1 audit and a verdict (log %s)",
			r, audits, slow, count(r, "from now on"), nops, logdir);
		printf("audit job, rank %d: %d audits, %d slow re-checks, %d verdicts\n", r, audits,
		       slow, count(r, "from now on"));
		fflush(stdout);
	}
	nops = NOPS;
	if (forced("kdev0", k0, 0, 0) || forced("kdev1-map0", k1m0, NOPS, 0) ||
	    forced("kdev1-map1", k1m1, nslots == 3 ? 0 : NOPS, nslots == 3 ? NOPS : 0))
		return T_FAIL;
	if (nslots == 3 && slow_engine(race))
		return T_FAIL;
	if (nslots < 3)
		printf("engine seeded slow: not run, the driver maps no grants here\n");
	unlink(race);
	printf("PASS: kdev_race\n");
	return kt_counters_zero("after the measured-choice cases");
}
