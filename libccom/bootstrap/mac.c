// SPDX-License-Identifier: MIT
/*
 * mac.c - SHA-256 as FIPS 180-4 section 6.2 describes it (message
 * schedule of 64 words, 64 rounds with the constants of section 4.2.2,
 * padding of section 5.1.1), HMAC over it as RFC 2104 defines it
 * (H((K ^ opad) || H((K ^ ipad) || text)), keys longer than a block hashed
 * first), and a comparison whose time does not depend on the data.  The
 * test vectors (FIPS 180-2 appendix B, RFC 4231) are in
 * selftests/libccom/boot_auth.c.  This file calls no other file.
 */
#include <string.h>

#include "bootstrap/mac.h"

/* First 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

/* One 512-bit block (FIPS 180-4 6.2.2, steps 1 to 4). */
static void sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	int t;

	for (t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);

		w[t] = s1 + w[t - 7] + s0 + w[t - 16];
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (t = 0; t < 64; t++) {
		uint32_t big1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = hh + big1 + ch + sha256_k[t] + w[t];
		uint32_t big0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = big0 + maj;

		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void ccom_sha256_init(struct ccom_sha256 *s)
{
	/* First 32 bits of the fractional parts of the square roots of the first 8 primes. */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
	s->nbuf = 0;
}

void ccom_sha256_update(struct ccom_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->len += len;
	while (len) {
		size_t n = CCOM_SHA256_BLOCK - s->nbuf;

		if (n > len)
			n = len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
		p += n;
		len -= n;
		if (s->nbuf == CCOM_SHA256_BLOCK) {
			sha256_block(s->h, s->buf);
			s->nbuf = 0;
		}
	}
}

void ccom_sha256_final(struct ccom_sha256 *s, uint8_t out[CCOM_SHA256_BYTES])
{
	uint64_t bits = s->len * 8;
	int i;

	/* A 1 bit, zeros up to 56 mod 64 bytes, then the length in bits, big-endian. */
	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > 56) {
		memset(s->buf + s->nbuf, 0, CCOM_SHA256_BLOCK - s->nbuf);
		sha256_block(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
	memset(s, 0, sizeof(*s));
}

void ccom_sha256(const void *data, size_t len, uint8_t out[CCOM_SHA256_BYTES])
{
	struct ccom_sha256 s;

	ccom_sha256_init(&s);
	ccom_sha256_update(&s, data, len);
	ccom_sha256_final(&s, out);
}

void ccom_hmac_sha256_v(const void *key, size_t key_len, int n, const void *const *parts,
			const size_t *lens, uint8_t out[CCOM_SHA256_BYTES])
{
	uint8_t k[CCOM_SHA256_BLOCK], pad[CCOM_SHA256_BLOCK], inner[CCOM_SHA256_BYTES];
	struct ccom_sha256 s;
	int i;

	memset(k, 0, sizeof(k));
	if (key_len > CCOM_SHA256_BLOCK)
		ccom_sha256(key, key_len, k);
	else if (key_len)
		memcpy(k, key, key_len);
	for (i = 0; i < CCOM_SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	ccom_sha256_init(&s);
	ccom_sha256_update(&s, pad, sizeof(pad));
	for (i = 0; i < n; i++)
		ccom_sha256_update(&s, parts[i], lens[i]);
	ccom_sha256_final(&s, inner);
	for (i = 0; i < CCOM_SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	ccom_sha256_init(&s);
	ccom_sha256_update(&s, pad, sizeof(pad));
	ccom_sha256_update(&s, inner, sizeof(inner));
	ccom_sha256_final(&s, out);
	memset(k, 0, sizeof(k));
	memset(pad, 0, sizeof(pad));
}

void ccom_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
		      uint8_t out[CCOM_SHA256_BYTES])
{
	ccom_hmac_sha256_v(key, key_len, 1, &data, &len, out);
}

int ccom_mac_equal(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
