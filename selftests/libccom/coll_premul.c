// SPDX-License-Identifier: MIT
/*
 * Description: PreMulSum ops (ccomRedOpCreatePreMulSum / ccomRedOpDestroy).
 * Every reduction (AllReduce, Reduce at every root, ReduceScatter) x every
 * dtype (fp16 and bf16 included) x both residences (ccomScalarDevice read
 * at execution, ccomScalarHostImmediate copied at creation) x out-of-place
 * / in-place x counts {1, 7, 1023}, plus 256 Ki + 5 elements of float32
 * and bfloat16 (the staged direct engine), each rank with its own scalar
 * (a weighted sum), compared with a reference that multiplies each input
 * by the scalar, rounds the product to the dtype (integers wrap: the int8
 * and uint8 scalars make the products wrap), then sums and rounds as the
 * dtype stores it; float results within n units in the last place (the
 * order of the additions is the algorithm's).  On 1, 2, 3 and 4 forked
 * ranks of one host (shm), on 3 ranks over TCP (CCOM_TRANSPORT=net) and,
 * where /dev/nccom exists, on 2 and 3 ranks with CCOM_KDEV=1 (the
 * engine's in-kernel sum; CCOM_TEST_KDEV_ONLY=1, as kdev/run-vm sets it,
 * runs only those).  Then the contract: a ccomScalarDevice value
 * changed after creation is the one used, a ccomScalarHostImmediate one
 * is not; an op destroyed right after the call that was given it still
 * applies there; destroying twice, a built-in op, a destroyed op's use,
 * a datatype other than the op's, a NULL scalar and a bad residence are
 * ccomInvalidArgument.
 */
#include "coll_util.h"

enum { P_AR, P_RED, P_RS, P_N };
static const char *const p_names[P_N] = { "allreduce", "reduce", "reducescatter" };
#define P_BIG ((256u << 10) + 5)

/* Rank @rank's scalar for @dt (as the dtype stores it). */
static double p_scalar(ccomDataType_t dt, int rank)
{
	static const double base[ccomNumTypes] = {
		[ccomInt8] = 50, [ccomUint8] = 60, [ccomInt32] = -7, [ccomUint32] = 7,
		[ccomInt64] = -5, [ccomUint64] = 5, [ccomFloat16] = 0.3, [ccomFloat32] = 0.3,
		[ccomFloat64] = 0.3, [ccomBfloat16] = 0.3,
	};
	char tmp[8];

	ct_put(tmp, 0, dt, base[dt] * (rank + 1));
	return ct_get(tmp, 0, dt);
}

static double p_round(double v, ccomDataType_t dt)
{
	char tmp[8];

	if (!ct_is_float(dt))
		v = (double)(int64_t)v;
	ct_put(tmp, 0, dt, v);
	return ct_get(tmp, 0, dt);
}

/* Sum over ranks of round(input * scalar), rounded as @dt stores it. */
static double p_expect(int n, size_t idx, ccomDataType_t dt)
{
	double acc = 0;

	for (int r = 0; r < n; r++)
		acc += p_round(ct_in(r, idx, ccomSum) * p_scalar(dt, r), dt);
	return p_round(acc, dt);
}

/*
 * Floats: each of the n - 1 additions rounds once, in the algorithm's
 * order, so allow n units in the last place of the dtype (exact inputs, as
 * coll_util.h's, would not exercise the products' rounding).
 */
static int p_same(double got, double want, ccomDataType_t dt, int n)
{
	double ulp = dt == ccomBfloat16 ? 0x1p-8 : dt == ccomFloat16 ? 0x1p-11 :
		     dt == ccomFloat32 ? 0x1p-24 : 0x1p-53;

	if (!ct_is_float(dt))
		return got == want;
	return fabs(got - want) <= n * ulp * fabs(want);
}

struct p_case {
	int kind, inplace, root;
	ccomDataType_t dt;
	ccomScalarResidence_t res;
	size_t count;
};

