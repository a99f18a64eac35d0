// SPDX-License-Identifier: MIT
/*
 * Description: foreign connections do not disturb the bootstrap.  Before a
 * 4-rank job checks in, the test connects to its root with a wrong magic,
 * with random garbage, with the right magic but a malformed message, with
 * a connection closed at once and with one left open and silent.  The job
 * must still initialise; the root must log each dropped connection (with
 * "wrong magic" / "malformed").  After init, garbage and wrong-magic
 * connections to a rank's own listen socket must not break p2p messages or
 * the barrier.
 */
#include <stdio.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "boot_util.h"
#include "test_util.h"

static ccomUniqueId id;

/* Connections that a root or a rank must drop: returns the fds to close later. */
static int send_foreign(const union ccom_sockaddr *a, uint64_t magic, int *fds)
{
	struct ccom_bs_hello h;
	char junk[300];
	int i, n = 0;

	memset(&h, 0, sizeof(h));
	h.magic = magic + 1;
	h.type = CCOM_BS_HELLO;
	fds[n] = t_connect_addr(a);
	T_CHECK(fds[n] >= 0 && write(fds[n], &h, sizeof(h)) == sizeof(h), "wrong magic conn");
	n++;
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)(i * 37 + 11);
	fds[n] = t_connect_addr(a);
	T_CHECK(fds[n] >= 0 && write(fds[n], junk, sizeof(junk)) == sizeof(junk), "garbage conn");
	n++;
	h.magic = magic;
	h.type = 0xdeadbeef;
	h.size = 3;
	fds[n] = t_connect_addr(a);
	T_CHECK(fds[n] >= 0 && write(fds[n], &h, sizeof(h)) == sizeof(h), "malformed conn");
	n++;
	i = t_connect_addr(a);
	T_CHECK(i >= 0, "connect");
	close(i);
	fds[n] = t_connect_addr(a); /* open and silent */
	T_CHECK(fds[n] >= 0, "silent conn");
	n++;
	return n;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	int fds[8], n = 0, i, v;

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	if (rank == 0) {
		union ccom_sockaddr a;

		memcpy(&a, &comm->peers[1].listen_addr, sizeof(comm->peers[1].listen_addr));
		n = send_foreign(&a, comm->magic, fds);
		if (n < 0)
			return T_FAIL;
	}
	T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s", ccomGetLastError(NULL));
	/* Everyone sends to rank 1, which must still get every message. */
	if (rank != 1) {
		v = rank + 40;
		T_CHECK(!ccom_bootstrap_send(comm->bootstrap, 1, CCOM_BOOTSTRAP_TAG_USER_BASE, &v,
					     sizeof(v)), "send: %s", ccomGetLastError(NULL));
	} else {
		for (i = 0; i < nranks; i++) {
			if (i == 1)
				continue;
			T_CHECK(!ccom_bootstrap_recv(comm->bootstrap, i, CCOM_BOOTSTRAP_TAG_USER_BASE,
						     &v, sizeof(v)), "recv: %s", ccomGetLastError(NULL));
			T_CHECK(v == i + 40, "value %d from %d", v, i);
		}
	}
	T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier 2: %s", ccomGetLastError(NULL));
	for (i = 0; i < n; i++)
		close(fds[i]);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return 0;
}

int main(void)
{
	struct ccom_bs_id h;
	struct t_ranks t;
	char log[128];
	int fds[8], n, i, codes[4];

	snprintf(log, sizeof(log), "/tmp/ccom-boot-foreign-%d.log", (int)getpid());
	setenv("CCOM_DEBUG_FILE", log, 1);
	/* Ranks are forked before this process starts the root thread. */
	T_CHECK(!t_ranks_start(&t, 4, rank_main, NULL, &id), "fork");
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	memcpy(&h, id.internal, sizeof(h));
	n = send_foreign(&h.root, h.magic, fds);
	T_CHECK(n > 0, "foreign connections");
	t_ranks_release(&t, &id);
	T_CHECK(!t_ranks_wait(&t, codes, 60), "ranks failed: %d %d %d %d", codes[0], codes[1],
		codes[2], codes[3]);
	for (i = 0; i < n; i++)
		close(fds[i]);
	i = t_file_lines(log, "dropped connection", NULL);
	T_CHECK(i >= 4, "root logged %d dropped connections, want >= 4 (see %s)", i, log);
	T_CHECK(t_file_lines(log, "wrong magic", NULL) >= 1 && t_file_lines(log, "malformed", NULL) >= 1,
		"root log lacks the reasons (see %s)", log);
	unlink(log);
	printf("job initialised despite %d foreign connections; root dropped %d\n", n + 1, i);
	return T_PASS;
}
