// SPDX-License-Identifier: GPL-2.0
/*
 * Description: leak check run after the selftests. Prints the driver's
 * global counters (live objects, pinned pages, per-device queues) and exits
 * 1 unless they are all back to zero within 5 seconds.
 */
#include <stdio.h>

#include "nccom_utils.h"

int main(void)
{
	struct nccom_dev_info devs[64];
	struct nccom_info info;
	uint32_t i, nq = 0;
	int rc, fd;

	rc = nccom_wait_counters(0, 0, &info);
	if (rc && rc != -ETIMEDOUT) {
		fprintf(stderr, "nccom_counters: cannot read %s: %s\n", NCCOM_DEV,
			strerror(-rc));
		return 1;
	}
	fd = nccom_open();
	if (fd < 0) {
		perror("nccom_counters: open");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.dev_count = 64;
	info.devs_uptr = (uintptr_t)devs;
	info.dev_entry_size = sizeof(devs[0]);
	if (ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		perror("nccom_counters: GET_INFO");
		return 1;
	}
	close(fd);
	for (i = 0; i < info.dev_count && i < 64; i++)
		nq += devs[i].nqueues;
	/* The reading fd itself is closed: everything must be zero. */
	printf("nccom counters: objects=%llu pinned_pages=%llu queues=%u\n",
	       (unsigned long long)info.out_objects,
	       (unsigned long long)info.out_pinned_pages, nq);
	if (info.out_objects || info.out_pinned_pages || nq) {
		printf("nccom counters: NOT back to zero (leak)\n");
		return 1;
	}
	return 0;
}
