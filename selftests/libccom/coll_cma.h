/* SPDX-License-Identifier: MIT */
/*
 * coll_cma.h - what the CMA tests (coll_cma.c, coll_cma_p2p.c) share: a
 * seccomp filter that makes process_vm_readv/writev fail in the calling
 * process (every thread of it), as a sandbox would.
 */
#ifndef CCOM_TEST_COLL_CMA_H
#define CCOM_TEST_COLL_CMA_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Fail both CMA calls of this process with @err (x86-64; elsewhere a no-op, said on stderr). */
static inline void cma_seccomp_deny(int rank, int err)
{
#ifdef __x86_64__
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & 0xffff)),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	/* TSYNC: the library's threads (the progress thread) get it too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog))
		fprintf(stderr, "rank %d: seccomp filter: %s\n", rank, strerror(errno));
#else
	fprintf(stderr, "rank %d: no seccomp filter on this architecture\n", rank);
	(void)err;
#endif
}

#endif
