/* SPDX-License-Identifier: MIT */
/*
 * test_util.h - helpers shared by the libccom selftests (boot_*, init_*,
 * coll_*): forking N ranks and collecting their exit codes, skip/fail
 * reporting, and fd / RSS counters for leak checks.
 *
 * Exit codes follow liburing: 0 pass, 1 fail, 77 skip (T_SKIP).
 */
#ifndef CCOM_TEST_UTIL_H
#define CCOM_TEST_UTIL_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ccom.h"

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

/* Print "FAIL <file>:<line>: msg" and return T_FAIL from the calling function. */
#define T_CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);	\
			fprintf(stderr, __VA_ARGS__);				\
			fprintf(stderr, "\n");					\
			return T_FAIL;						\
		}								\
	} while (0)

/* Check a ccom call returned @want; prints the last error otherwise. */
#define T_CCOM(call, want)							\
	do {									\
		ccomResult_t t_res_ = (call);					\
		if (t_res_ != (want)) {						\
			fprintf(stderr, "FAIL %s:%d: %s returned %d (%s), want %d; last error: %s\n", \
				__FILE__, __LINE__, #call, t_res_,		\
				ccomGetErrorString(t_res_), (int)(want),	\
				ccomGetLastError(NULL));			\
			return T_FAIL;						\
		}								\
	} while (0)

static inline int t_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return T_SKIP;
}

/* setenv() each "NAME=value" of @kv, up to @n strings or a NULL. */
static inline void t_setenvs(const char *const *kv, int n)
{
	char buf[256], *eq;
	int i;

	for (i = 0; i < n && kv[i]; i++) {
		snprintf(buf, sizeof(buf), "%s", kv[i]);
		eq = strchr(buf, '=');
		if (eq) {
			*eq = '\0';
			setenv(buf, eq + 1, 1);
		}
	}
}

/* The same for a list written in place: T_SETENV("CCOM_ALGO=ring", "CCOM_NSOCKS=2"). */
#define T_SETENV(...) t_setenvs((const char *const[]){ __VA_ARGS__, NULL }, 64)

/*
 * Log at @level (CCOM_DEBUG) to @file (CCOM_DEBUG_FILE, which may hold
 * %h / %p / %r), only for @subsys (CCOM_DEBUG_SUBSYS; NULL: left as is).
 */
static inline void t_log_to(const char *file, const char *level, const char *subsys)
{
	setenv("CCOM_DEBUG_FILE", file, 1);
	setenv("CCOM_DEBUG", level, 1);
	if (subsys)
		setenv("CCOM_DEBUG_SUBSYS", subsys, 1);
}

/*
 * Make this rank simulated host @host of its job: CCOM_HOSTID is
 * "<@prefix><@host>-<parent pid>" (the parent's pid keeps jobs apart).
 */
static inline void t_set_host(const char *prefix, int host)
{
	char id[64];

	snprintf(id, sizeof(id), "%s%d-%d", prefix, host, (int)getppid());
	setenv("CCOM_HOSTID", id, 1);
}

/*
 * The output of shell command @cmd into @out (cut at @len - 1 bytes,
 * NUL-terminated).  Returns its wait status (pclose), -1 if it did not start.
 */
static inline int t_read_cmd(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0, r;
	int st = -1;

	if (f) {
		while (n < len - 1 && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
			n += r;
		st = pclose(f);
	}
	out[n] = '\0';
	return st;
}

/* The *.log files of @dir, concatenated into @buf (cut at @size - 1, NUL-terminated). */
static inline void t_read_logs(const char *dir, char *buf, size_t size)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "cat %s/*.log 2>/dev/null", dir);
	t_read_cmd(cmd, buf, size);
}

/*
 * Call @fn(line, @ctx) for each line (up to 1023 bytes) of each file in
 * directory @dir whose name starts with @prefix ("": any but dot files).
 * Returns -1 if @dir cannot be opened.
 */
