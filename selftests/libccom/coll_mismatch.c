// SPDX-License-Identifier: MIT
/*
 * Description: collective-mismatch detection (CCOM_CHECK_MISMATCH, on by
 * default).  Two forked ranks issue different collectives as their second
 * collective (the first one matches): a count, kind, datatype, op and root
 * mismatch on the small-message path (the tuner's LL128, and each case
 * again with CCOM_PROTO=ll), a count mismatch on the staged direct engine
 * (4 Mi floats), between a small call (LL128) and a staged one (each rank
 * waits in a different protocol: the board must name it), and on the
 * zero-copy path (ccomMemAlloc buffers).
 * Every rank must fail with ccomInvalidUsage within 5 s, with a sentence
 * that names both ranks' calls and what differs, and no byte outside the
 * buffers (64 guard bytes after each) may change.  CCOM_CHECK_MISMATCH=0
 * turns the check off (the same count mismatch then is not reported as
 * ccomInvalidUsage).
 */
#include "mismatch_util.h"

static const struct mm_case cases[] = {
	MM_BASIC_CASES,
	{ "count-direct", { { MM_ALLREDUCE, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" },
			    { MM_ALLREDUCE, 2u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "count-protocols", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 100, float, sum)" },
			       { MM_ALLREDUCE, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" } },
	  "the element counts differ", 0, 0 },
	{ "count-zcopy", { { MM_ALLREDUCE, 4u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 4194304, float, sum)" },
			   { MM_ALLREDUCE, 2u << 20, ccomFloat32, ccomSum, 0, "ccomAllReduce(count 2097152, float, sum)" } },
	  "the element counts differ", 1, 0 },
	{ "check-off", { { MM_ALLREDUCE, 100, ccomFloat32, ccomSum, 0, NULL },
			 { MM_ALLREDUCE, 200, ccomFloat32, ccomSum, 0, NULL } },
	  NULL, 0, 1 },
};

static int mismatch_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	const struct mm_case *mc = &cases[j->count];
	ccomComm_t comm;
	int rc;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "30", 1);	/* a timeout is not what must end it */
	if (mc->check_off)
		setenv("CCOM_CHECK_MISMATCH", "0", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	rc = mm_run_case(comm, rank, mc);
	ccomCommAbort(comm);
	return rc;
}

int main(void)
{
	struct ct_job j = { 0 };
	size_t k;
	int bad = 0;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		j.count = k;
		j.env[0] = NULL;
		if (ct_run(&j, 2, mismatch_rank, 60)) {
			fprintf(stderr, "case %s failed\n", cases[k].name);
			bad++;
		}
		/* The small cases once more on LL (the tuner gives them LL128). */
		if (cases[k].c[0].count > 100 || cases[k].c[1].count > 200 || cases[k].check_off)
			continue;
		j.env[0] = "CCOM_PROTO=ll";
		if (ct_run(&j, 2, mismatch_rank, 60)) {
			fprintf(stderr, "case %s failed with CCOM_PROTO=ll\n", cases[k].name);
			bad++;
		}
	}
	return bad ? T_FAIL : T_PASS;
}
