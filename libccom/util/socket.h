/* SPDX-License-Identifier: MIT */
/*
 * socket.h - TCP helpers of the bootstrap: address parsing and formatting,
 * interface selection (CCOM_SOCKET_IFNAME / CCOM_SOCKET_FAMILY), and
 * nonblocking listen/connect/accept/send/recv whose every wait is bounded by
 * an absolute deadline (CLOCK_MONOTONIC microseconds) and polls an abort
 * flag at least every CCOM_SOCK_POLL_MS.
 *
 * All return 0 or -errno: -ETIMEDOUT (deadline), -ECANCELED (abort),
 * -ECONNRESET (peer closed), -ECONNREFUSED, ...  They do not record a
 * last-error sentence: callers do, with the context they know.
 */
#ifndef CCOM_UTIL_SOCKET_H
#define CCOM_UTIL_SOCKET_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define CCOM_SOCK_POLL_MS 50

union ccom_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/*
 * Parse "<ipv4>:<port>", "[<ipv6>]:<port>" or "<host>:<port>" (resolved with
 * getaddrinfo).  Returns -EINVAL for a malformed string, -EHOSTUNREACH when
 * the host name does not resolve; @why gets a short reason.
 */
int ccom_addr_parse(const char *str, union ccom_sockaddr *out, char *why, size_t why_len);
/* "1.2.3.4:5" or "[::1]:5" into @buf. */
const char *ccom_addr_str(const union ccom_sockaddr *a, char *buf, size_t len);
socklen_t ccom_addr_len(const union ccom_sockaddr *a);

/*
 * Pick the local interface address for bootstrap sockets following
 * CCOM_SOCKET_IFNAME and CCOM_SOCKET_FAMILY.  Without CCOM_SOCKET_IFNAME,
 * interfaces named docker* and lo are skipped unless nothing else is up.
 * Returns 0, -EINVAL (bad CCOM_SOCKET_FAMILY) or -ENETDOWN (no match);
 * @why gets the sentence to report.
 */
int ccom_iface_select(union ccom_sockaddr *addr, char *ifname, size_t ifname_len, char *why,
		      size_t why_len);

/*
 * ccom_iface_select() for a socket that peers reach the way this host
 * reaches @dest (the bootstrap root): with neither CCOM_SOCKET_IFNAME nor
 * CCOM_SOCKET_FAMILY set and @dest not loopback, the address of the
 * interface the kernel routes @dest through, when that interface is not
 * lo or docker*; otherwise exactly ccom_iface_select().  On a host whose
 * first interface is not the one that reaches the other hosts (a
 * management network, a container bridge) the first pick would be an
 * address no peer can reach.
 */
int ccom_iface_select_toward(const union ccom_sockaddr *dest, union ccom_sockaddr *addr,
			     char *ifname, size_t ifname_len, char *why, size_t why_len);

/*
 * Does CCOM_SOCKET_IFNAME allow interface @name (the rule of
 * ccom_iface_select(): comma-separated prefixes, ^ excludes, = exact
 * names; unset: every name but docker* and lo)?
 */
bool ccom_iface_allowed(const char *name);
/* Is @a in the subnet @net/@prefix (same family; false for a bad prefix)? */
bool ccom_addr_in_subnet(const union ccom_sockaddr *a, const union ccom_sockaddr *net,
			 int prefix);

/* Listen on @addr (port 0 = any); on return @addr holds the bound port. */
int ccom_sock_listen(union ccom_sockaddr *addr, int backlog, int *fd);
/* Connect, retrying refused/unreachable attempts with backoff until @deadline. */
int ccom_sock_connect(const union ccom_sockaddr *addr, int64_t deadline, const atomic_int *abort,
		      int *fd);
/*
 * Open a nonblocking TCP socket (TCP_NODELAY) bound to @src (its port
 * ignored; NULL: the kernel's choice) and start its connect to @addr:
 * *@done when it finished at once, else the caller waits for POLLOUT and
 * reads SO_ERROR.  0 with *@fd set, or -errno (nothing left open).
 */
int ccom_sock_start_connect(const union ccom_sockaddr *addr, const union ccom_sockaddr *src,
			    int *fd, bool *done);
/* ccom_sock_connect() from source address @src (its port ignored; NULL: the kernel's choice). */
int ccom_sock_connect_from(const union ccom_sockaddr *addr, const union ccom_sockaddr *src,
			   int64_t deadline, const atomic_int *abort, int *fd);
/* One connection attempt: -ECONNREFUSED etc. are returned, not retried. */
int ccom_sock_connect_once(const union ccom_sockaddr *addr, int64_t deadline,
			   const atomic_int *abort, int *fd);
/* Accept one connection (nonblocking fd returned). */
int ccom_sock_accept(int lfd, int64_t deadline, const atomic_int *abort, int *fd,
		     union ccom_sockaddr *from);
int ccom_sock_send_all(int fd, const void *buf, size_t len, int64_t deadline,
		       const atomic_int *abort);
int ccom_sock_recv_all(int fd, void *buf, size_t len, int64_t deadline, const atomic_int *abort);
/* Send @slen bytes on @sfd while receiving @rlen bytes on @rfd (no deadlock on large buffers). */
int ccom_sock_sendrecv(int sfd, const void *sbuf, size_t slen, int rfd, void *rbuf, size_t rlen,
		       int64_t deadline, const atomic_int *abort);
/* Make @fd nonblocking with TCP_NODELAY and close-on-exec. */
int ccom_sock_setup(int fd);

#endif
