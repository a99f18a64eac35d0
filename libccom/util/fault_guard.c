// SPDX-License-Identifier: MIT
/*
 * fault_guard.c - SIGBUS from a revoked grant becomes an error (util/).
 * See fault_guard.h.
 *
 * The handler runs on the faulting thread.  A guarded thread left its
 * sigjmp_buf in a thread-local (initial-exec TLS: no allocation on first
 * access, so safe in a handler on any thread); the handler jumps back to
 * it.  SA_NODEFER keeps SIGBUS unblocked after the jump, so sigsetjmp()
 * need not save the mask (no system call per guarded copy).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "util/fault_guard.h"

static struct sigaction prev_bus;
static int install_err;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static __thread sigjmp_buf *guard_env __attribute__((tls_model("initial-exec")));

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;

	/* A fault (si_code > 0), not a SIGBUS some process sent with kill(). */
	if (guard_env && si && si->si_code > 0)
		siglongjmp(*guard_env, 1);
	/* Not ours: what would have happened without libccom. */
	if (prev_bus.sa_flags & SA_SIGINFO) {
		prev_bus.sa_sigaction(sig, si, uc);
		return;
	}
	if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
		prev_bus.sa_handler(sig);
		return;
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	raise(SIGBUS);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &prev_bus))
		install_err = -errno;
}

int ccom_fault_guard(void (*fn)(void *arg), void *arg)
{
	sigjmp_buf env, *volatile outer = guard_env;

	pthread_once(&install_once, install);
	if (install_err)
		return install_err;
	if (sigsetjmp(env, 0)) {
		guard_env = outer;
		return -EFAULT;
	}
	guard_env = &env;
	fn(arg);
	guard_env = outer;
	return 0;
}
