// SPDX-License-Identifier: MIT
/*
 * ll128.c - the LL128 protocol (coll/ layer): small and medium collectives
 * between the ranks of one host, one flag word per cache line.
 *
 * Every rank publishes its whole input into its LL128 slot as whole
 * 64-byte lines: 56 payload bytes, then the line's flag (the operation's
 * LL128 sequence number) with a release store after them, so a reader
 * that sees the flag sees the line's data.  Line 0 carries the
 * collective's signature (the mismatch board's two words) before 40
 * payload bytes, so an 8-byte AllReduce moves exactly one line each way:
 * data, synchronisation and the mismatch check together.  Where LL
 * (ll.c) pays an 8-byte atomic store per 4 data bytes and a line
 * transfer per 32, LL128 copies lines with ordinary stores (7/8 of each
 * line is payload).  Each rank then computes its own output from the
 * published inputs (ll.h, shared with LL).
 *
 * A reader waits for the last line of a group of lines before it copies
 * the group, so it does not pull lines across cores while the writer is
 * still filling them; then it checks each line's flag (never wrong under
 * x86's store order, but checked).
 *
 * Wake-ups: the writer does not fence after publishing.  Its bell is rung
 * (fence + a look at its sleepers) before any of its own waits yields or
 * sleeps (ccom_wait.ring_first) and once at the end of the operation, by
 * which time the stores' cache-line transfers have long completed: the
 * fence costs nothing on the critical path.  A peer that sleeps waits on
 * data this rank published; the ring at the latest at the end of this
 * rank's operation (or earlier, before it blocks) wakes it.
 *
 * Slot reuse: operation k uses set k % 2; as in LL, every rank reads at
 * least line 0 of every peer in every operation, so when a rank starts
 * operation k + 2 every peer has published k + 1, i.e. finished reading k.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/ll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/wait.h"
#include "reduce/reduce.h"
#include "transport/shm.h"
#include "util/err.h"

#define LL128_GROUP 32		/* lines a reader waits for at once (1.75 KiB) */

/* Payload byte offset where line @li starts (line 0: the header's 40 bytes). */
static size_t line_start(size_t li)
{
	return li ? CCOM_SHM_LL128_HDR_DATA + (li - 1) * CCOM_SHM_LL128_LINE_DATA : 0;
}

/* The line holding payload byte @p. */
static size_t line_of(size_t p)
{
	return p < CCOM_SHM_LL128_HDR_DATA ? 0 :
	       1 + (p - CCOM_SHM_LL128_HDR_DATA) / CCOM_SHM_LL128_LINE_DATA;
}

static char *line_payload(struct ccom_shm_ll128_line *l, size_t li)
{
	return (char *)l->data + (li ? 0 : 16);
}

/*
 * The header (signature), then the data after it, each line's flag last.
 * Whole lines are copied with a constant size (inlined vector moves), only
 * the last one byte by byte.
 */
static void ll128_publish(struct ccom_shm *s, struct ccom_shm_ll128_line *slot, const char *src,
			  size_t bytes, uint64_t flag)
{
	size_t p = bytes < CCOM_SHM_LL128_HDR_DATA ? bytes : CCOM_SHM_LL128_HDR_DATA;
	struct ccom_shm_ll128_line *l = slot + 1;

	slot[0].data[0] = s->sig.seq ? s->sig_ab[0] : 0;
	slot[0].data[1] = s->sig.seq ? s->sig_ab[1] : 0;
	if (p == CCOM_SHM_LL128_HDR_DATA)
		memcpy(&slot[0].data[2], src, CCOM_SHM_LL128_HDR_DATA);
	else
		memcpy(&slot[0].data[2], src, p);
	atomic_store_explicit(&slot[0].flag, flag, memory_order_release);
	for (; p + CCOM_SHM_LL128_LINE_DATA <= bytes; p += CCOM_SHM_LL128_LINE_DATA, l++) {
		memcpy(l->data, src + p, CCOM_SHM_LL128_LINE_DATA);
		atomic_store_explicit(&l->flag, flag, memory_order_release);
	}
	if (p < bytes) {
		memcpy(l->data, src + p, bytes - p);
		atomic_store_explicit(&l->flag, flag, memory_order_release);
	}
}

/* LL128's reader (ll.h): slot set @set of each peer, flag @flag. */
struct ll128_reader {
	struct ccom_ll_reader rd;
	struct ccom_shm *s;
	uint64_t flag;
	int set;
};

static bool line_ready(const struct ccom_shm_ll128_line *l, uint64_t flag)
{
	return atomic_load_explicit(&l->flag, memory_order_acquire) == flag;
}

/*
 * Wait until @l carries @flag.  The wait (a CPU and clock read) starts
 * only when the line is not there yet; it rings this rank's deferred bell
 * before it yields or sleeps.
 */
static int wait_line(struct ll128_reader *r, int peer, const struct ccom_shm_ll128_line *l,
		     struct ccom_wait *w, bool *begun)
{
	int err;

	if (line_ready(l, r->flag))
		return 0;
	if (!*begun) {
		ccom_shm_wait_begin_peer(w, r->s, peer);
		w->ring_first = &r->s->hdr->ctl[r->s->me].bell;
		*begun = true;
	}
	while (!line_ready(l, r->flag)) {
		err = ccom_wait_step(w);
		if (err)
			return err;
	}
	return 0;
}

