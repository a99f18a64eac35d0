/* SPDX-License-Identifier: MIT */
/*
 * bootstrap.h - the bootstrap control plane: root rendezvous, socket ring,
 * ring all-gather, point-to-point messages by (peer, tag), barrier.
 *
 * Every blocking call is bounded by the bootstrap's deadline/timeout and
 * polls the abort flag it was created with; all return 0 or -errno
 * (-ETIMEDOUT, -ECANCELED on abort, -ECONNRESET when a peer vanished) after
 * recording a sentence with ccom_set_last_error().
 */
#ifndef CCOM_BOOTSTRAP_H
#define CCOM_BOOTSTRAP_H

#include <stddef.h>

struct ccom_bootstrap;

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
