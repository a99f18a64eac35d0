// SPDX-License-Identifier: MIT
/*
 * Description: seeded fuzzing of the bootstrap ports while a job
 * initialises and runs collectives.  A fuzzer process connects to the
 * root's listening port (during init) and to every rank's bootstrap listen
 * port (during collectives) and sends random and mutated frames: random
 * bytes, truncated check-in/hello headers, wrong magics, the right magic
 * with an invalid type, size, rank or abi, huge frame lengths after an
 * invalid hello, slow drips, silent connections and connect-and-close
 * storms.  Meanwhile the 4 ranks init, run AllReduce/Broadcast checks and
 * bootstrap send/recv/barriers.  Pass criteria: every rank initialises
 * within CCOM_BOOTSTRAP_TIMEOUT and every collective result is right; no
 * rank crashes or hangs; every fuzzer connection to a rank's port is
 * dropped with exactly one log line; the root logs at most one line per
 * connection; after the fuzzer has closed everything, a rank holds no
 * more socket fds than right after init (no fd leak).
 *
 * The seed is printed (CCOM_BOOT_FUZZ_SEED=S reproduces the fuzzer's
 * sequence; scheduling still varies); CCOM_BOOT_FUZZ_SECS sets how long the
 * ranks are fuzzed (default 6).
 *
 * Insiders: the fuzzer knows the magics (they travel in clear), not the
 * unique id's secret.  It also sends what only the magic was needed for
 * before the bootstrap authenticated its connections (wire version 2):
 * well-formed check-ins of wire version 1 to the root (a real rank, a
 * skewed ABI: each used to fail the job), the old p2p hello with a real
 * rank and frames to the ranks' ports (it used to take that rank's slot
 * and stall the job), and complete handshakes answered with a MAC under a
 * wrong key.  All of them must be dropped, the ones that answered a
 * challenge with "authentication failed" (one line each at the ranks),
 * and the job must init and run as without them.
 */
#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <sys/mman.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "test_util.h"

#define NR 4
#define MAXSLOW 24

static ccomUniqueId id;
static int addr_pipe[2];	/* rank 0 -> fuzzer: listen addresses + comm magic */
static int done_pipe[2];	/* fuzzer -> ranks: closed when the fuzzer is done */

struct fz_addrs {
	uint64_t comm_magic;
	struct sockaddr_in6 listen[NR];
};

#define NCLASSES 12

struct fz_stats {
	int root_conns;		/* connections accepted by the kernel at the root's port */
	int root_refused;
	int rank_conns[NR];
	int rank_wrong_mac;	/* wrong answers sent to a rank's challenge */
	int root_wrong_mac;
	int root_v1_refused;	/* forged wire version 1 check-ins answered with a refusal */
	int frames[NCLASSES];	/* per class */
	uint64_t seed;
	int fuzzer_done;
};

static struct fz_stats *st;

static uint64_t rnd_s;

static uint64_t rnd(uint64_t n)
{
	uint64_t z = (rnd_s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? z % n : z;
}

static int count_socket_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[128];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t l;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l > 0) {
			link[l] = 0;
			n += !strncmp(link, "socket:", 7);
		}
	}
	closedir(d);
	return n;
}

static int fuzzer_done(void)
{
	struct pollfd p = { .fd = done_pipe[0], .events = POLLIN };
	char c;

	return poll(&p, 1, 0) == 1 && read(done_pipe[0], &c, 1) == 0;
}

static int rank_main(int rank, int nranks, void *arg);

/* ---- the fuzzer ---------------------------------------------------------- */

struct slow {
	int fd;
	double until;
	double next;
	int drip;	/* bytes still to drip; 0 = silent */
	int target;	/* -1 root, else rank */
};

