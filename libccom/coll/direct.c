// SPDX-License-Identifier: MIT
/*
 * direct.c - the direct engine (coll/ layer): every collective between the
 * ranks of one host through the staging area of the host segment.
 *
 * Each step moves one chunk: every rank copies the part of its input that
 * others need into its own staging slot, a host barrier publishes it, and
 * every rank then computes its part of the output reading its peers' slots
 * directly (no FIFO, no ring latency, all ranks busy at once).  AllReduce
 * and Reduce split each chunk into nlocal slices: rank r reduces slice r
 * from all slots into its own slot (copying it to its own output block by
 * block as it goes, while the block is in cache), and after the next
 * barrier everyone copies the peers' reduced slices out.  The reductions
 * are software-pipelined so that they also need one barrier per step:
 *	copy-in(0); barrier;
 *	for each step k: reduce(k); copy-in(k + 1); barrier; copy-out(k);
 *
 * Buffer reuse: step t uses staging buffer t % 3 (t counts steps across
 * operations, shm->stage_step).  Between two barriers a rank reads buffers
 * t - 1 (copy-out) and t (reduce) and writes t + 1; every peer finished
 * reading buffer t - 2 = t + 1 (mod 3) before it arrived at the barrier
 * this rank just passed.  So three buffers and one barrier per step are
 * enough for every collective.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "coll/algo.h"
#include "coll/channels.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "mem/mem.h"
#include "proxy/wait.h"
#include "reduce/reduce.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"

/* 2 ranks, reductions up to DIRECT_SMALL_STEP_MAX per rank: see direct_step(). */
#define DIRECT_SMALL_STEP (256u << 10)
#define DIRECT_SMALL_STEP_MAX (1u << 20)

struct dstep {
	struct ccom_shm *s;
	int b;		/* staging buffer of this step */
};

static int dstep_begin(struct ccom_shm *s, struct dstep *d)
{
	d->s = s;
	d->b = (int)(s->stage_step++ % CCOM_SHM_NBUF);
	return 0;
}

/* Slice p of @len elements split over @n ranks, 16-element aligned. */
static void slice(size_t len, int n, int p, size_t *lo, size_t *hi)
{
	*lo = p == 0 ? 0 : ((len * (size_t)p / (size_t)n) & ~(size_t)15);
	*hi = p == n - 1 ? len : ((len * (size_t)(p + 1) / (size_t)n) & ~(size_t)15);
	if (*hi < *lo)
		*hi = *lo;
}

/*
 * Reduce slice [lo, hi) of this step: own input + every peer's slot, into
 * this rank's slot; with @out (this chunk of the output, or NULL) the last
 * reduction also copies the finished slice there while it is in cache
 * (reduce_copy_out() then skips this rank's own slice).
 */
static void reduce_slice(struct dstep *d, const char *in, char *out, size_t lo, size_t hi,
			 const struct ccom_op *op, size_t esz, int nranks, bool nt)
{
	struct ccom_shm *s = d->s;
	struct ccom_channels *ch = s->comm->coll->channels;
	char *dst = ccom_shm_stage(s, d->b, s->me) + lo * esz;
	const char *a = in + lo * esz;
	size_t n = hi - lo;
	int p, last = s->nlocal - 1 == s->me ? s->nlocal - 2 : s->nlocal - 1;

	if (n == 0)
		return;
	for (p = 0; p < s->nlocal; p++) {
		if (p == s->me)
			continue;
		if (p == last)
			ccom_ch_reduce2_out(ch, dst, out ? out + lo * esz : NULL, a,
					    ccom_shm_stage(s, d->b, p) + lo * esz, n, op->dtype,
					    op->op, nranks, nt);
		else
			ccom_ch_reduce2(ch, dst, a, ccom_shm_stage(s, d->b, p) + lo * esz, n,
					op->dtype, op->op);
		a = dst;
	}
}

static void copy_out(struct ccom_shm *s, bool nt, void *dst, const void *src, size_t n)
{
	ccom_ch_copy(s->comm->coll->channels, dst, src, n, nt);
}

