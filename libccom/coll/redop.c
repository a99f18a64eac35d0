// SPDX-License-Identifier: MIT
/*
 * redop.c - custom reduction ops (coll/ room): NCCL's PreMulSum,
 * ccomRedOpCreatePreMulSum() / ccomRedOpDestroy(), per communicator.
 *
 * A handle is ccomNumOps + 1 + its slot in the communicator's table
 * (CCOM_OP_PREMULSUM, ccomNumOps itself, is no handle: it names all of
 * them in signatures).  A call that is given one resolves it when it is
 * enqueued (ccom_redop_resolve()): the record then carries ccomSum, the
 * premul flag and the scalar (its value for ccomScalarHostImmediate, its
 * pointer for ccomScalarDevice), so the handle may be destroyed as soon as
 * the call returned, as NCCL allows.  At execution ccom_premul_prepare()
 * multiplies this rank's input by the scalar into a buffer of its own and
 * lets the op run as a plain sum: every algorithm, transport and the
 * nccom engine's in-kernel sum then need nothing more, and rounding is
 * NCCL's (each product rounded to the dtype, then summed).  The cost is
 * one extra pass over the input.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/op.h"
#include "reduce/reduce.h"
#include "util/err.h"

/* Bounds a caller that creates ops in a loop without destroying them. */
#define REDOP_MAX_SLOTS 65536

struct redop_slot {
	bool used;
	ccomDataType_t dtype;
	ccomScalarResidence_t residence;
	const void *ptr;		/* ccomScalarDevice */
	uint64_t val;			/* ccomScalarHostImmediate: the bytes of the value */
};

struct ccom_redops {
	pthread_mutex_t lock;		/* protects slots, n, cap (API threads) */
	struct redop_slot *slots;
	int n, cap;
};

static int redop_slot_of(ccomRedOp_t op)
{
	return (int)op - (int)ccomNumOps - 1;
}

static int redops_get(struct ccom_coll_state *cs, struct ccom_redops **out)
{
	static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
	struct ccom_redops *r;

	pthread_mutex_lock(&init_lock);
	r = cs->redops;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (r) {
			pthread_mutex_init(&r->lock, NULL);
			cs->redops = r;
		}
	}
	pthread_mutex_unlock(&init_lock);
	*out = r;
	return r ? 0 : -ENOMEM;
}

