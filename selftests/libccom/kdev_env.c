// SPDX-License-Identifier: MIT
/*
 * Description: when kdev is used and when not.  Without a usable driver
 * (no /dev/nccom on the host, or CCOM_DEVICE=-1 in the VM) CCOM_KDEV=1
 * makes init fail with a message naming the reason and the fix; unset, the
 * communicator works on shm and one INFO line says why kdev is not used.
 * With the driver: CCOM_KDEV unset uses it (INFO line), CCOM_KDEV=0 turns
 * it off (INFO line), and ranks whose CCOM_KDEV differ fail init with a
 * message saying so.  Runs on the host and in the VM.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kdev_util.h"

struct env_job {
	struct ct_job ct;
	const char *rank1_kdev;	/* CCOM_KDEV of rank 1 if different */
	int want_fail;
};

static char logdir[64];

static int env_rank(int rank, int n, void *arg)
{
	struct env_job *e = arg;
	char path[128];
	float buf[4096];
	ccomComm_t comm;
	ccomResult_t res;

	(void)n;
	ct_setenv(&e->ct);
	if (rank == 1 && e->rank1_kdev)
		setenv("CCOM_KDEV", e->rank1_kdev, 1);
	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	setenv("CCOM_DEBUG_FILE", path, 1);
	res = ccomCommInitRank(&comm, e->ct.nranks, e->ct.id, rank);
	if (e->want_fail) {
		printf("rank %d: init: %s: %s\n", rank, ccomGetErrorString(res), ccomGetLastError(NULL));
		T_CHECK(res != ccomSuccess, "init succeeded");
		return T_PASS;
	}
	T_CHECK(res == ccomSuccess, "init failed: %s", ccomGetLastError(NULL));
	for (int i = 0; i < 4096; i++)
		buf[i] = (float)(rank + 1);
	T_CCOM(ccomAllReduce(buf, buf, 4096, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(buf[4095] == 3.0f, "allreduce result %g", buf[4095]);
	ccomCommDestroy(comm);
	return T_PASS;
}

static int log_has(int rank, const char *a, const char *b)
{
	char path[128], text[8192] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/rank%d.log", logdir, rank);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return strstr(text, a) && (!b || strstr(text, b));
}

/*
 * Each case in a fresh child: the unique id's creator initialises libccom's
 * logging once per process, and later forks would inherit it.
 */
static int run(struct env_job *e, const char *what)
{
	int codes[2], st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		e->ct.nranks = 2;
		if (t_fork_ranks_id(2, env_rank, e, codes, 120, &e->ct.id)) {
			fprintf(stderr, "FAIL: %s: ranks exited with %d %d\n", what, codes[0], codes[1]);
			_exit(T_FAIL);
		}
		_exit(T_PASS);
	}
	T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork/wait");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? T_PASS : T_FAIL;
}

int main(void)
{
	char why[256];
	int have = kt_driver(2, why, sizeof(why)) == 0;
	struct env_job forced = { .ct.env = { "CCOM_KDEV=1", have ? "CCOM_DEVICE=-1" : NULL },
				  .want_fail = 1 };
	struct env_job autom = { .ct.env = { "CCOM_DEBUG=INFO", "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct env_job off = { .ct.env = { "CCOM_KDEV=0", "CCOM_DEBUG=INFO", "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct env_job mixed = { .ct.env = { "CCOM_KDEV=1" }, .rank1_kdev = "0", .want_fail = 1 };

	snprintf(logdir, sizeof(logdir), "/tmp/kdev_env.%d", (int)getpid());
	T_CHECK(mkdir(logdir, 0700) == 0, "mkdir %s", logdir);
	printf("driver %s\n", have ? "present" : why);
	if (run(&forced, "CCOM_KDEV=1 without a usable driver"))
		return T_FAIL;
	T_CHECK(log_has(0, "CCOM_KDEV=1 but", have ? "no nccom device" : "/dev/nccom"),
		"CCOM_KDEV=1 without a usable driver: no error naming the reason");
	if (run(&autom, "CCOM_KDEV unset"))
		return T_FAIL;
	if (have)
		T_CHECK(log_has(0, "kdev: rank 0 uses /dev/nccom", NULL),
			"CCOM_KDEV unset with the driver: no INFO line saying kdev is used");
	else
		T_CHECK(log_has(0, "kdev not used", "nccom.ko is not loaded"),
			"CCOM_KDEV unset without the driver: no INFO line saying why kdev is not used");
	if (run(&off, "CCOM_KDEV=0"))
		return T_FAIL;
	T_CHECK(log_has(1, "kdev not used", have ? "CCOM_KDEV=0" : NULL), "CCOM_KDEV=0: no INFO line");
	if (have) {
		if (run(&mixed, "CCOM_KDEV=1 on rank 0, 0 on rank 1"))
			return T_FAIL;
		T_CHECK(log_has(0, "differ between rank 0", NULL),
			"mixed CCOM_KDEV: no message saying the settings differ");
		return kt_counters_zero("after the environment cases");
	}
	return T_PASS;
}
