/* SPDX-License-Identifier: MIT */
/*
 * verdict_file.h - the file behind a per-boot cache of measured verdicts
 * (tune/verdict_file.c): lines "kind log2 value", one per collective (or
 * row) and power of two of the size, read whole or not at all, replaced
 * atomically.  Used by the CMA verdicts (tune/cma_cache.c, both the
 * collectives' and a sender's Send/Recv) and the kdev race
 * (tune/kdev_race.c).
 */
#ifndef CCOM_TUNE_VERDICT_FILE_H
#define CCOM_TUNE_VERDICT_FILE_H

#include <stdbool.h>
#include <stdint.h>

/**
 * struct ccom_verdict_file - one cache file and the table it holds
 * @path: the file
 * @what: what it caches, for the log ("CMA calibration cache")
 * @form: the line the file must hold, for the log ("kind log2 1|-1")
 * @nkinds: rows of the table (0 .. @nkinds - 1 in the file)
 * @log_min: log2 of the size of column 0
 * @nsizes: columns (log2 @log_min .. @log_min + @nsizes - 1 in the file)
 * @none: the table's value for "no verdict" (never written, never read)
 * @valid: whether @v may stand in row @kind (NULL: any value but @none)
 * @arg: passed to @valid
 * @max_age_s: a file older is not read (0: any age); storing into a file
 *	younger keeps its time, so that its verdicts age from when the first
 *	of them was written
 */
struct ccom_verdict_file {
	const char *path;
	const char *what;
	const char *form;
	int nkinds;
	int log_min;
	int nsizes;
	int8_t none;
	bool (*valid)(const void *arg, int kind, int v);
	const void *arg;
	int64_t max_age_s;
};

/*
 * Read @f into @v (@nkinds x @nsizes, row by row; entries the file lacks
 * are @none): 0, or -errno (-ENOENT: no file yet; -EBADMSG: a malformed
 * line, logged at INFO with the file's name, and every entry @none;
 * -ESTALE: older than @max_age_s, logged at INFO, every entry @none).
 */
int ccom_verdict_load(const struct ccom_verdict_file *f, int8_t *v);
/*
 * Replace the file with @v's entries other than @none: written to a
 * temporary file of its own (mkstemp: two writers, threads of one
 * process included, never share one) and renamed over the file, so a
 * reader sees one writer's whole table, never a mix; failures at INFO.
 */
void ccom_verdict_store(const struct ccom_verdict_file *f, const int8_t *v);

#endif
