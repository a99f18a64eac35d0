// SPDX-License-Identifier: MIT
/*
 * socket.c - bounded, abortable TCP helpers and interface selection for the
 * bootstrap.  Every socket is nonblocking; waits are poll() calls of at most
 * CCOM_SOCK_POLL_MS so that an abort is seen promptly.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/err.h"
#include "util/misc.h"
#include "util/numa.h"
#include "util/params.h"
#include "util/socket.h"

socklen_t ccom_addr_len(const union ccom_sockaddr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->sin6) : sizeof(a->sin);
}

const char *ccom_addr_str(const union ccom_sockaddr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->sin.sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->sin.sin_port));
	} else if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->sin6.sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->sin6.sin6_port));
	} else {
		snprintf(buf, len, "<no address>");
	}
	return buf;
}

static int parse_port(const char *s, unsigned short *port)
{
	char *end;
	long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*port = (unsigned short)v;
	return 0;
}

int ccom_addr_parse(const char *str, union ccom_sockaddr *out, char *why, size_t why_len)
{
	char host[256];
	const char *colon;
	unsigned short port;
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!str || strlen(str) >= sizeof(host)) {
		snprintf(why, why_len, "empty or too long");
		return -EINVAL;
	}
	if (str[0] == '[') {
		const char *close = strchr(str, ']');

		if (!close || close[1] != ':' || close == str + 1) {
			snprintf(why, why_len, "an IPv6 address needs the form [addr]:port");
			return -EINVAL;
		}
		memcpy(host, str + 1, close - str - 1);
		host[close - str - 1] = '\0';
		if (parse_port(close + 2, &port)) {
			snprintf(why, why_len, "bad port \"%s\"", close + 2);
			return -EINVAL;
		}
		if (inet_pton(AF_INET6, host, &out->sin6.sin6_addr) != 1) {
			snprintf(why, why_len, "\"%s\" is not an IPv6 address", host);
			return -EINVAL;
		}
		out->sin6.sin6_family = AF_INET6;
		out->sin6.sin6_port = htons(port);
		return 0;
	}
	colon = strrchr(str, ':');
	if (!colon || colon == str || strchr(str, ':') != colon) {
		snprintf(why, why_len, colon ? "IPv6 addresses need brackets" : "no port");
		return -EINVAL;
	}
	memcpy(host, str, colon - str);
	host[colon - str] = '\0';
	if (parse_port(colon + 1, &port)) {
		snprintf(why, why_len, "bad port \"%s\"", colon + 1);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &out->sin.sin_addr) == 1) {
		out->sin.sin_family = AF_INET;
		out->sin.sin_port = htons(port);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc || !res) {
		snprintf(why, why_len, "cannot resolve host \"%s\": %s", host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen < sizeof(*out) ? res->ai_addrlen : sizeof(*out));
	if (out->sa.sa_family == AF_INET)
		out->sin.sin_port = htons(port);
	else
		out->sin6.sin6_port = htons(port);
	freeaddrinfo(res);
	return 0;
}

/* Does @name match the CCOM_SOCKET_IFNAME @spec (already stripped of ^/=)? */
static int ifname_matches(const char *spec, int exact, const char *name)
{
	char buf[256], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (exact ? !strcmp(name, tok) : !strncmp(name, tok, strlen(tok)))
			return 1;
	}
	return 0;
}

/* The CCOM_SOCKET_IFNAME rule of iface_pick(), for one interface (@spec may be NULL). */
static int ifname_allowed(const char *spec, const char *name)
{
	int exclude = 0, exact = 0;

	if (!spec)
		return strncmp(name, "docker", 6) && strncmp(name, "lo", 2);
	if (spec[0] == '^') {
		exclude = 1;
		spec++;
	}
	if (spec[0] == '=') {
		exact = 1;
		spec++;
	}
	return ifname_matches(spec, exact, name) != exclude;
}

bool ccom_iface_allowed(const char *name)
{
	return ifname_allowed(ccom_param_str("CCOM_SOCKET_IFNAME"), name);
}

bool ccom_addr_in_subnet(const union ccom_sockaddr *a, const union ccom_sockaddr *net,
			 int prefix)
{
	const uint8_t *x, *y;
	int len, i;

	if (a->sa.sa_family != net->sa.sa_family || prefix < 0)
		return false;
	if (a->sa.sa_family == AF_INET) {
		x = (const uint8_t *)&a->sin.sin_addr;
		y = (const uint8_t *)&net->sin.sin_addr;
		len = 32;
	} else if (a->sa.sa_family == AF_INET6) {
		x = a->sin6.sin6_addr.s6_addr;
		y = net->sin6.sin6_addr.s6_addr;
		len = 128;
	} else {
		return false;
	}
	if (prefix > len)
		return false;
	for (i = 0; i < prefix / 8; i++)
		if (x[i] != y[i])
			return false;
	return !(prefix % 8) || !((x[i] ^ y[i]) & (uint8_t)(0xff00 >> (prefix % 8)));
}

