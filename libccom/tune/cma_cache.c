// SPDX-License-Identifier: MIT
/*
 * cma_cache.c - the CMA path's verdicts cached per boot (tune/).
 *
 * File: CCOM_CMA_CALIB_FILE, else /dev/shm/ccom-cma-calib2-UID-BOOTID-N
 * (N local ranks: the verdict depends on how many ranks share the
 * memory).  One line per measured collective and size: "kind log2 v",
 * kind an enum ccom_coll_kind value below CCOM_TUNE_CMA_KINDS, log2 of
 * the per-rank bytes, v 1 (CMA) or -1 (staged).  A new boot has a new
 * boot id, so a new file: the machine is measured again.  "calib2":
 * verdicts of the race in tune/race.c; the first method's (best of 3
 * alternating single operations, which kept the staged path where CMA
 * was faster) are not read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune/cma_cache.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

static int cache_path(int nlocal, char *buf, size_t len)
{
	const char *p = ccom_param_str("CCOM_CMA_CALIB_FILE");
	char boot[64];

	if (p && p[0]) {
		snprintf(buf, len, "%s", p);
		return 0;
	}
	ccom_boot_id(boot, sizeof(boot));
	if (!boot[0])
		return -ENOENT;
	snprintf(buf, len, "/dev/shm/ccom-cma-calib2-%u-%s-%d", (unsigned)getuid(), boot, nlocal);
	return 0;
}

int ccom_tune_cma_load(int nlocal, struct ccom_tune_cma_table *t)
{
	char path[512], line[128];
	int k, lg, v, n = 0;
	FILE *f;

	memset(t, 0, sizeof(*t));
	if (cache_path(nlocal, path, sizeof(path)))
		return -ENOENT;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (sscanf(line, "%d %d %d", &k, &lg, &v) != 3 || k < 0 || k >= CCOM_TUNE_CMA_KINDS ||
		    lg < CCOM_TUNE_CMA_LOG_MIN || lg >= CCOM_TUNE_CMA_LOG_MIN + CCOM_TUNE_CMA_SIZES ||
		    (v != 1 && v != -1)) {
			ccom_info(CCOM_SUBSYS_TUNE, "CMA calibration cache %s: line %d is not \"kind log2 1|-1\"; the cache is ignored and the paths measured again (delete the file if it stays)",
				  path, n);
			memset(t, 0, sizeof(*t));
			fclose(f);
			return -EBADMSG;
		}
		t->verdict[k][lg - CCOM_TUNE_CMA_LOG_MIN] = (int8_t)v;
	}
	fclose(f);
	return 0;
}

void ccom_tune_cma_store(int nlocal, const struct ccom_tune_cma_table *t)
{
	char path[512], tmp[600];
	int k, s, err = 0;
	FILE *f;

	if (cache_path(nlocal, path, sizeof(path)))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		ccom_info(CCOM_SUBSYS_TUNE, "could not cache the CMA calibration in %s: %s", tmp,
			  strerror(errno));
		return;
	}
	for (k = 0; k < CCOM_TUNE_CMA_KINDS; k++)
		for (s = 0; s < CCOM_TUNE_CMA_SIZES; s++)
			if (t->verdict[k][s])
				fprintf(f, "%d %d %d\n", k, s + CCOM_TUNE_CMA_LOG_MIN, t->verdict[k][s]);
	if (fclose(f))
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		ccom_info(CCOM_SUBSYS_TUNE, "could not cache the CMA calibration in %s: %s", path,
			  strerror(err));
	}
}
