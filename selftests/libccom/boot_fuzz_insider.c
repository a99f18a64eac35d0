// SPDX-License-Identifier: MIT
/*
 * Description: the insider mode of boot_fuzz: a peer that holds the unique
 * id's secret (so every handshake succeeds) and sends hostile frames
 * behind the proof.  The job must fail with a sentence or proceed; nothing
 * crashes (run it under ASan too), hangs, or makes the root allocate and
 * touch what a frame declares.  (A negative rank never gets past the
 * handshake: boot_fuzz covers it.)
 *
 * At a root (the thread of ccomGetUniqueId in this process), before the 2
 * real ranks check in, one authenticated check-in of each kind: nranks
 * INT_MAX, CCOM_BS_MAX_RANKS + 1 and exactly CCOM_BS_MAX_RANKS (the root's
 * resident memory must grow by less than 64 MiB: the table of 2^20 ranks is
 * never touched), nranks -5, a rank >= nranks, a wrong size field, a
 * multi-root check-in with nIds INT_MAX, a host leader whose member frames
 * declare 1000 runs, a run of INT_MAX ranks, a negative first rank, a
 * 1 GiB text and a table cut short, and sub-root reports to root 0 that
 * declare 2^19 entries then stop, or 2^31 ranks.  The real ranks must then
 * return from ccomCommInitRank (success, or a failure whose message names
 * the cause) within 60 s.
 *
 * At a rank: in a 3-rank job, rank 0 writes frame headers on its real p2p
 * connection to rank 2 that declare 2^40, 2^33 and the cap + 1 bytes:
 * rank 2's receive from rank 0 fails at once with the frame-limit sentence
 * (one log line naming rank 0), while ranks 1 and 2 still exchange
 * messages.
 *
 * A "root" that answers a rank's first message with a success and a ring
 * neighbour instead of its proof: the rank fails ("authentication failed
 * ... before proving") and never connects to that neighbour; the same
 * from a "root 0" to root 1 of 2 ids, whose answer carries every rank's
 * address: root 1 does not adopt it, its rank fails naming root 0.
 *
 * CCOM_BOOT_FUZZ_SEED=S reproduces the order and the random bytes.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "util/misc.h"
#include "boot_util.h"
#include "test_util.h"

static uint64_t rnd_s;
static char logf[128];

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rnd_s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? z % n : z;
}

enum hostile {
	H_NRANKS_INTMAX, H_NRANKS_CAP1, H_NRANKS_CAP, H_RANK_NEG, H_RANK_BIG, H_SIZE,
	H_MULTI_NIDS, H_MEMBERS_COUNT, H_MEMBERS_RUN, H_MEMBERS_NEG, H_MEMBERS_TEXT,
	H_MEMBERS_CUT, H_SUB_CUT, H_SUB_NRANKS, H_NUM
};

static const char *const hostile_names[H_NUM] = {
	"nranks INT_MAX", "nranks cap+1", "nranks = cap (2^20)", "nranks -5", "rank >= nranks",
	"size field wrong", "nIds INT_MAX", "members: 1000 runs", "members: a run of INT_MAX",
	"members: first rank -7", "members: 1 GiB of text", "members: table cut short",
	"sub-root: 2^19 entries then close", "sub-root: nranks 2^31-1",
};

static void fill_hello(struct ccom_bs_hello *h, uint64_t magic, uint32_t type, int rank,
		       int nranks)
{
	memset(h, 0, sizeof(*h));
	h->magic = magic;
	h->type = type;
	h->abi = ccom_abi_id();
	h->size = sizeof(*h);
	h->rank = rank;
	h->nranks = nranks;
	h->version = ccom_version_code();
	h->build_hash = ccom_build_hash();
	h->remaining_ms = 20000;
	h->pid = getpid();
	snprintf(h->host, sizeof(h->host), "insider");
}

/* An authenticated connection to the root of @b as @role/@who; fd or -1. */
static int insider_connect(const struct ccom_bs_id *b, const uint8_t *key, uint32_t role, int who)
{
	struct ccom_bs_reply head;
	int fd = t_connect_addr(&b->root), rc;

	if (fd < 0)
		return -1;
	rc = ccom_bs_auth_connect(fd, key, b->magic, role, who, ccom_now_us() + 5000000, NULL,
				  NULL, NULL, &head);
	if (rc) {
		fprintf(stderr, "insider: the root did not authenticate us (%d)\n", rc);
		close(fd);
		return -1;
	}
	return fd;
}

