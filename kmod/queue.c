// SPDX-License-Identifier: GPL-2.0
/*
 * nccom queues: the mmap'd submission/completion rings, the doorbell, the
 * error state machine (ACTIVE -> ERROR on a failing descriptor, back with
 * RESET) and the per-queue execution loop the engine calls.
 *
 * The user owns sq_tail and cq_head in the shared header; the kernel keeps
 * its own copies of sq_head and cq_tail and only ever writes those to the
 * header, so nothing the user scribbles over can confuse it. Each descriptor
 * is copied out of the ring once and only the copy is validated and used.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "nccom_private.h"

/* The turn_bytes module parameter (main.c): the budget of nccom_queue_run(). */
unsigned int nccom_turn_bytes = 256 * 1024;

/*
 * The doorbell_bytes module parameter (main.c): the budget a doorbell runs
 * in the caller's context before it wakes the engine (0: never).
 */
unsigned int nccom_doorbell_bytes = 4096;

static const struct nccom_obj_ops nccom_queue_ops;

#define NCCOM_TURN_DESCS 64
#define NCCOM_DOORBELL_DESCS 16

static size_t nccom_ring_size(u32 depth, u32 *sq_off, u32 *cq_off)
{
	*sq_off = ALIGN(sizeof(struct nccom_ring_hdr), 64);
	*cq_off = *sq_off + depth * sizeof(struct nccom_desc);
	return PAGE_ALIGN(*cq_off + depth * sizeof(struct nccom_cqe));
}

static void nccom_ring_release(struct kref *kref)
{
	struct nccom_ring *ring = container_of(kref, struct nccom_ring, kref);

	vfree(ring->mem);
	kfree(ring);
}

static void nccom_ring_put(struct nccom_ring *ring)
{
	kref_put(&ring->kref, nccom_ring_release);
}

static int nccom_queue_init_ring(struct nccom_queue *q, u32 depth)
{
	struct nccom_ring_hdr *hdr;
	u32 sq_off, cq_off;
	size_t size = nccom_ring_size(depth, &sq_off, &cq_off);

	if (nccom_should_fail())
		return -ENOMEM;
	q->ring = kzalloc(sizeof(*q->ring), GFP_KERNEL_ACCOUNT);
	if (!q->ring)
		return -ENOMEM;
	q->ring->mem = nccom_should_fail() ? NULL : vmalloc_user(size);
	if (!q->ring->mem) {
		kfree(q->ring);
		return -ENOMEM;
	}
	kref_init(&q->ring->kref);
	q->ring->size = size;
	hdr = q->ring->mem;
	hdr->magic = NCCOM_RING_MAGIC;
	hdr->version = NCCOM_RING_VERSION;
	hdr->depth = depth;
	hdr->mask = depth - 1;
	hdr->sq_offset = sq_off;
	hdr->cq_offset = cq_off;
	q->hdr = hdr;
	q->sq = q->ring->mem + sq_off;
	q->cq = q->ring->mem + cq_off;
	q->depth = depth;
	q->mask = depth - 1;
	return 0;
}

static struct nccom_queue *nccom_queue_get(struct nccom_ctx *ctx, u32 id)
{
	struct nccom_object *obj = nccom_obj_get(ctx, id, NCCOM_OBJ_QUEUE);

	return IS_ERR(obj) ? ERR_CAST(obj) : to_nccom_queue(obj);
}

int nccom_ioctl_queue_create(struct nccom_ucmd *ucmd)
{
	struct nccom_queue_create *cmd = ucmd->cmd;
	struct nccom_queue *q;
	struct nccom_dev *ndev;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (cmd->dev_index >= nccom_ndevs || cmd->depth < 2 ||
	    cmd->depth > NCCOM_MAX_DEPTH || !is_power_of_2(cmd->depth))
		return -EINVAL;
	ndev = &nccom_devs[cmd->dev_index];
	q = nccom_obj_alloc(ucmd->ctx, sizeof(*q), &nccom_queue_ops);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = nccom_queue_init_ring(q, cmd->depth);
	if (ret)
		goto err_abort;
	mutex_init(&q->run_lock);
	init_waitqueue_head(&q->cq_wq);
	INIT_LIST_HEAD(&q->eng_node);
	q->ndev = ndev;
	q->eng = &ndev->engines[atomic_inc_return(&ndev->next_engine) %
				ndev->nengines];
	cmd->out_handle = q->obj.id;
	cmd->out_sq_offset = q->hdr->sq_offset;
	cmd->out_cq_offset = q->hdr->cq_offset;
	cmd->out_mmap_offset = (u64)q->obj.id << NCCOM_MMAP_SHIFT;
	cmd->out_mmap_size = q->ring->size;
	ret = nccom_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret)
		goto err_free_ring;
	atomic_inc(&ndev->nqueues);
	nccom_engine_add_queue(q->eng, q);
	nccom_obj_finalize(&q->obj);
	return 0;

