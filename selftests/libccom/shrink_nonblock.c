// SPDX-License-Identifier: MIT
/*
 * Description: nonblocking ccomCommShrink (config->blocking = 0), 4 forked
 * ranks on one host.  Rank 3 is SIGKILLed while idle (no op in flight):
 * ccomCommGetFailedRanks on the others lists it within 2 s without any
 * failed op (the host's pidfds); the survivors shrink with
 * CCOM_SHRINK_ABORT nonblocking: the call returns ccomInProgress or
 * ccomSuccess, ccomCommGetAsyncError goes to ccomSuccess, and the 3-rank
 * comm passes an AllReduce; then a nonblocking CCOM_SHRINK_DEFAULT of that
 * comm without its (live) rank 2.  A collective on a comm whose shrink is
 * still in progress is refused like one during a nonblocking init.
 */
#include <signal.h>

#include "coll_util.h"

static int ready[2];

static int allreduce_ok(ccomComm_t comm, int rank, int n)
{
	float v[4096];

	return ct_allreduce_ok(comm, rank, n, v, 4096);
}

/* Start a nonblocking shrink and poll it to the end; the new rank must be @want of @n. */
static int shrink_nb(ccomComm_t comm, const int *ex, int nex, int flags, int want, int n,
		     ccomComm_t *out)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomResult_t res, async = ccomInProgress;
	int polls = 0, r = -1, c = -1;
	double t0 = t_now();

	cfg.blocking = 0;
	res = ccomCommShrink(comm, ex, nex, out, &cfg, flags);
	T_CHECK(res == ccomInProgress || res == ccomSuccess, "nonblocking shrink returned %s: %s",
		ccomGetErrorString(res), ccomGetLastError(NULL));
	T_CHECK(*out, "nonblocking shrink gave no communicator");
	if (res == ccomInProgress) {
		float x = 0;

		/* Refused while the new comm is not ready (as during a nonblocking init). */
		res = ccomAllReduce(&x, &x, 1, ccomFloat32, ccomSum, *out, NULL);
		T_CCOM(ccomCommGetAsyncError(*out, &async), ccomSuccess);
		T_CHECK(res != ccomSuccess || async != ccomInProgress,
			"a collective on a comm still shrinking was accepted");
	}
	while (async == ccomInProgress && t_now() - t0 < 30) {
		T_CCOM(ccomCommGetAsyncError(*out, &async), ccomSuccess);
		polls++;
		usleep(1000);
	}
	T_CHECK(async == ccomSuccess, "nonblocking shrink ended with %s: %s",
		ccomGetErrorString(async), ccomGetLastError(*out));
	T_CCOM(ccomCommUserRank(*out, &r), ccomSuccess);
	T_CCOM(ccomCommCount(*out, &c), ccomSuccess);
	T_CHECK(r == want && c == n, "got rank %d of %d, want %d of %d", r, c, want, n);
	printf("nonblocking shrink to rank %d of %d: %d polls, %.3f s\n", r, n, polls, t_now() - t0);
	return allreduce_ok(*out, r, n);
}

static int nb_rank(int rank, int n, void *arg)
{
	ccomComm_t comm, c3, c2;
	int failed[4], nf = 0, two = 2, i;
	double t0;
	char b;

	if (ct_init(arg, rank, &comm) || allreduce_ok(comm, rank, n))
		return T_FAIL;
	if (rank == 3) {
		for (i = 0; i < 3; i++)
			if (read(ready[0], &b, 1) != 1)
				break;
		raise(SIGKILL);
	}
	if (write(ready[1], "x", 1) != 1)
		return T_FAIL;
	/* No op in flight: the host's pidfds tell who is gone. */
	for (t0 = t_now(); t_now() - t0 < 2.0; usleep(2000)) {
		nf = 4;
		T_CCOM(ccomCommGetFailedRanks(comm, failed, &nf), ccomSuccess);
		if (nf)
			break;
	}
	T_CHECK(nf == 1 && failed[0] == 3, "rank %d: failed ranks: %d (first %d), want {3}", rank,
		nf, nf ? failed[0] : -1);
	if (shrink_nb(comm, failed, nf, CCOM_SHRINK_ABORT, rank, 3, &c3))
		return T_FAIL;
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	if (rank != 2) {
		if (shrink_nb(c3, &two, 1, CCOM_SHRINK_DEFAULT, rank, 2, &c2))
			return T_FAIL;
		/* A nonblocking comm's finalize completes in the background. */
		ccomResult_t res = ccomCommFinalize(c2), async = res;

		for (t0 = t_now(); async == ccomInProgress && t_now() - t0 < 30; usleep(1000))
			T_CCOM(ccomCommGetAsyncError(c2, &async), ccomSuccess);
		T_CHECK(async == ccomSuccess, "finalize of the shrunk comm: %s",
			ccomGetErrorString(async));
		T_CCOM(ccomCommDestroy(c2), ccomSuccess);
	}
	T_CCOM(ccomCommDestroy(c3), ccomSuccess);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { .nranks = 4 };
	int codes[4], r;

	if (pipe(ready))
		return T_FAIL;
	t_fork_ranks_id(4, nb_rank, &j, codes, 120, &j.id);
	for (r = 0; r < 4; r++) {
		int want = r == 3 ? 128 + SIGKILL : 0;

		T_CHECK(codes[r] == want, "rank %d exited with %d, want %d", r, codes[r], want);
	}
	printf("PASS: nonblocking shrink with ABORT after an idle rank died, then DEFAULT without a live rank\n");
	return T_PASS;
}
