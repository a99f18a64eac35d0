// SPDX-License-Identifier: MIT
/*
 * xfer.c - the transfer loop (proxy/ room); see xfer.h.  A receive may
 * carry a streaming reduction: whole elements are reduced as they arrive,
 * overlapping the reduction with the transfer.  On network connections
 * each collective's first bytes each way are its signature (the
 * collective-mismatch check, xfer.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/op.h"
#include "proxy/conn.h"
#include "proxy/wait.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "util/err.h"

/* "CCSG" little-endian: the first word of a signature on the wire. */
#define SIG_MAGIC 0x47534343u
/* Data up to this size leaves in the same send() as the signature. */
#define SIG_SMALL 480u

/*
 * Wire layout (host byte order; the ranks of a comm share an ABI):
 * magic u32, kind u8, dtype u8, op s8, 0 u8, root s32, 0 u32, seq u64,
 * count u64.
 */
static void sig_pack(const struct ccom_op_sig *sig, unsigned char w[CCOM_XFER_SIG_BYTES])
{
	uint32_t magic = SIG_MAGIC, zero = 0;
	int32_t root = sig->root;

	memcpy(w, &magic, 4);
	w[4] = (unsigned char)sig->kind;
	w[5] = (unsigned char)sig->dtype;
	w[6] = (unsigned char)(int8_t)sig->op;
	w[7] = 0;
	memcpy(w + 8, &root, 4);
	memcpy(w + 12, &zero, 4);
	memcpy(w + 16, &sig->seq, 8);
	memcpy(w + 24, &sig->count, 8);
}

static bool sig_unpack(const unsigned char w[CCOM_XFER_SIG_BYTES], struct ccom_op_sig *sig)
{
	uint32_t magic;

	memcpy(&magic, w, 4);
	if (magic != SIG_MAGIC)
		return false;
	sig->kind = w[4];
	sig->dtype = w[5];
	sig->op = (int8_t)w[6];
	memcpy(&sig->root, w + 8, 4);
	memcpy(&sig->seq, w + 16, 8);
	memcpy(&sig->count, w + 24, 8);
	return true;
}

int ccom_xfer_sig_init(struct ccom_xfer_sig *s, int rank, int cap)
{
	memset(s, 0, sizeof(*s));
	s->rank = rank;
	s->cap = cap;
	s->touched = calloc((size_t)cap, sizeof(*s->touched));
	s->fin = calloc((size_t)cap, sizeof(*s->fin));
	if (!s->touched || !s->fin) {
		ccom_xfer_sig_fini(s);
		return -ENOMEM;
	}
	return 0;
}

void ccom_xfer_sig_fini(struct ccom_xfer_sig *s)
{
	free(s->touched);
	free(s->fin);
	s->touched = NULL;
	s->fin = NULL;
	s->cap = 0;
}

void ccom_xfer_sig_begin(struct ccom_xfer_sig *s, const struct ccom_op_sig *sig)
{
	s->sig = *sig;
	sig_pack(sig, s->wire);
	s->ntouched = 0;
}

void ccom_xfer_sig_reset(struct ccom_xfer_sig *s)
{
	s->sig.seq = 0;
	s->ntouched = 0;
}

/* The running collective's seq if @c carries signatures, else 0. */
static inline uint64_t sig_seq(const struct ccom_transport_conn *c)
{
	return c->sig ? c->sig->sig.seq : 0;
}

static void sig_touch(struct ccom_transport_conn *c, uint64_t seq)
{
	struct ccom_xfer_sig *s = c->sig;

	if (c->sig_touch_seq == seq)
		return;
	c->sig_touch_seq = seq;
	c->sig_tx_done = 0;
	c->sig_rx_done = 0;
	if (s->ntouched < s->cap)
		s->touched[s->ntouched++] = c;
}

/* The peer's signature is in: compare.  0 or -EPERM with the sentence. */
static int sig_check(struct ccom_transport_conn *c)
{
	const struct ccom_xfer_sig *s = c->sig;
	char mine[128], theirs_s[128];
	struct ccom_op_sig theirs;
	const char *why;

	if (!sig_unpack(c->sig_rx, &theirs)) {
		ccom_set_last_error("collective mismatch: rank %d is in collective %llu (%s) but what rank %d sent is no collective's signature (it is in a point-to-point operation, or runs with another CCOM_CHECK_MISMATCH); call the same collectives in the same order on every rank",
				    s->rank, (unsigned long long)s->sig.seq,
				    ccom_op_sig_str(&s->sig, mine, sizeof(mine)), c->peer);
		return -EPERM;
	}
	if (theirs.seq != s->sig.seq) {
		ccom_set_last_error("collective mismatch: rank %d is at collective %llu (%s) but rank %d at collective %llu (%s); call the same collectives in the same order on every rank",
				    s->rank, (unsigned long long)s->sig.seq,
				    ccom_op_sig_str(&s->sig, mine, sizeof(mine)), c->peer,
				    (unsigned long long)theirs.seq,
				    ccom_op_sig_str(&theirs, theirs_s, sizeof(theirs_s)));
		return -EPERM;
	}
	why = ccom_op_sig_diff(&s->sig, &theirs);
	return why ? ccom_op_sig_mismatch(s->rank, &s->sig, c->peer, &theirs, why) : 0;
}

