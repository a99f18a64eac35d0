// SPDX-License-Identifier: MIT
/*
 * net_ib.c - the RDMA verbs transport between hosts (InfiniBand, RoCE,
 * soft-RoCE), behind the same vtable as net_socket (proxy/conn.h).
 *
 * libibverbs is loaded with dlopen() when a communicator first needs it
 * (CCOM_IB_LIB, default libibverbs.so.1), so libccom builds with gcc and
 * make alone and runs where rdma-core is absent; the layouts it uses are
 * declared in net_ib_abi.h.
 *
 * Each pair of ranks gets one RC queue pair.  Each side of a pair owns a
 * receive ring of CCOM_IB_SLOTS slots of CCOM_IB_SLOT_SIZE bytes, registered
 * once at setup for remote write, and a staging area of the same shape
 * registered for local access.  send() copies up to one slot of the byte
 * stream into the next staging slot and posts an RDMA WRITE WITH IMMEDIATE
 * into the same slot of the peer's ring; the immediate is the byte count.
 * The receiver sees one receive completion per slot, in order (RC), copies
 * the bytes out and returns the slots it emptied as a credit: a zero-length
 * RDMA WRITE WITH IMMEDIATE whose immediate has bit 31 set and the number
 * of slots in the low bits.  A sender holds at most CCOM_IB_SLOTS slots
 * that were not credited back (nor completed locally), so a slow receiver
 * stalls its sender instead of being overrun.  Every write consumes one
 * receive request on the other side; each side keeps 2 * CCOM_IB_SLOTS + 8
 * posted (at most CCOM_IB_SLOTS data writes and CCOM_IB_SLOTS credits are
 * ever unpolled), reposting one per completion.
 *
 * Setup (collective over the peer list): each rank opens the device and
 * port CCOM_IB_HCA selects, makes one QP per peer, and sends each peer a
 * card (QPN, PSN, LID, GID, MTU, ring address and rkey) over the
 * bootstrap's (peer, tag) messages; then RTR, RTS and a "ready" message
 * each way, so that no write reaches a QP that is not ready to receive.
 *
 * A work completion with an error turns into -ECONNRESET (the peer did not
 * answer or refused: it died, aborted or lost its port) or -EIO (a local
 * error), with a sentence naming the peer rank, its host, the QP and
 * ibv_wc_status_str().  RC reports nothing to a receiver whose peer died,
 * so each pair also keeps one TCP connection that carries no data: the
 * kernel closes it when a process ends, and a conn whose peer hung up that
 * makes no progress for 200 ms is -ECONNRESET.  ->wait() polls the group's
 * completion queues for a short budget, then sleeps on their completion
 * channel and the liveness sockets.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "core/comm.h"
#include "transport/net_ib.h"
#include "transport/net_ib_abi.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

#define IB_TAG_CARD (CCOM_TAG_NET_IB_BASE + 0)
#define IB_TAG_READY (CCOM_TAG_NET_IB_BASE + 1)
#define IB_WIRE_VERSION 1u
#define IB_MIN_SLOT 4096
#define IB_MAX_SLOT (16 << 20)
#define IB_MIN_SLOTS 2
#define IB_MAX_SLOTS 256
#define IB_CREDIT_BIT 0x80000000u
#define IB_WR_DATA 1
#define IB_WR_CREDIT 2
#define IB_WR_PROBE 3
/* A conn without progress this long while a transfer waits gets a liveness probe. */
#define IB_PROBE_IDLE_US 1000000
#define IB_POLL_BATCH 16
#define IB_RETRY_CNT 7
#define IB_RNR_RETRY 7		/* 7: retry for ever on "receiver not ready" */
#define IB_MIN_RNR_TIMER 12
#define IB_SPIN_US 30
#define IB_MAX_PORTS 8
/* A peer's liveness socket hung up this long ago and still no progress: it is gone. */
#define IB_GONE_GRACE_US 200000
#define IB_HELLO_TIMEOUT_US 5000000LL

/* ---------------------------------------------------------------- the library */

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
};

static struct ib_lib lib;
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

/* Load CCOM_IB_LIB (once per name); 0, or -ENOENT / -ENOSYS with the reason in @why. */
static int lib_load(char *why, size_t len)
{
	const char *name = ccom_param_str("CCOM_IB_LIB");
	struct ib_lib l = { 0 };
	void *h;
	int err = 0;

	if (!name || !*name)
		name = "libibverbs.so.1";
	pthread_mutex_lock(&lib_lock);
	if (lib.h && !strcmp(lib.name, name))
		goto out;
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(why, len, "%s not found (%s); install the verbs library and a provider (Debian: apt-get install ibverbs-providers), point CCOM_IB_LIB at it, or set CCOM_NET=socket",
			 name, e ? e : "dlopen failed");
		err = -ENOENT;
		goto out;
	}
	l.h = h;
	snprintf(l.name, sizeof(l.name), "%s", name);
