/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: access to the driver's test-only fault-injection knob
 * (/sys/module/nccom/parameters/fail_nth, kmod/object.c), shared by the
 * fail-nth selftest (nccom_failnth_test.c) and the fuzzer's fail_nth sweep
 * (fuzz/nccom_failnth_all.c). Writing N > 0 makes the Nth allocation or pin
 * from now fail with ENOMEM, 0 disarms it; reading gives what is left of N
 * (0 once the failure was injected or the knob is off).
 *
 * knob_write() returns 0 or -errno; knob_read() returns the knob's value or
 * -errno (-EIO for an empty read).
 */
#ifndef NCCOM_FAILNTH_H
#define NCCOM_FAILNTH_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define KNOB "/sys/module/nccom/parameters/fail_nth"

static inline int knob_write(unsigned int n)
{
	char buf[16];
	int fd = open(KNOB, O_WRONLY | O_CLOEXEC), len, rc;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", n);
	rc = write(fd, buf, len) == len ? 0 : -errno;
	close(fd);
	return rc;
}

static inline long knob_read(void)
{
	char buf[16] = "";
	int fd = open(KNOB, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return r > 0 ? strtol(buf, NULL, 10) : -EIO;
}

#endif /* NCCOM_FAILNTH_H */
