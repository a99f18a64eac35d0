// SPDX-License-Identifier: MIT
/*
 * Description: ccom-perf (found next to this test: BUILD/bin/ccom-perf)
 * runs every collective on 3 forked ranks over small sizes with results
 * checked, exits 0, prints one nccl-tests row per size with both
 * out-of-place and in-place columns, "# Out of bounds values : 0 OK" and
 * "# Avg bus bandwidth"; bad arguments exit 2 with a message.  With -R
 * each row carries the roofline's 8 columns and the header the staged
 * model's traffic coefficients for 2 ranks (AllReduce: M 4, K 4).
 */
#include <limits.h>

#include "test_util.h"

static char perf[PATH_MAX];

static int find_perf(void)
{
	return t_build_file("bin/ccom-perf", perf, sizeof(perf)) ? -1 : access(perf, X_OK);
}

static int run(const char *args, char *out, size_t len, int *status)
{
	char cmd[PATH_MAX + 256];

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", perf, args);
	*status = t_read_cmd(cmd, out, len);
	return *status == -1 ? -1 : 0;
}

static int count_rows(const char *out)
{
	const char *p = out;
	int rows = 0;

	while (p && *p) {
		if (*p != '#' && strchr(p, '\n') != p && strstr(p, "  ") == p)
			rows++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return rows;
}

static int check_coll(const char *coll)
{
	static char out[65536];
	char args[256];
	int st;

	snprintf(args, sizeof(args), "%s -n 3 -b 8 -e 64K -f 8 -w 1 -i 3 -d int32", coll);
	T_CHECK(run(args, out, sizeof(out), &st) == 0, "popen failed");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s exited %d:\n%s", coll, st, out);
	T_CHECK(strstr(out, "out-of-place") && strstr(out, "in-place") && strstr(out, "busbw"),
		"%s: no nccl-tests header:\n%s", coll, out);
	T_CHECK(strstr(out, "# Out of bounds values : 0 OK"), "%s: no OK line:\n%s", coll, out);
	T_CHECK(strstr(out, "# Avg bus bandwidth"), "%s: no average line", coll);
	/* 8, 64, 512, 4096, 32768 bytes */
	T_CHECK(count_rows(out) == 5, "%s: %d rows, want 5:\n%s", coll, count_rows(out), out);
	return T_PASS;
}

/* Fields of the first data row of @out, and its 14th (the model name) in @model. */
static int row_fields(const char *out, char *model, size_t len)
{
	const char *p = out;
	char line[1024], *tok, *save;
	int n = 0;

	while (p && (*p == '#' || *p == '\n'))
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	if (!p)
		return 0;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (++n == 14)
			snprintf(model, len, "%s", tok);
	return n;
}

static int check_roof(void)
{
	static char out[65536];
	char model[32] = "";
	int st;

	T_CHECK(run("allreduce -n 2 -b 64K -e 256K -f 4 -w 1 -i 3 -R", out, sizeof(out), &st) == 0,
		"popen failed");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "-R exited %d:\n%s", st, out);
	T_CHECK(strstr(out, "#   staged M 4 K 4 (in-place M 4 K 4)") &&
		strstr(out, "#   zcopy  M 4 K 0"), "-R: not the staged/zcopy coefficients of 2 ranks:\n%s",
		out);
	T_CHECK(count_rows(out) == 2, "-R: %d rows, want 2:\n%s", count_rows(out), out);
	T_CHECK(row_fields(out, model, sizeof(model)) == 21, "-R: a row without 21 fields:\n%s",
		out);
	T_CHECK(!strcmp(model, "staged") || !strcmp(model, "auto"), "-R: model %s, want staged or auto",
		model);
	T_CHECK(strstr(out, "# Avg % of roofline"), "-R: no average line:\n%s", out);
	return T_PASS;
}

int main(void)
{
	static const char *const colls[] = { "allreduce", "broadcast", "reduce", "allgather",
					     "reducescatter", "alltoall", "sendrecv" };
	static char out[4096];
	int st;

	if (find_perf())
		return t_skip("ccom-perf not built next to this test (%s)", perf);
	for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
		if (check_coll(colls[i]))
			return T_FAIL;
	if (check_roof())
		return T_FAIL;
	T_CHECK(run("allreduce -n 2 -d nosuchtype", out, sizeof(out), &st) == 0, "popen");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(out, "invalid -d"),
		"bad dtype: status %d: %s", st, out);
	T_CHECK(run("nosuchcoll -n 2", out, sizeof(out), &st) == 0, "popen");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2, "bad collective: status %d", st);
	printf("ccom-perf: 7 collectives checked, -R columns and models, bad arguments rejected\n");
	return T_PASS;
}
