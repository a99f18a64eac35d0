// SPDX-License-Identifier: MIT
/*
 * channels.c - worker threads that split the direct engine's large copies
 * and reductions (coll/ layer).  See channels.h for the model.
 *
 * One task at a time, cut into one part per channel.  The caller publishes
 * it by bumping @gen; then the caller and every worker that is awake claim
 * parts from @next until none is left, and the caller waits until @done
 * counts every part.  A worker that is not running (more threads than
 * CPUs) therefore costs nothing: the caller takes its part.  Workers spin
 * briefly on @gen (the next step follows within microseconds), then sleep
 * on it as a futex.  A part is pure memory work that always finishes, so
 * the caller's wait needs no timeout: it spins, then yields the CPU.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll/channels.h"
#include "coll/coll.h"
#include "reduce/reduce.h"
#include "core/comm.h"
#include "topo/topo.h"
#include "util/err.h"
#include "util/fault_guard.h"
#include "util/log.h"
#include "util/params.h"

#define CH_SPIN 4000		/* polls of @gen before a worker sleeps */

struct ch_task {
	bool reduce;
	bool nt;
	bool guard;		/* a source may be a peer's grant: SIGBUS fails the task */
	char *dst;
	char *out;		/* reduce: copy of the finished result, or NULL */
	int nranks;		/* reduce: ccom_reduce_finish() over this many, or 0 */
	const char *a, *b;
	size_t n;		/* elements (reduce) or bytes (copy) */
	size_t esz;		/* bytes per element, 1 for a copy */
	ccomDataType_t dt;
	ccomRedOp_t op;
};

struct ch_worker {
	struct ccom_channels *ch;
	pthread_t th;
};

struct ccom_channels {
	int n;
	_Atomic uint32_t gen;		/* futex word: bumped per task and at stop */
	_Atomic int sleepers;
	_Atomic int next;		/* next part of the current task to claim */
	_Atomic int done;		/* parts of the current task finished */
	_Atomic bool stop;
	_Atomic bool faulted;		/* a guarded part hit a revoked mapping */
	struct ch_task task;
	struct ch_worker w[CCOM_MAX_CHANNELS];
};

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

/*
 * A reduction with an output copy runs in blocks this large (bytes): the
 * copy then reads each block of the result from L1 right after the
 * reduction wrote it, instead of from L2/L3 (or the peer's cache) later.
 */
#define CH_OUT_BLOCK (16u << 10)

/* Elements [lo, hi) of reduction task @t: reduce, finish, copy out. */
static void ch_reduce_range(const struct ch_task *t, size_t lo, size_t hi)
{
	size_t off = lo * t->esz, n = hi - lo;

	ccom_reduce2(t->dst + off, t->a + off, t->b + off, n, t->dt, t->op);
	if (t->nranks)
		ccom_reduce_finish(t->dst + off, n, t->dt, t->op, t->nranks);
	if (!t->out)
		return;
	if (t->nt)
		ccom_copy_stream(t->out + off, t->dst + off, n * t->esz);
	else
		memcpy(t->out + off, t->dst + off, n * t->esz);
}

/* Part @p of @t: element range cut on 64-byte boundaries. */
static void ch_run_part(const struct ch_task *t, int p, int n)
{
	size_t g = t->esz < 64 ? 64 / t->esz : 1;
	size_t lo = t->n * (size_t)p / (size_t)n / g * g;
	size_t hi = p == n - 1 ? t->n : t->n * (size_t)(p + 1) / (size_t)n / g * g;
	size_t off = lo * t->esz, blk = CH_OUT_BLOCK / t->esz, b;

	if (hi <= lo)
		return;
	if (t->reduce && t->out)
		for (b = lo; b < hi; b += blk)
			ch_reduce_range(t, b, hi - b < blk ? hi : b + blk);
	else if (t->reduce)
		ch_reduce_range(t, lo, hi);
	else if (t->nt)
		ccom_copy_stream(t->dst + off, t->a + off, hi - lo);
	else
		memcpy(t->dst + off, t->a + off, hi - lo);
}

