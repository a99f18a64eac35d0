// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommAbort() ends an init in progress.  (1) A blocking
 * init of rank 0 of 2 (rank 1 never comes, timeout 120 s) runs on a
 * thread; the main thread aborts the published handle: the init must
 * return ccomRemoteError with "aborted" in its message long before the
 * timeout.  (2) The same with a nonblocking init.  (3) In a 3-rank job one
 * rank aborts after init; the others' next bootstrap operation fails with
 * an error instead of hanging.
 */
#include <pthread.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "test_util.h"

static ccomUniqueId id;
static ccomComm_t shared_comm;
static ccomResult_t thread_res;
static char thread_msg[1024];

static void *init_thread(void *arg)
{
	(void)arg;
	thread_res = t_init_cfg(&shared_comm, 2, id, 0, 1, 120);
	snprintf(thread_msg, sizeof(thread_msg), "%s", ccomGetLastError(NULL));
	return NULL;
}

static ccomComm_t wait_handle(void)
{
	ccomComm_t c;
	int i;

	for (i = 0; i < 10000; i++) {
		c = __atomic_load_n(&shared_comm, __ATOMIC_ACQUIRE);
		if (c)
			return c;
		usleep(1000);
	}
	return NULL;
}

static int test_blocking(void)
{
	struct timespec ts;
	pthread_t th;
	ccomComm_t c;
	double t0;

	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	shared_comm = NULL;
	T_CHECK(!pthread_create(&th, NULL, init_thread, NULL), "thread");
	c = wait_handle();
	T_CHECK(c, "handle never published");
	usleep(300000); /* let it block in the rendezvous */
	t0 = t_now();
	T_CCOM(ccomCommAbort(c), ccomSuccess);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	T_CHECK(!pthread_timedjoin_np(th, NULL, &ts), "init did not return 60 s after the abort");
	T_CHECK(thread_res == ccomRemoteError, "init returned %d (%s): %s", thread_res,
		ccomGetErrorString(thread_res), thread_msg);
	T_CHECK(t_has_words(thread_msg, "aborted", NULL), "message");
	printf("blocking init aborted: returned %.3f s after ccomCommAbort: %s\n", t_now() - t0,
	       thread_msg);
	return 0;
}

static int test_nonblocking(void)
{
	ccomComm_t c;
	ccomResult_t st;
	double t0;

	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CCOM(t_init_cfg(&c, 2, id, 0, 0, 120), ccomInProgress);
	usleep(300000);
	T_CCOM(ccomCommGetAsyncError(c, &st), ccomSuccess);
	T_CHECK(st == ccomInProgress, "state %d", st);
	t0 = t_now();
	T_CCOM(ccomCommAbort(c), ccomSuccess);
	printf("nonblocking init aborted in %.3f s\n", t_now() - t0);
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	int rc;

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	if (rank == 1) {
		T_CCOM(ccomCommAbort(comm), ccomSuccess);
		return 0;
	}
	rc = ccom_bootstrap_barrier(comm->bootstrap);
	T_CHECK(rc == -ECONNRESET, "rank %d: barrier after a peer's abort returned %d: %s", rank,
		rc, ccomGetLastError(NULL));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "closed", NULL), "message");
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	int codes[3];

	if (test_blocking() || test_nonblocking())
		return T_FAIL;
	T_CHECK(!t_fork_ranks_id(3, rank_main, NULL, codes, 60, &id), "ranks failed: %d %d %d", codes[0],
		codes[1], codes[2]);
	printf("peers of an aborted rank fail their next bootstrap operation\n");
	return T_PASS;
}
