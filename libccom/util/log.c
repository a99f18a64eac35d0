// SPDX-License-Identifier: MIT
/*
 * log.c - libccom logging.  The configuration (CCOM_DEBUG level,
 * CCOM_DEBUG_SUBSYS mask, CCOM_DEBUG_FILE destination with %h/%p expanded)
 * is read once per process on the first message.  Every line starts with
 * "host:pid:tid [rank] CCOM LEVEL" so that logs of many ranks can be merged
 * and grepped; WARN lines also carry file:line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_level = CCOM_LOG_WARN;
static unsigned int log_mask = CCOM_SUBSYS_ALL;
static FILE *log_file;
static char log_host[64];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises lines */
static int64_t log_epoch_us;

static __thread int log_rank = -1;

static const struct {
	const char *name;
	unsigned int bit;
} subsys_names[] = {
	{ "INIT", CCOM_SUBSYS_INIT },	{ "BOOT", CCOM_SUBSYS_BOOT },
	{ "NET", CCOM_SUBSYS_NET },	{ "COLL", CCOM_SUBSYS_COLL },
	{ "TUNE", CCOM_SUBSYS_TUNE },	{ "TOPO", CCOM_SUBSYS_TOPO },
	{ "KDEV", CCOM_SUBSYS_KDEV },	{ "ENV", CCOM_SUBSYS_ENV },
	{ "ALL", CCOM_SUBSYS_ALL },
};
/*
 * Only subsystems that have lines are selectable: SHM and PROXY have none
 * (the shared-memory setup logs under INIT/COLL, the kdev proxy under
 * KDEV), so naming them gets a WARN instead of silently selecting nothing.
 */

void ccom_log_set_rank(int rank)
{
	log_rank = rank;
}

static unsigned int parse_subsys(const char *s)
{
	unsigned int mask = 0;
	int exclude = 0;
	char buf[256], *tok, *save;

	if (s[0] == '^') {
		exclude = 1;
		s++;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		int found = 0;

		for (i = 0; i < CCOM_ARRAY_SIZE(subsys_names); i++)
			if (!strcasecmp(tok, subsys_names[i].name)) {
				mask |= subsys_names[i].bit;
				found = 1;
			}
		/* The logger is not set up yet: write the WARN directly. */
		if (!found)
			fprintf(log_file, "CCOM WARN CCOM_DEBUG_SUBSYS: %s is not a subsystem that logs; use INIT, BOOT, NET, COLL, TUNE, TOPO, KDEV, ENV or ALL\n",
				tok);
	}
	return exclude ? ~mask : mask;
}

/* Expand %h (host) and %p (pid) of CCOM_DEBUG_FILE into @out. */
static void expand_path(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in && o + 1 < len; in++) {
		if (in[0] == '%' && (in[1] == 'h' || in[1] == 'p')) {
			int n = in[1] == 'h' ? snprintf(out + o, len - o, "%s", log_host) :
					      snprintf(out + o, len - o, "%d", (int)getpid());
			if (n < 0 || (size_t)n >= len - o)
				break;
			o += n;
			in++;
		} else if (in[0] == '%' && in[1] == '%') {
			out[o++] = '%';
			in++;
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

/* A fork while another thread (e.g. the bootstrap root) logs must not leave the child's lock held. */
static void log_atfork_prepare(void)
{
	pthread_mutex_lock(&log_lock);
}

static void log_atfork_release(void)
{
	pthread_mutex_unlock(&log_lock);
}

static void log_setup(void)
{
	const char *lvl = ccom_param_str("CCOM_DEBUG");
	const char *sub = ccom_param_str("CCOM_DEBUG_SUBSYS");
	const char *file = ccom_param_str("CCOM_DEBUG_FILE");
	char *dot;

	gethostname(log_host, sizeof(log_host) - 1);
	dot = strchr(log_host, '.');
	if (dot)
		*dot = '\0';
	log_epoch_us = ccom_now_us();
	log_file = stderr;
	pthread_atfork(log_atfork_prepare, log_atfork_release, log_atfork_release);
	if (lvl) {
		if (!strcasecmp(lvl, "NONE") || !strcasecmp(lvl, "OFF"))
			log_level = CCOM_LOG_NONE;
		else if (!strcasecmp(lvl, "WARN"))
			log_level = CCOM_LOG_WARN;
		else if (!strcasecmp(lvl, "INFO"))
			log_level = CCOM_LOG_INFO;
		else if (!strcasecmp(lvl, "TRACE"))
			log_level = CCOM_LOG_TRACE;
		else
			fprintf(stderr, "CCOM WARN CCOM_DEBUG=%s is not one of NONE, WARN, INFO, TRACE; using WARN\n",
				lvl);
	}
	if (file && file[0]) {
		char path[512];
		FILE *f;

		expand_path(file, path, sizeof(path));
		f = fopen(path, "a");
		if (f) {
			setvbuf(f, NULL, _IOLBF, 0);
			log_file = f;
		} else {
			fprintf(stderr, "CCOM WARN cannot open CCOM_DEBUG_FILE %s: %s; logging to stderr\n",
				path, strerror(errno));
		}
	}
	if (sub)
		log_mask = parse_subsys(sub);
}

int ccom_log_enabled(enum ccom_log_level level, unsigned int subsys)
{
	pthread_once(&log_once, log_setup);
	ccom_params_flush_warnings();
	if ((int)level > log_level)
		return 0;
	return level == CCOM_LOG_WARN || (subsys & log_mask);
}

void ccom_log(enum ccom_log_level level, unsigned int subsys, const char *file, int line,
	      const char *fmt, ...)
{
	static const char *const names[] = { "NONE", "WARN", "INFO", "TRACE" };
	char msg[2048];
	va_list ap;
	int n;

	if (!ccom_log_enabled(level, subsys))
		return;
	n = snprintf(msg, sizeof(msg), "%s:%d:%d [%d] CCOM %s ", log_host, (int)getpid(),
		     (int)syscall(SYS_gettid), log_rank, names[level]);
	if (level == CCOM_LOG_TRACE)
		n += snprintf(msg + n, sizeof(msg) - n, "%.6f ",
			      (ccom_now_us() - log_epoch_us) / 1e6);
	if (level == CCOM_LOG_WARN) {
		const char *base = strrchr(file, '/');

		n += snprintf(msg + n, sizeof(msg) - n, "%s:%d ", base ? base + 1 : file, line);
	}
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fprintf(log_file, "%s\n", msg);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}