static int fz_connect(const struct sockaddr *a, socklen_t len)
{
	int fd = socket(a->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, a, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void fz_send(int fd, const void *b, size_t n)
{
	if (send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return;	/* the peer dropped us already: fine */
}

/* Read @len bytes within 1 s; 0 or -1. */
static int fz_recv(int fd, void *b, size_t len)
{
	size_t got = 0;
	double end = t_now() + 1;

	while (got < len && t_now() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, (char *)b + got, len - got, 0);
		if (n <= 0)
			return -1;
		got += n;
	}
	return got == len ? 0 : -1;
}

/*
 * A complete handshake as @who in @role, answered with a MAC under a random
 * key (the insider knows the magic, not the secret).  1 if the wrong answer
 * was sent after a real challenge.
 */
static int fz_wrong_key(int fd, uint64_t magic, uint32_t role, int32_t who)
{
	struct ccom_bs_auth_challenge ch;
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_auth_hello ah;
	uint8_t key[CCOM_BS_KEY_BYTES];
	size_t i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)rnd(256);
	ccom_bs_auth_hello_init(&ah, magic, role, who);
	fz_send(fd, &ah, sizeof(ah));
	if (fz_recv(fd, &ch, sizeof(ch)) || ch.type != CCOM_BS_CHALLENGE)
		return 0;
	/* The acceptor's proof does not verify under the wrong key either. */
	if (ccom_bs_auth_challenge_ok(key, &ah, &ch))
		return -1;
	ccom_bs_auth_answer_init(&ans, key, &ah, ch.nonce);
	return send(fd, &ans, sizeof(ans), MSG_NOSIGNAL) == (ssize_t)sizeof(ans);
}

/*
 * One fuzz connection to @target (-1 = root) with magic @magic.  Returns
 * the fd if it is to be kept open (slow drip / silent), else -1.
 */
static int fz_one(int target, const struct sockaddr *a, socklen_t alen, uint64_t magic,
		  struct slow *sl)
{
	unsigned char buf[700];
	struct ccom_bs_hello h;
	struct ccom_bs_auth_hello ch;
	struct { uint64_t magic; uint32_t type; int32_t rank; } v1;	/* wire 1's p2p hello */
	struct ccom_bs_frame fr;
	int cls = (int)rnd(NCLASSES), fd, i, n, rc;

	fd = fz_connect(a, alen);
	if (fd < 0) {
		if (target < 0)
			st->root_refused++;
		return -1;
	}
	if (target < 0)
		st->root_conns++;
	else
		st->rank_conns[target]++;
	st->frames[cls]++;
	memset(&h, 0, sizeof(h));
	h.magic = magic;
	h.type = CCOM_BS_HELLO;
	h.abi = ccom_abi_id();
	h.size = sizeof(h);
	h.rank = (int32_t)rnd(NR);
	h.nranks = NR;
	h.version = ccom_version_code();
	h.build_hash = ccom_build_hash();
	h.remaining_ms = 30000;
	ccom_bs_auth_hello_init(&ch, magic, rnd(2) ? CCOM_BS_P2P : CCOM_BS_RING, (int32_t)rnd(NR));
	switch (cls) {
	case 0:	/* connect and close at once: a storm of them */
		close(fd);
		for (i = 0, n = (int)rnd(8); i < n; i++) {
			fd = fz_connect(a, alen);
			if (fd < 0)
				break;
			if (target < 0)
				st->root_conns++;
			else
				st->rank_conns[target]++;
			close(fd);
		}
		return -1;
	case 1:	/* random bytes */
		n = (int)rnd(sizeof(buf));
		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)rnd(256);
		fz_send(fd, buf, n);
		break;
	case 2:	/* wrong magic, the rest well-formed */
		h.magic = ch.magic = magic ^ (1ULL << rnd(64));
		if (target < 0 && rnd(2))
			fz_send(fd, &h, sizeof(h));
		else
			fz_send(fd, &ch, sizeof(ch));
		break;
	case 3:	/* truncated header, then close */
		if (target < 0 && rnd(2))
			fz_send(fd, &h, rnd(sizeof(h)));
		else
			fz_send(fd, &ch, rnd(sizeof(ch)));
		break;
	case 4:	/* right magic, invalid type / size / wire version / role */
		if (target < 0 && rnd(2)) {
			if (rnd(2))
				h.type = (uint32_t)rnd(0);
			else
				h.size = (uint32_t)rnd(0) | 1;
			if (h.type == CCOM_BS_HELLO && h.size == sizeof(h))
				h.size++;
			fz_send(fd, &h, sizeof(h));
		} else {
			switch (rnd(3)) {
			case 0:
				ch.type = (uint32_t)rnd(0);
				if (ch.type == CCOM_BS_AUTH)
					ch.type = 0;
				break;
			case 1:
				ch.wire = CCOM_BS_WIRE_VERSION + 1 + (uint32_t)rnd(100);
				break;
			default:
				ch.role = (uint32_t)rnd(0);
				if (ch.role == CCOM_BS_P2P || ch.role == CCOM_BS_RING ||
				    ch.role == CCOM_BS_HELLO || ch.role == CCOM_BS_HELLO_MULTI ||
				    ch.role == CCOM_BS_SUBROOT)
					ch.role = 0;
				break;
			}
			fz_send(fd, &ch, sizeof(ch));
			fz_recv(fd, buf, 1);	/* a refusal, or the close */
		}
		break;
	case 5:	/* right magic, rank out of range / a reply where a hello belongs */
		if (target < 0) {
			h.type = CCOM_BS_REPLY;	/* a root must not take a reply as a hello */
			fz_send(fd, &h, sizeof(h));
		} else {
			ch.who = rnd(2) ? -1 - (int32_t)rnd(1000) : NR + (int32_t)rnd(1000);
			fz_send(fd, &ch, sizeof(ch));
		}
		break;
	case 6:	/* an invalid hello, then a frame with a huge length and data */
		ch.type = 0x7fffffff;
		h.type = 0x7fffffff;
		fr.tag = (uint32_t)rnd(0);
		fr.pad = 0;
		fr.size = rnd(2) ? ~0ULL - rnd(100) : (1ULL << 34) + rnd(1000);
		if (target < 0)
			fz_send(fd, &h, sizeof(h));
		else
			fz_send(fd, &ch, sizeof(ch));
		fz_send(fd, &fr, sizeof(fr));
		fz_send(fd, buf, rnd(sizeof(buf)));
		break;
	case 7:	/* slow drip of a plausible header, kept open */
	case 8:	/* silent, kept open */
		sl->fd = fd;
		sl->target = target;
		sl->until = t_now() + 0.3 + rnd(6000) / 1000.0;
		sl->next = t_now();
		sl->drip = cls == 7 ? 1 + (int)rnd(sizeof(ch)) : 0;
		if (cls == 7) {
			/* The magic first, then one byte every 100 ms. */
			fz_send(fd, &magic, sizeof(magic));
		}
		return fd;
	case 9:	/* insider: a full handshake with a wrong key, then frames */
		rc = fz_wrong_key(fd, magic, target < 0 ? CCOM_BS_HELLO : CCOM_BS_P2P,
				  (int32_t)rnd(NR));
		if (rc < 0) {
			fprintf(stderr, "boot_fuzz: an acceptor's proof verified under a random key\n");
			st->frames[NCLASSES - 1] = -1000000;
		}
		if (rc > 0 && target < 0)
			st->root_wrong_mac++;
		else if (rc > 0)
			st->rank_wrong_mac++;
		if (target < 0) {
			fz_send(fd, &h, sizeof(h));
		} else {
			fr.tag = (uint32_t)rnd(0);
			fr.pad = 0;
			fr.size = rnd(64);
			fz_send(fd, &fr, sizeof(fr));
			fz_send(fd, buf, fr.size);
		}
		fz_recv(fd, buf, 1);	/* wait for the drop */
		break;
	case 10: /* insider: what the magic alone used to be enough for (wire version 1) */
		if (target < 0) {
			/* A well-formed check-in of a real rank, with a skewed ABI half the time. */
			if (rnd(2))
				h.abi = 77;
			fz_send(fd, &h, sizeof(h));
			if (!fz_recv(fd, buf, sizeof(struct ccom_bs_reply)) &&
			    ((struct ccom_bs_reply *)buf)->type == CCOM_BS_REPLY &&
			    ((struct ccom_bs_reply *)buf)->err)
				st->root_v1_refused++;
		} else {
			v1.magic = magic;
			v1.type = CCOM_BS_P2P;
			v1.rank = (int32_t)rnd(NR);
			fz_send(fd, &v1, sizeof(v1));
			fr.tag = (uint32_t)rnd(0);
			fr.pad = 0;
			fr.size = rnd(64);
			fz_send(fd, &fr, sizeof(fr));
			fz_send(fd, buf, fr.size);
		}
		break;
	default: /* insider: a correct hello, then nothing (holds a pending slot until the timeout) */
		fz_send(fd, &ch, sizeof(ch));
		if (target < 0)
			break;
		sl->fd = fd;
		sl->target = target;
		sl->until = t_now() + 0.3 + rnd(3000) / 1000.0;
		sl->next = t_now();
		sl->drip = 0;
		return fd;
	}
	/* Give the peer a moment to read before the close (it may drop us first). */
	if (rnd(3) == 0)
		usleep(1000 * rnd(20));
	close(fd);
	return -1;
}

