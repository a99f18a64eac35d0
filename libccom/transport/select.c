// SPDX-License-Identifier: MIT
/*
 * select.c - which transport coll/ uses towards each peer (transport layer).
 */
#include <stddef.h>
#include <string.h>

#include "core/comm.h"
#include "transport/transport.h"
#include "util/params.h"

const struct ccom_transport_ops *ccom_transport_select(const struct ccomComm *comm, int peer)
{
	const char *force = ccom_param_str("CCOM_TRANSPORT");
	const struct ccom_transport_ops *net = &ccom_transport_net_socket;

	if (force && !strcmp(force, "net"))
		return net;
	if (comm->rank_to_node && comm->rank_to_node[peer] == comm->node)
		return &ccom_transport_shm;
	return net;
}