static int parse_family(int *family)
{
	const char *f = ccom_param_str("CCOM_SOCKET_FAMILY");

	*family = AF_UNSPEC;
	if (!f)
		return 0;
	if (!strcasecmp(f, "AF_INET") || !strcmp(f, "4") || !strcasecmp(f, "ipv4"))
		*family = AF_INET;
	else if (!strcasecmp(f, "AF_INET6") || !strcmp(f, "6") || !strcasecmp(f, "ipv6"))
		*family = AF_INET6;
	else
		return -EINVAL;
	return 0;
}

static int iface_usable(const struct ifaddrs *ifa, int family)
{
	int f;

	if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
		return 0;
	f = ifa->ifa_addr->sa_family;
	if (f != AF_INET && f != AF_INET6)
		return 0;
	if (family != AF_UNSPEC && f != family)
		return 0;
	if (f == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ifa->ifa_addr;

		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
			return 0;
	}
	return 1;
}

/*
 * One pass over the interfaces: @pass 0 takes IPv4 only when the family is
 * unspecified (IPv4 preferred), pass 1 any family.  Of the interfaces that
 * match, the first on the NUMA node of this thread's CPUs (a rank the
 * launcher bound), else the first.
 */
static int iface_pick(struct ifaddrs *list, const char *spec, int family, int allow_default_excl,
		      union ccom_sockaddr *addr, char *ifname, size_t ifname_len)
{
	int pass, node = ccom_numa_self_node();
	const struct ifaddrs *ifa;

	for (pass = 0; pass < 2; pass++) {
		const struct ifaddrs *pick = NULL;

		for (ifa = list; ifa; ifa = ifa->ifa_next) {
			if (!iface_usable(ifa, family))
				continue;
			if (pass == 0 && family == AF_UNSPEC && ifa->ifa_addr->sa_family != AF_INET)
				continue;
			if ((spec || !allow_default_excl) && !ifname_allowed(spec, ifa->ifa_name))
				continue;
			/* The first match, or a later one on this rank's NUMA node (util/numa.h). */
			if (!pick)
				pick = ifa;
			if (node >= 0 && ccom_numa_netdev_node(ifa->ifa_name) == node &&
			    ccom_numa_netdev_node(pick->ifa_name) != node)
				pick = ifa;
		}
		if (!pick)
			continue;
		memset(addr, 0, sizeof(*addr));
		memcpy(addr, pick->ifa_addr, pick->ifa_addr->sa_family == AF_INET ?
			     sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		snprintf(ifname, ifname_len, "%s", pick->ifa_name);
		return 0;
	}
	return -ENETDOWN;
}

int ccom_iface_select(union ccom_sockaddr *addr, char *ifname, size_t ifname_len, char *why,
		      size_t why_len)
{
	const char *spec = ccom_param_str("CCOM_SOCKET_IFNAME");
	struct ifaddrs *list = NULL;
	const struct ifaddrs *ifa;
	int family, rc;
	size_t o = 0;

	if (parse_family(&family)) {
		snprintf(why, why_len, "CCOM_SOCKET_FAMILY=%s is not AF_INET or AF_INET6",
			 ccom_param_str("CCOM_SOCKET_FAMILY"));
		return -EINVAL;
	}
	if (getifaddrs(&list)) {
		rc = -errno;
		snprintf(why, why_len, "getifaddrs failed: %s", ccom_errno_str(-rc));
		return rc;
	}
	rc = iface_pick(list, spec, family, 0, addr, ifname, ifname_len);
	if (rc && !spec)
		rc = iface_pick(list, NULL, family, 1, addr, ifname, ifname_len);
	if (rc) {
		o = snprintf(why, why_len,
			     "no usable interface matches CCOM_SOCKET_IFNAME=%s CCOM_SOCKET_FAMILY=%s; interfaces up:",
			     spec ? spec : "(unset)",
			     family == AF_INET ? "AF_INET" : family == AF_INET6 ? "AF_INET6" : "(any)");
		for (ifa = list; ifa && o < why_len; ifa = ifa->ifa_next) {
			if (iface_usable(ifa, AF_UNSPEC))
				o += snprintf(why + o, why_len - o, " %s", ifa->ifa_name);
		}
	}
	freeifaddrs(list);
	return rc;
}

/* Is @a a loopback address (127/8, ::1)? */
static bool addr_is_loopback(const union ccom_sockaddr *a)
{
	if (a->sa.sa_family == AF_INET)
		return (ntohl(a->sin.sin_addr.s_addr) >> 24) == 127;
	return a->sa.sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->sin6.sin6_addr);
}