#define IB_SYM(field, sym)						\
	do {								\
		*(void **)&l.field = dlsym(h, sym);			\
		if (!l.field) {						\
			snprintf(why, len, "%s lacks %s; it is not libibverbs 1.1 (rdma-core): install rdma-core's libibverbs1 or set CCOM_NET=socket", \
				 name, sym);				\
			err = -ENOSYS;					\
			goto out;					\
		}							\
	} while (0)
	IB_SYM(get_device_list, "ibv_get_device_list");
	IB_SYM(free_device_list, "ibv_free_device_list");
	IB_SYM(get_device_name, "ibv_get_device_name");
	IB_SYM(open_device, "ibv_open_device");
	IB_SYM(close_device, "ibv_close_device");
	IB_SYM(query_port, "ibv_query_port");
	IB_SYM(query_gid, "ibv_query_gid");
	IB_SYM(alloc_pd, "ibv_alloc_pd");
	IB_SYM(dealloc_pd, "ibv_dealloc_pd");
	IB_SYM(reg_mr, "ibv_reg_mr");
	IB_SYM(dereg_mr, "ibv_dereg_mr");
	IB_SYM(create_comp_channel, "ibv_create_comp_channel");
	IB_SYM(destroy_comp_channel, "ibv_destroy_comp_channel");
	IB_SYM(create_cq, "ibv_create_cq");
	IB_SYM(destroy_cq, "ibv_destroy_cq");
	IB_SYM(get_cq_event, "ibv_get_cq_event");
	IB_SYM(ack_cq_events, "ibv_ack_cq_events");
	IB_SYM(create_qp, "ibv_create_qp");
	IB_SYM(modify_qp, "ibv_modify_qp");
	IB_SYM(destroy_qp, "ibv_destroy_qp");
	IB_SYM(wc_status_str, "ibv_wc_status_str");
#undef IB_SYM
	lib = l;	/* a previous handle stays loaded: its functions may still be in use */
out:
	pthread_mutex_unlock(&lib_lock);
	return err;
}

/* ---------------------------------------------------------------- device, port, GID */

struct ib_port {
	struct ccib_context *ctx;
	char dev[64];
	int port;
	struct ccib_port_attr attr;
	int gid_index;
	union ccib_gid gid;
	const char *gid_kind;
};

/*
 * Does device @dev port @port match CCOM_IB_HCA @spec?  The grammar of
 * CCOM_SOCKET_IFNAME: comma-separated name prefixes, each optionally
 * ":port"; a leading ^ excludes them, a leading = requires exact names.
 */
static bool hca_match(const char *spec, const char *dev, int port)
{
	bool excl = false, exact = false, hit = false;

	if (!spec || !*spec)
		return true;
	if (*spec == '^') {
		excl = true;
		spec++;
	}
	if (*spec == '=') {
		exact = true;
		spec++;
	}
	while (*spec) {
		size_t n = strcspn(spec, ",");
		char item[96], *colon;
		int want = 0;

		snprintf(item, sizeof(item), "%.*s", (int)n, spec);
		colon = strchr(item, ':');
		if (colon) {
			*colon = '\0';
			want = atoi(colon + 1);
		}
		if (*item && (exact ? !strcmp(item, dev) : !strncmp(item, dev, strlen(item))) &&
		    (!want || want == port))
			hit = true;
		spec += n;
		if (*spec == ',')
			spec++;
	}
	return excl ? !hit : hit;
}

/* Ports of @dev from sysfs (1-based, contiguous); 1 if unknown. */
static int port_count(const char *dev)
{
	char path[192];
	int n;

	for (n = 1; n <= IB_MAX_PORTS; n++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d", dev, n);
		if (access(path, F_OK))
			break;
	}
	return n > 1 ? n - 1 : 1;
}

static const char *port_state_str(int s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return s >= 0 && s < 6 ? names[s] : "?";
}

/*
 * Open the first device whose port matches CCOM_IB_HCA and is ACTIVE.  0 and
 * @p filled (p->ctx open), or -ENODEV with the reason in @why.
 */
static int open_port(struct ib_port *p, char *why, size_t len)
{
	const char *spec = ccom_param_str("CCOM_IB_HCA");
	struct ccib_device **list;
	char seen[256];
	size_t off = 0;
	int ndev = 0, i, port, nmatch = 0;

	memset(p, 0, sizeof(*p));
	seen[0] = '\0';
	list = lib.get_device_list(&ndev);
	if (!list || ndev <= 0) {
		snprintf(why, len, "no RDMA device found (%s%s); load a driver (soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0) or set CCOM_NET=socket",
			 list ? "libibverbs lists none" : "ibv_get_device_list: ",
			 list ? "" : strerror(errno));
		if (list)
			lib.free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < ndev; i++) {
		const char *name = lib.get_device_name(list[i]);
		struct ccib_context *ctx = NULL;
		int np = port_count(name);

		for (port = 1; port <= np; port++) {
			struct ccib_port_attr a;

			if (!hca_match(spec, name, port))
				continue;
			nmatch++;
			if (!ctx)
				ctx = lib.open_device(list[i]);
			memset(&a, 0, sizeof(a));
			if (!ctx || lib.query_port(ctx, (uint8_t)port, &a)) {
				if (off < sizeof(seen) - 1)
					off += snprintf(seen + off, sizeof(seen) - off, "%s%s:%d(%s)",
							off ? ", " : "", name, port,
							ctx ? "query failed" : "cannot open");
				continue;
			}
			if (a.state == CCIB_PORT_ACTIVE) {
				p->ctx = ctx;
				snprintf(p->dev, sizeof(p->dev), "%s", name);
				p->port = port;
				p->attr = a;
				lib.free_device_list(list);
				return 0;
			}
			if (off < sizeof(seen) - 1)
				off += snprintf(seen + off, sizeof(seen) - off, "%s%s:%d(%s)",
						off ? ", " : "", name, port, port_state_str(a.state));
		}
		if (ctx)
			lib.close_device(ctx);
		if (!nmatch && off < sizeof(seen) - 1)
			off += snprintf(seen + off, sizeof(seen) - off, "%s%s", off ? ", " : "", name);
	}
	lib.free_device_list(list);
	if (!nmatch)
		snprintf(why, len, "no RDMA device matches CCOM_IB_HCA=%s (devices: %s); fix CCOM_IB_HCA or set CCOM_NET=socket",
			 spec, seen);
	else
		snprintf(why, len, "no ACTIVE port on the RDMA device(s) %s; check the link (ibv_devinfo, rdma link) or set CCOM_NET=socket",
			 seen);
	return -ENODEV;
}

