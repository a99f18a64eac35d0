// SPDX-License-Identifier: MIT
/*
 * net_ib.c - the RDMA verbs transport between hosts (InfiniBand, RoCE,
 * soft-RoCE), behind the same vtable as net_socket (proxy/conn.h): its
 * data path (send, recv, wait) and the vtable.  Setup and teardown are in
 * net_ib_conn.c, the verbs library and the choice of device in
 * net_ib_verbs.c; net_ib_private.h is what the three share.
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
 * Nothing the peer's completions say is trusted: a byte count beyond the
 * slot, a write into a slot not credited, or a credit for slots never
 * sent fails that conn with -EBADMSG and a sentence naming the peer
 * (proto_fail()), never the process.
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
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "core/comm.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "transport/net_ib.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define IB_CREDIT_BIT 0x80000000u
#define IB_WR_DATA 1
#define IB_WR_CREDIT 2
#define IB_WR_PROBE 3
/* A conn without progress this long while a transfer waits gets a liveness probe. */
#define IB_PROBE_IDLE_US 1000000
#define IB_POLL_BATCH 16
/* A peer's liveness socket hung up this long ago and still no progress: it is gone. */
#define IB_GONE_GRACE_US 200000

/* ---------------------------------------------------------------- the data path */

static uint64_t zc_total;	/* bytes every conn of the process sent zero-copy */

static bool status_remote(int s)
{
	return s == CCIB_WC_WR_FLUSH_ERR || (s >= 7 && s <= 13 && s != 8) || s == 15 ||
	       s == CCIB_WC_REM_ABORT_ERR || s == CCIB_WC_RESP_TIMEOUT_ERR;
}

static int wc_fail(struct ib_conn *c, const struct ccib_wc *wc)
{
	uint32_t qpn = wc->qp_num ? wc->qp_num : c->qp->qp_num;

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
		ccom_proxy_note_failed(c->comm, c->base.peer);
		c->err = -ECONNRESET;
		return c->err;
	}
	ccom_set_last_error("net_ib: work completion error on QP %u to peer rank %d (host %s): %s (status %d, vendor error 0x%x, on a %s); %s",
			    qpn, c->base.peer, peer_host(c),
			    ccom_ibv.wc_status_str(wc->status), wc->status, wc->vendor_err,
			    wc->opcode & 0x80 ? "receive" : "RDMA write",
			    remote ? "that rank died, aborted or lost its RDMA port or network" :
			    "a local RDMA error: check the device (ibv_devinfo, dmesg) and the locked-memory limit (ulimit -l)");
	/* Retries exhausted: is its whole host silent?  Then name the host's ranks instead. */
	if (remote)
		ccom_live_confirm(c->comm, false);
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

int ccom_ib_post_recvs(struct ib_conn *c, uint32_t q, uint32_t n)
{
	struct ccib_recv_wr wr[IB_POLL_BATCH], *bad = NULL;
	struct ccib_qp *qp = c->qps[q];
	uint32_t i, k;
	int r;

	while (n) {
		k = n < IB_POLL_BATCH ? n : IB_POLL_BATCH;
		for (i = 0; i < k; i++)
			wr[i] = (struct ccib_recv_wr){ .wr_id = 0, .next = i + 1 < k ? &wr[i + 1] : NULL };
		r = qp->context->ops.post_recv(qp, wr, &bad);
		if (r)
			return r;
		n -= k;
	}
	return 0;
}

static int post_write(struct ib_conn *c, uint32_t q, uint64_t wr_id, uint32_t imm,
		      const void *addr, uint32_t len, uint32_t lkey, uint64_t remote)
{
	struct ccib_qp *qp = c->qps[q];
	struct ccib_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
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
	return qp->context->ops.post_send(qp, &wr, &bad);
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

	if (c->dead || c->probe_out || c->sq_out[0] >= c->sq_depth)
		return;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = IB_WR_PROBE;
	wr.opcode = CCIB_WR_RDMA_WRITE;
	wr.send_flags = CCIB_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = c->remote_ring;
	wr.wr.rdma.rkey = c->remote_rkey;
	if (c->qp->context->ops.post_send(c->qp, &wr, &bad) == 0) {
		c->probe_out = true;
		c->sq_out[0]++;
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: rank %d: liveness probe on QP %u to peer rank %d",
			   c->comm->rank, c->qp->qp_num, c->base.peer);
	}
}