static ccomResult_t p_issue(ccomComm_t comm, const struct p_case *c, ccomRedOp_t op, void *s,
			    void *r)
{
	switch (c->kind) {
	case P_AR: return ccomAllReduce(s, r, c->count, c->dt, op, comm, NULL);
	case P_RED: return ccomReduce(s, r, c->count, c->dt, op, c->root, comm, NULL);
	default: return ccomReduceScatter(s, r, c->count, c->dt, op, comm, NULL);
	}
}

static int p_case_run(ccomComm_t comm, const struct p_case *c, int rank, int n, char *sb, char *rb)
{
	size_t esz = ct_size(c->dt), nin = c->count * (c->kind == P_RS ? (size_t)n : 1), i, nout;
	char scalar[8], *s = sb, *r = rb;
	ccomRedOp_t op;
	double g, e;

	if (c->inplace && c->kind == P_RS)
		r = sb + (size_t)rank * c->count * esz;
	else if (c->inplace)
		s = rb;
	for (i = 0; i < nin; i++)
		ct_put(s, i, c->dt, ct_in(rank, i, ccomSum));
	ct_put(scalar, 0, c->dt, p_scalar(c->dt, rank));
	T_CCOM(ccomRedOpCreatePreMulSum(&op, scalar, c->dt, c->res, comm), ccomSuccess);
	T_CHECK((int)op > (int)ccomNumOps, "custom op %d is not above ccomNumOps", (int)op);
	T_CCOM(p_issue(comm, c, op, s, r), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CCOM(ccomRedOpDestroy(op, comm), ccomSuccess);
	nout = c->kind == P_RED && rank != c->root ? 0 : c->count;
	for (i = 0; i < nout; i++) {
		g = ct_get(r, i, c->dt);
		e = p_expect(n, (c->kind == P_RS ? (size_t)rank * c->count : 0) + i, c->dt);
		T_CHECK(p_same(g, e, c->dt, n),
			"rank %d/%d: premulsum %s %s %s dtype %d count %zu root %d: element %zu is %g, want %g",
			rank, n, p_names[c->kind], c->inplace ? "in-place" : "out-of-place",
			c->res == ccomScalarDevice ? "device" : "host", c->dt, c->count, c->root, i, g,
			e);
	}
	return T_PASS;
}

static int p_matrix(ccomComm_t comm, int rank, int n, char *sb, char *rb)
{
	static const size_t counts[] = { 1, 7, 1023 };
	struct p_case c;
	int k, dt, res, ip, ci;

	for (k = 0; k < P_N; k++)
		for (dt = 0; dt < ccomNumTypes; dt++)
			for (res = 0; res < 2; res++)
				for (ip = 0; ip < 2; ip++)
					for (ci = 0; ci < 3; ci++) {
						c = (struct p_case){ k, ip, (int)(counts[ci] + (size_t)ip) % n,
								     (ccomDataType_t)dt,
								     (ccomScalarResidence_t)res, counts[ci] };
						if (p_case_run(comm, &c, rank, n, sb, rb))
							return T_FAIL;
					}
	for (k = 0; k < P_N; k++)
		for (dt = 0; dt < 2; dt++) {
			c = (struct p_case){ k, k == P_AR, n - 1, dt ? ccomBfloat16 : ccomFloat32,
					     ccomScalarDevice,
					     k == P_RS ? P_BIG / (size_t)n : P_BIG };
			if (p_case_run(comm, &c, rank, n, sb, rb))
				return T_FAIL;
		}
	return T_PASS;
}

/* The residences' timing, capture at enqueue, and the refused uses. */
static int p_contract(ccomComm_t comm, int rank, int n)
{
	float x, v, dev = 2.0f, host = 2.0f, want = (float)n;
	ccomRedOp_t od, oh, dead;

	T_CCOM(ccomRedOpCreatePreMulSum(&od, &dev, ccomFloat32, ccomScalarDevice, comm), ccomSuccess);
	T_CCOM(ccomRedOpCreatePreMulSum(&oh, &host, ccomFloat32, ccomScalarHostImmediate, comm),
	       ccomSuccess);
	T_CHECK(od != oh, "two live ops share the handle %d", (int)od);
	dev = 3.0f;	/* read at execution */
	host = 5.0f;	/* copied at creation: 2 stays */
	x = 1.0f;
	T_CCOM(ccomAllReduce(&x, &v, 1, ccomFloat32, od, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(v == 3.0f * want, "rank %d: ccomScalarDevice gave %g, want %g", rank, v, 3 * want);
	T_CCOM(ccomAllReduce(&x, &v, 1, ccomFloat32, oh, comm, NULL), ccomSuccess);
	/* Destroyed while the call may still be queued: it was captured at enqueue. */
	T_CCOM(ccomRedOpDestroy(oh, comm), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(v == 2.0f * want, "rank %d: ccomScalarHostImmediate gave %g, want %g", rank, v,
		2 * want);
	dead = oh;
	T_CCOM(ccomRedOpDestroy(dead, comm), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(&x, &v, 1, ccomFloat32, dead, comm, NULL), ccomInvalidArgument);
	T_CCOM(ccomRedOpDestroy(ccomSum, comm), ccomInvalidArgument);
	T_CCOM(ccomRedOpDestroy((ccomRedOp_t)(ccomNumOps + 999), comm), ccomInvalidArgument);
	T_CCOM(ccomAllReduce(&x, &v, 1, ccomFloat64, od, comm, NULL), ccomInvalidArgument);
	T_CHECK(t_has_words(ccomGetLastError(comm), "created for float", "double", NULL),
		"the dtype message does not name both types: %s", ccomGetLastError(comm));
	T_CCOM(ccomRedOpCreatePreMulSum(&oh, NULL, ccomFloat32, ccomScalarDevice, comm),
	       ccomInvalidArgument);
	T_CCOM(ccomRedOpCreatePreMulSum(&oh, &host, ccomFloat32, (ccomScalarResidence_t)7, comm),
	       ccomInvalidArgument);
	T_CCOM(ccomRedOpCreatePreMulSum(&oh, &host, ccomNumTypes, ccomScalarDevice, comm),
	       ccomInvalidArgument);
	T_CCOM(ccomRedOpDestroy(od, comm), ccomSuccess);
	return T_PASS;
}

static int p_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t bufsz = (size_t)P_BIG * 8 + 4096;
	ccomComm_t comm;
	char *sb, *rb;
	int rc;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	sb = malloc(bufsz);
	rb = malloc(bufsz);
	if (!sb || !rb)
		return T_FAIL;
	rc = p_matrix(comm, rank, n, sb, rb);
	if (!rc)
		rc = p_contract(comm, rank, n);
	if (!rc && ccomCommFinalize(comm) != ccomSuccess)
		rc = T_FAIL;
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return rc;
}

int main(void)
{
	static const struct { int n; const char *env; } runs[] = {
		{ 1, NULL }, { 2, NULL }, { 3, NULL }, { 4, NULL }, { 3, "CCOM_TRANSPORT=net" },
		{ 2, "CCOM_KDEV=1" }, { 3, "CCOM_KDEV=1" },
	};
	/* The guest (kdev/run-vm) runs only the engine's jobs: the host ran the others. */
	const char *kdev_only = getenv("CCOM_TEST_KDEV_ONLY");
	struct ct_job j = { 0 };
	double t0;
	size_t i;
	int ran = 0;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (kdev_only && *kdev_only == '1' && !runs[i].env)
			continue;
		if (kdev_only && *kdev_only == '1' && strcmp(runs[i].env, "CCOM_KDEV=1"))
			continue;
		if (runs[i].env && !strcmp(runs[i].env, "CCOM_KDEV=1") && access("/dev/nccom", R_OK | W_OK)) {
			printf("%d ranks, CCOM_KDEV=1: not run (no /dev/nccom; selftests/libccom/kdev/run-vm runs it)\n",
			       runs[i].n);
			continue;
		}
		j.env[0] = runs[i].env;
		t0 = t_now();
		if (ct_run(&j, runs[i].n, p_rank, 280))
			return T_FAIL;
		printf("%d ranks%s%s: premulsum passed in %.1f s\n", runs[i].n, runs[i].env ? ", " : "",
		       runs[i].env ? runs[i].env : "", t_now() - t0);
		fflush(stdout);
		ran++;
	}
	return ran ? T_PASS : t_skip("no job ran (CCOM_TEST_KDEV_ONLY=1 without /dev/nccom)");
}
