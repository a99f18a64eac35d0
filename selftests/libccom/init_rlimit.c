// SPDX-License-Identifier: MIT
/*
 * Description: large jobs need many sockets, so the first libccom init of
 * a process raises the soft RLIMIT_NOFILE to the hard limit.  The test
 * lowers its soft limit, creates a unique id (which runs the one-time
 * global init) and checks the soft limit now equals the hard limit.
 * Skipped when soft and hard limits are already equal and cannot differ.
 */
#include <sys/resource.h>

#include "test_util.h"

int main(void)
{
	struct rlimit rl;
	ccomUniqueId id;

	T_CHECK(!getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
	if (rl.rlim_max <= 64)
		return t_skip("hard RLIMIT_NOFILE is only %llu", (unsigned long long)rl.rlim_max);
	rl.rlim_cur = 64;
	T_CHECK(!setrlimit(RLIMIT_NOFILE, &rl), "setrlimit");
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	T_CHECK(!getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
	T_CHECK(rl.rlim_cur == rl.rlim_max, "soft limit %llu, hard %llu",
		(unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	printf("RLIMIT_NOFILE raised to %llu\n", (unsigned long long)rl.rlim_cur);
	return T_PASS;
}
