// SPDX-License-Identifier: MIT
/*
 * cma_p2p.c - Send/Recv on the CMA path (coll/ room): a message of
 * CCOM_CMA_P2P_MIN_BYTES or more between two ranks of one host moves with
 * one process_vm_readv, from the sender's buffer straight into the
 * receiver's, instead of through the shared-memory FIFO (two copies).
 *
 * The sender chooses, alone (the receiver may not know the sender yet: a
 * ccomRecvAny), and says so in the p2p header it sends anyway (coll/p2p.h:
 * @path CCOM_P2P_PATH_CMA and the buffer's address); no data follows on
 * the stream.  The receiver checks the header, reads, and sends back an
 * acknowledgement (struct cma_p2p_ack, with the read's status) on its own
 * stream to the sender after the group's other data, so the sender, which
 * waits for it after its own data, returns only when its buffer is no
 * longer read, and fails (naming the cause) when the read failed.  A
 * receiver that refuses the header answers with its reason instead
 * (ccom_cma_p2p_refuse()): the sender then fails with a sentence naming
 * it, not only with the host segment's "peer failed" mark.  Both
 * streams stay in order: the acknowledgement is the next thing the sender
 * reads from that peer, before any later operation looks at the stream
 * (an any-source receive included).
 *
 * The path exists only where the collectives' CMA path is on (coll/cma.c:
 * one host, every rank may read every peer, agreed at init), so a sender
 * never picks it towards a rank that could not read it.  CCOM_CMA=1 takes
 * it for every such send; auto races the two paths per power of two of
 * the size (tune/race.c, whatever the peer: every peer is on this host),
 * on groups that hold one send to a peer, timed by the sender alone from
 * its header to the acknowledgement: turns of consecutive sends per path,
 * the first of each turn dropped, medians, the faster kept and measured
 * again when it runs clearly slower than its price.  The sender decides
 * alone, so nothing is agreed.  Why not the first method (3 sends per path
 * alternating, the best of each): it is the one the collectives dropped
 * after it kept the staged path where CMA ran faster, each CMA trial
 * following a stream one (tune/race.c says more).  Verdicts are cached per
 * boot in a file of this local rank's own (tune/cma_cache.c: "-sendL"
 * after the collectives' name), so no two ranks of a communicator write
 * one file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "coll/cma.h"
#include "coll/coll.h"
#include "coll/p2p.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "tune/cma_cache.h"
#include "util/err.h"
#include "util/log.h"

#define CMA_P2P_MAX_ERRNO 4095

/*
 * The receiver's word to the sender of a CMA message: its buffer is free,
 * and whether it was read.  A receive that refuses the header (another
 * size, a field it cannot take) answers too, so its sender fails naming
 * the reason (and with ccomInvalidArgument for another size), not only
 * with "peer failed" once that rank's op broke the comm.
 */
struct cma_p2p_ack {
	uint32_t magic;			/* CCOM_CMA_P2P_ACK_MAGIC (coll/p2p.h) */
	int32_t from;			/* the receiver's rank */
	uint64_t seq;			/* the @seq of the send's header */
	int32_t status;			/* 0, or the errno of the read or refusal */
	uint32_t why;			/* CMA_P2P_READ, _REFUSED or _UNREAD */
	uint64_t posted;		/* _REFUSED with EINVAL: the receive's bytes; else 0 */
};
_Static_assert(sizeof(struct cma_p2p_ack) == 32, "the acknowledgement has no padding");

#define CMA_P2P_READ 0		/* the receiver read (@status: 0 or its errno) */
#define CMA_P2P_REFUSED 1	/* it refused the header (@status: EINVAL for another size) */
#define CMA_P2P_UNREAD 2	/* another receive of its group failed: ECANCELED */

static int bucket_of(size_t bytes)
{
	int b = 0;

	while (b < CCOM_CMA_BUCKETS - 1 && ((size_t)2 << b) <= bytes)
		b++;
	return b;
}

