/* SPDX-License-Identifier: MIT */
/*
 * http.h - the one HTTP request ccomctl and ccomd make of a ccomd: a GET
 * with a deadline (ccomd's server side is libmicrohttpd).
 */
#ifndef CCOM_TOOLS_HTTP_H
#define CCOM_TOOLS_HTTP_H

#include <stddef.h>

#define HTTP_MAX_BODY (4u << 20)

/*
 * GET http://@hostport@path within @timeout_ms.  On success returns 0 and a
 * NUL-terminated body in *@body that the caller frees.  Returns -EINVAL
 * (bad host:port), -EHOSTUNREACH/-ECONNREFUSED/... (connect), -ETIMEDOUT,
 * -EPROTO (not an HTTP 200 reply; *@status holds the code, 0 if unparsable)
 * or -EMSGSIZE (body above HTTP_MAX_BODY).
 */
int http_get(const char *hostport, const char *path, int timeout_ms, char **body, int *status);

#endif
