// SPDX-License-Identifier: MIT
/*
 * Description: hostile connections at a listening rank while a real job
 * runs over net_socket (one host, no root: CCOM_TRANSPORT=net, lazy
 * connect, 2 ranks, CCOM_NSOCKS=2, so rank 0 accepts rank 1's 3 sockets
 * in the first operation).
 *
 *   --hellos (default): before rank 1 connects, rank 0's data port gets
 *     about 60 connections, kept open: random bytes, truncated hellos
 *     (silent or closed), hellos with rank 1's magic, comm hash, rank and
 *     every socket index but a wrong MAC (forged: the magic and comm hash
 *     are no secret), hellos made with the job's key but another setup's
 *     nonce (a replay from an earlier setup), out-of-range ranks and socket
 *     indices, another wire version, and a valid hello followed by 64 KiB
 *     of junk on a socket index that does not exist.  After the first
 *     AllReduce, rank 1's real hello of socket 0 is replayed.  Without the
 *     hello MAC the forged hellos take rank 1's slots and the AllReduce
 *     times out; with it, every AllReduce (checked) succeeds.
 *   --flood: rank 0's descriptors are limited (RLIMIT_NOFILE = open + 104:
 *     the bootstrap's 64 pending and 40) and a separate process opens 200
 *     silent connections to its data port and 200 to its bootstrap port,
 *     kept open; rank 0 then runs a
 *     bootstrap barrier, AllReduces and another barrier.  Without the cap
 *     and the EMFILE handling, accept's EMFILE fails the rank ("ran out of
 *     file descriptors"); with them, the oldest pending connections give
 *     way and the job completes.
 *
 * Each mode must end with every AllReduce correct and both ranks exiting 0.
 * Without an argument both modes run.
 */
#include <pthread.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "transport/net_socket_private.h"
#include "util/err.h"
#include "util/misc.h"
#include "net_util.h"
#include "test_util.h"

#define COUNT 4096
#define FLOOD 200

enum mode { M_HELLOS, M_FLOOD };
static enum mode mode = M_HELLOS;

/* What rank 1 passes rank 0 for the attack: its real hellos, and one under a stale nonce. */
struct hellos {
	struct net_hello valid[CCOM_NET_MAX_SOCKS + 1];
	struct net_hello stale[CCOM_NET_MAX_SOCKS + 1];
	int nsocks;
};

static struct net_conn *conn_to(ccomComm_t comm, int peer)
{
	if (!comm->coll || !comm->coll->conns || !comm->coll->conns[peer] ||
	    comm->coll->conns[peer]->ops != &ccom_transport_net_socket)
		return NULL;
	return to_net(comm->coll->conns[peer]);
}

