// SPDX-License-Identifier: MIT
/*
 * ll.c - the LL protocol (coll/ layer): latency-bound collectives between
 * the ranks of one host, with the synchronisation embedded in the data.
 *
 * Every rank publishes its whole input into its LL slot as 8-byte words,
 * 4 data bytes + 4 flag bytes, each word stored with one atomic 64-bit
 * store; the flag is the operation's LL sequence number.  A reader polls
 * the words it needs until their flag matches: no barrier, no fence, one
 * cache-line transfer per 32 bytes.  Each rank then computes its own output
 * from the published inputs (one-shot).
 *
 * Slot reuse: operation k uses set k % 2.  Every rank reads at least the
 * header of every peer in every LL operation, so when a rank starts
 * operation k + 2 every peer has published k + 1, i.e. finished reading k.
 *
 * Mismatch check: the header (CCOM_SHM_LL_HDR_WORDS words, same flag) is
 * the collective's signature (core/op.h); a reader compares it before it
 * waits for data, so on the 8-byte path the check costs four word stores
 * and loads in a cache line that is transferred anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/ll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/wait.h"
#include "reduce/reduce.h"
#include "transport/shm.h"

size_t ccom_ll_publish_bytes(const struct ccom_op *op, int nl, int me)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);

	switch (op->kind) {
	case CCOM_COLL_BROADCAST:
		return op->root == me ? b : 0;
	case CCOM_COLL_REDUCESCATTER:
	case CCOM_COLL_ALLTOALL:
		return b * (size_t)nl;
	default:
		return b;
	}
}

/* The signature header (mismatch check), then the data after it. */
static void ll_publish(struct ccom_shm *s, uint64_t *slot, const char *src, size_t bytes,
		       uint32_t flag)
{
	size_t nw = bytes ? (bytes + 3) / 4 : 1, i;
	uint32_t v;

	for (i = 0; i < CCOM_SHM_LL_HDR_WORDS; i++)
		__atomic_store_n(&slot[i], ((uint64_t)flag << 32) | s->sig_ll[i], __ATOMIC_RELAXED);
	slot += CCOM_SHM_LL_HDR_WORDS;
	for (i = 0; i < nw; i++) {
		v = 0;
		if (i * 4 < bytes)
			memcpy(&v, src + i * 4, bytes - i * 4 < 4 ? bytes - i * 4 : 4);
		__atomic_store_n(&slot[i], ((uint64_t)flag << 32) | v, __ATOMIC_RELAXED);
	}
}

/*
 * Wait for a peer's signature header and compare it with this rank's call
 * (before reading any data: a peer that called something else may never
 * publish what this rank would wait for).
 */
static int ll_check_sig(struct ccom_shm *s, int peer, const uint64_t *slot, uint32_t flag,
			struct ccom_wait *w_)
{
	uint32_t hdr[CCOM_SHM_LL_HDR_WORDS], diff = 0;
	struct ccom_op_sig theirs;
	uint64_t x;
	int i, err;

	while ((uint32_t)(__atomic_load_n(&slot[CCOM_SHM_LL_HDR_WORDS - 1], __ATOMIC_RELAXED) >> 32) != flag) {
		err = ccom_wait_step(w_);
		if (err)
			return err;
	}
	if (!s->sig.seq)
		return 0;
	for (i = 0; i < CCOM_SHM_LL_HDR_WORDS; i++) {
		x = __atomic_load_n(&slot[i], __ATOMIC_RELAXED);
		if ((uint32_t)(x >> 32) != flag)
			return 0;	/* cannot happen (stored in order); do not guess */
		hdr[i] = (uint32_t)x;
		diff |= hdr[i] ^ s->sig_ll[i];
	}
	if (!diff || !hdr[0])
		return 0;	/* the same call, or the peer runs with the check off */
	ccom_shm_ll_sig_unpack(hdr, &s->sig, &theirs);
	return ccom_shm_sig_compare(s, peer, &theirs);
}

/*
 * Wait for a peer's header (checking its signature), then for and unpack
 * bytes [off, off + len) of its data into @dst (len 0: the header only,
 * as a synchronisation).
 */
static int ll_read(struct ccomComm *comm, int peer, uint64_t *slot, char *dst, size_t off,
		   size_t len, uint32_t flag)
{
	struct ccom_shm *s = comm->shm;
	size_t w0 = off / 4, w1 = (off + len + 3) / 4, w, b, lo, hi;
	struct ccom_wait w_;
	uint64_t x;
	uint32_t v;
	int err = 0;

	ccom_shm_wait_begin_peer(&w_, s, peer);
	err = ll_check_sig(s, peer, slot, flag, &w_);
	if (err || !len)
		goto out;
	slot += CCOM_SHM_LL_HDR_WORDS;
	/*
	 * Wait for the last word first: the writer stores in order, so the
	 * rest is then (almost always) there and is read in one sweep.
	 * Chasing the writer word by word pulls each cache line across cores
	 * while it is still being written (several transfers per line).
	 */
	while ((uint32_t)(__atomic_load_n(&slot[w1 - 1], __ATOMIC_RELAXED) >> 32) != flag) {
		err = ccom_wait_step(&w_);
		if (err)
			goto out;
	}
	for (w = w0; w < w1; w++) {
		for (;;) {
			x = __atomic_load_n(&slot[w], __ATOMIC_RELAXED);
			if ((uint32_t)(x >> 32) == flag)
				break;
			err = ccom_wait_step(&w_);
			if (err)
				goto out;
		}
		v = (uint32_t)x;
		b = w * 4;
		lo = b > off ? b : off;
		hi = b + 4 < off + len ? b + 4 : off + len;
		if (hi > lo)
			memcpy(dst + (lo - off), (char *)&v + (lo - b), hi - lo);
	}
out:
	ccom_wait_end(&w_);
	return err;
}