/* Copy chunk [off, off + len) of the input, except this rank's slice, to the slot. */
static void reduce_copy_in(struct dstep *d, const struct ccom_op *op, size_t esz, size_t off,
			   size_t len)
{
	struct ccom_shm *s = d->s;
	const char *in = (const char *)op->sendbuff + off * esz;
	char *mine = ccom_shm_stage(s, d->b, s->me);
	size_t lo, hi;

	slice(len, s->nlocal, s->me, &lo, &hi);
	ccom_ch_copy(s->comm->coll->channels, mine, in, lo * esz, false);
	ccom_ch_copy(s->comm->coll->channels, mine + hi * esz, in + hi * esz, (len - hi) * esz,
		     false);
}

/* Copy the peers' reduced slices of this chunk out (reduce_slice() wrote this rank's own). */
static void reduce_copy_out(struct dstep *d, const struct ccom_op *op, size_t esz, size_t off,
			    size_t len, bool nt)
{
	struct ccom_shm *s = d->s;
	char *out = (char *)op->recvbuff + off * esz;
	size_t lo, hi;
	int p;

	for (p = 0; p < s->nlocal; p++) {
		if (p == s->me)
			continue;
		slice(len, s->nlocal, p, &lo, &hi);
		copy_out(s, nt, out + lo * esz, ccom_shm_stage(s, d->b, p) + lo * esz, (hi - lo) * esz);
	}
}

/*
 * The step of a reduction of @bytes per rank: the chunk, but smaller at
 * 2 ranks when the user buffers stay in cache, as the three rotating
 * staging buffers should too (3 steps per rank are touched, 3 MiB with
 * 1 MiB steps).  Every rank computes the same step from the same size.
 */
static size_t direct_step(const struct ccom_shm *s, size_t bytes)
{
	if (s->nlocal == 2 && bytes <= DIRECT_SMALL_STEP_MAX && s->chunk > DIRECT_SMALL_STEP)
		return DIRECT_SMALL_STEP;
	return s->chunk;
}

/* AllReduce (root < 0) and Reduce (root >= 0), pipelined as the file head says. */
static int direct_reduce(struct ccomComm *comm, struct ccom_op *op, int root)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), off, len, lo, hi;
	size_t per = direct_step(s, op->count * esz) / esz;
	bool nt = op->count * esz >= CCOM_STREAM_COPY_MIN;
	bool out = root < 0 || root == s->me;
	struct dstep cur, next;
	int err;

	len = op->count < per ? op->count : per;
	/*
	 * Many steps: with more ranks than CPUs the barriers spin briefly and
	 * then sleep, never yield (8 ranks on 2 loaded CPUs, 64 MiB: yields
	 * were 60-150k involuntary switches per run and 3-4x the time).
	 */
	s->bulk = s->oversubscribed && op->count > per;
	dstep_begin(s, &cur);
	reduce_copy_in(&cur, op, esz, 0, len);
	err = ccom_shm_barrier(s);
	for (off = 0; !err && off < op->count; off += len) {
		len = op->count - off < per ? op->count - off : per;
		slice(len, s->nlocal, s->me, &lo, &hi);
		reduce_slice(&cur, (const char *)op->sendbuff + off * esz,
			     out ? (char *)op->recvbuff + off * esz : NULL, lo, hi, op, esz,
			     comm->nranks, nt);
		next = cur;
		if (off + len < op->count) {
			dstep_begin(s, &next);
			reduce_copy_in(&next, op, esz, off + len,
				       op->count - off - len < per ? op->count - off - len : per);
		}
		err = ccom_shm_barrier(s);
		if (!err && out)
			reduce_copy_out(&cur, op, esz, off, len, nt);
		cur = next;
	}
	s->bulk = false;
	if (nt)
		ccom_copy_stream_fence();
	return err;
}

/*
 * Wait until local rank @p's counter @ctr (in the segment) reaches @v;
 * @ring_first: this rank's bell, whose ring the caller deferred (rung
 * before the wait yields or sleeps), or NULL.
 */
static int wait_peer_ctr_ring(struct ccom_shm *s, int p, _Atomic uint64_t *ctr, uint64_t v,
			      struct ccom_bell *ring_first)
{
	struct ccom_wait w;
	int err = 0;

	if (atomic_load_explicit(ctr, memory_order_acquire) >= v)
		return 0;
	ccom_shm_wait_begin_peer(&w, s, p);
	w.ring_first = ring_first;
	while (atomic_load_explicit(ctr, memory_order_acquire) < v) {
		err = ccom_wait_step(&w);
		if (err)
			break;
	}
	ccom_wait_end(&w);
	return err;
}

