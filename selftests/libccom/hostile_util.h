/* SPDX-License-Identifier: MIT */
/*
 * hostile_util.h - what the hostile-peer tests (coll_p2p_hostile,
 * coll_cma_p2p_hostile) demand of the honest rank once its operation met
 * the forgery: exactly the result wanted, in time (a CCOM_OP_TIMEOUT=2
 * case times out after 1.5-6 s, any other returns within 5 s), and for
 * a failure a sentence with the wanted words and the comm's async error
 * set.  Kept in one place so both tests judge the same way.
 */
#ifndef CCOM_HOSTILE_UTIL_H
#define CCOM_HOSTILE_UTIL_H

#include "test_util.h"

/*
 * Rank 1's @what ("the receive", "the send") returned @res after @dt
 * seconds where @want was due; @words (up to 3, NULL-ended early) must be
 * in the error sentence.  T_PASS or T_FAIL.
 */
static inline int t_hostile_outcome(ccomComm_t comm, const char *what, ccomResult_t res,
				    ccomResult_t want, double dt, const char *const words[3])
{
	ccomResult_t async = ccomSuccess;

	T_CHECK(res == want, "rank 1: %s returned %s, want %s", what, ccomGetErrorString(res),
		ccomGetErrorString(want));
	if (want == ccomTimeout)
		T_CHECK(dt >= 1.5 && dt < 6, "rank 1: %s timed out after %.1f s (CCOM_OP_TIMEOUT=2)",
			what, dt);
	else
		T_CHECK(dt < 5, "rank 1: %s returned only after %.1f s", what, dt);
	if (want == ccomSuccess)
		return T_PASS;
	T_CHECK(t_has_words(ccomGetLastError(comm), words[0], words[1], words[2], NULL),
		"rank 1: the error does not say \"%s\"%s%s%s%s", words[0] ? words[0] : "",
		words[1] ? " and " : "", words[1] ? words[1] : "", words[2] ? " and " : "",
		words[2] ? words[2] : "");
	T_CCOM(ccomCommGetAsyncError(comm, &async), ccomSuccess);
	T_CHECK(async != ccomSuccess, "rank 1: the comm's async error is success after the failure");
	return T_PASS;
}

#endif