static inline int t_dir_lines(const char *dir, const char *prefix,
			      void (*fn)(const char *line, void *ctx), void *ctx)
{
	char path[4096 + 256], line[1024];
	struct dirent *e;
	DIR *d = opendir(dir);
	FILE *f;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%.4095s/%.255s", dir, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			fn(line, ctx);
		fclose(f);
	}
	closedir(d);
	return 0;
}

/*
 * @out = BUILD/@rel, BUILD being the build directory this test runs from
 * (BUILD/selftests/libccom/NAME).  0, or -1 if /proc/self/exe is unreadable
 * or @out too short.
 */
static inline int t_build_file(const char *rel, char *out, size_t len)
{
	char exe[4096], *p;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	for (i = 0; i < 3; i++) {
		p = strrchr(exe, '/');
		if (!p)
			return -1;
		*p = '\0';
	}
	return snprintf(out, len, "%s/%s", exe, rel) < (int)len ? 0 : -1;
}

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Case-insensitive "all of these words appear in @s" (NULL-terminated list). */
static inline int t_has_words_v(const char *s, va_list ap)
{
	const char *w;
	int ok = 1;

	while ((w = va_arg(ap, const char *))) {
		if (!strcasestr(s, w)) {
			fprintf(stderr, "  message lacks \"%s\": %s\n", w, s);
			ok = 0;
		}
	}
	return ok;
}

static inline int t_has_words(const char *s, ...)
{
	va_list ap;
	int ok;

	va_start(ap, s);
	ok = t_has_words_v(s, ap);
	va_end(ap);
	return ok;
}

/* ccomCommInitRankConfig with @blocking and @timeout_s (< 0: the default). */
static inline ccomResult_t t_init_cfg(ccomComm_t *comm, int nranks, ccomUniqueId id, int rank,
				      int blocking, int timeout_s)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;

	cfg.blocking = blocking;
	if (timeout_s >= 0)
		cfg.timeoutSec = timeout_s;
	return ccomCommInitRankConfig(comm, nranks, id, rank, &cfg);
}

/*
 * Rank @rank's init in case @what, which must be refused: @res is @want and
 * the last error holds each word of the NULL-terminated list; then @comm
 * is destroyed.  T_PASS or T_FAIL.
 */
static inline int t_init_refused(ccomComm_t comm, ccomResult_t res, ccomResult_t want,
				 const char *what, int rank, ...)
{
	const char *e = ccomGetLastError(NULL);
	va_list ap;
	int ok;

	T_CHECK(res == want, "%s: rank %d: init returned %d (%s), want %s: %s", what, rank, res,
		ccomGetErrorString(res), ccomGetErrorString(want), e);
	va_start(ap, rank);
	ok = t_has_words_v(e, ap);
	va_end(ap);
	T_CHECK(ok, "%s: rank %d: message", what, rank);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

typedef int (*t_rank_fn)(int rank, int nranks, void *arg);

/*
 * Fork @nranks processes running fn(rank, nranks, arg) and exiting with its
 * return value.  Waits up to @timeout_s; stragglers are killed and get code
 * 124.  codes[r] receives each rank's exit code (may be NULL).  Returns the
 * number of ranks whose code was not 0.  Do not use it while this process
 * runs libccom threads (a root from ccomGetUniqueId): see t_fork_ranks_id().
 */
static inline int t_fork_ranks(int nranks, t_rank_fn fn, void *arg, int *codes, int timeout_s)
{
	pid_t *pids = calloc(nranks, sizeof(*pids));
	int *rc = calloc(nranks, sizeof(*rc));
	int r, left = nranks, bad = 0;
	double end = t_now() + timeout_s;

	if (!pids || !rc) {
		for (r = 0; codes && r < nranks; r++)
			codes[r] = 125;
		free(pids);
		free(rc);
		return nranks;
	}
	fflush(NULL);
	for (r = 0; r < nranks; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			int code = fn(r, nranks, arg);

			fflush(NULL);
			_exit(code);
		}
		if (pids[r] < 0) {
			rc[r] = 125;
			left--;
		}
	}
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (r = 0; r < nranks; r++) {
				if (pids[r] != p)
					continue;
				rc[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				pids[r] = 0;
				left--;
			}
			continue;
		}
		if (p < 0 && errno == ECHILD)
			break;
		if (t_now() > end) {
			for (r = 0; r < nranks; r++) {
				if (pids[r] > 0) {
					fprintf(stderr, "rank %d (pid %d) still running after %d s: killed\n",
						r, (int)pids[r], timeout_s);
					kill(pids[r], SIGKILL);
					waitpid(pids[r], NULL, 0);
					rc[r] = 124;
					pids[r] = 0;
					left--;
				}
			}
			break;
		}
		usleep(2000);
	}
	for (r = 0; r < nranks; r++) {
		if (rc[r])
			bad++;
		if (codes)
			codes[r] = rc[r];
	}
	free(pids);
	free(rc);
	return bad;
}

