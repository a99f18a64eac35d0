/* SPDX-License-Identifier: MIT */
/*
 * err.h - errors inside libccom.  Internals return 0 / -errno; the API
 * boundary turns them into ccomResult_t in one place (ccom_result_from_errno)
 * and records the human sentence with ccom_set_last_error().
 *
 * Conventions for the errno values internals use:
 *   -EINVAL     invalid argument          -> ccomInvalidArgument
 *   -EPERM, -EBADE (usage/skew/duplicate) -> ccomInvalidUsage
 *   -ETIMEDOUT  bounded wait expired      -> ccomTimeout
 *   -ECONNRESET, -EPIPE, -ECANCELED, -ECONNREFUSED, -EBADMSG (peer died /
 *   aborted / unreachable / not a ccom peer) -> ccomRemoteError
 *   -EINPROGRESS                          -> ccomInProgress
 *   -ENODEV, -ENXIO (driver unusable)     -> ccomUnhandledDeviceError
 *   -EPROTO, -EFAULT (internal)           -> ccomInternalError
 *   others                                -> ccomSystemError
 */
#ifndef CCOM_UTIL_ERR_H
#define CCOM_UTIL_ERR_H

#include "ccom.h"

ccomResult_t ccom_result_from_errno(int err);

/*
 * Record the calling thread's last-error sentence (ccomGetLastError) and log
 * it as a WARN with file:line.  Returns nothing; callers return their errno.
 */
void ccom_set_last_error_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define ccom_set_last_error(fmt, ...) \
	ccom_set_last_error_at(__FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* Thread-local last error text ("" if none). */
const char *ccom_last_error(void);
void ccom_clear_last_error(void);
/* Set the calling thread's last error without logging (copying another thread's). */
void ccom_set_last_error_quiet(const char *msg);

/*
 * strerror(@err) (a positive errno), with the fix appended where there is
 * one to give (running out of file descriptors).
 */
const char *ccom_errno_str(int err);

#endif
