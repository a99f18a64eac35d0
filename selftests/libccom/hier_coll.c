// SPDX-License-Identifier: MIT
/*
 * Description: hierarchical collectives (coll/hier.c) between simulated
 * hosts (network namespaces on one bridge; needs root and iproute2,
 * skipped otherwise).  Layouts 2 hosts x 2 ranks, 2 x 3, 3 x 2 (ranks
 * interleaved over the hosts), 4 x 1 and the uneven 3 + 1; each run with
 * CCOM_ALGO=rail, CCOM_ALGO=rab, CCOM_ALGO=hostpair (AlltoAll per host
 * pair, coll/hier_alltoall.c), CCOM_ALGO=ring (flat) and unset (the
 * tuner's choice, which every rank must log identically).  Every rank
 * runs AllReduce, AllGather, ReduceScatter, AlltoAll, Reduce and Broadcast
 * (roots 0 and n - 1), each out of place and in place, for 8 dtype x op pairs
 * at 1, 7, 1023 and 5000 elements, and int32 / fp32 sums of 200003
 * elements (several ReduceScatter and AlltoAll pieces) and 1 Mi + 5
 * (several AllReduce segments; no AllGather / ReduceScatter / AlltoAll at
 * that size), checks each
 * result against the reference and hashes every output buffer.  The
 * inputs are small integers, exact in every type, so every schedule must
 * give the same bits: the hashes of the hierarchical runs must equal the
 * flat run's, rank by rank.  The tuner's log (CCOM_DEBUG=INFO, TUNE) must
 * show the schedule that ran: rail/rab on the layouts that allow them, the
 * logged fallback (and the flat algorithm) on the others.
 */
#include <stdbool.h>

#include "hier_util.h"

struct layout {
	const char *name;
	int nranks, nhosts;
	int host_of[HT_MAX_RANKS];
	bool rail_ok, rab_ok;
};

static const struct layout layouts[] = {
	{ "2x2", 4, 2, { 0, 0, 1, 1 }, true, true },
	{ "2x3", 6, 2, { 0, 1, 0, 1, 0, 1 }, true, true },
	{ "3x2", 6, 3, { 0, 1, 2, 2, 1, 0 }, true, true },
	{ "4x1", 4, 4, { 0, 1, 2, 3 }, false, false },
	{ "3+1", 4, 2, { 0, 0, 1, 0 }, false, true },
};
#define NLAYOUTS ((int)(sizeof(layouts) / sizeof(layouts[0])))

static const char *const modes[] = { "ring", "rail", "rab", "hostpair", "" };
#define NMODES 5

static const size_t counts[] = { 1, 7, 1023, 5000 };
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))
#define LARGE ((1u << 20) + 5)
#define MID 200003
#define BUFSZ (12u << 20)

