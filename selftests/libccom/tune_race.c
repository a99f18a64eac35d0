// SPDX-License-Identifier: MIT
/*
 * Description: the decision logic of the automatic path choice
 * (libccom/tune/race.c, used by CCOM_CMA=auto) on fake timings, no
 * ranks: the trial schedule (turns of consecutive operations per path,
 * alternating, the same on every rank), the dropped warm-up operations of
 * each turn, the median of the turns' means (one bad turn does not
 * decide, a tail that recurs in most turns does), the margin (a
 * near tie keeps the default path), no re-check on noise nor on a machine
 * that got slower for every path, a re-check and a flipped verdict when
 * the kept path (the staged one included) is clearly wrong, the backoff
 * of re-checks that confirmed their verdict, a cached verdict, the short
 * schedule of large sizes (a 64 MiB race decides within 8 operations), and
 * a path still getting faster (CMA on fresh buffers): the race runs extra
 * turns and keeps it once it settles faster, but not for a path far
 * behind, and not past CCOM_RACE_EXTRA_MAX.  Then the CMA verdict cache
 * (tune/cma_cache.c): its default file is keyed by boot id, user and local
 * rank count, round-trips a table with in-place rows and a sender's
 * Send/Recv file of its own, and a file written by a store is never left
 * half (tune/verdict_file.c: a private temporary file renamed over it).  Last the
 * kdev race's verdict cache (tune/kdev_race.c) on a fake communicator: a
 * verdict stored under one driver-load key is read back under it, not
 * under another key (a reloaded driver) nor another local rank count.
 */
#include <sys/stat.h>

#include "test_util.h"

#include "core/comm.h"
#include "core/op.h"
#include "tune/cma_cache.h"
#include "tune/kdev_race.h"
#include "tune/race.h"
#include "tune/tune.h"
#include "tune/verdict_file.h"
#include "util/misc.h"

#include <pthread.h>

#define KB 1024u
#define BYTES (4096u * KB)	/* 4 MiB: ns per KiB = ns / 4096 */

/* Deterministic noise in [0, 1). */
static double noise(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (double)((*s >> 8) & 0xffff) / 65536.0;
}

/*
 * Run a whole race: path p's operation i of its turn takes cost[p] ns per
 * KiB, times warm (x5) for the first CCOM_RACE_DROP of a turn, times
 * @bad_turn_factor in path @bad_path's turn @bad_turn.
 */
static int run_race(struct ccom_race *r, const uint64_t *cost, int bad_path, int bad_turn,
		    double bad_turn_factor)
{
	int turn_of[CCOM_RACE_MAX_PATHS] = { 0 }, guard = 0, p, in_turn;
	uint64_t ns;

	while (ccom_race_state(r) == CCOM_RACE_TRIAL && guard++ < 1000) {
		p = ccom_race_next(r);
		in_turn = r->op % r->run;
		ns = cost[p] * (BYTES / KB);
		if (in_turn < r->drop)
			ns *= 5;
		if (p == bad_path && turn_of[p] == bad_turn)
			ns = (uint64_t)((double)ns * bad_turn_factor);
		ccom_race_record(r, p, BYTES, ns);
		if (in_turn == r->run - 1)
			turn_of[p]++;
	}
	T_CHECK(ccom_race_state(r) == CCOM_RACE_READY, "race never ready (state %d after %d ops)",
		ccom_race_state(r), guard);
	return T_PASS;
}

static int decide_local(struct ccom_race *r)
{
	uint64_t m[CCOM_RACE_MAX_PATHS] = { 0 };

	for (int p = 0; p < r->npaths; p++)
		m[p] = ccom_race_report(r, p);
	return ccom_race_decide(r, m);
}

/*
 * Path 1 warms up: its n-th operation (over the whole race, first
 * included) costs @settled + @ramp * 7/8^n ns per KiB, path 0 @flat; the
 * first @drop of each turn 5x as usual.  Decides whenever the race is
 * ready (extra turns included); returns the verdict, the operations run in
 * *@ops.
 */
