/* SPDX-License-Identifier: MIT */
/*
 * net_tclass.h - the traffic class of a communicator's network traffic:
 * the IP TOS / IPv6 traffic class byte of net_socket's data sockets and
 * the GRH traffic class and service level of net_ib's queue pairs, from
 * the config's trafficClass, else CCOM_SOCKET_TOS / CCOM_IB_TC, and
 * CCOM_IB_SL.
 */
#ifndef CCOM_TRANSPORT_NET_TCLASS_H
#define CCOM_TRANSPORT_NET_TCLASS_H

#include <stdint.h>

struct ccomComm;

/* The TOS byte for @comm's TCP data sockets, or -1: leave the system's. */
int ccom_net_socket_tos(const struct ccomComm *comm);

/*
 * Give TCP data socket @fd of @comm its TOS (IP_TOS; on an IPv6 socket
 * IPV6_TCLASS, and IP_TOS for v4-mapped peers).  Nothing to do when
 * ccom_net_socket_tos() is -1.  A failure is a WARN, not an error: the
 * bytes still flow, only unmarked.
 */
void ccom_net_socket_set_tos(const struct ccomComm *comm, int fd);

/* GRH traffic class of @comm's RDMA queue pairs (0-255). */
uint8_t ccom_net_ib_tc(const struct ccomComm *comm);

/* Service level of @comm's RDMA queue pairs (0-15). */
uint8_t ccom_net_ib_sl(void);

#endif
