/* SPDX-License-Identifier: MIT */
/*
 * transport.h - the transports compiled into libccom (shm between ranks of
 * one host, net_socket (TCP) or net_ib (RDMA verbs) between hosts; the
 * nccom engine is its own room,
 * transport/kdev/) and how coll/ picks one per peer.  The interface they
 * implement is proxy/conn.h.
 */
#ifndef CCOM_TRANSPORT_H
#define CCOM_TRANSPORT_H

#include "bootstrap/bootstrap.h"
#include "proxy/conn.h"

struct ccomComm;

/*
 * Bootstrap tags used by transports during setup (ccom_bootstrap_send/recv
 * with any peer).  Each transport owns a range of 0x100 tags.
 */
#define CCOM_TAG_SHM_BASE	(CCOM_BOOTSTRAP_TAG_USER_BASE + 0x000)
#define CCOM_TAG_NET_BASE	(CCOM_BOOTSTRAP_TAG_USER_BASE + 0x100)
#define CCOM_TAG_COLL_BASE	(CCOM_BOOTSTRAP_TAG_USER_BASE + 0x200)
#define CCOM_TAG_NET_IB_BASE	(CCOM_BOOTSTRAP_TAG_USER_BASE + 0x300)

/* Transports compiled into the library. */
extern const struct ccom_transport_ops ccom_transport_shm;
extern const struct ccom_transport_ops ccom_transport_net_socket;
extern const struct ccom_transport_ops ccom_transport_net_ib;

/*
 * Agree on the network transport of @comm (collective over all ranks when
 * some pair of ranks needs one): the config's netName, else CCOM_NET=ib or
 * socket forces one, unset
 * (or auto) picks net_ib only when every rank has an ACTIVE RDMA port
 * (and keeps net_socket for CCOM_TRANSPORT=net on one host).
 * Sets comm->net.  0, or -errno after ccom_set_last_error() naming the
 * rank that cannot use the forced choice (or whose choice differs) and
 * the fix.  Called by coll/ before the transports' setup.
 */
int ccom_transport_net_agree(struct ccomComm *comm);

/*
 * The network transport named @name ("ib", "socket", any case) as its
 * canonical static name, or NULL if there is none by that name; and the
 * valid names as a list for messages ("ib, socket").
 */
const char *ccom_transport_net_lookup(const char *name);
const char *ccom_transport_net_names(void);

/*
 * Which transport coll/ uses between this rank and @peer: shm when both run
 * on the same host (comm->rank_to_node equal), the agreed network transport
 * comm->net otherwise (or when CCOM_TRANSPORT=net forces it for testing;
 * net_socket before the agreement).  NULL if none can reach the peer.
 */
const struct ccom_transport_ops *ccom_transport_select(const struct ccomComm *comm, int peer);

#endif
