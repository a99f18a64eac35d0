// SPDX-License-Identifier: MIT
/*
 * bruck.c - Bruck's AllGather (coll/ layer), the small-message AllGather
 * between hosts: ceil(log2 n) steps for any n instead of the ring's n - 1,
 * moving the same (n - 1) blocks per rank in total.
 *
 * In ring-order positions: rank v starts with its own block in scratch
 * slot 0; at the step of distance d it sends its first min(d, n - d) slots
 * to v - d and receives as many into slots d.. from v + d, so that slot j
 * ends up holding the block of position v + j.  A last pass copies slot j
 * to the output place of that position's rank.  The scratch is cs->tmp, so
 * the whole gathered vector must fit in it (the tuner only picks Bruck for
 * small messages; a larger forced one runs the ring).
 */
#include <errno.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/xfer.h"
#include "reduce/reduce.h"
#include "transport/transport.h"
#include "tune/tune.h"

int ccom_bruck_allgather(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_coll_state *cs = comm->coll;
	size_t b = op->count * ccom_dtype_size(op->dtype);
	int n = comm->nranks, v = cs->ring_pos, d, j, err;
	char *slots = cs->tmp, *out = op->recvbuff;

	if (op->kind != CCOM_COLL_ALLGATHER || !ccom_tune_bruck_fits(comm, b * (size_t)n))
		return ccom_ring_run(comm, op);
	memcpy(slots, op->sendbuff, b);
	for (d = 1; d < n; d *= 2) {
		size_t cnt = (size_t)(d < n - d ? d : n - d) * b;
		struct ccom_xfer x[2] = {
			{ .conn = cs->conns[cs->ring[(v - d + n) % n]], .is_send = true,
			  .buf = slots, .size = cnt },
			{ .conn = cs->conns[cs->ring[(v + d) % n]], .buf = slots + (size_t)d * b,
			  .size = cnt },
		};

		err = ccom_xfer_run(comm, x, 2);
		if (err)
			return err;
	}
	for (j = 0; j < n; j++)
		memcpy(out + (size_t)cs->ring[(v + j) % n] * b, slots + (size_t)j * b, b);
	return 0;
}
