// SPDX-License-Identifier: MIT
/*
 * Description: a CMA sender bounds the acknowledgement its receiver sends
 * back (coll/cma_p2p.c: magic, rank, send number, status, reason, posted
 * size).
 * Two ranks of one host with CCOM_CMA=1 and CCOM_CMA_P2P_MIN_BYTES=4096
 * do a matched 64 KiB Send/Recv (rank 1 to rank 0, which must move on
 * CMA); then rank 1 sends 64 KiB again and rank 0 turns hostile: it takes
 * the header from its stream through the library's own transport (the
 * test links libccom statically), checks that it announces the CMA path,
 * and writes back an acknowledgement of its own making (or part of one),
 * where rank 1 waits for it.  Each case names rank 1's result:
 *   ok           the right acknowledgement, after rank 0 read the data
 *                itself (the control: the forger writes the library's
 *                layout; ccomSuccess and one more CMA message counted)
 *   magic        magic 0xdeadbeef (ccomRemoteError, as for every lie)
 *   hdr_magic    the magic of a p2p header ("CCP2": the peer went on to
 *                its next send; ccomInvalidUsage)
 *   from         rank 7
 *   seq          send 99, which rank 1 never made
 *   why          reason 7 (none of read, refused, unread)
 *   posted       posted size 4096 with a read's reason (only a refusal
 *                of another size carries one)
 *   status_neg   status -5 (no errno)
 *   status_big   status 70000 (no errno)
 *   status_fail  status EFAULT: rank 0 says its read failed
 *   refused_size a refusal: rank 0 posted 4096 bytes (ccomInvalidArgument
 *                naming rank 0 and both sizes, as for honest counts)
 *   refused_same a refusal of another size that names the size sent
 *   refused_zero a refusal with status 0
 *   refused_hdr  a refusal with EBADMSG (rank 0 could not take the header)
 *   unread       ECANCELED: another receive of rank 0's group failed
 *   unread_eio   the unread reason with EIO
 *   short_hold   10 of the 32 bytes, then nothing, with CCOM_OP_TIMEOUT=2
 *                (ccomTimeout naming rank 0 and 10 of 32)
 *   short_exit   10 of the 32 bytes, then rank 0 aborts its communicator
 *   none_exit    nothing, then rank 0 aborts its communicator
 * A false success (status 0 without a read) cannot be told from "ok" by
 * the sender and harms only the liar's own receive: no case for it.
 * Next, the control for the receiver's side of EFAULT: honest rank 0
 * sends 64 KiB on CMA into a receive buffer rank 1 mapped read-only;
 * rank 1 must get ccomInvalidArgument naming its receive buffer (its own
 * fault, not the peer's), rank 0 ccomRemoteError naming rank 1.
 * Then the refused headers, between honest ranks under
 * CCOM_OP_TIMEOUT=20: rank 1 sends 8 KiB on CMA where rank 0 posted a
 * 4 KiB receive, alone, as the second of a group of two (the first
 * matches, so its acknowledgement says "unread"), in an exchange (rank 0
 * also sends 8 KiB that rank 1 reads, and must hear so), and where rank 0
 * posted a ccomRecvAny.  Both ranks must fail with ccomInvalidArgument in
 * under 10 s (half the timeout: no wait may end it), rank 0 naming rank 1
 * and both sizes, rank 1 naming rank 0's refusal of that send and both
 * sizes (without the refusal it saw only "peer rank 0 failed",
 * ccomRemoteError).  Last, the stream path between two simulated hosts
 * (TCP, CMA off): an exchange of 16 MiB where rank 0 posted 4 KiB; rank 1
 * must fail in under 10 s with ccomRemoteError naming rank 0's revoke
 * (coll/p2p.c; without it, it blamed a dead peer after 3 s), and the
 * same 16 MiB sent alone (rank 1 only sends, blocked on full socket
 * buffers: before its send wait watched for the peer's shutdown it waited
 * for the whole CCOM_OP_TIMEOUT).  Buffers
 * stay unwritten, and rank 0 keeps its communicator until rank 1 is done
 * (its abort would end rank 1's wait too).
 * For the forged acknowledgements, rank 1's ccomSend must return exactly
 * that result within 5 s (the timeout case: 1.5-6 s), its error must
 * name rank 0 and the field, its send buffer must be unchanged, and it
 * must exit normally.  ASan+UBSan
 * run it too.  Rank 0 keeps its process (and, but for the _exit cases,
 * its communicator) until rank 1 says it is done (a pipe).  The test
 * skips when CMA is off on this host (Yama, seccomp, containers).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll/cma.h"
#include "coll/coll.h"
#include "coll/p2p.h"
#include "core/comm.h"
#include "proxy/xfer.h"
#include "transport/transport.h"

#include "hostile_util.h"

#define MSG (64u << 10)		/* bytes of each send, on CMA */
#define HOLD_S 20		/* rank 0 keeps its process at most this long */
#define FILL(i) ((unsigned char)((i) * 7 + 3))

