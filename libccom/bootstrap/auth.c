// SPDX-License-Identifier: MIT
/*
 * auth.c - the challenge-response that opens every bootstrap connection
 * (wire.h): nonces, the proofs of both sides, the keys derived from a
 * unique id's secret, and the blocking connector side.  A proof is
 *
 *   HMAC-SHA-256(key, label || dir || magic || wire || role || who ||
 *                connector's nonce || acceptor's nonce)
 *
 * with dir 'A' (acceptor) or 'C' (connector), fields little-endian: fresh
 * nonces on both sides make every proof single-use, the direction stops a
 * proof from being reflected back, and role/who stop one from being reused
 * for another kind of connection.  Calls mac.c only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/auth.h"
#include "bootstrap/mac.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/socket.h"

#define AUTH_LABEL "ccom bootstrap auth v2"

int ccom_bs_secret_new(uint8_t key[CCOM_BS_KEY_BYTES])
{
	char why[200];

	if (!ccom_random_bytes(key, CCOM_BS_KEY_BYTES))
		return 0;
	snprintf(why, sizeof(why), "%s", ccomGetLastError(NULL));
	ccom_set_last_error("Bootstrap: cannot make the secret of a unique id: %s", why);
	return -EIO;
}

void ccom_bs_public_key(uint8_t key[CCOM_BS_KEY_BYTES])
{
	static const char what[] = "ccom bootstrap: ids from CCOM_COMM_ID have no secret";

	ccom_sha256(what, sizeof(what) - 1, key);
}

void ccom_bs_subroot_key(const uint8_t s0[CCOM_BS_KEY_BYTES], int idx,
			 uint8_t out[CCOM_BS_KEY_BYTES])
{
	static const char label[] = "ccom bootstrap subroot key";
	uint8_t i[4] = { (uint8_t)idx, (uint8_t)(idx >> 8), (uint8_t)(idx >> 16),
			 (uint8_t)(idx >> 24) };
	const void *parts[2] = { label, i };
	size_t lens[2] = { sizeof(label) - 1, sizeof(i) };

	ccom_hmac_sha256_v(s0, CCOM_BS_KEY_BYTES, 2, parts, lens, out);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* The proof of direction @dir ('A', 'C' or 'W' for the key-wrap pad). */
static void auth_mac(const uint8_t key[CCOM_BS_KEY_BYTES], char dir,
		     const struct ccom_bs_auth_hello *ah, const uint8_t *nonce_a,
		     uint8_t out[CCOM_BS_MAC_BYTES])
{
	uint8_t f[1 + 8 + 4 * 3 + 2 * CCOM_BS_NONCE_BYTES];
	const void *parts[2] = { AUTH_LABEL, f };
	size_t lens[2] = { sizeof(AUTH_LABEL) - 1, sizeof(f) };

	f[0] = (uint8_t)dir;
	put32(f + 1, (uint32_t)ah->magic);
	put32(f + 5, (uint32_t)(ah->magic >> 32));
	put32(f + 9, ah->wire);
	put32(f + 13, ah->role);
	put32(f + 17, (uint32_t)ah->who);
	memcpy(f + 21, ah->nonce, CCOM_BS_NONCE_BYTES);
	memcpy(f + 21 + CCOM_BS_NONCE_BYTES, nonce_a, CCOM_BS_NONCE_BYTES);
	ccom_hmac_sha256_v(key, CCOM_BS_KEY_BYTES, 2, parts, lens, out);
}

void ccom_bs_key_wrap(const uint8_t key[CCOM_BS_KEY_BYTES], const struct ccom_bs_auth_hello *ah,
		      const uint8_t *nonce_a, const uint8_t in[CCOM_BS_KEY_BYTES],
		      uint8_t out[CCOM_BS_KEY_BYTES])
{
	uint8_t pad[CCOM_BS_MAC_BYTES];
	int i;

	auth_mac(key, 'W', ah, nonce_a, pad);
	for (i = 0; i < CCOM_BS_KEY_BYTES; i++)
		out[i] = in[i] ^ pad[i];
	explicit_bzero(pad, sizeof(pad));
}

int ccom_bs_auth_hello_init(struct ccom_bs_auth_hello *ah, uint64_t magic, uint32_t role,
			    int32_t who)
{
	memset(ah, 0, sizeof(*ah));
	ah->magic = magic;
	ah->type = CCOM_BS_AUTH;
	ah->wire = CCOM_BS_WIRE_VERSION;
	ah->role = role;
	ah->who = who;
	/* On failure the nonce is all zero, which no acceptor answers (below). */
	return ccom_random_bytes(ah->nonce, sizeof(ah->nonce));
}