struct ch_part {
	const struct ch_task *t;
	int p, n;
};

static void ch_part_thunk(void *arg)
{
	const struct ch_part *x = arg;

	ch_run_part(x->t, x->p, x->n);
}

/* Part @p of @t, under the fault guard if @t asks for it: 0 or -EFAULT. */
static int ch_run_part_guarded(const struct ch_task *t, int p, int n)
{
	struct ch_part x = { t, p, n };

	if (!t->guard) {
		ch_run_part(t, p, n);
		return 0;
	}
	return ccom_fault_guard(ch_part_thunk, &x);
}

/*
 * Run parts of the current task until none is left.  A part claimed from
 * @next (acquire) sees the task written before @next was reset (release),
 * also by a worker that woke for an earlier task.
 */
static void ch_claim_parts(struct ccom_channels *ch)
{
	int p;

	while ((p = atomic_fetch_add_explicit(&ch->next, 1, memory_order_acq_rel)) < ch->n) {
		if (ch_run_part_guarded(&ch->task, p, ch->n))
			atomic_store_explicit(&ch->faulted, true, memory_order_relaxed);
		if (ch->task.nt)
			ccom_copy_stream_fence();
		atomic_fetch_add_explicit(&ch->done, 1, memory_order_release);
	}
}

static void *ch_worker_main(void *arg)
{
	struct ch_worker *w = arg;
	struct ccom_channels *ch = w->ch;
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	uint32_t seen = 0;
	int spins;

	for (;;) {
		for (spins = 0; atomic_load_explicit(&ch->gen, memory_order_acquire) == seen &&
				spins < CH_SPIN; spins++)
			__builtin_ia32_pause();
		while (atomic_load_explicit(&ch->gen, memory_order_acquire) == seen) {
			atomic_fetch_add(&ch->sleepers, 1);
			if (atomic_load(&ch->gen) == seen)
				futex(&ch->gen, FUTEX_WAIT, seen, &nap);
			atomic_fetch_sub(&ch->sleepers, 1);
		}
		seen = atomic_load_explicit(&ch->gen, memory_order_acquire);
		if (atomic_load(&ch->stop))
			return NULL;
		ch_claim_parts(ch);
	}
}

