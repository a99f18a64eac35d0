/* SPDX-License-Identifier: MIT */
/*
 * net_ib_private.h - what the files of the RDMA verbs transport share
 * (private to net_ib; the rest of libccom uses net_ib.h and the vtable,
 * transport.h).  The files and their jobs:
 *
 *   net_ib.c        the data path behind the vtable: send, recv and wait
 *                   over the slots and credits of each conn, and the vtable
 *   net_ib_conn.c   setup (QPs, cards over the bootstrap, RTR/RTS) and
 *                   teardown of a group of conns
 *   net_ib_live.c   the TCP liveness connection of each pair and its
 *                   authenticated hello
 *   net_ib_verbs.c  the dlopen'd libibverbs entry points, the choice of
 *                   device, port and GID, and the probe of net_ib.h
 *   net_ib_mr.c     memory registration: the dma-buf probe, nccom-exported
 *                   dma-bufs, and the table of user-buffer registrations
 *                   the zero-copy send path uses
 *
 * net_ib_verbs.c calls no other file of net_ib.  net_ib_conn.c calls
 * net_ib_verbs.c (load, open, pick the GID) and two data-path calls of
 * net_ib.c (post receive requests at setup, reap completions while it
 * drains at teardown) and net_ib_live.c (the liveness connections);
 * net_ib_live.c calls no other file of net_ib; net_ib.c's vtable names
 * net_ib_conn.c's setup and teardown.  The data-path verbs (post_send, post_recv, poll_cq,
 * req_notify_cq) go through the context's ops table (net_ib_abi.h), the
 * others through ccom_ibv.
 */
#ifndef CCOM_TRANSPORT_NET_IB_PRIVATE_H
#define CCOM_TRANSPORT_NET_IB_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"
#include "transport/net_ib_abi.h"
#include "transport/transport.h"
#include "util/socket.h"

/* ---------------------------------------------------------------- net_ib_verbs.c */

/* The libibverbs functions net_ib calls, resolved by ccom_ib_lib_load(). */
struct ib_lib {
	void *h;
	char name[256];
	struct ccib_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ccib_device **list);
	const char *(*get_device_name)(struct ccib_device *dev);
	struct ccib_context *(*open_device)(struct ccib_device *dev);
	int (*close_device)(struct ccib_context *ctx);
	int (*query_port)(struct ccib_context *ctx, uint8_t port, struct ccib_port_attr *attr);
	int (*query_gid)(struct ccib_context *ctx, uint8_t port, int index, union ccib_gid *gid);
	struct ccib_pd *(*alloc_pd)(struct ccib_context *ctx);
	int (*dealloc_pd)(struct ccib_pd *pd);
	struct ccib_mr *(*reg_mr)(struct ccib_pd *pd, void *addr, size_t len, int access);
	int (*dereg_mr)(struct ccib_mr *mr);
	struct ccib_comp_channel *(*create_comp_channel)(struct ccib_context *ctx);
	int (*destroy_comp_channel)(struct ccib_comp_channel *ch);
	struct ccib_cq *(*create_cq)(struct ccib_context *ctx, int cqe, void *cq_ctx,
				     struct ccib_comp_channel *ch, int comp_vector);
	int (*destroy_cq)(struct ccib_cq *cq);
	int (*get_cq_event)(struct ccib_comp_channel *ch, struct ccib_cq **cq, void **cq_ctx);
	void (*ack_cq_events)(struct ccib_cq *cq, unsigned int n);
	struct ccib_qp *(*create_qp)(struct ccib_pd *pd, struct ccib_qp_init_attr *attr);
	int (*modify_qp)(struct ccib_qp *qp, struct ccib_qp_attr *attr, int mask);
	int (*destroy_qp)(struct ccib_qp *qp);
	const char *(*wc_status_str)(int status);
	/* optional (libibverbs 1.12, rdma-core 34): NULL where the library lacks it */
	struct ccib_mr *(*reg_dmabuf_mr)(struct ccib_pd *pd, uint64_t offset, size_t len,
					 uint64_t iova, int fd, int access);
};

/*
 * The library loaded last, written only by ccom_ib_lib_load() under its
 * lock (a previous handle stays loaded: its functions may still be in use).
 */
extern struct ib_lib ccom_ibv;

/* The device and port a group uses, and the GID chosen on it. */
struct ib_port {
	struct ccib_context *ctx;
	char dev[64];
	int port;
	struct ccib_port_attr attr;
	int gid_index;
	union ccib_gid gid;
	const char *gid_kind;
};

/* Load CCOM_IB_LIB (once per name); 0, or -ENOENT / -ENOSYS with the reason in @why. */
int ccom_ib_lib_load(char *why, size_t len);

