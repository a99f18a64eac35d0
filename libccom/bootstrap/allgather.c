// SPDX-License-Identifier: MIT
/*
 * allgather.c - the collectives of the bootstrap: the ring all-gather (over
 * the ring connections, used for the address exchange of small jobs), the
 * Bruck all-gather and the dissemination barrier (over the p2p messages of
 * msg.c, log2(n) rounds), and their versions restricted to a subset of the
 * ranks.  Each round uses its own internal tag, below
 * CCOM_BOOTSTRAP_TAG_USER_BASE, so that rounds and operations never match
 * each other's messages.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_private.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/socket.h"

/* Internal tags (all below CCOM_BOOTSTRAP_TAG_USER_BASE). */
#define BS_TAG_ALLGATHER_BASE 0x10	/* + round */
#define BS_TAG_BARRIER_BASE 0x50	/* + round */
#define BS_TAG_SUBSET_BASE 0x100	/* + caller's tag */

/* ------------------------------------------------------------------ */
/* Ring and Bruck all-gather, barrier                                  */

int ccom_bs_ring_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot)
{
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	int n = bs->nranks, r = bs->rank, i, rc = 0;
	char *b = buf;

	for (i = 0; i < n - 1 && !rc; i++) {
		int s = (r - i + n) % n, v = (r - i - 1 + n) % n;
		uint64_t ssz = slot, rsz = 0;

		/* Each step carries the slot size first, so disagreeing ranks are caught. */
		rc = ccom_sock_sendrecv(bs->ring_send_fd, &ssz, sizeof(ssz), bs->ring_recv_fd, &rsz,
					sizeof(rsz), deadline, bs->abort);
		if (!rc && rsz != slot) {
			ccom_set_last_error("Bootstrap: all-gather size mismatch: rank %d uses %zu-byte slots, its predecessor %llu bytes",
					    r, slot, (unsigned long long)rsz);
			return -EPROTO;
		}
		if (!rc)
			rc = ccom_sock_sendrecv(bs->ring_send_fd, b + s * slot, slot,
						bs->ring_recv_fd, b + v * slot, slot, deadline,
						bs->abort);
	}
	if (rc)
		ccom_set_last_error("Bootstrap: ring all-gather on rank %d of %d (neighbours %d and %d): %s",
				    r, n, (r - 1 + n) % n, (r + 1) % n, ccom_bs_err_str(rc));
	return rc;
}

/*
 * Bruck all-gather over the p2p connections: ceil(log2(n)) rounds; in
 * round k a rank sends the min(2^k, n - 2^k) slots it has (its own and
 * those of the ranks after it) to rank - 2^k and receives as many from
 * rank + 2^k.  On an oversubscribed host this costs log2(n) scheduling
 * hops instead of the ring's n - 1.
 */
int ccom_bs_bruck_allgather_locked(struct ccom_bootstrap *bs, void *buf, size_t slot)
{
	int n = bs->nranks, r = bs->rank, k, j, rc = 0;
	char *tmp, *b = buf;
	size_t dist;

	tmp = malloc(n * slot);
	if (!tmp) {
		ccom_set_last_error("Bootstrap: out of memory for an all-gather of %d x %zu bytes", n,
				    slot);
		return -ENOMEM;
	}
	memcpy(tmp, b + r * slot, slot);
	for (k = 0, dist = 1; dist < (size_t)n && !rc; k++, dist <<= 1) {
		size_t cnt = dist < n - dist ? dist : n - dist;
		int to = (int)((r - dist + n) % n), from = (int)((r + dist) % n);

		rc = ccom_bs_send_locked(bs, to, BS_TAG_ALLGATHER_BASE + k, tmp, cnt * slot);
		if (!rc)
			rc = ccom_bs_recv_locked(bs, from, BS_TAG_ALLGATHER_BASE + k,
						 tmp + dist * slot, cnt * slot);
	}
	for (j = 0; j < n && !rc; j++)
		memcpy(b + ((r + j) % n) * slot, tmp + j * slot, slot);
	free(tmp);
	return rc;
}

/* An all-gather slot above CCOM_BS_MAX_SLOT would exceed the frame limit: -EINVAL. */
static int bs_check_slot(const struct ccom_bootstrap *bs, size_t slot_size)
{
	if (slot_size <= CCOM_BS_MAX_SLOT)
		return 0;
	ccom_set_last_error("Bootstrap: rank %d: an all-gather of %zu-byte slots, above the bootstrap's limit of %d (an internal message too large)",
			    bs->rank, slot_size, CCOM_BS_MAX_SLOT);
	return -EINVAL;
}