/* Return the slots read since the last credit (if the send queue has room). */
static int flush_credits(struct ib_conn *c, bool force)
{
	uint64_t pending = c->rx_head - c->rx_credited;
	int r;

	if (!pending || c->sq_out[0] >= c->sq_depth)
		return 0;
	if (!force && pending < c->nslots / 4 && c->rx_head != c->rx_arrived)
		return 0;
	r = post_write(c, 0, IB_WR_CREDIT, IB_CREDIT_BIT | (uint32_t)pending, NULL, 0, 0,
		       c->remote_ring);
	if (r)
		return conn_fail(c, "posting a credit", r);
	c->sq_out[0]++;
	c->rx_credited += pending;
	return 0;
}

/* Which of @c's QPs is @qpn (0 if none: a single-QP conn reports 0 on some providers). */
static uint32_t qp_index(const struct ib_conn *c, uint32_t qpn)
{
	uint32_t q;

	for (q = 0; q < c->nqps; q++)
		if (c->qps[q]->qp_num == qpn)
			return q;
	return 0;
}

/*
 * The first slot not yet done, when QP q has done @per_q[q] of its slots
 * q, q + nqps, q + 2 nqps, ...: slot s is done iff per_q[s % nqps] > s / nqps.
 */
static uint64_t striped_prefix(const struct ib_conn *c, const uint64_t *per_q)
{
	uint64_t m = UINT64_MAX, v;
	uint32_t q;

	for (q = 0; q < c->nqps; q++) {
		v = per_q[q] * c->nqps + q;
		if (v < m)
			m = v;
	}
	return m;
}

/*
 * The peer broke the slot protocol (a byte count, credit or slot number
 * no ccom sender produces): a corrupted or hostile peer.  Only this conn
 * fails, -EBADMSG (ccomRemoteError), and the peer counts as failed; no
 * byte of what it claimed is used.
 */
static int proto_fail(struct ib_conn *c, uint32_t q, const char *what,
		      unsigned long long got, unsigned long long limit)
{
	if (c->dead)
		return c->err;
	c->dead = true;
	c->err = -EBADMSG;
	ccom_proxy_note_failed(c->comm, c->base.peer);
	ccom_set_last_error("net_ib: rank %d: peer rank %d (host %s) broke the slot protocol on QP %u: %s %llu, at most %llu; that peer runs a corrupted or foreign transport, and its connection is closed",
			    c->comm->rank, c->base.peer, peer_host(c), c->qps[q]->qp_num, what,
			    got, limit);
	return c->err;
}

/*
 * A credit of @n slots: never more than were posted (the peer can only
 * return slots it read), else tx_room()'s differences would wrap.
 */
static int take_credit(struct ib_conn *c, uint32_t n)
{
	if (n > c->tx_posted - c->tx_credit)
		return proto_fail(c, 0, "a credit of slots never sent:", n,
				  (unsigned long long)(c->tx_posted - c->tx_credit));
	c->tx_credit += n;
	return 0;
}

/*
 * A data write of @imm bytes arrived in slot number @slot (of the stream)
 * on QP @q: it must fit a slot (ib_recv() copies that many bytes from it)
 * and the slot must be one we credited (a sender holds at most nslots not
 * credited back, so an unread slot is never written again).
 */
static int check_arrival(struct ib_conn *c, uint32_t q, uint64_t slot, uint32_t imm)
{
	if (!imm || imm > c->slot)
		return proto_fail(c, q, "a write whose byte count (immediate) is", imm, c->slot);
	if (slot >= c->rx_head + c->nslots)
		return proto_fail(c, q, "a write into an unread slot: slot number", slot,
				  (unsigned long long)(c->rx_head + c->nslots - 1));
	return 0;
}