/* "RoCE v2", "IB/RoCE v1" or "" for GID @idx of the port (sysfs). */
static void gid_type(const struct ib_port *p, int idx, char *buf, size_t len)
{
	char path[224];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", p->dev,
		 p->port, idx);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static bool gid_zero(const union ccib_gid *g)
{
	static const uint8_t z[16];

	return !memcmp(g->raw, z, 16);
}

static bool gid_v4mapped(const union ccib_gid *g)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pre, 12);
}

/*
 * The GID: CCOM_IB_GID_INDEX if set; InfiniBand: index 0; Ethernet (RoCE):
 * the first RoCE v2 GID, an IPv4-mapped one first, else the first v1 one.
 */
static int pick_gid(struct ib_port *p, char *why, size_t len)
{
	int64_t forced = ccom_param_int("CCOM_IB_GID_INDEX");
	int i, best = -1, best_score = 0;
	char type[32];

	if (forced >= 0) {
		if (forced >= p->attr.gid_tbl_len ||
		    lib.query_gid(p->ctx, (uint8_t)p->port, (int)forced, &p->gid)) {
			snprintf(why, len, "CCOM_IB_GID_INDEX=%lld is not a GID of %s port %d (table of %d); pick one from `ibv_devinfo -v` or unset it",
				 (long long)forced, p->dev, p->port, p->attr.gid_tbl_len);
			return -EINVAL;
		}
		p->gid_index = (int)forced;
		p->gid_kind = "forced";
		return 0;
	}
	if (p->attr.link_layer != CCIB_LINK_LAYER_ETHERNET) {
		p->gid_index = 0;
		p->gid_kind = "IB";
		if (lib.query_gid(p->ctx, (uint8_t)p->port, 0, &p->gid))
			memset(&p->gid, 0, sizeof(p->gid));
		return 0;
	}
	for (i = 0; i < p->attr.gid_tbl_len && i < 256; i++) {
		union ccib_gid g;
		int score;

		if (lib.query_gid(p->ctx, (uint8_t)p->port, i, &g) || gid_zero(&g))
			continue;
		gid_type(p, i, type, sizeof(type));
		score = strstr(type, "v2") ? 2 : 1;
		if (gid_v4mapped(&g))
			score += 2;
		if (score > best_score) {
			best = i;
			best_score = score;
			p->gid = g;
		}
	}
	if (best < 0) {
		snprintf(why, len, "no usable GID on %s port %d (the network interface under it has no IP address?); give it an address or set CCOM_IB_GID_INDEX",
			 p->dev, p->port);
		return -ENODEV;
	}
	p->gid_index = best;
	p->gid_kind = best_score >= 3 ? "RoCE v2 IPv4" : best_score == 2 ? "RoCE v2" :
		      "RoCE v1";
	return 0;
}

int ccom_net_ib_probe(char *why, size_t why_len)
{
	struct ib_port p;

	if (lib_load(why, why_len) || open_port(&p, why, why_len))
		return 0;
	lib.close_device(p.ctx);
	return 1;
}

/* ---------------------------------------------------------------- conns */

/* What each rank sends each peer at setup. */
struct ib_card {
	uint32_t version;
	uint32_t qpn;
	uint32_t psn;
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
};

/* First bytes of a liveness connection, from the higher rank. */
struct ib_hello {
	uint64_t magic;
	uint64_t comm_hash;
	int32_t rank;
	int32_t pad;
};

struct ib_conn;

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
};

struct ib_conn {
	struct ccom_transport_conn base;	/* first: coll/ casts */
	struct ccomComm *comm;
	struct ib_group *g;
	struct ccib_cq *cq;
	struct ccib_qp *qp;
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
	uint32_t psn;
	/* send direction: slots posted, credited back by the peer, completed here */
	uint64_t tx_posted;
	uint64_t tx_credit;
	uint64_t tx_done;
	uint32_t sq_out;		/* send requests not completed */
	/* receive direction */
	uint64_t rx_arrived;
	uint64_t rx_head;
	size_t rx_off;
	uint64_t rx_credited;		/* slots returned to the peer */
	int64_t last_progress_us;	/* last completion reaped */
	bool probe_out;			/* a liveness probe is in flight */
	int live_fd;			/* TCP liveness socket (-1: none) */
	int64_t peer_gone_us;		/* when its hang-up was seen, 0: not seen */
	bool dead;
	int err;
};

static struct ib_conn *to_ib(struct ccom_transport_conn *conn)
{
	return (struct ib_conn *)conn;
}

static const char *peer_host(const struct ib_conn *c)
{
	return c->comm->peers ? c->comm->peers[c->base.peer].host : "?";
}

static bool status_remote(int s)
{
	return s == CCIB_WC_WR_FLUSH_ERR || (s >= 7 && s <= 13 && s != 8) || s == 15 ||
	       s == CCIB_WC_REM_ABORT_ERR || s == CCIB_WC_RESP_TIMEOUT_ERR;
}

