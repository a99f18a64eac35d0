/* SPDX-License-Identifier: MIT */
/*
 * proxy.h - the progress room of a communicator (comm->proxy): the
 * operation queue and its progress thread (stream.h), the deadline of the
 * operation running now, the waiting policy (wait.h) and the transfer loop
 * (xfer.h) that the transports and the algorithms call.
 *
 * One way: coll/ and transport/ call into proxy/; proxy/ calls no
 * algorithm.  The queue runs each operation through the executor that
 * coll/ hands to ccom_proxy_start().
 */
#ifndef CCOM_PROXY_PROXY_H
#define CCOM_PROXY_PROXY_H

#include <stdatomic.h>
#include <stdint.h>

#include "ccom.h"
#include "core/comm.h"

struct ccom_op;
struct ccom_stream_queue;
struct ccomStream;
struct ccom_wait_source;
struct ccom_flight;
struct ccom_live;

/* Runs one operation on the calling (progress) thread: 0 or -errno. */
typedef int (*ccom_proxy_exec_fn)(struct ccomComm *comm, struct ccom_op *op);

/**
 * struct ccom_proxy - per-communicator progress state (comm->proxy).
 * @queue: the operation queue and its progress thread (stream.h)
 * @default_stream: the stream used when the API is passed NULL
 * @api_busy: threads inside ccomStreamSynchronize/Query; abort waits for
 *	them to leave before the communicator is freed
 * @exec: the executor of coll/ (ccom_proxy_start())
 * @op_timeout_us: CCOM_OP_TIMEOUT
 * @deadline_us: when the operation running now must have completed;
 *	0 between operations (waits then have no deadline)
 * @wait_src: the waits' shared memory (the host segment), NULL if none
 * @flight: the flight recorder (flight.h), NULL when off
 * @failed: nranks flags, set by ccom_proxy_note_failed() when a transport
 *	found that rank dead or aborted (ccomCommGetFailedRanks())
 * @first_failed: the first rank noted so, -1 before
 * @live: the sockets whose silence means a lost host (live.h)
 */
struct ccom_proxy {
	struct ccom_stream_queue *queue;
	struct ccomStream *default_stream;
	atomic_int api_busy;
	ccom_proxy_exec_fn exec;
	int64_t op_timeout_us;
	int64_t deadline_us;
	const struct ccom_wait_source *wait_src;
	struct ccom_flight *flight;
	atomic_uchar *failed;
	atomic_int first_failed;
	struct ccom_live *live;
};

/* Allocate comm->proxy (no thread yet); 0 or -ENOMEM. */
int ccom_proxy_create(struct ccomComm *comm);
/* Create the default stream and start the progress thread running @exec. */
int ccom_proxy_start(struct ccomComm *comm, ccom_proxy_exec_fn exec);
/* Stop the thread (ops never run complete as cancelled) and free comm->proxy. */
void ccom_proxy_destroy(struct ccomComm *comm);

/* Deadline of the running operation (0: none), for the waits of every room. */
static inline int64_t ccom_proxy_deadline(const struct ccomComm *comm)
{
	return comm->proxy ? comm->proxy->deadline_us : 0;
}

static inline int64_t ccom_proxy_op_timeout(const struct ccomComm *comm)
{
	return comm->proxy ? comm->proxy->op_timeout_us : 0;
}

/*
 * A transport found @rank dead, aborted or failed (the root cause of a
 * failed wait, not the messenger): remember it for
 * ccomCommGetFailedRanks().  Any thread; ignores ranks out of range, this
 * rank itself and a comm without its progress room yet.
 */
void ccom_proxy_note_failed(struct ccomComm *comm, int rank);

/* The first rank noted failed (the root cause of the comm's first failure), or -1. */
int ccom_proxy_first_failed(const struct ccomComm *comm);

/* Ranks noted failed, ascending, into @ranks (up to @cap of them); returns how many there are. */
int ccom_proxy_failed_ranks(const struct ccomComm *comm, int *ranks, int cap);

/*
 * Record an asynchronous error of @comm (the first one wins) with the
 * calling thread's last error as its sentence, and publish it.
 */
void ccom_comm_set_async_error(struct ccomComm *comm, ccomResult_t res);

#endif
