/* SPDX-License-Identifier: MIT */
/*
 * http.h - the one HTTP request ccomctl and ccomd make of a ccomd: a GET
 * with a deadline, on libcurl (ccomd's server side is libmicrohttpd).
 */
#ifndef CCOM_TOOLS_LIB_HTTP_H
#define CCOM_TOOLS_LIB_HTTP_H

#include <stddef.h>

#define HTTP_MAX_BODY (4u << 20)

/**
 * http_get() - GET http://@hostport@path within @timeout_ms
 * @hostport: "host:port", "[v6]:port" or "v6:port" (the last ':' ends the
 *	address); the port is numeric
 * @path: absolute path of the request
 * @timeout_ms: deadline of the whole request (connect, send, receive)
 * @body: on success, a NUL-terminated body that the caller frees
 * @status: HTTP status of the reply, 0 if none could be parsed
 *
 * Return: 0, -EINVAL (bad host:port), -EHOSTUNREACH/-ECONNREFUSED/...
 * (connect), -ETIMEDOUT, -EPROTO (not an HTTP 200 reply) or -EMSGSIZE
 * (body above %HTTP_MAX_BODY).
 */
int http_get(const char *hostport, const char *path, int timeout_ms, char **body, int *status);

#endif