static int wait_peer_ctr(struct ccom_shm *s, int p, _Atomic uint64_t *ctr, uint64_t v)
{
	return wait_peer_ctr_ring(s, p, ctr, v, NULL);
}

/* Wait until local rank @p has staged at least @v pieces (own bell rung first if it sleeps). */
static int wait_staged(struct ccom_shm *s, int p, uint64_t v)
{
	return wait_peer_ctr_ring(s, p, &s->hdr->ctl[p].staged, v, &s->hdr->ctl[s->me].bell);
}

static bool all_staged(struct ccom_shm *s, uint64_t v)
{
	int p;

	for (p = 0; p < s->nlocal; p++)
		if (p != s->me &&
		    atomic_load_explicit(&s->hdr->ctl[p].staged, memory_order_acquire) < v)
			return false;
	return true;
}

/* A piece of the one-shot: out = in_0 OP in_1 OP ... in rank order. */
static void oneshot_reduce(struct ccom_shm *s, const struct ccom_op *op, int b, size_t off,
			   size_t len, size_t esz, int nranks)
{
	const char *in = (const char *)op->sendbuff + off * esz;
	char *out = (char *)op->recvbuff + off * esz;
	const char *src0 = s->me == 0 ? in : ccom_shm_stage(s, b, 0) + off * esz;
	const char *src1 = s->me == 1 ? in : ccom_shm_stage(s, b, 1) + off * esz;
	int p;

	ccom_reduce2(out, src0, src1, len, op->dtype, op->op);
	/* Own input from its staged copy from here on: @out may alias @in. */
	for (p = 2; p < s->nlocal; p++)
		ccom_reduce2(out, out, ccom_shm_stage(s, b, p) + off * esz, len, op->dtype, op->op);
	ccom_reduce_finish(out, len, op->dtype, op->op, nranks);
}

/*
 * One-shot AllReduce for messages that fit one step: everyone stages its
 * whole input and everyone reduces all inputs in rank order (bitwise
 * identical results).  No barrier: the input is staged in pieces of
 * shm->piece bytes (128 KiB), each published by bumping this rank's staged
 * counter, and a rank reduces piece k as soon as every peer staged it,
 * between its own copies, so copies and reductions overlap and the data
 * is read while it is still in the peer's cache.  Buffer reuse: a rank
 * that finished operation t - 1 saw every peer stage pieces of t - 1, so
 * every peer had finished operation t - 2 and its reads of buffer
 * t - 3 = t (mod 3).  Used with 2 ranks (same work as the sliced engine,
 * no barrier) and for small messages.
 */
static bool oneshot_fits(const struct ccom_shm *s, size_t bytes)
{
	return bytes <= direct_step(s, bytes) &&
	       (s->nlocal == 2 || bytes * (size_t)s->nlocal <= (256u << 10));
}

#define ONESHOT_DEFER_RING_MAX (64u << 10)

static int direct_allreduce_oneshot(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), n = op->count, per = s->piece / esz;
	size_t npieces = (n + per - 1) / per, k, r = 0, off;
	uint64_t base = s->staged_seq;
	char *mine;
	struct dstep d;
	int err = 0;

	dstep_begin(s, &d);
	mine = ccom_shm_stage(s, d.b, s->me);
	s->staged_seq += npieces;
	for (k = 0; k < npieces; k++) {
		off = k * per;
		memcpy(mine + off * esz, (const char *)op->sendbuff + off * esz,
		       (n - off < per ? n - off : per) * esz);
		/* The call rides with the first bump: one write of the line peers poll. */
		if (k == 0)
			ccom_shm_staged_sig_post(s);
		atomic_store_explicit(&s->hdr->ctl[s->me].staged, base + k + 1,
				      memory_order_release);
		/*
		 * Waiters only ever wait for the last piece.  Up to 64 KiB its
		 * ring is deferred (ll128.c has why): before this rank's own
		 * waits yield or sleep (wait_staged()), and at the end, a few
		 * microseconds of reduction later; larger ones ring now.
		 */
		if (k == npieces - 1 && n * esz > ONESHOT_DEFER_RING_MAX)
			ccom_shm_ring(s);
		/* Reduce what every peer has staged already (never ahead of own copies). */
		while (r <= k && all_staged(s, base + r + 1)) {
			off = r * per;
			oneshot_reduce(s, op, d.b, off, n - off < per ? n - off : per, esz,
				       comm->nranks);
			r++;
		}
	}
	/*
	 * The rest in one wait: when a peer is behind (descheduled, or sharing
	 * this CPU) a wait per piece would cost a wake-up per piece.
	 */
	for (k = 0; k < (size_t)s->nlocal && r < npieces && !err; k++)
		if ((int)k != s->me)
			err = wait_staged(s, (int)k, base + npieces);
	for (; !err && r < npieces; r++) {
		off = r * per;
		oneshot_reduce(s, op, d.b, off, n - off < per ? n - off : per, esz, comm->nranks);
	}
	if (n * esz <= ONESHOT_DEFER_RING_MAX)
		ccom_shm_ring(s);
	/* Every peer staged the last piece: its call is in the line read for it. */
	if (!err && ccom_shm_staged_sig_match(s))
		s->sig_checked = true;
	return err;
}

