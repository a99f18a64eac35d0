// SPDX-License-Identifier: MIT
/*
 * Description: ccomCommShrink on healthy communicators (4 forked ranks on
 * one host): a comm made by ccomCommSplit with reversed keys shrinks
 * without its rank 3 (old rank 0, alive, which does not call it) and the
 * survivors keep their child order (child ranks 0, 1, 2 stay 0, 1, 2);
 * the parent shrinks with CCOM_SHRINK_DEFAULT without rank 3 (alive), and
 * the 3-rank result shrinks again without its rank 0 (a shrink of a shrunk
 * comm), the collective matrix on the first; CCOM_SHRINK_ABORT on that
 * 2-rank comm revokes it (its next op fails at once) and the new comm
 * passes an AllReduce (no op runs right before the ABORT: a peer still
 * finishing one would fail, as documented).
 */
#include "coll_matrix.h"

static int allreduce_ok(ccomComm_t comm, int rank, int n)
{
	float v[1024];

	return ct_allreduce_ok(comm, rank, n, v, 1024);
}

/* Shrink @comm without @ex; check the new rank is @want of @n and run an AllReduce. */
static int shrink_check(ccomComm_t comm, int ex, int want, int n, int flags, ccomComm_t *out)
{
	int r = -1, c = -1;

	T_CCOM(ccomCommShrink(comm, &ex, 1, out, NULL, flags), ccomSuccess);
	T_CCOM(ccomCommUserRank(*out, &r), ccomSuccess);
	T_CCOM(ccomCommCount(*out, &c), ccomSuccess);
	T_CHECK(r == want && c == n, "shrink without rank %d: got rank %d of %d, want %d of %d", ex,
		r, c, want, n);
	return allreduce_ok(*out, r, n);
}

static int healthy_rank(int rank, int n, void *arg)
{
	size_t bufsz = 64 * 1024 * 8 * 2;
	ccomComm_t comm, child, cs, c3, c2, ca;
	struct ct_job *j = arg;
	int crank = n - 1 - rank, r3 = rank, nf = 4, failed[4];
	char *sb = malloc(bufsz), *rb = malloc(bufsz);
	ccomResult_t res;

	T_CHECK(sb && rb, "out of memory");
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	/* A split child in reversed order; its rank 3 (old rank 0) is left out. */
	T_CCOM(ccomCommSplit(comm, 0, crank, &child, NULL), ccomSuccess);
	if (crank != 3) {
		if (shrink_check(child, 3, crank, 3, CCOM_SHRINK_DEFAULT, &cs))
			return T_FAIL;
		T_CCOM(ccomCommDestroy(cs), ccomSuccess);
	}
	T_CCOM(ccomCommDestroy(child), ccomSuccess);
	/* The parent without its (live) rank 3, then the result without its rank 0. */
	if (rank != 3) {
		if (shrink_check(comm, 3, rank, 3, CCOM_SHRINK_DEFAULT, &c3))
			return T_FAIL;
		if (ct_matrix_small(c3, r3, 3, sb, rb, bufsz))
			return T_FAIL;
		T_CCOM(ccomCommGetFailedRanks(c3, failed, &nf), ccomSuccess);
		T_CHECK(nf == 0, "a healthy comm lists %d failed rank(s) (first %d)", nf, failed[0]);
		if (r3 != 0) {
			int zero = 0, r2 = -1;

			/* No op before the ABORT below: a peer still finishing one would fail. */
			T_CCOM(ccomCommShrink(c3, &zero, 1, &c2, NULL, CCOM_SHRINK_DEFAULT), ccomSuccess);
			T_CCOM(ccomCommUserRank(c2, &r2), ccomSuccess);
			T_CHECK(r2 == r3 - 1, "shrunk shrunk comm: rank %d, want %d", r2, r3 - 1);
			/* ABORT on a healthy comm: it is revoked, the new one works. */
			T_CCOM(ccomCommShrink(c2, NULL, 0, &ca, NULL, CCOM_SHRINK_ABORT), ccomSuccess);
			if (allreduce_ok(ca, r2, 2))
				return T_FAIL;
			res = ccomAllReduce(sb, sb, 1, ccomFloat32, ccomSum, c2, NULL);
			if (res == ccomSuccess)
				res = ccomCommSynchronize(c2);
			T_CHECK(res == ccomRemoteError, "an op on the comm shrunk with ABORT returned %s",
				ccomGetErrorString(res));
			T_CCOM(ccomCommFinalize(ca), ccomSuccess);
			T_CCOM(ccomCommDestroy(ca), ccomSuccess);
			T_CCOM(ccomCommDestroy(c2), ccomSuccess);
		}
		T_CCOM(ccomCommFinalize(c3), ccomSuccess);
		T_CCOM(ccomCommDestroy(c3), ccomSuccess);
	}
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	free(sb);
	free(rb);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };

	if (ct_run(&j, 4, healthy_rank, 120))
		return T_FAIL;
	printf("PASS: split child shrunk in child order; parent 4 -> 3 (live rank excluded, matrix) -> 2 -> 2 with ABORT\n");
	return T_PASS;
}