static void send_all(int fd, const void *b, size_t n)
{
	if (send(fd, b, n, MSG_NOSIGNAL) < 0)
		return;	/* the root dropped us: fine */
}

/* One hostile, authenticated conversation with the root; the fd to close later, or -1. */
static int hostile_checkin(const struct ccom_bs_id *b, enum hostile c)
{
	struct ccom_bs_hello h;
	struct ccom_bs_hello_ext x;
	struct ccom_bs_members m;
	struct ccom_bs_subroot s;
	struct ccom_bs_run run[16];
	uint8_t sub_key[CCOM_BS_KEY_BYTES];
	char junk[4096];
	int fd, i;

	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)rnd(256);
	if (c == H_SUB_CUT || c == H_SUB_NRANKS) {
		ccom_bs_subroot_key(b->secret, 1, sub_key);
		fd = insider_connect(b, sub_key, CCOM_BS_SUBROOT, 1);
		if (fd < 0)
			return -1;
		memset(&s, 0, sizeof(s));
		s.magic = b->magic;
		s.type = CCOM_BS_SUBROOT;
		s.abi = ccom_abi_id();
		s.idx = 1;
		s.nids = 2;
		s.nranks = c == H_SUB_NRANKS ? INT_MAX : 1 << 20;
		s.count = (1u << 20) - (1u << 19);
		s.remaining_ms = 20000;
		send_all(fd, &s, sizeof(s));
		send_all(fd, junk, sizeof(junk));	/* a few entries of 2^19, then nothing */
		return fd;
	}
	if (c >= H_MEMBERS_COUNT && c <= H_MEMBERS_CUT) {
		fd = insider_connect(b, b->secret, CCOM_BS_HELLO_HOST, 0);
		if (fd < 0)
			return -1;
		fill_hello(&h, b->magic, CCOM_BS_HELLO_HOST, 0, 2);
		send_all(fd, &h, sizeof(h));
		memset(&m, 0, sizeof(m));
		m.magic = b->magic;
		m.type = CCOM_BS_MEMBERS;
		m.count = c == H_MEMBERS_COUNT ? 1000 : c == H_MEMBERS_CUT ? 16 : 1;
		run[0].first = c == H_MEMBERS_NEG ? -7 : 1;
		run[0].n = c == H_MEMBERS_RUN ? INT_MAX : 1;
		if (c == H_MEMBERS_TEXT) {
			m.err = -EIO;
			m.msg_len = 1u << 30;
		}
		usleep(100000);	/* the root reads the check-in, then polls the leader */
		send_all(fd, &m, sizeof(m));
		if (c == H_MEMBERS_TEXT || c == H_MEMBERS_COUNT)
			send_all(fd, junk, sizeof(junk));
		else
			send_all(fd, run, c == H_MEMBERS_CUT ? 2 * sizeof(run[0]) : sizeof(run[0]));
		return fd;
	}
	fd = insider_connect(b, b->secret, c == H_MULTI_NIDS ? CCOM_BS_HELLO_MULTI : CCOM_BS_HELLO,
			     c == H_RANK_NEG ? 0 : c == H_RANK_BIG ? 7 : 1);
	if (fd < 0)
		return -1;
	fill_hello(&h, b->magic, c == H_MULTI_NIDS ? CCOM_BS_HELLO_MULTI : CCOM_BS_HELLO, 1, 2);
	switch (c) {
	case H_NRANKS_INTMAX:
		h.nranks = INT_MAX;
		break;
	case H_NRANKS_CAP1:
		h.nranks = CCOM_BS_MAX_RANKS + 1;
		break;
	case H_NRANKS_CAP:
		h.nranks = CCOM_BS_MAX_RANKS;
		break;
	case H_RANK_NEG:
		h.rank = 0;	/* the hello's rank must match the handshake's: this one lies later */
		h.nranks = -5;
		break;
	case H_RANK_BIG:
		h.rank = 7;
		break;
	case H_SIZE:
		h.size = (uint32_t)rnd(0) | 1;
		break;
	default:
		break;
	}
	send_all(fd, &h, sizeof(h));
	if (c == H_MULTI_NIDS) {
		memset(&x, 0, sizeof(x));
		x.nids = INT_MAX;
		x.idx = (uint32_t)rnd(0);
		send_all(fd, &x, sizeof(x));
	}
	return fd;
}