/*
 * Zero-copy AllReduce (also ReduceScatter and AllGather, below), when
 * every local rank's send and receive buffers are ccomMemAlloc memory
 * (coll/direct.c's single-copy path).  Each rank
 * describes its two ranges in its zdesc line and publishes them by bumping
 * the line's seq.  A rank whose own ranges are not ccomMemAlloc memory
 * knows the answer and goes on with the staged engine at once (so malloc
 * buffers pay no extra synchronisation); the others wait for every peer's
 * description of this operation, and as they all read the same
 * descriptors they take the same decision: fall back to the staged engine
 * (whose own synchronisation keeps everyone in step, and no rank staged
 * anything before reading the descriptors it needed), or, if all ranges
 * are ccomMemAlloc buffers, each rank maps its peers' buffers
 * (cached) and reduces its slice straight from every rank's input, in rank
 * order, and writes the result into every rank's output (its own and the
 * peers'), block by block while the block is in cache; a second barrier
 * ends the operation.  Only rank r reads or writes slice r of any buffer,
 * so in-place operations are safe.  Input is read once and output written
 * once, with no staging copy.  The first time, the ranks also agree that
 * every mapping worked (else the path stays off for the communicator).
 */
#define ZCOPY_MIN_BYTES (64u << 10)	/* per rank; below, the barrier costs more */
#define ZCOPY_MAX_LOCAL 8		/* 2 * (8 - 1) mappings per op fit the cache */
#define ZCOPY_BLOCK (64u << 10)

static void zdesc_fill(struct ccom_shm_zdesc *z, int i, const void *p, size_t len)
{
	struct ccom_mem_ref ref;

	if (!ccom_mem_lookup(p, len, &ref)) {
		z->serial[i] = 0;
		return;
	}
	z->serial[i] = ref.serial;
	z->offset[i] = ref.offset;
	z->size[i] = ref.size;
	z->addr[i] = (uint64_t)(uintptr_t)p;
	z->fd[i] = ref.fd;
	z->ino[i] = ref.ino;
}

/*
 * Where local rank @l's range @i (0 send, 1 recv) of @bytes is in this
 * process, or NULL.  A peer's offset and size come from the shared
 * segment: the range must lie inside the allocation it names (whose size
 * ccom_shm_map_peer() checks against the file), or nothing is mapped.
 */
static char *zdesc_ptr(struct ccomComm *comm, struct ccom_shm *s, int l, int i, size_t bytes)
{
	struct ccom_shm_zdesc *z = &s->hdr->zdesc[l];
	uint64_t off = z->offset[i], size = z->size[i];
	char *base;

	if (l == s->me || comm->peers[comm->local_to_rank[l]].pid == getpid())
		return (char *)(uintptr_t)z->addr[i];
	if (off > size || bytes > size - off) {
		ccom_warn("rank %d: local peer rank %d describes its %s buffer as %llu bytes at offset %llu of a %llu-byte ccomMemAlloc allocation; a corrupt or hostile descriptor, its buffers are not mapped",
			  comm->rank, comm->local_to_rank[l], i ? "receive" : "send",
			  (unsigned long long)bytes, (unsigned long long)off,
			  (unsigned long long)size);
		errno = EBADMSG;
		return NULL;
	}
	base = ccom_shm_map_peer(s, l, z->serial[i], z->fd[i], z->ino[i], size);
	return base ? base + z->offset[i] : NULL;
}