static int warming_race(struct ccom_race *r, uint64_t flat, uint64_t settled, uint64_t ramp,
			int *ops)
{
	int n1 = 0, v = -1, p;
	uint64_t ns;
	double f;

	for (*ops = 0; v < 0 && *ops < 1000; (*ops)++) {
		p = ccom_race_next(r);
		f = 1;
		for (int i = 0; p == 1 && i < n1; i++)
			f *= 7.0 / 8;
		ns = (p ? settled + (uint64_t)((double)ramp * f) : flat) * (BYTES / KB);
		if (r->op % r->run < r->drop)
			ns *= 5;
		n1 += p == 1;
		ccom_race_record(r, p, BYTES, ns);
		if (ccom_race_state(r) == CCOM_RACE_READY)
			v = decide_local(r);
	}
	return v;
}

static int test_warming(void)
{
	struct ccom_race r;
	int ops, v, base = 2 * CCOM_RACE_TURNS * CCOM_RACE_RUN;

	/*
	 * CMA settles at 2000 (staged 3000) but starts at 2000 + 4000: within
	 * the first 24 operations its median stays above 3000 (the old race
	 * kept staged); the extra turns see it settle.
	 */
	ccom_race_init(&r, 2);
	v = warming_race(&r, 3000, 2000, 4000, &ops);
	T_CHECK(v == 1, "a path still warming up lost (verdict %d after %d ops)", v, ops);
	T_CHECK(ops > base && ops <= base + 2 * CCOM_RACE_EXTRA_MAX * CCOM_RACE_RUN,
		"decided after %d ops, want extra turns, at most %d", ops,
		CCOM_RACE_EXTRA_MAX);
	/* Far behind (2x) although still falling: no extra turn. */
	ccom_race_init(&r, 2);
	v = warming_race(&r, 1000, 2000, 600, &ops);
	T_CHECK(v == 0 && ops == base, "a path 2x behind got extra turns (%d ops)", ops);
	/* Still falling after every extra turn: the race ends at the cap. */
	ccom_race_init(&r, 2);
	v = warming_race(&r, 1000, 0, 3000, &ops);
	T_CHECK(v >= 0 && ops <= base + 2 * CCOM_RACE_EXTRA_MAX * CCOM_RACE_RUN,
		"the extra turns did not stop (%d ops)", ops);
	/* Settled paths report no fall; a verdict read back resets the extra turns. */
	ccom_race_init(&r, 2);
	if (run_race(&r, (uint64_t[]){ 1000, 900 }, -1, 0, 1))
		return T_FAIL;
	T_CHECK(!(ccom_race_report(&r, 0) & CCOM_RACE_FALLING) &&
		!(ccom_race_report(&r, 1) & CCOM_RACE_FALLING), "a flat path reported falling");
	return T_PASS;
}

/* From CCOM_RACE_SHORT_BYTES: turns of 2, 2 per path; the schedule survives set and restart. */
static int test_short(void)
{
	uint64_t cost[2] = { 1000, 700 };
	struct ccom_race r;
	int n = 0;

	ccom_race_init(&r, 2);
	ccom_race_size(&r, 64ull << 20);
	while (ccom_race_state(&r) == CCOM_RACE_TRIAL && n < 100) {
		T_CHECK(ccom_race_next(&r) == (n / CCOM_RACE_SHORT_RUN) % 2, "64 MiB op %d: path %d",
			n, ccom_race_next(&r));
		ccom_race_record(&r, ccom_race_next(&r), BYTES, cost[ccom_race_next(&r)] * 4096);
		n++;
	}
	T_CHECK(n == 2 * CCOM_RACE_SHORT_TURNS * CCOM_RACE_SHORT_RUN,
		"a 64 MiB race took %d ops, want %d", n,
		2 * CCOM_RACE_SHORT_TURNS * CCOM_RACE_SHORT_RUN);
	T_CHECK(n <= 8, "a 64 MiB race does not fit ccom-perf's 11 operations per pass");
	T_CHECK(r.n[0] == CCOM_RACE_SHORT_TURNS && decide_local(&r) == 1, "short race verdict");
	ccom_race_restart(&r);
	T_CHECK(r.run == CCOM_RACE_SHORT_RUN && r.turns == CCOM_RACE_SHORT_TURNS,
		"restart forgot the schedule");
	ccom_race_set(&r, 0);
	T_CHECK(r.run == CCOM_RACE_SHORT_RUN, "set forgot the schedule");
	ccom_race_size(&r, 16ull << 20);
	T_CHECK(r.run == CCOM_RACE_RUN && r.turns == CCOM_RACE_TURNS, "16 MiB: the long schedule");
	return T_PASS;
}