/* 0, or -EFAULT if a guarded task touched a revoked mapping (the parts all ran). */
static int ch_run(struct ccom_channels *ch, const struct ch_task *t)
{
	int spins = 0;

	if (!ch || ch->n == 1 || t->n * t->esz < CCOM_CHANNEL_MIN_BYTES)
		return ch_run_part_guarded(t, 0, 1);
	/* Every part of the previous task is done: no worker touches these now. */
	atomic_store_explicit(&ch->done, 0, memory_order_relaxed);
	atomic_store_explicit(&ch->faulted, false, memory_order_relaxed);
	ch->task = *t;
	atomic_store_explicit(&ch->next, 0, memory_order_release);
	atomic_fetch_add(&ch->gen, 1);
	if (atomic_load(&ch->sleepers))
		futex(&ch->gen, FUTEX_WAKE, INT_MAX, NULL);
	ch_claim_parts(ch);
	while (atomic_load_explicit(&ch->done, memory_order_acquire) < ch->n) {
		if (++spins < CH_SPIN)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
	return atomic_load_explicit(&ch->faulted, memory_order_relaxed) ? -EFAULT : 0;
}

void ccom_ch_copy(struct ccom_channels *ch, void *dst, const void *src, size_t bytes, bool nt)
{
	struct ch_task t = { .nt = nt, .dst = dst, .a = src, .n = bytes, .esz = 1 };

	ch_run(ch, &t);
}

int ccom_ch_copy_mapped(struct ccom_channels *ch, void *dst, const void *src, size_t bytes, bool nt)
{
	struct ch_task t = { .nt = nt, .guard = true, .dst = dst, .a = src, .n = bytes, .esz = 1 };

	return ch_run(ch, &t);
}

int ccom_ch_reduce2_mapped(struct ccom_channels *ch, void *dst, const void *a, const void *b,
			   size_t n, ccomDataType_t dt, ccomRedOp_t op)
{
	struct ch_task t = { .reduce = true, .guard = true, .dst = dst, .a = a, .b = b, .n = n,
			     .esz = ccom_dtype_size(dt), .dt = dt, .op = op };

	return ch_run(ch, &t);
}

void ccom_ch_reduce2(struct ccom_channels *ch, void *dst, const void *a, const void *b, size_t n,
		     ccomDataType_t dt, ccomRedOp_t op)
{
	struct ch_task t = { .reduce = true, .dst = dst, .a = a, .b = b, .n = n,
			     .esz = ccom_dtype_size(dt), .dt = dt, .op = op };

	ch_run(ch, &t);
}

void ccom_ch_reduce2_out(struct ccom_channels *ch, void *dst, void *out, const void *a,
			 const void *b, size_t n, ccomDataType_t dt, ccomRedOp_t op, int nranks,
			 bool nt)
{
	struct ch_task t = { .reduce = true, .nt = nt && out, .dst = dst, .out = out, .a = a,
			     .b = b, .n = n, .esz = ccom_dtype_size(dt), .dt = dt, .op = op,
			     .nranks = nranks };

	ch_run(ch, &t);
}

int ccom_channels_count(const struct ccom_channels *ch)
{
	return ch ? ch->n : 1;
}

/* CCOM_NCHANNELS, or this rank's share of the CPUs it may run on. */
static int ch_wanted(const struct ccomComm *comm)
{
	int64_t v = ccom_param_int("CCOM_NCHANNELS");
	int ncpu = comm->topo ? comm->topo->naffinity : 1;
	int local = comm->local_nranks > 0 ? comm->local_nranks : 1;

	if (v < 0 || v > CCOM_MAX_CHANNELS) {
		ccom_warn("CCOM_NCHANNELS=%lld is outside 0-%d; using auto", (long long)v,
			  CCOM_MAX_CHANNELS);
		v = 0;
	}
	/* Auto stops at 4: past that a rank's copies are bound by memory, not cores. */
	if (v == 0)
		v = ncpu / local < 4 ? ncpu / local : 4;
	return v < 1 ? 1 : v > CCOM_MAX_CHANNELS ? CCOM_MAX_CHANNELS : (int)v;
}

int ccom_channels_start(struct ccomComm *comm, struct ccom_channels **out)
{
	struct ccom_channels *ch;
	int n = ch_wanted(comm), i, err;

	*out = NULL;
	if (n == 1)
		return 0;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		ccom_set_last_error("rank %d: out of memory for %d channels", comm->rank, n);
		return -ENOMEM;
	}
	ch->n = 1;
	atomic_init(&ch->next, n);	/* nothing to claim before the first task */
	for (i = 1; i < n; i++) {
		ch->w[i].ch = ch;
		err = pthread_create(&ch->w[i].th, NULL, ch_worker_main, &ch->w[i]);
		if (err) {
			ccom_set_last_error("rank %d: cannot start channel thread %d of %d: %s",
					    comm->rank, i, n, strerror(err));
			ccom_channels_stop(ch);
			return -err;
		}
		ch->n++;
	}
	ccom_info(CCOM_SUBSYS_COLL, "rank %d: %d channels (CCOM_NCHANNELS, %d CPUs for %d local ranks)",
		  comm->rank, n, comm->topo ? comm->topo->naffinity : 1, comm->local_nranks);
	*out = ch;
	return 0;
}

void ccom_channels_stop(struct ccom_channels *ch)
{
	int i;

	if (!ch)
		return;
	atomic_store(&ch->stop, true);
	atomic_fetch_add(&ch->gen, 1);
	futex(&ch->gen, FUTEX_WAKE, INT_MAX, NULL);
	for (i = 1; i < ch->n; i++)
		pthread_join(ch->w[i].th, NULL);
	free(ch);
}
