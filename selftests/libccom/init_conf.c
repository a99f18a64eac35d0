// SPDX-License-Identifier: MIT
/*
 * Description: configuration files and typo warnings (util/params.c).
 * Each case runs in a forked child (parameters load once per process) with
 * HOME pointing at a scratch directory, every inherited CCOM_* variable
 * removed and the log in a file:
 *   - CCOM_CONF_FILE sets CCOM_ALGO, CCOM_OP_TIMEOUT and a quoted
 *     CCOM_PROTO; comments and blank lines are skipped; the origin is
 *     "file:line";
 *   - the environment overrides the file;
 *   - a misspelt key in the file (CCOM_ALOG) and a misspelt environment
 *     variable (CCOM_NSOKCS) each get exactly one WARN naming the nearest
 *     known name, printed by an ordinary 1-rank init;
 *   - a missing CCOM_CONF_FILE and a directory given as one get a clear WARN;
 *     a line without '=' gets a WARN naming file:line;
 *   - ~/.ccom.conf is read without CCOM_CONF_FILE and not with it;
 *   - CCOM_DEBUG_SUBSYS=ENV logs each set parameter with its origin;
 *   - CCOM_DEBUG_SUBSYS=SHM (a subsystem without lines) gets a WARN;
 *   - CCOM_TEST_SANITIZER (read by the test runner) draws no WARN.
 * /etc/ccom.conf is not written here (other jobs on the host would read it).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/log.h"
#include "util/params.h"
#include "test_util.h"

extern char **environ;

static char dir[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(T_FAIL);
	}
	fputs(text, f);
	fclose(f);
}

/* Remove every CCOM_* variable inherited from the caller's environment. */
static void clean_env(void)
{
	char name[128];
	int again = 1;

	while (again) {
		char **e;

		again = 0;
		for (e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');
			size_t len = eq ? (size_t)(eq - *e) : strlen(*e);

			if (!strncmp(*e, "CCOM_", 5) && len < sizeof(name)) {
				memcpy(name, *e, len);
				name[len] = '\0';
				unsetenv(name);
				again = 1;
				break;
			}
		}
	}
}

/* Log file of case @n. */
static void log_path(int n, char *out, size_t len)
{
	snprintf(out, len, "%s/log-%d", dir, n);
}

static void setup_child(int n, const char *level)
{
	char path[128];

	clean_env();
	setenv("HOME", dir, 1);
	log_path(n, path, sizeof(path));
	t_log_to(path, level, NULL);
}

/*
 * CCOM_CONF_FILE = @dir/@name, written with @text first (NULL: left
 * missing); its path into @conf.
 */
static void use_conf(const char *name, const char *text, char *conf, size_t len)
{
	snprintf(conf, len, "%s/%s", dir, name);
	if (text)
		write_file(conf, text);
	setenv("CCOM_CONF_FILE", conf, 1);
}