static int wc_fail(struct ib_conn *c, const struct ccib_wc *wc)
{
	bool remote = status_remote(wc->status);

	if (c->dead)
		return c->err;
	c->dead = true;
	c->err = remote ? -ECONNRESET : -EIO;
	if (c->peer_gone_us && wc->wr_id != IB_WR_DATA) {
		/* A credit or probe to a peer that left (finalized or died): not news. */
		char msg[256];

		snprintf(msg, sizeof(msg), "net_ib: peer rank %d (host %s) left: its liveness connection closed; that rank finalized, died or aborted",
			 c->base.peer, peer_host(c));
		ccom_set_last_error_quiet(msg);
		c->err = -ECONNRESET;
		return c->err;
	}
	ccom_set_last_error("net_ib: work completion error on QP %u to peer rank %d (host %s): %s (status %d, vendor error 0x%x, on a %s); %s",
			    c->qp->qp_num, c->base.peer, peer_host(c),
			    lib.wc_status_str(wc->status), wc->status, wc->vendor_err,
			    wc->opcode & 0x80 ? "receive" : "RDMA write",
			    remote ? "that rank died, aborted or lost its RDMA port or network" :
			    "a local RDMA error: check the device (ibv_devinfo, dmesg) and the locked-memory limit (ulimit -l)");
	return c->err;
}

static int conn_fail(struct ib_conn *c, const char *what, int err)
{
	if (c->dead)
		return c->err;
	c->dead = true;
	c->err = -EIO;
	ccom_set_last_error("net_ib: %s on QP %u to peer rank %d (host %s) failed: %s; check the RDMA device (ibv_devinfo, dmesg)",
			    what, c->qp->qp_num, c->base.peer, peer_host(c), strerror(err));
	return c->err;
}

static int post_recvs(struct ib_conn *c, uint32_t n)
{
	struct ccib_recv_wr wr[IB_POLL_BATCH], *bad = NULL;
	uint32_t i, k;
	int r;

	while (n) {
		k = n < IB_POLL_BATCH ? n : IB_POLL_BATCH;
		for (i = 0; i < k; i++)
			wr[i] = (struct ccib_recv_wr){ .wr_id = 0, .next = i + 1 < k ? &wr[i + 1] : NULL };
		r = c->qp->context->ops.post_recv(c->qp, wr, &bad);
		if (r)
			return r;
		n -= k;
	}
	return 0;
}

static int post_write(struct ib_conn *c, uint64_t wr_id, uint32_t imm, const void *addr,
		      uint32_t len, uint64_t remote)
{
	struct ccib_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = c->stage_mr->lkey,
	};
	struct ccib_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = CCIB_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = CCIB_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = c->remote_rkey;
	return c->qp->context->ops.post_send(c->qp, &wr, &bad);
}

/*
 * A zero-length RDMA WRITE (no immediate: it consumes no receive request
 * and the peer's CPU never sees it).  A peer whose process died has no QP
 * left: the write exhausts its retries and fails with RETRY_EXC_ERR, which
 * a receive-only wait would otherwise never learn (RC sends nothing while
 * idle).
 */
static void post_probe(struct ib_conn *c)
{
	struct ccib_send_wr wr, *bad = NULL;

	if (c->dead || c->probe_out || c->sq_out >= c->sq_depth)
		return;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = IB_WR_PROBE;
	wr.opcode = CCIB_WR_RDMA_WRITE;
	wr.send_flags = CCIB_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = c->remote_ring;
	wr.wr.rdma.rkey = c->remote_rkey;
	if (c->qp->context->ops.post_send(c->qp, &wr, &bad) == 0) {
		c->probe_out = true;
		c->sq_out++;
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: rank %d: liveness probe on QP %u to peer rank %d",
			   c->comm->rank, c->qp->qp_num, c->base.peer);
	}
}

/* Return the slots read since the last credit (if the send queue has room). */
static int flush_credits(struct ib_conn *c, bool force)
{
	uint64_t pending = c->rx_head - c->rx_credited;
	int r;

	if (!pending || c->sq_out >= c->sq_depth)
		return 0;
	if (!force && pending < c->nslots / 4 && c->rx_head != c->rx_arrived)
		return 0;
	r = post_write(c, IB_WR_CREDIT, IB_CREDIT_BIT | (uint32_t)pending, NULL, 0, c->remote_ring);
	if (r)
		return conn_fail(c, "posting a credit", r);
	c->sq_out++;
	c->rx_credited += pending;
	return 0;
}

/* Reap completions of @c; returns how many, or -errno. */
static int poll_conn(struct ib_conn *c)
{
	struct ccib_wc wc[IB_POLL_BATCH];
	uint32_t recvs = 0;
	int n, i, total = 0;

	if (c->dead)
		return c->err;
	do {
		n = c->cq->context->ops.poll_cq(c->cq, IB_POLL_BATCH, wc);
		if (n < 0)
			return conn_fail(c, "polling the completion queue", EIO);
		for (i = 0; i < n; i++) {
			if (wc[i].status != CCIB_WC_SUCCESS)
				return wc_fail(c, &wc[i]);
			if (wc[i].opcode == CCIB_WC_RECV_RDMA_WITH_IMM) {
				uint32_t imm = ntohl(wc[i].imm_data);

				recvs++;
				if (imm & IB_CREDIT_BIT) {
					c->tx_credit += imm & ~IB_CREDIT_BIT;
				} else {
					c->rx_len[c->rx_arrived % c->nslots] = imm;
					c->rx_arrived++;
				}
			} else {
				c->sq_out--;
				if (wc[i].wr_id == IB_WR_DATA)
					c->tx_done++;
				else if (wc[i].wr_id == IB_WR_PROBE)
					c->probe_out = false;
			}
		}
		total += n;
	} while (n == IB_POLL_BATCH);
	if (total)
		c->last_progress_us = ccom_now_us();
	if (recvs) {
		int r = post_recvs(c, recvs);

		if (r)
			return conn_fail(c, "reposting receive requests", r);
	}
	return total;
}