static int zcopy_prepare(struct ccomComm *comm, struct ccom_op *op, size_t sbytes, size_t rbytes,
			 char **in, char **out)
{
	struct ccom_shm *s = comm->shm;
	struct ccom_shm_zdesc *z = &s->hdr->zdesc[s->me];
	bool ok = true;
	int l, err;

	zdesc_fill(z, 0, op->sendbuff, sbytes);
	zdesc_fill(z, 1, op->recvbuff, rbytes);
	atomic_store_explicit(&z->seq, ++s->zseq, memory_order_release);
	ccom_shm_ring(s);
	if (!z->serial[0] || !z->serial[1])
		return 1;	/* own buffers are not ccomMemAlloc memory: no one goes zero-copy */
	for (l = 0; l < s->nlocal; l++) {
		err = l == s->me ? 0 : wait_peer_ctr(s, l, &s->hdr->zdesc[l].seq, s->zseq);
		if (err)
			return err;
	}
	/* Every peer posted its call before its zdesc: agree before writing into their buffers. */
	err = ccom_shm_sig_verify(s, true);
	if (err)
		return err;
	for (l = 0; l < s->nlocal; l++)
		if (!s->hdr->zdesc[l].serial[0] || !s->hdr->zdesc[l].serial[1])
			return 1;	/* some rank's buffers are not ccomMemAlloc memory */
	for (l = 0; l < s->nlocal && ok; l++) {
		in[l] = zdesc_ptr(comm, s, l, 0, sbytes);
		out[l] = zdesc_ptr(comm, s, l, 1, rbytes);
		ok = in[l] && out[l];
	}
	if (s->zcopy_state == 0) {
		/* First use: agree that every rank could map every peer's buffers. */
		atomic_store(&z->map_ok, ok);
		err = ccom_shm_barrier(s);
		if (err)
			return err;
		for (l = 0; l < s->nlocal; l++)
			if (!atomic_load(&s->hdr->zdesc[l].map_ok))
				s->zcopy_state = -1;
		if (s->zcopy_state < 0) {
			ccom_info(CCOM_SUBSYS_COLL, "rank %d: a local rank cannot map its peers' ccomMemAlloc buffers (%s); they are staged like other memory",
				  comm->rank, ok ? "a peer failed" : strerror(errno));
			return 1;
		}
		s->zcopy_state = 1;
		ccom_info(CCOM_SUBSYS_COLL, "rank %d: zero-copy AllReduce on ccomMemAlloc buffers", comm->rank);
	} else if (!ok) {
		ccom_set_last_error("rank %d: cannot map a local peer's ccomMemAlloc buffer: %s (it worked for earlier buffers; out of memory or file descriptors?)",
				    comm->rank, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * dst[0..ndst) = src[0] OP src[1] OP ... (rank order) over @count elements,
 * in cached blocks.  With two ranks the block is reduced straight into
 * dst[0] (each element is read from both sources before it is written, so
 * dst[0] may be a source: in-place); with more it accumulates in scratch,
 * as a later source may be dst[0].
 */
static void zcopy_reduce(struct ccomComm *comm, const struct ccom_op *op, char **src, char **dst,
			 int ndst, size_t count)
{
	struct ccom_shm *s = comm->shm;
	struct ccom_channels *ch = comm->coll->channels;
	size_t esz = ccom_dtype_size(op->dtype), per = ZCOPY_BLOCK / esz, off, len, b;
	char *acc;
	int p;

	for (off = 0; off < count; off += len) {
		len = count - off < per ? count - off : per;
		b = off * esz;
		acc = s->nlocal == 2 ? dst[0] + b : comm->coll->tmp;
		ccom_ch_reduce2(ch, acc, src[0] + b, src[1] + b, len, op->dtype, op->op);
		for (p = 2; p < s->nlocal; p++)
			ccom_ch_reduce2(ch, acc, acc, src[p] + b, len, op->dtype, op->op);
		ccom_reduce_finish(acc, len, op->dtype, op->op, comm->nranks);
		for (p = 0; p < ndst; p++)
			if (dst[p] + b != acc)
				ccom_ch_copy(ch, dst[p] + b, acc, len * esz, false);
	}
}

/* AllReduce: this rank's slice from every input, written into every output (own first). */
static void zcopy_allreduce(struct ccomComm *comm, struct ccom_op *op, char **in, char **out)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), lo, hi;
	char *src[ZCOPY_MAX_LOCAL], *dst[ZCOPY_MAX_LOCAL];
	int p, k = 1;

	slice(op->count, s->nlocal, s->me, &lo, &hi);
	for (p = 0; p < s->nlocal; p++) {
		src[p] = in[p] + lo * esz;
		if (p != s->me)
			dst[k++] = out[p] + lo * esz;
	}
	dst[0] = out[s->me] + lo * esz;
	if (hi > lo)
		zcopy_reduce(comm, op, src, dst, s->nlocal, hi - lo);
}

/* ReduceScatter: block me of every input, reduced into the own output. */
static void zcopy_reducescatter(struct ccomComm *comm, struct ccom_op *op, char **in, char **out)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	char *src[ZCOPY_MAX_LOCAL];
	int p;

	for (p = 0; p < s->nlocal; p++)
		src[p] = in[p] + (size_t)s->me * bytes;
	zcopy_reduce(comm, op, src, &out[s->me], 1, op->count);
}

