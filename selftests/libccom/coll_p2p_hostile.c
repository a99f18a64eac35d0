// SPDX-License-Identifier: MIT
/*
 * Description: a receiver bounds the point-to-point header its peer sends
 * (coll/p2p.h: magic, sender rank, sequence number, byte count, version,
 * reserved word, path, address), over shared memory (one host) and over
 * TCP (two simulated hosts, CCOM_HOSTID).  Two ranks do a matched 1 KiB
 * Send/Recv; then rank 0 turns hostile and writes one forged header (or
 * the first bytes of one) on its stream to rank 1 through the library's
 * own transport (the test links libccom statically), where rank 1
 * receives next.  Each case names the result rank 1 must get:
 *   bytes      ccomRecv of 1 KiB; the header announces 2^40 bytes
 *              (ccomInvalidArgument: a count mismatch of honest ranks
 *              looks the same)
 *   seq        ccomRecv; the header's sequence number is 99, not 2
 *              (ccomRemoteError, as for every lie below)
 *   from       ccomRecv; the header names sender rank 5, not 0
 *   version    ccomRecv; header version 9
 *   reserved   ccomRecv; reserved word 3
 *   path       ccomRecv; path 7 (neither the stream nor CMA)
 *   ack_magic  ccomRecv; the header starts with a CMA acknowledgement's
 *              magic ("CCPA": no CMA send was made)
 *   cma_addr   ccomRecv; the CMA path at address 0x1000 of rank 0 (on
 *              TCP: CMA is off between hosts; on shared memory the read
 *              fails with EFAULT there and rank 1's own buffer is fine)
 *   cma_wrap   ccomRecv; the CMA path at an address whose range wraps
 *   cma_bytes  ccomRecv; the CMA path announcing 2^40 bytes
 *              (ccomInvalidArgument, nothing read)
 *   coll_magic ccomRecv; a collective's header magic ("CCPC":
 *              ccomInvalidUsage, what a peer in a Gather sends)
 *   short      ccomRecv; 20 of the 40 bytes, then nothing, with
 *              CCOM_OP_TIMEOUT=2 (ccomTimeout naming rank 0 and 20 of 40)
 *   any_bytes  ccomRecvAny of 1 KiB; the header announces 2^62 bytes
 *   any_from   ccomRecvAny; the header names sender rank 7 of 2
 *   any_neg    ccomRecvAny; the header names sender rank -5
 *              (both: ccomInvalidUsage, p2p_any.c takes a header it
 *              cannot match for a collective's bytes)
 * Rank 1's receive must fail with exactly that result (never succeed,
 * never wait for data that a forged count promises) within 5 s (the
 * timeout case: 2-6 s) with a sentence naming the peer and what was
 * wrong, leave every byte after its 1 KiB buffer untouched, and rank 1
 * must exit normally (the operation fails, not the process).  ASan+UBSan
 * run it too.  Rank 0 holds its communicator until rank 1 says it is done
 * (a pipe), so a hang-up cannot end the receive instead.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/cma.h"
#include "coll/coll.h"
#include "coll/p2p.h"
#include "core/comm.h"
#include "transport/transport.h"

#include "hostile_util.h"

#define MSG 1024		/* bytes of the warm-up and of the receive */
#define GUARD 4096		/* bytes after the receive buffer that must stay */
#define HOLD_S 20		/* rank 0 keeps its comm at most this long */

struct mode {
	const char *name;
	int any;		/* rank 1 posts ccomRecvAny */
	struct ccom_p2p_hdr h;
	ccomResult_t want;	/* rank 1's result */
	const char *words[3];	/* in rank 1's error sentence */
	size_t len;		/* bytes of @h forged; 0: all */
};

#define HDRM(magic, from, seq, bytes, version, path, rsv, addr) \
	{ (magic), (from), (seq), (bytes), (version), (path), (rsv), (addr) }
#define HDR(from, seq, bytes, version, path, addr) \
	HDRM(CCOM_P2P_MAGIC, from, seq, bytes, version, path, 0, addr)
#define STREAM CCOM_P2P_PATH_STREAM
#define CMA CCOM_P2P_PATH_CMA
#define V CCOM_P2P_VERSION
#define REMOTE ccomRemoteError

