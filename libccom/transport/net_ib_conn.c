// SPDX-License-Identifier: MIT
/*
 * net_ib_conn.c - setup and teardown of net_ib's conns (the data path is
 * net_ib.c; net_ib_private.h lists what the files share).  The conns of
 * one setup call form a group: one device context, protection domain and
 * completion channel, freed with the group's last conn.
 *
 * Setup (collective over the peer list): each rank opens the device and
 * port CCOM_IB_HCA selects, makes one QP per peer, and sends each peer a
 * card (QPN, PSN, LID, GID, MTU, ring address and rkey, liveness
 * listener and a fresh nonce) over the
 * bootstrap's (peer, tag) messages; then RTR, RTS and a "ready" message
 * each way, so that no write reaches a QP that is not ready to receive.
 *
 * Each pair also keeps one TCP liveness connection that carries no data
 * (net_ib.c's ->wait() watches it): the higher rank connects to the
 * listener whose address the lower rank's card names, with a hello
 * authenticated under the comm's data key (net_ib_live.c).
 *
 * Teardown first lets the data writes already posted finish (conn_drain),
 * then frees the QP, memory registrations, CQ and liveness socket.
 *
 * The receive ring and staging slots of a conn (CCOM_IB_SLOTS x
 * CCOM_IB_SLOT_SIZE each, 2 MiB by default) are mapped with mmap() and
 * unmapped at teardown, not taken from malloc: glibc serves the first
 * such block by mmap but, once it is freed, raises its mmap threshold to
 * that size and carves the next ones from its arenas, where freed blocks
 * stay resident and fragment (measured in the guest over soft-RoCE, 2
 * ranks, init + AllReduce + destroy: RSS 11 -> 32 MiB over 6 cycles with
 * 34 MiB free in the arena; grow_cycles --ib grew 2-16 MiB per cycle).
 * A mapping of its own also keeps registered pages out of pages malloc
 * shares with other objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "proxy/live.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "transport/net_tclass.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

#define IB_TAG_CARD (CCOM_TAG_NET_IB_BASE + 0)
#define IB_TAG_READY (CCOM_TAG_NET_IB_BASE + 1)
#define IB_MIN_SLOT 4096
#define IB_MAX_SLOT (16 << 20)
#define IB_MIN_SLOTS 2
#define IB_MAX_SLOTS 256
#define IB_RETRY_CNT 7
#define IB_RNR_RETRY 7		/* 7: retry for ever on "receiver not ready" */
#define IB_MIN_RNR_TIMER 12
#define IB_SPIN_US 30

/* ---------------------------------------------------------------- setup and teardown */

