/* SPDX-License-Identifier: MIT */
/*
 * xfer.h - the transfer loop (proxy/xfer.c): drives a set of sends and
 * receives over the connection interface (conn.h) concurrently, with the
 * waiting policy of wait.h, until all are done.  Every algorithm that
 * moves bytes through the transports uses it.
 *
 * On each (connection, direction) only the first unfinished transfer
 * moves (the streams are ordered); all others make progress at the same
 * time, so the sends and receives of a group never deadlock on full
 * buffers.
 */
#ifndef CCOM_PROXY_XFER_H
#define CCOM_PROXY_XFER_H

#include <stdbool.h>
#include <stddef.h>

struct ccomComm;
struct ccom_op;
struct ccom_transport_conn;

/* One transfer. */
struct ccom_xfer {
	struct ccom_transport_conn *conn;
	bool is_send;
	char *buf;
	size_t size;
	size_t done;
	/*
	 * Optional streaming reduction of a receive: as whole elements
	 * arrive in buf, red_dst[i] = red_src[i] OP buf[i] (red_dst may be
	 * red_src), overlapping the reduction with the transfer.
	 */
	char *red_dst;
	const char *red_src;
	const struct ccom_op *red_op;
	size_t red_done;		/* bytes already reduced */
};
int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n);

/* Run @n transfers of @x to completion: 0 or -errno (abort, timeout, peer gone). */
int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n);

#endif