/* Reap completions of @c; returns how many, or -errno. */
int ccom_ib_poll_conn(struct ib_conn *c)
{
	struct ccib_wc wc[IB_POLL_BATCH];
	uint32_t recvs[IB_MAX_QPS] = { 0 }, q;
	bool tx = false, rx = false;
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
			q = c->nqps > 1 ? qp_index(c, wc[i].qp_num) : 0;
			if (wc[i].opcode == CCIB_WC_RECV_RDMA_WITH_IMM) {
				uint32_t imm = ntohl(wc[i].imm_data);

				recvs[q]++;
				if (imm & IB_CREDIT_BIT) {
					int r = take_credit(c, imm & ~IB_CREDIT_BIT);

					if (r)
						return r;
				} else {
					uint64_t slot = c->rx_arrived_q[q] * c->nqps + q;
					int r = check_arrival(c, q, slot, imm);

					if (r)
						return r;
					c->rx_arrived_q[q]++;
					c->rx_len[slot % c->nslots] = imm;
					rx = true;
				}
			} else {
				c->sq_out[q]--;
				if (wc[i].wr_id == IB_WR_DATA) {
					c->tx_done_q[q]++;
					tx = true;
				} else if (wc[i].wr_id == IB_WR_PROBE) {
					c->probe_out = false;
				}
			}
		}
		total += n;
	} while (n == IB_POLL_BATCH);
	if (rx)
		c->rx_arrived = c->nqps > 1 ? striped_prefix(c, c->rx_arrived_q) : c->rx_arrived_q[0];
	if (tx) {
		uint64_t done = c->nqps > 1 ? striped_prefix(c, c->tx_done_q) : c->tx_done_q[0];

		if (done > c->tx_posted)
			done = c->tx_posted;
		for (; c->tx_done < done; c->tx_done++) {
			uint32_t slot = (uint32_t)(c->tx_done % c->nslots);

			c->zc_done += c->zc_len[slot];
			c->zc_len[slot] = 0;
		}
	}
	if (total)
		c->last_progress_us = ccom_now_us();
	for (q = 0; q < c->nqps; q++) {
		int r = recvs[q] ? ccom_ib_post_recvs(c, q, recvs[q]) : 0;

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
	if (c->note_culprit == c->base.peer) {
		/* Its own rank in the note: it ended the comm itself, nobody died. */
		ccom_set_last_error("net_ib: peer rank %d (host %s) revoked the communicator (ccomCommRevoke, or an error of its own such as a collective mismatch: its log says which); this operation cannot complete",
				    c->base.peer, peer_host(c));
		return c->err;
	}
	if (c->note_culprit >= 0) {
		ccom_proxy_note_failed(c->comm, c->note_culprit);
		ccom_set_last_error("net_ib: peer rank %d (host %s) revoked the communicator because rank %d failed; rank %d died, aborted or lost its network",
				    c->base.peer, peer_host(c), c->note_culprit, c->note_culprit);
		return c->err;
	}
	ccom_proxy_note_failed(c->comm, c->base.peer);
	ccom_set_last_error("net_ib: peer rank %d (host %s) is gone (its liveness connection closed) while QP %u still waits for it; that rank died, aborted or lost its network",
			    c->base.peer, peer_host(c), c->qp->qp_num);
	return c->err;
}

/*
 * The transfer loops check abort only once they idle, and a large
 * transfer over net_ib rarely idles long (each ->wait() returns with
 * progress): so every data call checks the flag itself, and an abort
 * ends a transfer that is still moving data (256 MiB on soft-RoCE would
 * otherwise run for minutes).
 */
static int check_abort(const struct ib_conn *c)
{
	if (!ccom_comm_aborted(c->comm))
		return 0;
	ccom_set_last_error("rank %d: the communicator %s", c->comm->rank,
			    ccom_comm_stop_reason(c->comm));
	return -ECANCELED;
}

/* May slot number tx_posted be written now? */
static bool tx_room(const struct ib_conn *c)
{
	uint64_t s = c->tx_posted;

	return s - c->tx_credit < c->nslots && s - c->tx_done < c->nslots &&
	       c->sq_out[s % c->nqps] < c->sq_depth;
}

