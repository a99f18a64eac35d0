// SPDX-License-Identifier: MIT
/*
 * Description: 1, 2, 3, 4, 8 and 16 forked ranks initialise a communicator
 * from one unique id; each checks the rank queries, then drives the
 * bootstrap directly: ring all-gather, point-to-point messages by
 * (peer, tag) with per-(peer, tag) ordering and out-of-order tags, the
 * barrier and subset barrier/all-gather, and the peer-info results (one
 * node, local ranks, intra-process ranks).  The 8-rank job runs a second
 * time with staggered check-ins (CCOM_UID_STAGGER_THRESHOLD=4).
 */
#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "test_util.h"

#define TAG(x) (CCOM_BOOTSTRAP_TAG_USER_BASE + (x))

static ccomUniqueId id;

static int check_allgather(struct ccomComm *c)
{
	int n = c->nranks, r;
	long *buf = calloc(n * 3, sizeof(long));

	T_CHECK(buf, "oom");
	buf[c->rank * 3] = c->rank * 1000 + 7;
	buf[c->rank * 3 + 2] = -c->rank;
	T_CHECK(ccom_bootstrap_allgather(c->bootstrap, buf, 3 * sizeof(long)) == 0, "allgather: %s",
		ccomGetLastError(NULL));
	for (r = 0; r < n; r++)
		T_CHECK(buf[r * 3] == r * 1000 + 7 && buf[r * 3 + 2] == -r,
			"allgather slot %d wrong: %ld %ld", r, buf[r * 3], buf[r * 3 + 2]);
	free(buf);
	return 0;
}

/* Every rank sends 3 messages on tag 1 and one on tag 2 to the next rank;
 * the receiver reads tag 2 first, then tag 1 in order. */
static int check_p2p(struct ccomComm *c)
{
	int n = c->nranks, next = (c->rank + 1) % n, prev = (c->rank - 1 + n) % n, i, v;
	char big[100000];

	for (i = 0; i < 3; i++) {
		v = c->rank * 10 + i;
		T_CHECK(!ccom_bootstrap_send(c->bootstrap, next, TAG(1), &v, sizeof(v)), "send: %s",
			ccomGetLastError(NULL));
	}
	memset(big, c->rank & 0xff, sizeof(big));
	T_CHECK(!ccom_bootstrap_send(c->bootstrap, next, TAG(2), big, sizeof(big)), "send big: %s",
		ccomGetLastError(NULL));
	memset(big, 0xee, sizeof(big));
	T_CHECK(!ccom_bootstrap_recv(c->bootstrap, prev, TAG(2), big, sizeof(big)), "recv big: %s",
		ccomGetLastError(NULL));
	for (i = 0; i < (int)sizeof(big); i++)
		T_CHECK(big[i] == (char)(prev & 0xff), "big byte %d is %d", i, big[i]);
	for (i = 0; i < 3; i++) {
		T_CHECK(!ccom_bootstrap_recv(c->bootstrap, prev, TAG(1), &v, sizeof(v)), "recv: %s",
			ccomGetLastError(NULL));
		T_CHECK(v == prev * 10 + i, "message %d from %d out of order: %d", i, prev, v);
	}
	/* A size mismatch is an error naming the sizes, not a crash. */
	v = 5;
	T_CHECK(!ccom_bootstrap_send(c->bootstrap, next, TAG(3), &v, sizeof(v)), "send");
	T_CHECK(ccom_bootstrap_recv(c->bootstrap, prev, TAG(3), big, 8) == -EPROTO,
		"size mismatch not detected");
	return 0;
}

static int check_subset(struct ccomComm *c)
{
	int ranks[16], n = 0, r, me_in = 0;
	int vals[16];

	for (r = 0; r < c->nranks; r += 2) {
		if (r == c->rank)
			me_in = 1;
		ranks[n++] = r;
	}
	if (!me_in)
		return 0;
	for (r = 0; r < n; r++)
		vals[r] = ranks[r] == c->rank ? c->rank + 100 : -1;
	T_CHECK(!ccom_bootstrap_subset_allgather(c->bootstrap, ranks, n, 5, vals, sizeof(int)),
		"subset allgather: %s", ccomGetLastError(NULL));
	for (r = 0; r < n; r++)
		T_CHECK(vals[r] == ranks[r] + 100, "subset slot %d = %d", r, vals[r]);
	T_CHECK(!ccom_bootstrap_subset_barrier(c->bootstrap, ranks, n, 6), "subset barrier: %s",
		ccomGetLastError(NULL));
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	int v, rc;

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	T_CCOM(ccomCommCount(comm, &v), ccomSuccess);
	T_CHECK(v == nranks, "count %d", v);
	T_CCOM(ccomCommUserRank(comm, &v), ccomSuccess);
	T_CHECK(v == rank, "rank %d", v);
	T_CCOM(ccomCommDevice(comm, &v), ccomSuccess);
	T_CHECK(comm->nnodes == 1 && comm->local_nranks == nranks && comm->local_rank == rank,
		"node layout: nnodes %d local %d/%d", comm->nnodes, comm->local_rank,
		comm->local_nranks);
	T_CHECK(comm->intra_proc_nranks == 1 && comm->intra_proc_rank == 0, "intra-process %d/%d",
		comm->intra_proc_rank, comm->intra_proc_nranks);
	rc = check_allgather(comm);
	if (!rc)
		rc = check_p2p(comm);
	if (!rc)
		rc = check_subset(comm);
	if (!rc)
		T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return rc;
}

int main(void)
{
	static const int sizes[] = { 1, 2, 3, 4, 8, 16 };
	unsigned int i;
	int v;

	T_CCOM(ccomGetVersion(&v), ccomSuccess);
	T_CHECK(v == CCOM_VERSION_CODE, "version %d", v);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int codes[16], bad;

		bad = t_fork_ranks_id(sizes[i], rank_main, NULL, codes, 60, &id);
		printf("%2d ranks: %s\n", sizes[i], bad ? "FAIL" : "ok");
		T_CHECK(!bad, "%d of %d ranks failed", bad, sizes[i]);
	}
	setenv("CCOM_UID_STAGGER_THRESHOLD", "4", 1);
	setenv("CCOM_UID_STAGGER_RATE", "2000", 1);
	T_CHECK(!t_fork_ranks_id(8, rank_main, NULL, NULL, 60, &id), "staggered job failed");
	printf(" 8 ranks with staggered check-in: ok\n");
	return T_PASS;
}
