/* SPDX-License-Identifier: MIT */
/*
 * flight.h - the flight recorder of a communicator (proxy/): its last
 * CCOM_FLIGHT_RECORDER_ENTRIES operations, in issue order, with what each
 * was (collective, dtype, count, op, root or peer), how it ran (algorithm,
 * protocol, set by coll/ where it picks the path), its state (enqueued,
 * started, done, failed) and times.  Dumped one line per op at WARN, and as JSON to
 * CCOM_FLIGHT_RECORDER_FILE, when an operation fails (timeout, error,
 * mismatch) and when the communicator is aborted with operations pending
 * (Documentation/libccom/fault-tolerance.rst).
 *
 * Hot path: ccom_flight_enqueue() (by the one issuing thread, just before
 * the record is queued: seq order is queue order), _start(), _algo() and
 * _end() each fill a few fields of one entry, indexed by the op's seq.
 * The entries are written by the issuing and the progress thread and read
 * by a dump without a lock: a dump is a snapshot, each field as last
 * stored.
 */
#ifndef CCOM_PROXY_FLIGHT_H
#define CCOM_PROXY_FLIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/comm.h"
#include "core/op.h"
#include "ccom_pubstate.h"

/*
 * The entries are the published format's &struct ccom_pub_op
 * (ccom_pubstate.h): when the communicator has a state file, the ring is
 * mapped in it (publish/), so that ccomctl and ccomd read the same stores
 * without the process' help; otherwise it is in memory.
 */
#define CCOM_FLIGHT_ENQUEUED	CCOM_PUB_OP_ISSUED
#define CCOM_FLIGHT_STARTED	CCOM_PUB_OP_STARTED
#define CCOM_FLIGHT_DONE	CCOM_PUB_OP_DONE
#define CCOM_FLIGHT_FAILED	CCOM_PUB_OP_FAILED

/**
 * struct ccom_flight - the recorder (comm->proxy->flight, NULL when off).
 * @n: entries (CCOM_FLIGHT_RECORDER_ENTRIES rounded up to a power of two)
 * @next_seq: seq of the next enqueued op - 1 (under the queue lock)
 * @dumped: a failure dump was written (one per communicator)
 * @published: @e and @names are in the state file (else in memory)
 * @comm: the communicator, for a dump on request (signal)
 * @next: link of the list the request dumper walks
 * @names: name tables of the entries (kinds, dtypes, ops, algorithms)
 * @algo_ptr: the static name each @names->algo_names slot was copied from
 * @algo_lock: serializes adding a name (slow path, once per name)
 * @e: @n entries, op seq s at e[s & (n - 1)]
 */
struct ccom_flight {
	uint32_t n;
	atomic_int dumped;
	bool published;
	struct ccomComm *comm;
	struct ccom_flight *next;
	struct ccom_pub_ops *names;
	const char *algo_ptr[CCOM_PUB_ALGOS];
	pthread_mutex_t algo_lock;
	struct ccom_pub_op *e;
	/* Written per enqueue: not in the line the executor reads @n from. */
	_Alignas(64) uint64_t next_seq;
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

/*
 * Allocate comm->proxy->flight from CCOM_FLIGHT_RECORDER_ENTRIES (0: off),
 * in the state file when there is one; with CCOM_FLIGHT_RECORDER_SIGNAL
 * set, register it with the dumper of that signal.
 */
int ccom_flight_create(struct ccomComm *comm);
void ccom_flight_destroy(struct ccomComm *comm);

/* Record @op as enqueued and give it its seq (op->flight_seq). */
void ccom_flight_enqueue(struct ccom_flight *fr, struct ccom_op *op);

static inline struct ccom_pub_op *ccom_flight_entry(struct ccom_flight *fr,
						    const struct ccom_op *op)
{
	struct ccom_pub_op *e;

	if (!fr || !op->flight_seq)
		return NULL;
	e = &fr->e[op->flight_seq & (fr->n - 1)];
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == op->flight_seq ? e : NULL;
}

/* @now: ccom_flight_now() the caller read anyway (the op's deadline). */
static inline void ccom_flight_start(struct ccom_flight *fr, const struct ccom_op *op, int64_t now)
{
	struct ccom_pub_op *e = ccom_flight_entry(fr, op);

	if (e) {
		e->t_start_us = now;
		__atomic_store_n(&e->state, CCOM_FLIGHT_STARTED, __ATOMIC_RELEASE);
	}
}

/* The slot of static name @name in fr->names->algo_names (added if new). */
uint8_t ccom_flight_name_slow(struct ccom_flight *fr, const char *name);

static inline uint8_t ccom_flight_name(struct ccom_flight *fr, const char *name)
{
	uint32_t i, n = __atomic_load_n(&fr->names->algo_count, __ATOMIC_ACQUIRE);

	for (i = 1; i < n; i++)
		if (fr->algo_ptr[i] == name)
			return (uint8_t)i;
	return ccom_flight_name_slow(fr, name);
}

/*
 * The labels of the paths outside the tuner's algorithm x protocol grid
 * (whose names are ccom_algo_name()/ccom_proto_name()'s): algorithm
 * "engine" (the nccom engine's descriptors), "mapped" (the kdev room's
 * single-copy path over mapped grants), "p2p" (Gather/Scatter as grouped
 * transfers); protocol "kdev" (both kdev paths) and "cma" (the direct
 * algorithm over process_vm_readv/writev).  One address per name:
 * ccom_flight_name() finds a name's slot by its address.
 */
extern const char ccom_flight_engine[], ccom_flight_mapped[], ccom_flight_p2p[];
extern const char ccom_flight_kdev[], ccom_flight_cma[];

/*
 * The algorithm and protocol of @op (static strings): set by coll/ when
 * it dispatches the op, and set again where a later decision picks
 * another path (the kdev room's mapped path, CMA, the engine's fallback
 * to the host): the last call wins.  No allocation, no lock once a name
 * has its slot.
 */
static inline void ccom_flight_algo(struct ccom_flight *fr, const struct ccom_op *op,
				    const char *algo, const char *proto)
{
	struct ccom_pub_op *e = ccom_flight_entry(fr, op);

	if (e) {
		e->algo = ccom_flight_name(fr, algo);
		e->proto = ccom_flight_name(fr, proto);
	}
}

static inline void ccom_flight_end(struct ccom_flight *fr, const struct ccom_op *op, int err)
{
	struct ccom_pub_op *e = ccom_flight_entry(fr, op);

	if (e) {
		int64_t now = ccom_flight_now();

		/* The coarse clock lags the precise one by up to a tick. */
		e->t_end_us = now > e->t_start_us ? now : e->t_start_us;
		e->err = err;
		__atomic_store_n(&e->state, err ? CCOM_FLIGHT_FAILED : CCOM_FLIGHT_DONE,
				 __ATOMIC_RELEASE);
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
