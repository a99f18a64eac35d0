/* SPDX-License-Identifier: MIT */
/*
 * channels.h - the direct engine's channels (coll/ layer).
 *
 * NCCL splits a large operation over channels, each run by its own SM.  A
 * CPU rank's parallel units are cores: with CCOM_NCHANNELS = N > 1 a rank
 * starts N - 1 worker threads, and every large copy or reduction of the
 * direct engine (coll/direct.c) is cut into N contiguous parts, part 0 run
 * by the calling thread and part i by worker i, all at once.  A rank then
 * moves data with N cores' memory bandwidth instead of one core's.
 *
 * Auto (CCOM_NCHANNELS=0, the default) gives every local rank an equal
 * share of the CPUs this rank may run on, at most CCOM_MAX_CHANNELS: one
 * channel whenever ranks outnumber or match the CPUs, where extra threads
 * would only take CPU time from the other ranks.  The choice is local to
 * the rank (channels change no wire format), so ranks may differ.
 */
#ifndef CCOM_COLL_CHANNELS_H
#define CCOM_COLL_CHANNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "ccom.h"

struct ccomComm;
struct ccom_channels;

#define CCOM_MAX_CHANNELS 8
/* Copies and reductions smaller than this stay on the calling thread. */
#define CCOM_CHANNEL_MIN_BYTES (256u << 10)

/* Start the workers (none for one channel).  0 or -errno after ccom_set_last_error(). */
int ccom_channels_start(struct ccomComm *comm, struct ccom_channels **out);
/* Stop and join the workers; NULL is fine. */
void ccom_channels_stop(struct ccom_channels *ch);
/* Number of channels (1 for NULL). */
int ccom_channels_count(const struct ccom_channels *ch);

/*
 * memcpy(dst, src, bytes) over the channels; @nt: non-temporal stores
 * (ccom_copy_stream), fenced by each worker before it reports its part
 * done, so the caller's own ccom_copy_stream_fence() covers the whole.
 */
void ccom_ch_copy(struct ccom_channels *ch, void *dst, const void *src, size_t bytes, bool nt);
/* ccom_reduce2(dst, a, b, n, dt, op) over the channels. */
void ccom_ch_reduce2(struct ccom_channels *ch, void *dst, const void *a, const void *b, size_t n,
		     ccomDataType_t dt, ccomRedOp_t op);
/*
 * ccom_ch_copy() and ccom_ch_reduce2() where a source may be a local
 * peer's grant mapped through nccom (coll/kdev_mapped.c, kdev_p2p.c):
 * under util/fault_guard.h on every channel, so that a grant its owner
 * revoked (unmapped, or exited) meanwhile returns -EFAULT instead of
 * raising SIGBUS.  0 or -EFAULT; after -EFAULT @dst holds garbage.
 */
int ccom_ch_copy_mapped(struct ccom_channels *ch, void *dst, const void *src, size_t bytes, bool nt);
int ccom_ch_reduce2_mapped(struct ccom_channels *ch, void *dst, const void *a, const void *b,
			   size_t n, ccomDataType_t dt, ccomRedOp_t op);
/*
 * The last reduction of a slice: ccom_reduce2(dst, a, b, n, dt, op), then
 * ccom_reduce_finish(dst, n, dt, op, nranks) (none for @nranks 0), then a
 * copy of the result to @out (none for NULL; non-temporal stores if @nt,
 * fenced as ccom_ch_copy's), block by block so that the copy reads the
 * result while it is in the core's L1.  @out must not overlap @dst, @a or
 * @b except that it may be @a itself (an in-place input, read before the
 * block is written).
 */
void ccom_ch_reduce2_out(struct ccom_channels *ch, void *dst, void *out, const void *a,
			 const void *b, size_t n, ccomDataType_t dt, ccomRedOp_t op, int nranks,
			 bool nt);

#endif