err_free_ring:
	nccom_ring_put(q->ring);
err_abort:
	nccom_obj_abort(&q->obj);
	return ret;
}

static void nccom_vm_open(struct vm_area_struct *vma)
{
	struct nccom_ring *ring = vma->vm_private_data;

	kref_get(&ring->kref);
}

static void nccom_vm_close(struct vm_area_struct *vma)
{
	nccom_ring_put(vma->vm_private_data);
}

static const struct vm_operations_struct nccom_vm_ops = {
	.open = nccom_vm_open,
	.close = nccom_vm_close,
};

/* The mapping holds its own ring reference: the ring outlives the handle. */
int nccom_queue_mmap(struct nccom_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long pg_shift = NCCOM_MMAP_SHIFT - PAGE_SHIFT;
	struct nccom_queue *q;
	int ret;

	if ((vma->vm_pgoff & ((1UL << pg_shift) - 1)) ||
	    (vma->vm_pgoff >> pg_shift) > U32_MAX)
		return -EINVAL;
	q = nccom_queue_get(ctx, vma->vm_pgoff >> pg_shift);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = -EINVAL;
	if (vma->vm_end - vma->vm_start != q->ring->size ||
	    !(vma->vm_flags & VM_SHARED))
		goto out_put;
	ret = remap_vmalloc_range(vma, q->ring->mem, 0);
	if (ret)
		goto out_put;
	vma->vm_private_data = q->ring;
	vma->vm_ops = &nccom_vm_ops;
	kref_get(&q->ring->kref);
out_put:
	nccom_obj_put(&q->obj);
	return ret;
}

/*
 * Publish one completion; the caller checked that a slot is free. A failure
 * other than a cancellation puts the queue into the error state.
 */
static void nccom_queue_complete_locked(struct nccom_queue *q, u64 cookie,
					int status)
{
	struct nccom_cqe *cqe = &q->cq[q->cq_tail & q->mask];

	lockdep_assert_held(&q->run_lock);
	WRITE_ONCE(cqe->cookie, cookie);
	WRITE_ONCE(cqe->status, status);
	WRITE_ONCE(cqe->__reserved, 0);
	q->cq_tail++;
	q->completed++;
	atomic64_inc(&q->ndev->completed);
	/* Pairs with the user's load-acquire of cq_tail. */
	smp_store_release(&q->hdr->cq_tail, q->cq_tail);
	if (status && status != -ECANCELED) {
		q->state = NCCOM_QUEUE_ERROR;
		q->error = status;
		q->error_cookie = cookie;
		WRITE_ONCE(q->hdr->error, status);
		WRITE_ONCE(q->hdr->state, NCCOM_QUEUE_ERROR);
		nccom_nl_queue_error(q, status);
		nccom_dbg("queue %u: descriptor %llu failed: %d\n",
			  q->obj.id, cookie, status);
	}
	wake_up_all(&q->cq_wq);
}

/* Fatal ring corruption by the user: enter the error state. */
static void nccom_queue_fail_locked(struct nccom_queue *q, int status)
{
	lockdep_assert_held(&q->run_lock);
	q->state = NCCOM_QUEUE_ERROR;
	q->error = status;
	q->error_cookie = 0;
	WRITE_ONCE(q->hdr->error, status);
	WRITE_ONCE(q->hdr->state, NCCOM_QUEUE_ERROR);
	nccom_nl_queue_error(q, status);
	wake_up_all(&q->cq_wq);
	nccom_warn_rl("queue %u: ring indices corrupted by the user (%d); reset the queue\n",
		      q->obj.id, status);
}

/*
 * Fetch the next descriptor if there is one and a completion slot for it.
 * Return: 1 fetched, 0 nothing to do, negative on ring corruption.
 */
static int nccom_queue_fetch_locked(struct nccom_queue *q,
				    struct nccom_desc *desc)
{
	u32 tail, cq_head;

	/* Pairs with the user's store-release of sq_tail. */
	tail = smp_load_acquire(&q->hdr->sq_tail);
	/* Pairs with the user's store-release of cq_head. */
	cq_head = smp_load_acquire(&q->hdr->cq_head);

	if (tail == q->sq_head)
		return 0;
	if (tail - q->sq_head > q->depth || q->cq_tail - cq_head > q->depth)
		return -EOVERFLOW;
	q->cq_full = q->cq_tail - cq_head == q->depth;
	if (q->cq_full)
		return 0;	/* wait for the user: QUEUE_WAIT/DOORBELL kick */
	memcpy(desc, &q->sq[q->sq_head & q->mask], sizeof(*desc));
	q->sq_head++;
	/* Tells the user the slot may be reused. */
	smp_store_release(&q->hdr->sq_head, q->sq_head);
	return 1;
}

