/* SPDX-License-Identifier: MIT */
/*
 * flight.h - the flight recorder of a communicator (proxy/): its last
 * CCOM_FLIGHT_RECORDER_ENTRIES operations, in issue order, with what each
 * was (collective, dtype, count, op, root or peer), how it ran (algorithm,
 * protocol, set by coll/), its state (enqueued, started, done, failed) and
 * times.  Dumped one line per op at WARN, and as JSON to
 * CCOM_FLIGHT_RECORDER_FILE, when an operation fails (timeout, error,
 * mismatch) and when the communicator is aborted with operations pending
 * (Documentation/libccom/fault-tolerance.rst).
 *
 * Hot path: ccom_flight_enqueue() (under the queue lock: seq order is
 * queue order), _start(), _algo() and _end() each fill a few fields of one
 * entry, indexed by the op's seq.  The entries are written by the issuing
 * and the progress thread and read by a dump without a lock: a dump is a
 * snapshot, each field as last stored.
 */
#ifndef CCOM_PROXY_FLIGHT_H
#define CCOM_PROXY_FLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/comm.h"
#include "core/op.h"

enum ccom_flight_state {
	CCOM_FLIGHT_ENQUEUED,
	CCOM_FLIGHT_STARTED,
	CCOM_FLIGHT_DONE,
	CCOM_FLIGHT_FAILED,
};

struct ccom_flight_entry {
	_Atomic uint64_t seq;		/* op number on the comm (1, 2, ...), 0: empty */
	uint64_t stream_seq;		/* position in its stream */
	uint64_t count;
	int32_t kind, dtype, op;	/* op: -1 if none */
	int32_t root;			/* root, peer of a Send/Recv (first of a group), -1 */
	int32_t nsubs;			/* p2p group: sends + receives */
	_Atomic int32_t state;		/* enum ccom_flight_state */
	int32_t err;			/* -errno of a failed op */
	const char *algo, *proto;	/* static names (tune/), NULL until chosen */
	int64_t t_enqueue_us, t_start_us, t_end_us; /* ccom_flight_now(), 0: not yet */
};

/**
 * struct ccom_flight - the recorder (comm->proxy->flight, NULL when off).
 * @n: entries (CCOM_FLIGHT_RECORDER_ENTRIES rounded up to a power of two)
 * @next_seq: seq of the next enqueued op - 1 (under the queue lock)
 * @dumped: a failure dump was written (one per communicator)
 * @e: @n entries, op seq s at e[s & (n - 1)]
 */
struct ccom_flight {
	uint32_t n;
	atomic_int dumped;
	/* Written per enqueue: not in the line the executor reads @n from. */
	_Alignas(64) uint64_t next_seq;
	_Alignas(64) struct ccom_flight_entry e[];
};

/*
 * The recorder's clock: CLOCK_MONOTONIC_COARSE in microseconds (the
 * kernel tick's resolution, 1-4 ms; a few ns where a precise read costs
 * 20-60 ns), enough to tell which op hangs and for how long.  The queue
 * reads it once per op for the start time and the op's deadline.
 */
static inline int64_t ccom_flight_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Allocate comm->proxy->flight from CCOM_FLIGHT_RECORDER_ENTRIES (0: off). */
int ccom_flight_create(struct ccomComm *comm);
void ccom_flight_destroy(struct ccomComm *comm);

/* Record @op as enqueued and give it its seq (op->flight_seq). */
void ccom_flight_enqueue(struct ccom_flight *fr, struct ccom_op *op);

static inline struct ccom_flight_entry *ccom_flight_entry(struct ccom_flight *fr,
							  const struct ccom_op *op)
{
	struct ccom_flight_entry *e;

	if (!fr || !op->flight_seq)
		return NULL;
	e = &fr->e[op->flight_seq & (fr->n - 1)];
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == op->flight_seq ? e : NULL;
}

/* @now: ccom_flight_now() the caller read anyway (the op's deadline). */
static inline void ccom_flight_start(struct ccom_flight *fr, const struct ccom_op *op, int64_t now)
{
	struct ccom_flight_entry *e = ccom_flight_entry(fr, op);

	if (e) {
		e->t_start_us = now;
		atomic_store_explicit(&e->state, CCOM_FLIGHT_STARTED, memory_order_release);
	}
}

/* The algorithm and protocol coll/ chose (static strings). */
static inline void ccom_flight_algo(struct ccom_flight *fr, const struct ccom_op *op,
				    const char *algo, const char *proto)
{
	struct ccom_flight_entry *e = ccom_flight_entry(fr, op);

	if (e) {
		e->algo = algo;
		e->proto = proto;
	}
}

static inline void ccom_flight_end(struct ccom_flight *fr, const struct ccom_op *op, int err)
{
	struct ccom_flight_entry *e = ccom_flight_entry(fr, op);

	if (e) {
		int64_t now = ccom_flight_now();

		/* The coarse clock lags the precise one by up to a tick. */
		e->t_end_us = now > e->t_start_us ? now : e->t_start_us;
		e->err = err;
		atomic_store_explicit(&e->state, err ? CCOM_FLIGHT_FAILED : CCOM_FLIGHT_DONE,
				      memory_order_release);
	}
}

/* True if a recorded op is enqueued or started (an abort then dumps). */
bool ccom_flight_pending(const struct ccom_flight *fr);

/*
 * Dump the recorder of @comm: one WARN line per op, and the JSON file if
 * CCOM_FLIGHT_RECORDER_FILE is set.  @reason is a sentence ("operation 4
 * failed: ...").  @once: only if no failure dump was written yet.
 */
void ccom_flight_dump(struct ccomComm *comm, const char *reason, bool once);

#endif