/*
 * The source address the kernel routes from towards @dest: connect() of a
 * UDP socket sends nothing and fills getsockname().  0 or -errno.
 */
static int route_source(const union ccom_sockaddr *dest, union ccom_sockaddr *src)
{
	socklen_t len = sizeof(*src);
	union ccom_sockaddr d = *dest;
	int fd, rc = 0;

	if (d.sa.sa_family == AF_INET)
		d.sin.sin_port = htons(9);	/* any nonzero port: connect() needs one */
	else
		d.sin6.sin6_port = htons(9);
	fd = socket(d.sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, &d.sa, d.sa.sa_family == AF_INET ? sizeof(d.sin) : sizeof(d.sin6)) ||
	    getsockname(fd, &src->sa, &len))
		rc = -errno;
	close(fd);
	return rc;
}

static bool same_ip(const struct sockaddr *x, const union ccom_sockaddr *y)
{
	if (x->sa_family != y->sa.sa_family)
		return false;
	if (x->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)x)->sin_addr.s_addr ==
		       y->sin.sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)(const void *)x)->sin6_addr,
		       &y->sin6.sin6_addr, sizeof(y->sin6.sin6_addr));
}

int ccom_iface_select_toward(const union ccom_sockaddr *dest, union ccom_sockaddr *addr,
			     char *ifname, size_t ifname_len, char *why, size_t why_len)
{
	struct ifaddrs *list = NULL;
	const struct ifaddrs *ifa;
	union ccom_sockaddr src;
	int found = 0;

	/* The variables are the operator's word; a loopback root is one host's job. */
	if (!dest || ccom_param_str("CCOM_SOCKET_IFNAME") || ccom_param_str("CCOM_SOCKET_FAMILY") ||
	    (dest->sa.sa_family != AF_INET && dest->sa.sa_family != AF_INET6) ||
	    addr_is_loopback(dest) || route_source(dest, &src) || getifaddrs(&list))
		return ccom_iface_select(addr, ifname, ifname_len, why, why_len);
	for (ifa = list; ifa && !found; ifa = ifa->ifa_next) {
		if (!iface_usable(ifa, src.sa.sa_family) || !same_ip(ifa->ifa_addr, &src) ||
		    !ifname_allowed(NULL, ifa->ifa_name))
			continue;
		memset(addr, 0, sizeof(*addr));
		memcpy(addr, ifa->ifa_addr, ifa->ifa_addr->sa_family == AF_INET ?
			     sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		snprintf(ifname, ifname_len, "%s", ifa->ifa_name);
		found = 1;
	}
	freeifaddrs(list);
	return found ? 0 : ccom_iface_select(addr, ifname, ifname_len, why, why_len);
}

int ccom_sock_setup(int fd)
{
	int one = 1;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

int ccom_sock_listen(union ccom_sockaddr *addr, int backlog, int *fd)
{
	socklen_t len = ccom_addr_len(addr);
	int one = 1;
	int s, rc;

	s = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, &addr->sa, len) || listen(s, backlog) ||
	    getsockname(s, &addr->sa, &len)) {
		rc = -errno;
		close(s);
		return rc;
	}
	*fd = s;
	return 0;
}

/* Wait for @events on @fd for one poll slice; -ETIMEDOUT/-ECANCELED when due. */
static int wait_fd(int fd, short events, int64_t deadline, const atomic_int *abort)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int ms, rc;

	if (abort && atomic_load(abort))
		return -ECANCELED;
	left = deadline - ccom_now_us();
	if (left <= 0)
		return -ETIMEDOUT;
	ms = left / 1000 + 1;
	if (ms > CCOM_SOCK_POLL_MS)
		ms = CCOM_SOCK_POLL_MS;
	rc = poll(&p, 1, ms);
	if (rc < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* One attempt from source address @src (NULL: the kernel's choice), port chosen at connect. */
int ccom_sock_start_connect(const union ccom_sockaddr *addr, const union ccom_sockaddr *src,
			    int *fd, bool *done)
{
	int s, rc, one = 1;

	s = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (src) {
		setsockopt(s, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(s, &src->sa, ccom_addr_len(src)))
			goto err_close;
	}
	*done = !connect(s, &addr->sa, ccom_addr_len(addr));
	if (!*done && errno != EINPROGRESS)
		goto err_close;
	*fd = s;
	return 0;
err_close:
	rc = -errno;
	close(s);
	return rc;
}

static int connect_once_from(const union ccom_sockaddr *addr, const union ccom_sockaddr *src,
			     int64_t deadline, const atomic_int *abort, int *fd)
{
	int s, rc, err = 0;
	socklen_t elen = sizeof(err);
	bool done;

	rc = ccom_sock_start_connect(addr, src, &s, &done);
	if (rc)
		return rc;
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLOUT };

		if (poll(&p, 1, 0) > 0)
			break;
		rc = wait_fd(s, POLLOUT, deadline, abort);
		if (rc)
			goto err_close;
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &elen) || err) {
		rc = err ? -err : -errno;
		goto err_close;
	}
	rc = ccom_sock_setup(s);
	if (rc)
		goto err_close;
	*fd = s;
	return 0;
