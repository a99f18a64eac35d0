// SPDX-License-Identifier: MIT
/*
 * http.c - a minimal HTTP/1.0 GET client with an overall deadline, enough
 * to query ccomd's JSON endpoints (Connection: close, body until EOF).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "http.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Split "host:port" / "[v6]:port" into @host and @port. */
static int http_split(const char *hp, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon;
	size_t n;

	if (hp[0] == '[') {
		colon = strstr(hp, "]:");
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - hp - 1);
		if (n >= hlen)
			return -EINVAL;
		memcpy(host, hp + 1, n);
		colon++;
	} else {
		colon = strrchr(hp, ':');
		if (!colon || colon == hp)
			return -EINVAL;
		n = (size_t)(colon - hp);
		if (n >= hlen)
			return -EINVAL;
		memcpy(host, hp, n);
	}
	host[n] = '\0';
	if (!colon[1] || strlen(colon + 1) >= plen)
		return -EINVAL;
	strcpy(port, colon + 1);
	return 0;
}

static int http_wait(int fd, short ev, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = ev };
	long long left = deadline - now_ms();
	int rc;

	if (left <= 0)
		return -ETIMEDOUT;
	rc = poll(&pfd, 1, (int)left);
	if (rc < 0)
		return -errno;
	return rc == 0 ? -ETIMEDOUT : 0;
}

static int http_connect(const char *hostport, long long deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char host[256], port[16];
	socklen_t len = sizeof(int);
	int fd, err, soerr = 0;

	err = http_split(hostport, host, sizeof(host), port, sizeof(port));
	if (err)
		return err;
	if (getaddrinfo(host, port, &hints, &ai))
		return -EHOSTUNREACH;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		err = -errno;
	} else {
		err = http_wait(fd, POLLOUT, deadline);
		if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr)
			err = -soerr;
	}
	if (err) {
		close(fd);
		fd = err;
	}
out:
	freeaddrinfo(ai);
	return fd;
}

static int http_exchange(int fd, const char *req, long long deadline, char **out, size_t *olen)
{
	size_t len = 0, cap = 8192, sent = 0, reqlen = strlen(req);
	char *buf = malloc(cap + 1), *nb;
	ssize_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && sent < reqlen) {
		n = send(fd, req + sent, reqlen - sent, MSG_NOSIGNAL);
		if (n > 0)
			sent += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			err = -errno;
		else
			err = http_wait(fd, POLLOUT, deadline);
	}
	while (!err) {
		if (len == cap) {
			if (cap >= HTTP_MAX_BODY) {
				err = -EMSGSIZE;
				break;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = recv(fd, buf + len, cap - len, 0);
		if (n == 0)
			break;
		if (n > 0)
			len += (size_t)n;
		else if (errno != EAGAIN && errno != EINTR)
			err = -errno;
		else
			err = http_wait(fd, POLLIN, deadline);
	}
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*olen = len;
	return 0;
}

int http_get(const char *hostport, const char *path, int timeout_ms, char **body, int *status)
{
	long long deadline = now_ms() + timeout_ms;
	char req[1024], *resp, *start;
	size_t len;
	int fd, err, code = 0;

	*body = NULL;
	*status = 0;
	if (snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n",
		     path, hostport) >= (int)sizeof(req))
		return -EINVAL;
	fd = http_connect(hostport, deadline);
	if (fd < 0)
		return fd;
	err = http_exchange(fd, req, deadline, &resp, &len);
	close(fd);
	if (err)
		return err;
	if (sscanf(resp, "HTTP/%*d.%*d %d", &code) != 1)
		code = 0;
	*status = code;
	start = strstr(resp, "\r\n\r\n");
	if (code != 200 || !start) {
		free(resp);
		return -EPROTO;
	}
	start += 4;
	memmove(resp, start, len - (size_t)(start - resp) + 1);
	*body = resp;
	return 0;
}