/*
 * No progress on @c: if its peer's liveness socket hung up a while ago,
 * the peer is gone (a peer that finished normally sent everything first,
 * and its last completions had the grace period to show up).
 */
static int check_gone(struct ib_conn *c)
{
	if (!c->peer_gone_us || ccom_now_us() - c->peer_gone_us < IB_GONE_GRACE_US)
		return 0;
	c->dead = true;
	c->err = -ECONNRESET;
	ccom_set_last_error("net_ib: peer rank %d (host %s) is gone (its liveness connection closed) while QP %u still waits for it; that rank died, aborted or lost its network",
			    c->base.peer, peer_host(c), c->qp->qp_num);
	return c->err;
}

static ssize_t ib_send(struct ccom_transport_conn *conn, const void *buf, size_t size)
{
	struct ib_conn *c = to_ib(conn);
	size_t done = 0;
	int r;

	r = poll_conn(c);
	if (r < 0)
		return r;
	while (done < size) {
		uint64_t s = c->tx_posted;
		size_t n = size - done < c->slot ? size - done : c->slot;
		char *dst = c->stage + (s % c->nslots) * c->slot;

		if (s - c->tx_credit >= c->nslots || s - c->tx_done >= c->nslots ||
		    c->sq_out >= c->sq_depth)
			break;
		memcpy(dst, (const char *)buf + done, n);
		r = post_write(c, IB_WR_DATA, (uint32_t)n, dst, (uint32_t)n,
			       c->remote_ring + (s % c->nslots) * c->slot);
		if (r)
			return conn_fail(c, "posting an RDMA write", r);
		c->sq_out++;
		c->tx_posted++;
		done += n;
	}
	if (done)
		c->g->idle_since = 0;
	else if (size)
		return check_gone(c);
	return (ssize_t)done;
}

static ssize_t ib_recv(struct ccom_transport_conn *conn, void *buf, size_t size)
{
	struct ib_conn *c = to_ib(conn);
	size_t done = 0;
	int r;

	r = poll_conn(c);
	if (r < 0)
		return r;
	while (done < size && c->rx_head < c->rx_arrived) {
		uint32_t idx = (uint32_t)(c->rx_head % c->nslots);
		size_t avail = c->rx_len[idx] - c->rx_off;
		size_t n = size - done < avail ? size - done : avail;

		memcpy((char *)buf + done, c->ring + idx * c->slot + c->rx_off, n);
		done += n;
		c->rx_off += n;
		if (c->rx_off == c->rx_len[idx]) {
			c->rx_head++;
			c->rx_off = 0;
		}
	}
	r = flush_credits(c, false);
	if (r < 0)
		return r;
	if (done)
		c->g->idle_since = 0;
	else if (size)
		return check_gone(c);
	return (ssize_t)done;
}

/* The conn whose liveness socket is @fd: its peer closed it (exit, death). */
static void mark_gone(struct ib_group *g, int fd)
{
	char b;
	int i;

	for (i = 0; i < g->nconns; i++) {
		struct ib_conn *c = g->conns[i];

		if (c->live_fd != fd || c->peer_gone_us)
			continue;
		if (recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) < 0 &&
		    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		c->peer_gone_us = ccom_now_us();
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: rank %d: peer rank %d closed its liveness connection",
			   c->comm->rank, c->base.peer);
	}
}

/*
 * Poll every conn of the group (a ring step waits on two); busy-poll for
 * the group's budget, then arm the CQs and sleep on the completion channel
 * at most @timeout_us.
 */
static int ib_wait(struct ccom_transport_conn *conn, int dir, int timeout_us)
{
	struct ib_conn *c = to_ib(conn);
	struct ib_group *g = c->g;
	struct ccib_cq *ecq;
	void *ectx;
	int64_t now;
	int i, r, n, got = 0;

	(void)dir;
	if (c->dead)
		return c->err;
	for (i = 0; i < g->nconns; i++) {
		r = poll_conn(g->conns[i]);
		if (r < 0 && g->conns[i] == c)
			return r;
		if (r > 0)
			got += r;
		if (r >= 0 && flush_credits(g->conns[i], true) < 0 && g->conns[i] == c)
			return c->err;
	}
	if (got || timeout_us <= 0) {
		g->idle_since = 0;
		return 0;
	}
	now = ccom_now_us();
	for (i = 0; i < g->nconns; i++)
		if (now - g->conns[i]->last_progress_us > IB_PROBE_IDLE_US)
			post_probe(g->conns[i]);
	if (g->spin_us) {
		if (!g->idle_since)
			g->idle_since = now;
		if (now - g->idle_since < g->spin_us)
			return 0;
	}
	/* Arm, then look once more: a completion that came before the arm raises no event. */
	for (i = 0; i < g->nconns; i++)
		if (!g->conns[i]->dead)
			g->conns[i]->cq->context->ops.req_notify_cq(g->conns[i]->cq, 0);
	for (i = 0; i < g->nconns; i++) {
		r = poll_conn(g->conns[i]);
		if (r > 0)
			return 0;
		if (r < 0 && g->conns[i] == c)
			return r;
	}
	n = 0;
	g->pfds[n++] = (struct pollfd){ .fd = g->ch->fd, .events = POLLIN };
	for (i = 0; i < g->nconns; i++)
		if (g->conns[i]->live_fd >= 0 && !g->conns[i]->peer_gone_us)
			g->pfds[n++] = (struct pollfd){ .fd = g->conns[i]->live_fd,
							.events = POLLIN | POLLRDHUP };
	r = poll(g->pfds, (nfds_t)n, (timeout_us + 999) / 1000);
	if (r < 0 && errno != EINTR)
		return -errno;
	while (lib.get_cq_event(g->ch, &ecq, &ectx) == 0)
		lib.ack_cq_events(ecq, 1);
	/* The liveness sockets carry no data: readable or hung up means the peer closed it. */
	for (i = 1; r > 0 && i < n; i++)
		if (g->pfds[i].revents)
			mark_gone(g, g->pfds[i].fd);
	return 0;
}