static int test_schedule(void)
{
	struct ccom_race r;

	for (int np = 2; np <= 3; np++) {
		int n = 0;

		ccom_race_init(&r, np);
		T_CHECK(ccom_race_state(&r) == CCOM_RACE_TRIAL, "a new race measures");
		while (ccom_race_state(&r) == CCOM_RACE_TRIAL) {
			int want = (n / CCOM_RACE_RUN) % np;

			T_CHECK(ccom_race_next(&r) == want, "%d paths: op %d runs path %d, want %d",
				np, n, ccom_race_next(&r), want);
			/* A record for another path (a rank out of step) is ignored. */
			ccom_race_record(&r, (want + 1) % np, BYTES, 1);
			T_CHECK(r.op == n, "a foreign record counted");
			ccom_race_record(&r, want, BYTES, 1000000);
			n++;
		}
		T_CHECK(n == np * CCOM_RACE_TURNS * CCOM_RACE_RUN, "%d ops for %d paths", n, np);
		for (int p = 0; p < np; p++)
			T_CHECK(r.n[p] == CCOM_RACE_SAMPLES, "path %d kept %d samples", p, r.n[p]);
	}
	return T_PASS;
}

static int test_verdicts(void)
{
	struct ccom_race r;
	uint64_t faster[2] = { 1000, 800 }, tie[2] = { 1000, 985 }, three[3] = { 1000, 900, 700 };

	/* CMA 20 % faster: kept, although the warm-up ops of every turn are 5x. */
	ccom_race_init(&r, 2);
	if (run_race(&r, faster, -1, 0, 1))
		return T_FAIL;
	T_CHECK(ccom_race_median(&r, 0) == 1000 && ccom_race_median(&r, 1) == 800,
		"medians %llu %llu: the warm-up ops were kept",
		(unsigned long long)ccom_race_median(&r, 0),
		(unsigned long long)ccom_race_median(&r, 1));
	T_CHECK(decide_local(&r) == 1, "20 %% faster path not kept");
	T_CHECK(ccom_race_state(&r) == CCOM_RACE_KEPT && ccom_race_next(&r) == 1, "verdict not run");
	/* One bad turn (4x) of the faster path: the median ignores it. */
	ccom_race_init(&r, 2);
	if (run_race(&r, faster, 1, 1, 4))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 1, "one bad turn decided");
	/* A 1.5 % difference is a tie: the default (staged) stays. */
	ccom_race_init(&r, 2);
	if (run_race(&r, tie, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 0, "a near tie left the default path");
	/* Three paths (staged, engine, mapped): the fastest. */
	ccom_race_init(&r, 3);
	if (run_race(&r, three, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 2, "3 paths: the fastest not kept");
	T_CHECK(r.rival == 900, "rival %llu, want the runner-up's 900", (unsigned long long)r.rival);
	return T_PASS;
}

/*
 * A race where path @p's own operation j (0, 1, ... over the whole race,
 * the dropped ones included) takes @factor[j] times its cost, the others
 * flat; the first CCOM_RACE_DROP of each turn 5x as usual.
 */
static int race_with(struct ccom_race *r, const uint64_t *cost, int p, const double *factor,
		     int nf)
{
	int own = 0, guard = 0, q;
	uint64_t ns;

	while (ccom_race_state(r) == CCOM_RACE_TRIAL && guard++ < 1000) {
		q = ccom_race_next(r);
		ns = cost[q] * (BYTES / KB);
		if (r->op % r->run < r->drop)
			ns *= 5;
		if (q == p && own < nf)
			ns = (uint64_t)((double)ns * factor[own]);
		own += q == p;
		ccom_race_record(r, q, BYTES, ns);
	}
	T_CHECK(ccom_race_state(r) == CCOM_RACE_READY, "race never ready");
	return T_PASS;
}

/* The lower middle of a path's kept samples: what the race compared before issue 27's tail. */
static uint64_t per_op_median(const struct ccom_race *r, int p)
{
	uint64_t v[CCOM_RACE_SAMPLES], x;
	int n = r->n[p], i, j;

	memcpy(v, r->ns_per_kb[p], (size_t)n * sizeof(v[0]));
	for (i = 1; i < n; i++) {
		x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[(n - 1) / 2];
}

/*
 * A recurring tail (the staged path in the 6.12 guest: median lower than
 * the engine's, mean up to 3x its median) costs what it costs: the path
 * with the lower median but 5x operations in 2 of its 3 turns (its
 * operations 3 and 6 of 12, one kept operation of those turns) loses to
 * a flat path 25 % slower by median, whichever of the two is the
 * default.  One bad turn does not decide: a single 20x stall, or a whole
 * turn 5x slower, of the faster path.
 */
static int test_tail(void)
{
	double tail[12] = { 1, 1, 1, 5, 1, 1, 5, 1, 1, 1, 1, 1 };
	double stall[12] = { 1, 1, 1, 1, 1, 1, 20, 1, 1, 1, 1, 1 };
	double bad_turn[12] = { 1, 1, 1, 1, 5, 5, 5, 5, 1, 1, 1, 1 };
	struct ccom_race r;
	int p, v;

	for (p = 0; p < 2; p++) {
		uint64_t cost[2] = { p ? 1000 : 800, p ? 800 : 1000 };

		ccom_race_init(&r, 2);
		if (race_with(&r, cost, p, tail, 12))
			return T_FAIL;
		/* The case is one a median of single operations gets wrong. */
		T_CHECK(per_op_median(&r, p) == 800, "path %d: per-op median %llu, want 800", p,
			(unsigned long long)per_op_median(&r, p));
		T_CHECK(ccom_race_median(&r, p) == 2400, "path %d with a tail: figure %llu, want 2400",
			p, (unsigned long long)ccom_race_median(&r, p));
		v = decide_local(&r);
		T_CHECK(v == !p, "path %d: its recurring tail ignored (verdict %d)", p, v);

		ccom_race_init(&r, 2);
		if (race_with(&r, cost, p, stall, 12))
			return T_FAIL;
		v = decide_local(&r);
		T_CHECK(v == p, "path %d: one stalled operation decided (verdict %d)", p, v);

		ccom_race_init(&r, 2);
		if (race_with(&r, cost, p, bad_turn, 12))
			return T_FAIL;
		T_CHECK(ccom_race_median(&r, p) == 800, "path %d with one bad turn: figure %llu", p,
			(unsigned long long)ccom_race_median(&r, p));
		v = decide_local(&r);
		T_CHECK(v == p, "path %d: one bad turn decided (verdict %d)", p, v);
	}
	return T_PASS;
}

/* Kept path at @price with rival @rival: @n ops of noise; returns how many re-checks fired. */
static int noisy_ops(struct ccom_race *r, int n, double lo, double hi, int spike_every)
{
	unsigned s = 12345;
	int fired = 0;

	for (int i = 0; i < n; i++) {
		double f = lo + (hi - lo) * noise(&s);

		if (spike_every && i % spike_every == 0)
			f = 20;	/* an isolated stall: the process descheduled */
		fired += ccom_race_after(r, BYTES, (uint64_t)(f * 1000 * (BYTES / KB)));
	}
	return fired;
}

static int test_rechecks(void)
{
	struct ccom_race r;
	uint64_t staged_wins[2] = { 1000, 1200 }, cma_wins[2] = { 1000, 600 };
	uint64_t cma_far[2] = { 1000, 300 };
	int fired = 0, i;

	/* Staged kept (price 1000, rival 1200): noise up to 2.5x and isolated stalls. */
	ccom_race_init(&r, 2);
	if (run_race(&r, staged_wins, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 0, "staged not kept");
	/* Below the audit (CCOM_RACE_AUDIT_OPS), which fires whatever the times: test_audit. */
	T_CHECK(noisy_ops(&r, CCOM_RACE_AUDIT_OPS - 56, 1.0, 2.5, 7) == 0,
		"noise asked for a re-check");
	T_CHECK(!ccom_race_after(&r, BYTES, 1000ull * (BYTES / KB)), "an op at its price fired");
	/* Clearly wrong: the staged path now 5x its price for good (a staged verdict is re-checked). */
	for (i = 0; i < 100 && !fired; i++)
		fired = ccom_race_after(&r, BYTES, 5000ull * (BYTES / KB));
	T_CHECK(fired && i == CCOM_RACE_SLOW_RUN && !r.audit, "re-check after %d slow ops, want %d",
		i, CCOM_RACE_SLOW_RUN);
	ccom_race_restart(&r);
	T_CHECK(ccom_race_state(&r) == CCOM_RACE_TRIAL && r.incumbent == 0, "restart");
	if (run_race(&r, cma_wins, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 1, "the re-check did not flip to the faster path");
	T_CHECK(r.backoff == 0, "a flipped verdict backs off");

	/*
	 * A machine 3-5x slower for every path: far above the kept path's
	 * price (300), not above 1.5x its rival's (1000): no re-check.
	 */
	ccom_race_init(&r, 2);
	if (run_race(&r, cma_far, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 1, "CMA not kept");
	T_CHECK(noisy_ops(&r, CCOM_RACE_AUDIT_OPS - 1, 0.95, 1.45, 0) == 0,
		"kept path at 3-5x its price but under 1.5x the rival re-checked");

	/* A loaded machine that keeps firing: each confirming race doubles the wait. */
	ccom_race_init(&r, 2);
	if (run_race(&r, staged_wins, -1, 0, 1))
		return T_FAIL;
	decide_local(&r);
	for (int round = 0; round < 3; round++) {
		int ops = 0;

		fired = 0;
		while (!fired && ops < 100000) {
			fired = ccom_race_after(&r, BYTES, 10000ull * (BYTES / KB));
			ops++;
		}
		T_CHECK(fired && ops == (CCOM_RACE_RECHECK_OPS << round),
			"round %d: re-check after %d ops, want %d", round, ops,
			CCOM_RACE_RECHECK_OPS << round);
		ccom_race_restart(&r);
		if (run_race(&r, staged_wins, -1, 0, 1))
			return T_FAIL;
		T_CHECK(decide_local(&r) == 0 && r.backoff == round + 1, "backoff %d after round %d",
			r.backoff, round);
	}
	return T_PASS;
}

/* Kept path at its price: operations until ccom_race_after() fires (at most @max). */
static int ops_to_fire(struct ccom_race *r, uint64_t price, int max)
{
	int n = 0;

	while (n < max)
		if (n++, ccom_race_after(r, BYTES, price * (BYTES / KB)))
			return n;
	return 0;
}

/*
 * A verdict that runs at its price is measured again all the same after
 * CCOM_RACE_AUDIT_OPS operations (issue 27: 1 race in 9 kept the staged
 * path for 1 MiB while CMA ran 1.45x faster), then after twice as many
 * each time the audit keeps it; a wrong one flips.
 */
static int test_audit(void)
{
	uint64_t cma_wins[2] = { 1000, 600 };
	struct ccom_race r;
	int n;

	/* A cached staged verdict where CMA is faster. */
	ccom_race_init(&r, 2);
	ccom_race_set(&r, 0);
	n = ops_to_fire(&r, 1000, 100000);
	T_CHECK(n == CCOM_RACE_AUDIT_OPS && r.audit, "audit after %d ops at the price, want %d", n,
		CCOM_RACE_AUDIT_OPS);
	ccom_race_restart(&r);
	T_CHECK(ccom_race_state(&r) == CCOM_RACE_TRIAL && r.incumbent == 0 && !r.audit,
		"the audit did not start a race");
	if (run_race(&r, cma_wins, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 1 && r.backoff == 0, "the audit kept the slower path");
	/* Each audit that keeps its verdict doubles the wait for the next. */
	for (int round = 0; round < 3; round++) {
		n = ops_to_fire(&r, 600, 100000);
		T_CHECK(n == (CCOM_RACE_AUDIT_OPS << round) && r.audit, "round %d: audit after %d ops, want %d",
			round, n, CCOM_RACE_AUDIT_OPS << round);
		ccom_race_restart(&r);
		if (run_race(&r, cma_wins, -1, 0, 1))
			return T_FAIL;
		T_CHECK(decide_local(&r) == 1 && r.backoff == round + 1, "round %d: backoff %d", round,
			r.backoff);
	}
	/* CCOM_TUNE_AUDIT_OPS=0: none; a restart keeps the setting. */
	ccom_race_init(&r, 2);
	ccom_race_audit_every(&r, 0);
	ccom_race_set(&r, 0);
	T_CHECK(ops_to_fire(&r, 1000, 100000) == 0, "an audit with audits off");
	ccom_race_init(&r, 2);
	ccom_race_audit_every(&r, 40);
	ccom_race_set(&r, 0);
	T_CHECK(ops_to_fire(&r, 1000, 100000) == 40 && r.audit, "no audit after 40 ops");
	ccom_race_restart(&r);
	T_CHECK(r.audit_ops == 40, "the restart forgot the audit setting");
	if (run_race(&r, cma_wins, -1, 0, 1))
		return T_FAIL;
	T_CHECK(decide_local(&r) == 1, "the audit of 40 kept the slower path");
	return T_PASS;
}

static int test_cached(void)
{
	struct ccom_race r;

	ccom_race_init(&r, 2);
	ccom_race_set(&r, 1);
	T_CHECK(ccom_race_state(&r) == CCOM_RACE_KEPT && ccom_race_next(&r) == 1, "cached verdict");
	/* No price yet: the first operations set it, nothing fires. */
	T_CHECK(!ccom_race_after(&r, BYTES, 900ull * 4096) && r.price == 900, "price %llu",
		(unsigned long long)r.price);
	ccom_race_set(&r, 7);
	T_CHECK(ccom_race_state(&r) == CCOM_RACE_TRIAL, "an out-of-range cached verdict measures");
	return T_PASS;
}

/* The CMA cache file: keyed by boot id, uid and local ranks; a table round-trips. */
static int test_cma_cache(void)
{
	struct ccom_tune_cma_table t = { 0 }, back;
	struct ccom_tune_cma_p2p_table pt = { 0 }, pback;
	char boot[64], path[256], send[300];
	struct stat st;
	int nlocal = 97;	/* no real job has 97 local ranks here */

	unsetenv("CCOM_CMA_CALIB_FILE");
	ccom_boot_id(boot, sizeof(boot));
	if (!boot[0])
		return t_skip("no /proc/sys/kernel/random/boot_id: the cache is off");
	snprintf(path, sizeof(path), "/dev/shm/ccom-cma-calib3-%u-%s-%d", (unsigned)getuid(), boot,
		 nlocal);
	snprintf(send, sizeof(send), "%s-send1", path);
	unlink(path);
	unlink(send);
	T_CHECK(ccom_tune_cma_load(nlocal, &back) == -ENOENT, "a cache before any store");
	t.verdict[0][22 - CCOM_TUNE_CMA_LOG_MIN] = 1;
	t.verdict[5][16 - CCOM_TUNE_CMA_LOG_MIN] = -1;
	t.verdict[CCOM_TUNE_CMA_KINDS + 0][24 - CCOM_TUNE_CMA_LOG_MIN] = 1;	/* in place */
	ccom_tune_cma_store(nlocal, &t);
	T_CHECK(stat(path, &st) == 0, "the cache is not %s", path);
	T_CHECK(ccom_tune_cma_load(nlocal, &back) == 0 && !memcmp(&t, &back, sizeof(t)),
		"the table did not round-trip");
	T_CHECK(ccom_tune_cma_load(nlocal + 1, &back) == -ENOENT,
		"another local rank count read this cache");
	/* A sender's Send/Recv verdicts: a file of its own, not the collectives'. */
	T_CHECK(ccom_tune_cma_p2p_load(nlocal, 1, &pback) == -ENOENT, "a Send/Recv cache before a store");
	pt.verdict[20 - CCOM_TUNE_CMA_LOG_MIN] = -1;
	ccom_tune_cma_p2p_store(nlocal, 1, &pt);
	T_CHECK(stat(send, &st) == 0, "the Send/Recv cache is not %s", send);
	T_CHECK(ccom_tune_cma_p2p_load(nlocal, 1, &pback) == 0 && !memcmp(&pt, &pback, sizeof(pt)),
		"the Send/Recv table did not round-trip");
	T_CHECK(ccom_tune_cma_p2p_load(nlocal, 0, &pback) == -ENOENT, "local rank 0 read rank 1's");
	T_CHECK(ccom_tune_cma_load(nlocal, &back) == 0 && !memcmp(&t, &back, sizeof(t)),
		"the Send/Recv store changed the collectives' cache");
	unlink(send);
	unlink(path);
	return T_PASS;
}

/* Threads storing one cache at once (one process: one pid): the file is always one whole table. */
struct store_arg {
	const struct ccom_verdict_file *f;
	int8_t v[2][4];
};

static void *store_loop(void *p)
{
	struct store_arg *a = p;

	for (int i = 0; i < 300; i++)
		ccom_verdict_store(a->f, &a->v[0][0]);
	return NULL;
}

static int test_verdict_file(void)
{
	char path[128];
	struct ccom_verdict_file f = { .path = path, .what = "test cache", .form = "kind log2 v",
				       .nkinds = 2, .log_min = 16, .nsizes = 4, .none = 0 };
	struct store_arg a = { .f = &f, .v = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } } };
	struct store_arg b = { .f = &f, .v = { { -1, -1, -1, -1 }, { -1, -1, -1, -1 } } };
	int8_t back[2][4];
	pthread_t ta, tb;
	int bad = 0, i, s;
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/ccom-test-verdict-%d", (int)getpid());
	unlink(path);
	T_CHECK(!pthread_create(&ta, NULL, store_loop, &a) &&
		!pthread_create(&tb, NULL, store_loop, &b), "threads");
	for (i = 0; i < 300; i++) {
		if (ccom_verdict_load(&f, &back[0][0]))
			continue;
		for (s = 1; s < 8; s++)
			bad += (&back[0][0])[s] != back[0][0];
		bad += back[0][0] == 0;
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	T_CHECK(!bad, "%d entries of a mixed or half table read", bad);
	/* A malformed line: nothing used; a line past the columns too. */
	fp = fopen(path, "w");
	T_CHECK(fp && fputs("0 16 1\n1 20 1\n", fp) >= 0 && !fclose(fp), "write");
	T_CHECK(ccom_verdict_load(&f, &back[0][0]) == -EBADMSG && back[0][0] == 0,
		"a line past the columns was read");
	unlink(path);
	return T_PASS;
}

/* A communicator as far as tune/kdev_race.c reads it: the engine present, automatic. */
static int fake_comm(struct ccomComm *c, struct ccom_tune *t, const char *key, int nlocal)
{
	memset(c, 0, sizeof(*c));
	memset(t, 0, sizeof(*t));
	c->tune = t;
	c->nranks = nlocal;
	t->paths.shm = true;
	t->paths.engine.present = true;
	t->paths.engine.nlocal = nlocal;
	t->paths.engine.min_bytes = 65536;
	t->paths.engine.map_feature = true;
	snprintf(t->paths.engine.load_key, sizeof(t->paths.engine.load_key), "%s", key);
	T_CHECK(ccom_tune_krace_init(c) == 0 && t->krace, "krace init");
	return T_PASS;
}

static int test_kdev_cache(void)
{
	struct ccom_op op = { .kind = CCOM_COLL_ALLREDUCE, .count = 262144,
			      .dtype = ccomFloat32 };	/* 1 MiB: log2 20 */
	uint64_t worst[CCOM_KPATH_NUM] = { 1000, 900, 700 };	/* mapped fastest */
	uint64_t worst_ip[CCOM_KPATH_NUM] = { 1000, 600, 700 };	/* in place: the engine */
	char key[64], want[256], text[512];
	struct ccomComm c;
	struct ccom_tune t;
	struct ccom_race *r, *rip;
	size_t n;
	FILE *f;

	unsetenv("CCOM_KDEV_RACE_FILE");
	snprintf(key, sizeof(key), "selftest%d-12-34.000000005", (int)getpid());
	if (fake_comm(&c, &t, key, 2))
		return T_FAIL;
	snprintf(want, sizeof(want), "/dev/shm/ccom-kdev-race-%u-%s-2", (unsigned)getuid(), key);
	T_CHECK(!strcmp(t.krace->path, want), "cache %s, want %s", t.krace->path, want);
	unlink(want);
	r = ccom_tune_krace_of(&c, &op, false);
	T_CHECK(r && r->npaths == 3, "AllReduce of 1 MiB: no 3-path race");
	/* Every collective the mapped path runs races it; the rooted ones have no kdev race. */
	for (op.kind = CCOM_COLL_ALLREDUCE; op.kind <= CCOM_COLL_ALLTOALL; op.kind++)
		T_CHECK(ccom_tune_krace_of(&c, &op, false) && ccom_tune_krace_of(&c, &op, false)->npaths == 3,
			"%s of 1 MiB: no 3-path race", ccom_coll_kind_name(op.kind));
	op.kind = CCOM_COLL_GATHER;
	T_CHECK(!ccom_tune_krace_of(&c, &op, false), "Gather got a kdev race");
	op.kind = CCOM_COLL_ALLREDUCE;
	op.count = 1024;	/* 4 KiB: below CCOM_KDEV_MIN_BYTES */
	T_CHECK(!ccom_tune_krace_of(&c, &op, false), "4 KiB raced");
	op.count = 262144;
	ccom_tune_krace_decide(&c, &op, r, worst);
	T_CHECK(r->verdict == 2, "verdict %d, want mapped (2)", r->verdict);
	/* In place apart: its own race, its own line (kind + 6), the index round trip. */
	rip = ccom_tune_krace_of(&c, &op, true);
	T_CHECK(rip && rip != r && ccom_tune_krace_is_ip(t.krace, rip) &&
		!ccom_tune_krace_is_ip(t.krace, r) && ccom_race_state(rip) == CCOM_RACE_TRIAL,
		"no separate in-place race");
	T_CHECK(ccom_tune_krace_at(t.krace, ccom_tune_krace_index(t.krace, rip)) == rip &&
		ccom_tune_krace_at(t.krace, ccom_tune_krace_index(t.krace, r)) == r,
		"race index round trip");
	T_CHECK(!t.krace->ip_open[0][4], "in place open before any call");
	ccom_tune_krace_decide(&c, &op, rip, worst_ip);
	T_CHECK(rip->verdict == 1, "in-place verdict %d, want engine (1)", rip->verdict);
	f = fopen(want, "r");
	T_CHECK(f, "no cache file %s", want);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	T_CHECK(strstr(text, "0 20 2\n") && strstr(text, "6 20 1\n"),
		"cache file holds \"%s\", want the lines \"0 20 2\" and \"6 20 1\"", text);
	free(t.krace);
	/* Same boot and driver load: the verdicts are read; in place races apart at once. */
	if (fake_comm(&c, &t, key, 2))
		return T_FAIL;
	r = ccom_tune_krace_of(&c, &op, false);
	rip = ccom_tune_krace_of(&c, &op, true);
	T_CHECK(t.krace->cached == 2 && ccom_race_state(r) == CCOM_RACE_KEPT && r->verdict == 2 &&
		ccom_race_state(rip) == CCOM_RACE_KEPT && rip->verdict == 1 && t.krace->ip_open[0][4],
		"the cached verdicts were not read (%d cached)", t.krace->cached);
	free(t.krace);
	/* The driver reloaded (another inode/ctime in the key), or 3 local ranks: measured again. */
	key[strlen(key) - 1] = '6';
	if (fake_comm(&c, &t, key, 2))
		return T_FAIL;
	T_CHECK(t.krace->cached == 0 &&
		ccom_race_state(ccom_tune_krace_of(&c, &op, false)) == CCOM_RACE_TRIAL,
		"a verdict of another driver load was read");
	free(t.krace);
	key[strlen(key) - 1] = '5';
	if (fake_comm(&c, &t, key, 3))
		return T_FAIL;
	T_CHECK(t.krace->cached == 0, "a verdict of 2 local ranks was read by 3");
	free(t.krace);
	unlink(want);
	return T_PASS;
}

int main(void)
{
	int (*tests[])(void) = { test_schedule, test_verdicts, test_tail, test_rechecks, test_audit, test_cached,
				 test_warming, test_short, test_kdev_cache, test_verdict_file,
				 test_cma_cache };
	int rc = T_PASS;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int r = tests[i]();

		if (r == T_FAIL)
			rc = T_FAIL;
		else if (r == T_SKIP && rc == T_PASS && i == sizeof(tests) / sizeof(tests[0]) - 1)
			rc = T_SKIP;
	}
	if (rc == T_PASS)
		printf("PASS: tune_race\n");
	return rc;
}
