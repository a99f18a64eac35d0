// SPDX-License-Identifier: GPL-2.0
/*
 * Description: fail-nth for object creation, in the spirit of iommufd's
 * fail_nth test. Debian's kernels have no fault injection, so the driver's
 * test-only knob /sys/module/nccom/parameters/fail_nth is used: it fails
 * the Nth object allocation from now. For N = 1, 2, ... a body that creates
 * one object of every kind (registration, dma-buf export + import, queue,
 * semaphore + export + import, communicator registration) is replayed until it runs to the end without
 * hitting the injected failure. Each injected failure must surface as
 * -ENOMEM from exactly one ioctl, leave nothing behind after close(), and
 * leave the kernel healthy (the dmesg splat check of check-kmod).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nccom_failnth.h"
#include "nccom_utils.h"

/*
 * Runs the body; returns 0 if every step succeeded, else the number of the
 * failing step, with its errno in *err.
 */
static int body(int fd, void *buf, size_t len, int *err)
{
	struct nccom_queue_create qc;
	uint32_t h, hi, s, si, hc;
	int dbfd = -1, sfd = -1, step = 0;

	*err = 0;
	step++;
	if (_test_cmd_mem_register(fd, NCCOM_MEM_READ | NCCOM_MEM_WRITE, buf, len, &h))
		goto fail;
	step++;
	if (_test_cmd_mem_export(fd, h, &dbfd))
		goto fail;
	step++;
	if (_test_cmd_mem_import(fd, NCCOM_MEM_READ, dbfd, 0, 0, &hi, NULL))
		goto fail;
	step++;
	if (_test_cmd_queue_create(fd, 0, 8, &qc))
		goto fail;
	step++;
	if (_test_cmd_sem_create(fd, 0, &s))
		goto fail;
	step++;
	if (_test_cmd_sem_export(fd, s, &sfd))
		goto fail;
	step++;
	if (_test_cmd_sem_import(fd, sfd, &si))
		goto fail;
	step++;
	/* The state block: the first 384 bytes of the (written) buffer. */
	if (_test_cmd_comm_register(fd, 0x1234, 0, 1, buf, sizeof(struct nccom_comm_state),
				    &hc))
		goto fail;
	close(dbfd);
	close(sfd);
	return 0;
fail:
	*err = errno;
	if (dbfd >= 0)
		close(dbfd);
	if (sfd >= 0)
		close(sfd);
	return step;
}

FIXTURE(failnth) {
	int unused;
};

FIXTURE_SETUP(failnth)
{
}

FIXTURE_TEARDOWN(failnth)
{
	knob_write(0);
}

TEST_F_TIMEOUT(failnth, object_creation, 120)
{
	const size_t len = 8 * PAGE_SZ;
	struct nccom_info base, info;
	void *buf = nccom_alloc(len);
	int fd, step, err, injected = 0;
	unsigned int n;

	if (access(KNOB, W_OK))
		SKIP(return, "%s not present or not writable: driver without the test knob", KNOB);
	ASSERT_NE(NULL, buf);
	memset(buf, 1, len);
	fd = nccom_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, _test_cmd_get_info(fd, &base));
	close(fd);
	for (n = 1; n < 64; n++) {
		fd = nccom_open();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, knob_write(n));
		step = body(fd, buf, len, &err);
		close(fd);
		if (step) {
			injected++;
			EXPECT_EQ(ENOMEM, err) TH_LOG("n=%u: step %d failed with %s", n, step,
						      strerror(err));
			EXPECT_EQ(0, knob_read()) TH_LOG("n=%u: failure without injection", n);
		}
		EXPECT_EQ(0, nccom_wait_counters(base.out_objects, base.out_pinned_pages,
						 &info))
			TH_LOG("n=%u (step %d): %llu objects, %llu pinned pages left", n, step,
			       (unsigned long long)info.out_objects,
			       (unsigned long long)info.out_pinned_pages);
		if (!step)
			break;
	}
	knob_write(0);
	printf("# failnth: %d injection points replayed, body complete at n=%u\n", injected, n);
	EXPECT_GT(64, n) TH_LOG("the body never completed");
	/* Every object kind allocates at least once. */
	EXPECT_LE(4, injected);
	nccom_free(buf, len);
}

TEST_HARNESS_MAIN