static int real_rank(int rank, int nranks, void *arg)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomUniqueId *uid = arg;
	ccomResult_t res;
	ccomComm_t comm;
	double t0 = t_now();

	/* Forked up front (no root thread exists yet): 2 ranks per case. */
	(void)nranks;
	rank %= 2;
	cfg.timeoutSec = 10;
	res = ccomCommInitRankConfig(&comm, 2, *uid, rank, &cfg);
	if (res != ccomSuccess) {
		const char *m = ccomGetLastError(NULL);

		T_CHECK(m && strlen(m) > 20, "rank %d: %s without a message", rank,
			ccomGetErrorString(res));
		printf("  rank %d: %s after %.1f s: %.200s\n", rank, ccomGetErrorString(res),
		       t_now() - t0, m);
	}
	ccomCommDestroy(comm);
	return T_PASS;
}

/* Hand @uid to forked ranks @r and @r + 1 and wait up to @secs for both; 0 if both exited 0. */
static int run_pair(struct t_ranks *t, int r, const ccomUniqueId *uid, double secs)
{
	double end = t_now() + secs;
	int i, left = 2, bad = 0;

	for (i = r; i < r + 2; i++) {
		if (write(t->wfds[i], uid, sizeof(*uid)) != (ssize_t)sizeof(*uid))
			bad++;
		close(t->wfds[i]);
		t->wfds[i] = -1;
	}
	while (left && t_now() < end) {
		for (i = r; i < r + 2; i++) {
			int st;

			if (t->pids[i] <= 0 || waitpid(t->pids[i], &st, WNOHANG) != t->pids[i])
				continue;
			bad += !WIFEXITED(st) || WEXITSTATUS(st);
			t->pids[i] = 0;
			left--;
		}
		usleep(5000);
	}
	for (i = r; i < r + 2; i++) {
		if (t->pids[i] <= 0)
			continue;
		fprintf(stderr, "rank %d still running after %.0f s: killed\n", i - r, secs);
		kill(t->pids[i], SIGKILL);
		waitpid(t->pids[i], NULL, 0);
		t->pids[i] = 0;
		bad++;
	}
	return bad;
}