void ccom_cma_p2p_auto_init(struct ccomComm *comm)
{
	struct ccom_cma *c = comm->coll->cma;
	struct ccom_tune_cma_p2p_table t;
	uint32_t audit;
	int b, v;

	if (!c || !c->on || c->mode != 2)
		return;
	audit = ccom_race_audit_param();
	for (b = 0; b < CCOM_CMA_BUCKETS; b++) {
		ccom_race_init(&c->p2p_trial[b].race, 2);
		ccom_race_size(&c->p2p_trial[b].race, b < 63 ? 1ull << b : UINT64_MAX);
		ccom_race_audit_every(&c->p2p_trial[b].race, audit);
	}
	/* A CMA communicator is one host: its ranks are the local ranks. */
	if (ccom_tune_cma_p2p_load(comm->nranks, comm->local_rank, &t))
		return;
	for (b = 0; b < CCOM_TUNE_CMA_SIZES; b++) {
		v = t.verdict[b];
		if (v)
			ccom_race_set(&c->p2p_trial[b + CCOM_TUNE_CMA_LOG_MIN].race, v > 0);
		c->p2p_cached += v != 0;
	}
	c->cached += c->p2p_cached;
}

int ccom_cma_p2p_choose(struct ccomComm *comm, int peer, size_t bytes, bool trial)
{
	struct ccom_cma *c = comm->coll->cma;
	const struct ccom_race *r;

	if (!c || !c->on || peer == comm->rank || bytes < c->p2p_min || bytes == 0)
		return CCOM_P2P_PATH_STREAM;
	if (c->mode == 1)
		return CCOM_P2P_PATH_CMA;
	r = &c->p2p_trial[bucket_of(bytes)].race;
	/* Undecided: only groups of this send alone are measured; others take the stream. */
	if (ccom_race_state(r) != CCOM_RACE_KEPT && !trial)
		return CCOM_P2P_PATH_STREAM;
	return ccom_race_next(r) == 1 ? CCOM_P2P_PATH_CMA : CCOM_P2P_PATH_STREAM;
}

/* This sender's verdicts into its own cache file. */
static void p2p_cache_store(struct ccomComm *comm, const struct ccom_cma *c)
{
	struct ccom_tune_cma_p2p_table t;
	const struct ccom_race *r;
	int b, v;

	for (b = 0; b < CCOM_TUNE_CMA_SIZES; b++) {
		r = &c->p2p_trial[b + CCOM_TUNE_CMA_LOG_MIN].race;
		v = r->verdict >= 0 ? r->verdict : r->incumbent;
		t.verdict[b] = (int8_t)(v < 0 ? 0 : v ? 1 : -1);
	}
	ccom_tune_cma_p2p_store(comm->nranks, comm->local_rank, &t);
}

void ccom_cma_p2p_timed(struct ccomComm *comm, size_t bytes, int path, uint64_t ns)
{
	struct ccom_cma *c = comm->coll->cma;
	struct ccom_race *r;
	uint64_t m[2];
	int k = path == CCOM_P2P_PATH_CMA, b;

	if (!c || !c->on || c->mode != 2 || bytes < c->p2p_min || bytes == 0)
		return;
	b = bucket_of(bytes);
	r = &c->p2p_trial[b].race;
	if (ccom_race_state(r) == CCOM_RACE_KEPT) {
		if (r->verdict == k && ccom_race_after(r, bytes, ns)) {
			if (r->audit)
				ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %u ccomSends of about 2^%d bytes on the %s path since it was measured; measuring both paths again (an audit)",
					  comm->rank, r->kept_ops, b, k ? "CMA" : "stream");
			else
				ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %d ccomSends of about 2^%d bytes on the %s path each more than %dx slower than its price; measuring both paths again",
					  comm->rank, CCOM_RACE_SLOW_RUN, b, k ? "CMA" : "stream",
					  CCOM_RACE_SLOW_FACTOR);
			ccom_race_restart(r);
		}
		return;
	}
	ccom_race_record(r, k, bytes, ns);
	if (ccom_race_state(r) != CCOM_RACE_READY)
		return;
	/* The sender alone decides: its own medians are the slowest rank's. */
	m[0] = ccom_race_report(r, 0);
	m[1] = ccom_race_report(r, 1);
	if (ccom_race_decide(r, m) < 0)
		return;	/* a path still getting faster: one more turn of each */
	c->decided++;
	p2p_cache_store(comm, c);
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: ccomSend of %zu bytes: CMA %.1f us, stream %.1f us (this sender's median over the last %d turns of each turn's mean per send, turns of %d sends, the first %d dropped): %s from now on",
		  comm->rank, bytes, (double)(m[1] & ~CCOM_RACE_FALLING) * (double)(bytes >> 10) / 1e3,
		  (double)(m[0] & ~CCOM_RACE_FALLING) * (double)(bytes >> 10) / 1e3, r->turns, r->run,
		  r->drop, r->verdict == 1 ? "CMA" : "stream");
}

