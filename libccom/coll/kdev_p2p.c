// SPDX-License-Identifier: MIT
/*
 * p2p.c - grouped point-to-point Send/Recv between the ranks of one host
 * on the nccom engine: the schedule (coll/); the pair semaphores and
 * everything else that talks to /dev/nccom are transport/kdev/.
 *
 * coll/p2p.c first exchanges every transfer's size over the shm
 * transport (8-byte headers) and checks that matching sends and receives
 * agree; then each side decides per transfer, from the same (peer, size),
 * whether it runs here (ccom_tune_engine_p2p_wants()).  Matching follows NCCL:
 * the k-th send from A to B in a group meets the k-th receive of B from A,
 * so both sides number the engine transfers of each (pair, direction) in
 * group order.
 *
 * One transfer: the sender registers its buffer (registration cache) and
 * grants it to the receiver only (a dma-buf fd over the pair's Unix
 * socket, only if the receiver does not hold that registration yet); the
 * receiver's engine COPYs straight from the sender's user buffer into its
 * own (single copy), then SIGNALs a semaphore it owns for that sender; the
 * sender's queue holds a SEM_WAIT on that semaphore, so neither side
 * returns before the copy is done.  One semaphore per (receiver, sender)
 * pair, created by the receiver at the first transfer and granted with its
 * first packet; its value counts the pair's completed transfers, which
 * both sides know.
 *
 * Transfers go in rounds of up to P2P_BATCH per (peer, direction) (the
 * same rounds on both sides: they follow from the numbering).  A round:
 * register every buffer of the round; send each peer of the round one
 * packet (its sends' grants and votes, its receives' votes, the sizes, the
 * grants it may drop); receive each such peer's packet; emit the copies of
 * the receives (which wait on nothing), then the SIGNALs, then the
 * SEM_WAITs of the sends; complete.  Every rank sends before it receives
 * and copies before it waits, so no cycle of waits can form.  A transfer
 * one side could not register (both votes are in the packets) is left to
 * the shm path on both sides.
 *
 * Failures are the collectives' (sched.c): a dead peer is -ECONNRESET
 * naming it (closed socket while waiting for its packet, or -EPIPE on its
 * semaphore), abort and CCOM_OP_TIMEOUT are polled, and any error cancels
 * this rank's queue and semaphores so that its peers fail at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/algo.h"
#include "coll/channels.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/wait.h"
#include "reduce/reduce.h"
#include "transport/kdev/kdev.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/log.h"

#define P2P_MAGIC 0x6b703270u	/* "kp2p" */
#define P2P_BATCH 8		/* transfers per (peer, direction) and round */
#define P2P_MAX_DROPS 16


struct p2p_msg {
	uint32_t magic;
	int32_t rank;
	uint64_t seq;
	uint32_t nsend;		/* sender's transfers to the receiver in this round */
	uint32_t nrecv;		/* sender's receives from the receiver in this round */
	uint32_t has_sem;	/* the first fd is the sender's semaphore for the receiver */
	uint32_t ndrops;
	struct {
		uint64_t bytes;
		uint64_t id;	/* registration (grant) id, 0 when the vote is FAIL */
		uint64_t off;
		uint32_t ok;	/* registered */
		uint32_t has_fd;
	} send[P2P_BATCH];
	struct {
		uint64_t bytes;
		uint32_t ok;
		uint32_t pad;
	} recv[P2P_BATCH];
	uint64_t drops[P2P_MAX_DROPS];
};

/* One engine transfer of this round. */
struct p2p_xfer {
	int op;			/* index in the group */
	int l;			/* local peer */
	bool send;
	size_t bytes;
	struct ccom_kdev_req req;
	bool peer_ok;		/* the peer's vote for it */
	uint32_t src_h;		/* receive: the import of the sender's buffer */
	uint64_t src_off;
	bool mapped;		/* receive: copied by the CPU from the mapped grant */
};