/*
 * Fork first, create the unique id after: a process must not fork while
 * one of its threads (such as the bootstrap root started by
 * ccomGetUniqueId) may hold an allocator lock, or a child can deadlock in
 * malloc (glibc protects itself across fork, sanitizer runtimes do not).
 *
 * t_ranks_start() forks @nranks children that wait for the id on a pipe,
 * store it into *@id (in their own copy of memory) and run
 * fn(rank, nranks, arg).  The parent then calls t_ranks_release() with
 * the id (or NULL to make every child exit with 125) and t_ranks_wait().
 */
struct t_ranks {
	int nranks;
	pid_t *pids;
	int *wfds;
};

static inline int t_ranks_start(struct t_ranks *t, int nranks, t_rank_fn fn, void *arg,
				ccomUniqueId *id)
{
	int r, i;

	t->nranks = nranks;
	t->pids = calloc(nranks, sizeof(*t->pids));
	t->wfds = calloc(nranks, sizeof(*t->wfds));
	if (!t->pids || !t->wfds)
		return -1;
	fflush(NULL);
	for (r = 0; r < nranks; r++) {
		int p[2];

		t->wfds[r] = -1;
		if (pipe(p))
			return -1;
		t->pids[r] = fork();
		if (t->pids[r] == 0) {
			size_t got = 0;
			int code;

			close(p[1]);
			for (i = 0; i < r; i++)
				close(t->wfds[i]);
			while (got < sizeof(*id)) {
				ssize_t n = read(p[0], (char *)id + got, sizeof(*id) - got);

				if (n <= 0)
					_exit(125);
				got += n;
			}
			close(p[0]);
			code = fn(r, nranks, arg);
			fflush(NULL);
			_exit(code);
		}
		close(p[0]);
		t->wfds[r] = p[1];
		if (t->pids[r] < 0)
			return -1;
	}
	return 0;
}

static inline void t_ranks_release(struct t_ranks *t, const ccomUniqueId *id)
{
	int r;

	for (r = 0; r < t->nranks; r++) {
		if (t->wfds[r] < 0)
			continue;
		if (id && write(t->wfds[r], id, sizeof(*id)) != (ssize_t)sizeof(*id))
			fprintf(stderr, "cannot hand the id to rank %d\n", r);
		close(t->wfds[r]);
		t->wfds[r] = -1;
	}
}

/* Wait like t_fork_ranks(); returns the number of ranks that did not exit 0. */
static inline int t_ranks_wait(struct t_ranks *t, int *codes, int timeout_s)
{
	double end = t_now() + timeout_s;
	int r, left = 0, bad = 0;

	t_ranks_release(t, NULL);
	for (r = 0; r < t->nranks; r++) {
		if (codes)
			codes[r] = 125;
		left += t->pids[r] > 0;
	}
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (r = 0; r < t->nranks; r++) {
				if (t->pids[r] != p)
					continue;
				if (codes)
					codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) :
								   128 + WTERMSIG(st);
				bad += !WIFEXITED(st) || WEXITSTATUS(st);
				t->pids[r] = 0;
				left--;
			}
			continue;
		}
		if (p < 0 && errno == ECHILD)
			break;
		if (t_now() > end) {
			for (r = 0; r < t->nranks; r++) {
				if (t->pids[r] <= 0)
					continue;
				fprintf(stderr, "rank %d (pid %d) still running after %d s: killed\n", r,
					(int)t->pids[r], timeout_s);
				kill(t->pids[r], SIGKILL);
				waitpid(t->pids[r], NULL, 0);
				if (codes)
					codes[r] = 124;
				bad++;
				t->pids[r] = 0;
				left--;
			}
			break;
		}
		usleep(2000);
	}
	for (r = 0; r < t->nranks; r++)
		if (t->pids[r] < 0)
			bad++;
	free(t->pids);
	free(t->wfds);
	return bad;
}