/*
 * Called once p2p.c found @h->from to be the stream's peer.  Every failure
 * is a header no sender of this build writes: -EBADMSG (ccomRemoteError).
 */
int ccom_cma_p2p_check(struct ccomComm *comm, const struct ccom_p2p_hdr *h)
{
	const struct ccom_cma *c = comm->coll->cma;

	if (h->version != CCOM_P2P_VERSION || h->reserved) {
		ccom_set_last_error("rank %d: the p2p header from rank %d has version %u and reserved word %u (want version %u, 0): the ranks run different libccom builds; run the same build on every rank",
				    comm->rank, h->from, (unsigned)h->version, (unsigned)h->reserved,
				    (unsigned)CCOM_P2P_VERSION);
		return -EBADMSG;
	}
	if (h->path == CCOM_P2P_PATH_STREAM && !h->addr)
		return 0;
	if (h->path != CCOM_P2P_PATH_CMA || h->magic != CCOM_P2P_MAGIC || !h->addr ||
	    h->addr + h->bytes < h->addr) {
		ccom_set_last_error("rank %d: the p2p header from rank %d names path %u at address 0x%llx for %llu bytes, which no sender of this build writes (path %u with address 0, or path %u of a ccomSend at a nonzero address whose range does not wrap); run the same libccom build on every rank",
				    comm->rank, h->from, (unsigned)h->path,
				    (unsigned long long)h->addr, (unsigned long long)h->bytes,
				    (unsigned)CCOM_P2P_PATH_STREAM, (unsigned)CCOM_P2P_PATH_CMA);
		return -EBADMSG;
	}
	if (!c || !c->on) {
		ccom_set_last_error("rank %d: rank %d sent a ccomSend on the CMA path but CMA is off on this rank (%s); the ranks agree on it at init, so the peer runs another build or its state is corrupt",
				    comm->rank, h->from, c ? c->why : "no CMA state");
		return -EBADMSG;
	}
	return 0;
}

/*
 * process_vm_readv() says EFAULT for either side's range: copy this
 * process's @buf onto itself the same way to learn whether it is ours.
 */
static bool local_range_ok(void *buf, size_t len)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	return process_vm_readv(getpid(), &v, 1, &v, 1, 0) == (ssize_t)len;
}

int ccom_cma_p2p_read(struct ccomComm *comm, const struct ccom_p2p_hdr *h, void *buf, size_t len)
{
	int err = ccom_cma_move(comm, h->from, buf, h->addr, len, false);

	if (!err) {
		comm->coll->cma->p2p_ops++;
		return 0;
	}
	if (err != -EFAULT)
		return err;
	if (!local_range_ok(buf, len)) {
		ccom_set_last_error("rank %d: the receive buffer %p of %zu bytes for rank %d's CMA send %llu is not writable in this process; pass a buffer of the receive's count and type",
				    comm->rank, buf, len, h->from, (unsigned long long)h->seq);
		return -EINVAL;
	}
	ccom_set_last_error("rank %d: rank %d's CMA send %llu names %zu bytes at 0x%llx, which are not readable in rank %d (process_vm_readv: Bad address): that rank freed its send buffer before the send completed, or its header lies",
			    comm->rank, h->from, (unsigned long long)h->seq, len,
			    (unsigned long long)h->addr, h->from);
	return -EBADMSG;
}

/*
 * The peer's status and reason fields, once magic, rank and send number
 * matched: each reason allows one set of values; anything else is a lie
 * (-EBADMSG).  A refusal of another size is -EINVAL (ccomInvalidArgument,
 * as on the receiver: honest counts that differ); any other failure on
 * that side is -ECONNABORTED (ccomRemoteError).
 */
