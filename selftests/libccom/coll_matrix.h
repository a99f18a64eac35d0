/* SPDX-License-Identifier: MIT */
/*
 * coll_matrix.h - the collective matrix shared by coll_matrix*.c: every
 * collective (Gather and Scatter included, every root over the counts)
 * x dtype x op x {out-of-place, in-place} x counts {0, 1, 7,
 * 1023} on one communicator per rank, each result compared with the
 * reference of coll_util.h, and the bytes after every output checked for
 * overruns.  With job->big, the count 1 Mi + 3 runs too, for float32/sum
 * and int8/max only (allgather, reducescatter, alltoall, gather and
 * scatter use (1 Mi + 3) / nranks + 1 elements per block), to keep the suite fast;
 * under ASan/UBSan (CCOM_TEST_SANITIZER) the big counts run on up to 4
 * ranks only.
 */
#ifndef CCOM_COLL_MATRIX_H
#define CCOM_COLL_MATRIX_H

#include "coll_util.h"

enum { K_AR, K_BC, K_RED, K_AG, K_RS, K_A2A, K_GA, K_SC, K_SR, K_N };
static const char *const k_names[K_N] = { "allreduce", "broadcast", "reduce", "allgather",
					  "reducescatter", "alltoall", "gather", "scatter",
					  "sendrecv" };
#define CT_BIG ((1u << 20) + 3)
#define CT_CANARY 0xa5

struct ct_case {
	int kind, inplace, root;
	ccomDataType_t dt;
	ccomRedOp_t op;
	size_t count;
};

static int ct_blocks_in(int kind, int n)
{
	return (kind == K_RS || kind == K_A2A || kind == K_SC) ? n : 1;
}

static int ct_blocks_out(int kind, int n)
{
	return (kind == K_AG || kind == K_A2A || kind == K_GA) ? n : 1;
}

/* Kinds whose count is per block of nranks (the big cases divide by n). */
static inline int ct_blocked(int kind)
{
	return kind == K_AG || kind == K_RS || kind == K_A2A || kind == K_GA || kind == K_SC;
}

static ccomResult_t ct_issue(ccomComm_t comm, const struct ct_case *c, int rank, int n,
			     const void *s, void *r)
{
	switch (c->kind) {
	case K_AR: return ccomAllReduce(s, r, c->count, c->dt, c->op, comm, NULL);
	case K_BC: return ccomBroadcast(s, r, c->count, c->dt, c->root, comm, NULL);
	case K_RED: return ccomReduce(s, r, c->count, c->dt, c->op, c->root, comm, NULL);
	case K_AG: return ccomAllGather(s, r, c->count, c->dt, comm, NULL);
	case K_RS: return ccomReduceScatter(s, r, c->count, c->dt, c->op, comm, NULL);
	case K_A2A: return ccomAlltoAll(s, r, c->count, c->dt, comm, NULL);
	/* Out of place, the buffers a rank does not use are NULL (NCCL allows it). */
	case K_GA: return ccomGather(s, c->inplace || rank == c->root ? r : NULL, c->count, c->dt,
				     c->root, comm, NULL);
	case K_SC: return ccomScatter(c->inplace || rank == c->root ? s : NULL, r, c->count, c->dt,
				      c->root, comm, NULL);
	default:
		ccomGroupStart();
		ccomSend(s, c->count, c->dt, (rank + 1) % n, comm, NULL);
		ccomRecv(r, c->count, c->dt, (rank + n - 1) % n, comm, NULL);
		return ccomGroupEnd();
	}
}

static double ct_expect(const struct ct_case *c, int rank, int n, size_t i)
{
	size_t blk = c->count ? i / c->count : 0, off = c->count ? i % c->count : 0;

	switch (c->kind) {
	case K_AR:
	case K_RED: return ct_reduce(n, i, c->dt, c->op);
	case K_BC: return ct_in(c->root, i, c->op);
	case K_AG: return ct_in((int)blk, off, c->op);
	case K_RS: return ct_reduce(n, (size_t)rank * c->count + i, c->dt, c->op);
	case K_A2A: return ct_in((int)blk, (size_t)rank * c->count + off, c->op);
	case K_GA: return ct_in((int)blk, off, c->op);
	case K_SC: return ct_in(c->root, (size_t)rank * c->count + i, c->op);
	default: return ct_in((rank + n - 1) % n, i, c->op);
	}
}

