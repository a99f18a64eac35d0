// SPDX-License-Identifier: MIT
/*
 * stream.c - the per-communicator operation queue, its progress thread and
 * the public stream API (proxy/ room).  See stream.h for the model.
 *
 * Completion: the progress thread bumps stream->completed, then, if a
 * synchronizer sleeps and its target is reached, stream->done_seq (the
 * futex word) and wakes it.
 * A synchronizer registers in stream->waiters before its last check, so
 * the seq_cst pair (waiters++ / completed read) against (completed++ /
 * waiters read) never loses a wake-up.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "proxy/stream.h"
#include "publish/publish.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

static long futex_private(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

/*
 * @s->completing brackets every access, so that ccomStreamDestroy() (which
 * may run as soon as @s->completed reaches its target) waits for the last
 * access before freeing.
 */
static void stream_complete(struct ccomStream *s, int err, const char *msg)
{
	uint64_t done;

	/*
	 * One executor at a time (q->exec, or the stop after the thread
	 * left): plain stores suffice for the bracket.  The increment of
	 * @completed (release) publishes this one; the final store releases
	 * every access before it.
	 */
	atomic_store_explicit(&s->completing,
			      atomic_load_explicit(&s->completing, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (err) {
		int zero = 0;

		pthread_mutex_lock(&s->err_lock);
		if (atomic_compare_exchange_strong(&s->err, &zero, err))
			snprintf(s->errmsg, sizeof(s->errmsg), "%s", msg);
		pthread_mutex_unlock(&s->err_lock);
	}
	done = atomic_fetch_add(&s->completed, 1) + 1;
	/*
	 * Pairs with the waiters increment in stream_wait().  Wake only when a
	 * sleeper's target is reached: one wake-up per synchronize, not per op.
	 * The futex word moves only then too: a sleeper that registered after
	 * this op's completed increment sees it (seq_cst), one that registered
	 * before it is seen here, and an earlier bump would wake nobody.
	 */
	if (atomic_load(&s->waiters) && done >= atomic_load(&s->wake_at)) {
		atomic_fetch_add(&s->done_seq, 1);
		futex_private(&s->done_seq, FUTEX_WAKE, INT_MAX, NULL);
	}
	atomic_store_explicit(&s->completing,
			      atomic_load_explicit(&s->completing, memory_order_relaxed) - 1,
			      memory_order_release);
}

/*
 * The queue is an intrusive multi-producer single-consumer list (D. Vyukov's
 * design, written from its description): an enqueue is one exchange of
 * @q->tail and a store, a take reads the consumer's @q->head; a stub
 * record keeps the list non-empty.  The consumer is whichever thread holds
 * q->exec (the mutex orders one consumer after the other).
 */
static void queue_push(struct ccom_stream_queue *q, struct ccom_op *op)
{
	struct ccom_op *prev;

	__atomic_store_n(&op->next, NULL, __ATOMIC_RELAXED);
	prev = atomic_exchange_explicit(&q->tail, op, memory_order_acq_rel);
	__atomic_store_n(&prev->next, op, __ATOMIC_RELEASE);
}

/*
 * Take the next op, or NULL if the queue is empty (or an enqueue is
 * between its exchange and its link: the caller sees pending > 0 and
 * comes back).  Caller holds q->exec.
 */
static struct ccom_op *queue_take(struct ccom_stream_queue *q)
{
	struct ccom_op *op = q->head, *next = __atomic_load_n(&op->next, __ATOMIC_ACQUIRE);

	if (op == &q->stub) {
		if (!next)
			return NULL;
		q->head = op = next;
		next = __atomic_load_n(&op->next, __ATOMIC_ACQUIRE);
	}
	if (next) {
		q->head = next;
		return op;
	}
	if (op != atomic_load_explicit(&q->tail, memory_order_acquire))
		return NULL;
	/* @op is the last one: put the stub behind it, so the list never empties. */
	queue_push(q, &q->stub);
	next = __atomic_load_n(&op->next, __ATOMIC_ACQUIRE);
	if (!next)
		return NULL;
	q->head = next;
	return op;
}

/* Nothing queued (as far as the consumer, holding q->exec, can tell). */
static bool queue_empty(struct ccom_stream_queue *q)
{
	return q->head == &q->stub && !__atomic_load_n(&q->stub.next, __ATOMIC_ACQUIRE) &&
	       atomic_load_explicit(&q->tail, memory_order_acquire) == &q->stub;
}

static bool op_in_block(const struct ccom_stream_queue *q, const struct ccom_op *op)
{
	uintptr_t b = (uintptr_t)q->block, o = (uintptr_t)op;

	return q->block && o >= b && o < b + CCOM_OP_RECORDS_BLOCK * sizeof(*op);
}

static void op_free(struct ccom_stream_queue *q, struct ccom_op *op)
{
	free(op->subs);
	if (!op_in_block(q, op))
		free(op);
}

static void op_free_list(struct ccom_stream_queue *q, struct ccom_op *op)
{
	struct ccom_op *next;

	for (; op; op = next) {
		next = op->next;
		op_free(q, op);
	}
}

/*
 * The first records, in one block on the issuing thread's list.  An
 * application (or ccom-perf) that enqueues a burst of small ops before it
 * synchronizes otherwise pays a malloc per op, on fresh memory, for the
 * first burst: 8-byte AllReduce, 2 ranks, 1000 ops per burst after 50
 * warm-up ones: 0.43-0.82 us per op against 0.30-0.39 us with the records
 * already there (interleaved, load 6).  128 KiB per communicator; without
 * the block the records are allocated one by one as before.
 */
static void op_block_alloc(struct ccom_stream_queue *q)
{
	int i;

	q->block = calloc(CCOM_OP_RECORDS_BLOCK, sizeof(*q->block));
	if (!q->block)
		return;
	/* Linking them writes every record: the pages fault in here, not in the first burst. */
	for (i = 0; i < CCOM_OP_RECORDS_BLOCK; i++)
		q->block[i].next = i + 1 < CCOM_OP_RECORDS_BLOCK ? &q->block[i + 1] : NULL;
	q->cache = q->block;
	atomic_store_explicit(&q->nrecords, CCOM_OP_RECORDS_BLOCK, memory_order_relaxed);
}

/* After the op ran (any executor): recycle its record, or free it past the limit. */
static void op_recycle(struct ccom_stream_queue *q, struct ccom_op *op)
{
	struct ccom_op *head;

	if (atomic_load_explicit(&q->nrecords, memory_order_relaxed) > CCOM_OP_RECORDS_KEEP &&
	    !op_in_block(q, op)) {
		atomic_fetch_sub_explicit(&q->nrecords, 1, memory_order_relaxed);
		op_free(q, op);
		return;
	}
	head = atomic_load_explicit(&q->recycled, memory_order_relaxed);
	do
		op->next = head;
	while (!atomic_compare_exchange_weak_explicit(&q->recycled, &head, op, memory_order_release,
						      memory_order_relaxed));
}

struct ccom_op *ccom_stream_op_get(struct ccomComm *comm)
{
	struct ccom_stream_queue *q = comm->proxy->queue;
	struct ccom_op *op = q->cache, *subs;
	int cap;

	/*
	 * Look before taking: with more ops queued than records kept the list
	 * is mostly empty, and an exchange would pull the executor's line
	 * here for nothing.
	 */
	if (!op && atomic_load_explicit(&q->recycled, memory_order_relaxed))
		op = atomic_exchange_explicit(&q->recycled, NULL, memory_order_acquire);
	if (!op) {
		op = malloc(sizeof(*op));
		if (op) {
			*op = (struct ccom_op){ 0 };
			atomic_fetch_add_explicit(&q->nrecords, 1, memory_order_relaxed);
		}
		return op;
	}
	q->cache = op->next;
	subs = op->subs;
	cap = op->subs_cap;
	*op = (struct ccom_op){ .subs = subs, .subs_cap = cap };
	return op;
}

void ccom_stream_op_put(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_stream_queue *q = comm->proxy->queue;

	op->next = q->cache;
	q->cache = op;
}

/* The first failed op of the comm dumps the flight recorder (the error sentence kept). */
static void flight_dump_failure(struct ccomComm *comm, const struct ccom_op *op, int err)
{
	char msg[1024], reason[1024 + 96];

	if (!comm->proxy->flight || atomic_load(&comm->proxy->flight->dumped))
		return;
	snprintf(msg, sizeof(msg), "%s", ccom_last_error());
	snprintf(reason, sizeof(reason), "op %llu (%s) failed with %s: %s",
		 (unsigned long long)op->flight_seq, ccom_coll_kind_name(op->kind),
		 ccomGetErrorString(ccom_result_from_errno(err)), msg);
	ccom_flight_dump(comm, reason, true);
	ccom_set_last_error_quiet(msg);
}

/* Run queued ops until the queue is empty or @stop_s reached @target.  Holds q->exec. */
static void queue_run(struct ccomComm *comm, struct ccomStream *stop_s, uint64_t target)
{
	struct ccom_stream_queue *q = comm->proxy->queue;
	struct ccom_op *op;
	int err;

	while ((!stop_s || atomic_load(&stop_s->completed) < target) && (op = queue_take(q))) {
		/*
		 * The deadline and the recorder's start are ms-scale: the coarse
		 * clock (a tick behind at most) spares a precise read per op.
		 */
		int64_t now = ccom_flight_now();

		ccom_clear_last_error();
		ccom_flight_start(comm->proxy->flight, op, now);
		/* Every wait of the op's transports and algorithms honours this. */
		comm->proxy->deadline_us = now + comm->proxy->op_timeout_us;
		/*
		 * An aborted or revoked comm runs nothing more: a small op
		 * between two ranks that both revoked could otherwise complete
		 * without ever waiting on the flag.
		 */
		if (ccom_comm_aborted(comm)) {
			ccom_set_last_error("rank %d: the communicator %s", comm->rank,
					    ccom_comm_stop_reason(comm));
			err = -ECANCELED;
		} else {
			err = comm->proxy->exec(comm, op);
		}
		comm->proxy->deadline_us = 0;
		ccom_flight_end(comm->proxy->flight, op, err);
		ccom_publish_op_completed(comm->publish);
		if (err) {
			ccom_publish_error(comm->publish, err, ccom_last_error(), 0);
			flight_dump_failure(comm, op, err);
		}
		stream_complete(op->stream, err, err ? ccom_last_error() : "");
		op_recycle(q, op);
		atomic_fetch_sub(&q->pending, 1);
	}
}

/*
 * Sleep until there is work.  Shortly after activity the thread only naps
 * (PROGRESS_NAP_US) and enqueues do not signal it: a thread that enqueues
 * and then synchronizes runs the op itself, without a wake-up on the
 * critical path; a caller that never synchronizes still gets its op run
 * within a nap.  After PROGRESS_IDLE_US of inactivity the thread sleeps
 * until an enqueue signals it.  Called with q->lock held.
 */
#define PROGRESS_NAP_US 200
#define PROGRESS_IDLE_US 20000

static void progress_sleep(struct ccom_stream_queue *q, int64_t last_active)
{
	struct timespec ts;
	int64_t now = ccom_now_us();

	if (now - last_active >= PROGRESS_IDLE_US) {
		/* Pairs with enqueue's pending increment, then its look at @sleeping. */
		atomic_store(&q->sleeping, true);
		if (!atomic_load(&q->pending) && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		atomic_store(&q->sleeping, false);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += PROGRESS_NAP_US * 1000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&q->cond, &q->lock, &ts);
}

/*
 * The thread waits while nothing is pending (queued or running); it runs
 * the queue when no synchronizing thread does.
 */
static void *progress_main(void *arg)
{
	struct ccomComm *comm = arg;
	struct ccom_stream_queue *q = comm->proxy->queue;
	int64_t last_active = 0;

	for (;;) {
		pthread_mutex_lock(&q->lock);
		while (!atomic_load(&q->pending) && !q->stop)
			progress_sleep(q, last_active);
		if (!atomic_load(&q->pending) && q->stop) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		pthread_mutex_unlock(&q->lock);
		/* A synchronizing thread already runs the queue: let it. */
		if (pthread_mutex_trylock(&q->exec) == 0) {
			queue_run(comm, NULL, 0);
			pthread_mutex_unlock(&q->exec);
		} else {
			pthread_mutex_lock(&q->lock);
			if (atomic_load(&q->pending) && !q->stop)
				progress_sleep(q, ccom_now_us());
			pthread_mutex_unlock(&q->lock);
		}
		last_active = ccom_now_us();
	}
	return NULL;
}

int ccom_stream_queue_start(struct ccomComm *comm)
{
	struct ccom_stream_queue *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->exec, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->head = &q->stub;
	atomic_init(&q->tail, &q->stub);
	op_block_alloc(q);
	comm->proxy->queue = q;
	err = pthread_create(&q->thread, NULL, progress_main, comm);
	if (err) {
		ccom_set_last_error("rank %d: cannot start the progress thread: %s", comm->rank,
				    strerror(err));
		comm->proxy->queue = NULL;
		op_free_list(q, q->cache);
		free(q->block);
		free(q);
		return -err;
	}
	q->thread_valid = true;
	return 0;
}

void ccom_stream_queue_stop(struct ccomComm *comm)
{
	struct ccom_stream_queue *q = comm->proxy->queue;
	struct ccom_op *op;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	if (q->thread_valid)
		pthread_join(q->thread, NULL);
	/* Ops never run (destroy without finalize): complete them as cancelled. */
	while ((op = queue_take(q))) {
		stream_complete(op->stream, -ECANCELED, "communicator destroyed before the operation ran");
		op_free(q, op);
	}
	op_free_list(q, atomic_exchange(&q->recycled, NULL));
	op_free_list(q, q->cache);
	free(q->block);
	pthread_mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->exec);
	pthread_cond_destroy(&q->cond);
	free(q);
	comm->proxy->queue = NULL;
}

int ccom_stream_queue_settle(struct ccomComm *comm, int64_t max_us)
{
	struct ccom_stream_queue *q = comm->proxy ? comm->proxy->queue : NULL;
	int64_t until = ccom_now_us() + max_us;
	int left;

	if (!q)
		return -1;
	/*
	 * Nothing queued but one op pending: the executor woke the caller at
	 * its completion and is about to retire it.  Give it that moment.
	 */
	while ((left = atomic_load(&q->pending)) > 0 && ccom_now_us() < until) {
		if (pthread_mutex_trylock(&q->exec) == 0) {
			bool queued = !queue_empty(q);

			pthread_mutex_unlock(&q->exec);
			if (queued)
				break;	/* ops wait and nobody runs them: do not wait for them */
		}
		sched_yield();
	}
	return left;
}

void ccom_stream_enqueue(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_stream_queue *q = comm->proxy->queue;

	atomic_fetch_add(&q->pending, 1);
	/* One issuing thread at a time (a communicator is not thread-safe): seq order = queue order. */
	ccom_flight_enqueue(comm->proxy->flight, op);
	queue_push(q, op);
	/*
	 * Pairs with progress_sleep()'s store of @sleeping, then its look at
	 * pending.  The first enqueue that sees it asleep wakes it, the
	 * others need not.
	 */
	if (atomic_load(&q->sleeping) &&
	    atomic_exchange(&q->sleeping, false)) {
		pthread_mutex_lock(&q->lock);
		pthread_cond_signal(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
}

int ccom_stream_queue_drain(struct ccomComm *comm)
{
	struct ccom_proxy *cs = comm->proxy;
	int64_t deadline = ccom_now_us() + cs->op_timeout_us + 5000000;

	while (atomic_load(&cs->queue->pending) > 0) {
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("rank %d: %d operations still pending after CCOM_OP_TIMEOUT",
					    comm->rank, atomic_load(&cs->queue->pending));
			return -ETIMEDOUT;
		}
		ccom_sleep_us(200, NULL);
	}
	return 0;
}

int ccom_stream_alloc(struct ccomComm *comm, bool is_default, struct ccomStream **out)
{
	struct ccomStream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->magic = CCOM_STREAM_MAGIC;
	s->comm = comm;
	s->is_default = is_default;
	atomic_init(&s->wake_at, UINT64_MAX);
	pthread_mutex_init(&s->err_lock, NULL);
	*out = s;
	return 0;
}

void ccom_stream_free(struct ccomStream *s)
{
	if (!s)
		return;
	s->magic = 0;
	pthread_mutex_destroy(&s->err_lock);
	free(s);
}

struct ccomStream *ccom_stream_resolve(struct ccomComm *comm, struct ccomStream *s)
{
	if (!s)
		return comm->proxy ? comm->proxy->default_stream : NULL;
	if (s->magic != CCOM_STREAM_MAGIC || s->comm != comm)
		return NULL;
	return s;
}

static bool stream_valid(struct ccomStream *s)
{
	return s && s->magic == CCOM_STREAM_MAGIC && ccom_comm_valid(s->comm) && s->comm->proxy;
}

static ccomResult_t stream_result(struct ccomStream *s)
{
	int err = atomic_load(&s->err);

	if (!err)
		return ccomSuccess;
	pthread_mutex_lock(&s->err_lock);
	ccom_set_last_error("%s", s->errmsg);
	pthread_mutex_unlock(&s->err_lock);
	return ccom_result_from_errno(err);
}

/* wake_at = min(wake_at, target). */
static void stream_lower_wake_at(struct ccomStream *s, uint64_t target)
{
	uint64_t cur = atomic_load(&s->wake_at);

	while (target < cur && !atomic_compare_exchange_weak(&s->wake_at, &cur, target))
		;
}

/*
 * Wait until @s completed @target ops.  If no thread executes the queue,
 * run it here (up to @target); otherwise sleep on the stream's futex.
 */
static int stream_wait(struct ccomStream *s, uint64_t target)
{
	struct ccomComm *comm = s->comm;
	struct ccom_stream_queue *q = comm->proxy->queue;
	int64_t deadline = ccom_now_us() + comm->proxy->op_timeout_us + 5000000;
	struct timespec ts = { 0, 1000000 };
	uint32_t seq;

	while (atomic_load(&s->completed) < target) {
		if (ccom_comm_aborted(comm)) {
			ccom_set_last_error("rank %d: the communicator %s", comm->rank,
					    ccom_comm_stop_reason(comm));
			return -ECANCELED;
		}
		if (pthread_mutex_trylock(&q->exec) == 0) {
			queue_run(comm, s, target);
			pthread_mutex_unlock(&q->exec);
			continue;
		}
		stream_lower_wake_at(s, target);
		atomic_fetch_add(&s->waiters, 1);
		seq = atomic_load(&s->done_seq);
		if (atomic_load(&s->completed) < target)
			futex_private(&s->done_seq, FUTEX_WAIT, seq, &ts);
		if (atomic_fetch_sub(&s->waiters, 1) == 1 && atomic_load(&s->completed) >= target)
			atomic_store(&s->wake_at, UINT64_MAX);
		if (ccom_now_us() > deadline) {
			ccom_set_last_error("rank %d: stream still busy after CCOM_OP_TIMEOUT (%lld s)",
					    comm->rank, (long long)(comm->proxy->op_timeout_us / 1000000));
			return -ETIMEDOUT;
		}
	}
	return 0;
}

ccomResult_t ccomStreamCreate(ccomComm_t comm, ccomStream_t *stream)
{
	int err;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !comm->proxy || !stream) {
		ccom_set_last_error("ccomStreamCreate: %s", !stream ? "stream is NULL" :
				    "comm is not a ready communicator");
		return ccomInvalidArgument;
	}
	err = ccom_stream_alloc(comm, false, stream);
	return ccom_result_from_errno(err);
}

ccomResult_t ccomStreamDestroy(ccomStream_t stream)
{
	ccomResult_t res;

	ccom_clear_last_error();
	if (!stream_valid(stream) || stream->is_default) {
		ccom_set_last_error("ccomStreamDestroy: not a stream from ccomStreamCreate (or its communicator was destroyed first)");
		return ccomInvalidArgument;
	}
	res = ccomStreamSynchronize(stream);
	while (atomic_load(&stream->completing))
		sched_yield();
	ccom_stream_free(stream);
	return res;
}

ccomResult_t ccomStreamSynchronize(ccomStream_t stream)
{
	struct ccom_proxy *cs;
	ccomResult_t res;
	int err;

	ccom_clear_last_error();
	if (!stream_valid(stream)) {
		ccom_set_last_error("ccomStreamSynchronize: invalid stream (NULL is not accepted: use ccomCommSynchronize)");
		return ccomInvalidArgument;
	}
	cs = stream->comm->proxy;
	atomic_fetch_add(&cs->api_busy, 1);
	err = stream_wait(stream, atomic_load(&stream->enqueued));
	res = err ? ccom_result_from_errno(err) : stream_result(stream);
	atomic_fetch_sub(&cs->api_busy, 1);
	return res;
}

ccomResult_t ccomStreamQuery(ccomStream_t stream)
{
	ccom_clear_last_error();
	if (!stream_valid(stream)) {
		ccom_set_last_error("ccomStreamQuery: invalid stream");
		return ccomInvalidArgument;
	}
	if (atomic_load(&stream->completed) < atomic_load(&stream->enqueued))
		return atomic_load(&stream->err) ? stream_result(stream) : ccomInProgress;
	return stream_result(stream);
}

ccomResult_t ccomCommSynchronize(ccomComm_t comm)
{
	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !comm->proxy) {
		ccom_set_last_error("ccomCommSynchronize: comm is not a ready communicator");
		return ccomInvalidArgument;
	}
	return ccomStreamSynchronize(comm->proxy->default_stream);
}