/*
 * Open the first device whose port matches CCOM_IB_HCA and is ACTIVE, or
 * with @want_dev (not NULL nor "") that device's port @want_port when it is
 * one of them (topo/nic.c's choice), else the first.  0 and @p filled
 * (p->ctx open: the caller closes it with ccom_ibv.close_device), or
 * -ENODEV with the reason in @why.  Needs ccom_ib_lib_load() first.
 */
int ccom_ib_open_port(struct ib_port *p, const char *want_dev, int want_port, char *why,
		      size_t len);

/*
 * Choose the GID of the open port @p (CCOM_IB_GID_INDEX, else by link
 * layer and type) into p->gid, p->gid_index and p->gid_kind.  0, or
 * -EINVAL (a bad CCOM_IB_GID_INDEX) / -ENODEV with the reason in @why.
 */
int ccom_ib_pick_gid(struct ib_port *p, char *why, size_t len);

/* ---------------------------------------------------------------- groups and conns */

struct ib_conn;
struct ib_reg;
struct ib_regs;

/* The conns of one setup call: one device context, PD and completion channel. */
struct ib_group {
	struct ib_port port;
	struct ccib_pd *pd;
	struct ccib_comp_channel *ch;
	int nconns;
	struct ib_conn **conns;
	struct pollfd *pfds;		/* channel + one per conn */
	int spin_us;			/* busy-poll budget of a stall (0: oversubscribed) */
	int64_t idle_since;
	int dmabuf;			/* ibv_reg_dmabuf_mr works on this device (1) or not (0) */
	struct ib_regs *regs;		/* net_ib_mr.c: user-buffer registrations */
};

#define IB_MAX_QPS 8

struct ib_conn {
	struct ccom_transport_conn base;	/* first: coll/ casts */
	struct ccomComm *comm;
	struct ib_group *g;
	struct ccib_cq *cq;
	struct ccib_qp *qp;		/* qps[0]: credits and probes go here */
	struct ccib_qp *qps[IB_MAX_QPS];	/* slot s of the stream goes on qps[s % nqps] */
	uint32_t nqps;
	uint32_t psns[IB_MAX_QPS];
	uint32_t sq_out[IB_MAX_QPS];	/* send requests of each QP not completed */
	uint64_t tx_done_q[IB_MAX_QPS];	/* data writes of each QP completed */
	uint64_t rx_arrived_q[IB_MAX_QPS];	/* data writes each QP received */
	char *ring;			/* the peer writes here */
	char *stage;			/* we write from here */
	struct ccib_mr *ring_mr;
	struct ccib_mr *stage_mr;
	uint32_t *rx_len;		/* bytes of each ring slot that arrived */
	uint32_t nslots;
	size_t slot;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint64_t remote_ring;
	uint32_t remote_rkey;
	/* send direction: slots posted, credited back by the peer, completed here */
	uint64_t tx_posted;
	uint64_t tx_credit;
	uint64_t tx_done;		/* slots before this one all completed */
	/* zero-copy send (net_ib_mr.c's rule): writes straight from the caller's buffer */
	struct ib_reg *zc_reg;		/* registration of the region in flight, NULL: none */
	const char *zc_buf;		/* first byte of it not yet reported as taken */
	uintptr_t zc_reg_end;		/* end of the registered range */
	size_t zc_posted;		/* bytes from zc_buf on posted */
	size_t zc_done;			/* of those, bytes whose writes completed */
	uint32_t *zc_len;		/* per staging slot: bytes of a zero-copy write, 0: staged */
	size_t zc_min;			/* CCOM_IB_ZCOPY_MIN */
	uint64_t zc_bytes;		/* bytes sent zero-copy (stats) */
	/* receive direction */
	uint64_t rx_arrived;
	uint64_t rx_head;
	size_t rx_off;
	uint64_t rx_credited;		/* slots returned to the peer */
	int64_t last_progress_us;	/* last completion reaped */
	bool probe_out;			/* a liveness probe is in flight */
	int live_fd;			/* TCP liveness socket (-1: none) */
	int64_t peer_gone_us;		/* when its hang-up was seen, 0: not seen */
	int note_culprit;		/* the peer's revoke note (net_ib.c): root cause, -1: none */
	bool dead;
	int err;
};

static inline struct ib_conn *to_ib(struct ccom_transport_conn *conn)
{
	return (struct ib_conn *)conn;
}

static inline const char *peer_host(const struct ib_conn *c)
{
	return c->comm->peers ? c->comm->peers[c->base.peer].host : "?";
}

/* ---------------------------------------------------------------- net_ib_mr.c */

