/* SPDX-License-Identifier: MIT */
/*
 * stream.h - streams and the per-communicator progress thread (proxy/).
 *
 * Every communicator has one operation queue and one progress thread that
 * executes the queue in issue order, whatever stream each operation was
 * enqueued on: ranks must run collectives in the same order, so one queue
 * per communicator keeps them matched.  A stream counts the operations
 * enqueued on it and those completed; synchronize waits for the count
 * taken at the call, query compares them.
 */
#ifndef CCOM_PROXY_STREAM_H
#define CCOM_PROXY_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ccom.h"
#include "core/op.h"

struct ccomComm;
struct ccom_op;

#define CCOM_STREAM_MAGIC 0x63636f6d7374726dULL

struct ccomStream {
	uint64_t magic;
	struct ccomComm *comm;
	bool is_default;
	_Atomic uint64_t enqueued;	/* by the issuing thread */
	_Atomic uint64_t completed;	/* by the progress thread */
	_Atomic uint32_t done_seq;	/* futex word, bumped by a completion that wakes */
	_Atomic uint32_t waiters;
	_Atomic uint64_t wake_at;	/* lowest target of a sleeping synchronizer */
	_Atomic int err;		/* first error, -errno */
	_Atomic int completing;		/* progress thread inside stream_complete() */
	pthread_mutex_t err_lock;	/* protects errmsg */
	char errmsg[512];
};

struct ccom_stream_queue {
	pthread_mutex_t lock;		/* with @cond: the progress thread's sleep, @stop */
	/*
	 * Held by whichever thread executes ops: the progress thread, or a
	 * thread in ccomStreamSynchronize() that found it idle and runs the
	 * queue itself (no hand-off latency).  Ops still run one at a time,
	 * in queue order.
	 */
	pthread_mutex_t exec;
	pthread_cond_t cond;
	/*
	 * The queued ops (stream.c: a lock-free list that an enqueue extends
	 * with one exchange): @tail the last enqueued record (or @stub),
	 * @head the next one to take, the consumer's (q->exec holder's).
	 */
	struct ccom_op *_Atomic tail;
	struct ccom_op *head;
	struct ccom_op stub;
	bool stop;
	_Atomic bool sleeping;		/* in an unbounded wait: enqueue must signal */
	_Atomic int pending;		/* ops queued or running */
	pthread_t thread;
	bool thread_valid;
	/*
	 * Op records are recycled, so that an enqueue allocates nothing once
	 * the communicator has as many records as ops in flight: the thread
	 * that ran an op pushes its record on @recycled (lock-free, any
	 * executor); the issuing thread (one at a time: a communicator is not
	 * thread-safe) takes records from @cache, its private list, and when
	 * that is empty takes all of @recycled at once (an exchange, so no
	 * ABA).  @nrecords counts the records that exist; past
	 * CCOM_OP_RECORDS_KEEP an executed record is freed instead.
	 */
	struct ccom_op *_Atomic recycled;
	struct ccom_op *cache;
	_Atomic int nrecords;
	/*
	 * CCOM_OP_RECORDS_BLOCK records allocated (and touched) at start, one
	 * block, never freed one by one: the first burst of enqueues takes
	 * them instead of one malloc and a fresh cache line (and every 30th a
	 * page fault) each.
	 */
	struct ccom_op *block;
};

#define CCOM_OP_RECORDS_KEEP 4096
#define CCOM_OP_RECORDS_BLOCK 1024

int ccom_stream_queue_start(struct ccomComm *comm);
void ccom_stream_queue_stop(struct ccomComm *comm);
/* Wait until every queued op ran (finalize).  0, -ETIMEDOUT or -ECANCELED. */
int ccom_stream_queue_drain(struct ccomComm *comm);
/*
 * Ops not yet retired, after waiting up to @max_us for an op that already
 * completed (nothing queued behind it) to be retired by its executor; -1
 * without a queue.
 */
int ccom_stream_queue_settle(struct ccomComm *comm, int64_t max_us);
/* Append @op (its stream and stream_seq set by the caller) and wake the thread. */
void ccom_stream_enqueue(struct ccomComm *comm, struct ccom_op *op);
/*
 * An op record for the issuing thread: every field zero except @subs and
 * @subs_cap (an array the record keeps when recycled); NULL when out of
 * memory.  ccom_stream_op_put() hands back one that was never enqueued.
 */
struct ccom_op *ccom_stream_op_get(struct ccomComm *comm);
void ccom_stream_op_put(struct ccomComm *comm, struct ccom_op *op);
int ccom_stream_alloc(struct ccomComm *comm, bool is_default, struct ccomStream **out);
void ccom_stream_free(struct ccomStream *s);
/* Resolve the API's stream argument (NULL = default); NULL if invalid. */
struct ccomStream *ccom_stream_resolve(struct ccomComm *comm, struct ccomStream *s);

#endif