/* @bytes of zeroed, page-aligned memory of its own (see the head of this file), or NULL. */
static char *slots_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void slots_unmap(char *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

static void group_free(struct ib_group *g)
{
	if (!g)
		return;
	if (g->ch)
		ccom_ibv.destroy_comp_channel(g->ch);
	ccom_ib_regs_fini(g);
	if (g->pd)
		ccom_ibv.dealloc_pd(g->pd);
	if (g->port.ctx)
		ccom_ibv.close_device(g->port.ctx);
	free(g->conns);
	free(g->pfds);
	free(g);
}

/*
 * Let the data writes already posted on @c finish before the QP goes:
 * bytes send() took are owned by the transport (a rank may finalize and
 * exit right after its last send, as it may with TCP), and destroying a QP
 * drops what it has not sent yet.  Credits are not waited for: the peer
 * may be gone already, having read all it needed (RC completes in order,
 * so a data write before a credit still completes first).  Bounded: a dead
 * peer turns the writes into errors within the retry budget (7 tries of
 * CCOM_IB_TIMEOUT), and no drain at all after an abort or an error.
 */
static void conn_drain(struct ib_conn *c)
{
	int64_t to = ccom_param_int("CCOM_IB_TIMEOUT");
	int64_t budget = to >= 1 && to <= 24 ? (int64_t)(4.096 * 8 * (double)(1LL << to)) : 0;
	int64_t until = ccom_now_us() + (budget > 5000000 ? budget : 5000000) + 1000000;

	while (c->qp && c->tx_done < c->tx_posted && !c->dead && !ccom_comm_aborted(c->comm)) {
		if (ccom_ib_poll_conn(c) < 0 || ccom_now_us() > until)
			break;
		if (c->tx_done < c->tx_posted)
			ccom_sleep_us(100, NULL);
	}
	if (c->tx_done < c->tx_posted && !c->dead && !ccom_comm_aborted(c->comm))
		ccom_warn("net_ib: rank %d: %llu data write(s) to peer rank %d (host %s) still unfinished at teardown; the peer may miss the last bytes",
			  c->comm->rank, (unsigned long long)(c->tx_posted - c->tx_done),
			  c->base.peer, peer_host(c));
}

/* Free @c; the group (device, PD, channel) goes with its last conn. */
static void conn_free(struct ib_conn *c)
{
	struct ib_group *g;
	int i;

	if (!c)
		return;
	conn_drain(c);
	for (i = 0; i < (int)c->nqps; i++)
		if (c->qps[i])
			ccom_ibv.destroy_qp(c->qps[i]);
	if (c->zc_reg)
		ccom_ib_reg_put(c->g, c->zc_reg);
	if (c->ring_mr)
		ccom_ibv.dereg_mr(c->ring_mr);
	if (c->stage_mr)
		ccom_ibv.dereg_mr(c->stage_mr);
	if (c->cq)
		ccom_ibv.destroy_cq(c->cq);
	if (c->live_fd >= 0) {
		ccom_live_unwatch(c->comm, c->live_fd);
		close(c->live_fd);
	}
	slots_unmap(c->ring, (size_t)c->nslots * c->slot);
	slots_unmap(c->stage, (size_t)c->nslots * c->slot);
	free(c->rx_len);
	free(c->zc_len);
	g = c->g;
	for (i = 0; i < g->nconns; i++)
		if (g->conns[i] == c)
			g->conns[i] = g->conns[--g->nconns];
	if (!g->nconns)
		group_free(g);
	free(c);
}

void ccom_ib_teardown(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers)
{
	int i;

	(void)comm;
	if (!conns)
		return;
	for (i = 0; i < npeers; i++) {
		conn_free(conns[i] ? to_ib(conns[i]) : NULL);
		conns[i] = NULL;
	}
}

struct ib_params {
	uint32_t nqps;
	uint32_t nslots;
	size_t slot;
	size_t zc_min;		/* 0: no zero-copy sends */
};

static int read_params(struct ib_params *p)
{
	int64_t ns = ccom_param_int("CCOM_IB_SLOTS");
	int64_t sz = ccom_param_int("CCOM_IB_SLOT_SIZE");

	if (ns < IB_MIN_SLOTS || ns > IB_MAX_SLOTS) {
		ccom_set_last_error("net_ib: CCOM_IB_SLOTS=%lld is out of range; use %d to %d",
				    (long long)ns, IB_MIN_SLOTS, IB_MAX_SLOTS);
		return -EINVAL;
	}
	int64_t to = ccom_param_int("CCOM_IB_TIMEOUT");

	if (to < 1 || to > 31) {
		ccom_set_last_error("net_ib: CCOM_IB_TIMEOUT=%lld is out of range; use 1 to 31 (4.096 us x 2^N per try)",
				    (long long)to);
		return -EINVAL;
	}
	if (sz < IB_MIN_SLOT || sz > IB_MAX_SLOT || (sz & 63)) {
		ccom_set_last_error("net_ib: CCOM_IB_SLOT_SIZE=%lld is out of range; use a multiple of 64 from %d to %d bytes",
				    (long long)sz, IB_MIN_SLOT, IB_MAX_SLOT);
		return -EINVAL;
	}
	int64_t zm = ccom_param_int("CCOM_IB_ZCOPY_MIN");

	if (zm < 0) {
		ccom_set_last_error("net_ib: CCOM_IB_ZCOPY_MIN=%lld is negative; use a byte count (0: every send copies through the slots)",
				    (long long)zm);
		return -EINVAL;
	}
	int64_t nq = ccom_param_int("CCOM_IB_QPS_PER_CONN");

	if (nq < 1 || nq > IB_MAX_QPS) {
		ccom_set_last_error("net_ib: CCOM_IB_QPS_PER_CONN=%lld is out of range; use 1 to %d",
				    (long long)nq, IB_MAX_QPS);
		return -EINVAL;
	}
	p->nqps = (uint32_t)nq;
	p->nslots = (uint32_t)ns;
	p->slot = (size_t)sz;
	p->zc_min = ccom_param_int("CCOM_IB_REG_CACHE") > 0 ? (size_t)zm : 0;
	return 0;
}

/* Open the device and port, pick the GID, allocate PD and channel. */
static int group_open(struct ccomComm *comm, struct ib_group *g)
{
	char why[512];
	int err, fl;

	err = ccom_ib_lib_load(why, sizeof(why));
	if (!err)
		err = ccom_ib_open_port(&g->port, comm->ib_dev, comm->ib_port, why, sizeof(why));
	if (!err)
		err = ccom_ib_pick_gid(&g->port, why, sizeof(why));
	if (err) {
		ccom_set_last_error("net_ib: rank %d: %s", comm->rank, why);
		return err;
	}
	g->pd = ccom_ibv.alloc_pd(g->port.ctx);
	g->ch = g->pd ? ccom_ibv.create_comp_channel(g->port.ctx) : NULL;
	if (!g->pd || !g->ch) {
		err = errno ? -errno : -ENOMEM;
		ccom_set_last_error("net_ib: rank %d: cannot allocate a %s on %s: %s; check the RDMA device (ibv_devinfo, dmesg)",
				    comm->rank, g->pd ? "completion channel" : "protection domain",
				    g->port.dev, strerror(-err));
		return err;
	}
	fl = fcntl(g->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(g->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		err = -errno;
		ccom_set_last_error("net_ib: rank %d: cannot make the completion channel nonblocking: %s",
				    comm->rank, strerror(errno));
		return err;
	}
	ccom_ib_dmabuf_probe(g, comm->rank, why, sizeof(why));
	err = ccom_ib_regs_init(g, comm);
	if (err)
		return err;
	g->spin_us = comm->local_nranks > sysconf(_SC_NPROCESSORS_ONLN) ? 0 : IB_SPIN_US;
	return 0;
}

static int conn_setup_err(struct ccomComm *comm, int peer, const struct ib_group *g,
			  const char *what, int err)
{
	ccom_set_last_error("net_ib: rank %d: cannot %s for peer rank %d on %s port %d: %s%s",
			    comm->rank, what, peer, g->port.dev, g->port.port, strerror(err),
			    err == ENOMEM || err == EAGAIN ?
			    "; raise the locked-memory limit (ulimit -l) or lower CCOM_IB_SLOTS / CCOM_IB_SLOT_SIZE" :
			    "; check the RDMA device (ibv_devinfo, dmesg)");
	return -err;
}

/* One conn: CQ, QP in INIT with its receives posted, ring and staging registered. */
static int conn_create(struct ccomComm *comm, struct ib_group *g, int peer,
		       const struct ib_params *p, struct ib_conn **out)
{
	struct ib_conn *c = calloc(1, sizeof(*c));
	size_t bytes = (size_t)p->nslots * p->slot;
	struct ccib_qp_init_attr ia;
	struct ccib_qp_attr a;
	uint32_t q;
	int r;

	if (!c)
		return conn_setup_err(comm, peer, g, "allocate a connection", ENOMEM);
	c->g = g;
	c->live_fd = -1;
	c->note_culprit = -1;
	g->conns[g->nconns++] = c;
	*out = c;
	c->base.ops = &ccom_transport_net_ib;
	c->base.peer = peer;
	c->comm = comm;
	c->nslots = p->nslots;
	c->slot = p->slot;
	c->sq_depth = 2 * p->nslots + 8;
	c->rq_depth = 2 * p->nslots + 8;
	c->rx_len = calloc(p->nslots, sizeof(*c->rx_len));
	c->zc_len = calloc(p->nslots, sizeof(*c->zc_len));
	c->zc_min = p->zc_min;
	c->ring = slots_map(bytes);
	c->stage = slots_map(bytes);
	if (!c->rx_len || !c->zc_len || !c->ring || !c->stage)
		return conn_setup_err(comm, peer, g, "allocate the slot buffers", ENOMEM);
	c->ring_mr = ccom_ibv.reg_mr(g->pd, c->ring, bytes,
				CCIB_ACCESS_LOCAL_WRITE | CCIB_ACCESS_REMOTE_WRITE);
	if (!c->ring_mr)
		return conn_setup_err(comm, peer, g, "register the receive slots", errno);
	c->stage_mr = ccom_ibv.reg_mr(g->pd, c->stage, bytes, CCIB_ACCESS_LOCAL_WRITE);
	if (!c->stage_mr)
		return conn_setup_err(comm, peer, g, "register the staging slots", errno);
	c->nqps = p->nqps;
	c->cq = ccom_ibv.create_cq(g->port.ctx, (int)(c->nqps * (c->sq_depth + c->rq_depth)), c,
				   g->ch, 0);
	if (!c->cq)
		return conn_setup_err(comm, peer, g, "create a completion queue", errno);
	for (q = 0; q < c->nqps; q++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = c->cq;
		ia.recv_cq = c->cq;
		ia.cap.max_send_wr = c->sq_depth;
		ia.cap.max_recv_wr = c->rq_depth;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.qp_type = CCIB_QPT_RC;
		c->qps[q] = ccom_ibv.create_qp(g->pd, &ia);
		if (!c->qps[q])
			return conn_setup_err(comm, peer, g, "create an RC queue pair", errno);
		c->qp = c->qps[0];
		memset(&a, 0, sizeof(a));
		a.qp_state = CCIB_QPS_INIT;
		a.pkey_index = 0;
		a.port_num = (uint8_t)g->port.port;
		a.qp_access_flags = CCIB_ACCESS_LOCAL_WRITE | CCIB_ACCESS_REMOTE_WRITE;
		r = ccom_ibv.modify_qp(c->qps[q], &a, CCIB_QP_STATE | CCIB_QP_PKEY_INDEX |
				       CCIB_QP_PORT | CCIB_QP_ACCESS_FLAGS);
		if (r)
			return conn_setup_err(comm, peer, g, "move the queue pair to INIT", r);
		r = ccom_ib_post_recvs(c, q, c->rq_depth);
		if (r)
			return conn_setup_err(comm, peer, g, "post receive requests", r);
		ccom_random_bytes(&c->psns[q], sizeof(c->psns[q]));
		c->psns[q] &= 0xffffff;
	}
	return 0;
}

static void card_fill(const struct ib_group *g, const struct ib_conn *c, struct ib_card *k)
{
	memset(k, 0, sizeof(*k));
	k->version = IB_WIRE_VERSION;
	for (uint32_t q = 0; q < c->nqps; q++) {
		k->qpn[q] = c->qps[q]->qp_num;
		k->psn[q] = c->psns[q];
	}
	k->nqps = c->nqps;
	k->nslots = c->nslots;
	k->slot_size = (uint32_t)c->slot;
	k->lid = g->port.attr.lid;
	k->mtu = (uint8_t)g->port.attr.active_mtu;
	k->link_layer = g->port.attr.link_layer;
	memcpy(k->gid, g->port.gid.raw, 16);
	k->ring_addr = (uintptr_t)c->ring;
	k->rkey = c->ring_mr->rkey;
}

/* RTR then RTS of QP @q of @c towards its twin on the peer described by @k. */
static int qp_connect(struct ccomComm *comm, struct ib_group *g, struct ib_conn *c,
		      const struct ib_card *k, uint32_t q)
{
	struct ccib_qp *qp = c->qps[q];
	struct ccib_qp_attr a;
	char gs[64];
	int r;

	memset(&a, 0, sizeof(a));
	a.qp_state = CCIB_QPS_RTR;
	a.path_mtu = k->mtu < g->port.attr.active_mtu ? k->mtu : g->port.attr.active_mtu;
	if (a.path_mtu < CCIB_MTU_256 || a.path_mtu > CCIB_MTU_4096)
		a.path_mtu = CCIB_MTU_1024;
	a.dest_qp_num = k->qpn[q];
	a.rq_psn = k->psn[q];
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = IB_MIN_RNR_TIMER;
	a.ah_attr.port_num = (uint8_t)g->port.port;
	a.ah_attr.dlid = k->lid;
	/* The comm's traffic class and service level (net_tclass.h), as NCCL_IB_TC / _SL. */
	a.ah_attr.sl = ccom_net_ib_sl();
	if (g->port.attr.link_layer == CCIB_LINK_LAYER_ETHERNET || !k->lid) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, k->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)g->port.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.traffic_class = ccom_net_ib_tc(comm);
	}
	r = ccom_ibv.modify_qp(qp, &a, CCIB_QP_STATE | CCIB_QP_AV | CCIB_QP_PATH_MTU |
			  CCIB_QP_DEST_QPN | CCIB_QP_RQ_PSN | CCIB_QP_MAX_DEST_RD_ATOMIC |
			  CCIB_QP_MIN_RNR_TIMER);
	if (r) {
		inet_ntop(AF_INET6, k->gid, gs, sizeof(gs));
		ccom_set_last_error("net_ib: rank %d: cannot move QP %u to RTR towards peer rank %d (host %s, QP %u, LID %u, GID %s): %s; the hosts must reach each other on the RDMA network (check CCOM_IB_HCA and CCOM_IB_GID_INDEX)",
				    comm->rank, qp->qp_num, c->base.peer, peer_host(c), k->qpn[q],
				    k->lid, gs, strerror(r));
		return -r;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = CCIB_QPS_RTS;
	a.timeout = (uint8_t)ccom_param_int("CCOM_IB_TIMEOUT");
	a.retry_cnt = IB_RETRY_CNT;
	a.rnr_retry = IB_RNR_RETRY;
	a.sq_psn = c->psns[q];
	a.max_rd_atomic = 1;
	r = ccom_ibv.modify_qp(qp, &a, CCIB_QP_STATE | CCIB_QP_TIMEOUT | CCIB_QP_RETRY_CNT |
			  CCIB_QP_RNR_RETRY | CCIB_QP_SQ_PSN | CCIB_QP_MAX_QP_RD_ATOMIC);
	if (r) {
		ccom_set_last_error("net_ib: rank %d: cannot move QP %u to RTS towards peer rank %d (host %s): %s; check the RDMA device (ibv_devinfo, dmesg)",
				    comm->rank, qp->qp_num, c->base.peer, peer_host(c), strerror(r));
		return -r;
	}
	return 0;
}

/* Check the peer's card, then connect each QP of @c to its twin. */
static int conn_connect(struct ccomComm *comm, struct ib_group *g, struct ib_conn *c,
			const struct ib_card *k)
{
	uint32_t q;
	int r;

	if (k->version != IB_WIRE_VERSION || k->nslots != c->nslots || k->slot_size != c->slot ||
	    k->link_layer != g->port.attr.link_layer || k->nqps != c->nqps) {
		ccom_set_last_error("net_ib: peer rank %d (host %s) runs an incompatible RDMA transport (wire version %u, %u slots of %u bytes, %u QPs, link layer %u; ours %u, %u of %zu, %u, %u); use one libccom build and the same CCOM_IB_SLOTS, CCOM_IB_SLOT_SIZE and CCOM_IB_QPS_PER_CONN on every rank, on one kind of network",
				    c->base.peer, peer_host(c), k->version, k->nslots, k->slot_size,
				    k->nqps, k->link_layer, IB_WIRE_VERSION, c->nslots, c->slot,
				    c->nqps, g->port.attr.link_layer);
		return -EBADE;
	}
	c->remote_ring = k->ring_addr;
	c->remote_rkey = k->rkey;
	c->last_progress_us = ccom_now_us();
	for (q = 0; q < c->nqps; q++) {
		r = qp_connect(comm, g, c, k, q);
		if (r)
			return r;
	}
	return 0;
}

/* Send @size bytes of @mine[i] (or the same @one) to every peer, then receive theirs. */
static int exchange(struct ccomComm *comm, const int *peers, int npeers, int tag,
		    const void *mine, size_t stride, void *theirs, size_t size)
{
	int i, err;

	for (i = 0; i < npeers; i++) {
		err = ccom_bootstrap_send(comm->bootstrap, peers[i], tag,
					  (const char *)mine + (size_t)i * stride, size);
		if (err)
			return err;
	}
	for (i = 0; i < npeers; i++) {
		err = ccom_bootstrap_recv(comm->bootstrap, peers[i], tag,
					  (char *)theirs + (size_t)i * size, size);
		if (err)
			return err;
	}
	return 0;
}

int ccom_ib_setup(struct ccomComm *comm, const int *peers, int npeers,
		  struct ccom_transport_conn **conns)
{
	struct ib_card *mine = NULL, *cards = NULL;
	uint8_t nonce[IB_NONCE_BYTES];
	union ccom_sockaddr live;
	uint32_t *ready = NULL;
	struct ib_group *g;
	struct ib_params p;
	char gs[64];
	int i, err, lfd = -1;

	if (npeers <= 0)
		return 0;
	err = read_params(&p);
	if (err)
		return err;
	memset(conns, 0, (size_t)npeers * sizeof(*conns));
	g = calloc(1, sizeof(*g));
	if (!g || !(g->conns = calloc((size_t)npeers, sizeof(*g->conns))) ||
	    !(g->pfds = calloc((size_t)npeers + 1, sizeof(*g->pfds)))) {
		if (g)
			free(g->conns);
		free(g);
		ccom_set_last_error("net_ib: out of memory for %d connections", npeers);
		return -ENOMEM;
	}
	err = group_open(comm, g);
	if (err) {
		group_free(g);
		return err;
	}
	for (i = 0; i < npeers && !err; i++) {
		struct ib_conn *c = NULL;

		err = conn_create(comm, g, peers[i], &p, &c);
		if (c)
			conns[i] = &c->base;
	}
	if (err)
		goto fail;
	mine = calloc((size_t)npeers, sizeof(*mine));
	cards = calloc((size_t)npeers, sizeof(*cards));
	ready = calloc((size_t)npeers + 1, sizeof(*ready));
	if (!mine || !cards || !ready) {
		ccom_set_last_error("net_ib: out of memory for the connection cards");
		err = -ENOMEM;
		goto fail;
	}
	err = ccom_ib_live_listen(comm, &live, &lfd);
	if (err)
		goto fail;
	ccom_random_bytes(nonce, sizeof(nonce));
	for (i = 0; i < npeers; i++) {
		card_fill(g, to_ib(conns[i]), &mine[i]);
		mine[i].live = live;
		memcpy(mine[i].nonce, nonce, sizeof(nonce));
	}
	err = exchange(comm, peers, npeers, IB_TAG_CARD, mine, sizeof(*mine), cards,
		       sizeof(*cards));
	if (!err)
		err = ccom_ib_live_connect_all(comm, peers, npeers, conns, cards, nonce, lfd);
	for (i = 0; !err && i < npeers; i++)
		err = conn_connect(comm, g, to_ib(conns[i]), &cards[i]);
	/* Both sides in RTS before either writes. */
	if (!err)
		err = exchange(comm, peers, npeers, IB_TAG_READY, &ready[npeers], 0, ready,
			       sizeof(*ready));
	if (err)
		goto fail;
	inet_ntop(AF_INET6, g->port.gid.raw, gs, sizeof(gs));
	ccom_info(CCOM_SUBSYS_NET, "net_ib: rank %d connected to %d peer(s) on %s port %d (%s, GID %d %s %s, MTU %d), %u QP(s) per peer, %u slots of %zu bytes per direction, traffic class %#x sl %u",
		  comm->rank, npeers, g->port.dev, g->port.port,
		  g->port.attr.link_layer == CCIB_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
		  g->port.gid_index, g->port.gid_kind, gs, 128 << g->port.attr.active_mtu,
		  p.nqps, p.nslots, p.slot, ccom_net_ib_tc(comm), ccom_net_ib_sl());
	free(mine);
	free(cards);
	free(ready);
	close(lfd);
	return 0;
fail:
	if (lfd >= 0)
		close(lfd);
	free(mine);
	free(cards);
	free(ready);
	if (!g->nconns)
		group_free(g);
	ccom_ib_teardown(comm, conns, npeers);
	return err;
}