static int ack_status(struct ccomComm *comm, int peer, const struct ccom_p2p_hdr *h,
		      const struct cma_p2p_ack *a)
{
	unsigned long long seq = (unsigned long long)h->seq;
	bool ok;

	ok = a->status >= 0 && a->status <= CMA_P2P_MAX_ERRNO &&
	     (a->why == CMA_P2P_READ ? !a->posted :
	      a->why == CMA_P2P_REFUSED ? a->status && (a->status == EINVAL ?
						       a->posted != h->bytes : !a->posted) :
	      a->why == CMA_P2P_UNREAD && a->status == ECANCELED && !a->posted);
	if (!ok) {
		ccom_set_last_error("rank %d: rank %d's acknowledgement of CMA send %llu of %llu bytes carries status %d, reason %u and posted size %llu, which no receiver of this build writes (reason %d: an errno 0..%d; %d: a nonzero errno, with the receive's size, not the send's, for EINVAL; %d: ECANCELED; posted 0 but for EINVAL): the peer's libccom is corrupt or not of this build; run the same build on every rank",
				    comm->rank, peer, seq, (unsigned long long)h->bytes, a->status,
				    a->why, (unsigned long long)a->posted, CMA_P2P_READ,
				    CMA_P2P_MAX_ERRNO, CMA_P2P_REFUSED, CMA_P2P_UNREAD);
		return -EBADMSG;
	}
	if (a->why == CMA_P2P_REFUSED && a->status == EINVAL) {
		ccom_set_last_error("rank %d: rank %d refused CMA send %llu: it posted %llu bytes where %llu were sent; counts and types of matching send/recv must agree",
				    comm->rank, peer, seq, (unsigned long long)a->posted,
				    (unsigned long long)h->bytes);
		return -EINVAL;
	}
	if (a->why == CMA_P2P_REFUSED) {
		ccom_set_last_error("rank %d: rank %d refused the header of CMA send %llu of %llu bytes (it reports %s); its own error says which field: run the same libccom build on every rank",
				    comm->rank, peer, seq, (unsigned long long)h->bytes,
				    strerror(a->status));
		return -ECONNABORTED;
	}
	if (a->why == CMA_P2P_UNREAD) {
		ccom_set_last_error("rank %d: rank %d did not read CMA send %llu of %llu bytes: another receive of its group failed first; its own error says why",
				    comm->rank, peer, seq, (unsigned long long)h->bytes);
		return -ECONNABORTED;
	}
	if (a->status) {
		ccom_set_last_error("rank %d: rank %d could not read CMA send %llu of %llu bytes from this rank (it reports %s); its own error says why",
				    comm->rank, peer, seq, (unsigned long long)h->bytes,
				    strerror(a->status));
		return -ECONNABORTED;
	}
	return 0;
}

/*
 * Acknowledgement @a of CMA send @h to @peer: 0, or -errno with the
 * sentence.  Only @peer writes on the stream, and its next words are this
 * acknowledgement, so each field has one right value: anything else is
 * -EBADMSG (ccomRemoteError), except the header of a p2p message, which
 * says the peer went on to another operation without reading (-EPERM,
 * as for a receive that met one).  Status and reason: ack_status().
 */
static int ack_check(struct ccomComm *comm, int peer, const struct ccom_p2p_hdr *h,
		     const struct cma_p2p_ack *a)
{
	int err;

	if (a->magic == CCOM_P2P_MAGIC || a->magic == CCOM_P2P_MAGIC_COLL) {
		ccom_set_last_error("rank %d: rank %d sent the header of another p2p message where the acknowledgement of CMA send %llu must be: it did not receive that send (its receive failed, or the ranks issued different operations); issue matching sends and receives in the same order on both ranks",
				    comm->rank, peer, (unsigned long long)h->seq);
		return -EPERM;
	}
	if (a->magic != CCOM_CMA_P2P_ACK_MAGIC || a->from != peer || a->seq != h->seq) {
		ccom_set_last_error("rank %d: what rank %d sent back after CMA send %llu is not its acknowledgement (magic 0x%x, rank %d, send %llu; want 0x%x, %d, %llu): the peer's libccom is corrupt or not of this build; run the same build on every rank",
				    comm->rank, peer, (unsigned long long)h->seq, a->magic, a->from,
				    (unsigned long long)a->seq, CCOM_CMA_P2P_ACK_MAGIC, peer,
				    (unsigned long long)h->seq);
		return -EBADMSG;
	}
	err = ack_status(comm, peer, h, a);
	if (!err)
		comm->coll->cma->p2p_ops++;
	return err;
}

/*
 * The acknowledgements did not all arrive (@err: abort, timeout, a peer
 * gone): name, in the sentence, the first peer whose acknowledgement is
 * missing or cut short, keeping the wait's own reason.  Returns @err.
 */
