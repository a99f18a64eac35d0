// SPDX-License-Identifier: MIT
/*
 * Description: the fault guard of mapped copies (libccom/util/fault_guard.c
 * and the guarded copies of coll/channels.c) on memory that vanishes
 * under them, the way a peer's grant does when its owner aborts, frees
 * its buffer or exits.  A shared file mapping truncated to zero raises
 * SIGBUS on access, as a zapped grant does.  Guarded: a read of it
 * returns -EFAULT, 500 times in a row on one thread (SIGBUS is not left
 * blocked), and good memory copies exactly; a guarded copy and reduction
 * spread over 4 channel threads, with the fault in another thread's part,
 * fail with -EFAULT, and the channels then copy correctly again.  Not
 * guarded: a SIGBUS goes to the handler the program had installed before
 * libccom's, or, with none, kills the process with SIGBUS (under ASan:
 * ASan's report): the same end as in a child that never installed
 * libccom's handler; so does a SIGBUS sent with raise() inside a guard
 * (only faults are turned into -EFAULT).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "coll/channels.h"
#include "core/comm.h"
#include "util/fault_guard.h"

#define LEN (8u << 20)

/* LEN bytes of a memfd mapping whose pages from @keep on raise SIGBUS. */
static char *vanishing(size_t keep)
{
	int fd = memfd_create("ccom-fault-guard", 0);
	char *m;

	if (fd < 0 || ftruncate(fd, LEN))
		return NULL;
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	memset(m, 0x5a, LEN);
	if (ftruncate(fd, (off_t)keep)) {
		munmap(m, LEN);
		m = NULL;
	}
	close(fd);
	return m;
}

struct rd {
	const volatile char *p;
	char v;
};

static void read_one(void *arg)
{
	struct rd *r = arg;

	r->v = *r->p;
}

static int one_thread(void)
{
	char *gone = vanishing(0), good[64];
	struct rd r = { .p = good };
	int i;

	T_CHECK(gone, "memfd mapping: %s", strerror(errno));
	memset(good, 7, sizeof(good));
	T_CHECK(ccom_fault_guard(read_one, &r) == 0 && r.v == 7, "guarded read of good memory");
	for (i = 0; i < 500; i++) {
		r.p = gone + (size_t)i * 4096 % LEN;
		T_CHECK(ccom_fault_guard(read_one, &r) == -EFAULT,
			"guarded read %d of a vanished page did not return -EFAULT", i);
	}
	r.p = good + 1;
	T_CHECK(ccom_fault_guard(read_one, &r) == 0 && r.v == 7, "guarded read after 500 faults");
	munmap(gone, LEN);
	printf("one thread: 500 faults returned -EFAULT, good memory reads\n");
	return T_PASS;
}

static int channels(void)
{
	struct ccomComm *comm = calloc(1, sizeof(*comm));
	struct ccom_channels *ch = NULL;
	char *half = vanishing(LEN / 2), *dst = malloc(LEN), *src = malloc(LEN);
	float *a = malloc(LEN), *b = malloc(LEN);
	size_t i, n = LEN / sizeof(float);

	T_CHECK(comm && half && dst && src && a && b, "allocations");
	setenv("CCOM_NCHANNELS", "4", 1);
	comm->local_nranks = 1;
	T_CHECK(ccom_channels_start(comm, &ch) == 0 && ccom_channels_count(ch) == 4,
		"4 channels did not start");
	/* Part 0 (the caller's or a worker's) reads good pages, the last part vanished ones. */
	T_CHECK(ccom_ch_copy_mapped(ch, dst, half, LEN, false) == -EFAULT,
		"a guarded 4-channel copy over vanished pages did not return -EFAULT");
	T_CHECK(ccom_ch_copy_mapped(ch, dst, half, LEN, true) == -EFAULT,
		"the same with streaming stores");
	T_CHECK(ccom_ch_reduce2_mapped(ch, a, a, (const float *)half, n, ccomFloat32, ccomSum) ==
		-EFAULT, "a guarded 4-channel reduction over vanished pages did not return -EFAULT");
	for (i = 0; i < LEN; i++)
		src[i] = (char)(i * 13);
	T_CHECK(ccom_ch_copy_mapped(ch, dst, src, LEN, true) == 0 && !memcmp(dst, src, LEN),
		"a guarded copy of good memory after the faults is wrong");
	for (i = 0; i < n; i++) {
		a[i] = (float)(i % 1000);
		b[i] = 1.0f;
	}
	T_CHECK(ccom_ch_reduce2_mapped(ch, a, a, b, n, ccomFloat32, ccomSum) == 0,
		"a guarded reduction of good memory failed");
	for (i = 0; i < n; i++)
		T_CHECK(a[i] == (float)(i % 1000) + 1.0f, "reduction element %zu is %g", i, a[i]);
	ccom_channels_stop(ch);
	munmap(half, LEN);
	free(comm);
	free(dst);
	free(src);
	free(a);
	free(b);
	printf("4 channels: the copy and the reduction failed with -EFAULT, then ran correctly\n");
	return T_PASS;
}