/* Build and send my packet of this round to local peer @l. */
static int p2p_send_msg(struct ccom_kdev *kd, int l, struct p2p_xfer *x, int nx)
{
	struct ccom_kdev_p2p *p = kd->p2p;
	struct p2p_msg m = { .magic = P2P_MAGIC, .rank = kd->comm->rank, .seq = p->seq_out[l] };
	int fds[CCOM_KDEV_MAX_FDS], fdx[P2P_BATCH], nfds = 0, i, k, err = 0;

	if (!p->sem_sent[l] && p->sem[l]) {
		err = ccom_kdev_p2p_sem_export(kd, l, &fds[nfds]);
		if (err)
			return err;
		nfds++;
		m.has_sem = 1;
	}
	for (i = 0; i < nx && !err; i++) {
		struct ccom_kdev_reg *r = x[i].req.reg;

		if (x[i].l != l)
			continue;
		if (!x[i].send) {
			m.recv[m.nrecv].bytes = x[i].bytes;
			m.recv[m.nrecv++].ok = r != NULL;
			continue;
		}
		m.send[m.nsend].bytes = x[i].bytes;
		if (r) {
			m.send[m.nsend].ok = 1;
			m.send[m.nsend].id = r->id;
			m.send[m.nsend].off = (uintptr_t)x[i].req.addr - r->start;
			/* One grant per registration and peer, even if the round uses it twice. */
			for (k = 0; k < (int)m.nsend; k++)
				if (m.send[k].id == r->id && m.send[k].has_fd)
					break;
			if (!(r->peers_have & (1ull << l)) && k == (int)m.nsend) {
				fdx[m.nsend] = -1;
				err = ccom_kdev_grant_export(kd, r, &fdx[m.nsend]);
				if (err)
					break;
				m.send[m.nsend].has_fd = 1;
				fds[nfds++] = fdx[m.nsend];
			}
		}
		m.nsend++;
	}
	if (!err) {
		m.ndrops = (uint32_t)ccom_kdev_cache_take_drops(kd, l, m.drops, P2P_MAX_DROPS);
		err = ccom_kdev_sendmsg(kd, l, &m, sizeof(m), fds, nfds);
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (err)
		return err;
	p->seq_out[l]++;
	if (m.has_sem)
		p->sem_sent[l] = true;
	for (i = 0; i < nx; i++)
		if (x[i].l == l && x[i].send && x[i].req.reg)
			x[i].req.reg->peers_have |= 1ull << l;
	return 0;
}

/* The ranks posted different Send/Recv: a usage error (ccomInvalidUsage), as a collective mismatch. */
static int p2p_mismatch(struct ccom_kdev *kd, int l, const char *what)
{
	ccom_set_last_error("kdev: rank %d: Send/Recv packet from peer rank %d %s; both ranks must post matching ccomSend/ccomRecv in the same order",
			    kd->comm->rank, kd->comm->local_to_rank[l], what);
	return -EBADE;
}

/* The peer sent what no honest libccom sends: its fault (ccomRemoteError). */
static int p2p_bad(struct ccom_kdev *kd, int l, const char *what)
{
	ccom_set_last_error("kdev: rank %d: Send/Recv packet from peer rank %d %s: that peer's libccom is broken or not ccom's; check that every rank runs the same libccom",
			    kd->comm->rank, kd->comm->local_to_rank[l], what);
	return -EBADMSG;
}

/* Receive local peer @l's packet of this round; match it against my transfers. */
static int p2p_recv_msg(struct ccom_kdev *kd, int l, struct p2p_xfer *x, int nx)
{
	struct ccom_kdev_p2p *p = kd->p2p;
	struct p2p_msg m;
	int fds[CCOM_KDEV_MAX_FDS], nfds = 0, used = 0, ns = 0, nr = 0, i, err;

	err = ccom_kdev_recvmsg(kd, l, &m, sizeof(m), fds, CCOM_KDEV_MAX_FDS, &nfds);
	if (err)
		return err;
	if (m.magic != P2P_MAGIC || m.rank != kd->comm->local_to_rank[l] ||
	    m.seq != p->seq_in[l])
		err = p2p_mismatch(kd, l, "is out of sequence (another operation's packet, or a missing ccomSend/ccomRecv)");
	else if (m.nsend > P2P_BATCH || m.nrecv > P2P_BATCH || m.ndrops > P2P_MAX_DROPS)
		err = p2p_bad(kd, l, "is malformed");
	if (!err)
		ccom_kdev_grant_drop(kd, l, m.drops, (int)m.ndrops);
	if (!err && m.has_sem) {
		struct nccom_sem_import im = { .size = sizeof(im), .fd = nfds > 0 ? fds[used++] : -1 };

		err = im.fd < 0 ? p2p_bad(kd, l, "announced a semaphore without its fd") :
				  ccom_kdev_ioctl(kd, NCCOM_IOC_SEM_IMPORT, &im);
		if (!err && p->peer_sem[l]) {
			struct nccom_destroy d = { .size = sizeof(d), .handle = p->peer_sem[l] };

			ccom_kdev_ioctl(kd, NCCOM_IOC_DESTROY, &d);
		}
		if (!err)
			p->peer_sem[l] = im.out_handle;
		else if (err != -EPROTO)
			ccom_set_last_error("kdev: rank %d: SEM_IMPORT of peer rank %d's semaphore failed: %s",
					    kd->comm->rank, kd->comm->local_to_rank[l], strerror(-err));
	}
	/* The peer's sends are my receives (in order), its receives my sends. */
	for (i = 0; !err && i < nx; i++) {
		if (x[i].l != l)
			continue;
		if (x[i].send) {
			if (nr >= (int)m.nrecv || m.recv[nr].bytes != x[i].bytes) {
				err = p2p_mismatch(kd, l, "does not match this rank's sends to it");
				break;
			}
			x[i].peer_ok = m.recv[nr++].ok;
			continue;
		}
		if (ns >= (int)m.nsend || m.send[ns].bytes != x[i].bytes) {
			err = p2p_mismatch(kd, l, "does not match this rank's receives from it");
			break;
		}
		x[i].peer_ok = m.send[ns].ok;
		/* Import every grant sent, used or not: the peer now counts it as held. */
		if (m.send[ns].has_fd && used >= nfds)
			err = p2p_bad(kd, l, "announced a grant without its fd");
		else if (m.send[ns].ok)
			err = ccom_kdev_grant_import(kd, l, m.send[ns].id,
						     m.send[ns].has_fd ? fds[used++] : -1,
						     &x[i].src_h);
		x[i].src_off = m.send[ns].off;
		ns++;
	}
	if (!err && (ns != (int)m.nsend || nr != (int)m.nrecv))
		err = p2p_mismatch(kd, l, "carries more transfers than this rank posted with it");
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (!err)
		p->seq_in[l]++;
	return err;
}

/*
 * CCOM_KDEV_MAP=1: the receiver copies out of the sender's mapped grant
 * itself (single copy on the CPU, no descriptor) when the import is
 * mapped over the transfer; the SIGNAL that follows is the same, so the
 * sender cannot tell the two apart.  True if it copied.  Only when
 * forced: under auto (the default) nothing has measured this path for
 * Send/Recv, so the engine copies.
 */
static bool p2p_mapped_copy(struct ccom_kdev *kd, struct p2p_xfer *x, int *err)
{
	struct ccom_wait w;
	const char *src;

	if (!kd->map || kd->map_mode != 1 || !x->bytes)
		return false;
	src = ccom_kdev_grant_cpu(kd, x->l, x->src_h, x->src_off, x->bytes);
	if (!src)
		return false;
	x->mapped = true;
	*err = ccom_ch_copy_mapped(kd->comm->coll->channels, (void *)x->req.addr, src, x->bytes,
				   x->bytes >= CCOM_STREAM_COPY_MIN);
	if (*err == -EFAULT) {
		/* The sender aborted, died or freed its buffer under the copy. */
		ccom_wait_begin(&w, kd->comm);
		*err = ccom_kdev_grant_revoked(kd, &w, kd->comm->local_to_rank[x->l], "Send/Recv");
		ccom_wait_end(&w);
	}
	return true;
}

/* Register, exchange, copy, wait: one round.  @x is sorted by op index. */
static int p2p_round(struct ccom_kdev *kd, struct p2p_xfer *x, int nx, bool *done)
{
	struct ccom_kdev_p2p *p = kd->p2p;
	struct ccomComm *comm = kd->comm;
	uint64_t *sig = calloc((size_t)kd->nlocal, sizeof(*sig));
	uint64_t *wait = calloc((size_t)kd->nlocal, sizeof(*wait));
	bool *peer = calloc((size_t)kd->nlocal, sizeof(*peer));
	struct ccom_kdev_req *reqs = calloc((size_t)nx, sizeof(*reqs));
	int i, l, err = 0;

	if (!sig || !wait || !peer || !reqs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nx; i++) {
		reqs[i] = x[i].req;
		peer[x[i].l] = true;
		if (!x[i].send && !err)
			err = ccom_kdev_p2p_sem_get(kd, x[i].l);
	}
	ccom_kdev_cache_release(kd);
	if (!err)
		err = ccom_kdev_cache_get_each(kd, reqs, nx);
	for (i = 0; i < nx; i++)
		x[i].req.reg = reqs[i].reg;
	for (l = 0; !err && l < kd->nlocal; l++)
		if (peer[l])
			err = p2p_send_msg(kd, l, x, nx);
	for (l = 0; !err && l < kd->nlocal; l++)
		if (peer[l])
			err = p2p_recv_msg(kd, l, x, nx);
	/* Copies first (they wait on nothing), then signals, then the senders' waits. */
	for (i = 0; !err && i < nx; i++) {
		if (x[i].send || !x[i].req.reg || !x[i].peer_ok)
			continue;
		if (!p2p_mapped_copy(kd, &x[i], &err))
			err = ccom_kdev_emit_copy(kd, x[i].req.reg->handle,
						  (uintptr_t)x[i].req.addr - x[i].req.reg->start,
						  x[i].src_h, x[i].src_off, x[i].bytes, x[i].l);
		sig[x[i].l]++;
	}
	/* The signals below publish what the CPU copied with streaming stores. */
	ccom_copy_stream_fence();
	for (i = 0; !err && i < nx; i++)
		if (x[i].send && x[i].req.reg && x[i].peer_ok)
			wait[x[i].l]++;
	for (l = 0; !err && l < kd->nlocal; l++) {
		if (!sig[l])
			continue;
		err = ccom_kdev_emit_sem(kd, NCCOM_OP_SEM_SIGNAL, p->sem[l], p->rx[l] + sig[l],
					 CCOM_KDEV_NO_PEER);
		if (!err)
			p->rx[l] += sig[l];
	}
	for (l = 0; !err && l < kd->nlocal; l++) {
		if (!wait[l])
			continue;
		if (!p->peer_sem[l]) {
			err = p2p_bad(kd, l, "never granted the semaphore of its receptions");
			break;
		}
		err = ccom_kdev_emit_sem(kd, NCCOM_OP_SEM_WAIT, p->peer_sem[l], p->tx[l] + wait[l], l);
		if (!err)
			p->tx[l] += wait[l];
	}
	if (!err)
		err = ccom_kdev_complete(kd);
	for (i = 0; !err && i < nx; i++) {
		if (!x[i].req.reg || !x[i].peer_ok)
			continue;
		done[x[i].op] = true;
		ccom_trace(CCOM_SUBSYS_KDEV, "kdev: p2p %s rank %d %zu bytes %s",
			   x[i].send ? "send to" : "recv from", comm->local_to_rank[x[i].l],
			   x[i].bytes, x[i].mapped ? "from the mapped grant" : "on the engine");
	}
	for (i = 0; !err && i < nx; i++)
		if (!done[x[i].op])
			ccom_info(CCOM_SUBSYS_KDEV, "kdev: rank %d: a %zu-byte %s rank %d runs on shm: %s could not register its buffer",
				  comm->rank, x[i].bytes, x[i].send ? "send to" : "receive from",
				  comm->local_to_rank[x[i].l],
				  x[i].req.reg ? "the peer" : "this rank");
out:
	if (!err)
		ccom_clear_last_error();	/* a registration that fell back to shm */
	free(sig);
	free(wait);
	free(peer);
	free(reqs);
	return err;
}

int ccom_kdev_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops, bool *done)
{
	struct ccom_kdev *kd = comm->kdev;
	int *idx = NULL, *cnt_s = NULL, *cnt_r = NULL;
	struct p2p_xfer *x = NULL;
	int i, n = 0, round, more, err = 0;

	if (!kd)
		return 0;
	for (i = 0; i < nops; i++)
		if (ccom_tune_engine_p2p_wants(comm, ops[i].root,
					ops[i].count * ccom_dtype_size(ops[i].dtype)))
			n++;
	if (!n)
		return 0;
	if (kd->dead) {
		ccom_set_last_error("rank %d: the kdev queue was cancelled by an earlier failure",
				    comm->rank);
		return -EIO;
	}
	idx = calloc((size_t)nops, sizeof(*idx));
	cnt_s = calloc((size_t)kd->nlocal, sizeof(*cnt_s));
	cnt_r = calloc((size_t)kd->nlocal, sizeof(*cnt_r));
	x = calloc((size_t)n, sizeof(*x));
	if (!idx || !cnt_s || !cnt_r || !x) {
		err = -ENOMEM;
		goto out;
	}
	/* Number each engine transfer within its (peer, direction), in group order. */
	for (i = 0; i < nops; i++) {
		size_t bytes = ops[i].count * ccom_dtype_size(ops[i].dtype);
		int l;

		idx[i] = -1;
		if (!ccom_tune_engine_p2p_wants(comm, ops[i].root, bytes))
			continue;
		l = comm->rank_to_local[ops[i].root];
		idx[i] = ops[i].kind == CCOM_COLL_SEND ? cnt_s[l]++ : cnt_r[l]++;
	}
	for (round = 0, more = 1; more && !err; round++) {
		int nx = 0;

		more = 0;
		for (i = 0; i < nops; i++) {
			bool send = ops[i].kind == CCOM_COLL_SEND;
			size_t bytes = ops[i].count * ccom_dtype_size(ops[i].dtype);

			if (idx[i] < 0 || idx[i] / P2P_BATCH < round)
				continue;
			if (idx[i] / P2P_BATCH > round) {
				more = 1;
				continue;
			}
			x[nx++] = (struct p2p_xfer){
				.op = i, .l = comm->rank_to_local[ops[i].root], .send = send,
				.bytes = bytes,
				.req = { send ? ops[i].sendbuff : ops[i].recvbuff, bytes,
					 send ? NCCOM_MEM_READ : NCCOM_MEM_READ | NCCOM_MEM_WRITE,
					 NULL } };
		}
		if (nx)
			err = p2p_round(kd, x, nx, done);
	}
out:
	free(idx);
	free(cnt_s);
	free(cnt_r);
	free(x);
	/* Cancel queue and semaphores: peers waiting on this rank fail at once. */
	return err ? ccom_kdev_fail(kd, err) : 0;
}