/*
 * The usual case: fork @nranks ranks, then create a unique id with
 * ccomGetUniqueId() in this process and hand it to them in *@id.
 * Returns the number of failed ranks (all of them if the id failed).
 */
static inline int t_fork_ranks_id(int nranks, t_rank_fn fn, void *arg, int *codes, int timeout_s,
				  ccomUniqueId *id)
{
	struct t_ranks t;
	ccomResult_t res;

	if (t_ranks_start(&t, nranks, fn, arg, id)) {
		fprintf(stderr, "fork failed\n");
		t_ranks_wait(&t, codes, timeout_s);
		return nranks;
	}
	res = ccomGetUniqueId(id);
	if (res != ccomSuccess)
		fprintf(stderr, "ccomGetUniqueId: %s: %s\n", ccomGetErrorString(res),
			ccomGetLastError(NULL));
	t_ranks_release(&t, res == ccomSuccess ? id : NULL);
	return t_ranks_wait(&t, codes, timeout_s);
}

/* Occurrences of @s in the file @path, -1 if it cannot be read. */
static inline int t_file_count(const char *path, const char *s)
{
	char *text = NULL;
	const char *p;
	size_t cap = 0;
	FILE *f = fopen(path, "r");
	int c = 0;

	if (!f)
		return -1;
	if (getdelim(&text, &cap, '\0', f) < 0) {	/* empty file, or a read error */
		c = feof(f) ? 0 : -1;
		fclose(f);
		free(text);
		return c;
	}
	fclose(f);
	for (p = text; (p = strstr(p, s)); p++)
		c++;
	free(text);
	return c;
}

/* Lines of the file @path holding @a (and @b, if not NULL); -1 if unreadable. */
static inline int t_file_lines(const char *path, const char *a, const char *b)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && (!b || strstr(line, b));
	fclose(f);
	return n;
}

/* A TCP port on the loopback address of @family free a moment ago, or -1. */
static inline int t_free_port(int family)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = family == AF_INET ? sizeof(a4) : sizeof(a6);
	struct sockaddr *a = family == AF_INET ? (struct sockaddr *)&a4 : (struct sockaddr *)&a6;
	int fd = socket(family, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, a, len) && !getsockname(fd, a, &len))
		port = ntohs(family == AF_INET ? a4.sin_port : a6.sin6_port);
	close(fd);
	return port;
}

/* Entries of the directory @path other than dot files, -1 if it cannot be read. */
static inline int t_dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* RDMA devices in /sys/class/infiniband (the net_ib tests need one: the VM's rxe). */
static inline int t_rdma_devices(void)
{
	int n = t_dir_entries("/sys/class/infiniband");

	return n > 0 ? n : 0;
}

/* Number of open file descriptors of this process. */
static inline int t_count_fds(void)
{
	int n = t_dir_entries("/proc/self/fd");

	return n < 0 ? -1 : n - 1;	/* not the DIR's own fd */
}

/* Resident set size in KiB. */
static inline long t_rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Running under ASan/UBSan (make check-asan sets it): tests may shrink loops. */
static inline int t_sanitizer(void)
{
	const char *s = getenv("CCOM_TEST_SANITIZER");

	return s && s[0] && strcmp(s, "0");
}

#endif