static int connect_to(const union ccom_sockaddr *a)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, &a->sa, ccom_addr_len(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static unsigned int rnd_state = 12345;

static unsigned int rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Open one connection to @a, send @len bytes of @buf (the fd is kept open, or closed: @close_it). */
static int attack_one(const union ccom_sockaddr *a, const void *buf, size_t len, bool close_it,
		      int *fds, int *nfds)
{
	int fd = connect_to(a);

	if (fd < 0)
		return -1;
	if (len && send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	if (close_it)
		close(fd);
	else
		fds[(*nfds)++] = fd;
	return 0;
}

/* The hostile hellos of --hellos at rank 0's data port @a; 0 or the count that failed to go out. */
static int attack_hellos(const union ccom_sockaddr *a, ccomComm_t comm, const struct hellos *hs,
			 int *fds, int *nfds)
{
	static char junk[64 << 10];
	struct net_hello h;
	unsigned char raw[sizeof(h)];
	int i, s, bad = 0;

	for (i = 0; i < 8; i++) {		/* random bytes */
		for (s = 0; s < (int)sizeof(raw); s++)
			raw[s] = (unsigned char)rnd();
		bad += attack_one(a, raw, sizeof(raw), false, fds, nfds) != 0;
	}
	memset(&h, 0, sizeof(h));
	h.magic = comm->magic;
	h.comm_hash = comm->comm_hash;
	h.rank = 1;
	h.to = 0;
	h.version = NET_WIRE_VERSION;
	for (i = 0; i < 4; i++)			/* truncated: silent, then closed */
		bad += attack_one(a, &h, 20, i >= 2, fds, nfds) != 0;
	for (s = 0; s <= hs->nsocks; s++) {	/* forged: every field right but the MAC */
		h.sock = s;
		for (i = 0; i < (int)sizeof(h.mac); i++)
			h.mac[i] = (unsigned char)rnd();
		bad += attack_one(a, &h, sizeof(h), false, fds, nfds) != 0;
		/* a replay from another setup: the job's key, another nonce */
		bad += attack_one(a, &hs->stale[s], sizeof(h), false, fds, nfds) != 0;
	}
	h.sock = 0;
	{
		static const int32_t ranks[] = { -1, -5, INT32_MAX, 0, 2 };
		static const int32_t socks[] = { -1, INT32_MAX, CCOM_NET_MAX_SOCKS + 1, 3 };

		for (i = 0; i < (int)CCOM_ARRAY_SIZE(ranks); i++) {
			h.rank = ranks[i];
			bad += attack_one(a, &h, sizeof(h), false, fds, nfds) != 0;
		}
		h.rank = 1;
		for (i = 0; i < (int)CCOM_ARRAY_SIZE(socks); i++) {
			h.sock = socks[i];
			bad += attack_one(a, &h, sizeof(h), false, fds, nfds) != 0;
		}
	}
	h.sock = 0;
	h.to = 7;				/* written for another rank */
	bad += attack_one(a, &h, sizeof(h), false, fds, nfds) != 0;
	h.to = 0;
	h.version = 2;				/* another wire version */
	bad += attack_one(a, &h, sizeof(h), false, fds, nfds) != 0;
	/* the wire-2 hello (24 bytes: magic, comm hash, rank, socket), then silence */
	bad += attack_one(a, &h, 24, false, fds, nfds) != 0;
	/* a socket index rank 1 does not have, then 64 KiB of junk */
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)rnd();
	memcpy(junk, &hs->stale[0], sizeof(h));
	((struct net_hello *)junk)->sock = hs->nsocks + 1;
	{
		int fd = connect_to(a);

		if (fd >= 0) {
			/* best effort: the receiver closes it after the hello */
			if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				bad += errno != EAGAIN && errno != EPIPE && errno != ECONNRESET;
			fds[(*nfds)++] = fd;
		} else {
			bad++;
		}
	}
	return bad;
}

/*
 * One checked AllReduce.  @go >= 0 (rank 0's first): once the op runs (it
 * accepts connections on its data port meanwhile), tell rank 1 to connect.
 */
static int check_allreduce(ccomComm_t comm, int rank, int iter, int go)
{
	static float buf[COUNT];
	int i;

	for (i = 0; i < COUNT; i++)
		buf[i] = (float)(rank + 1) * (float)(i % 97 + iter);
	T_CCOM(ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	if (go >= 0) {
		usleep(500000);
		T_CHECK(write(go, &i, sizeof(i)) == (ssize_t)sizeof(i), "pipe");
	}
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < COUNT; i++)
		T_CHECK(buf[i] == 3.0f * (float)(i % 97 + iter),
			"rank %d: AllReduce %d: element %d is %g, want %g", rank, iter, i,
			(double)buf[i], 3.0 * (double)(i % 97 + iter));
	return T_PASS;
}

/* --flood: a separate process (no libccom in it) opens @n silent connections to each address. */
static pid_t flooder(int addr_fd, int ready_fd)
{
	pid_t pid = fork();
	union ccom_sockaddr a[2];
	struct rlimit rl = { 4096, 4096 };
	int i, k, n = 0;

	if (pid)
		return pid;
	alarm(120);
	setrlimit(RLIMIT_NOFILE, &rl);
	if (read(addr_fd, a, sizeof(a)) != (ssize_t)sizeof(a))
		_exit(2);
	for (k = 0; k < 2; k++)
		for (i = 0; i < FLOOD; i++)
			n += connect_to(&a[k]) >= 0;
	fprintf(stderr, "flooder: %d of %d connections open\n", n, 2 * FLOOD);
	if (write(ready_fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		_exit(2);
	pause();	/* holds them until killed */
	_exit(0);
}

static int rank_main(int rank, int pipes[2], int go[2], int hpipe[2], int addr[2], int ready[2])
{
	static int fds[256];
	struct hellos hs;
	ccomUniqueId id;
	ccomComm_t comm;
	struct net_conn *c;
	int nfds = 0, s, i, bad, n;

	if (rank == 0) {
		T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
		T_CHECK(write(pipes[1], &id, sizeof(id)) == (ssize_t)sizeof(id), "pipe");
	} else {
		T_CHECK(read(pipes[0], &id, sizeof(id)) == (ssize_t)sizeof(id), "no unique id");
	}
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	c = conn_to(comm, 1 - rank);
	T_CHECK(c, "rank %d: the conn to its peer is not net_socket", rank);
	if (rank == 1) {
		/* Its real hellos, and the same under another setup's nonce. */
		uint8_t keep[NET_NONCE_BYTES];

		memset(&hs, 0, sizeof(hs));
		hs.nsocks = c->nsocks;
		for (s = 0; s <= c->nsocks; s++)
			net_hello_fill(c, s, &hs.valid[s]);
		memcpy(keep, c->peer_nonce, sizeof(keep));
		c->peer_nonce[0] ^= 0x5a;
		for (s = 0; s <= c->nsocks; s++)
			net_hello_fill(c, s, &hs.stale[s]);
		memcpy(c->peer_nonce, keep, sizeof(keep));
		T_CHECK(write(hpipe[1], &hs, sizeof(hs)) == (ssize_t)sizeof(hs), "pipe");
		/* Connect (the first op) only once rank 0's port holds the attack. */
		T_CHECK(read(go[0], &n, sizeof(n)) == (ssize_t)sizeof(n), "rank 1: no go");
		if (mode == M_FLOOD)
			T_CHECK(ccom_bootstrap_barrier(comm->bootstrap) == 0, "rank 1: barrier: %s",
				ccom_last_error());
		for (i = 0; i < 3; i++)
			if (check_allreduce(comm, rank, i, -1))
				return T_FAIL;
		if (mode == M_FLOOD)
			T_CHECK(ccom_bootstrap_barrier(comm->bootstrap) == 0, "rank 1: barrier: %s",
				ccom_last_error());
		T_CCOM(ccomCommDestroy(comm), ccomSuccess);
		return T_PASS;
	}
	T_CHECK(read(hpipe[0], &hs, sizeof(hs)) == (ssize_t)sizeof(hs), "rank 0: no hellos");
	{
		union ccom_sockaddr a[2];
		socklen_t alen = sizeof(a[0]);

		memset(a, 0, sizeof(a));
		T_CHECK(c->group->lfd >= 0 && !getsockname(c->group->lfd, &a[0].sa, &alen),
			"rank 0: no data listener");
		{
			size_t blen = 0;
			const void *b = ccom_bootstrap_listen_addr(comm->bootstrap, &blen);

			T_CHECK(b && blen <= sizeof(a[1]), "rank 0: no bootstrap address");
			memcpy(&a[1], b, blen);
		}
		if (mode == M_HELLOS) {
			bad = attack_hellos(&a[0], comm, &hs, fds, &nfds);
			printf("rank 0: %d hostile connections open at its data port (%d could not be made)\n",
			       nfds, bad);
			T_CHECK(nfds >= 25, "rank 0: only %d hostile connections", nfds);
		} else {
			struct rlimit rl;

			T_CHECK(write(addr[1], a, sizeof(a)) == (ssize_t)sizeof(a), "pipe");
			T_CHECK(read(ready[0], &n, sizeof(n)) == (ssize_t)sizeof(n), "no flooder");
			printf("rank 0: the flooder holds %d connections to its ports\n", n);
			T_CHECK(n > FLOOD, "rank 0: the flooder opened only %d connections", n);
			/* the bootstrap's pending cap, and 40 for the data port's */
			rl.rlim_cur = rl.rlim_max = (rlim_t)t_count_fds() + 64 + 40;
			T_CHECK(!setrlimit(RLIMIT_NOFILE, &rl), "setrlimit: %s", strerror(errno));
			printf("rank 0: RLIMIT_NOFILE %llu\n", (unsigned long long)rl.rlim_cur);
		}
	}
	fflush(stdout);
	if (mode == M_FLOOD) {
		T_CHECK(write(go[1], &n, sizeof(n)) == (ssize_t)sizeof(n), "pipe");
		T_CHECK(ccom_bootstrap_barrier(comm->bootstrap) == 0, "rank 0: barrier under a flood: %s",
			ccom_last_error());
	}
	/* --hellos: rank 1 connects once this op has accepted the hostile connections. */
	if (check_allreduce(comm, rank, 0, mode == M_HELLOS ? go[1] : -1))
		return T_FAIL;
	if (mode == M_HELLOS) {
		/* A replay of rank 1's real hello, its socket filed already. */
		union ccom_sockaddr a;
		socklen_t alen = sizeof(a);

		getsockname(c->group->lfd, &a.sa, &alen);
		T_CHECK(!attack_one(&a, &hs.valid[0], sizeof(hs.valid[0]), false, fds, &nfds),
			"rank 0: cannot replay");
	}
	for (i = 1; i < 3; i++)
		if (check_allreduce(comm, rank, i, -1))
			return T_FAIL;
	if (mode == M_FLOOD)
		T_CHECK(ccom_bootstrap_barrier(comm->bootstrap) == 0, "rank 0: barrier under a flood: %s",
			ccom_last_error());
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return T_PASS;
}

static int run_mode(enum mode m)
{
	int pipes[2], go[2], hpipe[2], addr[2], ready[2], status, r, bad = 0;
	pid_t pids[2], fl = -1;

	mode = m;
	if (pipe(pipes) || pipe(go) || pipe(hpipe) || pipe(addr) || pipe(ready))
		return T_FAIL;
	fflush(NULL);
	if (mode == M_FLOOD)
		fl = flooder(addr[0], ready[1]);
	for (r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm(150);
			_exit(rank_main(r, pipes, go, hpipe, addr, ready));
		}
	}
	for (r = 0; r < 2; r++) {
		if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			bad = 1;
		}
	}
	if (fl > 0) {
		kill(fl, SIGKILL);
		waitpid(fl, &status, 0);
	}
	close(pipes[0]);
	close(pipes[1]);
	close(go[0]);
	close(go[1]);
	close(hpipe[0]);
	close(hpipe[1]);
	close(addr[0]);
	close(addr[1]);
	close(ready[0]);
	close(ready[1]);
	printf("%s: a job over net_socket completes while its listening rank gets %s\n",
	       bad ? "FAIL" : "PASS",
	       mode == M_FLOOD ? "a connection flood with few descriptors" : "hostile hellos");
	return bad ? T_FAIL : T_PASS;
}

/* usage: net_hello_fuzz [--hellos | --flood]; no argument runs both. */
int main(int argc, char **argv)
{
	int bad = 0;

	setenv("CCOM_TRANSPORT", "net", 1);
	setenv("CCOM_NET", "socket", 1);
	setenv("CCOM_ALGO", "ring", 1);
	setenv("CCOM_NET_CONNECT", "lazy", 1);
	setenv("CCOM_NSOCKS", "2", 1);
	setenv("CCOM_OP_TIMEOUT", "30", 1);
	if (argc > 1 && !strcmp(argv[1], "--flood"))
		return run_mode(M_FLOOD);
	if (argc > 1 && !strcmp(argv[1], "--hellos"))
		return run_mode(M_HELLOS);
	if (argc > 1) {
		fprintf(stderr, "usage: %s [--hellos | --flood]\n", argv[0]);
		return T_FAIL;
	}
	bad |= run_mode(M_HELLOS);
	bad |= run_mode(M_FLOOD);
	return bad ? T_FAIL : T_PASS;
}