/*
 * Every read of a stream goes through here: bytes an any-source receive
 * read ahead (ccom_xfer_peek()) come first.
 */
static ssize_t conn_take(struct ccom_transport_conn *c, void *buf, size_t size)
{
	size_t n = c->ahead_len - c->ahead_off;

	if (!n)
		return c->ops->recv(c, buf, size);
	if (n > size)
		n = size;
	memcpy(buf, c->ahead + c->ahead_off, n);
	ccom_xfer_peek_take(c, n);
	return (ssize_t)n;
}

ssize_t ccom_xfer_peek(struct ccom_transport_conn *c, void *buf, size_t size)
{
	ssize_t r;

	if (size > CCOM_XFER_AHEAD_BYTES)
		size = CCOM_XFER_AHEAD_BYTES;
	if (c->ahead_off) {
		memmove(c->ahead, c->ahead + c->ahead_off, c->ahead_len - c->ahead_off);
		c->ahead_len -= c->ahead_off;
		c->ahead_off = 0;
	}
	if (c->ahead_len < size) {
		r = c->ops->recv(c, c->ahead + c->ahead_len, size - c->ahead_len);
		if (r < 0)
			return r;
		c->ahead_len += (unsigned int)r;
	}
	size = size < c->ahead_len ? size : c->ahead_len;
	memcpy(buf, c->ahead, size);
	return (ssize_t)size;
}

void ccom_xfer_peek_take(struct ccom_transport_conn *c, size_t n)
{
	c->ahead_off += (unsigned int)n;
	if (c->ahead_off >= c->ahead_len)
		c->ahead_off = c->ahead_len = 0;
}

/* Send the rest of this op's signature: 1 when all out, 0 not yet, -errno. */
static int sig_push(struct ccom_transport_conn *c, uint64_t seq, bool *progress)
{
	ssize_t r;

	if (c->sig_tx_seq == seq)
		return 1;
	r = c->ops->send(c, c->sig->wire + c->sig_tx_done, CCOM_XFER_SIG_BYTES - c->sig_tx_done);
	if (r <= 0)
		return (int)r;
	*progress = true;
	c->sig_tx_done += (unsigned int)r;
	if (c->sig_tx_done < CCOM_XFER_SIG_BYTES)
		return 0;
	c->sig_tx_seq = seq;
	return 1;
}

/* Take @n bytes of the peer's signature from @from; check it when complete. */
static int sig_take(struct ccom_transport_conn *c, uint64_t seq, const unsigned char *from, size_t n)
{
	memcpy(c->sig_rx + c->sig_rx_done, from, n);
	c->sig_rx_done += (unsigned int)n;
	if (c->sig_rx_done < CCOM_XFER_SIG_BYTES)
		return 0;
	c->sig_rx_seq = seq;
	return sig_check(c) ? -EPERM : 1;
}

/* Receive the rest of the peer's signature: 1 when in and equal, 0 not yet, -errno. */
static int sig_pull(struct ccom_transport_conn *c, uint64_t seq, bool *progress)
{
	unsigned char tmp[CCOM_XFER_SIG_BYTES];
	ssize_t r;

	if (c->sig_rx_seq == seq)
		return 1;
	r = conn_take(c, tmp, CCOM_XFER_SIG_BYTES - c->sig_rx_done);
	if (r <= 0)
		return (int)r;
	*progress = true;
	return sig_take(c, seq, tmp, (size_t)r);
}

