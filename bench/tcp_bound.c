// SPDX-License-Identifier: MIT
/*
 * tcp_bound.c - the ceiling of a 2-rank AllReduce over TCP on this machine:
 * both ends send S bytes and receive S bytes at the same time over one TCP
 * connection (what each direction of a 2-rank ring or pair AllReduce
 * carries), with no reduction and no dependency between the directions.
 * bench/compare.sh --mode tcp --bound runs it between the same two network
 * namespaces, interleaved with Open MPI and ccom, so that its time is the
 * bound of both in the same minute.  Not part of `make check`.
 *
 * Usage: tcp_bound -l PORT | -c ADDR:PORT  [-b bytes] [-w warmup] [-i iters]
 *                  [-p]   (sleep in poll() when stuck instead of busy-polling)
 *                  [-B bytes] (SO_SNDBUF/SO_RCVBUF; default: kernel autotuning)
 *                  [-z]   (send with MSG_ZEROCOPY; prints how many sends the
 *                          kernel reported as copied anyway)
 * Output (the listening side): nccl-tests columns like ccom-perf's
 * (size, count, type, redop, root, time in us, algbw, busbw, #wrong), with
 * busbw = S / time (the 2-rank busbw of an AllReduce of S bytes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end == 'K' || *end == 'k')
		v *= 1024;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024;
	return (size_t)v;
}

/* MSG_ZEROCOPY bookkeeping: sends issued, completions reaped, completions copied anyway. */
static unsigned long zc_sent, zc_done, zc_copied;

static void die(const char *what)
{
	fprintf(stderr, "tcp_bound: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Reap MSG_ZEROCOPY completions from the error queue (nonblocking). */
static void zc_reap(int fd)
{
	char ctrl[128];

	for (;;) {
		struct msghdr m = { .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
		struct cmsghdr *cm;
		struct sock_extended_err *ee;

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		cm = CMSG_FIRSTHDR(&m);
		if (!cm)
			continue;
		ee = (struct sock_extended_err *)CMSG_DATA(cm);
		if (ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
			continue;
		zc_done += ee->ee_data - ee->ee_info + 1;
		if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
			zc_copied += ee->ee_data - ee->ee_info + 1;
	}
}

/* Send @sbuf and receive into @rbuf, @n bytes each, concurrently. */
static void exchange(int fd, const char *sbuf, char *rbuf, size_t n, int sleep_in_poll,
		     int zerocopy)
{
	size_t sent = 0, got = 0;

	while (sent < n || got < n) {
		int moved = 0;

		if (sent < n) {
			ssize_t r = send(fd, sbuf + sent, n - sent, MSG_DONTWAIT | MSG_NOSIGNAL |
					 (zerocopy ? MSG_ZEROCOPY : 0));

			if (zerocopy)
				zc_reap(fd);
			if (r > 0) {
				sent += (size_t)r;
				zc_sent += zerocopy;
				moved = 1;
			} else if (r < 0 && errno == ENOBUFS) {
				moved = 1;	/* too many completions pending: reaped above */
			} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
				die("send");
			}
		}
		if (got < n) {
			ssize_t r = recv(fd, rbuf + got, n - got, MSG_DONTWAIT);

			if (r == 0) {
				errno = ECONNRESET;
				die("recv");
			}
			if (r > 0) {
				got += (size_t)r;
				moved = 1;
			} else if (errno != EAGAIN && errno != EINTR) {
				die("recv");
			}
		}
		if (!moved && sleep_in_poll) {
			struct pollfd p = { .fd = fd, .events = (sent < n ? POLLOUT : 0) |
							    (got < n ? POLLIN : 0) };

			poll(&p, 1, 1000);
		}
	}
}

int main(int argc, char **argv)
{
	const char *listen_port = NULL, *connect_to = NULL;
	size_t bytes = 1 << 20;
	int warm = 5, iters = 50, sleep_in_poll = 0, bufsz = 0, zerocopy = 0, one = 1, fd, i, opt;
	struct sockaddr_in a = { .sin_family = AF_INET };
	char *sbuf, *rbuf;
	double t0;

	while ((opt = getopt(argc, argv, "l:c:b:w:i:pB:z")) != -1) {
		switch (opt) {
		case 'l': listen_port = optarg; break;
		case 'c': connect_to = optarg; break;
		case 'b': bytes = parse_size(optarg); break;
		case 'w': warm = atoi(optarg); break;
		case 'i': iters = atoi(optarg); break;
		case 'p': sleep_in_poll = 1; break;
		case 'B': bufsz = (int)parse_size(optarg); break;
		case 'z': zerocopy = 1; break;
		default:
			fprintf(stderr, "usage: tcp_bound -l PORT | -c ADDR:PORT [-b bytes] [-w warmup] [-i iters] [-p] [-B bufbytes] [-z]\n");
			return 2;
		}
	}
	if (!!listen_port == !!connect_to || !bytes || iters < 1) {
		fprintf(stderr, "tcp_bound: give exactly one of -l PORT and -c ADDR:PORT, a size and iters >= 1\n");
		return 2;
	}
	if (listen_port) {
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		a.sin_port = htons((unsigned short)atoi(listen_port));
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1))
			die("listen");
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept");
		close(lfd);
	} else {
		char host[64];
		const char *colon = strrchr(connect_to, ':');
		double until = now_us() + 10e6;

		if (!colon || (size_t)(colon - connect_to) >= sizeof(host)) {
			fprintf(stderr, "tcp_bound: -c wants ADDR:PORT\n");
			return 2;
		}
		memcpy(host, connect_to, colon - connect_to);
		host[colon - connect_to] = '\0';
		a.sin_port = htons((unsigned short)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
			fprintf(stderr, "tcp_bound: %s is not an IPv4 address\n", host);
			return 2;
		}
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
			close(fd);
			if (now_us() > until)
				die("connect");
			usleep(10000);
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bufsz) {
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	}
	if (zerocopy && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY");
	sbuf = malloc(bytes);
	rbuf = malloc(bytes);
	if (!sbuf || !rbuf)
		die("malloc");
	memset(sbuf, 1, bytes);
	memset(rbuf, 0, bytes);
	for (i = 0; i < warm; i++)
		exchange(fd, sbuf, rbuf, bytes, sleep_in_poll, zerocopy);
	t0 = now_us();
	for (i = 0; i < iters; i++)
		exchange(fd, sbuf, rbuf, bytes, sleep_in_poll, zerocopy);
	t0 = (now_us() - t0) / iters;
	if (zerocopy) {
		usleep(100000);
		zc_reap(fd);
		printf("# MSG_ZEROCOPY: %lu sends, %lu completions, %lu of them copied by the kernel\n",
		       zc_sent, zc_done, zc_copied);
	}
	if (listen_port) {
		printf("# tcp_bound: %zu bytes each way at once over one TCP connection\n", bytes);
		printf("#       size         count      type   redop    root     time   algbw   busbw #wrong\n");
		printf("%12zu %12zu %9s %7s %7d %8.2f %7.3f %7.3f %6d\n", bytes, bytes / 4, "float",
		       "none", -1, t0, bytes / t0 / 1e3, bytes / t0 / 1e3, 0);
	}
	close(fd);
	return 0;
}