/* AllGather: every rank's input copied into block p of the own output. */
static void zcopy_allgather(struct ccomComm *comm, struct ccom_op *op, char **in, char **out)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype);
	int p;

	for (p = 0; p < s->nlocal; p++)
		if (out[s->me] + (size_t)p * bytes != in[p])
			ccom_ch_copy(comm->coll->channels, out[s->me] + (size_t)p * bytes, in[p], bytes,
				     false);
}

/*
 * AllReduce, ReduceScatter, AllGather: 0 done, 1 not applicable (run the
 * staged engine), or -errno.  Eligibility (and so the descriptor count)
 * is the same on every rank: same op, same shape, same zcopy_state.
 */
static int direct_zcopy(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype), sb = bytes, rb = bytes;
	char *in[ZCOPY_MAX_LOCAL], *out[ZCOPY_MAX_LOCAL];
	int err;

	if (s->zcopy_state < 0 || s->nlocal > ZCOPY_MAX_LOCAL || bytes < ZCOPY_MIN_BYTES)
		return 1;
	if (op->kind == CCOM_COLL_ALLGATHER)
		rb *= (size_t)s->nlocal;
	else if (op->kind == CCOM_COLL_REDUCESCATTER)
		sb *= (size_t)s->nlocal;
	else if (op->kind != CCOM_COLL_ALLREDUCE)
		return 1;
	err = zcopy_prepare(comm, op, sb, rb, in, out);
	if (err)
		return err;
	if (op->kind == CCOM_COLL_ALLREDUCE)
		zcopy_allreduce(comm, op, in, out);
	else if (op->kind == CCOM_COLL_REDUCESCATTER)
		zcopy_reducescatter(comm, op, in, out);
	else
		zcopy_allgather(comm, op, in, out);
	s->zcopy_ops++;
	/* Nobody returns (and lets its buffers change) while a peer uses them. */
	return ccom_shm_barrier(s);
}

static int direct_broadcast(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype), per = s->chunk * s->nlocal, off, len;
	bool root = op->root == s->me, nt = bytes >= CCOM_STREAM_COPY_MIN;
	struct dstep d;
	int err;

	if (root && op->recvbuff != op->sendbuff)
		ccom_ch_copy(comm->coll->channels, op->recvbuff, op->sendbuff, bytes, false);
	for (off = 0; off < bytes; off += len) {
		len = bytes - off < per ? bytes - off : per;
		dstep_begin(s, &d);
		if (root)
			ccom_ch_copy(comm->coll->channels, ccom_shm_stage(s, d.b, 0),
				     (const char *)op->sendbuff + off, len, false);
		err = ccom_shm_barrier(s);
		if (err)
			return err;
		if (!root)
			copy_out(s, nt, (char *)op->recvbuff + off, ccom_shm_stage(s, d.b, 0), len);
	}
	if (nt)
		ccom_copy_stream_fence();
	return 0;
}

static int direct_allgather(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t bytes = op->count * ccom_dtype_size(op->dtype), off, len;
	char *out = op->recvbuff;
	bool nt = bytes >= CCOM_STREAM_COPY_MIN;
	struct dstep d;
	int p, err;

	if (out + (size_t)s->me * bytes != op->sendbuff)
		ccom_ch_copy(comm->coll->channels, out + (size_t)s->me * bytes, op->sendbuff, bytes,
			     false);
	for (off = 0; off < bytes; off += len) {
		len = bytes - off < s->chunk ? bytes - off : s->chunk;
		dstep_begin(s, &d);
		ccom_ch_copy(comm->coll->channels, ccom_shm_stage(s, d.b, s->me),
			     (const char *)op->sendbuff + off, len, false);
		err = ccom_shm_barrier(s);
		if (err)
			return err;
		for (p = 0; p < s->nlocal; p++)
			if (p != s->me)
				copy_out(s, nt, out + (size_t)p * bytes + off, ccom_shm_stage(s, d.b, p), len);
	}
	if (nt)
		ccom_copy_stream_fence();
	return 0;
}