int ccom_bootstrap_allgather(struct ccom_bootstrap *bs, void *buf, size_t slot_size)
{
	int rc;

	rc = bs_check_slot(bs, slot_size);
	if (rc)
		return rc;
	pthread_mutex_lock(&bs->lock);
	rc = ccom_bs_bruck_allgather_locked(bs, buf, slot_size);
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/* Dissemination barrier: ceil(log2(n)) rounds of empty messages. */
int ccom_bootstrap_barrier(struct ccom_bootstrap *bs)
{
	int n = bs->nranks, r = bs->rank, k, rc = 0;
	int dist;

	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		rc = ccom_bs_send_locked(bs, (r + dist) % n, BS_TAG_BARRIER_BASE + k, NULL, 0);
		if (!rc)
			rc = ccom_bs_recv_locked(bs, (r - dist + n) % n, BS_TAG_BARRIER_BASE + k,
						 NULL, 0);
	}
	pthread_mutex_unlock(&bs->lock);
	return rc;
}

/*
 * Subset operations (e.g. the ranks of one host) run over the subset's
 * positions 0..n-1 with log2(n) rounds, like the full-job ones: an
 * all-to-all would open n^2 connections, which 128 ranks in one process
 * (ccomCommInitAll) cannot hold.  Round k of caller tag t uses tag
 * t + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT).
 */
#define BS_TAG_ROUND_SHIFT 24

static int bs_subset_me(struct ccom_bootstrap *bs, const int *ranks, int n)
{
	int me = -1, i;

	for (i = 0; i < n; i++) {
		if (ccom_bs_check_peer(bs, ranks[i]))
			return -EINVAL;
		if (ranks[i] == bs->rank)
			me = i;
	}
	if (me < 0)
		ccom_set_last_error("Bootstrap: subset operation on rank %d which is not in the subset",
				    bs->rank);
	return me < 0 ? -EINVAL : me;
}

/* Bruck over the subset, as ccom_bs_bruck_allgather_locked() over the job. */
int ccom_bootstrap_subset_allgather(struct ccom_bootstrap *bs, const int *ranks, int n, int tag,
				    void *buf, size_t slot_size)
{
	int me = bs_subset_me(bs, ranks, n), k, j, rc = 0;
	char *tmp, *b = buf;
	int dist;

	if (me < 0)
		return me;
	if (bs_check_slot(bs, slot_size))
		return -EINVAL;
	tmp = malloc((size_t)n * slot_size);
	if (!tmp) {
		ccom_set_last_error("Bootstrap: out of memory for a subset all-gather of %d x %zu bytes",
				    n, slot_size);
		return -ENOMEM;
	}
	memcpy(tmp, b + (size_t)me * slot_size, slot_size);
	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		size_t cnt = (size_t)(dist < n - dist ? dist : n - dist);
		int t = tag + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT);

		rc = ccom_bs_send_locked(bs, ranks[(me - dist + n) % n], t, tmp, cnt * slot_size);
		if (!rc)
			rc = ccom_bs_recv_locked(bs, ranks[(me + dist) % n], t,
						 tmp + (size_t)dist * slot_size, cnt * slot_size);
	}
	pthread_mutex_unlock(&bs->lock);
	for (j = 0; j < n && !rc; j++)
		memcpy(b + (size_t)((me + j) % n) * slot_size, tmp + (size_t)j * slot_size, slot_size);
	free(tmp);
	return rc;
}

/* Dissemination barrier over the subset. */
int ccom_bootstrap_subset_barrier(struct ccom_bootstrap *bs, const int *ranks, int n, int tag)
{
	int me = bs_subset_me(bs, ranks, n), k, rc = 0;
	int dist;

	if (me < 0)
		return me;
	pthread_mutex_lock(&bs->lock);
	for (k = 0, dist = 1; dist < n && !rc; k++, dist <<= 1) {
		int t = tag + BS_TAG_SUBSET_BASE + (k << BS_TAG_ROUND_SHIFT);

		rc = ccom_bs_send_locked(bs, ranks[(me + dist) % n], t, NULL, 0);
		if (!rc)
			rc = ccom_bs_recv_locked(bs, ranks[(me - dist + n) % n], t, NULL, 0);
	}
	pthread_mutex_unlock(&bs->lock);
	return rc;
}