/*
 * Gather from every peer the range each needs into tmp (peer p at
 * tmp + p * stride), then compute.  @off/@len: range of each peer's slot
 * this rank needs (len 0: just the header, as a sync).
 */
static int ll_collect(struct ccomComm *comm, struct ccom_ll_reader *rd, char *tmp, size_t stride,
		      size_t off, size_t len, int only)
{
	struct ccom_shm *s = comm->shm;
	int p, err;

	for (p = 0; p < s->nlocal; p++) {
		if (p == s->me)
			continue;
		err = rd->read(rd, p, tmp + (size_t)p * stride, (only < 0 || only == p) ? off : 0,
			       (only < 0 || only == p) ? len : 0);
		if (err)
			return err;
	}
	return 0;
}

/*
 * out = reduce over ranks of (own @in, every peer's tmp copy), always in
 * rank order, so that every rank computes bitwise the same AllReduce
 * result (floating-point sums depend on the order).  Own input is copied
 * into its tmp slot first: @out may alias @in.
 */
static void ll_reduce(struct ccomComm *comm, const struct ccom_op *op, char *out, const char *in,
		      char *tmp, size_t stride, size_t n)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = n * ccom_dtype_size(op->dtype);
	int p;

	memcpy(tmp + (size_t)s->me * stride, in, bytes);
	ccom_reduce2(out, tmp, tmp + stride, n, op->dtype, op->op);
	for (p = 2; p < s->nlocal; p++)
		ccom_reduce2(out, out, tmp + (size_t)p * stride, n, op->dtype, op->op);
	ccom_reduce_finish(out, n, op->dtype, op->op, comm->nranks);
}

int ccom_ll_finish(struct ccomComm *comm, struct ccom_op *op, struct ccom_ll_reader *rd, char *tmp,
		   size_t stride)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), b = op->count * esz;
	const char *in = op->sendbuff;
	char *out = op->recvbuff;
	int p, err = 0;

	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
	case CCOM_COLL_REDUCE:
		if (op->kind == CCOM_COLL_REDUCE && op->root != s->me)
			return ll_collect(comm, rd, tmp, stride, 0, 0, -2);
		err = ll_collect(comm, rd, tmp, stride, 0, b, -1);
		if (!err)
			ll_reduce(comm, op, out, in, tmp, stride, op->count);
		return err;
	case CCOM_COLL_BROADCAST:
		err = ll_collect(comm, rd, tmp, stride, 0, b, op->root);
		if (!err && op->root != s->me)
			memcpy(out, tmp + (size_t)op->root * stride, b);
		else if (!err && out != in)
			memcpy(out, in, b);
		return err;
	case CCOM_COLL_ALLGATHER:
		err = ll_collect(comm, rd, tmp, stride, 0, b, -1);
		for (p = 0; !err && p < s->nlocal; p++)
			if (out + (size_t)p * b != (p == s->me ? in : tmp + (size_t)p * stride))
				memmove(out + (size_t)p * b, p == s->me ? in : tmp + (size_t)p * stride, b);
		return err;
	case CCOM_COLL_REDUCESCATTER:
		err = ll_collect(comm, rd, tmp, stride, (size_t)s->me * b, b, -1);
		if (!err)
			ll_reduce(comm, op, out, in + (size_t)s->me * b, tmp, stride, op->count);
		return err;
	case CCOM_COLL_ALLTOALL:
		err = ll_collect(comm, rd, tmp, stride, (size_t)s->me * b, b, -1);
		for (p = 0; !err && p < s->nlocal; p++)
			if (p != s->me)
				memcpy(out + (size_t)p * b, tmp + (size_t)p * stride, b);
			else if (out != in)
				memcpy(out + (size_t)p * b, in + (size_t)p * b, b);
		return err;
	default:
		return -EINVAL;
	}
}

/* LL's reader: the words of slot set @set, flag @flag. */
struct ll_reader {
	struct ccom_ll_reader rd;
	struct ccomComm *comm;
	uint32_t flag;
	int set;
};

static int ll_reader_read(struct ccom_ll_reader *rd, int peer, char *dst, size_t off, size_t len)
{
	struct ll_reader *r = (struct ll_reader *)rd;

	return ll_read(r->comm, peer, ccom_shm_ll_slot(r->comm->shm, r->set, peer), dst, off, len,
		       r->flag);
}

int ccom_ll_run(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_shm *s = comm->shm;
	size_t stride = CCOM_SHM_LL_MAX_BYTES;
	uint32_t flag = ++s->ll_seq;
	struct ll_reader r;
	int set, err;

	if (!flag)			/* never publish flag 0: fresh memory reads as 0 */
		flag = s->ll_seq = 2;
	set = (int)(flag & 1);
	ll_publish(s, ccom_shm_ll_slot(s, set, s->me), op->sendbuff,
		   ccom_ll_publish_bytes(op, s->nlocal, s->me), flag);
	ccom_shm_ring(s);
	r = (struct ll_reader){ .rd.read = ll_reader_read, .comm = comm, .flag = flag, .set = set };
	err = ccom_ll_finish(comm, op, &r.rd, cs->tmp, stride);
	/* Every reader compared every peer's header: no second check needed. */
	s->sig_checked = !err;
	return err;
}