int ccom_net_ib_conn_stats(const struct ccom_transport_conn *conn, uint64_t *posted,
			   uint64_t *credited)
{
	const struct ib_conn *c = (const struct ib_conn *)conn;

	if (!conn || conn->ops != &ccom_transport_net_ib)
		return -EINVAL;
	*posted = c->tx_posted;
	*credited = c->tx_credit;
	return 0;
}

/* ---------------------------------------------------------------- setup and teardown */

static void group_free(struct ib_group *g)
{
	if (!g)
		return;
	if (g->ch)
		lib.destroy_comp_channel(g->ch);
	if (g->pd)
		lib.dealloc_pd(g->pd);
	if (g->port.ctx)
		lib.close_device(g->port.ctx);
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
		if (poll_conn(c) < 0 || ccom_now_us() > until)
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
	if (c->qp)
		lib.destroy_qp(c->qp);
	if (c->ring_mr)
		lib.dereg_mr(c->ring_mr);
	if (c->stage_mr)
		lib.dereg_mr(c->stage_mr);
	if (c->cq)
		lib.destroy_cq(c->cq);
	if (c->live_fd >= 0)
		close(c->live_fd);
	free(c->ring);
	free(c->stage);
	free(c->rx_len);
	g = c->g;
	for (i = 0; i < g->nconns; i++)
		if (g->conns[i] == c)
			g->conns[i] = g->conns[--g->nconns];
	if (!g->nconns)
		group_free(g);
	free(c);
}

static void ib_teardown(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers)
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
	uint32_t nslots;
	size_t slot;
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
	p->nslots = (uint32_t)ns;
	p->slot = (size_t)sz;
	return 0;
}

/* Open the device and port, pick the GID, allocate PD and channel. */
static int group_open(struct ccomComm *comm, struct ib_group *g)
{
	char why[512];
	int err, fl;

	err = lib_load(why, sizeof(why));
	if (!err)
		err = open_port(&g->port, why, sizeof(why));
	if (!err)
		err = pick_gid(&g->port, why, sizeof(why));
	if (err) {
		ccom_set_last_error("net_ib: rank %d: %s", comm->rank, why);
		return err;
	}
	g->pd = lib.alloc_pd(g->port.ctx);
	g->ch = g->pd ? lib.create_comp_channel(g->port.ctx) : NULL;
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
	int r;

	if (!c)
		return conn_setup_err(comm, peer, g, "allocate a connection", ENOMEM);
	c->g = g;
	c->live_fd = -1;
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
	if (!c->rx_len || posix_memalign((void **)&c->ring, 4096, bytes) ||
	    posix_memalign((void **)&c->stage, 4096, bytes))
		return conn_setup_err(comm, peer, g, "allocate the slot buffers", ENOMEM);
	c->ring_mr = lib.reg_mr(g->pd, c->ring, bytes,
				CCIB_ACCESS_LOCAL_WRITE | CCIB_ACCESS_REMOTE_WRITE);
	if (!c->ring_mr)
		return conn_setup_err(comm, peer, g, "register the receive slots", errno);
	c->stage_mr = lib.reg_mr(g->pd, c->stage, bytes, CCIB_ACCESS_LOCAL_WRITE);
	if (!c->stage_mr)
		return conn_setup_err(comm, peer, g, "register the staging slots", errno);
	c->cq = lib.create_cq(g->port.ctx, (int)(c->sq_depth + c->rq_depth), c, g->ch, 0);
	if (!c->cq)
		return conn_setup_err(comm, peer, g, "create a completion queue", errno);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	ia.cap.max_send_wr = c->sq_depth;
	ia.cap.max_recv_wr = c->rq_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.qp_type = CCIB_QPT_RC;
	c->qp = lib.create_qp(g->pd, &ia);
	if (!c->qp)
		return conn_setup_err(comm, peer, g, "create an RC queue pair", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = CCIB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)g->port.port;
	a.qp_access_flags = CCIB_ACCESS_LOCAL_WRITE | CCIB_ACCESS_REMOTE_WRITE;
	r = lib.modify_qp(c->qp, &a, CCIB_QP_STATE | CCIB_QP_PKEY_INDEX | CCIB_QP_PORT |
			  CCIB_QP_ACCESS_FLAGS);
	if (r)
		return conn_setup_err(comm, peer, g, "move the queue pair to INIT", r);
	r = post_recvs(c, c->rq_depth);
	if (r)
		return conn_setup_err(comm, peer, g, "post receive requests", r);
	ccom_random_bytes(&c->psn, sizeof(c->psn));
	c->psn &= 0xffffff;
	return 0;
}