/* Post one slot of @n bytes from @src (lkey @lkey); @zc: from the caller's buffer. */
static int tx_post(struct ib_conn *c, const char *src, size_t n, uint32_t lkey, bool zc)
{
	uint64_t s = c->tx_posted;
	uint32_t q = (uint32_t)(s % c->nqps);
	int r;

	r = post_write(c, q, IB_WR_DATA, (uint32_t)n, src, (uint32_t)n, lkey,
		       c->remote_ring + (s % c->nslots) * c->slot);
	if (r)
		return conn_fail(c, "posting an RDMA write", r);
	c->zc_len[s % c->nslots] = zc ? (uint32_t)n : 0;
	c->sq_out[q]++;
	c->tx_posted++;
	return 0;
}

/*
 * The zero-copy send: the region [zc_buf, zc_buf + size) is written from
 * the caller's buffer, and bytes count as taken only once their writes
 * completed (the rule of net_ib_mr.c).  The caller calls again with the
 * same region advanced by what we returned, as the transfer loops do; the
 * registration is dropped when a call's whole request completed (the
 * caller's transfer is over: the buffer is the user's again) or the
 * registered range is used up.
 */
static ssize_t zc_send(struct ib_conn *c, const char *buf, size_t size)
{
	uintptr_t end = (uintptr_t)buf + size;
	size_t taken;
	int r;

	if (buf != c->zc_buf || size < c->zc_posted) {
		c->dead = true;
		c->err = -EPROTO;
		ccom_set_last_error("net_ib: rank %d: a send to peer rank %d resumed at %p (%zu bytes) while %zu bytes from %p are in flight; the transfer loop broke the stream contract (a libccom bug)",
				    c->comm->rank, c->base.peer, (const void *)buf, size, c->zc_posted,
				    (const void *)c->zc_buf);
		return c->err;
	}
	if (end > c->zc_reg_end)
		end = c->zc_reg_end;
	while (c->zc_buf + c->zc_posted < (const char *)end && tx_room(c)) {
		size_t left = (size_t)((const char *)end - (c->zc_buf + c->zc_posted));
		size_t n = left < c->slot ? left : c->slot;

		r = tx_post(c, c->zc_buf + c->zc_posted, n, ccom_ib_reg_lkey(c->zc_reg), true);
		if (r)
			return r;
		c->zc_posted += n;
	}
	taken = c->zc_done;
	c->zc_buf += taken;
	c->zc_posted -= taken;
	c->zc_done = 0;
	c->zc_bytes += taken;
	__atomic_fetch_add(&zc_total, taken, __ATOMIC_RELAXED);
	/* The caller's request is done (or the range is): the buffer is its own again. */
	if (!c->zc_posted && (taken == size || (uintptr_t)c->zc_buf >= c->zc_reg_end)) {
		ccom_ib_reg_put(c->g, c->zc_reg);
		c->zc_reg = NULL;
	}
	if (taken)
		c->g->idle_since = 0;
	else if (size)
		return check_gone(c);
	return (ssize_t)taken;
}