static ssize_t conn_send(struct ccom_transport_conn *c, const void *buf, size_t size, bool *progress)
{
	uint64_t seq = sig_seq(c);
	unsigned char tmp[CCOM_XFER_SIG_BYTES + SIG_SMALL];
	ssize_t r;

	if (!seq || (c->sig_tx_seq == seq && c->sig_rx_seq == seq))
		return c->ops->send(c, buf, size);
	sig_touch(c, seq);
	if (c->sig_tx_seq != seq && c->sig_tx_done == 0 && size <= SIG_SMALL) {
		/* Signature and small data in one send(). */
		memcpy(tmp, c->sig->wire, CCOM_XFER_SIG_BYTES);
		memcpy(tmp + CCOM_XFER_SIG_BYTES, buf, size);
		r = c->ops->send(c, tmp, CCOM_XFER_SIG_BYTES + size);
		if (r <= 0)
			return r;
		*progress = true;
		if (r < (ssize_t)CCOM_XFER_SIG_BYTES) {
			c->sig_tx_done = (unsigned int)r;
			return 0;
		}
		c->sig_tx_seq = seq;
		return r - (ssize_t)CCOM_XFER_SIG_BYTES;
	}
	r = sig_push(c, seq, progress);
	if (r <= 0)
		return r;
	/*
	 * Other data waits for the peer's signature: a mismatched peer
	 * closes its end when it fails, and a send into that reset would
	 * fail here before the peer's signature (already in our receive
	 * queue) could be read and named.  It costs one one-way latency
	 * on the op's first send on the conn.
	 */
	r = sig_pull(c, seq, progress);
	if (r <= 0)
		return r;
	return c->ops->send(c, buf, size);
}

int ccom_xfer_send_wait_dir(const struct ccom_transport_conn *conn)
{
	uint64_t seq = sig_seq(conn);

	return seq && conn->sig_tx_seq == seq && conn->sig_rx_seq != seq ?
	       CCOM_TRANSPORT_WAIT_RECV : CCOM_TRANSPORT_WAIT_SEND;
}

/*
 * @eager: the op sends nothing on @c in this set, so its own signature
 * goes out now (the peer that only sends to us reads it at its op's end).
 * Tried on every call until it is out, not only on the first: the send
 * may find no room (net_ib without credits, the peer not having read our
 * previous op's signature yet), and a peer whose next data waits for it
 * (conn_send) would wait for ever while we wait for that data.
 */
static ssize_t conn_recv(struct ccom_transport_conn *c, void *buf, size_t size, bool eager,
			 bool *progress)
{
	uint64_t seq = sig_seq(c);
	unsigned char tmp[CCOM_XFER_SIG_BYTES + SIG_SMALL];
	size_t need, hdr;
	ssize_t r;
	int ok;

	if (!seq || (c->sig_rx_seq == seq && (!eager || c->sig_tx_seq == seq)))
		return conn_take(c, buf, size);
	sig_touch(c, seq);
	if (eager) {
		r = sig_push(c, seq, progress);
		if (r < 0)
			return r;
	}
	if (c->sig_rx_seq == seq)
		return conn_take(c, buf, size);
	if (size > SIG_SMALL) {
		r = sig_pull(c, seq, progress);
		if (r <= 0)
			return r;
		return conn_take(c, buf, size);
	}
	/* Small: the rest of the signature and the data in one recv(), checked before the copy. */
	need = CCOM_XFER_SIG_BYTES - c->sig_rx_done;
	r = conn_take(c, tmp, need + size);
	if (r <= 0)
		return r;
	*progress = true;
	hdr = (size_t)r < need ? (size_t)r : need;
	r -= (ssize_t)hdr;
	ok = sig_take(c, seq, tmp, hdr);
	if (ok <= 0)
		return ok;
	memcpy(buf, tmp + hdr, (size_t)r);
	return r;
}

ssize_t ccom_xfer_send(struct ccom_transport_conn *conn, const void *buf, size_t size)
{
	bool progress = false;

	return conn_send(conn, buf, size, &progress);
}

ssize_t ccom_xfer_recv(struct ccom_transport_conn *conn, void *buf, size_t size)
{
	bool progress = false;

	return conn_recv(conn, buf, size, false, &progress);
}

/* Is an earlier transfer on the same conn and direction still unfinished? */
static bool blocked_behind(struct ccom_xfer *x, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (x[j].conn == x[i].conn && x[j].is_send == x[i].is_send && x[j].done < x[j].size)
			return true;
	return false;
}

/* Does the set send on @x[i]'s conn (its signature then goes with that data)? */
static bool set_sends_on(const struct ccom_xfer *x, int n, int i)
{
	int j;

	for (j = 0; j < n; j++)
		if (x[j].is_send && x[j].conn == x[i].conn)
			return true;
	return false;
}

/* Reduce the whole elements that arrived since the last call (streaming). */
static void xfer_reduce(struct ccom_xfer *x)
{
	size_t esz = ccom_dtype_size(x->red_op->dtype);
	size_t upto = x->done - x->done % esz, n = (upto - x->red_done) / esz;

	if (!n)
		return;
	ccom_reduce2(x->red_dst + x->red_done, x->red_src + x->red_done, x->buf + x->red_done, n,
		     x->red_op->dtype, x->red_op->op);
	x->red_done = upto;
}