static void slow_tick(struct slow *s, int n, int force_close)
{
	int i;
	double now = t_now();

	for (i = 0; i < n; i++) {
		char c;

		if (s[i].fd < 0)
			continue;
		if (force_close || now >= s[i].until) {
			close(s[i].fd);
			s[i].fd = -1;
			continue;
		}
		if (s[i].drip > 0 && now >= s[i].next) {
			c = (char)rnd(256);
			fz_send(s[i].fd, &c, 1);
			s[i].drip--;
			s[i].next = now + 0.1;
		}
	}
}

static int fuzzer_main(double secs)
{
	struct ccom_bs_id bid;
	struct fz_addrs ad;
	struct slow sl[MAXSLOW];
	int have_addrs = 0, i, fd;
	double end = 0, start = t_now();
	struct pollfd p = { .fd = addr_pipe[0], .events = POLLIN };

	close(done_pipe[0]);
	close(addr_pipe[1]);
	memcpy(&bid, id.internal, sizeof(bid));
	for (i = 0; i < MAXSLOW; i++)
		sl[i].fd = -1;
	for (;;) {
		int target, free_slot = -1;
		const struct sockaddr *a;
		socklen_t alen;
		uint64_t magic;

		if (!have_addrs && poll(&p, 1, 0) == 1) {
			if (read(addr_pipe[0], &ad, sizeof(ad)) != sizeof(ad))
				break;	/* rank 0 failed its init: nothing more to fuzz */
			have_addrs = 1;
			end = t_now() + secs;
		}
		if (have_addrs && t_now() > end)
			break;
		if (!have_addrs && t_now() - start > 60)
			break;
		/* During init: the root. After: mostly the ranks, sometimes the (gone) root. */
		target = have_addrs && rnd(10) ? (int)rnd(NR) : -1;
		if (target < 0) {
			a = &bid.root.sa;
			alen = ccom_addr_len(&bid.root);
			magic = bid.magic;
		} else {
			a = (const struct sockaddr *)&ad.listen[target];
			alen = sizeof(ad.listen[target]);
			magic = ad.comm_magic;
		}
		for (i = 0; i < MAXSLOW; i++)
			if (sl[i].fd < 0) {
				free_slot = i;
				break;
			}
		if (free_slot < 0) {
			slow_tick(sl, MAXSLOW, 0);
			usleep(5000);
			continue;
		}
		fd = fz_one(target, a, alen, magic, &sl[free_slot]);
		(void)fd;
		slow_tick(sl, MAXSLOW, 0);
		usleep(1000 * rnd(8));
	}
	slow_tick(sl, MAXSLOW, 1);
	st->fuzzer_done = 1;
	close(done_pipe[1]);	/* the ranks see EOF */
	return 0;
}