/* An all-zero nonce is what a failed getrandom() leaves: never a valid one. */
static int nonce_unset(const uint8_t *nonce)
{
	uint8_t any = 0;
	int i;

	for (i = 0; i < CCOM_BS_NONCE_BYTES; i++)
		any |= nonce[i];
	return !any;
}

int ccom_bs_auth_challenge_init(struct ccom_bs_auth_challenge *ch,
				const uint8_t key[CCOM_BS_KEY_BYTES],
				const struct ccom_bs_auth_hello *ah)
{
	int rc;

	memset(ch, 0, sizeof(*ch));
	ch->magic = ah->magic;
	ch->type = CCOM_BS_CHALLENGE;
	ch->wire = CCOM_BS_WIRE_VERSION;
	rc = ccom_random_bytes(ch->nonce, sizeof(ch->nonce));
	if (rc) {
		/* No proof without a fresh nonce: the connector rejects this challenge. */
		ch->type = 0;
		return rc;
	}
	auth_mac(key, 'A', ah, ch->nonce, ch->mac);
	return 0;
}

int ccom_bs_auth_challenge_ok(const uint8_t key[CCOM_BS_KEY_BYTES],
			      const struct ccom_bs_auth_hello *ah,
			      const struct ccom_bs_auth_challenge *ch)
{
	uint8_t want[CCOM_BS_MAC_BYTES];
	int ok;

	if (ch->magic != ah->magic || ch->type != CCOM_BS_CHALLENGE ||
	    ch->wire != CCOM_BS_WIRE_VERSION || nonce_unset(ch->nonce))
		return 0;
	/* An acceptor that echoes our nonce as its own must not pass either. */
	if (!memcmp(ch->nonce, ah->nonce, sizeof(ch->nonce)))
		return 0;
	auth_mac(key, 'A', ah, ch->nonce, want);
	ok = ccom_mac_equal(want, ch->mac, sizeof(want));
	explicit_bzero(want, sizeof(want));
	return ok;
}

void ccom_bs_auth_answer_init(struct ccom_bs_auth_answer *ans, const uint8_t key[CCOM_BS_KEY_BYTES],
			      const struct ccom_bs_auth_hello *ah, const uint8_t *nonce_a)
{
	auth_mac(key, 'C', ah, nonce_a, ans->mac);
}

int ccom_bs_auth_answer_ok(const uint8_t key[CCOM_BS_KEY_BYTES],
			   const struct ccom_bs_auth_hello *ah, const uint8_t *nonce_a,
			   const struct ccom_bs_auth_answer *ans)
{
	uint8_t want[CCOM_BS_MAC_BYTES];
	int ok;

	/* A challenge sent with a failed nonce (all zero) is answered by no one. */
	if (nonce_unset(nonce_a) || nonce_unset(ah->nonce))
		return 0;
	auth_mac(key, 'C', ah, nonce_a, want);
	ok = ccom_mac_equal(want, ans->mac, sizeof(want));
	explicit_bzero(want, sizeof(want));
	return ok;
}

int ccom_bs_auth_connect(int fd, const uint8_t key[CCOM_BS_KEY_BYTES], uint64_t magic,
			 uint32_t role, int32_t who, int64_t deadline, const atomic_int *abort,
			 struct ccom_bs_auth_hello *ah_out, uint8_t *nonce_a,
			 struct ccom_bs_reply *head)
{
	const size_t hlen = sizeof(uint64_t) + sizeof(uint32_t);
	struct ccom_bs_auth_challenge ch;
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_auth_hello ah;
	int rc;

	rc = ccom_bs_auth_hello_init(&ah, magic, role, who);
	if (rc)
		return rc;
	rc = ccom_sock_send_all(fd, &ah, sizeof(ah), deadline, abort);
	if (!rc)
		rc = ccom_sock_recv_all(fd, &ch, hlen, deadline, abort);
	if (rc)
		return rc;
	if (ch.magic != magic)
		return -EBADMSG;
	if (ch.type == CCOM_BS_REPLY) {
		memset(head, 0, sizeof(*head));
		memcpy(head, &ch, hlen);
		return 1;
	}
	if (ch.type != CCOM_BS_CHALLENGE)
		return -EBADMSG;
	rc = ccom_sock_recv_all(fd, (char *)&ch + hlen, sizeof(ch) - hlen, deadline, abort);
	if (rc)
		return rc;
	if (!ccom_bs_auth_challenge_ok(key, &ah, &ch))
		return -EKEYREJECTED;
	ccom_bs_auth_answer_init(&ans, key, &ah, ch.nonce);
	rc = ccom_sock_send_all(fd, &ans, sizeof(ans), deadline, abort);
	if (rc)
		return rc;
	if (ah_out)
		*ah_out = ah;
	if (nonce_a)
		memcpy(nonce_a, ch.nonce, CCOM_BS_NONCE_BYTES);
	return 0;
}
