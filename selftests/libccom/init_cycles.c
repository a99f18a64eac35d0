// SPDX-License-Identifier: MIT
/*
 * Description: 1,000 init/destroy cycles of a 2-rank communicator (two
 * threads of this process, ccomCommInitAll, a fresh unique id and root
 * each time) must not leak: the number of open file descriptors after the
 * last cycle equals the number after 20 warm-up cycles, and RSS grows by
 * less than 4 MiB (RSS is not checked under ASan, whose quarantine holds
 * freed memory on purpose).  Every 10th cycle uses ccomCommAbort instead
 * of ccomCommDestroy.
 */
#include "test_util.h"

#define CYCLES 1000
#define WARMUP 20

static int cycle(int i)
{
	ccomComm_t c[2];
	int r;

	T_CCOM(ccomCommInitAll(c, 2, NULL), ccomSuccess);
	for (r = 0; r < 2; r++) {
		if (i % 10 == 9)
			T_CCOM(ccomCommAbort(c[r]), ccomSuccess);
		else
			T_CCOM(ccomCommDestroy(c[r]), ccomSuccess);
	}
	return 0;
}

int main(void)
{
	long rss0, rss1;
	int fds0, fds1 = -1, i;
	double t0;

	for (i = 0; i < WARMUP; i++)
		if (cycle(i))
			return T_FAIL;
	usleep(200000); /* let the last root threads exit */
	fds0 = t_count_fds();
	rss0 = t_rss_kb();
	t0 = t_now();
	for (i = 0; i < CYCLES; i++)
		if (cycle(i))
			return T_FAIL;
	/* Root threads are detached and close their sockets just after the reply. */
	for (i = 0; i < 100 && fds1 != fds0; i++) {
		fds1 = t_count_fds();
		if (fds1 != fds0)
			usleep(20000);
	}
	rss1 = t_rss_kb();
	printf("%d cycles in %.2f s: fds %d -> %d, RSS %ld -> %ld KiB\n", CYCLES, t_now() - t0, fds0,
	       fds1, rss0, rss1);
	T_CHECK(fds1 == fds0, "file descriptors leaked: %d -> %d", fds0, fds1);
	if (!t_sanitizer())
		T_CHECK(rss1 - rss0 < 4096, "RSS grew by %ld KiB", rss1 - rss0);
	return T_PASS;
}
