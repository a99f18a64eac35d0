// SPDX-License-Identifier: MIT
/*
 * verdict_file.c - per-boot caches of measured verdicts (tune/verdict_file.h).
 *
 * Why one helper: the CMA verdicts and the kdev race each had their own
 * reader and writer of the same format, and the writers named their
 * temporary file after the pid, so two communicators of one process
 * storing at once wrote into one temporary file.  Two writers still race
 * on the final name, by design: the last rename wins, and the loser's
 * verdicts are measured again by the next communicator that lacks them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tune/verdict_file.h"
#include "util/log.h"

static void fill_none(const struct ccom_verdict_file *f, int8_t *v)
{
	memset(v, (unsigned char)f->none, (size_t)f->nkinds * (size_t)f->nsizes);
}

static bool line_ok(const struct ccom_verdict_file *f, const char *line, int *k, int *s, int *val)
{
	int lg;
	char end;

	if (sscanf(line, "%d %d %d %c", k, &lg, val, &end) != 3 || *k < 0 || *k >= f->nkinds ||
	    lg < f->log_min || lg >= f->log_min + f->nsizes || *val < INT8_MIN ||
	    *val > INT8_MAX || *val == f->none)
		return false;
	*s = lg - f->log_min;
	return !f->valid || f->valid(f->arg, *k, *val);
}

int ccom_verdict_load(const struct ccom_verdict_file *f, int8_t *v)
{
	char line[128];
	int k, s, val, n = 0;
	struct stat st;
	FILE *fp;

	fill_none(f, v);
	if (!f->path || !f->path[0])
		return -ENOENT;
	fp = fopen(f->path, "re");
	if (!fp)
		return -errno;
	if (f->max_age_s > 0 && !fstat(fileno(fp), &st) &&
	    (int64_t)time(NULL) - (int64_t)st.st_mtime > f->max_age_s) {
		ccom_info(CCOM_SUBSYS_TUNE, "%s %s was written %lld s ago, more than %lld s: its verdicts are measured again",
			  f->what, f->path, (long long)((int64_t)time(NULL) - (int64_t)st.st_mtime),
			  (long long)f->max_age_s);
		fclose(fp);
		return -ESTALE;
	}
	while (fgets(line, sizeof(line), fp)) {
		n++;
		if (!line_ok(f, line, &k, &s, &val)) {
			ccom_info(CCOM_SUBSYS_TUNE, "%s %s: line %d is not \"%s\"; the cache is ignored and the paths measured again (delete the file if it stays)",
				  f->what, f->path, n, f->form);
			fill_none(f, v);
			fclose(fp);
			return -EBADMSG;
		}
		v[k * f->nsizes + s] = (int8_t)val;
	}
	fclose(fp);
	return 0;
}

void ccom_verdict_store(const struct ccom_verdict_file *f, const int8_t *v)
{
	char tmp[640];
	int k, s, fd, err = 0;
	struct stat st;
	FILE *fp;

	if (!f->path || !f->path[0])
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", f->path) >= (int)sizeof(tmp)) {
		ccom_info(CCOM_SUBSYS_TUNE, "could not cache the %s in %s: the name is too long",
			  f->what, f->path);
		return;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (!fp) {
		err = errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		ccom_info(CCOM_SUBSYS_TUNE, "could not cache the %s in %s: %s", f->what, tmp,
			  strerror(err));
		return;
	}
	/* mkstemp makes it 0600: the file is the user's, as before. */
	for (k = 0; k < f->nkinds; k++)
		for (s = 0; s < f->nsizes; s++)
			if (v[k * f->nsizes + s] != f->none)
				fprintf(fp, "%d %d %d\n", k, s + f->log_min, v[k * f->nsizes + s]);
	/*
	 * With @max_age_s, a file still young keeps its time: @v holds its
	 * verdicts, and adding one must not make them young again.
	 */
	if (f->max_age_s > 0 && !stat(f->path, &st) &&
	    (int64_t)time(NULL) - (int64_t)st.st_mtime <= f->max_age_s) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };

		if (fflush(fp) || futimens(fileno(fp), ts))
			err = errno;
	}
	if (fclose(fp) && !err)
		err = errno;
	if (!err && rename(tmp, f->path))
		err = errno;
	if (err) {
		unlink(tmp);
		ccom_info(CCOM_SUBSYS_TUNE, "could not cache the %s in %s: %s", f->what, f->path,
			  strerror(err));
	}
}