static uint64_t fnv(uint64_t h, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static long alltoall(ccomComm_t comm, int rank, int n, const struct nett_combo *c, size_t count,
		     char *in, char *out, uint64_t *h);

/*
 * One dtype x op at @count: AllReduce, Reduce, Broadcast, AllGather,
 * ReduceScatter into hash @h, AlltoAll into @ha; only the AlltoAll with
 * @a2a_only (CCOM_ALGO=hostpair, where the others run flat anyway).
 */
static long one(ccomComm_t comm, int rank, int n, const struct nett_combo *c, size_t count,
		char *in, char *out, uint64_t *h, uint64_t *ha, bool a2a_only)
{
	size_t es = ct_size(c->t), i;
	int roots[2] = { 0, n - 1 }, k, r;
	long bad = 0;

	if (a2a_only)
		return count * (size_t)n * es > BUFSZ ? 0 : alltoall(comm, rank, n, c, count, in, out, ha);
	nett_fill(in, c->t, count, rank, 0, c->op);
	memset(out, 0x5a, count * es);
	if (nett_sync(comm, ccomAllReduce(in, out, count, c->t, c->op, comm, NULL), "allreduce", rank))
		return 1;
	bad += nett_mismatches(out, c->t, count, 0, n, c->op, "allreduce", rank);
	*h = fnv(*h, out, count * es);
	memcpy(out, in, count * es);
	if (nett_sync(comm, ccomAllReduce(out, out, count, c->t, c->op, comm, NULL),
		      "allreduce in place", rank))
		return 1;
	bad += nett_mismatches(out, c->t, count, 0, n, c->op, "allreduce in place", rank);
	*h = fnv(*h, out, count * es);
	/* Reduce and Broadcast at roots 0 and n - 1, out of place (k < 2) and in place. */
	for (k = 0; k < 4; k++) {
		const char *src = in;

		memset(out, 0x5a, count * es);
		if (k >= 2) {
			memcpy(out, in, count * es);
			src = out;
		}
		if (nett_sync(comm, ccomReduce(src, out, count, c->t, c->op, roots[k % 2], comm, NULL),
			      k >= 2 ? "reduce in place" : "reduce", rank))
			return 1;
		if (rank == roots[k % 2]) {
			bad += nett_mismatches(out, c->t, count, 0, n, c->op, "reduce", rank);
			*h = fnv(*h, out, count * es);
		}
	}
	for (k = 0; k < 4; k++) {
		char *src = k >= 2 ? out : in;

		memset(out, 0x5a, count * es);
		for (i = 0; i < count; i++)
			ct_put(src, i, c->t, (double)((rank * 31 + i) % 97));
		if (nett_sync(comm, ccomBroadcast(src, out, count, c->t, roots[k % 2], comm, NULL),
			      k >= 2 ? "broadcast in place" : "broadcast", rank))
			return 1;
		for (i = 0; i < count; i++)
			bad += ct_get(out, i, c->t) != (double)((roots[k % 2] * 31 + i) % 97);
		*h = fnv(*h, out, count * es);
	}
	if (count * (size_t)n * es > BUFSZ)
		goto out;
	/* AllGather out of place and in place. */
	for (k = 0; k < 2; k++) {
		char *src = k ? out + (size_t)rank * count * es : in;

		for (i = 0; i < count; i++)
			ct_put(src, i, c->t, (double)((rank * 31 + i) % 97));
		if (!k)
			memset(out, 0x5a, count * (size_t)n * es);
		if (nett_sync(comm, ccomAllGather(src, out, count, c->t, comm, NULL), "allgather",
			      rank))
			return 1;
		for (r = 0; r < n; r++)
			for (i = 0; i < count; i++)
				bad += ct_get(out + (size_t)r * count * es, i, c->t) !=
				       (double)((r * 31 + i) % 97);
		*h = fnv(*h, out, count * (size_t)n * es);
	}
	/* ReduceScatter out of place and in place (the output is this rank's block of the input). */
	for (k = 0; k < 2; k++) {
		char *dst = k ? in + (size_t)rank * count * es : out;

		nett_fill(in, c->t, count * (size_t)n, rank, 0, c->op);
		if (!k)
			memset(out, 0x5a, count * es);
		if (nett_sync(comm, ccomReduceScatter(in, dst, count, c->t, c->op, comm, NULL),
			      "reducescatter", rank))
			return 1;
		bad += nett_mismatches(dst, c->t, count, count * (size_t)rank, n, c->op,
				       k ? "reducescatter in place" : "reducescatter", rank);
		*h = fnv(*h, dst, count * es);
	}
	bad += alltoall(comm, rank, n, c, count, in, out, ha);
out:
	if (bad)
		fprintf(stderr, "rank %d: %ld wrong values (dtype %d, op %d, count %zu)\n", rank, bad,
			(int)c->t, (int)c->op, count);
	return bad;
}

/* AlltoAll out of place and in place: block q of rank r's input holds (31r + 7q + i) % 97. */
static long alltoall(ccomComm_t comm, int rank, int n, const struct nett_combo *c, size_t count,
		     char *in, char *out, uint64_t *h)
{
	size_t es = ct_size(c->t), i;
	long bad = 0;
	int k, r;

	for (k = 0; k < 2; k++) {
		char *src = k ? out : in;

		for (r = 0; r < n; r++)
			for (i = 0; i < count; i++)
				ct_put(src + (size_t)r * count * es, i, c->t,
				       (double)((rank * 31 + r * 7 + i) % 97));
		if (!k)
			memset(out, 0x5a, count * (size_t)n * es);
		if (nett_sync(comm, ccomAlltoAll(src, out, count, c->t, comm, NULL),
			      k ? "alltoall in place" : "alltoall", rank))
			return 1;
		for (r = 0; r < n; r++)
			for (i = 0; i < count; i++)
				bad += ct_get(out + (size_t)r * count * es, i, c->t) !=
				       (double)((r * 31 + rank * 7 + i) % 97);
		*h = fnv(*h, out, count * (size_t)n * es);
	}
	return bad;
}

static int body(ccomComm_t comm, int rank, int nranks, void *arg, uint64_t *result)
{
	char *in = malloc(BUFSZ), *out = malloc(BUFSZ);
	uint64_t h = 0xcbf29ce484222325ull, ha = h;
	bool a2a_only = *(const bool *)arg;
	long bad = 0;
	int c, k;

	if (!in || !out)
		return 1;
	for (c = 0; c < NETT_NCOMBOS && !bad; c++)
		for (k = 0; k < NCOUNTS && !bad; k++)
			bad += one(comm, rank, nranks, &nett_combos[c], counts[k], in, out, &h, &ha,
				   a2a_only);
	for (c = 0; c < 2 && !bad; c++) {
		bad += one(comm, rank, nranks, &nett_combos[c], MID, in, out, &h, &ha, a2a_only);
		bad += one(comm, rank, nranks, &nett_combos[c], LARGE, in, out, &h, &ha, a2a_only);
	}
	free(in);
	free(out);
	/* High half: the other collectives (0 when skipped), low half: AlltoAll. */
	*result = (a2a_only ? 0 : (h ^ (h >> 32)) << 32) | ((ha ^ (ha >> 32)) & 0xffffffffull);
	return bad ? 1 : 0;
}

static char logdir[64];

/* Count the log lines of the last job that contain @s. */
struct log_count {
	const char *s;
	int hits;
};

static void count_line(const char *line, void *ctx)
{
	struct log_count *c = ctx;

	c->hits += strstr(line, c->s) != NULL;
}

static int log_has(const char *s)
{
	struct log_count c = { s, 0 };

	t_dir_lines(logdir, "", count_line, &c);
	return c.hits;
}

/* The distinct choice lines seen and how often each was. */
struct choices {
	char (*seen)[256];
	int *cnt;
	int nseen;
};

static void count_choice(const char *line, void *ctx)
{
	const char *p = strstr(line, " of "), *q = strstr(line, " -> ");
	struct choices *c = ctx;
	int i;

	if (!p || !q || !strstr(line, "(first use of this choice)"))
		return;
	while (p > line && p[-1] != ' ')
		p--;	/* back to the collective's name */
	for (i = 0; i < c->nseen && strcmp(c->seen[i], p); i++)
		;
	if (i == c->nseen && c->nseen < 4096)
		snprintf(c->seen[c->nseen++], 256, "%.255s", p);
	if (i < 4096)
		c->cnt[i]++;
}

/*
 * Every rank must log the same choices: each "<collective> of <bytes> on
 * ... -> <algo>/<proto>" line (without its "rank N: " prefix) appears
 * exactly once per rank.  Returns the number of lines that do not.
 */
static int same_choices(int n)
{
	struct choices c = { calloc(4096, 256), calloc(4096, sizeof(int)), 0 };
	int i, bad = 0;

	if (!c.seen || !c.cnt || t_dir_lines(logdir, "", count_choice, &c)) {
		free(c.seen);
		free(c.cnt);
		return 1;
	}
	for (i = 0; i < c.nseen; i++)
		if (c.cnt[i] != n) {
			fprintf(stderr, "%d of %d ranks logged: %s", c.cnt[i], n, c.seen[i]);
			bad++;
		}
	free(c.seen);
	free(c.cnt);
	return bad;
}

/* What the tuner's log must say for @mode on @l: 0 or 1 (printed). */
static int check_log(const struct layout *l, const char *mode)
{
	bool rail = !strcmp(mode, "rail"), rab = !strcmp(mode, "rab");
	bool hostpair = !strcmp(mode, "hostpair");
	int n = l->nranks, bad = 0;

	if (hostpair) {
		/* AlltoAll per host pair wherever a host holds several ranks; the rest flat. */
		if (l->rab_ok)
			bad |= log_has("AlltoAll of") != log_has("-> hostpair/simple") ||
			       log_has("-> hostpair/simple") < n;
		else
			bad |= log_has("using the flat choice") < n || log_has("-> hostpair/") != 0;
		bad |= log_has("-> rail/") + log_has("-> rab/") != 0;
	} else if (rail && l->rail_ok) {
		/* AllReduce by rails; Broadcast and Reduce through the leaders. */
		bad |= log_has("-> rail/simple") < 3 * n;	/* AllReduce, AllGather, ReduceScatter */
		bad |= log_has("-> rab/simple") < 2 * n;
	} else if (rab && l->rab_ok) {
		bad |= log_has("-> rab/simple") < 3 * n;	/* AllReduce, Reduce, Broadcast */
	} else if (rail || rab) {
		bad |= log_has("using the flat choice") < n;
		bad |= log_has("-> rail/") + log_has("-> rab/") != 0;
	} else if (mode[0]) {
		bad |= log_has("-> rail/") + log_has("-> rab/") != 0;
	}
	if ((rail || rab || (mode[0] && !hostpair)) && log_has("-> hostpair/"))
		bad = 1;	/* only CCOM_ALGO=hostpair or the tuner's choice runs it */
	bad |= same_choices(n) != 0;
	if (!l->rab_ok)
		bad |= log_has("hosts holds one rank") < n;
	else if (!l->rail_ok)
		bad |= log_has("split-rail needs the same count on every host") < n;
	if (bad)
		fprintf(stderr, "layout %s, CCOM_ALGO=%s: the tuner's log does not show the expected choice (logs in %s)\n",
			l->name, mode, logdir);
	return bad;
}

int main(void)
{
	static char algo_env[NMODES][32];
	uint64_t flat[HT_MAX_RANKS];
	int li, m, r, rc, fails = 0;

	rc = ht_hosts_up(HT_MAX_HOSTS);
	if (rc)
		return rc;
	snprintf(logdir, sizeof(logdir), "/tmp/hier_coll.%d", (int)getpid());
	for (li = 0; li < NLAYOUTS; li++) {
		const struct layout *l = &layouts[li];

		for (m = 0; m < NMODES; m++) {
			char logenv[96];
			static bool a2a_only;
			struct ht_job j = { .nranks = l->nranks, .fn = body, .arg = &a2a_only };

			a2a_only = !strcmp(modes[m], "hostpair");
			nett_sh("rm -rf %s && mkdir -p %s", logdir, logdir);
			/* The last mode leaves CCOM_ALGO unset: the tuner's own choices. */
			snprintf(algo_env[m], sizeof(algo_env[m]), "CCOM_ALGO=%s", modes[m]);
			snprintf(logenv, sizeof(logenv), "CCOM_DEBUG_FILE=%s/log.%%p", logdir);
			memcpy(j.host_of, l->host_of, sizeof(j.host_of));
			j.env[0] = algo_env[m];
			j.env[1] = "CCOM_DEBUG=INFO";
			j.env[2] = "CCOM_DEBUG_SUBSYS=TUNE";
			j.env[3] = logenv;
			j.env[4] = "CCOM_OP_TIMEOUT=60";
			if (ht_run(&j)) {
				fprintf(stderr, "FAIL: layout %s, CCOM_ALGO=%s: a rank failed\n", l->name,
					modes[m]);
				fails++;
				continue;
			}
			if (check_log(l, modes[m]))
				fails++;
			if (m == 0) {
				memcpy(flat, j.result, sizeof(flat));
			} else {
				uint64_t mask = a2a_only ? 0xffffffffull : ~0ull;

				for (r = 0; r < l->nranks; r++)
					if ((j.result[r] & mask) != (flat[r] & mask)) {
						fprintf(stderr, "FAIL: layout %s, CCOM_ALGO=%s: rank %d's outputs differ from the flat run's (hash %016llx, flat %016llx)\n",
							l->name, modes[m], r,
							(unsigned long long)j.result[r],
							(unsigned long long)flat[r]);
						fails++;
						break;
					}
			}
			printf("%s layout %s (%d ranks on %d hosts), CCOM_ALGO=%s\n",
			       fails ? "after a failure:" : "ok", l->name, l->nranks, l->nhosts,
			       modes[m][0] ? modes[m] : "(unset: the tuner's choice)");
		}
	}
	if (!fails)
		nett_sh("rm -rf %s", logdir);
	printf("%s: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}