/* A free slot (grown as needed) of @r, locked: its index, or -errno. */
static int redops_alloc_locked(struct ccom_redops *r)
{
	struct redop_slot *n;
	int i, cap;

	for (i = 0; i < r->n; i++)
		if (!r->slots[i].used)
			return i;
	if (r->n == REDOP_MAX_SLOTS)
		return -ENOSPC;
	if (r->n == r->cap) {
		cap = r->cap ? r->cap * 2 : 8;
		n = realloc(r->slots, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->slots = n;
		r->cap = cap;
	}
	return r->n++;
}

void ccom_redops_free(struct ccom_redops *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
}

static int redop_check_comm(struct ccomComm *comm, const char *fn)
{
	if (!ccom_comm_valid(comm) || !comm->coll) {
		ccom_set_last_error("%s: comm is not a ready communicator", fn);
		return -EINVAL;
	}
	return 0;
}

ccomResult_t ccomRedOpCreatePreMulSum(ccomRedOp_t *op, void *scalar, ccomDataType_t datatype,
				      ccomScalarResidence_t residence, ccomComm_t comm)
{
	static const char fn[] = "ccomRedOpCreatePreMulSum";
	struct ccom_redops *r;
	struct redop_slot *s;
	int err, i;

	ccom_clear_last_error();
	err = redop_check_comm(comm, fn);
	if (err)
		return ccom_result_from_errno(err);
	if (!op || !scalar) {
		ccom_set_last_error("%s: %s is NULL", fn, op ? "scalar" : "op");
		return ccomInvalidArgument;
	}
	if (!ccom_dtype_size(datatype)) {
		ccom_set_last_error("%s: invalid datatype %d", fn, datatype);
		return ccomInvalidArgument;
	}
	if (residence != ccomScalarDevice && residence != ccomScalarHostImmediate) {
		ccom_set_last_error("%s: invalid residence %d; use ccomScalarDevice or ccomScalarHostImmediate",
				    fn, residence);
		return ccomInvalidArgument;
	}
	err = redops_get(comm->coll, &r);
	if (err)
		return ccomSystemError;
	pthread_mutex_lock(&r->lock);
	i = redops_alloc_locked(r);
	if (i >= 0) {
		s = &r->slots[i];
		*s = (struct redop_slot){ .used = true, .dtype = datatype, .residence = residence };
		if (residence == ccomScalarHostImmediate)
			memcpy(&s->val, scalar, ccom_dtype_size(datatype));
		else
			s->ptr = scalar;
		*op = (ccomRedOp_t)(ccomNumOps + 1 + i);
	}
	pthread_mutex_unlock(&r->lock);
	if (i == -ENOSPC) {
		ccom_set_last_error("%s: %d custom ops exist on this communicator; destroy unused ones with ccomRedOpDestroy",
				    fn, REDOP_MAX_SLOTS);
		return ccomInvalidUsage;
	}
	return i < 0 ? ccomSystemError : ccomSuccess;
}

ccomResult_t ccomRedOpDestroy(ccomRedOp_t op, ccomComm_t comm)
{
	struct ccom_redops *r;
	int err, i = redop_slot_of(op);

	ccom_clear_last_error();
	err = redop_check_comm(comm, "ccomRedOpDestroy");
	if (err)
		return ccom_result_from_errno(err);
	if ((int)op >= 0 && (int)op < ccomNumOps) {
		ccom_set_last_error("ccomRedOpDestroy: op %d is a built-in op; only ops of ccomRedOpCreatePreMulSum are destroyed",
				    (int)op);
		return ccomInvalidArgument;
	}
	r = comm->coll->redops;
	err = -EINVAL;
	if (r && i >= 0) {
		pthread_mutex_lock(&r->lock);
		if (i < r->n && r->slots[i].used) {
			r->slots[i].used = false;
			err = 0;
		}
		pthread_mutex_unlock(&r->lock);
	}
	if (err)
		ccom_set_last_error("ccomRedOpDestroy: op %d is no live custom op of this communicator (destroyed already, or created on another one)",
				    (int)op);
	return ccom_result_from_errno(err);
}

int ccom_redop_resolve(struct ccomComm *comm, struct ccom_op *op)
{
	const char *fn = ccom_coll_kind_name(op->kind);
	struct ccom_redops *r = comm->coll->redops;
	int i = redop_slot_of(op->op), err = -EINVAL;
	struct redop_slot s = { 0 };

	if (r && i >= 0) {
		pthread_mutex_lock(&r->lock);
		if (i < r->n && r->slots[i].used) {
			s = r->slots[i];
			err = 0;
		}
		pthread_mutex_unlock(&r->lock);
	}
	if (err) {
		ccom_set_last_error("%s: invalid reduction op %d (neither built in nor a live op of ccomRedOpCreatePreMulSum on this communicator)",
				    fn, (int)op->op);
		return err;
	}
	if (s.dtype != op->dtype) {
		ccom_set_last_error("%s: the PreMulSum op %d was created for %s but the call's datatype is %s; create one op per datatype",
				    fn, (int)op->op, ccom_dtype_name(s.dtype), ccom_dtype_name(op->dtype));
		return -EINVAL;
	}
	op->op = ccomSum;
	op->premul = true;
	op->premul_ptr = s.residence == ccomScalarDevice ? s.ptr : NULL;
	op->premul_val = s.val;
	return 0;
}

/* This rank's premultiplied input goes to the op's own scratch (cs->premul_tmp). */
static char *premul_scratch(struct ccom_coll_state *cs, size_t bytes)
{
	char *n;

	if (bytes <= cs->premul_tmp_size)
		return cs->premul_tmp;
	n = realloc(cs->premul_tmp, bytes);
	if (!n)
		return NULL;
	cs->premul_tmp = n;
	cs->premul_tmp_size = bytes;
	return n;
}

/*
 * On the progress thread, before the algorithm: dst = sendbuff * scalar,
 * and the op becomes a sum of dst.  AllReduce and the root of Reduce write
 * into their own output (it is overwritten anyway: the op then runs in
 * place); the other cases into the scratch, so that no input the caller
 * still owns is changed.
 */
int ccom_premul_prepare(struct ccomComm *comm, struct ccom_op *op)
{
	size_t n = op->count * (op->kind == CCOM_COLL_REDUCESCATTER ? (size_t)comm->nranks : 1);
	const void *scalar = op->premul_ptr ? op->premul_ptr : (const void *)&op->premul_val;
	char *dst;

	if (!op->premul || !n)
		return 0;
	if (op->kind == CCOM_COLL_ALLREDUCE ||
	    (op->kind == CCOM_COLL_REDUCE && op->root == comm->rank))
		dst = op->recvbuff;
	else
		dst = premul_scratch(comm->coll, n * ccom_dtype_size(op->dtype));
	if (!dst) {
		ccom_set_last_error("rank %d: %s with a PreMulSum op: out of memory for the %zu premultiplied bytes",
				    comm->rank, ccom_coll_kind_name(op->kind),
				    n * ccom_dtype_size(op->dtype));
		return -ENOMEM;
	}
	ccom_premul(dst, op->sendbuff, n, op->dtype, scalar);
	op->sendbuff = dst;
	return 0;
}
