// SPDX-License-Identifier: MIT
/*
 * shm_fifo.c - the shm transport: one single-producer/single-consumer byte
 * FIFO per ordered pair of local ranks, inside the host segment (shm.h).
 * head is written only by the sender, tail only by the receiver, each on
 * its own cache line; the data area is a ring of fifo_bytes.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/comm.h"
#include "proxy/wait.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "util/err.h"

struct shm_conn {
	struct ccom_transport_conn base;	/* must be first */
	struct ccom_shm *shm;
	struct ccom_shm_fifo *out;		/* me -> peer */
	struct ccom_shm_fifo *in;		/* peer -> me */
	int peer_local;
};

static struct shm_conn *to_shm(struct ccom_transport_conn *c)
{
	return (struct shm_conn *)c;
}

static char *fifo_data(struct ccom_shm_fifo *f)
{
	return (char *)(f + 1);
}

static int shm_setup(struct ccomComm *comm, const int *peers, int npeers,
		     struct ccom_transport_conn **conns)
{
	struct ccom_shm *shm = comm->shm;
	struct shm_conn *c;
	int i;

	if (npeers == 0)
		return 0;
	if (!shm) {
		ccom_set_last_error("shm transport: no host segment for rank %d", comm->rank);
		return -EINVAL;
	}
	for (i = 0; i < npeers; i++) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			while (i--) {
				free(conns[i]);
				conns[i] = NULL;
			}
			return -ENOMEM;
		}
		c->base.ops = &ccom_transport_shm;
		c->base.peer = peers[i];
		c->shm = shm;
		c->peer_local = comm->rank_to_local[peers[i]];
		c->out = ccom_shm_fifo(shm, shm->me, c->peer_local);
		c->in = ccom_shm_fifo(shm, c->peer_local, shm->me);
		conns[i] = &c->base;
	}
	return 0;
}

/*
 * The counters of a FIFO are written by two processes: one whose bytes in
 * flight (head - tail) exceed the FIFO was corrupted by the local peer
 * (@who: "head" it writes, or "tail").  The operation fails, not the
 * process: -EBADMSG (ccomRemoteError), naming that peer; nothing is copied.
 */
static ssize_t fifo_corrupt(struct shm_conn *c, const char *who, uint64_t head, uint64_t tail)
{
	char what[96];

	if (tail > head)
		snprintf(what, sizeof(what), "the tail passes the head");
	else
		snprintf(what, sizeof(what), "%llu bytes in flight in a %zu-byte FIFO",
			 (unsigned long long)(head - tail), c->shm->fifo_bytes);
	ccom_set_last_error("shm: rank %d: local peer rank %d corrupted the %s of their FIFO (%s; head %llu, tail %llu): the host segment is damaged or that rank is not a ccom of this build; this operation cannot complete",
			    c->shm->comm->rank, c->base.peer, who, what,
			    (unsigned long long)head, (unsigned long long)tail);
	return -EBADMSG;
}

static ssize_t shm_send(struct ccom_transport_conn *conn, const void *buf, size_t size)
{
	struct shm_conn *c = to_shm(conn);
	size_t cap = c->shm->fifo_bytes;
	/* Pairs with the release store of tail in shm_recv(). */
	uint64_t tail = atomic_load_explicit(&c->out->tail, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&c->out->head, memory_order_relaxed);
	size_t space, n, pos, first;

	if (head - tail > cap)
		return fifo_corrupt(c, "tail", head, tail);
	space = cap - (size_t)(head - tail);
	n = size < space ? size : space;
	if (n == 0)
		return 0;
	pos = (size_t)(head % cap);
	first = n < cap - pos ? n : cap - pos;
	memcpy(fifo_data(c->out) + pos, buf, first);
	memcpy(fifo_data(c->out), (const char *)buf + first, n - first);
	/* Publish the bytes; pairs with the acquire load of head in shm_recv(). */
	atomic_store_explicit(&c->out->head, head + n, memory_order_release);
	ccom_shm_ring(c->shm);
	return (ssize_t)n;
}

static ssize_t shm_recv(struct ccom_transport_conn *conn, void *buf, size_t size)
{
	struct shm_conn *c = to_shm(conn);
	size_t cap = c->shm->fifo_bytes;
	uint64_t head = atomic_load_explicit(&c->in->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&c->in->tail, memory_order_relaxed);
	size_t avail, n, pos, first;

	if (head - tail > cap)
		return fifo_corrupt(c, "head", head, tail);
	avail = (size_t)(head - tail);
	n = size < avail ? size : avail;
	if (n == 0)
		return 0;
	pos = (size_t)(tail % cap);
	first = n < cap - pos ? n : cap - pos;
	memcpy(buf, fifo_data(c->in) + pos, first);
	memcpy((char *)buf + first, fifo_data(c->in), n - first);
	/* Free the space; pairs with the acquire load of tail in shm_send(). */
	atomic_store_explicit(&c->in->tail, tail + n, memory_order_release);
	ccom_shm_ring(c->shm);
	return (ssize_t)n;
}

static bool shm_ready(struct shm_conn *c, int dir)
{
	if ((dir & CCOM_TRANSPORT_WAIT_RECV) &&
	    atomic_load(&c->in->head) != atomic_load(&c->in->tail))
		return true;
	if ((dir & CCOM_TRANSPORT_WAIT_SEND) &&
	    atomic_load(&c->out->head) - atomic_load(&c->out->tail) < c->shm->fifo_bytes)
		return true;
	return false;
}

/* Both directions wait on the peer's bell: it rings when it writes or reads. */
static int shm_wait(struct ccom_transport_conn *conn, int dir, int timeout_us)
{
	struct shm_conn *c = to_shm(conn);
	struct ccom_bell *b = ccom_shm_peer_bell(c->shm, c->peer_local);
	struct timespec ts = { timeout_us / 1000000, (timeout_us % 1000000) * 1000L };
	uint32_t seq;

	atomic_fetch_add(&b->sleepers, 1);
	seq = atomic_load(&b->seq);
	if (!shm_ready(c, dir))
		syscall(SYS_futex, &b->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
	atomic_fetch_sub(&b->sleepers, 1);
	return 0;
}

static void shm_teardown(struct ccomComm *comm, struct ccom_transport_conn **conns, int npeers)
{
	int i;

	(void)comm;
	for (i = 0; i < npeers; i++) {
		free(conns[i]);
		conns[i] = NULL;
	}
}

const struct ccom_transport_ops ccom_transport_shm = {
	.name = "shm",
	.setup = shm_setup,
	.send = shm_send,
	.recv = shm_recv,
	.wait = shm_wait,
	.teardown = shm_teardown,
};