/* The acknowledgement's layout, spelled out here as the wire has it. */
struct ack {
	uint32_t magic;
	int32_t from;
	uint64_t seq;
	int32_t status;
	uint32_t why;		/* 0 read, 1 refused, 2 unread */
	uint64_t posted;
};
_Static_assert(sizeof(struct ack) == 32, "the acknowledgement is 32 bytes");

struct mode {
	const char *name;
	struct ack a;
	size_t len;		/* bytes of @a written */
	int exit;		/* rank 0 aborts its comm after writing */
	ccomResult_t want;
	const char *words[3];	/* in rank 1's error sentence */
};

#define ACKP(magic, from, seq, status, why, posted) \
	{ (magic), (from), (seq), (status), (why), (posted) }
#define ACK(magic, from, seq, status, why) ACKP(magic, from, seq, status, why, 0)
#define GOOD CCOM_CMA_P2P_ACK_MAGIC
#define REMOTE ccomRemoteError

static const struct mode modes[] = {
	{ "ok", ACK(GOOD, 0, 2, 0, 0), 32, 0, ccomSuccess, { NULL } },
	{ "magic", ACK(0xdeadbeefu, 0, 2, 0, 0), 32, 0, REMOTE,
	  { "rank 0", "magic 0xdeadbeef", "want 0x41504343" } },
	{ "hdr_magic", ACK(CCOM_P2P_MAGIC, 0, 2, 0, 0), 32, 0, ccomInvalidUsage,
	  { "rank 0", "header of another p2p message", NULL } },
	{ "from", ACK(GOOD, 7, 2, 0, 0), 32, 0, REMOTE,
	  { "rank 0", "rank 7", "want 0x41504343, 0, 2)" } },
	{ "seq", ACK(GOOD, 0, 99, 0, 0), 32, 0, REMOTE, { "rank 0", "send 99", NULL } },
	{ "why", ACK(GOOD, 0, 2, 0, 7), 32, 0, REMOTE, { "rank 0", "reason 7", NULL } },
	{ "posted", ACKP(GOOD, 0, 2, 0, 0, 4096), 32, 0, REMOTE,
	  { "rank 0", "posted size 4096", NULL } },
	{ "status_neg", ACK(GOOD, 0, 2, -5, 0), 32, 0, REMOTE,
	  { "rank 0", "status -5", "an errno 0..4095" } },
	{ "status_big", ACK(GOOD, 0, 2, 70000, 0), 32, 0, REMOTE,
	  { "rank 0", "status 70000", NULL } },
	{ "status_fail", ACK(GOOD, 0, 2, EFAULT, 0), 32, 0, REMOTE,
	  { "rank 0", "could not read", "Bad address" } },
	{ "refused_size", ACKP(GOOD, 0, 2, EINVAL, 1, 4096), 32, 0, ccomInvalidArgument,
	  { "rank 0 refused CMA send 2", "posted 4096 bytes", "65536 were sent" } },
	{ "refused_same", ACKP(GOOD, 0, 2, EINVAL, 1, MSG), 32, 0, REMOTE,
	  { "rank 0", "posted size 65536", NULL } },
	{ "refused_zero", ACK(GOOD, 0, 2, 0, 1), 32, 0, REMOTE, { "rank 0", "status 0", "reason 1" } },
	{ "refused_hdr", ACK(GOOD, 0, 2, EBADMSG, 1), 32, 0, REMOTE,
	  { "rank 0 refused the header", "Bad message", NULL } },
	{ "unread", ACK(GOOD, 0, 2, ECANCELED, 2), 32, 0, REMOTE,
	  { "rank 0 did not read", "another receive", NULL } },
	{ "unread_eio", ACK(GOOD, 0, 2, EIO, 2), 32, 0, REMOTE, { "rank 0", "status 5", "reason 2" } },
	{ "short_hold", ACK(GOOD, 0, 2, 0, 0), 10, 0, ccomTimeout,
	  { "rank 0", "10 of its 32 bytes", "CCOM_OP_TIMEOUT" } },
	{ "short_exit", ACK(GOOD, 0, 2, 0, 0), 10, 1, REMOTE,
	  { "rank 0", "10 of its 32 bytes", NULL } },
	{ "none_exit", ACK(GOOD, 0, 2, 0, 0), 0, 1, REMOTE,
	  { "rank 0", "0 of its 32 bytes", NULL } },
};

