/* SPDX-License-Identifier: MIT */
/*
 * auth.h - the authentication of bootstrap connections (private to
 * bootstrap/): the messages of wire.h's challenge-response, their MACs
 * (HMAC-SHA-256 of bootstrap/mac.h), the secret of a fresh unique id and
 * the keys derived from it.  The acceptors (root.c, msg.c) run their side
 * from their poll loops with the pure functions; a connector that may block
 * uses ccom_bs_auth_connect().
 */
#ifndef CCOM_BOOTSTRAP_AUTH_H
#define CCOM_BOOTSTRAP_AUTH_H

#include <stdatomic.h>
#include <stdint.h>

#include "bootstrap/wire.h"

/* A fresh random secret from getrandom() (no fallback); 0, or -EIO after ccom_set_last_error(). */
int ccom_bs_secret_new(uint8_t key[CCOM_BS_KEY_BYTES]);

/* The fixed, public key of ids made from CCOM_COMM_ID (they carry no secret). */
void ccom_bs_public_key(uint8_t key[CCOM_BS_KEY_BYTES]);

/* Root k > 0's key towards root 0, from ids[0]'s secret @s0. */
void ccom_bs_subroot_key(const uint8_t s0[CCOM_BS_KEY_BYTES], int idx,
			 uint8_t out[CCOM_BS_KEY_BYTES]);

/*
 * XOR @in with a pad derived from @key and the connection's nonces (the
 * connector's in @ah, the acceptor's @nonce_a) into @out: encrypts and
 * decrypts struct ccom_bs_hello_ext's subroot_key.
 */
void ccom_bs_key_wrap(const uint8_t key[CCOM_BS_KEY_BYTES], const struct ccom_bs_auth_hello *ah,
		      const uint8_t *nonce_a, const uint8_t in[CCOM_BS_KEY_BYTES],
		      uint8_t out[CCOM_BS_KEY_BYTES]);

/*
 * Connector: the first message, with a fresh nonce.  0, or -EIO after
 * ccom_set_last_error() when getrandom() failed: the nonce is then all
 * zero, and no acceptor answers it.
 */
int ccom_bs_auth_hello_init(struct ccom_bs_auth_hello *ah, uint64_t magic, uint32_t role,
			    int32_t who);

/*
 * Acceptor: the answer to @ah, with a fresh nonce and the acceptor's proof.
 * 0, or -EIO after ccom_set_last_error() when getrandom() failed: @ch then
 * carries no proof (type 0, nonce all zero), so a caller that sends it
 * anyway only makes the connector fail, and no answer to it is accepted.
 */
int ccom_bs_auth_challenge_init(struct ccom_bs_auth_challenge *ch,
				const uint8_t key[CCOM_BS_KEY_BYTES],
				const struct ccom_bs_auth_hello *ah);

/* Connector: 1 if @ch proves the acceptor holds @key (and answers @ah). */
int ccom_bs_auth_challenge_ok(const uint8_t key[CCOM_BS_KEY_BYTES],
			      const struct ccom_bs_auth_hello *ah,
			      const struct ccom_bs_auth_challenge *ch);

/* Connector: its proof for the challenge with nonce @nonce_a. */
void ccom_bs_auth_answer_init(struct ccom_bs_auth_answer *ans, const uint8_t key[CCOM_BS_KEY_BYTES],
			      const struct ccom_bs_auth_hello *ah, const uint8_t *nonce_a);

/* Acceptor: 1 if @ans proves the connector holds @key (constant time). */
int ccom_bs_auth_answer_ok(const uint8_t key[CCOM_BS_KEY_BYTES],
			   const struct ccom_bs_auth_hello *ah, const uint8_t *nonce_a,
			   const struct ccom_bs_auth_answer *ans);

/* The log and error text of a connection whose peer failed authentication. */
#define CCOM_BS_AUTH_FAILED "authentication failed (the peer does not hold this job's unique id)"

/*
 * Connector, blocking (a peer that serves its acceptor side from another
 * thread or process: a root): send the hello of @role/@who under @magic on
 * connected @fd, check the acceptor's proof, send ours.  0 when
 * authenticated (*@ah and @nonce_a, if not NULL, receive the hello sent and
 * the acceptor's nonce); 1 when the acceptor refused with a struct
 * ccom_bs_reply instead, whose first 12 bytes (magic and type) are in
 * *@head, the rest still to read; -EKEYREJECTED when the acceptor is not
 * of this job (no proof, or a wrong one); -EBADMSG when its answer is not a
 * ccom bootstrap message; or the socket's -errno.
 */
int ccom_bs_auth_connect(int fd, const uint8_t key[CCOM_BS_KEY_BYTES], uint64_t magic,
			 uint32_t role, int32_t who, int64_t deadline, const atomic_int *abort,
			 struct ccom_bs_auth_hello *ah, uint8_t *nonce_a,
			 struct ccom_bs_reply *head);

#endif