/*
 * Run descriptors in order until the queue is empty, parked on a
 * semaphore, in error, or @budget bytes / @max_descs descriptors are used.
 * Return: true if any progress was made.
 */
static bool nccom_queue_run_locked(struct nccom_queue *q, u64 budget,
				   unsigned int max_descs)
{
	struct nccom_cur *cur = &q->cur;
	unsigned int descs = 0;
	bool progress = false;
	int ret;

	lockdep_assert_held(&q->run_lock);
	while (!q->dying && q->state == NCCOM_QUEUE_ACTIVE &&
	       descs < max_descs && budget) {
		if (!cur->valid) {
			ret = nccom_queue_fetch_locked(q, &cur->desc);
			if (ret < 0)
				nccom_queue_fail_locked(q, ret);
			if (ret <= 0)
				break;
			progress = true;
			if (q->discard) {
				q->discard--;
				nccom_queue_complete_locked(q, cur->desc.cookie,
							    -ECANCELED);
				descs++;
				continue;
			}
			ret = nccom_exec_prepare(q, cur);
			if (ret) {
				nccom_queue_complete_locked(q, cur->desc.cookie, ret);
				descs++;
				continue;
			}
		}
		ret = nccom_exec_step(q, cur, &budget);
		if (ret == -EAGAIN)
			break;	/* parked or out of budget */
		progress = true;
		nccom_queue_complete_locked(q, cur->desc.cookie, ret);
		nccom_cur_release(cur);
		descs++;
	}
	if (cur->valid && cur->done)
		progress = true;
	return progress;
}

/**
 * nccom_queue_run() - execute a queue for one engine turn
 * @q: the queue; called by its engine with no locks held
 *
 * Runs descriptors in order until the queue is empty, parked on a
 * semaphore, in error, or the turn's byte/descriptor budget is used.
 * Return: true if any progress was made.
 */
bool nccom_queue_run(struct nccom_queue *q)
{
	bool progress;

	mutex_lock(&q->run_lock);
	progress = nccom_queue_run_locked(q, max(READ_ONCE(nccom_turn_bytes), 4096U),
					  NCCOM_TURN_DESCS);
	mutex_unlock(&q->run_lock);
	return progress;
}

/*
 * A doorbell first runs a short batch itself (the registration cache's
 * 1-byte probes, a small collective's semaphore steps): waking the engine
 * thread and waiting for it to be scheduled costs more than the work, and
 * the caller would only wait for it.  Return: true when nothing is left
 * for the engine (the submission ring is empty, no descriptor in flight).
 */
static bool nccom_queue_run_inline(struct nccom_queue *q)
{
	unsigned int bytes = READ_ONCE(nccom_doorbell_bytes);
	bool idle;

	if (!bytes || !mutex_trylock(&q->run_lock))
		return false;	/* off, or the engine is running it: kick it */
	nccom_queue_run_locked(q, bytes, NCCOM_DOORBELL_DESCS);
	idle = q->state == NCCOM_QUEUE_ACTIVE && !q->cur.valid;
	/* Pairs with the user's store-release of sq_tail. */
	if (idle && smp_load_acquire(&q->hdr->sq_tail) != q->sq_head)
		idle = false;
	mutex_unlock(&q->run_lock);
	return idle;
}

int nccom_ioctl_queue_doorbell(struct nccom_ucmd *ucmd)
{
	struct nccom_queue_doorbell *cmd = ucmd->cmd;
	struct nccom_queue *q;
	int ret = 0;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	q = nccom_queue_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(q))
		return PTR_ERR(q);
	if (READ_ONCE(q->state) != NCCOM_QUEUE_ACTIVE)
		ret = -EIO;
	else if (!nccom_queue_run_inline(q))
		nccom_engine_kick(q->eng);
	nccom_obj_put(&q->obj);
	return ret;
}

int nccom_ioctl_queue_get_state(struct nccom_ucmd *ucmd)
{
	struct nccom_queue_get_state *cmd = ucmd->cmd;
	struct nccom_queue *q;

	if (cmd->flags)
		return -EINVAL;
	q = nccom_queue_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(q))
		return PTR_ERR(q);
	mutex_lock(&q->run_lock);
	cmd->out_state = q->state;
	cmd->out_error = q->error;
	cmd->out_sq_head = q->sq_head;
	cmd->out_error_cookie = q->error_cookie;
	cmd->out_completed = q->completed;
	mutex_unlock(&q->run_lock);
	nccom_obj_put(&q->obj);
	return nccom_ucmd_respond(ucmd, sizeof(*cmd));
}