static ccomUniqueId id;
static const struct mode *mode;
static int done_pipe[2];	/* rank 1 writes a byte when it is done */

/* Move @len bytes of @p over @c (@send) or into @p, within 10 s. */
static int move_raw(struct ccom_transport_conn *c, void *p, size_t len, int send)
{
	double end = t_now() + 10;
	size_t done = 0;

	while (done < len && t_now() < end) {
		ssize_t n = send ? ccom_xfer_send(c, (char *)p + done, len - done) :
				   ccom_xfer_recv(c, (char *)p + done, len - done);

		T_CHECK(n >= 0, "rank 0: the transport failed: %s", strerror((int)-n));
		done += (size_t)n;
		if (!n)
			usleep(1000);
	}
	T_CHECK(done == len, "rank 0: %zu of %zu bytes moved in 10 s", done, len);
	return T_PASS;
}

/* Rank 0: take rank 1's header, check it says CMA, answer with the mode's ack. */
static int forge(ccomComm_t comm)
{
	struct ccom_transport_conn *c;
	struct ccom_p2p_hdr h;
	unsigned char *got;
	size_t i;

	T_CHECK(comm->coll && comm->coll->conns && comm->coll->conns[1], "no conn to rank 1");
	c = comm->coll->conns[1];
	if (move_raw(c, &h, sizeof(h), 0))
		return T_FAIL;
	T_CHECK(h.magic == CCOM_P2P_MAGIC && h.from == 1 && h.seq == 2 && h.bytes == MSG &&
		h.version == CCOM_P2P_VERSION && h.path == CCOM_P2P_PATH_CMA && h.addr,
		"rank 0: rank 1's header is not CMA send 2 of %u bytes (magic 0x%x from %d seq %llu bytes %llu path %u)",
		MSG, h.magic, h.from, (unsigned long long)h.seq, (unsigned long long)h.bytes,
		(unsigned)h.path);
	if (mode->want == ccomSuccess) {
		got = malloc(MSG);
		T_CHECK(got, "out of memory");
		T_CHECK(!ccom_cma_move(comm, 1, got, h.addr, MSG, false),
			"rank 0: reading rank 1's send failed: %s", ccomGetLastError(comm));
		for (i = 0; i < MSG && got[i] == FILL(i + 1); i++)
			;
		free(got);
		T_CHECK(i == MSG, "rank 0: byte %zu of rank 1's send is wrong", i);
	}
	printf("rank 0: answering with a %s acknowledgement (%zu bytes)\n", mode->name, mode->len);
	return mode->len ? move_raw(c, (void *)&mode->a, mode->len, 1) : T_PASS;
}

