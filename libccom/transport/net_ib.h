/* SPDX-License-Identifier: MIT */
/*
 * net_ib.h - the RDMA verbs transport (net_ib.c, net_ib_conn.c,
 * net_ib_verbs.c; what they share is net_ib_private.h): its probe, used by
 * the network choice of select.c, and a private view of a conn for the
 * tests.  coll/ uses only the vtable (transport.h).
 */
#ifndef CCOM_TRANSPORT_NET_IB_H
#define CCOM_TRANSPORT_NET_IB_H

#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

/*
 * Is there an RDMA port net_ib would use (libibverbs loadable, a device
 * matching CCOM_IB_HCA with an ACTIVE port)?  Returns 1, or 0 with the
 * reason (one sentence that names the fix) in @why.  Not collective.
 */
int ccom_net_ib_probe(char *why, size_t why_len);

/* Slots net_ib's send direction of @conn has posted and had credited back, or -EINVAL. */
int ccom_net_ib_conn_stats(const struct ccom_transport_conn *conn, uint64_t *posted,
			   uint64_t *credited);

#endif
