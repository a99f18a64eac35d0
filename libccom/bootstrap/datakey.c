// SPDX-License-Identifier: MIT
/*
 * datakey.c - the MAC the transports put on the hellos of their data
 * connections (net_socket's sockets, net_ib's liveness connection), under
 * a key derived from the communicator's bootstrap key, the secret of its
 * unique id: the transports never see that secret, nor any key, only the
 * MAC (bootstrap/ is below transport/ in the layer order, and mac.h stays
 * private to bootstrap/).
 *
 * data key = HMAC-SHA-256(bootstrap key, "ccom data hello key v1" || magic)
 * mac      = HMAC-SHA-256(data key, "ccom data hello v1" || message)
 *
 * The label keeps the data key apart from every bootstrap MAC made under
 * the same secret (a hello MAC is never a valid bootstrap proof, nor the
 * reverse); the magic makes it per communicator (a split or shrunk comm
 * has its own).  The transports bind each MAC to the connection with what
 * they put in @msg: sender, receiver, socket, and the receiver's nonce
 * from the cards of this setup (see Documentation/libccom/transport.rst).
 */
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_private.h"
#include "bootstrap/mac.h"

static const char key_label[] = "ccom data hello key v1";
static const char mac_label[] = "ccom data hello v1";

void ccom_bootstrap_data_mac(const struct ccom_bootstrap *bs, const void *msg, size_t len,
			     uint8_t mac[CCOM_DATA_MAC_BYTES])
{
	uint8_t key[CCOM_SHA256_BYTES];
	const void *kparts[2] = { key_label, &bs->magic };
	const size_t klens[2] = { sizeof(key_label) - 1, sizeof(bs->magic) };
	const void *mparts[2] = { mac_label, msg };
	const size_t mlens[2] = { sizeof(mac_label) - 1, len };

	ccom_hmac_sha256_v(bs->key, sizeof(bs->key), 2, kparts, klens, key);
	ccom_hmac_sha256_v(key, sizeof(key), 2, mparts, mlens, mac);
	explicit_bzero(key, sizeof(key));
}

int ccom_bootstrap_data_mac_ok(const struct ccom_bootstrap *bs, const void *msg, size_t len,
			       const uint8_t mac[CCOM_DATA_MAC_BYTES])
{
	uint8_t want[CCOM_DATA_MAC_BYTES];
	int ok;

	ccom_bootstrap_data_mac(bs, msg, len, want);
	ok = ccom_mac_equal(want, mac, sizeof(want));
	explicit_bzero(want, sizeof(want));
	return ok;
}