err_close:
	close(s);
	return rc;
}

int ccom_sock_connect_once(const union ccom_sockaddr *addr, int64_t deadline,
			   const atomic_int *abort, int *fd)
{
	return connect_once_from(addr, NULL, deadline, abort, fd);
}

int ccom_sock_connect(const union ccom_sockaddr *addr, int64_t deadline, const atomic_int *abort,
		      int *fd)
{
	return ccom_sock_connect_from(addr, NULL, deadline, abort, fd);
}

int ccom_sock_connect_from(const union ccom_sockaddr *addr, const union ccom_sockaddr *src,
			   int64_t deadline, const atomic_int *abort, int *fd)
{
	int64_t backoff = 1000;
	int rc;

	for (;;) {
		rc = connect_once_from(addr, src, deadline, abort, fd);
		if (rc != -ECONNREFUSED && rc != -EHOSTUNREACH && rc != -ENETUNREACH &&
		    rc != -EAGAIN && rc != -ECONNRESET)
			return rc;
		if (ccom_now_us() + backoff >= deadline)
			return rc == -ECONNREFUSED ? -ECONNREFUSED : -ETIMEDOUT;
		if (ccom_sleep_us(backoff, abort))
			return -ECANCELED;
		if (backoff < 100000)
			backoff *= 2;
	}
}

int ccom_sock_accept(int lfd, int64_t deadline, const atomic_int *abort, int *fd,
		     union ccom_sockaddr *from)
{
	union ccom_sockaddr tmp;
	socklen_t len = sizeof(tmp);
	int s, rc;

	for (;;) {
		s = accept4(lfd, &tmp.sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (s >= 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			return -errno;
		rc = wait_fd(lfd, POLLIN, deadline, abort);
		if (rc)
			return rc;
	}
	ccom_sock_setup(s);
	if (from)
		*from = tmp;
	*fd = s;
	return 0;
}

int ccom_sock_sendrecv(int sfd, const void *sbuf, size_t slen, int rfd, void *rbuf, size_t rlen,
		       int64_t deadline, const atomic_int *abort)
{
	size_t sent = 0, got = 0;

	while (sent < slen || got < rlen) {
		struct pollfd p[2];
		int64_t left;
		int n = 0, ms, progress = 0;

		if (sent < slen) {
			ssize_t w = send(sfd, (const char *)sbuf + sent, slen - sent, MSG_NOSIGNAL);

			if (w > 0) {
				sent += w;
				progress = 1;
			} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				return errno == EPIPE ? -ECONNRESET : -errno;
			}
		}
		if (got < rlen) {
			ssize_t r = recv(rfd, (char *)rbuf + got, rlen - got, 0);

			if (r > 0) {
				got += r;
				progress = 1;
			} else if (r == 0) {
				return -ECONNRESET;
			} else if (errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
		}
		if (progress)
			continue;
		if (abort && atomic_load(abort))
			return -ECANCELED;
		left = deadline - ccom_now_us();
		if (left <= 0)
			return -ETIMEDOUT;
		if (sent < slen)
			p[n++] = (struct pollfd){ .fd = sfd, .events = POLLOUT };
		if (got < rlen)
			p[n++] = (struct pollfd){ .fd = rfd, .events = POLLIN };
		ms = left / 1000 + 1;
		if (ms > CCOM_SOCK_POLL_MS)
			ms = CCOM_SOCK_POLL_MS;
		if (poll(p, n, ms) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

int ccom_sock_send_all(int fd, const void *buf, size_t len, int64_t deadline,
		       const atomic_int *abort)
{
	return ccom_sock_sendrecv(fd, buf, len, -1, NULL, 0, deadline, abort);
}

int ccom_sock_recv_all(int fd, void *buf, size_t len, int64_t deadline, const atomic_int *abort)
{
	return ccom_sock_sendrecv(-1, NULL, 0, fd, buf, len, deadline, abort);
}
