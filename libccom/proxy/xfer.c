// SPDX-License-Identifier: MIT
/*
 * xfer.c - the transfer loop (proxy/ room); see xfer.h.  A receive may
 * carry a streaming reduction: whole elements are reduced as they arrive,
 * overlapping the reduction with the transfer.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>

#include "core/comm.h"
#include "core/op.h"
#include "proxy/conn.h"
#include "proxy/wait.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"

/* Is an earlier transfer on the same conn and direction still unfinished? */
static bool blocked_behind(struct ccom_xfer *x, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (x[j].conn == x[i].conn && x[j].is_send == x[i].is_send && x[j].done < x[j].size)
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

static int xfer_step(struct ccom_xfer *x, bool *progress)
{
	ssize_t r;

	if (x->is_send)
		r = x->conn->ops->send(x->conn, x->buf + x->done, x->size - x->done);
	else
		r = x->conn->ops->recv(x->conn, x->buf + x->done, x->size - x->done);
	if (r < 0)
		return (int)r;
	if (r > 0)
		*progress = true;
	x->done += (size_t)r;
	if (x->red_dst && r > 0)
		xfer_reduce(x);
	return 0;
}

/* One pass over every transfer.  Returns 1 when all are done, 0, or -errno. */
static int xfer_pass(struct ccom_xfer *x, int n, bool *progress, int *stuck)
{
	bool all = true;
	int i, err;

	for (i = 0; i < n; i++) {
		if (x[i].done >= x[i].size)
			continue;
		all = false;
		if (blocked_behind(x, i))
			continue;
		err = xfer_step(&x[i], progress);
		if (err)
			return err;
		if (x[i].done < x[i].size)
			*stuck = i;
	}
	return all ? 1 : 0;
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
			x[stuck].conn->ops->wait(x[stuck].conn, x[stuck].is_send ?
						 CCOM_TRANSPORT_WAIT_SEND : CCOM_TRANSPORT_WAIT_RECV, 1000);
		else if (idle < spin)
			__builtin_ia32_pause();
		else if (idle < yield)
			sched_yield();
		else if (stuck >= 0)
			x[stuck].conn->ops->wait(x[stuck].conn, x[stuck].is_send ?
						 CCOM_TRANSPORT_WAIT_SEND : CCOM_TRANSPORT_WAIT_RECV, 1000);
	}
	ccom_wait_end(&w);
	return r < 0 ? r : 0;
}
