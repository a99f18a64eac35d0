/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/nccom.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_NCCOM_GENL_H
#define _UAPI_LINUX_NCCOM_GENL_H

#define NCCOM_GENL_NAME		"nccom"
#define NCCOM_GENL_VERSION	1

#define NCCOM_NL_COMM_NAME_LEN	16

/**
 * enum nccom_nl_queue_state - State of a queue (the same values as enum
 *   nccom_queue_state).
 * @NCCOM_NL_QUEUE_STATE_ACTIVE: Descriptors are executed.
 * @NCCOM_NL_QUEUE_STATE_ERROR: A descriptor failed; the queue is stopped until
 *   it is reset.
 */
enum nccom_nl_queue_state {
	NCCOM_NL_QUEUE_STATE_ACTIVE,
	NCCOM_NL_QUEUE_STATE_ERROR,
};

/**
 * enum nccom_nl_stage - Stage of a communicator, as reported by libccom (also
 *   used in the state libccom publishes without a driver, see ccomd.rst).
 * @NCCOM_NL_STAGE_NONE: Not started.
 * @NCCOM_NL_STAGE_VALIDATE: Arguments and configuration are being validated.
 * @NCCOM_NL_STAGE_BOOTSTRAP: Root rendezvous and bootstrap ring.
 * @NCCOM_NL_STAGE_PEER_INFO: All-gather of peer information.
 * @NCCOM_NL_STAGE_RANKS: Node and local ranks.
 * @NCCOM_NL_STAGE_TOPO: Topology discovery and graph search.
 * @NCCOM_NL_STAGE_ALIGN: Cross-rank alignment of the chosen graphs.
 * @NCCOM_NL_STAGE_CONNECT: Transport connection.
 * @NCCOM_NL_STAGE_BARRIER: Final init barrier.
 * @NCCOM_NL_STAGE_READY: Initialised; collectives can be issued.
 * @NCCOM_NL_STAGE_FINALIZING: ccomCommFinalize is flushing outstanding work.
 * @NCCOM_NL_STAGE_DESTROYED: The communicator was destroyed.
 * @NCCOM_NL_STAGE_ABORTED: ccomCommAbort was called.
 * @NCCOM_NL_STAGE_ERROR: Init or a collective failed; see the last error.
 */
enum nccom_nl_stage {
	NCCOM_NL_STAGE_NONE,
	NCCOM_NL_STAGE_VALIDATE,
	NCCOM_NL_STAGE_BOOTSTRAP,
	NCCOM_NL_STAGE_PEER_INFO,
	NCCOM_NL_STAGE_RANKS,
	NCCOM_NL_STAGE_TOPO,
	NCCOM_NL_STAGE_ALIGN,
	NCCOM_NL_STAGE_CONNECT,
	NCCOM_NL_STAGE_BARRIER,
	NCCOM_NL_STAGE_READY,
	NCCOM_NL_STAGE_FINALIZING,
	NCCOM_NL_STAGE_DESTROYED,
	NCCOM_NL_STAGE_ABORTED,
	NCCOM_NL_STAGE_ERROR,
};

/**
 * enum nccom_nl_event_type - Kind of an event sent to the events multicast
 *   group.
 * @NCCOM_NL_EVENT_QUEUE_ERROR: A descriptor failed and its queue entered the
 *   error state.
 * @NCCOM_NL_EVENT_SEM_TIMEOUT: A wait on a semaphore reached its deadline.
 * @NCCOM_NL_EVENT_CLIENT_DIED: A client was released while work was in flight.
 */
enum nccom_nl_event_type {
	NCCOM_NL_EVENT_QUEUE_ERROR,
	NCCOM_NL_EVENT_SEM_TIMEOUT,
	NCCOM_NL_EVENT_CLIENT_DIED,
};

enum {
	NCCOM_NL_A_DEV_INDEX = 1,
	NCCOM_NL_A_DEV_PAD,
	NCCOM_NL_A_DEV_NUMA_NODE,
	NCCOM_NL_A_DEV_NENGINES,
	NCCOM_NL_A_DEV_NQUEUES,
	NCCOM_NL_A_DEV_COMPLETED,
	NCCOM_NL_A_DEV_BYTES,

	__NCCOM_NL_A_DEV_MAX,
	NCCOM_NL_A_DEV_MAX = (__NCCOM_NL_A_DEV_MAX - 1)
};

