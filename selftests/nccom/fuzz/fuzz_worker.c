// SPDX-License-Identifier: GPL-2.0
/*
 * Description: one ioctl worker of the nccom fuzzer: its state (the model
 * of fuzz.h), its setup (argument buffer before a PROT_NONE page, the
 * device's limits, a first fd and buffers), the fault handler that reports
 * where a worker crashed, the arming of the driver's fail_nth knob, and
 * the loop that draws one operation after another from the seeded PRNG
 * and kills the process with SIGKILL at the operation the seed chose.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "fuzz.h"

struct fz_wstate fz_w;

/* ---- fault injection ------------------------------------------------------ */

#define KNOB "/sys/module/nccom/parameters/fail_nth"

/*
 * Arms the driver's fail_nth knob (root only): one of the next few
 * allocations or pins anywhere in the driver fails with ENOMEM, in whatever
 * call of whatever worker reaches it. The oracles accept ENOMEM of an
 * otherwise valid call.
 */
static void op_failnth(void)
{
	char buf[16];
	int fd, len;

	if (geteuid() != 0)
		return;
	fd = open(KNOB, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%u\n", 1 + (unsigned int)fz_rnd(&fz_w.r, 8));
	if (write(fd, buf, len) == len)
		fz_add(&fz_sh->failnth, 1);
	close(fd);
}

void fz_failnth_off(void)
{
	int fd = open(KNOB, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "0\n", 2) != 2)
		fz_log("cannot disarm %s: %s", KNOB, strerror(errno));
	close(fd);
}

/* ---- the worker loop ------------------------------------------------------ */

/*
 * A worker that faults is a finding (of the driver if its mapping went
 * away under us, else of the fuzzer): report where, then die of the signal
 * so that the parent sees it. Addresses: addr2line -e nccom_fuzz (no PIE).
 */
static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	void *bt[32];
	char buf[160];
	int n, len;

	(void)uc;
	len = snprintf(buf, sizeof(buf), "nccom_fuzz[%d]: signal %d at address %p, op %llu; backtrace:\n",
		       fz_slot, sig, si->si_addr, (unsigned long long)fz_w.op);
	if (write(2, buf, len) < 0)
		_exit(128 + sig);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_fault_handler(void)
{
	struct sigaction sa = { 0 };
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	sigaltstack(&ss, NULL);
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
}

static void worker_init(uint64_t seed)
{
	struct nccom_info info = { .size = sizeof(info) };
	int i, fd;

	memset(&fz_w.f, 0, sizeof(fz_w.f));
	fz_w.r.s = seed;
	for (i = 0; i < MAXFDS; i++)
		fz_w.f[i].fd = -1;
	for (i = 0; i < MAXX; i++)
		fz_w.x[i].fd = -1;
	fz_w.arg = mmap(NULL, ARGBUF + PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (fz_w.arg == MAP_FAILED) {
		perror("nccom_fuzz: mmap");
		_exit(2);
	}
	mprotect(fz_w.arg + ARGBUF, PG, PROT_NONE);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		fz_finding("open/GET_INFO of %s as uid %u: %s", DEV, geteuid(), strerror(errno));
		_exit(3);
	}
	close(fd);
	fz_w.ndevs = info.dev_count;
	fz_w.max_reg = info.out_max_reg_size;
	fz_op_open();
	for (i = 0; i < 3; i++)
		fz_buf_new();
}

int fz_worker(uint64_t seed, uint64_t iters, bool may_kill)
{
	int fi;

	install_fault_handler();
	worker_init(seed);
	fz_w.kill_at = may_kill && fz_chance(&fz_w.r, 60) ? fz_rnd(&fz_w.r, iters) : UINT64_MAX;
	for (fz_w.op = 0; fz_w.op < iters; fz_w.op++) {
		fz_add(&fz_sh->ops, 1);
		fz_sh->w[fz_slot].ops = fz_w.op;
		if (fz_w.op == fz_w.kill_at) {
			fz_add(&fz_sh->kills, 1);
			kill(getpid(), SIGKILL);
		}
		fi = fz_fd_pick();
		if (fi < 0) {
			fz_op_open();
			continue;
		}
		switch (fz_rnd(&fz_w.r, 40)) {
		case 0:
			fz_op_open();
			break;
		case 1:
			if (fz_chance(&fz_w.r, 20))
				fz_op_close(fi);
			break;
		case 2:
			fz_op_get_info(fi);
			break;
		case 3: case 4:
			fz_op_destroy(fi);
			break;
		case 5: case 6: case 7:
			fz_op_mem_register(fi);
			break;
		case 8: case 9:
			fz_op_mem_export(fi);
			break;
		case 10: case 11:
			fz_op_mem_import(fi);
			break;
		case 12: case 13:
			fz_op_queue_create(fi);
			break;
		case 14: case 15:
			fz_op_mmap();
			break;
		case 16:
			fz_op_unmap();
			break;
		case 17: case 18: case 19: case 20: case 21:
			fz_op_submit();
			break;
		case 22: case 23: case 24:
			fz_op_queue_misc(fi);
			break;
		case 25: case 26: case 27: case 28:
			fz_op_sem(fi);
			break;
		case 29:
			fz_op_comm(fi);
			break;
		case 30:
			fz_op_raw(fi);
			break;
		case 31: case 32:
			fz_op_xfd();
			break;
		case 33: case 34:
			fz_op_send();
			break;
		case 35: case 36:
			fz_op_recv(fi);
			break;
		case 37:
			fz_buf_new();
			break;
		case 38:
			if (fz_chance(&fz_w.r, 30))
				fz_buf_drop();
			else if (fz_chance(&fz_w.r, 10))
				op_failnth();
			break;
		default: {
			int qi;

			for (qi = 0; qi < MAXQ; qi++)
				if (fz_w.q[qi].used && fz_w.q[qi].map &&
				    fz_w.f[fz_w.q[qi].fdi].fd >= 0)
					fz_reap(&fz_w.q[qi], fz_w.q[qi].fdi);
			break;
		}
		}
	}
	/* A clean end: some fds closed explicitly, the rest by exit. */
	for (fi = 0; fi < MAXFDS; fi++)
		if (fz_chance(&fz_w.r, 50))
			fz_op_close(fi);
	return 0;
}