static int fuzz_root(int only)
{
	int order[H_NUM], i, k;
	struct t_ranks t;
	ccomUniqueId uid;

	for (i = 0; i < H_NUM; i++)
		order[i] = i;
	for (i = H_NUM - 1; i > 0; i--) {
		int j = (int)rnd((uint64_t)i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	T_CHECK(!t_ranks_start(&t, 2 * H_NUM, real_rank, &uid, &uid), "fork");
	for (k = 0; k < H_NUM; k++) {
		enum hostile c = (enum hostile)order[k];
		struct ccom_bs_id b;
		long rss0, rss1;
		int fd;

		if (only >= 0 && (int)c != only) {
			/* Not run: an invalid id makes its ranks return at once. */
			memset(&uid, 0, sizeof(uid));
			T_CHECK(!run_pair(&t, 2 * k, &uid, 30), "ranks of a case not run");
			continue;
		}
		printf("root, %s:\n", hostile_names[c]);
		fflush(stdout);
		T_CCOM(ccomGetUniqueId(&uid), ccomSuccess);
		memcpy(&b, uid.internal, sizeof(b));
		rss0 = t_rss_kb();
		fd = hostile_checkin(&b, c);
		T_CHECK(fd >= 0, "%s: could not authenticate with the root", hostile_names[c]);
		usleep(300000);	/* the root reads what we sent before the ranks come */
		rss1 = t_rss_kb();
		T_CHECK(rss1 - rss0 < 64 * 1024, "%s: the root's process grew by %ld KiB",
			hostile_names[c], rss1 - rss0);
		T_CHECK(!run_pair(&t, 2 * k, &uid, 60), "%s: a real rank failed or hung",
			hostile_names[c]);
		close(fd);
		printf("  root process grew by %ld KiB\n", rss1 - rss0);
	}
	free(t.pids);
	free(t.wfds);
	return T_PASS;
}

/* ---- hostile frames on a real p2p connection ------------------------------ */

static const uint64_t frame_sizes[] = { 1ULL << 40, 1ULL << 33, 0 /* cap + 1 */ };

struct frame_arg {
	int which;
	ccomUniqueId id;
};

static int frame_rank(int rank, int nranks, void *arg)
{
	const struct frame_arg *fa = arg;
	int which = fa->which, v = 0, rc;
	ccomUniqueId uid = fa->id;
	struct ccom_bootstrap *bs;
	ccomComm_t comm;
	double t0;

	T_CCOM(ccomCommInitRank(&comm, nranks, uid, rank), ccomSuccess);
	bs = comm->bootstrap;
	/* Rank 2 is out of init (its connection from rank 0 is idle) before the frame. */
	T_CHECK(!ccom_bootstrap_barrier(bs), "rank %d: barrier: %s", rank, ccomGetLastError(NULL));
	if (rank == 0) {
		struct ccom_bs_frame f = { .tag = CCOM_BOOTSTRAP_TAG_USER_BASE + 5 };
		char junk[256];

		f.size = frame_sizes[which] ? frame_sizes[which] : ccom_bs_max_frame(bs) + 1;
		memset(junk, 0x5a, sizeof(junk));
		T_CHECK(bs->send_fds[2] >= 0, "rank 0 has no p2p connection to rank 2 after init");
		T_CHECK(send(bs->send_fds[2], &f, sizeof(f), MSG_NOSIGNAL) == (ssize_t)sizeof(f),
			"send the frame header");
		send(bs->send_fds[2], junk, sizeof(junk), MSG_NOSIGNAL);
	}
	if (rank == 2) {
		t0 = t_now();
		rc = ccom_bootstrap_recv(bs, 0, CCOM_BOOTSTRAP_TAG_USER_BASE + 5, &v, sizeof(v));
		T_CHECK(rc == -EMSGSIZE, "rank 2: the receive from rank 0 gave %d (%s)", rc,
			ccomGetLastError(NULL));
		T_CHECK(t_has_words(ccomGetLastError(NULL), "size limit", NULL), "message: %s",
			ccomGetLastError(NULL));
		T_CHECK(t_now() - t0 < 10, "rank 2: the receive failed only after %.1f s",
			t_now() - t0);
		printf("  rank 2: %s (%.2f s)\n", ccomGetLastError(NULL), t_now() - t0);
	}
	/* The connection between ranks 1 and 2 still works. */
	if (rank >= 1) {
		int peer = 3 - rank, got = -1;

		v = rank * 11;
		T_CHECK(!ccom_bootstrap_send(bs, peer, CCOM_BOOTSTRAP_TAG_USER_BASE + 6, &v, sizeof(v)),
			"rank %d: send: %s", rank, ccomGetLastError(NULL));
		T_CHECK(!ccom_bootstrap_recv(bs, peer, CCOM_BOOTSTRAP_TAG_USER_BASE + 6, &got,
					     sizeof(got)) && got == peer * 11,
			"rank %d: recv from %d: %s", rank, peer, ccomGetLastError(NULL));
	}
	ccomCommAbort(comm);
	return T_PASS;
}

static int fuzz_frames(void)
{
	struct frame_arg arg;
	size_t i;
	int codes[3], before;

	for (i = 0; i < sizeof(frame_sizes) / sizeof(frame_sizes[0]); i++) {
		before = t_file_lines(logf, "dropped the p2p connection from rank 0", NULL);
		arg.which = (int)i;
		printf("rank 2, a frame of %s bytes from rank 0:\n",
		       i == 0 ? "2^40" : i == 1 ? "2^33" : "the cap + 1");
		fflush(stdout);
		T_CHECK(!t_fork_ranks_id(3, frame_rank, &arg, codes, 90, &arg.id),
			"ranks exited %d %d %d", codes[0], codes[1], codes[2]);
		T_CHECK(t_file_lines(logf, "dropped the p2p connection from rank 0", NULL) ==
			(before < 0 ? 0 : before) + 1,
			"rank 2 did not log the dropped connection once (see %s)", logf);
	}
	return T_PASS;
}

/* ---- a reply before the proof ------------------------------------------------ */

/* A listener on 127.0.0.1, any port: its fd, its address in *@a. */
static int listen_local(union ccom_sockaddr *a)
{
	int fd;

	memset(a, 0, sizeof(*a));
	a->sin.sin_family = AF_INET;
	a->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ccom_sock_listen(a, 16, &fd))
		return -1;
	return fd;
}

/* An fd accepted on @lfd within @secs, or -1. */
static int accept_within(int lfd, double secs)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, (int)(secs * 1000)) != 1)
		return -1;
	return accept(lfd, NULL, NULL);
}

