/* SPDX-License-Identifier: MIT */
/*
 * rebuild.h - what ccomCommShrink() (init/shrink.c) needs from an existing
 * bootstrap to re-bootstrap the survivors of a communicator over it.
 */
#ifndef CCOM_BOOTSTRAP_REBUILD_H
#define CCOM_BOOTSTRAP_REBUILD_H

#include <stdatomic.h>

struct ccom_bootstrap;

/*
 * Make every later wait of @bs poll *@abort instead of the flag it was
 * created with, and return that previous flag (so the caller can restore
 * it).  A revoked communicator's abort flag is set for good; its survivors
 * still exchange their shrink messages over its bootstrap, under the new
 * communicator's flag.  Waits for a call in progress on another thread.
 */
const atomic_int *ccom_bootstrap_swap_abort(struct ccom_bootstrap *bs, const atomic_int *abort);

/*
 * Receive one message of exactly @size bytes with @tag from whichever of
 * the @n ranks in @peers sends first, skipping those whose @got flag is
 * set; sets *@from and got[i].  A peer of the set whose connection closed
 * ends the wait at once (-ECONNRESET, *@from names it), so that a dead
 * rank never holds up messages the live ones already sent.  0 or -errno
 * after ccom_set_last_error(), bounded like every bootstrap wait.
 */
int ccom_bootstrap_recv_any(struct ccom_bootstrap *bs, const int *peers, int n,
			    unsigned char *got, int tag, void *data, size_t size, int *from);

#endif
