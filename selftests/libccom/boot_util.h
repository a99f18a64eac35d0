/* SPDX-License-Identifier: MIT */
/*
 * boot_util.h - for the bootstrap tests that speak to a root or a rank
 * directly (boot_auth, boot_foreign): a raw TCP connection to a bootstrap
 * address, bypassing libccom's handshake.
 */
#ifndef CCOM_BOOT_UTIL_H
#define CCOM_BOOT_UTIL_H

#include <sys/socket.h>
#include <unistd.h>

#include "util/socket.h"

/* A blocking TCP connection to @a, or -1. */
static inline int t_connect_addr(const union ccom_sockaddr *a)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, &a->sa, ccom_addr_len(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

#endif