static const struct mode modes[] = {
	{ "bytes", 0, HDR(0, 2, 1ull << 40, V, STREAM, 0), ccomInvalidArgument,
	  { "peer 0", "1099511627776 bytes", NULL }, 0 },
	{ "seq", 0, HDR(0, 99, MSG, V, STREAM, 0), REMOTE,
	  { "peer rank 0", "message number 99", "next is 2" }, 0 },
	{ "from", 0, HDR(5, 2, MSG, V, STREAM, 0), REMOTE,
	  { "peer rank 0", "sender rank 5", NULL }, 0 },
	{ "version", 0, HDR(0, 2, MSG, 9, STREAM, 0), REMOTE,
	  { "rank 0", "version 9", "want version 3" }, 0 },
	{ "reserved", 0, HDRM(CCOM_P2P_MAGIC, 0, 2, MSG, V, STREAM, 3, 0), REMOTE,
	  { "rank 0", "reserved word 3", NULL }, 0 },
	{ "path", 0, HDR(0, 2, MSG, V, 7, 0), REMOTE, { "rank 0", "path 7", NULL }, 0 },
	{ "ack_magic", 0, HDRM(CCOM_CMA_P2P_ACK_MAGIC, 0, 2, MSG, V, STREAM, 0, 0), REMOTE,
	  { "peer rank 0", "acknowledgement", NULL }, 0 },
	{ "cma_addr", 0, HDR(0, 2, MSG, V, CMA, 0x1000), REMOTE, { "rank 0", NULL }, 0 },
	{ "cma_wrap", 0, HDR(0, 2, MSG, V, CMA, ~0ull - 16), REMOTE,
	  { "rank 0", "address 0xffffffffffffffef", NULL }, 0 },
	{ "cma_bytes", 0, HDR(0, 2, 1ull << 40, V, CMA, 0x10000), ccomInvalidArgument,
	  { "peer 0", "1099511627776 bytes", NULL }, 0 },
	{ "coll_magic", 0, HDRM(CCOM_P2P_MAGIC_COLL, 0, 2, MSG, V, STREAM, 0, 0),
	  ccomInvalidUsage, { "peer 0", "not the ccomSend", NULL }, 0 },
	{ "short", 0, HDR(0, 2, MSG, V, STREAM, 0), ccomTimeout,
	  { "peer rank 0", "20 of its 40 bytes", "CCOM_OP_TIMEOUT" }, 20 },
	{ "any_bytes", 1, HDR(0, 2, 1ull << 62, V, STREAM, 0), ccomInvalidArgument,
	  { "peer 0", "ccomRecvAny", NULL }, 0 },
	{ "any_from", 1, HDR(7, 2, MSG, V, STREAM, 0), ccomInvalidUsage,
	  { "ccomRecvAny cannot match", NULL }, 0 },
	{ "any_neg", 1, HDR(-5, 2, MSG, V, STREAM, 0), ccomInvalidUsage,
	  { "ccomRecvAny cannot match", NULL }, 0 },
};

static ccomUniqueId id;
static const struct mode *mode;
static int over_tcp;
static int done_pipe[2];	/* rank 1 writes a byte when it is done */

/* Rank 0: the forged header, whole, on the stream to rank 1. */
static int forge(ccomComm_t comm)
{
	struct ccom_transport_conn *c;
	const char *p = (const char *)&mode->h;
	size_t done = 0, len = mode->len ? mode->len : sizeof(mode->h);
	double end = t_now() + 10;

	T_CHECK(comm->coll && comm->coll->conns && comm->coll->conns[1], "no conn to rank 1");
	c = comm->coll->conns[1];
	printf("rank 0: forging a %s header (%zu bytes) over %s\n", mode->name, len, c->ops->name);
	while (done < len && t_now() < end) {
		ssize_t n = c->ops->send(c, p + done, len - done);

		T_CHECK(n >= 0, "rank 0: the transport's send failed: %s", strerror((int)-n));
		done += (size_t)n;
		if (!n)
			usleep(1000);
	}
	T_CHECK(done == len, "rank 0: the forged header did not go out in 10 s");
	return T_PASS;
}

static int rank_main(int rank, int n, void *arg)
{
	unsigned char *buf = malloc(MSG + GUARD);
	ccomResult_t res;
	ccomComm_t comm;
	char hid[32];
	int peer = -1, i;
	double t0, dt;

	(void)n;
	(void)arg;
	T_CHECK(buf, "out of memory");
	memset(buf, 0x5a, MSG + GUARD);
	if (over_tcp) {
		snprintf(hid, sizeof(hid), "p2ph-%d-%d", rank, (int)getppid());
		setenv("CCOM_HOSTID", hid, 1);
		setenv("CCOM_NET", "socket", 1);
	}
	setenv("CCOM_OP_TIMEOUT", mode->want == ccomTimeout ? "2" : "30", 1);
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	if (rank == 0)
		T_CCOM(ccomSend(buf, MSG, ccomUint8, 1, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomRecv(buf, MSG, ccomUint8, 0, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == 0) {
		struct pollfd pfd = { .fd = done_pipe[0], .events = POLLIN };
		int r = forge(comm);

		if (poll(&pfd, 1, HOLD_S * 1000) != 1)
			printf("rank 0: rank 1 did not say it was done in %d s\n", HOLD_S);
		ccomCommAbort(comm);
		free(buf);
		return r;
	}
	memset(buf, 0x5a, MSG + GUARD);
	t0 = t_now();
	if (mode->any)
		T_CCOM(ccomRecvAny(buf, MSG, ccomUint8, &peer, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomRecv(buf, MSG, ccomUint8, 0, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank 1 (%s, %s): the receive returned %s after %.3f s: %s\n", mode->name,
	       over_tcp ? "tcp" : "shm", ccomGetErrorString(res), dt, ccomGetLastError(comm));
	fflush(stdout);
	/* Every case fails: a success would be a forged header taken. */
	T_CHECK(mode->want != ccomSuccess, "mode %s wants success", mode->name);
	if (t_hostile_outcome(comm, "the receive of a forged header", res, mode->want, dt,
			      mode->words))
		return T_FAIL;
	for (i = MSG; i < MSG + GUARD; i++)
		T_CHECK(buf[i] == 0x5a, "rank 1: byte %d after the buffer was written", i - MSG);
	T_CHECK(write(done_pipe[1], "d", 1) == 1, "rank 1: pipe");
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

int main(void)
{
	int codes[2];
	size_t m;

	for (over_tcp = 0; over_tcp <= 1; over_tcp++)
		for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			mode = &modes[m];
			T_CHECK(!pipe(done_pipe), "pipe: %s", strerror(errno));
			T_CHECK(!t_fork_ranks_id(2, rank_main, NULL, codes, 60, &id),
				"%s over %s: a rank failed (codes %d %d)", mode->name,
				over_tcp ? "tcp" : "shm", codes[0], codes[1]);
			close(done_pipe[0]);
			close(done_pipe[1]);
			printf("%s over %s: refused\n", mode->name, over_tcp ? "tcp" : "shm");
		}
	return T_PASS;
}