/* Pointers of a case: in-place layouts as NCCL defines them. */
static void ct_ptrs(const struct ct_case *c, int rank, char *sb, char *rb, char **s, char **r,
		    char **out)
{
	size_t bytes = c->count * ct_size(c->dt);

	*s = sb;
	*r = rb;
	if (c->inplace) {
		/* Gather/Scatter: NCCL's in place is the root's; the others pass both buffers. */
		if (c->kind == K_AG || (c->kind == K_GA && rank == c->root))
			*s = rb + (size_t)rank * bytes;
		else if (c->kind == K_RS || (c->kind == K_SC && rank == c->root))
			*r = sb + (size_t)rank * bytes;
		else if (c->kind != K_GA && c->kind != K_SC)
			*s = rb;
	}
	*out = *r;
}

/* In-place cases whose output lies inside the input. */
static inline int ct_inplace_in_input(const struct ct_case *c, int rank)
{
	return c->inplace && (c->kind == K_RS || (c->kind == K_SC && rank == c->root));
}

static int ct_verify(const struct ct_case *c, int rank, int n, const char *out, const char *end)
{
	size_t nout = c->count * (size_t)ct_blocks_out(c->kind, n), i;
	const unsigned char *p;
	double g, e;

	if ((c->kind == K_RED || c->kind == K_GA) && rank != c->root)
		nout = 0;
	for (i = 0; i < nout; i++) {
		g = ct_get(out, i, c->dt);
		e = ct_expect(c, rank, n, i);
		if (!ct_same(g, e, c->dt)) {
			fprintf(stderr, "rank %d/%d: %s %s dtype %d op %d count %zu root %d: element %zu is %g, want %g\n",
				rank, n, k_names[c->kind], c->inplace ? "in-place" : "out-of-place",
				c->dt, c->op, c->count, c->root, i, g, e);
			return T_FAIL;
		}
	}
	/* Nothing written past the output (in-place RS, Scatter's root: the rest is input). */
	if (ct_inplace_in_input(c, rank))
		return T_PASS;
	for (p = (const unsigned char *)out + nout * ct_size(c->dt); p < (const unsigned char *)end; p++)
		if (*p != CT_CANARY && !(c->kind == K_RED && rank != c->root && c->inplace)) {
			fprintf(stderr, "rank %d/%d: %s dtype %d count %zu: byte %td after the output was overwritten\n",
				rank, n, k_names[c->kind], c->dt, c->count,
				(const char *)p - out - (ptrdiff_t)(nout * ct_size(c->dt)));
			return T_FAIL;
		}
	return T_PASS;
}

static int ct_case_run(ccomComm_t comm, const struct ct_case *c, int rank, int n, char *sb,
		       char *rb, size_t bufsz)
{
	char *s, *r, *out;
	ccomResult_t res;

	size_t used = c->count * ct_size(c->dt) * (size_t)n + 256;

	ct_ptrs(c, rank, sb, rb, &s, &r, &out);
	if (used > bufsz)
		used = bufsz;
	memset(sb, CT_CANARY, used);
	memset(rb, CT_CANARY, used);
	for (size_t i = 0; i < c->count * (size_t)ct_blocks_in(c->kind, n); i++)
		ct_put(s, i, c->dt, ct_in(rank, i, c->op));
	res = ct_issue(comm, c, rank, n, s, r);
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d/%d: %s count %zu: %s: %s\n", rank, n, k_names[c->kind],
			c->count, ccomGetErrorString(res), ccomGetLastError(comm));
		return T_FAIL;
	}
	return ct_verify(c, rank, n, out, ct_inplace_in_input(c, rank) ? out : rb + used);
}

static int ct_is_reduction(int k)
{
	return k == K_AR || k == K_RED || k == K_RS;
}

