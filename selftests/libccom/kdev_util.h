/* SPDX-License-Identifier: MIT */
/*
 * kdev_util.h - helpers of the kdev_* tests: whether a usable /dev/nccom is
 * there (else the test SKIPs with 77 and says why), and the driver's
 * global counters (live objects, pinned pages) that must return to zero
 * once every rank of a test has exited.
 */
#ifndef CCOM_KDEV_UTIL_H
#define CCOM_KDEV_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "coll_util.h"

/* 0 if /dev/nccom is usable with @ndev devices at least, else a reason in @why. */
static inline int kt_driver(int ndev, char *why, size_t len)
{
	struct nccom_info info = { .size = sizeof(info) };
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC), rc;

	if (fd < 0) {
		snprintf(why, len, "/dev/nccom: %s (nccom.ko not loaded: run it in the VM, selftests/libccom/kdev/run-vm)",
			 strerror(errno));
		return -1;
	}
	rc = ioctl(fd, NCCOM_IOC_GET_INFO, &info);
	close(fd);
	if (rc) {
		snprintf(why, len, "NCCOM_IOC_GET_INFO: %s", strerror(errno));
		return -1;
	}
	if (info.out_compat_id != NCCOM_COMPAT_ID) {
		snprintf(why, len, "driver compat id %#llx != %#llx", (unsigned long long)info.out_compat_id,
			 (unsigned long long)NCCOM_COMPAT_ID);
		return -1;
	}
	if ((int)info.dev_count < ndev) {
		snprintf(why, len, "%u nccom devices, the test needs %d (insmod nccom.ko ndevs=%d)",
			 info.dev_count, ndev, ndev);
		return -1;
	}
	return 0;
}

#define KT_REQUIRE(ndev)							\
	do {									\
		char why_[256];							\
		if (kt_driver((ndev), why_, sizeof(why_)))			\
			return t_skip("%s", why_);				\
	} while (0)

/*
 * The driver's live objects and pinned pages (all processes) must drop to
 * zero once the ranks are gone; fd release may lag the exit a little, so
 * poll for up to 5 s.  T_PASS or T_FAIL with the counters printed.
 */
static inline int kt_counters_zero(const char *when)
{
	struct nccom_info info;
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC), i;

	if (fd < 0) {
		fprintf(stderr, "FAIL: open /dev/nccom: %s\n", strerror(errno));
		return T_FAIL;
	}
	for (i = 0; i < 100; i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
			fprintf(stderr, "FAIL: GET_INFO: %s\n", strerror(errno));
			close(fd);
			return T_FAIL;
		}
		if (info.out_objects == 0 && info.out_pinned_pages == 0)
			break;
		usleep(50000);
	}
	close(fd);
	printf("driver counters %s: %llu objects, %llu pinned pages\n", when,
	       (unsigned long long)info.out_objects, (unsigned long long)info.out_pinned_pages);
	fflush(stdout);
	T_CHECK(info.out_objects == 0 && info.out_pinned_pages == 0,
		"driver counters did not return to zero %s: %llu objects, %llu pinned pages", when,
		(unsigned long long)info.out_objects, (unsigned long long)info.out_pinned_pages);
	return T_PASS;
}

/*
 * Run @fn on the @j->nranks ranks of job @j (timeout 300 s) in a child
 * process, so that each job's ranks set up logging afresh: a process's log
 * destination is fixed at its first use, and creating the job's id in
 * this process (t_fork_ranks_id()) would fix it for the ranks of the next
 * job.  T_PASS, or T_FAIL naming @what.
 */
static inline int kt_job_in_child(struct ct_job *j, t_rank_fn fn, const char *what)
{
	int codes[64], status;
	pid_t pid;

	T_CHECK(j->nranks > 0 && j->nranks <= 64, "%s: %d ranks", what, j->nranks);
	pid = fork();
	T_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		if (t_fork_ranks_id(j->nranks, fn, j, codes, 300, &j->id) == 0)
			_exit(T_PASS);
		for (int r = 0; r < j->nranks; r++)
			if (codes[r])
				fprintf(stderr, "FAIL %s: rank %d exited with %d\n", what, r, codes[r]);
		_exit(T_FAIL);
	}
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == T_PASS,
		"%s: the job failed (%#x)", what, status);
	return T_PASS;
}

#endif
