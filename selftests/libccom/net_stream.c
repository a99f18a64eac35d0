// SPDX-License-Identifier: MIT
/*
 * Description: the net_socket transport through its vtable, on one host
 * (no root needed): two ranks connect with CCOM_NSOCKS=3 and 4 KiB stripe
 * pieces, exchange a 3 MiB patterned byte stream in both directions in
 * irregular nonblocking pieces, check every byte arrived in order and that
 * every socket carried its share (a third rank stays idle); then rank 2
 * dies: rank 0's receive must fail with -ECONNRESET naming peer rank 2 (not
 * hang), and rank 1, which only sees rank 0 give up, must name rank 2 too
 * (from the failure note rank 0 sends on the control socket).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "transport/net_socket.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/misc.h"

#include "net_util.h"

#define STREAM_BYTES (3u << 20)
#define PIECE_MAX 70001

static unsigned char pattern(int from, size_t i)
{
	return (unsigned char)(i * 131 + from * 7 + (i >> 12));
}

/* Send and receive STREAM_BYTES at once, in odd-sized nonblocking pieces. */
static int pump(struct ccom_transport_conn *c, int rank, int peer)
{
	const struct ccom_transport_ops *ops = c->ops;
	unsigned char *tx = malloc(PIECE_MAX), *rx = malloc(PIECE_MAX);
	size_t sent = 0, rcvd = 0, i, k = 1;
	int64_t deadline = ccom_now_us() + 60000000;
	int rc = 1;

	while ((sent < STREAM_BYTES || rcvd < STREAM_BYTES) && ccom_now_us() < deadline) {
		size_t want = (k++ * 7919) % PIECE_MAX + 1;
		ssize_t n = 0, m = 0;

		if (sent < STREAM_BYTES) {
			want = want < STREAM_BYTES - sent ? want : STREAM_BYTES - sent;
			for (i = 0; i < want; i++)
				tx[i] = pattern(rank, sent + i);
			n = ops->send(c, tx, want);
			if (n < 0)
				goto out;
			sent += n;
		}
		if (rcvd < STREAM_BYTES) {
			want = (k * 104729) % PIECE_MAX + 1;
			want = want < STREAM_BYTES - rcvd ? want : STREAM_BYTES - rcvd;
			m = ops->recv(c, rx, want);
			if (m < 0)
				goto out;
			for (i = 0; i < (size_t)m; i++)
				if (rx[i] != pattern(peer, rcvd + i)) {
					fprintf(stderr, "rank %d: stream byte %zu is wrong\n", rank,
						rcvd + i);
					goto out;
				}
			rcvd += m;
		}
		if (!n && !m && ops->wait(c, CCOM_TRANSPORT_WAIT_RECV | CCOM_TRANSPORT_WAIT_SEND,
					  1000) < 0)
			goto out;
	}
	rc = sent == STREAM_BYTES && rcvd == STREAM_BYTES ? 0 : 1;
	if (rc)
		fprintf(stderr, "rank %d: stream stalled (%zu sent, %zu received)\n", rank, sent, rcvd);
out:
	free(tx);
	free(rx);
	return rc;
}

static int check_stripes(struct ccom_transport_conn *c, int rank)
{
	size_t s, r;
	int i, n = ccom_net_conn_nsocks(c);

	if (n != 3) {
		fprintf(stderr, "rank %d: %d sockets per peer, CCOM_NSOCKS=3 asked for 3\n", rank, n);
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (ccom_net_conn_sock_bytes(c, i, &s, &r) || s < STREAM_BYTES / 4 ||
		    r < STREAM_BYTES / 4) {
			fprintf(stderr, "rank %d: socket %d carried %zu/%zu bytes, expected about a third each\n",
				rank, i, s, r);
			return 1;
		}
	}
	return 0;
}

/* Receive one byte until the connection fails; returns what recv/wait said. */
static ssize_t recv_until_error(struct ccom_transport_conn *c)
{
	int64_t deadline = ccom_now_us() + 30000000;
	char byte;
	ssize_t r = 0;

	while (ccom_now_us() < deadline) {
		r = c->ops->recv(c, &byte, 1);
		if (r != 0)
			break;
		if (c->ops->wait(c, CCOM_TRANSPORT_WAIT_RECV, 100000) < 0)
			return -ECONNRESET;
	}
	return r;
}

static int expect_named(int rank, ssize_t r, const char *want)
{
	if (r != -ECONNRESET || !strstr(ccom_last_error(), want)) {
		fprintf(stderr, "rank %d: failure gave %zd, last error '%s'; expected -ECONNRESET naming '%s'\n",
			rank, r, ccom_last_error(), want);
		return 1;
	}
	printf("rank %d: reported: %s\n", rank, ccom_last_error());
	fflush(stdout);
	return 0;
}

/*
 * Rank 2 vanishes.  Rank 0 must see -ECONNRESET naming it; rank 0 then tears
 * down (sending its failure note), and rank 1, which only sees rank 0 close,
 * must still name rank 2.
 */
static int dead_peer(struct ccomComm *comm, struct ccom_transport_conn **conns, int rank)
{
	int rc;

	if (rank == 2)
		_exit(0);	/* no teardown: the kernel closes the sockets */
	if (rank == 0) {
		rc = expect_named(0, recv_until_error(conns[1]), "peer rank 2");
		ccom_transport_net_socket.teardown(comm, conns, 2);
		return rc;
	}
	return expect_named(1, recv_until_error(conns[0]), "because rank 2 failed");
}

/* Ranks 0 and 1 stream to each other; all three then take part in the failure. */
static int rank_body(ccomComm_t comm, int rank, int nranks, void *arg)
{
	struct ccom_transport_conn *conns[2] = { NULL, NULL };
	int peers[2], k = 0, r, err;

	(void)arg;
	for (r = 0; r < nranks; r++)
		if (r != rank)
			peers[k++] = r;
	err = ccom_transport_net_socket.setup(comm, peers, 2, conns);
	if (err) {
		fprintf(stderr, "rank %d: setup: %s\n", rank, ccom_last_error());
		return 1;
	}
	if (rank < 2 && (pump(conns[0], rank, peers[0]) || check_stripes(conns[0], rank)))
		err = 1;
	/* Everyone is done streaming before rank 2 dies. */
	if (!err && ccom_bootstrap_barrier(comm->bootstrap))
		err = 1;
	if (!err)
		err = dead_peer(comm, conns, rank);
	ccom_transport_net_socket.teardown(comm, conns, 2);
	/* A peer is gone: skip finalize, whose barrier would wait for it. */
	ccomCommAbort(comm);
	_exit(err ? 1 : 0);
}

int main(void)
{
	setenv("CCOM_NSOCKS", "3", 1);
	setenv("CCOM_NET_CHUNK", "4096", 1);
	if (nett_run(3, NULL, rank_body, NULL, 0)) {
		printf("FAIL: net_socket stream test\n");
		return 1;
	}
	printf("PASS: net_socket stream, striping over 3 sockets, dead peer -> ECONNRESET naming it, also one hop away\n");
	return 0;
}
