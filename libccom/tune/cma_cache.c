// SPDX-License-Identifier: MIT
/*
 * cma_cache.c - the CMA path's verdicts cached per boot (tune/).
 *
 * File: CCOM_CMA_CALIB_FILE-N, else /dev/shm/ccom-cma-calib3-UID-BOOTID-N
 * (N local ranks: the verdict depends on how many ranks share the
 * memory).  One line per measured collective and size: "kind log2 v",
 * kind an enum ccom_coll_kind value below CCOM_TUNE_CMA_KINDS (out of
 * place) or that plus CCOM_TUNE_CMA_KINDS (every rank in place), log2 of
 * the per-rank bytes, v 1 (CMA) or -1 (staged).  Local rank 0 writes it.
 * A sender's Send/Recv verdicts are its own, in the same name followed by
 * "-sendL" (L its local rank, the file's only writer in a communicator),
 * lines "0 log2 v".  A new boot has a new boot id, so a new file: the
 * machine is measured again; so is a file older than CCOM_CMA_CALIB_TTL
 * seconds, since one race run while other jobs loaded the machine would
 * otherwise decide for the whole boot (one rank reads the collectives'
 * file for all, and a sender its own file, so the ranks still agree).  "calib3": in-place calls measured apart
 * and the race's warm-up rounds (tune/race.c); "calib2" files mixed
 * in-place and out-of-place calls in one verdict and are not read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune/cma_cache.h"
#include "tune/verdict_file.h"
#include "util/misc.h"
#include "util/params.h"

/* @lrank < 0: the collectives' file; else local rank @lrank's Send/Recv file. */
static int cache_path(int nlocal, int lrank, char *buf, size_t len)
{
	const char *p = ccom_param_str("CCOM_CMA_CALIB_FILE");
	char boot[64];
	int n;

	if (p && p[0]) {
		/* -N as in the default name: a 4-rank job must not read 2 ranks' verdicts. */
		n = snprintf(buf, len, "%s-%d", p, nlocal);
	} else {
		ccom_boot_id(boot, sizeof(boot));
		if (!boot[0])
			return -ENOENT;
		n = snprintf(buf, len, "/dev/shm/ccom-cma-calib3-%u-%s-%d", (unsigned)getuid(), boot,
			     nlocal);
	}
	if (lrank >= 0 && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "-send%d", lrank);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool one_or_minus_one(const void *arg, int kind, int v)
{
	(void)arg;
	(void)kind;
	return v == 1 || v == -1;
}

static struct ccom_verdict_file file_of(const char *path, int rows, const char *form)
{
	return (struct ccom_verdict_file){ .path = path, .what = "CMA calibration cache",
					   .form = form, .nkinds = rows,
					   .log_min = CCOM_TUNE_CMA_LOG_MIN,
					   .nsizes = CCOM_TUNE_CMA_SIZES, .none = 0,
					   .valid = one_or_minus_one,
					   .max_age_s = ccom_param_int("CCOM_CMA_CALIB_TTL") };
}

int ccom_tune_cma_load(int nlocal, struct ccom_tune_cma_table *t)
{
	char path[512];
	struct ccom_verdict_file f = file_of(path, CCOM_TUNE_CMA_ROWS, "kind log2 1|-1");

	memset(t, 0, sizeof(*t));
	if (cache_path(nlocal, -1, path, sizeof(path)))
		return -ENOENT;
	return ccom_verdict_load(&f, &t->verdict[0][0]);
}

void ccom_tune_cma_store(int nlocal, const struct ccom_tune_cma_table *t)
{
	char path[512];
	struct ccom_verdict_file f = file_of(path, CCOM_TUNE_CMA_ROWS, "kind log2 1|-1");

	if (!cache_path(nlocal, -1, path, sizeof(path)))
		ccom_verdict_store(&f, &t->verdict[0][0]);
}

int ccom_tune_cma_p2p_load(int nlocal, int lrank, struct ccom_tune_cma_p2p_table *t)
{
	char path[512];
	struct ccom_verdict_file f = file_of(path, 1, "0 log2 1|-1");

	memset(t, 0, sizeof(*t));
	if (lrank < 0 || cache_path(nlocal, lrank, path, sizeof(path)))
		return -ENOENT;
	return ccom_verdict_load(&f, t->verdict);
}

void ccom_tune_cma_p2p_store(int nlocal, int lrank, const struct ccom_tune_cma_p2p_table *t)
{
	char path[512];
	struct ccom_verdict_file f = file_of(path, 1, "0 log2 1|-1");

	if (lrank >= 0 && !cache_path(nlocal, lrank, path, sizeof(path)))
		ccom_verdict_store(&f, t->verdict);
}