enum {
	NCCOM_NL_A_CLIENT_ID = 1,
	NCCOM_NL_A_CLIENT_PAD,
	NCCOM_NL_A_CLIENT_PID,
	NCCOM_NL_A_CLIENT_UID,
	NCCOM_NL_A_CLIENT_COMM,
	NCCOM_NL_A_CLIENT_NOBJECTS,
	NCCOM_NL_A_CLIENT_NQUEUES,
	NCCOM_NL_A_CLIENT_NSEMS,
	NCCOM_NL_A_CLIENT_NMEMS,
	NCCOM_NL_A_CLIENT_PINNED_PAGES,
	NCCOM_NL_A_CLIENT_INFLIGHT,

	__NCCOM_NL_A_CLIENT_MAX,
	NCCOM_NL_A_CLIENT_MAX = (__NCCOM_NL_A_CLIENT_MAX - 1)
};

enum {
	NCCOM_NL_A_QUEUE_CLIENT_ID = 1,
	NCCOM_NL_A_QUEUE_PAD,
	NCCOM_NL_A_QUEUE_HANDLE,
	NCCOM_NL_A_QUEUE_DEV_INDEX,
	NCCOM_NL_A_QUEUE_DEPTH,
	NCCOM_NL_A_QUEUE_SQ_HEAD,
	NCCOM_NL_A_QUEUE_SQ_TAIL,
	NCCOM_NL_A_QUEUE_CQ_HEAD,
	NCCOM_NL_A_QUEUE_CQ_TAIL,
	NCCOM_NL_A_QUEUE_COMPLETED,
	NCCOM_NL_A_QUEUE_STATE,
	NCCOM_NL_A_QUEUE_ERROR,
	NCCOM_NL_A_QUEUE_DISCARD,

	__NCCOM_NL_A_QUEUE_MAX,
	NCCOM_NL_A_QUEUE_MAX = (__NCCOM_NL_A_QUEUE_MAX - 1)
};

enum {
	NCCOM_NL_A_SEM_CLIENT_ID = 1,
	NCCOM_NL_A_SEM_PAD,
	NCCOM_NL_A_SEM_HANDLE,
	NCCOM_NL_A_SEM_VALUE,
	NCCOM_NL_A_SEM_WAITERS,
	NCCOM_NL_A_SEM_OWNER_CLIENT_ID,
	NCCOM_NL_A_SEM_OWNER_ALIVE,

	__NCCOM_NL_A_SEM_MAX,
	NCCOM_NL_A_SEM_MAX = (__NCCOM_NL_A_SEM_MAX - 1)
};

enum {
	NCCOM_NL_A_STATS_DEV_INDEX = 1,
	NCCOM_NL_A_STATS_PAD,
	NCCOM_NL_A_STATS_COMPLETED,
	NCCOM_NL_A_STATS_BYTES,
	NCCOM_NL_A_STATS_QUEUE_ERRORS,

	__NCCOM_NL_A_STATS_MAX,
	NCCOM_NL_A_STATS_MAX = (__NCCOM_NL_A_STATS_MAX - 1)
};

enum {
	NCCOM_NL_A_EVENT_TYPE = 1,
	NCCOM_NL_A_EVENT_PAD,
	NCCOM_NL_A_EVENT_TIMESTAMP,
	NCCOM_NL_A_EVENT_CLIENT_ID,
	NCCOM_NL_A_EVENT_PID,
	NCCOM_NL_A_EVENT_COMM,
	NCCOM_NL_A_EVENT_DEV_INDEX,
	NCCOM_NL_A_EVENT_HANDLE,
	NCCOM_NL_A_EVENT_ERROR,
	NCCOM_NL_A_EVENT_VALUE,
	NCCOM_NL_A_EVENT_INFLIGHT,

	__NCCOM_NL_A_EVENT_MAX,
	NCCOM_NL_A_EVENT_MAX = (__NCCOM_NL_A_EVENT_MAX - 1)
};

enum {
	NCCOM_NL_CMD_DEV_GET = 1,
	NCCOM_NL_CMD_CLIENT_GET,
	NCCOM_NL_CMD_QUEUE_GET,
	NCCOM_NL_CMD_SEM_GET,
	NCCOM_NL_CMD_STATS_GET,
	NCCOM_NL_CMD_QUEUE_RESET,
	NCCOM_NL_CMD_STATS_RESET,
	NCCOM_NL_CMD_EVENT,

	__NCCOM_NL_CMD_MAX,
	NCCOM_NL_CMD_MAX = (__NCCOM_NL_CMD_MAX - 1)
};

#define NCCOM_NL_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_NCCOM_GENL_H */