static void card_fill(const struct ib_group *g, const struct ib_conn *c, struct ib_card *k)
{
	memset(k, 0, sizeof(*k));
	k->version = IB_WIRE_VERSION;
	k->qpn = c->qp->qp_num;
	k->psn = c->psn;
	k->nslots = c->nslots;
	k->slot_size = (uint32_t)c->slot;
	k->lid = g->port.attr.lid;
	k->mtu = (uint8_t)g->port.attr.active_mtu;
	k->link_layer = g->port.attr.link_layer;
	memcpy(k->gid, g->port.gid.raw, 16);
	k->ring_addr = (uintptr_t)c->ring;
	k->rkey = c->ring_mr->rkey;
}

/* RTR then RTS towards the peer described by @k. */
static int conn_connect(struct ccomComm *comm, struct ib_group *g, struct ib_conn *c,
			const struct ib_card *k)
{
	struct ccib_qp_attr a;
	char gs[64];
	int r;

	if (k->version != IB_WIRE_VERSION || k->nslots != c->nslots || k->slot_size != c->slot ||
	    k->link_layer != g->port.attr.link_layer) {
		ccom_set_last_error("net_ib: peer rank %d (host %s) runs an incompatible RDMA transport (wire version %u, %u slots of %u bytes, link layer %u; ours %u, %u of %zu, %u); use one libccom build and the same CCOM_IB_SLOTS and CCOM_IB_SLOT_SIZE on every rank, on one kind of network",
				    c->base.peer, peer_host(c), k->version, k->nslots, k->slot_size,
				    k->link_layer, IB_WIRE_VERSION, c->nslots, c->slot,
				    g->port.attr.link_layer);
		return -EBADE;
	}
	c->remote_ring = k->ring_addr;
	c->remote_rkey = k->rkey;
	c->last_progress_us = ccom_now_us();
	memset(&a, 0, sizeof(a));
	a.qp_state = CCIB_QPS_RTR;
	a.path_mtu = k->mtu < g->port.attr.active_mtu ? k->mtu : g->port.attr.active_mtu;
	if (a.path_mtu < CCIB_MTU_256 || a.path_mtu > CCIB_MTU_4096)
		a.path_mtu = CCIB_MTU_1024;
	a.dest_qp_num = k->qpn;
	a.rq_psn = k->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = IB_MIN_RNR_TIMER;
	a.ah_attr.port_num = (uint8_t)g->port.port;
	a.ah_attr.dlid = k->lid;
	if (g->port.attr.link_layer == CCIB_LINK_LAYER_ETHERNET || !k->lid) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, k->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)g->port.gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	r = lib.modify_qp(c->qp, &a, CCIB_QP_STATE | CCIB_QP_AV | CCIB_QP_PATH_MTU |
			  CCIB_QP_DEST_QPN | CCIB_QP_RQ_PSN | CCIB_QP_MAX_DEST_RD_ATOMIC |
			  CCIB_QP_MIN_RNR_TIMER);
	if (r) {
		inet_ntop(AF_INET6, k->gid, gs, sizeof(gs));
		ccom_set_last_error("net_ib: rank %d: cannot move QP %u to RTR towards peer rank %d (host %s, QP %u, LID %u, GID %s): %s; the hosts must reach each other on the RDMA network (check CCOM_IB_HCA and CCOM_IB_GID_INDEX)",
				    comm->rank, c->qp->qp_num, c->base.peer, peer_host(c), k->qpn,
				    k->lid, gs, strerror(r));
		return -r;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = CCIB_QPS_RTS;
	a.timeout = (uint8_t)ccom_param_int("CCOM_IB_TIMEOUT");
	a.retry_cnt = IB_RETRY_CNT;
	a.rnr_retry = IB_RNR_RETRY;
	a.sq_psn = c->psn;
	a.max_rd_atomic = 1;
	r = lib.modify_qp(c->qp, &a, CCIB_QP_STATE | CCIB_QP_TIMEOUT | CCIB_QP_RETRY_CNT |
			  CCIB_QP_RNR_RETRY | CCIB_QP_SQ_PSN | CCIB_QP_MAX_QP_RD_ATOMIC);
	if (r) {
		ccom_set_last_error("net_ib: rank %d: cannot move QP %u to RTS towards peer rank %d (host %s): %s; check the RDMA device (ibv_devinfo, dmesg)",
				    comm->rank, c->qp->qp_num, c->base.peer, peer_host(c), strerror(r));
		return -r;
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

/* Listen for liveness connections on the address of our bootstrap socket, port 0. */
static int live_listen(struct ccomComm *comm, union ccom_sockaddr *a, int *lfd)
{
	const struct sockaddr_in6 *b = &comm->peers[comm->rank].listen_addr;
	char as[96];
	int err;

	memset(a, 0, sizeof(*a));
	if (b->sin6_family == AF_INET) {
		memcpy(&a->sin, b, sizeof(a->sin));
		a->sin.sin_port = 0;
	} else if (b->sin6_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&b->sin6_addr)) {
		a->sin.sin_family = AF_INET;
		memcpy(&a->sin.sin_addr, &b->sin6_addr.s6_addr[12], 4);
	} else if (b->sin6_family == AF_INET6) {
		a->sin6 = *b;
		a->sin6.sin6_port = 0;
	} else {
		ccom_set_last_error("net_ib: rank %d has no bootstrap address (family %d) for its liveness listener",
				    comm->rank, b->sin6_family);
		return -EINVAL;
	}
	err = ccom_sock_listen(a, 1024, lfd);
	if (err)
		ccom_set_last_error("net_ib: rank %d cannot listen for liveness connections on %s: %s; check CCOM_SOCKET_IFNAME",
				    comm->rank, ccom_addr_str(a, as, sizeof(as)), strerror(-err));
	return err;
}

/*
 * One TCP connection per pair, from the higher rank, that carries no data:
 * the kernel closes it when a process dies, which RC verbs never report to
 * an idle receiver.  Connect never waits for the accept, so "connect all,
 * then accept all" cannot deadlock (as in net_socket).
 */
static int live_connect_all(struct ccomComm *comm, const int *peers, int npeers,
			    struct ccom_transport_conn **conns, const struct ib_card *cards, int lfd)
{
	int64_t tmo = comm->config.timeoutSec > 0 ? comm->config.timeoutSec :
		      ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT");
	int64_t deadline = ccom_now_us() + (tmo > 0 ? tmo : 300) * 1000000;
	struct ib_hello h = { .magic = comm->magic, .comm_hash = comm->comm_hash,
			      .rank = comm->rank };
	union ccom_sockaddr from;
	int i, fd, err, expected = 0;
	char as[96];

	for (i = 0; i < npeers; i++) {
		struct ib_conn *c = to_ib(conns[i]);

		if (peers[i] > comm->rank) {
			expected++;
			continue;
		}
		err = ccom_sock_connect(&cards[i].live, deadline, &comm->abort_flag, &fd);
		if (!err) {
			c->live_fd = fd;
			err = ccom_sock_setup(fd);
		}
		if (!err)
			err = ccom_sock_send_all(fd, &h, sizeof(h), deadline, &comm->abort_flag);
		if (err) {
			ccom_set_last_error("net_ib: rank %d cannot open its liveness connection to peer rank %d at %s: %s; check that the peer is alive and that CCOM_SOCKET_IFNAME selects an interface both hosts reach",
					    comm->rank, peers[i],
					    ccom_addr_str(&cards[i].live, as, sizeof(as)), strerror(-err));
			return err;
		}
	}
	while (expected > 0) {
		struct ib_hello in;
		int filed = 0;

		err = ccom_sock_accept(lfd, deadline, &comm->abort_flag, &fd, &from);
		if (err) {
			ccom_set_last_error("net_ib: rank %d %s waiting for %d liveness connection(s) from higher peer ranks: %s",
					    comm->rank, err == -ECANCELED ? "was aborted while" : "timed out",
					    expected, strerror(-err));
			return err;
		}
		if (!ccom_sock_setup(fd) &&
		    !ccom_sock_recv_all(fd, &in, sizeof(in), ccom_now_us() + IB_HELLO_TIMEOUT_US,
					&comm->abort_flag) &&
		    in.magic == comm->magic && in.comm_hash == comm->comm_hash)
			for (i = 0; i < npeers; i++)
				if (peers[i] == in.rank && in.rank > comm->rank &&
				    to_ib(conns[i])->live_fd < 0) {
					to_ib(conns[i])->live_fd = fd;
					filed = 1;
					expected--;
					break;
				}
		if (!filed) {
			ccom_warn("net_ib: dropped a connection from %s to the liveness port of rank %d: its hello does not match an expected peer; a foreign or stale process is connecting",
				  ccom_addr_str(&from, as, sizeof(as)), comm->rank);
			close(fd);
		}
	}
	return 0;
}

static int ib_setup(struct ccomComm *comm, const int *peers, int npeers,
		    struct ccom_transport_conn **conns)
{
	struct ib_card *mine = NULL, *cards = NULL;
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
	err = live_listen(comm, &live, &lfd);
	if (err)
		goto fail;
	for (i = 0; i < npeers; i++) {
		card_fill(g, to_ib(conns[i]), &mine[i]);
		mine[i].live = live;
	}
	err = exchange(comm, peers, npeers, IB_TAG_CARD, mine, sizeof(*mine), cards,
		       sizeof(*cards));
	if (!err)
		err = live_connect_all(comm, peers, npeers, conns, cards, lfd);
	for (i = 0; !err && i < npeers; i++)
		err = conn_connect(comm, g, to_ib(conns[i]), &cards[i]);
	/* Both sides in RTS before either writes. */
	if (!err)
		err = exchange(comm, peers, npeers, IB_TAG_READY, &ready[npeers], 0, ready,
			       sizeof(*ready));
	if (err)
		goto fail;
	inet_ntop(AF_INET6, g->port.gid.raw, gs, sizeof(gs));
	ccom_info(CCOM_SUBSYS_NET, "net_ib: rank %d connected to %d peer(s) on %s port %d (%s, GID %d %s %s, MTU %d), %u slots of %zu bytes per direction",
		  comm->rank, npeers, g->port.dev, g->port.port,
		  g->port.attr.link_layer == CCIB_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
		  g->port.gid_index, g->port.gid_kind, gs, 128 << g->port.attr.active_mtu,
		  p.nslots, p.slot);
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
	ib_teardown(comm, conns, npeers);
	return err;
}

const struct ccom_transport_ops ccom_transport_net_ib = {
	.name = "net_ib",
	.setup = ib_setup,
	.send = ib_send,
	.recv = ib_recv,
	.wait = ib_wait,
	.teardown = ib_teardown,
	.idle_passes = 4,
};
