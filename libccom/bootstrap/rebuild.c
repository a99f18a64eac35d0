// SPDX-License-Identifier: MIT
/*
 * rebuild.c - entry points of an existing bootstrap used by
 * ccomCommShrink() to re-bootstrap the survivors (see rebuild.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_private.h"
#include "bootstrap/rebuild.h"
#include "util/err.h"
#include "util/misc.h"

const atomic_int *ccom_bootstrap_swap_abort(struct ccom_bootstrap *bs, const atomic_int *abort)
{
	const atomic_int *old;

	pthread_mutex_lock(&bs->lock);
	old = bs->abort;
	bs->abort = abort;
	pthread_mutex_unlock(&bs->lock);
	return old;
}

/* Pop the first queued message with @tag from a peer of the set not received yet. */
static struct bs_msg *take_any(struct ccom_bootstrap *bs, const int *peers, int n,
			       const unsigned char *got, uint32_t tag, int *idx)
{
	struct bs_msg **pp, *prev = NULL;
	int i;

	for (pp = &bs->q_head; *pp; prev = *pp, pp = &(*pp)->next) {
		struct bs_msg *m = *pp;

		if (m->tag != tag)
			continue;
		for (i = 0; i < n && (peers[i] != m->peer || got[i]); i++)
			;
		if (i == n)
			continue;
		*pp = m->next;
		if (bs->q_tail == m)
			bs->q_tail = prev;
		*idx = i;
		return m;
	}
	return NULL;
}

int ccom_bootstrap_recv_any(struct ccom_bootstrap *bs, const int *peers, int n,
			    unsigned char *got, int tag, void *data, size_t size, int *from)
{
	int64_t deadline = ccom_now_us() + bs->timeout_us;
	struct bs_msg *m = NULL;
	int i, idx = -1, rc = 0;

	for (i = 0; i < n; i++)
		if (ccom_bs_check_peer(bs, peers[i]))
			return -EINVAL;
	*from = -1;
	pthread_mutex_lock(&bs->lock);
	for (;;) {
		m = take_any(bs, peers, n, got, (uint32_t)tag, &idx);
		if (m)
			break;
		for (i = 0; i < n && (got[i] || peers[i] == bs->rank || !bs->rx[peers[i]].closed); i++)
			;
		if (i < n) {
			*from = peers[i];
			rc = bs->rx[peers[i]].err ? bs->rx[peers[i]].err : -ECONNRESET;
			break;
		}
		rc = ccom_bs_progress(bs, deadline, -1, 0);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&bs->lock);
	if (rc) {
		if (*from >= 0)
			ccom_set_last_error("Bootstrap: rank %d waiting for a message (tag %d) from rank %d: %s",
					    bs->rank, tag, *from, ccom_bs_err_str(rc));
		else
			ccom_set_last_error("Bootstrap: rank %d waiting for a message (tag %d) from %d rank(s): %s%s",
					    bs->rank, tag, n, ccom_bs_err_str(rc),
					    rc == -ETIMEDOUT ? " (CCOM_BOOTSTRAP_TIMEOUT)" : "");
		return rc;
	}
	*from = m->peer;
	got[idx] = 1;
	return ccom_bs_msg_consume(bs, m, tag, data, size);
}