/**
 * nccom_queue_reset() - return a queue in the error state to active
 * @q: the queue (the caller holds a reference)
 * @discard: complete the descriptors still in the submission ring with
 *	-ECANCELED instead of running them
 *
 * Used by %NCCOM_IOC_QUEUE_RESET and by the netlink queue-reset operation.
 * Return: 0, or -EBUSY if the queue is not in the error state.
 */
int nccom_queue_reset(struct nccom_queue *q, bool discard)
{
	int ret = 0;

	mutex_lock(&q->run_lock);
	if (q->state != NCCOM_QUEUE_ERROR) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/* After corruption the user's cq_head may be anything: resync it. */
	if (q->cq_tail - READ_ONCE(q->hdr->cq_head) > q->depth)
		WRITE_ONCE(q->hdr->cq_head, q->cq_tail);
	if (READ_ONCE(q->hdr->sq_tail) - q->sq_head > q->depth) {
		q->sq_head = READ_ONCE(q->hdr->sq_tail);
		/* Pairs with the user's load-acquire of sq_head. */
		smp_store_release(&q->hdr->sq_head, q->sq_head);
	}
	/* The engine completes these with -ECANCELED as CQ space allows. */
	if (discard)
		q->discard = READ_ONCE(q->hdr->sq_tail) - q->sq_head;
	q->state = NCCOM_QUEUE_ACTIVE;
	q->error = 0;
	q->error_cookie = 0;
	WRITE_ONCE(q->hdr->error, 0);
	WRITE_ONCE(q->hdr->state, NCCOM_QUEUE_ACTIVE);
	nccom_engine_kick(q->eng);
out_unlock:
	mutex_unlock(&q->run_lock);
	return ret;
}

int nccom_ioctl_queue_reset(struct nccom_ucmd *ucmd)
{
	struct nccom_queue_reset *cmd = ucmd->cmd;
	struct nccom_queue *q;
	int ret;

	if ((cmd->flags & ~(u32)NCCOM_QUEUE_RESET_DISCARD) || cmd->__reserved)
		return -EINVAL;
	q = nccom_queue_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = nccom_queue_reset(q, cmd->flags & NCCOM_QUEUE_RESET_DISCARD);
	nccom_obj_put(&q->obj);
	return ret;
}

struct nccom_queue_waiter {
	struct nccom_queue *q;
	u32 seen;
};

static bool nccom_queue_wait_done(void *arg)
{
	struct nccom_queue_waiter *w = arg;

	return READ_ONCE(w->q->cq_tail) != w->seen ||
	       READ_ONCE(w->q->state) != NCCOM_QUEUE_ACTIVE ||
	       READ_ONCE(w->q->dying);
}

int nccom_ioctl_queue_wait(struct nccom_ucmd *ucmd)
{
	struct nccom_queue_wait *cmd = ucmd->cmd;
	struct nccom_queue_waiter w;
	struct nccom_queue *q;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	q = nccom_queue_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(q))
		return PTR_ERR(q);
	w.q = q;
	w.seen = cmd->cq_tail;
	/* The user may just have freed completion slots of a stalled queue. */
	if (READ_ONCE(q->cq_full))
		nccom_engine_kick(q->eng);
	ret = nccom_wait_deadline(&q->cq_wq, cmd->timeout_ns,
				  nccom_queue_wait_done, &w);
	cmd->out_cq_tail = READ_ONCE(q->cq_tail);
	nccom_obj_put(&q->obj);
	if (nccom_ucmd_respond(ucmd, sizeof(*cmd)))
		return -EFAULT;
	return ret;
}

/*
 * Quiesce: take the queue off its engine, wait for a running turn to end
 * (run_lock), then cancel the descriptor in flight. Descriptors still in the
 * submission ring are never executed.
 */
static void nccom_queue_destroy(struct nccom_object *obj)
{
	struct nccom_queue *q = to_nccom_queue(obj);

	nccom_engine_del_queue(q->eng, q);
	mutex_lock(&q->run_lock);
	q->dying = true;
	if (q->cur.valid) {
		nccom_queue_complete_locked(q, q->cur.desc.cookie, -ECANCELED);
		nccom_cur_release(&q->cur);
	}
	mutex_unlock(&q->run_lock);
	wake_up_all(&q->cq_wq);
	atomic_dec(&q->ndev->nqueues);
}

static void nccom_queue_free(struct nccom_object *obj)
{
	struct nccom_queue *q = to_nccom_queue(obj);

	mutex_destroy(&q->run_lock);
	nccom_ring_put(q->ring);
	kfree(q);
}

static const struct nccom_obj_ops nccom_queue_ops = {
	.type = NCCOM_OBJ_QUEUE,
	.destroy = nccom_queue_destroy,
	.free = nccom_queue_free,
};
