// SPDX-License-Identifier: MIT
/*
 * Description: a peer dies while this rank reads its buffer through the
 * mapped single-copy path (CCOM_KDEV=1, CCOM_KDEV_MAP=1).  Its exit makes
 * the driver zap the mapping of its grant in this rank, and the next read
 * raises SIGBUS; libccom's fault guard must turn that into the peer's
 * death, named, instead of killing the survivor (which is what happened
 * in CI before the guard: "rank 1 exited with 135").
 *
 * Two ranks, 128 MiB: rank 0 watches rank 1's /proc/PID/maps until rank
 * 1 has mapped rank 0's grant (a dmabuf mapping of at least 128 MiB),
 * waits 20 ms, so that rank 1 is inside a copy of that size, and SIGKILLs
 * itself.  Rank 1 must fail with ccomRemoteError naming rank 0, not die
 * and not succeed (a success means the copy ended before the kill, so
 * the test proved nothing).  Once for Send/Recv (the receiver copies from
 * the sender's grant) and once for AllReduce (each rank reduces from the
 * other's input); the driver's counters are zero after each.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll_util.h"
#include "kdev_util.h"

#define LEN (128u << 20)

struct shared {
	volatile pid_t pid[2];
};

struct job {
	struct ct_job ct;
	struct shared *sh;
	bool allreduce;
};

/* Has process @pid a dma-buf mapping of at least LEN bytes? */
static bool grant_mapped(pid_t pid)
{
	unsigned long lo, hi;
	char path[64], line[512];
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!yes && fgets(line, sizeof(line), f))
		yes = strstr(line, "dmabuf") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		      hi - lo >= LEN;
	fclose(f);
	return yes;
}

static void *killer(void *arg)
{
	struct shared *sh = arg;
	double end = t_now() + 120;

	while (!sh->pid[1] || !grant_mapped(sh->pid[1])) {
		if (t_now() > end) {
			fprintf(stderr, "rank 0: rank 1 never mapped a %u MiB grant\n", LEN >> 20);
			_exit(5);
		}
		usleep(1000);
	}
	usleep(20000);
	raise(SIGKILL);
	return NULL;
}

static int rank_fn(int rank, int n, void *arg)
{
	struct job *j = arg;
	float *s = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	float *r = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const char *what = j->allreduce ? "AllReduce" : "Send/Recv";
	size_t count = LEN / sizeof(float);
	ccomResult_t res;
	ccomComm_t comm;
	pthread_t th;

	(void)n;
	T_CHECK(s != MAP_FAILED && r != MAP_FAILED, "mmap");
	memset(s, 0, LEN);
	memset(r, 0, LEN);
	setenv("CCOM_OP_TIMEOUT", "120", 1);
	j->sh->pid[rank] = getpid();
	if (ct_init(&j->ct, rank, &comm))
		return T_FAIL;
	if (rank == 0)
		T_CHECK(pthread_create(&th, NULL, killer, j->sh) == 0, "pthread_create");
	if (j->allreduce)
		ccomAllReduce(s, r, count, ccomFloat32, ccomSum, comm, NULL);
	else if (rank == 0)
		ccomSend(s, LEN, ccomUint8, 1, comm, NULL);
	else
		ccomRecv(r, LEN, ccomUint8, 0, comm, NULL);
	res = ccomCommSynchronize(comm);
	if (rank == 0) {
		for (;;)
			pause();	/* the killer thread ends this rank */
	}
	printf("rank 1: %s returned %s: %s\n", what, ccomGetErrorString(res),
	       ccomGetLastError(comm));
	T_CHECK(res != ccomSuccess, "rank 1's %s completed before rank 0 died: the kill came too late to test anything",
		what);
	T_CHECK(res == ccomRemoteError && strstr(ccomGetLastError(comm), "rank 0"),
		"rank 1: %s returned %s, want ccomRemoteError naming rank 0", what,
		ccomGetErrorString(res));
	ccomCommDestroy(comm);
	return T_PASS;
}

static int one(struct shared *sh, bool allreduce)
{
	struct job j = { .ct = { .nranks = 2,
				 .env = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=1", "CCOM_NCHANNELS=1" } },
			 .sh = sh, .allreduce = allreduce };
	const char *what = allreduce ? "AllReduce" : "Send/Recv";
	int codes[2];

	memset((void *)sh, 0, sizeof(*sh));
	printf("%s: rank 0 dies while rank 1 reads its mapped grant\n", what);
	fflush(stdout);
	t_fork_ranks_id(2, rank_fn, &j, codes, 300, &j.ct.id);
	T_CHECK(codes[1] != 128 + SIGBUS, "%s: rank 1 died of SIGBUS reading rank 0's revoked grant", what);
	T_CHECK(codes[0] == 128 + SIGKILL && codes[1] == 0,
		"%s: ranks exited with %d and %d, want %d and 0", what, codes[0], codes[1],
		128 + SIGKILL);
	return kt_counters_zero(what);
}

int main(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	KT_REQUIRE(2);
	T_CHECK(sh != MAP_FAILED, "mmap");
	unsetenv("CCOM_KDEV_MIN_BYTES");
	if (one(sh, false) || one(sh, true))
		return T_FAIL;
	return T_PASS;
}
