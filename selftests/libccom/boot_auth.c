// SPDX-License-Identifier: MIT
/*
 * Description: the authentication of bootstrap connections (wire version
 * 2, Documentation/libccom/bootstrap.rst).  (1) The keyed hash against the
 * published test vectors: SHA-256 (FIPS 180-2 appendix B: "abc", the
 * 448-bit message, one million 'a' fed in odd-sized pieces; and the empty
 * message) and HMAC-SHA-256 (RFC 4231 test cases 1-4, 6, 7); the
 * challenge-response's own properties (a wrong key, a flipped bit, a proof
 * reflected in the other direction, an echoed nonce all fail; the key wrap
 * round-trips).  (2) A 3-rank job whose root, before the ranks check in,
 * gets: a connector with a wrong secret that answers the challenge (the
 * root closes it and logs "authentication failed (the peer does not hold
 * this job's unique id)" with the peer address, and its proof does not
 * verify under the wrong key either), a connector with the right secret
 * (the root's proof verifies), a forged check-in of wire version 1 with
 * the right magic, a real rank and a skewed ABI (refused with "wire version
 * 1", the job is not failed); after init, rank 0 answers rank 1's
 * challenge with a wrong key as "rank 0", then sends it a real p2p message
 * that must arrive (the slot was not taken).  The job must init and pass.
 * (3) A rank whose id carries a wrong secret fails at once with
 * ccomRemoteError naming the root's failed authentication; the same root
 * then serves the right id.
 */
#include <poll.h>
#include <stdio.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/mac.h"
#include "bootstrap/wire.h"
#include "core/comm.h"
#include "boot_util.h"
#include "test_util.h"
#include "util/misc.h"

static ccomUniqueId id;

