/* SPDX-License-Identifier: MIT */
/*
 * bootstrap.h - the bootstrap control plane: root rendezvous, socket ring,
 * ring all-gather, point-to-point messages by (peer, tag), barrier.
 *
 * Calls on one bootstrap are serialised by a mutex held for the whole call,
 * including its waits: use a bootstrap from one thread at a time (a receive
 * blocked on one thread would hold up a send on another).
 *
 * Every blocking call is bounded by the bootstrap's deadline/timeout and
 * polls the abort flag it was created with; all return 0 or -errno
 * (-ETIMEDOUT, -ECANCELED on abort, -ECONNRESET when a peer vanished) after
 * recording a sentence with ccom_set_last_error().
 */
#ifndef CCOM_BOOTSTRAP_H
#define CCOM_BOOTSTRAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ccom.h"

struct ccom_bootstrap;

/*
 * Fill @id: with CCOM_COMM_ID set, its address and a fixed magic (rank 0
 * hosts the root in ccom_bootstrap_init); otherwise a fresh root thread
 * listening on the selected interface and a random magic.
 */
int ccom_bootstrap_get_unique_id(ccomUniqueId *id);

/* Like ccom_bootstrap_get_unique_id() but always starts a root (ignores CCOM_COMM_ID). */
int ccom_bootstrap_new_root(ccomUniqueId *id);

/*
 * Like ccom_bootstrap_new_root() for ccomCommGetUniqueId(): the id is
 * marked as a grow id of a communicator of @base ranks whose grown
 * communicator will have the hash @hash, and a rank whose connection to
 * its root is refused fails at once with -EPERM (the root is gone: the id
 * was used) instead of retrying until the timeout.
 */
int ccom_bootstrap_new_grow_root(int base, uint64_t hash, ccomUniqueId *id);

/* A grow id's @base and @hash: 0, or -1 when @id is not a grow id (or no id at all). */
int ccom_bootstrap_id_grow_info(const ccomUniqueId *id, int *base, uint64_t *hash);

/* Build a unique id for CCOM_COMM_ID-style @addr_str (rank 0 hosts the root). */
int ccom_bootstrap_id_from_addr(const char *addr_str, const char *what, ccomUniqueId *id);

/* Magic carried by @id (the comm magic of connections between ranks). */
uint64_t ccom_bootstrap_id_magic(const ccomUniqueId *id);

/*
 * Rendezvous with the root of @id, then connect the ring and gather every
 * rank's listen address.  Every wait ends by @timeout_ms after the call
 * started (@start_us, CLOCK_MONOTONIC) or as soon as *@abort is set.
 * @build_hash/@version/@abi are what this rank announces to the root.
 * Returns 0 and *@out, or -errno after ccom_set_last_error().
 */
struct ccom_bootstrap_args {
	const ccomUniqueId *id;
	/*
	 * nids > 1: several roots (ccomCommInitRankScalable): this rank checks
	 * in with ids[rank * nids / nranks]; @id is ids[0].  0 or 1: @id only.
	 */
	const ccomUniqueId *ids;
	int nids;
	int rank;
	int nranks;
	int64_t start_us;
	int64_t timeout_ms;
	const atomic_int *abort;
};
int ccom_bootstrap_init(const struct ccom_bootstrap_args *args, struct ccom_bootstrap **out);

/* This rank's bootstrap listen address (a struct sockaddr_in or _in6). */
const void *ccom_bootstrap_listen_addr(const struct ccom_bootstrap *bs, size_t *len);

/* Bytes of ccom_bootstrap_data_mac()'s MAC. */
#define CCOM_DATA_MAC_BYTES 32

/*
 * The MAC of a data connection's hello (datakey.c): HMAC-SHA-256 of @len
 * bytes of @msg under a key derived from @bs's key (the secret of the
 * communicator's unique id) that only the transports' hellos use.  The
 * caller puts in @msg what binds the hello to its connection (sender,
 * receiver, socket, the receiver's nonce).  Not collective; no lock.
 */
void ccom_bootstrap_data_mac(const struct ccom_bootstrap *bs, const void *msg, size_t len,
			     uint8_t mac[CCOM_DATA_MAC_BYTES]);

/* 1 if @mac is ccom_bootstrap_data_mac() of @msg (constant time), else 0. */
int ccom_bootstrap_data_mac_ok(const struct ccom_bootstrap *bs, const void *msg, size_t len,
			       const uint8_t mac[CCOM_DATA_MAC_BYTES]);

/* Close every socket and free @bs (NULL is fine).  Not collective. */
void ccom_bootstrap_close(struct ccom_bootstrap *bs);

/* Identity this library announces (test hooks CCOM_TEST_FAKE_* applied). */
uint64_t ccom_build_hash(void);
uint32_t ccom_version_code(void);
uint32_t ccom_abi_id(void);

/*
 * All-gather: @buf holds nranks slots of @slot_size bytes; this rank's slot
 * (rank * slot_size) is filled by the caller; on return every slot is.
 */
int ccom_bootstrap_allgather(struct ccom_bootstrap *bs, void *buf, size_t slot_size);

/*
 * Point-to-point: messages to the same (peer, tag) arrive in send order.
 * recv blocks until a message of exactly @size bytes from (peer, tag) is there
 * (a size mismatch is -EPROTO with a message naming peer, tag and sizes).
 * Sends do not wait for the matching receive (they may block on socket
 * buffers only).
 */
int ccom_bootstrap_send(struct ccom_bootstrap *bs, int peer, int tag, const void *data,
			size_t size);
int ccom_bootstrap_recv(struct ccom_bootstrap *bs, int peer, int tag, void *data, size_t size);

/* Barrier over all ranks of the bootstrap. */
int ccom_bootstrap_barrier(struct ccom_bootstrap *bs);

/*
 * Barrier / all-gather restricted to a subset of ranks (e.g. the local ranks
 * of one host), given as a sorted array of @n global ranks containing the
 * caller; @tag keeps concurrent subset operations apart.
 */
int ccom_bootstrap_subset_barrier(struct ccom_bootstrap *bs, const int *ranks, int n, int tag);
int ccom_bootstrap_subset_allgather(struct ccom_bootstrap *bs, const int *ranks, int n,
				    int tag, void *buf, size_t slot_size);

/* Tags below this value are reserved for the bootstrap and init themselves. */
#define CCOM_BOOTSTRAP_TAG_USER_BASE 0x10000

#endif