/* Copy block chunk [off, off+len) of every peer's block into my slot's sub-slots. */
static void stage_blocks(struct dstep *d, const char *in, size_t block, size_t off, size_t len,
			 size_t sub)
{
	struct ccom_shm *s = d->s;
	char *mine = ccom_shm_stage(s, d->b, s->me);
	int p;

	for (p = 0; p < s->nlocal; p++)
		if (p != s->me)
			ccom_ch_copy(s->comm->coll->channels, mine + (size_t)p * sub,
				     in + (size_t)p * block + off, len, false);
}

static int direct_reducescatter(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), sub = (s->chunk / s->nlocal) & ~(size_t)63;
	size_t block = op->count * esz, per = sub / esz, off, len;
	const char *in = op->sendbuff, *a;
	char *dst;
	struct dstep d;
	int p, err;

	for (off = 0; off < op->count; off += len) {
		len = op->count - off < per ? op->count - off : per;
		dstep_begin(s, &d);
		stage_blocks(&d, in, block, off * esz, len * esz, sub);
		err = ccom_shm_barrier(s);
		if (err)
			return err;
		dst = (char *)op->recvbuff + off * esz;
		a = in + (size_t)s->me * block + off * esz;
		for (p = 0; p < s->nlocal; p++) {
			if (p == s->me)
				continue;
			ccom_ch_reduce2(comm->coll->channels, dst, a,
					ccom_shm_stage(s, d.b, p) + (size_t)s->me * sub, len,
					op->dtype, op->op);
			a = dst;
		}
		ccom_reduce_finish(dst, len, op->dtype, op->op, comm->nranks);
	}
	return 0;
}

static int direct_alltoall(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_shm *s = comm->shm;
	size_t esz = ccom_dtype_size(op->dtype), sub = (s->chunk / s->nlocal) & ~(size_t)63;
	size_t block = op->count * esz, off, len;
	char *out = op->recvbuff;
	struct dstep d;
	int p, err;

	if (op->sendbuff != op->recvbuff)
		ccom_ch_copy(comm->coll->channels, out + (size_t)s->me * block,
			     (const char *)op->sendbuff + (size_t)s->me * block, block, false);
	for (off = 0; off < block; off += len) {
		len = block - off < sub ? block - off : sub;
		dstep_begin(s, &d);
		stage_blocks(&d, op->sendbuff, block, off, len, sub);
		err = ccom_shm_barrier(s);
		if (err)
			return err;
		for (p = 0; p < s->nlocal; p++)
			if (p != s->me)
				ccom_ch_copy(comm->coll->channels, out + (size_t)p * block + off,
					     ccom_shm_stage(s, d.b, p) + (size_t)s->me * sub, len,
					     false);
	}
	return 0;
}

int ccom_direct_run(struct ccomComm *comm, struct ccom_op *op)
{
	int err;

	switch (op->kind) {
	case CCOM_COLL_ALLREDUCE:
		err = direct_zcopy(comm, op);
		if (err <= 0)
			return err;
		if (oneshot_fits(comm->shm, op->count * ccom_dtype_size(op->dtype)))
			return direct_allreduce_oneshot(comm, op);
		return direct_reduce(comm, op, -1);
	case CCOM_COLL_REDUCE:
		return direct_reduce(comm, op, op->root);
	case CCOM_COLL_BROADCAST:
		return direct_broadcast(comm, op);
	case CCOM_COLL_ALLGATHER:
		err = direct_zcopy(comm, op);
		return err <= 0 ? err : direct_allgather(comm, op);
	case CCOM_COLL_REDUCESCATTER:
		err = direct_zcopy(comm, op);
		return err <= 0 ? err : direct_reducescatter(comm, op);
	case CCOM_COLL_ALLTOALL:
		return direct_alltoall(comm, op);
	default:
		return -EINVAL;
	}
}
