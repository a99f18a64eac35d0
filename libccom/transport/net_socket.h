/* SPDX-License-Identifier: MIT */
/*
 * net_socket.h - private view of the TCP transport's per-peer connection,
 * for the tests (selftests/libccom/net_*.c) and for CCOM_TOPO_DUMP_FILE.
 * coll/ uses only the vtable (transport.h).
 */
#ifndef CCOM_TRANSPORT_NET_SOCKET_H
#define CCOM_TRANSPORT_NET_SOCKET_H

#include <stddef.h>

#include "transport/transport.h"

#define CCOM_NET_MAX_SOCKS 16

/* Number of TCP sockets of @conn (a net_socket conn), or -EINVAL. */
int ccom_net_conn_nsocks(const struct ccom_transport_conn *conn);

/* Bytes the stream of @conn moved on socket @i in each direction so far. */
int ccom_net_conn_sock_bytes(const struct ccom_transport_conn *conn, int i, size_t *sent,
			     size_t *received);

#endif