static void on_bus(int sig)
{
	(void)sig;
	_exit(42);
}

/*
 * A SIGBUS outside any guard, in a child: @handler installed before
 * libccom's, or none; @guard: libccom's handler installed first (by a
 * guarded read).  Returns the child's wait status, -1 on error.
 */
static int unguarded_child(bool handler, bool guard)
{
	struct rd r = { 0 };
	pid_t pid = fork();
	char good = 1;
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *gone = vanishing(0);

		if (handler)
			signal(SIGBUS, on_bus);
		r.p = &good;
		if (!gone || (guard && ccom_fault_guard(read_one, &r)))
			_exit(3);
		r.v = *(volatile char *)gone;
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid ? st : -1;
}

/* What happens must be what happened without libccom (a sanitizer's handler counts). */
static int unguarded(bool handler)
{
	int before = unguarded_child(handler, false), after = unguarded_child(handler, true);

	T_CHECK(before != -1 && after != -1, "fork/waitpid");
	T_CHECK(after == before, "an unguarded SIGBUS ended the process with status %#x, %#x without libccom's handler",
		after, before);
	if (handler)
		T_CHECK(WIFEXITED(after) && WEXITSTATUS(after) == 42,
			"an unguarded SIGBUS did not reach the program's own handler (status %#x)", after);
	else
		T_CHECK((WIFSIGNALED(after) && WTERMSIG(after) == SIGBUS) || getenv("CCOM_TEST_SANITIZER"),
			"an unguarded SIGBUS did not kill the process with SIGBUS (status %#x)", after);
	printf("unguarded SIGBUS, %s: status %#x, as without libccom's handler\n",
	       handler ? "program's handler" : "no handler", after);
	return T_PASS;
}

static void raise_bus(void *arg)
{
	(void)arg;
	raise(SIGBUS);
}

/* A SIGBUS sent (raise()) inside a guard is no fault: it ends the process as it would have. */
static int sent_in_guard(void)
{
	pid_t pid;
	int st[2], i;

	for (i = 0; i < 2; i++) {
		pid = fork();
		T_CHECK(pid >= 0, "fork");
		if (pid == 0) {
			if (i)
				ccom_fault_guard(raise_bus, NULL);
			else
				raise(SIGBUS);
			_exit(0);
		}
		T_CHECK(waitpid(pid, &st[i], 0) == pid, "waitpid");
	}
	T_CHECK(st[1] == st[0] && st[1] != 0,
		"a SIGBUS raised inside a guard ended the process with status %#x, %#x without libccom",
		st[1], st[0]);
	printf("SIGBUS raised inside a guard: status %#x, as without libccom's handler\n", st[1]);
	return T_PASS;
}

int main(void)
{
	if (one_thread() || channels() || unguarded(true) || unguarded(false) || sent_in_guard())
		return T_FAIL;
	return T_PASS;
}
