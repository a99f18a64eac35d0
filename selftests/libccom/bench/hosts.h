/* SPDX-License-Identifier: MIT */
/*
 * hosts.h - the simulated hosts of the init benchmarks (boot_bench,
 * init_hosts_bench): one forked process per host, each blocked on a pipe
 * until the parent writes the common start record, then reaped.
 */
#ifndef CCOM_BENCH_HOSTS_H
#define CCOM_BENCH_HOSTS_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* @fn(host, local, nranks, fd) runs in host process @host and reads its start record from @fd. */
typedef int (*bench_host_fn)(int host, int local, int nranks, int fd);

/* Fork @hosts processes running @fn; @wfd[h] is host h's pipe.  0, or -1 if a pipe failed. */
static inline int bench_hosts_fork(int hosts, int local, int nranks, bench_host_fn fn,
				   pid_t *pid, int *wfd)
{
	int h, p[2];

	for (h = 0; h < hosts; h++) {
		if (pipe(p))
			return -1;
		pid[h] = fork();
		if (pid[h] == 0) {
			close(p[1]);
			_exit(fn(h, local, nranks, p[0]));
		}
		close(p[0]);
		wfd[h] = p[1];
	}
	return 0;
}

/*
 * Release every host with the @len-byte start record @start (none if
 * @bad: the hosts then read an end of file and fail), then reap them.
 * True if every write and every host succeeded.
 */
static inline bool bench_hosts_run(int hosts, const int *wfd, const pid_t *pid,
				   const void *start, size_t len, bool bad)
{
	int h, st;

	for (h = 0; h < hosts; h++) {
		if (bad || write(wfd[h], start, len) != (ssize_t)len)
			bad = true;
		close(wfd[h]);
	}
	for (h = 0; h < hosts; h++)
		if (waitpid(pid[h], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = true;
	return !bad;
}

#endif