static ssize_t ib_send(struct ccom_transport_conn *conn, const void *buf, size_t size)
{
	struct ib_conn *c = to_ib(conn);
	size_t done = 0;
	int r;

	r = check_abort(c);
	if (!r)
		r = ccom_ib_poll_conn(c);
	if (r < 0)
		return r;
	if (c->zc_reg && !c->zc_posted && buf != c->zc_buf) {
		/* Nothing in flight and a new region: the last one ended with the caller's op. */
		ccom_ib_reg_put(c->g, c->zc_reg);
		c->zc_reg = NULL;
	}
	if (c->zc_reg)
		return zc_send(c, buf, size);
	if (size >= c->slot || (c->zc_min && size >= c->zc_min)) {
		/*
		 * From a ccomCommRegister range: zero copy from one slot up.
		 * Else from CCOM_IB_ZCOPY_MIN up, a window of 2 x the ring at a
		 * time: bounded pinning, no long syscall.
		 */
		size_t win = !c->zc_min || size < c->zc_min ? 0 :
			     size < 2 * c->nslots * c->slot ? size : 2 * c->nslots * c->slot;

		c->zc_reg = ccom_ib_reg_get(c->g, buf, size, win);
		if (c->zc_reg) {
			c->zc_buf = buf;
			c->zc_reg_end = ccom_ib_reg_end(c->zc_reg);
			c->zc_posted = 0;
			c->zc_done = 0;
			return zc_send(c, buf, size);
		}
	}
	while (done < size && tx_room(c)) {
		uint64_t s = c->tx_posted;
		size_t n = size - done < c->slot ? size - done : c->slot;
		char *dst = c->stage + (s % c->nslots) * c->slot;

		memcpy(dst, (const char *)buf + done, n);
		r = tx_post(c, dst, n, c->stage_mr->lkey, false);
		if (r)
			return r;
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

	r = check_abort(c);
	if (!r)
		r = ccom_ib_poll_conn(c);
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

/*
 * The liveness sockets carry one message only: a revoke note (ib_revoke()),
 * the root cause as the peer knows it (its own rank: it revoked).
 */
#define IB_NOTE_MAGIC 0x52424943u	/* "CIBR" */
struct ib_note {
	uint32_t magic;
	int32_t culprit;
};

/*
 * The conn whose liveness socket is @fd: its peer closed it (exit, death)
 * or revoked the comm (a note, then shutdown): gone at once, no grace.
 */
static void mark_gone(struct ib_group *g, int fd)
{
	struct ib_note note;
	ssize_t r;
	int i;

	for (i = 0; i < g->nconns; i++) {
		struct ib_conn *c = g->conns[i];

		if (c->live_fd != fd || c->peer_gone_us)
			continue;
		r = recv(fd, &note, sizeof(note), MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		c->peer_gone_us = ccom_now_us();
		if (r == (ssize_t)sizeof(note) && note.magic == IB_NOTE_MAGIC && note.culprit >= 0 &&
		    note.culprit < c->comm->nranks && note.culprit != c->comm->rank) {
			c->note_culprit = note.culprit;
			c->peer_gone_us -= IB_GONE_GRACE_US;
		}
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: rank %d: peer rank %d %s its liveness connection",
			   c->comm->rank, c->base.peer, c->note_culprit >= 0 ? "revoked on" : "closed");
	}
}

/*
 * ccomCommRevoke() from any thread: a note naming the root cause (or this
 * rank: a revoke, not a death) on the liveness socket, then shut it down,
 * so the peer's waits end at once instead of at CCOM_OP_TIMEOUT (RC tells
 * a receiver nothing).  The fd stays open until teardown.
 */
static void ib_revoke(struct ccomComm *comm, struct ccom_transport_conn *conn)
{
	struct ib_conn *c = to_ib(conn);
	struct ib_note note = { .magic = IB_NOTE_MAGIC };
	int first = ccom_proxy_first_failed(comm);

	if (c->live_fd < 0)
		return;
	note.culprit = first >= 0 ? first : comm->rank;
	if (send(c->live_fd, &note, sizeof(note), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		ccom_trace(CCOM_SUBSYS_NET, "net_ib: no revoke note to rank %d: %s", c->base.peer,
			   strerror(errno));
	shutdown(c->live_fd, SHUT_RDWR);
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
		r = ccom_ib_poll_conn(g->conns[i]);
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
		r = ccom_ib_poll_conn(g->conns[i]);
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
	while (ccom_ibv.get_cq_event(g->ch, &ecq, &ectx) == 0)
		ccom_ibv.ack_cq_events(ecq, 1);
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

uint64_t ccom_net_ib_zcopy_bytes(void)
{
	return __atomic_load_n(&zc_total, __ATOMIC_RELAXED);
}

const struct ccom_transport_ops ccom_transport_net_ib = {
	.name = "net_ib",
	.setup = ccom_ib_setup,
	.send = ib_send,
	.recv = ib_recv,
	.wait = ib_wait,
	.teardown = ccom_ib_teardown,
	.revoke = ib_revoke,
	.idle_passes = 4,
};