static int ct_matrix_small(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz)
{
	static const size_t counts[] = { 0, 1, 7, 1023 };
	struct ct_case c;
	int k, dt, op, ip, ci;

	for (k = 0; k < K_N; k++)
		for (dt = 0; dt < ccomNumTypes; dt++)
			for (op = 0; op < (ct_is_reduction(k) ? ccomNumOps : 1); op++)
				for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++)
					for (ci = 0; ci < 4; ci++) {
						c = (struct ct_case){ k, ip, (int)(counts[ci] % (size_t)n),
								      (ccomDataType_t)dt, (ccomRedOp_t)op,
								      counts[ci] };
						if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
							return T_FAIL;
					}
	return T_PASS;
}

static int ct_matrix_big(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz)
{
	static const struct { ccomDataType_t dt; ccomRedOp_t op; } sel[] = {
		{ ccomFloat32, ccomSum }, { ccomInt8, ccomMax },
	};
	struct ct_case c;
	int k, i, ip;

	for (k = 0; k < K_N; k++)
		for (i = 0; i < 2; i++)
			for (ip = 0; ip < (k == K_SR ? 1 : 2); ip++) {
				c = (struct ct_case){ k, ip, n - 1, sel[i].dt, sel[i].op,
						      ct_blocked(k) ? CT_BIG / (size_t)n + 1 : CT_BIG };
				if (ct_case_run(comm, &c, rank, n, sb, rb, bufsz))
					return T_FAIL;
			}
	return T_PASS;
}

typedef int (*ct_matrix_fn)(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz);

/*
 * One rank: init, @small (the small-count cases) with send and receive
 * buffers of @bufsz bytes, the big counts if asked, finalize.
 */
static inline int ct_matrix_rank_sized(int rank, int n, struct ct_job *j, ct_matrix_fn small,
				       size_t bufsz)
{
	ccomComm_t comm;
	char *sb, *rb;
	void *hs = NULL, *hr = NULL;
	int rc;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	sb = malloc(bufsz);
	rb = malloc(bufsz);
	if (!sb || !rb)
		return T_FAIL;
	/* The registered-buffer variant: both buffers registered for the whole job. */
	if (j->reg) {
		T_CCOM(ccomCommRegister(comm, sb, bufsz, &hs), ccomSuccess);
		T_CCOM(ccomCommRegister(comm, rb, bufsz, &hr), ccomSuccess);
	}
	rc = small(comm, rank, n, sb, rb, bufsz);
	if (!rc && j->big)
		rc = ct_matrix_big(comm, rank, n, sb, rb, bufsz);
	if (!rc && j->reg && (ccomCommDeregister(comm, hs) != ccomSuccess ||
			      ccomCommDeregister(comm, hr) != ccomSuccess)) {
		fprintf(stderr, "FAIL rank %d: ccomCommDeregister: %s\n", rank, ccomGetLastError(NULL));
		rc = T_FAIL;
	}
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return rc;
}

/* The same with buffers for the big counts. */
static inline int ct_matrix_rank_with(int rank, int n, struct ct_job *j, ct_matrix_fn small)
{
	return ct_matrix_rank_sized(rank, n, j, small, ((size_t)CT_BIG + 8) * 8 * 2 + 4096);
}

static int ct_matrix_rank(int rank, int n, void *arg)
{
	return ct_matrix_rank_with(rank, n, arg, ct_matrix_small);
}

/* Run the matrix on 1, 2, 3, 4 and 8 ranks with @env. */
static inline int ct_matrix_main(const char *env0, const char *env1)
{
	static const int sizes[] = { 1, 2, 3, 4, 8 };
	struct ct_job j = { .env = { env0, env1 }, .big = 1 };
	double t0;
	int i;

	for (i = 0; i < 5; i++) {
		j.big = !t_sanitizer() || sizes[i] <= 4;
		t0 = t_now();
		if (ct_run(&j, sizes[i], ct_matrix_rank, 280))
			return T_FAIL;
		printf("%d ranks: matrix passed in %.1f s\n", sizes[i], t_now() - t0);
		fflush(stdout);
	}
	return T_PASS;
}

#endif