static int refusal_rank(int rank, int nranks, void *arg)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomUniqueId *uid = arg;
	ccomResult_t res;
	ccomComm_t comm;

	(void)rank;
	(void)nranks;
	cfg.timeoutSec = 10;
	res = ccomCommInitRankConfig(&comm, 2, *uid, 0, &cfg);
	T_CHECK(res == ccomRemoteError, "the rank got %s: %s", ccomGetErrorString(res),
		ccomGetLastError(NULL));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "authentication failed", "before proving",
			    NULL), "message: %s", ccomGetLastError(NULL));
	printf("  rank 0: %s\n", ccomGetLastError(NULL));
	ccomCommDestroy(comm);
	return T_PASS;
}

/*
 * A "root" that answers the rank's first message with a success (err 0) and a
 * ring neighbour instead of its proof: the rank must not connect there.
 */
static int fuzz_refusal(void)
{
	union ccom_sockaddr ra, na;
	struct ccom_bs_auth_hello ah;
	struct ccom_bs_reply rep;
	struct ccom_bs_id b;
	struct t_ranks t;
	ccomUniqueId uid;
	int lfd = listen_local(&ra), nfd = listen_local(&na), fd, codes[1], bad;
	size_t i;

	printf("a reply of success before the proof:\n");
	T_CHECK(lfd >= 0 && nfd >= 0, "listen on 127.0.0.1");
	memset(&b, 0, sizeof(b));
	b.magic = 0x1234567890abcdefULL;
	b.id_version = CCOM_BS_ID_VERSION;
	b.root = ra;
	for (i = 0; i < sizeof(b.secret); i++)
		b.secret[i] = (uint8_t)rnd(256);
	ccom_bs_id_encode(&b, &uid);
	T_CHECK(!t_ranks_start(&t, 1, refusal_rank, &uid, &uid), "fork");
	t_ranks_release(&t, &uid);
	fd = accept_within(lfd, 20);
	T_CHECK(fd >= 0, "the rank never connected to the root");
	T_CHECK(recv(fd, &ah, sizeof(ah), MSG_WAITALL) == (ssize_t)sizeof(ah), "its hello");
	memset(&rep, 0, sizeof(rep));
	rep.magic = b.magic;
	rep.type = CCOM_BS_REPLY;
	rep.next = na;
	T_CHECK(send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) == (ssize_t)sizeof(rep), "the reply");
	bad = accept_within(nfd, 3) >= 0;
	T_CHECK(!bad, "the rank connected to the ring neighbour an unproven reply named");
	T_CHECK(!t_ranks_wait(&t, codes, 60), "the rank exited %d", codes[0]);
	close(fd);
	close(lfd);
	close(nfd);
	return T_PASS;
}

static ccomUniqueId two_ids[2];	/* ids[0] a fake root 0's, ids[1] a real root's */

