// SPDX-License-Identifier: MIT
/*
 * err.c - the one place where internal -errno values become ccomResult_t,
 * the thread-local last-error sentence, and ccomGetErrorString().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/log.h"

#define CCOM_LAST_ERROR_LEN 1024

static __thread char last_error[CCOM_LAST_ERROR_LEN];

ccomResult_t ccom_result_from_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return ccomSuccess;
	case EINVAL:
		return ccomInvalidArgument;
	case EPERM:
	case EBADE:
		return ccomInvalidUsage;
	case ETIMEDOUT:
		return ccomTimeout;
	case ECONNRESET:
	case EPIPE:
	case ECANCELED:
	case ECONNABORTED:
	case ECONNREFUSED:
	case EBADMSG:
		return ccomRemoteError;
	case EINPROGRESS:
		return ccomInProgress;
	case ENODEV:
	case ENXIO:
		return ccomUnhandledDeviceError;
	case EPROTO:
	case EFAULT:
		return ccomInternalError;
	default:
		return ccomSystemError;
	}
}

void ccom_set_last_error_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	ccom_log(CCOM_LOG_WARN, CCOM_SUBSYS_ALL, file, line, "%s", last_error);
}

void ccom_set_last_error_quiet(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
}

const char *ccom_errno_str(int err)
{
	if (err == EMFILE || err == ENFILE)
		return "too many open files (each rank keeps a socket per peer it talks to): raise the open-file limit (ulimit -n) or run fewer ranks per process";
	return strerror(err);
}

const char *ccom_last_error(void)
{
	return last_error;
}

void ccom_clear_last_error(void)
{
	last_error[0] = '\0';
}

const char *ccomGetErrorString(ccomResult_t result)
{
	switch (result) {
	case ccomSuccess:
		return "no error";
	case ccomUnhandledDeviceError:
		return "unhandled device error: the nccom device or driver failed";
	case ccomSystemError:
		return "unhandled system error: a system call failed (network, memory, files)";
	case ccomInternalError:
		return "internal error: a bug or an unexpected state inside libccom";
	case ccomInvalidArgument:
		return "invalid argument";
	case ccomInvalidUsage:
		return "invalid usage: the ranks disagree or the call is not allowed here";
	case ccomRemoteError:
		return "remote error: a peer failed, died or aborted";
	case ccomInProgress:
		return "operation in progress";
	case ccomTimeout:
		return "timeout: a bounded wait expired";
	default:
		return "unknown result code";
	}
}
