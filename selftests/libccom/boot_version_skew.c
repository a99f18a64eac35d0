// SPDX-License-Identifier: MIT
/*
 * Description: version/ABI/build skew between ranks is refused at the root
 * and reported to every rank.  Three cases, each with 3 ranks where rank 1
 * pretends (test hooks CCOM_TEST_FAKE_BUILD_HASH, CCOM_TEST_FAKE_VERSION,
 * CCOM_TEST_FAKE_ABI) to be a different libccom: every rank gets
 * ccomInvalidUsage and a message with "version skew", the skewed rank and
 * the advice to use the same build.
 */
#include "test_util.h"

static ccomUniqueId id;

struct skew {
	const char *var;
	const char *val;
	const char *word;
};

static int rank_main(int rank, int nranks, void *arg)
{
	const struct skew *s = arg;
	ccomComm_t comm;
	ccomResult_t res;

	if (rank == 1)
		setenv(s->var, s->val, 1);
	res = t_init_cfg(&comm, nranks, id, rank, 1, 30);
	return t_init_refused(comm, res, ccomInvalidUsage, s->var, rank, "version skew", "rank 1",
			      s->word, "same libccom build", NULL);
}

int main(void)
{
	static const struct skew cases[] = {
		{ "CCOM_TEST_FAKE_BUILD_HASH", "123456789abcdef0", "build 123456789abcdef0" },
		{ "CCOM_TEST_FAKE_VERSION", "9999", "version 9999" },
		{ "CCOM_TEST_FAKE_ABI", "77", "ABI 77" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int codes[3];

		T_CHECK(!t_fork_ranks_id(3, rank_main, (void *)&cases[i], codes, 60, &id),
			"%s: ranks failed: %d %d %d", cases[i].var, codes[0], codes[1], codes[2]);
		printf("%s: refused on every rank\n", cases[i].var);
	}
	return T_PASS;
}