static int ll128_read(struct ccom_ll_reader *rd, int peer, char *dst, size_t off, size_t len)
{
	struct ll128_reader *r = (struct ll128_reader *)rd;
	struct ccom_shm *s = r->s;
	struct ccom_shm_ll128_line *slot = ccom_shm_ll128_slot(s, r->set, peer);
	size_t li, g, last, lo, hi, a, b;
	struct ccom_wait w;
	bool begun = false;
	int err;

	err = wait_line(r, peer, &slot[0], &w, &begun);
	if (!err)
		err = ccom_shm_sig_compare_ab(s, peer, slot[0].data[0], slot[0].data[1]);
	if (err || !len)
		goto out;
	last = line_of(off + len - 1);
	for (g = line_of(off); g <= last && !err; g += LL128_GROUP) {
		err = wait_line(r, peer, &slot[g + LL128_GROUP - 1 < last ? g + LL128_GROUP - 1 : last],
				&w, &begun);
		for (li = g; !err && li < g + LL128_GROUP && li <= last; li++) {
			err = wait_line(r, peer, &slot[li], &w, &begun);
			a = line_start(li);
			if (li && a >= off && a + CCOM_SHM_LL128_LINE_DATA <= off + len) {
				if (!err)	/* a whole line: constant size, inlined */
					memcpy(dst + (a - off), slot[li].data, CCOM_SHM_LL128_LINE_DATA);
				continue;
			}
			b = li ? a + CCOM_SHM_LL128_LINE_DATA : CCOM_SHM_LL128_HDR_DATA;
			lo = a > off ? a : off;
			hi = b < off + len ? b : off + len;
			if (!err)
				memcpy(dst + (lo - off), line_payload(&slot[li], li) + (lo - a), hi - lo);
		}
	}
out:
	if (begun)
		ccom_wait_end(&w);
	return err;
}

/*
 * An AllReduce of at most 40 bytes lives in line 0 of every slot: reduce
 * straight from the peers' lines, in rank order, without gathering into
 * scratch.  The own contribution comes from the input, not the own line:
 * a load of data still in this core's store buffer would wait for the
 * line's transfer that the deferred fence avoids (measured: 0.50 against
 * 0.44 us).  A rank after the second that reduces in place first copies
 * its input, which the partial result overwrites.
 */
static const char *line0_src(struct ll128_reader *r, int p, const char *own)
{
	return p == r->s->me ? own : line_payload(ccom_shm_ll128_slot(r->s, r->set, p), 0);
}

static int ll128_allreduce_line0(struct ccomComm *comm, struct ccom_op *op, struct ll128_reader *r,
				 size_t bytes)
{
	struct ccom_shm *s = r->s;
	const char *own = op->sendbuff;
	char copy[CCOM_SHM_LL128_HDR_DATA];
	int p, err;

	for (p = 0; p < s->nlocal; p++) {
		if (p != s->me && (err = ll128_read(&r->rd, p, NULL, 0, 0)))
			return err;
	}
	if (s->me >= 2 && op->recvbuff == op->sendbuff) {
		memcpy(copy, own, bytes);
		own = copy;
	}
	ccom_reduce2(op->recvbuff, line0_src(r, 0, own), line0_src(r, 1, own), op->count,
		     op->dtype, op->op);
	for (p = 2; p < s->nlocal; p++)
		ccom_reduce2(op->recvbuff, op->recvbuff, line0_src(r, p, own), op->count, op->dtype,
			     op->op);
	ccom_reduce_finish(op->recvbuff, op->count, op->dtype, op->op, comm->nranks);
	return 0;
}

int ccom_ll128_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype), stride = (bytes + 63) & ~(size_t)63;
	struct ll128_reader r;
	int err;

	if (!ccom_shm_ll128_fits(op, s->nlocal, comm->coll->tmp_size)) {
		ccom_set_last_error("rank %d: %s of %zu elements does not fit the LL128 slots (%u bytes per rank); unset CCOM_PROTO=ll128 for it",
				    comm->rank, ccom_coll_kind_name(op->kind), op->count,
				    CCOM_SHM_LL128_MAX_BYTES);
		return -EINVAL;
	}
	r = (struct ll128_reader){ .rd.read = ll128_read, .s = s, .flag = ++s->ll128_seq };
	r.set = (int)(r.flag & 1);
	ll128_publish(s, ccom_shm_ll128_slot(s, r.set, s->me), op->sendbuff,
		      ccom_ll_publish_bytes(op, s->nlocal, s->me), r.flag);
	if (op->kind == CCOM_COLL_ALLREDUCE && bytes <= CCOM_SHM_LL128_HDR_DATA)
		err = ll128_allreduce_line0(comm, op, &r, bytes);
	else
		err = ccom_ll_finish(comm, op, &r.rd, comm->coll->tmp, stride);
	/* The deferred wake-up: its fence finds the stores long drained. */
	ccom_shm_ring(s);
	/* Every reader compared every peer's header: no second check needed. */
	s->sig_checked = !err;
	return err;
}