/* An ordinary program's first calls: a 1-rank communicator. */
static int one_rank_init(void)
{
	ccomUniqueId id;
	ccomComm_t comm;

	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(ccomCommInitRank(&comm, 1, id, 0), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

static int case_file(int n)
{
	char conf[128], want[160];

	setup_child(n, "WARN");
	use_conf("a.conf", "# ccom settings\n\nCCOM_ALGO=ring\n  CCOM_OP_TIMEOUT = 7\nCCOM_PROTO=\"ll\"\n",
		 conf, sizeof(conf));
	T_CHECK(!strcmp(ccom_param_str("CCOM_ALGO"), "ring"), "CCOM_ALGO=%s, want ring from the file",
		ccom_param_str("CCOM_ALGO"));
	T_CHECK(ccom_param_int("CCOM_OP_TIMEOUT") == 7, "CCOM_OP_TIMEOUT=%lld, want 7",
		(long long)ccom_param_int("CCOM_OP_TIMEOUT"));
	T_CHECK(!strcmp(ccom_param_str("CCOM_PROTO"), "ll"), "quoted value read as %s",
		ccom_param_str("CCOM_PROTO"));
	T_CHECK(ccom_param_is_set("CCOM_ALGO"), "a file value does not count as set");
	snprintf(want, sizeof(want), "%s:3", conf);
	T_CHECK(!strcmp(ccom_param_origin("CCOM_ALGO"), want), "origin %s, want %s",
		ccom_param_origin("CCOM_ALGO"), want);
	T_CHECK(!strcmp(ccom_param_origin("CCOM_NSOCKS"), "default"), "origin of an unset one: %s",
		ccom_param_origin("CCOM_NSOCKS"));
	return 0;
}

static int case_env_wins(int n)
{
	char conf[128];

	setup_child(n, "WARN");
	use_conf("b.conf", "CCOM_ALGO=ring\n", conf, sizeof(conf));
	setenv("CCOM_ALGO", "tree", 1);
	T_CHECK(!strcmp(ccom_param_str("CCOM_ALGO"), "tree"), "CCOM_ALGO=%s, want tree (environment)",
		ccom_param_str("CCOM_ALGO"));
	T_CHECK(!strcmp(ccom_param_origin("CCOM_ALGO"), "environment"), "origin %s",
		ccom_param_origin("CCOM_ALGO"));
	return 0;
}

static int case_typos(int n)
{
	char conf[128];

	setup_child(n, "WARN");
	use_conf("c.conf", "CCOM_ALOG=ring\n", conf, sizeof(conf));
	setenv("CCOM_NSOKCS", "4", 1);
	setenv("CCOM_TEST_SANITIZER", "0", 1);
	return one_rank_init();
}

static int case_bad_files(int n)
{
	char conf[128];

	setup_child(n, "WARN");
	use_conf("missing.conf", NULL, conf, sizeof(conf));
	T_CHECK(ccom_param_str("CCOM_ALGO") == NULL, "CCOM_ALGO set without a file");
	ccom_params_flush_warnings();
	return 0;
}

static int case_dir_file(int n)
{
	setup_child(n, "WARN");
	setenv("CCOM_CONF_FILE", dir, 1);	/* a directory: opens, cannot be read */
	T_CHECK(ccom_param_str("CCOM_ALGO") == NULL, "CCOM_ALGO set from a directory");
	ccom_params_flush_warnings();
	return 0;
}

static int case_malformed(int n)
{
	char conf[128];

	setup_child(n, "WARN");
	use_conf("d.conf", "CCOM_ALGO=ring\nthis line has no equals sign\n", conf, sizeof(conf));
	T_CHECK(!strcmp(ccom_param_str("CCOM_ALGO"), "ring"), "good line lost");
	ccom_params_flush_warnings();
	return 0;
}

static int case_home(int n, int with_conf_file)
{
	char path[128];

	setup_child(n, "WARN");
	snprintf(path, sizeof(path), "%s/.ccom.conf", dir);
	write_file(path, "CCOM_NSOCKS=3\n");
	if (with_conf_file) {
		use_conf("e.conf", "# nothing\n", path, sizeof(path));
		T_CHECK(ccom_param_int("CCOM_NSOCKS") == 2, "~/.ccom.conf read although CCOM_CONF_FILE is set");
	} else {
		T_CHECK(ccom_param_int("CCOM_NSOCKS") == 3, "~/.ccom.conf not read (CCOM_NSOCKS=%lld)",
			(long long)ccom_param_int("CCOM_NSOCKS"));
	}
	return 0;
}

static int case_env_log(int n)
{
	char conf[128];

	setup_child(n, "INFO");
	setenv("CCOM_DEBUG_SUBSYS", "ENV", 1);
	use_conf("f.conf", "CCOM_ALGO=ring\n", conf, sizeof(conf));
	setenv("CCOM_NSOCKS", "3", 1);
	return one_rank_init();
}

static int case_shm_subsys(int n)
{
	setup_child(n, "INFO");
	setenv("CCOM_DEBUG_SUBSYS", "INIT,SHM", 1);
	return one_rank_init();
}

static int run_case(int n, int (*fn)(int), int arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return T_FAIL;
	if (pid == 0)
		_exit(arg >= 0 ? case_home(n, arg) : fn(n));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL: case %d exited with status %d\n", n, st);
		return T_FAIL;
	}
	return 0;
}

/* Occurrences of @s in case @n's log. */
static int in_log(int n, const char *s)
{
	char path[128];

	log_path(n, path, sizeof(path));
	return t_file_count(path, s);
}

int main(void)
{
	char want[256];

	snprintf(dir, sizeof(dir), "/tmp/ccom-conf-XXXXXX");
	T_CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));

	T_CHECK(!run_case(1, case_file, -1), "values from CCOM_CONF_FILE");
	T_CHECK(in_log(1, "WARN") <= 0, "a clean file drew a WARN");

	T_CHECK(!run_case(2, case_env_wins, -1), "environment over the file");

	T_CHECK(!run_case(3, case_typos, -1), "init with misspelt names");
	snprintf(want, sizeof(want), "%s/c.conf:1: CCOM_ALOG is not a ccom variable; did you mean CCOM_ALGO?",
		 dir);
	T_CHECK(in_log(3, want) == 1, "want one line \"%s\", got %d", want, in_log(3, want));
	T_CHECK(in_log(3, "CCOM_NSOKCS is not a ccom variable; did you mean CCOM_NSOCKS?") == 1,
		"want one WARN for CCOM_NSOKCS, got %d",
		in_log(3, "CCOM_NSOKCS is not a ccom variable; did you mean CCOM_NSOCKS?"));
	T_CHECK(in_log(3, "is not a ccom variable") == 2, "want exactly 2 typo WARNs, got %d",
		in_log(3, "is not a ccom variable"));
	T_CHECK(in_log(3, "CCOM_TEST_SANITIZER") == 0, "the test runner's variable drew a WARN");

	T_CHECK(!run_case(4, case_bad_files, -1), "missing CCOM_CONF_FILE");
	snprintf(want, sizeof(want), "cannot read the configuration file %s/missing.conf: No such file or directory",
		 dir);
	T_CHECK(in_log(4, want) == 1, "want one \"%s\", got %d", want, in_log(4, want));

	T_CHECK(!run_case(5, case_dir_file, -1), "a directory as CCOM_CONF_FILE");
	snprintf(want, sizeof(want), "error reading the configuration file %s: Is a directory", dir);
	T_CHECK(in_log(5, want) == 1, "want one \"%s\", got %d", want, in_log(5, want));

	T_CHECK(!run_case(6, case_malformed, -1), "a malformed line");
	snprintf(want, sizeof(want), "%s/d.conf:2: \"this line has no equals sign\" is not a KEY=VALUE line",
		 dir);
	T_CHECK(in_log(6, want) == 1, "want one \"%s\", got %d", want, in_log(6, want));

	T_CHECK(!run_case(7, NULL, 0), "~/.ccom.conf read");
	T_CHECK(!run_case(8, NULL, 1), "~/.ccom.conf not read with CCOM_CONF_FILE");

	T_CHECK(!run_case(9, case_env_log, -1), "ENV lines");
	snprintf(want, sizeof(want), "CCOM INFO CCOM_ALGO=ring (%s/f.conf:1)", dir);
	T_CHECK(in_log(9, want) == 1, "want one \"%s\", got %d", want, in_log(9, want));
	T_CHECK(in_log(9, "CCOM INFO CCOM_NSOCKS=3 (environment)") == 1, "no ENV line for CCOM_NSOCKS");
	T_CHECK(in_log(9, "Init COMPLETE") == 0, "CCOM_DEBUG_SUBSYS=ENV let INIT lines through");

	T_CHECK(!run_case(10, case_shm_subsys, -1), "CCOM_DEBUG_SUBSYS=INIT,SHM");
	T_CHECK(in_log(10, "CCOM_DEBUG_SUBSYS: SHM is not a subsystem that logs") == 1,
		"no WARN for SHM in CCOM_DEBUG_SUBSYS");
	T_CHECK(in_log(10, "Init COMPLETE") >= 1, "INIT lines lost next to SHM");

	printf("init_conf: 10 cases passed\n");
	snprintf(want, sizeof(want), "rm -rf %s", dir);
	if (system(want) != 0)
		fprintf(stderr, "note: could not remove %s\n", dir);
	return 0;
}