/*
 * Probe dma-buf registration on @g's device the way NCCL does: an
 * ibv_reg_dmabuf_mr() with fd -1 fails with EOPNOTSUPP or EPROTONOSUPPORT
 * where the provider or kernel cannot register dma-bufs, with another
 * error (EBADF) where it can.  Sets g->dmabuf; logs the result at INFO
 * once per device and process; the reason goes to @why.
 */
int ccom_ib_dmabuf_probe(struct ib_group *g, int rank, char *why, size_t len);

/*
 * Register [@addr, @addr + @len) of the dma-buf @fd (exported by
 * /dev/nccom, MEM_EXPORT_DMABUF; @offset is @addr's offset in it) with the
 * NIC: with ibv_reg_dmabuf_mr() where g->dmabuf, else by address with
 * ibv_reg_mr() (the fallback: the same pages through the process's
 * mapping).  Logs at INFO which path it took; *@via is "dma-buf" or
 * "address (fallback)".  0, or -errno after ccom_set_last_error().
 */
int ccom_ib_reg_nccom(struct ib_group *g, int rank, int fd, uint64_t offset, void *addr,
		      size_t len, int access, struct ccib_mr **mr, const char **via);

/*
 * Set up / free @g's user-buffer registration table (CCOM_IB_REG_CACHE
 * windows, and @comm's ccomCommRegister ranges as they are used).
 */
int ccom_ib_regs_init(struct ib_group *g, struct ccomComm *comm);
void ccom_ib_regs_fini(struct ib_group *g);

/*
 * A registration for local reads (the zero-copy send path) of a send of
 * [@addr, @addr + @len): the communicator's ccomCommRegister range that
 * covers all of it, else (@win not 0) a window [@addr, @addr + @win)
 * registered now, shared by every conn of the group while any of them
 * uses it; NULL when none covers it, the table is full or registration
 * failed (the caller copies through its staging slots instead).  Release
 * it with ccom_ib_reg_put() once the last write from it completed.
 */
struct ib_reg *ccom_ib_reg_get(struct ib_group *g, const void *addr, size_t len, size_t win);
void ccom_ib_reg_put(struct ib_group *g, struct ib_reg *r);
uint32_t ccom_ib_reg_lkey(const struct ib_reg *r);
uintptr_t ccom_ib_reg_end(const struct ib_reg *r);

/* ---------------------------------------------------------------- net_ib.c */

/* Post @n receive requests on QP @q of @c; 0 or the verbs error (a positive errno). */
int ccom_ib_post_recvs(struct ib_conn *c, uint32_t q, uint32_t n);

/*
 * Reap the completions of @c (reposting a receive request for each one
 * that consumed one); returns how many, or -errno once @c is dead (with
 * the last error set).
 */
int ccom_ib_poll_conn(struct ib_conn *c);

/* ---------------------------------------------------------------- net_ib_conn.c, net_ib_live.c */

#define IB_WIRE_VERSION 3u	/* 3: the liveness hello carries a MAC, cards a nonce */
#define IB_NONCE_BYTES 16

/* What each rank sends each peer at setup. */
struct ib_card {
	uint32_t version;
	uint32_t nqps;
	uint32_t qpn[IB_MAX_QPS];
	uint32_t psn[IB_MAX_QPS];
	uint32_t nslots;
	uint32_t slot_size;
	uint16_t lid;
	uint8_t mtu;
	uint8_t link_layer;
	uint8_t gid[16];
	uint64_t ring_addr;
	uint32_t rkey;
	uint32_t pad;
	union ccom_sockaddr live;	/* this rank's liveness listener */
	uint8_t nonce[IB_NONCE_BYTES];	/* fresh per setup: the hellos to this rank carry it */
};

/*
 * net_ib_live.c: listen for liveness connections on the address of our
 * bootstrap socket, port 0; 0 or -errno after a sentence.
 */
int ccom_ib_live_listen(struct ccomComm *comm, union ccom_sockaddr *a, int *lfd);

/*
 * net_ib_live.c: open the liveness connection of each pair (the higher
 * rank connects to @cards[i].live with a hello under the peer's nonce,
 * the lower accepts on @lfd and checks hellos against its own @nonce);
 * fills each conn's live_fd.  0 or -errno after a sentence.
 */
int ccom_ib_live_connect_all(struct ccomComm *comm, const int *peers, int npeers,
			     struct ccom_transport_conn **conns, const struct ib_card *cards,
			     const uint8_t *nonce, int lfd);


/* The vtable's ->setup (proxy/conn.h): collective over @peers. */
int ccom_ib_setup(struct ccomComm *comm, const int *peers, int npeers,
		  struct ccom_transport_conn **conns);

/* The vtable's ->teardown: drain, then free every conn of @conns (and their group). */
void ccom_ib_teardown(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers);

#endif