static int ack_missing(struct ccomComm *comm, const struct ccom_op *ops,
		       const struct ccom_p2p_hdr *hdr, const struct cma_p2p_ack *ack,
		       const struct ccom_xfer *x, int n, int err)
{
	char why[512];
	int k = ccom_p2p_first_short(comm, x, n, err, why, sizeof(why)), i;

	if (k < 0)
		return err;
	i = (int)((const struct cma_p2p_ack *)(const void *)x[k].buf - ack);
	ccom_set_last_error("rank %d: when the wait ended, the acknowledgement of CMA send %llu from rank %d had %zu of its %zu bytes (the first of the group not in): %s",
			    comm->rank, (unsigned long long)hdr[i].seq, ops[i].root,
			    x[k].done, x[k].size, why);
	return err;
}

int ccom_cma_p2p_acks(struct ccomComm *comm, const struct ccom_op *ops, int nops,
		      const struct ccom_p2p_hdr *hdr, const bool *cma, const int *status,
		      int refused)
{
	struct cma_p2p_ack *ack;
	struct ccom_xfer *x;
	int i, n = 0, err, pass;

	for (i = 0; i < nops && !cma[i]; i++)
		;
	if (i == nops)
		return 0;
	ack = calloc((size_t)nops, sizeof(*ack));
	x = calloc((size_t)nops, sizeof(*x));
	if (!ack || !x) {
		free(ack);
		free(x);
		return -ENOMEM;
	}
	for (i = 0; i < nops; i++) {
		bool recv = ops[i].kind == CCOM_COLL_RECV;

		if (!cma[i])
			continue;
		if (recv) {
			ack[i] = (struct cma_p2p_ack){ .magic = CCOM_CMA_P2P_ACK_MAGIC,
						       .from = comm->rank, .seq = hdr[i].seq,
						       .status = status[i], .why = CMA_P2P_READ };
			if (refused >= 0 && i != refused) {
				ack[i].status = ECANCELED;
				ack[i].why = CMA_P2P_UNREAD;
			} else if (i == refused) {
				ack[i].why = CMA_P2P_REFUSED;
				if (status[i] == EINVAL)
					ack[i].posted = ops[i].count * ccom_dtype_size(ops[i].dtype);
			}
		}
		x[n++] = (struct ccom_xfer){ .conn = comm->coll->conns[ops[i].root], .is_send = recv,
					     .buf = (char *)&ack[i], .size = sizeof(ack[i]) };
	}
	err = ccom_xfer_run(comm, x, n);
	if (err)
		err = ack_missing(comm, ops, hdr, ack, x, n, err);
	/* An "unread" only points at another send's reason: check those last. */
	for (pass = 0; !err && pass < 2; pass++)
		for (i = 0; !err && i < nops; i++)
			if (cma[i] && ops[i].kind == CCOM_COLL_SEND &&
			    (ack[i].why == CMA_P2P_UNREAD) == (pass == 1))
				err = ack_check(comm, ops[i].root, &hdr[i], &ack[i]);
	free(ack);
	free(x);
	return err;
}

/*
 * A header CMA send of this build from the stream's peer would carry: its
 * sender waits for an acknowledgement, so a refusal answers it.  Other
 * bytes (a collective's, another build's) wait for nothing of ours.
 */
static bool wants_ack(const struct ccom_op *op, const struct ccom_p2p_hdr *h)
{
	return h->magic == CCOM_P2P_MAGIC && h->from == op->root &&
	       h->version == CCOM_P2P_VERSION && h->path == CCOM_P2P_PATH_CMA;
}

void ccom_cma_p2p_refuse(struct ccomComm *comm, const struct ccom_op *ops, int nops,
			 const struct ccom_p2p_hdr *hdr, const bool *cma_send, int bad, int err)
{
	char why[1024];
	bool *cma = calloc((size_t)nops, sizeof(*cma));
	int *status = calloc((size_t)nops, sizeof(*status));
	int i, n = 0;

	if (!cma || !status)
		goto out;
	for (i = 0; i < nops; i++) {
		if (ops[i].root == comm->rank)
			continue;
		cma[i] = ops[i].kind == CCOM_COLL_SEND ? cma_send[i] : wants_ack(&ops[i], &hdr[i]);
		n += cma[i] && ops[i].kind == CCOM_COLL_RECV;
	}
	if (!n)
		goto out;	/* no sender waits for this rank's word */
	status[bad] = -err;
	/* The refusal is this rank's error: the acknowledgements' own fate comes second. */
	snprintf(why, sizeof(why), "%s", ccom_last_error());
	if (ccom_cma_p2p_acks(comm, ops, nops, hdr, cma, status, bad))
		ccom_set_last_error_quiet(why);
out:
	free(cma);
	free(status);
}