static void hex(const uint8_t *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int check_hash(const char *what, const uint8_t *got, const char *want)
{
	char h[2 * CCOM_SHA256_BYTES + 1];

	hex(got, CCOM_SHA256_BYTES, h);
	T_CHECK(!strcmp(h, want), "%s: got %s, want %s", what, h, want);
	return 0;
}

static int test_vectors(void)
{
	static const char m448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const char t6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
	static const char t7[] = "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.";
	uint8_t out[CCOM_SHA256_BYTES], k[131], d[50], a[997];
	struct ccom_sha256 s;
	size_t left, i;

	ccom_sha256("abc", 3, out);
	if (check_hash("SHA-256(abc)", out,
		       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
		return T_FAIL;
	ccom_sha256("", 0, out);
	if (check_hash("SHA-256()", out,
		       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
		return T_FAIL;
	ccom_sha256(m448, strlen(m448), out);
	if (check_hash("SHA-256(448 bits)", out,
		       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"))
		return T_FAIL;
	memset(a, 'a', sizeof(a));
	ccom_sha256_init(&s);
	for (left = 1000000; left; left -= i) {
		i = left < sizeof(a) ? left : sizeof(a);
		ccom_sha256_update(&s, a, i);
	}
	ccom_sha256_final(&s, out);
	if (check_hash("SHA-256(10^6 x a)", out,
		       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"))
		return T_FAIL;
	/* RFC 4231 */
	memset(k, 0x0b, 20);
	ccom_hmac_sha256(k, 20, "Hi There", 8, out);
	if (check_hash("RFC 4231 case 1", out,
		       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
		return T_FAIL;
	ccom_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
	if (check_hash("RFC 4231 case 2", out,
		       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
		return T_FAIL;
	memset(k, 0xaa, 20);
	memset(d, 0xdd, 50);
	ccom_hmac_sha256(k, 20, d, 50, out);
	if (check_hash("RFC 4231 case 3", out,
		       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"))
		return T_FAIL;
	for (i = 0; i < 25; i++)
		k[i] = (uint8_t)(i + 1);
	memset(d, 0xcd, 50);
	ccom_hmac_sha256(k, 25, d, 50, out);
	if (check_hash("RFC 4231 case 4", out,
		       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"))
		return T_FAIL;
	memset(k, 0xaa, 131);
	ccom_hmac_sha256(k, 131, t6, strlen(t6), out);
	if (check_hash("RFC 4231 case 6", out,
		       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"))
		return T_FAIL;
	ccom_hmac_sha256(k, 131, t7, strlen(t7), out);
	if (check_hash("RFC 4231 case 7", out,
		       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"))
		return T_FAIL;
	printf("SHA-256: 4 FIPS 180-2 vectors, HMAC-SHA-256: 6 RFC 4231 vectors: all match\n");
	return T_PASS;
}

static int test_handshake_logic(void)
{
	uint8_t key[CCOM_BS_KEY_BYTES], other[CCOM_BS_KEY_BYTES], w[CCOM_BS_KEY_BYTES],
		back[CCOM_BS_KEY_BYTES];
	struct ccom_bs_auth_challenge ch, bad;
	struct ccom_bs_auth_answer ans, refl;
	struct ccom_bs_auth_hello ah, ah2;

	T_CHECK(!ccom_bs_secret_new(key) && !ccom_bs_secret_new(other), "getrandom");
	T_CHECK(memcmp(key, other, sizeof(key)), "two secrets are equal");
	ccom_bs_auth_hello_init(&ah, 0x1234, CCOM_BS_P2P, 3);
	ccom_bs_auth_challenge_init(&ch, key, &ah);
	T_CHECK(ccom_bs_auth_challenge_ok(key, &ah, &ch), "a genuine challenge fails");
	T_CHECK(!ccom_bs_auth_challenge_ok(other, &ah, &ch), "a challenge passes under another key");
	bad = ch;
	bad.mac[7] ^= 0x10;
	T_CHECK(!ccom_bs_auth_challenge_ok(key, &ah, &bad), "a flipped bit passes");
	bad = ch;
	memcpy(bad.nonce, ah.nonce, sizeof(bad.nonce));
	T_CHECK(!ccom_bs_auth_challenge_ok(key, &ah, &bad), "an echoed nonce passes");
	ah2 = ah;
	ah2.role = CCOM_BS_RING;
	T_CHECK(!ccom_bs_auth_challenge_ok(key, &ah2, &ch), "a proof passes for another role");
	ah2 = ah;
	ah2.who = 4;
	T_CHECK(!ccom_bs_auth_challenge_ok(key, &ah2, &ch), "a proof passes for another rank");
	ccom_bs_auth_answer_init(&ans, key, &ah, ch.nonce);
	T_CHECK(ccom_bs_auth_answer_ok(key, &ah, ch.nonce, &ans), "a genuine answer fails");
	T_CHECK(!ccom_bs_auth_answer_ok(other, &ah, ch.nonce, &ans), "an answer passes under another key");
	/* The acceptor's own proof sent back as the answer (reflection). */
	memcpy(refl.mac, ch.mac, sizeof(refl.mac));
	T_CHECK(!ccom_bs_auth_answer_ok(key, &ah, ch.nonce, &refl), "a reflected proof passes");
	ccom_bs_key_wrap(key, &ah, ch.nonce, other, w);
	T_CHECK(memcmp(w, other, sizeof(w)), "the wrap leaves the key as it is");
	ccom_bs_key_wrap(key, &ah, ch.nonce, w, back);
	T_CHECK(!memcmp(back, other, sizeof(back)), "the wrap does not round-trip");
	ccom_bs_subroot_key(key, 1, w);
	ccom_bs_subroot_key(key, 2, back);
	T_CHECK(memcmp(w, back, sizeof(w)) && memcmp(w, key, sizeof(w)),
		"subroot keys do not differ per index");
	printf("handshake: wrong key, flipped bit, echoed nonce, other role/rank and reflection all refused\n");
	return T_PASS;
}

/* 1 if the peer closes @fd within 5 s (reading and discarding anything before). */
static int closed_by_peer(int fd)
{
	double end = t_now() + 5;
	char b[256];

	while (t_now() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, b, sizeof(b), 0);
		if (n <= 0)
			return 1;
	}
	return 0;
}

/*
 * A full handshake with a wrong key on @fd as @who in @role: the acceptor's
 * proof must fail under that key, and the acceptor must close after our
 * (wrong) answer.
 */
static int wrong_key_handshake(int fd, uint64_t magic, uint32_t role, int32_t who)
{
	struct ccom_bs_auth_challenge ch;
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_auth_hello ah;
	uint8_t key[CCOM_BS_KEY_BYTES];

	T_CHECK(!ccom_bs_secret_new(key), "getrandom");
	ccom_bs_auth_hello_init(&ah, magic, role, who);
	T_CHECK(!ccom_sock_send_all(fd, &ah, sizeof(ah), ccom_now_us() + 5000000, NULL), "send hello");
	T_CHECK(!ccom_sock_recv_all(fd, &ch, sizeof(ch), ccom_now_us() + 5000000, NULL),
		"no challenge");
	T_CHECK(ch.type == CCOM_BS_CHALLENGE, "not a challenge: %08x", ch.type);
	T_CHECK(!ccom_bs_auth_challenge_ok(key, &ah, &ch), "the acceptor's proof passes a wrong key");
	ccom_bs_auth_answer_init(&ans, key, &ah, ch.nonce);
	T_CHECK(send(fd, &ans, sizeof(ans), MSG_NOSIGNAL) == (ssize_t)sizeof(ans), "send answer");
	T_CHECK(closed_by_peer(fd), "the acceptor kept a connection that failed authentication");
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	ccomComm_t comm;
	int v = 0;

	(void)arg;
	T_CCOM(ccomCommInitRank(&comm, nranks, id, rank), ccomSuccess);
	if (rank == 0) {
		union ccom_sockaddr a;
		int fd;

		memcpy(&a, &comm->peers[1].listen_addr, sizeof(comm->peers[1].listen_addr));
		fd = t_connect_addr(&a);
		T_CHECK(fd >= 0, "connect to rank 1");
		/* Rank 1 serves its listener while it waits for rank 0's message. */
		if (wrong_key_handshake(fd, comm->magic, CCOM_BS_P2P, 0))
			return T_FAIL;
		close(fd);
		v = 4242;
		T_CHECK(!ccom_bootstrap_send(comm->bootstrap, 1, CCOM_BOOTSTRAP_TAG_USER_BASE, &v,
					     sizeof(v)), "send: %s", ccomGetLastError(NULL));
	} else if (rank == 1) {
		T_CHECK(!ccom_bootstrap_recv(comm->bootstrap, 0, CCOM_BOOTSTRAP_TAG_USER_BASE, &v,
					     sizeof(v)), "recv: %s", ccomGetLastError(NULL));
		T_CHECK(v == 4242, "rank 1 got %d from rank 0", v);
	}
	T_CHECK(!ccom_bootstrap_barrier(comm->bootstrap), "barrier: %s", ccomGetLastError(NULL));
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

/* Rank 3 of the forked set: a job of its own, with a wrong secret, then the right one. */
static int wrong_secret_main(void)
{
	ccomUniqueId mine, bad;
	struct ccom_bs_id h;
	ccomComm_t comm;
	ccomResult_t res;
	double t0;

	setenv("CCOM_BOOTSTRAP_TIMEOUT", "20", 1);
	T_CCOM(ccomGetUniqueId(&mine), ccomSuccess);
	bad = mine;
	memcpy(&h, bad.internal, sizeof(h));
	h.secret[5] ^= 0x01;
	memcpy(bad.internal, &h, sizeof(h));
	t0 = t_now();
	res = ccomCommInitRank(&comm, 1, bad, 0);
	T_CHECK(res == ccomRemoteError, "a wrong secret gave %s: %s", ccomGetErrorString(res),
		ccomGetLastError(NULL));
	T_CHECK(t_has_words(ccomGetLastError(NULL), "root", "authentication failed", "secret", NULL),
		"message: %s", ccomGetLastError(NULL));
	T_CHECK(t_now() - t0 < 5, "a wrong secret took %.1f s to fail", t_now() - t0);
	printf("wrong secret: %s in %.3f s: %s\n", ccomGetErrorString(res), t_now() - t0,
	       ccomGetLastError(NULL));
	if (comm)
		ccomCommDestroy(comm);
	T_CCOM(ccomCommInitRank(&comm, 1, mine, 0), ccomSuccess);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

static int forked(int rank, int nranks, void *arg)
{
	(void)nranks;
	if (rank == 3)
		return wrong_secret_main();
	return rank_main(rank, 3, arg);
}

static int root_probes(const struct ccom_bs_id *h)
{
	struct ccom_bs_reply rep;
	struct ccom_bs_hello v1;
	char msg[CCOM_BS_MAX_MSG + 1];
	int fd, rc;

	/* A wrong secret: the root refuses the answer. */
	fd = t_connect_addr(&h->root);
	T_CHECK(fd >= 0, "connect to the root");
	if (wrong_key_handshake(fd, h->magic, CCOM_BS_HELLO, 0))
		return T_FAIL;
	close(fd);
	/* The right secret: the root proves it holds it. */
	fd = t_connect_addr(&h->root);
	T_CHECK(fd >= 0, "connect to the root");
	rc = ccom_bs_auth_connect(fd, h->secret, h->magic, CCOM_BS_HELLO, 2, ccom_now_us() + 5000000,
				  NULL, NULL, NULL, &rep);
	T_CHECK(rc == 0, "the genuine root failed to authenticate: %d", rc);
	close(fd);
	/* A forged check-in of wire version 1: right magic, real rank, skewed ABI. */
	memset(&v1, 0, sizeof(v1));
	v1.magic = h->magic;
	v1.type = CCOM_BS_HELLO;
	v1.abi = 77;
	v1.size = sizeof(v1);
	v1.rank = 1;
	v1.nranks = 3;
	v1.remaining_ms = 30000;
	snprintf(v1.host, sizeof(v1.host), "forger");
	fd = t_connect_addr(&h->root);
	T_CHECK(fd >= 0, "connect to the root");
	T_CHECK(!ccom_sock_send_all(fd, &v1, sizeof(v1), ccom_now_us() + 5000000, NULL), "send");
	T_CHECK(!ccom_sock_recv_all(fd, &rep, sizeof(rep), ccom_now_us() + 5000000, NULL) &&
		rep.type == CCOM_BS_REPLY && rep.err && rep.msg_len && rep.msg_len < sizeof(msg) &&
		!ccom_sock_recv_all(fd, msg, rep.msg_len, ccom_now_us() + 5000000, NULL),
		"no refusal of a wire version 1 check-in");
	msg[rep.msg_len] = '\0';
	T_CHECK(t_has_words(msg, "version skew", "wire version 1", "same libccom build", NULL),
		"refusal: %s", msg);
	close(fd);
	return T_PASS;
}

#define AUTH_FAILED "authentication failed (the peer does not hold this job's unique id)"

int main(void)
{
	struct ccom_bs_id h;
	struct t_ranks t;
	char log[128];
	int codes[4], n;

	if (test_vectors() || test_handshake_logic())
		return T_FAIL;
	snprintf(log, sizeof(log), "/tmp/ccom-boot-auth-%d.log", (int)getpid());
	unlink(log);
	setenv("CCOM_DEBUG_FILE", log, 1);
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "30", 1);
	/* Ranks are forked before this process starts the root thread. */
	T_CHECK(!t_ranks_start(&t, 4, forked, NULL, &id), "fork");
	T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
	memcpy(&h, id.internal, sizeof(h));
	if (root_probes(&h)) {
		t_ranks_release(&t, NULL);
		t_ranks_wait(&t, codes, 10);
		return T_FAIL;
	}
	t_ranks_release(&t, &id);
	T_CHECK(!t_ranks_wait(&t, codes, 60), "ranks failed: %d %d %d / wrong secret %d", codes[0],
		codes[1], codes[2], codes[3]);
	n = t_file_lines(log, "Bootstrap root: dropped connection from", AUTH_FAILED);
	T_CHECK(n == 1, "root logged %d 'authentication failed' drops, want 1 (see %s)", n, log);
	n = t_file_lines(log, "Bootstrap: rank 1 dropped connection from", NULL);
	T_CHECK(n == 1 && t_file_lines(log, "Bootstrap: rank 1 dropped connection from", AUTH_FAILED) == 1,
		"rank 1 logged %d drops, want 1 with '%s' (see %s)", n, AUTH_FAILED, log);
	n = t_file_lines(log, "refused without failing the job", "wire version 1");
	T_CHECK(n == 1, "root logged %d refused wire-1 check-ins, want 1 (see %s)", n, log);
	unlink(log);
	printf("job initialised; wrong-secret connectors to the root and to rank 1 were refused, a forged wire-1 check-in did not fail the job\n");
	return T_PASS;
}
