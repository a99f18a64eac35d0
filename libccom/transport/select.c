// SPDX-License-Identifier: MIT
/*
 * select.c - which transport coll/ uses towards each peer (transport layer),
 * and the network transport every rank agrees on at init.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/comm.h"
#include "transport/net_ib.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/params.h"

enum { NET_AUTO, NET_IB, NET_SOCKET };

/* One rank's slot of the agreement's all-gather. */
struct net_vote {
	int32_t mode;		/* NET_* that rank was asked for */
	int32_t ib_ok;		/* it has an ACTIVE RDMA port */
	int32_t check_sig;	/* CCOM_CHECK_MISMATCH: signatures on the streams */
	char why[444];		/* why not, for the error */
};

static const char *const mode_names[] = { "unset", "ib", "socket" };

const char *ccom_transport_net_lookup(const char *name)
{
	int m;

	for (m = NET_IB; m <= NET_SOCKET; m++)
		if (!strcasecmp(name, mode_names[m]))
			return mode_names[m];
	return NULL;
}

const char *ccom_transport_net_names(void)
{
	return "ib, socket";
}

static bool forced_net(void)
{
	const char *force = ccom_param_str("CCOM_TRANSPORT");

	return force && !strcmp(force, "net");
}

int ccom_transport_net_agree(struct ccomComm *comm)
{
	/* The config's netName (validated, canonical) wins over CCOM_NET. */
	const char *want = comm->config.netName ? comm->config.netName :
						  ccom_param_str("CCOM_NET");
	const char *what = comm->config.netName ? "netName" : "CCOM_NET";
	struct net_vote *v;
	char why[512];
	int mode, r, bad = -1, err;

	comm->net = &ccom_transport_net_socket;
	if (!want || !strcmp(want, "auto"))
		mode = NET_AUTO;
	else if (!strcmp(want, "ib"))
		mode = NET_IB;
	else if (!strcmp(want, "socket"))
		mode = NET_SOCKET;
	else {
		ccom_set_last_error("CCOM_NET=%s is not a network transport; use %s or leave it unset",
				    want, ccom_transport_net_names());
		return -EINVAL;
	}
	/* No pair of ranks needs a network transport: nothing to agree on. */
	if (comm->nnodes <= 1 && !forced_net())
		return 0;
	v = calloc((size_t)comm->nranks, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[comm->rank].mode = mode;
	v[comm->rank].check_sig = ccom_param_int("CCOM_CHECK_MISMATCH") != 0;
	/* CCOM_TRANSPORT=net alone keeps its meaning (TCP); with CCOM_NET=ib it is RDMA. */
	if (mode == NET_IB || (mode == NET_AUTO && comm->nnodes > 1)) {
		v[comm->rank].ib_ok = ccom_net_ib_probe(why, sizeof(why));
		if (!v[comm->rank].ib_ok)
			snprintf(v[comm->rank].why, sizeof(v[comm->rank].why), "%.*s",
				 (int)sizeof(v[comm->rank].why) - 1, why);
	}
	err = ccom_bootstrap_allgather(comm->bootstrap, v, sizeof(*v));
	if (err)
		goto out;
	for (r = 0; r < comm->nranks; r++)
		if (v[r].mode != mode) {
			ccom_set_last_error("%s differs between ranks (rank %d: %s, rank %d: %s); set the same value (config netName, else CCOM_NET) on every rank",
					    what, comm->rank, mode_names[mode], r,
					    v[r].mode >= 0 && v[r].mode <= 2 ? mode_names[v[r].mode] : "?");
			err = -EBADE;
			goto out;
		}
	for (r = 0; r < comm->nranks; r++)
		if (v[r].check_sig != v[comm->rank].check_sig) {
			/* The network streams carry signatures only if both ends expect them. */
			ccom_set_last_error("CCOM_CHECK_MISMATCH differs between ranks (rank %d: %d, rank %d: %d); set the same value on every rank",
					    comm->rank, v[comm->rank].check_sig, r, v[r].check_sig);
			err = -EBADE;
			goto out;
		}
	for (r = 0; r < comm->nranks && bad < 0; r++)
		if (!v[r].ib_ok)
			bad = r;
	if (mode == NET_IB && bad >= 0) {
		v[bad].why[sizeof(v[bad].why) - 1] = '\0';
		ccom_set_last_error("net_ib: %s=ib but rank %d (host %s) cannot use RDMA: %s",
				    what, bad, comm->peers ? comm->peers[bad].host : "?",
				    bad == comm->rank ? why : v[bad].why);
		err = -ENODEV;
		goto out;
	}
	if (mode == NET_AUTO && comm->nnodes <= 1)
		goto out;	/* CCOM_TRANSPORT=net on one host: TCP, as it always was */
	if (mode != NET_SOCKET && bad < 0)
		comm->net = &ccom_transport_net_ib;
	if (mode == NET_AUTO && bad >= 0)
		ccom_info(CCOM_SUBSYS_NET, "rank %d: network transport net_socket: rank %d (host %s) cannot use RDMA: %s",
			  comm->rank, bad, comm->peers ? comm->peers[bad].host : "?", v[bad].why);
	else if (mode == NET_AUTO)
		ccom_info(CCOM_SUBSYS_NET, "rank %d: network transport net_ib: every rank has an ACTIVE RDMA port",
			  comm->rank);
out:
	free(v);
	return err;
}

const struct ccom_transport_ops *ccom_transport_select(const struct ccomComm *comm, int peer)
{
	const struct ccom_transport_ops *net = comm->net ? comm->net : &ccom_transport_net_socket;

	if (forced_net())
		return net;
	if (comm->rank_to_node && comm->rank_to_node[peer] == comm->node)
		return &ccom_transport_shm;
	return net;
}