/* Rank 0's part: a real receive, then the forgery. */
static int hostile(ccomComm_t comm, unsigned char *buf)
{
	struct pollfd pfd = { .fd = done_pipe[0], .events = POLLIN };
	int r;

	T_CCOM(ccomRecv(buf, MSG, ccomUint8, 1, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(ccom_cma_p2p_ops(comm) == 1, "rank 0: the warm-up did not move on CMA");
	r = forge(comm);
	if (mode->exit)
		ccomCommAbort(comm);
	if (poll(&pfd, 1, HOLD_S * 1000) != 1)
		printf("rank 0: rank 1 did not say it was done in %d s\n", HOLD_S);
	if (!mode->exit)
		ccomCommAbort(comm);
	return r;
}

static int rank_main(int rank, int n, void *arg)
{
	unsigned char *buf = malloc(MSG);
	ccomResult_t res;
	ccomComm_t comm;
	uint64_t before;
	double t0, dt;
	size_t i;

	(void)n;
	(void)arg;
	T_CHECK(buf, "out of memory");
	setenv("CCOM_CMA", "1", 1);
	setenv("CCOM_CMA_P2P_MIN_BYTES", "4096", 1);
	setenv("CCOM_OP_TIMEOUT", mode->want == ccomTimeout ? "2" : "30", 1);
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	if (!comm->coll->cma || !comm->coll->cma->on) {
		printf("rank %d: SKIP: CMA is off here (%s)\n", rank,
		       comm->coll->cma ? comm->coll->cma->why : "no state");
		ccomCommDestroy(comm);
		free(buf);
		return T_SKIP;
	}
	if (rank == 0) {
		int r = hostile(comm, buf);

		free(buf);
		return r;
	}
	for (i = 0; i < MSG; i++)
		buf[i] = FILL(i);
	T_CCOM(ccomSend(buf, MSG, ccomUint8, 0, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	before = ccom_cma_p2p_ops(comm);
	T_CHECK(before == 1, "rank 1: the warm-up did not move on CMA");
	for (i = 0; i < MSG; i++)
		buf[i] = FILL(i + 1);
	t0 = t_now();
	T_CCOM(ccomSend(buf, MSG, ccomUint8, 0, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank 1 (%s): the send returned %s after %.3f s: %s\n", mode->name,
	       ccomGetErrorString(res), dt, res ? ccomGetLastError(comm) : "");
	fflush(stdout);
	if (t_hostile_outcome(comm, "the send", res, mode->want, dt, mode->words))
		return T_FAIL;
	for (i = 0; i < MSG; i++)
		T_CHECK(buf[i] == FILL(i + 1), "rank 1: byte %zu of the send buffer changed", i);
	T_CHECK(res != ccomSuccess || ccom_cma_p2p_ops(comm) == before + 1,
		"rank 1: the acknowledged send was not counted as a CMA message");
	T_CHECK(write(done_pipe[1], "d", 1) == 1, "rank 1: pipe");
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

/* Honest ranks; rank 1's receive buffer is read-only. */
static int own_buffer_rank(int rank, int n, void *arg)
{
	unsigned char *buf;
	ccomResult_t res, want = rank ? ccomInvalidArgument : ccomRemoteError;
	ccomComm_t comm;
	double t0, dt;

	(void)n;
	(void)arg;
	buf = mmap(NULL, MSG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_CHECK(buf != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(buf, 0x5a, MSG);
	setenv("CCOM_CMA", "1", 1);
	setenv("CCOM_CMA_P2P_MIN_BYTES", "4096", 1);
	setenv("CCOM_OP_TIMEOUT", "30", 1);
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	if (!comm->coll->cma || !comm->coll->cma->on) {
		ccomCommDestroy(comm);
		munmap(buf, MSG);
		return T_SKIP;
	}
	T_CHECK(!mprotect(buf, MSG, rank ? PROT_READ : PROT_READ | PROT_WRITE), "mprotect: %s",
		strerror(errno));
	t0 = t_now();
	if (rank == 0)
		T_CCOM(ccomSend(buf, MSG, ccomUint8, 1, comm, NULL), ccomSuccess);
	else
		T_CCOM(ccomRecv(buf, MSG, ccomUint8, 0, comm, NULL), ccomSuccess);
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank %d (read-only receive buffer): %s after %.3f s: %s\n", rank,
	       ccomGetErrorString(res), dt, ccomGetLastError(comm));
	fflush(stdout);
	T_CHECK(res == want, "rank %d: returned %s, want %s", rank, ccomGetErrorString(res),
		ccomGetErrorString(want));
	T_CHECK(dt < 5, "rank %d: returned only after %.1f s", rank, dt);
	T_CHECK(rank ? t_has_words(ccomGetLastError(comm), "receive buffer", "not writable", NULL) :
		       t_has_words(ccomGetLastError(comm), "rank 1", "could not read", NULL),
		"rank %d: the error does not name the cause", rank);
	ccomCommAbort(comm);
	munmap(buf, MSG);
	return T_PASS;
}

#define BIG 8192		/* the refused send */
#define SMALL 4096		/* the receive rank 0 posted */
#define TCP_BIG (16 << 20)	/* the refused send between hosts: more than sockets buffer */
#define REFUSE_TIMEOUT "20"	/* CCOM_OP_TIMEOUT: ... */
#define REFUSE_WITHIN 10.0	/* ... and how soon both ranks must fail */
#define SEND_FIRST_US 1000000	/* variant 5: rank 0 posts this late (a full zero window never RSTs) */

/*
 * Honest ranks whose counts differ: *@arg 0 one send, 1 a group of two,
 * 2 an exchange (each rank sends 8 KiB and receives in one group), 3 a
 * ccomRecvAny on rank 0, 4 an exchange of 16 MiB on the stream between
 * two simulated hosts (TCP: no CMA, the refusal revokes the conn), 5 the
 * same send of 16 MiB alone (rank 1 is stuck on a full socket buffer and
 * must notice the revoke on its send; rank 0 posts 1 s late so that the
 * buffers are full when it refuses, as on a loaded machine).
 */
static int refuse_rank(int rank, int n, void *arg)
{
	int v = *(const int *)arg, tcp = v >= 4, group = v == 1, swap = v == 2 || v == 4;
	int any = v == 3, big = tcp ? TCP_BIG : BIG, seq = group ? 2 : 1, k, peer = -1;
	unsigned char *buf = malloc(2 * (size_t)big);
	ccomResult_t res, want;
	const char *w[3] = { NULL, NULL, NULL };
	char words[3][64], hid[32];
	ccomComm_t comm;
	double t0, dt;
	size_t i;

	(void)n;
	T_CHECK(buf, "out of memory");
	memset(buf, 0x5a, 2 * (size_t)big);
	setenv("CCOM_CMA", tcp ? "0" : "1", 1);
	setenv("CCOM_CMA_P2P_MIN_BYTES", "4096", 1);
	setenv("CCOM_OP_TIMEOUT", REFUSE_TIMEOUT, 1);
	if (tcp) {
		snprintf(hid, sizeof(hid), "refuse-%d-%d", rank, (int)getppid());
		setenv("CCOM_HOSTID", hid, 1);
		setenv("CCOM_NET", "socket", 1);
	}
	T_CCOM(ccomCommInitRank(&comm, 2, id, rank), ccomSuccess);
	if (!tcp && (!comm->coll->cma || !comm->coll->cma->on)) {
		ccomCommDestroy(comm);
		free(buf);
		return T_SKIP;
	}
	if (v == 5 && !rank)	/* let rank 1 fill the socket buffers before the refusal */
		usleep(SEND_FIRST_US);
	t0 = t_now();
	T_CCOM(ccomGroupStart(), ccomSuccess);
	for (k = 0; k <= group; k++)
		if (rank == 1)
			T_CCOM(ccomSend(buf + k * big, big, ccomUint8, 0, comm, NULL), ccomSuccess);
		else if (any)
			T_CCOM(ccomRecvAny(buf, SMALL, ccomUint8, &peer, comm, NULL), ccomSuccess);
		else
			T_CCOM(ccomRecv(buf + k * big, k == group ? SMALL : big, ccomUint8, 1, comm,
					NULL), ccomSuccess);
	if (swap)	/* rank 1 waits for rank 0's send, rank 0 for rank 1's word */
		T_CCOM(rank ? ccomRecv(buf + big, big, ccomUint8, 0, comm, NULL) :
			      ccomSend(buf + big, big, ccomUint8, 1, comm, NULL), ccomSuccess);
	T_CCOM(ccomGroupEnd(), ccomSuccess);
	res = ccomCommSynchronize(comm);
	dt = t_now() - t0;
	printf("rank %d (variant %d): %s after %.3f s: %s\n", rank, v, ccomGetErrorString(res), dt,
	       ccomGetLastError(comm));
	fflush(stdout);
	want = rank == 1 && tcp ? ccomRemoteError : ccomInvalidArgument;
	T_CHECK(res == want, "rank %d: returned %s, want %s", rank, ccomGetErrorString(res),
		ccomGetErrorString(want));
	T_CHECK(dt < REFUSE_WITHIN, "rank %d: failed only after %.1f s (CCOM_OP_TIMEOUT=%s)", rank,
		dt, REFUSE_TIMEOUT);
	if (rank == 1 && tcp) {
		w[0] = "peer rank 0 revoked";
	} else if (rank == 1) {
		snprintf(words[0], sizeof(words[0]), "rank 0 refused CMA send %d", seq);
		snprintf(words[1], sizeof(words[1]), "posted %d bytes", SMALL);
		snprintf(words[2], sizeof(words[2]), "%d were sent", big);
	} else {
		snprintf(words[0], sizeof(words[0]), "peer 1 sent %d bytes", big);
		snprintf(words[1], sizeof(words[1]), "expects %d", SMALL);
		snprintf(words[2], sizeof(words[2]), "must agree");
	}
	for (k = 0; !w[0] && k < 3; k++)
		w[k] = words[k];
	T_CHECK(t_has_words(ccomGetLastError(comm), w[0], w[1], w[2], NULL),
		"rank %d: the error does not say \"%s\"%s%s%s%s", rank, w[0], w[1] ? ", " : "",
		w[1] ? w[1] : "", w[2] ? ", " : "", w[2] ? w[2] : "");
	for (i = 0; i < 2 * (size_t)big; i++)
		T_CHECK(buf[i] == 0x5a, "rank %d: byte %zu of its buffers changed", rank, i);
	T_CHECK(v != 2 || rank || ccom_cma_p2p_ops(comm) == 1,
		"rank 0: its send was not acknowledged as read (%llu CMA messages)",
		(unsigned long long)ccom_cma_p2p_ops(comm));
	if (rank == 1) {
		T_CHECK(write(done_pipe[1], "d", 1) == 1, "rank 1: pipe");
	} else {	/* an abort would end rank 1's wait too: hold the comm */
		struct pollfd pfd = { .fd = done_pipe[0], .events = POLLIN };

		if (poll(&pfd, 1, HOLD_S * 1000) != 1)
			printf("rank 0: rank 1 did not say it was done in %d s\n", HOLD_S);
	}
	ccomCommAbort(comm);
	free(buf);
	return T_PASS;
}

int main(void)
{
	int codes[2], bad;
	size_t m;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		mode = &modes[m];
		T_CHECK(!pipe(done_pipe), "pipe: %s", strerror(errno));
		bad = t_fork_ranks_id(2, rank_main, NULL, codes, 60, &id);
		close(done_pipe[0]);
		close(done_pipe[1]);
		if (codes[0] == T_SKIP && codes[1] == T_SKIP)
			return t_skip("CMA is off on this host: no acknowledgement to forge");
		T_CHECK(!bad, "%s: a rank failed (codes %d %d)", mode->name, codes[0], codes[1]);
		printf("%s: %s\n", mode->name, mode->want == ccomSuccess ? "accepted" : "refused");
	}
	T_CHECK(!t_fork_ranks_id(2, own_buffer_rank, NULL, codes, 60, &id),
		"read-only receive buffer: a rank failed (codes %d %d)", codes[0], codes[1]);
	printf("read-only receive buffer: the receiver blamed itself\n");
	for (m = 0; m < 6; m++) {
		int group = (int)m;

		T_CHECK(!pipe(done_pipe), "pipe: %s", strerror(errno));
		bad = t_fork_ranks_id(2, refuse_rank, &group, codes, 60, &id);
		close(done_pipe[0]);
		close(done_pipe[1]);
		T_CHECK(!bad, "refused header (variant %d): a rank failed (codes %d %d)", group,
			codes[0], codes[1]);
		printf("refused header (variant %d): both ranks failed at once\n", group);
	}
	return T_PASS;
}
