/* SPDX-License-Identifier: MIT */
/*
 * coll_matrix_proto.h - for the matrix tests that force a protocol
 * (coll_matrix_ll, coll_matrix_ll128): run coll_matrix.h's matrix with
 * CCOM_PROTO forced and check, from the tuner's INFO lines, that every rank
 * used it.
 */
#ifndef CCOM_COLL_MATRIX_PROTO_H
#define CCOM_COLL_MATRIX_PROTO_H

#include <glob.h>

#include "coll_matrix.h"

/*
 * Every rank of the jobs of more than one rank must log that the tuner
 * chose direct/@proto for some collective (CCOM_DEBUG=INFO, TUNE: "rank R:
 * ... bytes on N ranks ... -> direct/PROTO (first use of this choice)"):
 * the forced protocol was used, not silently replaced by another.  The
 * ranks of later jobs share their parent's log file, so ranks are told
 * apart by the (N, R) of the line.
 */
static inline int ct_used_proto(const char *pattern, const char *proto, int want_ranks)
{
	unsigned char seen[9][8] = { { 0 } };
	char want[64], line[4096];
	int with = 0, n, r;
	glob_t g;
	size_t i;

	snprintf(want, sizeof(want), " -> direct/%s (first use", proto);
	T_CHECK(glob(pattern, 0, NULL, &g) == 0, "no logs matching %s", pattern);
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		while (f && fgets(line, sizeof(line), f)) {
			const char *p = strstr(line, "CCOM INFO"), *q;

			if (!p || !strstr(line, want) || !(p = strstr(p, " rank ")) ||
			    !(q = strstr(p, " bytes on ")) || sscanf(p, " rank %d:", &r) != 1 ||
			    sscanf(q, " bytes on %d ranks", &n) != 1)
				continue;
			if (n >= 2 && n <= 8 && r >= 0 && r < n && !seen[n][r]++)
				with++;
		}
		if (f)
			fclose(f);
		unlink(g.gl_pathv[i]);
	}
	globfree(&g);
	printf("%d ranks of the jobs of 2 to 8 ranks ran a collective direct/%s\n", with, proto);
	T_CHECK(with >= want_ranks, "only %d ranks used direct/%s, want %d", with, proto,
		want_ranks);
	return T_PASS;
}

static inline int ct_matrix_proto_main(const char *proto)
{
	char env[32], log[128], pattern[128];

	snprintf(env, sizeof(env), "CCOM_PROTO=%s", proto);
	snprintf(log, sizeof(log), "/tmp/ccom-matrix-%s-%d-%%p.log", proto, (int)getpid());
	snprintf(pattern, sizeof(pattern), "/tmp/ccom-matrix-%s-%d-*.log", proto, (int)getpid());
	setenv("CCOM_DEBUG", "INFO", 1);
	setenv("CCOM_DEBUG_SUBSYS", "TUNE", 1);
	setenv("CCOM_DEBUG_FILE", log, 1);
	if (ct_matrix_main(env, NULL))
		return T_FAIL;
	/* The jobs of 2, 3, 4 and 8 ranks: 17 ranks. */
	return ct_used_proto(pattern, proto, 2 + 3 + 4 + 8);
}

#endif