/* A signature-only transfer is done when both directions are. */
static bool sig_only_done(const struct ccom_xfer *x)
{
	uint64_t seq = sig_seq(x->conn);

	return x->conn->sig_tx_seq == seq && x->conn->sig_rx_seq == seq;
}

static int xfer_step(struct ccom_xfer *x, int n, int i, bool *progress)
{
	struct ccom_xfer *t = &x[i];
	struct ccom_transport_conn *c = t->conn;
	ssize_t r;

	if (t->sig_only) {
		r = sig_push(c, sig_seq(c), progress);
		if (r >= 0)
			r = sig_pull(c, sig_seq(c), progress);
		return r < 0 ? (int)r : 0;
	}
	if (t->is_send)
		r = conn_send(c, t->buf + t->done, t->size - t->done, progress);
	else
		r = conn_recv(c, t->buf + t->done, t->size - t->done,
			      sig_seq(c) && c->sig_tx_seq != sig_seq(c) && !set_sends_on(x, n, i),
			      progress);
	if (r < 0)
		return (int)r;
	if (r > 0)
		*progress = true;
	t->done += (size_t)r;
	if (t->red_dst && r > 0)
		xfer_reduce(t);
	return 0;
}

static bool xfer_done(const struct ccom_xfer *x)
{
	return x->sig_only ? sig_only_done(x) : x->done >= x->size;
}

/* One pass over every transfer.  Returns 1 when all are done, 0, or -errno. */
static int xfer_pass(struct ccom_xfer *x, int n, bool *progress, int *stuck)
{
	bool all = true;
	int i, err;

	for (i = 0; i < n; i++) {
		if (xfer_done(&x[i]))
			continue;
		all = false;
		if (!x[i].sig_only && blocked_behind(x, i))
			continue;
		err = xfer_step(x, n, i, progress);
		if (err)
			return err;
		if (!xfer_done(&x[i]))
			*stuck = i;
	}
	return all ? 1 : 0;
}
/* What a stuck transfer waits for (a send may wait for the peer's signature). */
static int wait_dir(const struct ccom_xfer *x)
{
	if (x->sig_only)
		return x->conn->sig_tx_seq == sig_seq(x->conn) ? CCOM_TRANSPORT_WAIT_RECV :
		       CCOM_TRANSPORT_WAIT_SEND | CCOM_TRANSPORT_WAIT_RECV;
	return x->is_send ? ccom_xfer_send_wait_dir(x->conn) : CCOM_TRANSPORT_WAIT_RECV;
}

int ccom_xfer_run(struct ccomComm *comm, struct ccom_xfer *x, int n)
{
	unsigned int spin, yield, idle = 0;
	struct ccom_wait w;
	bool progress;
	int stuck = -1, r;

	ccom_wait_begin(&w, comm);
	/* The wait policy's spin/yield limits (the host segment's, if any). */
	spin = ccom_wait_spins(&w);
	yield = spin + ccom_wait_yields(&w);
	for (;;) {
		progress = false;
		r = xfer_pass(x, n, &progress, &stuck);
		if (r)
			break;
		if (progress) {
			idle = 0;
			continue;
		}
		idle++;
		if ((idle & 255) == 0 || idle > yield) {
			r = ccom_wait_check(&w);
			if (r)
				break;
		}
		if (stuck >= 0 && x[stuck].conn->ops->idle_passes &&
		    idle > x[stuck].conn->ops->idle_passes)
			x[stuck].conn->ops->wait(x[stuck].conn, wait_dir(&x[stuck]), 1000);
		else if (idle < spin)
			__builtin_ia32_pause();
		else if (idle < yield)
			sched_yield();
		else if (stuck >= 0)
			x[stuck].conn->ops->wait(x[stuck].conn, wait_dir(&x[stuck]), 1000);
	}
	ccom_wait_end(&w);
	return r < 0 ? r : 0;
}

int ccom_xfer_sig_end(struct ccomComm *comm, struct ccom_xfer_sig *s)
{
	int i, n = 0, err = 0;

	for (i = 0; i < s->ntouched; i++) {
		struct ccom_transport_conn *c = s->touched[i];

		if (c->sig_tx_seq != s->sig.seq || c->sig_rx_seq != s->sig.seq)
			s->fin[n++] = (struct ccom_xfer){ .conn = c, .sig_only = true };
	}
	if (n)
		err = ccom_xfer_run(comm, s->fin, n);
	ccom_xfer_sig_reset(s);
	return err;
}