static int subroot_rank(int rank, int nranks, void *arg)
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomResult_t res;
	ccomComm_t comm;

	(void)rank;
	(void)nranks;
	(void)arg;
	cfg.timeoutSec = 10;
	res = ccomCommInitRankScalable(&comm, 2, 1, 2, two_ids, &cfg);
	T_CHECK(res != ccomSuccess, "rank 1 initialised on a table root 0 never proved");
	T_CHECK(t_has_words(ccomGetLastError(NULL), "root 0 failed authentication", NULL),
		"message: %s", ccomGetLastError(NULL));
	printf("  rank 1: %s\n", ccomGetLastError(NULL));
	ccomCommDestroy(comm);
	return T_PASS;
}

/*
 * Root 1 of 2 reporting to a "root 0" that answers its hello with a success
 * and every rank's address instead of its proof: root 1 must not adopt that
 * table (its rank fails naming root 0's failed authentication).
 */
static int fuzz_subroot_refusal(void)
{
	union ccom_sockaddr ra, na, tbl[2];
	struct ccom_bs_auth_hello ah;
	struct ccom_bs_reply rep;
	struct ccom_bs_id b;
	struct t_ranks t;
	int lfd = listen_local(&ra), nfd = listen_local(&na), fd, codes[1], bad;
	size_t i;

	printf("root 1 of 2, a reply of success from root 0 before its proof:\n");
	T_CHECK(lfd >= 0 && nfd >= 0, "listen on 127.0.0.1");
	memset(&b, 0, sizeof(b));
	b.magic = 0x0fedcba987654321ULL;
	b.id_version = CCOM_BS_ID_VERSION;
	b.root = ra;
	for (i = 0; i < sizeof(b.secret); i++)
		b.secret[i] = (uint8_t)rnd(256);
	ccom_bs_id_encode(&b, &two_ids[0]);
	T_CHECK(!t_ranks_start(&t, 1, subroot_rank, NULL, &two_ids[1]), "fork");
	T_CCOM(ccomGetUniqueId(&two_ids[1]), ccomSuccess);
	t_ranks_release(&t, &two_ids[1]);
	fd = accept_within(lfd, 20);
	T_CHECK(fd >= 0, "root 1 never reported to root 0");
	T_CHECK(recv(fd, &ah, sizeof(ah), MSG_WAITALL) == (ssize_t)sizeof(ah), "its hello");
	memset(&rep, 0, sizeof(rep));
	rep.magic = b.magic;
	rep.type = CCOM_BS_REPLY;
	rep.msg_len = sizeof(tbl);
	tbl[0] = tbl[1] = na;
	T_CHECK(send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) == (ssize_t)sizeof(rep) &&
		send(fd, tbl, sizeof(tbl), MSG_NOSIGNAL) == (ssize_t)sizeof(tbl), "the reply");
	bad = accept_within(nfd, 3) >= 0;
	T_CHECK(!bad, "rank 1 connected to an address of root 0's unproven table");
	T_CHECK(!t_ranks_wait(&t, codes, 60), "rank 1 exited %d", codes[0]);
	close(fd);
	close(lfd);
	close(nfd);
	return T_PASS;
}

int main(int argc, char **argv)
{
	uint64_t seed = getenv("CCOM_BOOT_FUZZ_SEED") ?
				strtoull(getenv("CCOM_BOOT_FUZZ_SEED"), NULL, 0) :
				(uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();

	rnd_s = seed;
	printf("boot_fuzz_insider: seed=%llu (CCOM_BOOT_FUZZ_SEED reproduces it)\n",
	       (unsigned long long)seed);
	snprintf(logf, sizeof(logf), "/tmp/ccom-boot-insider-%d.log", (int)getpid());
	unlink(logf);
	setenv("CCOM_DEBUG_FILE", logf, 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "20", 1);
	/* "root [CASE]", "frames" or "refusal" runs one part (CASE: an index of enum hostile). */
	if ((argc < 2 || !strcmp(argv[1], "root")) && fuzz_root(argc > 2 ? atoi(argv[2]) : -1))
		return T_FAIL;
	if ((argc < 2 || !strcmp(argv[1], "frames")) && fuzz_frames())
		return T_FAIL;
	if ((argc < 2 || !strcmp(argv[1], "refusal")) && (fuzz_refusal() || fuzz_subroot_refusal()))
		return T_FAIL;
	unlink(logf);
	printf("every hostile authenticated frame was refused or failed the job cleanly\n");
	return T_PASS;
}