/* ---- the ranks --------------------------------------------------------------- */

static int run_collectives(ccomComm_t comm, int rank, int nranks, int iter)
{
	size_t count = 1 + (size_t)((iter * 7919 + 13) % 70000), i;
	int32_t *in = malloc(count * 4), *out = malloc(count * 4);
	int v, got;

	T_CHECK(in && out, "out of memory");
	for (i = 0; i < count; i++)
		in[i] = (int32_t)(rank + 1) * (int32_t)((i + iter) % 97);
	T_CCOM(ccomAllReduce(in, out, count, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		T_CHECK(out[i] == (int32_t)(nranks * (nranks + 1) / 2) * (int32_t)((i + iter) % 97),
			"iter %d: allreduce[%zu] = %d", iter, i, out[i]);
	if (rank == iter % nranks)
		for (i = 0; i < count; i++)
			out[i] = (int32_t)(i * 3 + iter);
	T_CCOM(ccomBroadcast(out, out, count, ccomInt32, iter % nranks, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < count; i++)
		T_CHECK(out[i] == (int32_t)(i * 3 + iter), "iter %d: broadcast[%zu] = %d", iter, i,
			out[i]);
	/* Bootstrap traffic: this is what reads the fuzzed listen sockets. */
	v = rank * 1000 + iter;
	T_CHECK(!ccom_bootstrap_send(comm->bootstrap, (rank + 1) % nranks,
				     CCOM_BOOTSTRAP_TAG_USER_BASE + 1, &v, sizeof(v)),
		"send: %s", ccomGetLastError(NULL));
	T_CHECK(!ccom_bootstrap_recv(comm->bootstrap, (rank + nranks - 1) % nranks,
				     CCOM_BOOTSTRAP_TAG_USER_BASE + 1, &got, sizeof(got)),
		"recv: %s", ccomGetLastError(NULL));
	T_CHECK(got == ((rank + nranks - 1) % nranks) * 1000 + iter, "iter %d: got %d", iter, got);
	T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s", ccomGetLastError(NULL));
	free(in);
	free(out);
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	double secs = *(double *)arg, t0;
	int iter = 0, done = 0, base, after, i;
	ccomComm_t comm;

	if (rank == NR)
		return fuzzer_main(secs);
	nranks = NR;
	close(done_pipe[1]);
	close(addr_pipe[0]);
	/* Staggered check-ins keep the root listening (and fuzzed) for ~1.5 s. */
	usleep(500000 * rank);
	t0 = t_now();
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	T_CHECK(t_now() - t0 < 30, "rank %d: init took %.1f s", rank, t_now() - t0);
	if (rank == 0) {
		struct fz_addrs ad;

		ad.comm_magic = comm->magic;
		for (i = 0; i < nranks; i++)
			memcpy(&ad.listen[i], &comm->peers[i].listen_addr, sizeof(ad.listen[i]));
		T_CHECK(write(addr_pipe[1], &ad, sizeof(ad)) == sizeof(ad), "addr pipe");
	}
	close(addr_pipe[1]);
	T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s", ccomGetLastError(NULL));
	base = count_socket_fds();
	/* Until the fuzzer is done, and all ranks agree that it is (a barrier per round). */
	while (!done) {
		int mine, all[NR];

		if (run_collectives(comm, rank, nranks, iter++))
			return T_FAIL;
		/* Decided from the gathered values only: every rank must agree. */
		mine = fuzzer_done() || st->fuzzer_done;
		T_CCOM(ccomAllGather(&mine, all, 1, ccomInt32, comm, NULL), ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		done = 0;
		for (i = 0; i < nranks; i++)
			done |= all[i];
		T_CHECK(t_now() - t0 < 120, "rank %d: still not done after 120 s", rank);
	}
	/* Let the rank drop what the fuzzer left: EOFs are read on the next progress. */
	for (i = 0; i < 5; i++) {
		usleep(100000);
		T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s",
			ccomGetLastError(NULL));
	}
	after = count_socket_fds();
	T_CHECK(after <= base, "rank %d: %d socket fds after the fuzzing, %d before (leak)", rank,
		after, base);
	printf("rank %d: %d rounds of collectives under fuzzing, socket fds %d -> %d\n", rank, iter,
	       base, after);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

int main(void)
{
	struct t_ranks t;
	char log[128];
	int codes[NR + 1], i, rank_lines, root_lines, rank_conns = 0, rank_auth, root_auth;
	double secs = getenv("CCOM_BOOT_FUZZ_SECS") ? atof(getenv("CCOM_BOOT_FUZZ_SECS")) : 6;
	uint64_t seed;

	seed = getenv("CCOM_BOOT_FUZZ_SEED") ? strtoull(getenv("CCOM_BOOT_FUZZ_SEED"), NULL, 0) :
					       (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	rnd_s = seed;
	printf("boot_fuzz: seed=%llu (CCOM_BOOT_FUZZ_SEED=%llu reproduces the fuzzer's sequence), %.0f s of rank fuzzing\n",
	       (unsigned long long)seed, (unsigned long long)seed, secs);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_CHECK(st != MAP_FAILED, "mmap");
	memset(st, 0, sizeof(*st));
	st->seed = seed;
	snprintf(log, sizeof(log), "/tmp/ccom-boot-fuzz-%d.log", (int)getpid());
	unlink(log);
	setenv("CCOM_DEBUG_FILE", log, 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "30", 1);
	T_CHECK(!pipe(addr_pipe) && !pipe(done_pipe), "pipe");
	/* Ranks and the fuzzer (index NR) are forked before the root thread starts. */
	T_CHECK(!t_ranks_start(&t, NR + 1, rank_main, &secs, &id), "fork");
	close(addr_pipe[0]);
	close(addr_pipe[1]);
	close(done_pipe[0]);
	close(done_pipe[1]);
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	t_ranks_release(&t, &id);
	i = t_ranks_wait(&t, codes, 150);
	T_CHECK(!i, "ranks/fuzzer failed: %d %d %d %d / fuzzer %d", codes[0], codes[1], codes[2],
		codes[3], codes[4]);
	for (i = 0; i < NR; i++)
		rank_conns += st->rank_conns[i];
	rank_lines = t_file_lines(log, "Bootstrap: rank", "dropped");
	root_lines = t_file_lines(log, "Bootstrap root: dropped connection", NULL);
	rank_auth = t_file_lines(log, "Bootstrap: rank", CCOM_BS_AUTH_FAILED);
	root_auth = t_file_lines(log, "Bootstrap root: dropped connection", CCOM_BS_AUTH_FAILED);
	printf("boot_fuzz: root: %d connections (%d refused after it finished), %d dropped lines; ranks: %d connections, %d dropped lines\n",
	       st->root_conns, st->root_refused, root_lines, rank_conns, rank_lines);
	printf("boot_fuzz: frames per class:");
	for (i = 0; i < NCLASSES; i++)
		printf(" %d", st->frames[i]);
	printf("\n");
	printf("boot_fuzz: insiders: %d wrong-key answers to ranks (%d logged '%s'), %d to the root (%d logged), %d forged wire-1 check-ins refused by the root\n",
	       st->rank_wrong_mac, rank_auth, CCOM_BS_AUTH_FAILED, st->root_wrong_mac, root_auth,
	       st->root_v1_refused);
	T_CHECK(st->frames[NCLASSES - 1] >= 0, "a proof verified under a wrong key");
	T_CHECK(st->rank_wrong_mac > 0 && rank_auth == st->rank_wrong_mac,
		"ranks logged %d authentication failures for %d wrong-key answers (see %s)",
		rank_auth, st->rank_wrong_mac, log);
	T_CHECK(root_auth <= st->root_wrong_mac, "root logged %d authentication failures for %d wrong-key answers",
		root_auth, st->root_wrong_mac);
	T_CHECK(rank_conns > 50 && st->root_conns > 10, "too little fuzzing to mean anything");
	T_CHECK(rank_lines == rank_conns,
		"ranks logged %d dropped connections for %d fuzz connections (see %s)", rank_lines,
		rank_conns, log);
	T_CHECK(root_lines <= st->root_conns && root_lines > 0,
		"root logged %d dropped connections for %d fuzz connections (see %s)", root_lines,
		st->root_conns, log);
	unlink(log);
	printf("job initialised and its collectives passed under bootstrap fuzzing\n");
	return T_PASS;
}
