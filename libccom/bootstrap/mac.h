/* SPDX-License-Identifier: MIT */
/*
 * mac.h - the keyed hash of the bootstrap's authentication (private to
 * bootstrap/): SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written
 * from their specifications, and a constant-time comparison.
 */
#ifndef CCOM_BOOTSTRAP_MAC_H
#define CCOM_BOOTSTRAP_MAC_H

#include <stddef.h>
#include <stdint.h>

#define CCOM_SHA256_BYTES 32
#define CCOM_SHA256_BLOCK 64

/* Incremental SHA-256: init, update any number of times, final. */
struct ccom_sha256 {
	uint32_t h[8];
	uint64_t len;			/* bytes hashed so far */
	uint8_t buf[CCOM_SHA256_BLOCK];
	size_t nbuf;
};

void ccom_sha256_init(struct ccom_sha256 *s);
void ccom_sha256_update(struct ccom_sha256 *s, const void *data, size_t len);
void ccom_sha256_final(struct ccom_sha256 *s, uint8_t out[CCOM_SHA256_BYTES]);

/* SHA-256 of @len bytes of @data in one call. */
void ccom_sha256(const void *data, size_t len, uint8_t out[CCOM_SHA256_BYTES]);

/* HMAC-SHA-256 of the concatenation of @n parts (@parts[i], @lens[i] bytes) under @key. */
void ccom_hmac_sha256_v(const void *key, size_t key_len, int n, const void *const *parts,
			const size_t *lens, uint8_t out[CCOM_SHA256_BYTES]);

/* HMAC-SHA-256 of @len bytes of @data under @key. */
void ccom_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
		      uint8_t out[CCOM_SHA256_BYTES]);

/* 1 if the @len bytes at @a and @b are equal; the time taken does not depend on where they differ. */
int ccom_mac_equal(const void *a, const void *b, size_t len);

#endif
