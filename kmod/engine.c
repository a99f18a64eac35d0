// SPDX-License-Identifier: GPL-2.0
/*
 * nccom progress engine: kernel threads per virtual device, each serving its
 * queues round-robin with a bounded amount of work per queue per turn, and
 * the execution of single descriptors (validation, handle lookup, COPY,
 * REDUCE, SEM_SIGNAL, SEM_WAIT).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/overflow.h>

#include "nccom_private.h"

#define NCCOM_CHUNK		(64 * 1024)	/* bytes per region lock hold */
#define NCCOM_REDUCE_CHUNK	4096		/* bytes per FPU section */

/* Per-engine bounce buffers for reductions; only the engine touches them. */
struct nccom_bounce {
	u8 a[NCCOM_REDUCE_CHUNK];
	u8 b[NCCOM_REDUCE_CHUNK];
};

void nccom_engine_kick(struct nccom_engine *eng)
{
	atomic_inc(&eng->kick);
	wake_up(&eng->wq);
}

void nccom_engines_kick_all(void)
{
	unsigned int d, e;

	for (d = 0; d < nccom_ndevs; d++)
		for (e = 0; e < nccom_devs[d].nengines; e++)
			nccom_engine_kick(&nccom_devs[d].engines[e]);
}

void nccom_engine_add_queue(struct nccom_engine *eng, struct nccom_queue *q)
{
	spin_lock(&eng->lock);
	list_add_tail(&q->eng_node, &eng->queues);
	eng->nqueues++;
	spin_unlock(&eng->lock);
}

void nccom_engine_del_queue(struct nccom_engine *eng, struct nccom_queue *q)
{
	spin_lock(&eng->lock);
	if (!list_empty(&q->eng_node)) {
		list_del_init(&q->eng_node);
		eng->nqueues--;
	}
	spin_unlock(&eng->lock);
}

/* Rotate the list: the first queue goes to the tail and is returned. */
static struct nccom_queue *nccom_engine_next(struct nccom_engine *eng)
{
	struct nccom_queue *q;

	spin_lock(&eng->lock);
	q = list_first_entry_or_null(&eng->queues, struct nccom_queue,
				     eng_node);
	if (q) {
		list_move_tail(&q->eng_node, &eng->queues);
		refcount_inc(&q->obj.users);
	}
	spin_unlock(&eng->lock);
	return q;
}

static bool nccom_engine_pass(struct nccom_engine *eng)
{
	unsigned int i, n;
	bool progress = false;

	spin_lock(&eng->lock);
	n = eng->nqueues;
	spin_unlock(&eng->lock);
	for (i = 0; i < n; i++) {
		struct nccom_queue *q = nccom_engine_next(eng);

		if (!q)
			break;
		progress |= nccom_queue_run(q);
		nccom_obj_put(&q->obj);
		cond_resched();
	}
	return progress;
}

static int nccom_engine_thread(void *data)
{
	struct nccom_engine *eng = data;

	while (!kthread_should_stop()) {
		int seq = atomic_read(&eng->kick);

		if (nccom_engine_pass(eng))
			continue;
		wait_event_idle(eng->wq,
				atomic_read(&eng->kick) != seq || kthread_should_stop());
	}
	return 0;
}

int nccom_engines_start(void)
{
	unsigned int d, e;

	for (d = 0; d < nccom_ndevs; d++) {
		struct nccom_dev *ndev = &nccom_devs[d];

		for (e = 0; e < ndev->nengines; e++) {
			struct nccom_engine *eng = &ndev->engines[e];
			struct task_struct *t;

			eng->ndev = ndev;
			spin_lock_init(&eng->lock);
			INIT_LIST_HEAD(&eng->queues);
			init_waitqueue_head(&eng->wq);
			t = kthread_create_on_node(nccom_engine_thread, eng,
						   ndev->numa_node,
						   "nccom/%u:%u", d, e);
			if (IS_ERR(t)) {
				nccom_engines_stop();
				return PTR_ERR(t);
			}
			eng->thread = t;
			wake_up_process(t);
		}
	}
	return 0;
}

void nccom_engines_stop(void)
{
	unsigned int d, e;

	for (d = 0; d < nccom_ndevs; d++) {
		for (e = 0; e < nccom_devs[d].nengines; e++) {
			struct nccom_engine *eng = &nccom_devs[d].engines[e];

			if (eng->thread)
				kthread_stop(eng->thread);
			eng->thread = NULL;
		}
	}
}

void nccom_cur_release(struct nccom_cur *cur)
{
	if (cur->dst)
		nccom_obj_put(&cur->dst->obj);
	if (cur->src)
		nccom_obj_put(&cur->src->obj);
	if (cur->src2)
		nccom_obj_put(&cur->src2->obj);
	if (cur->sem)
		nccom_obj_put(&cur->sem->obj);
	memset(cur, 0, sizeof(*cur));
}

/* Look up a memory handle and check access and range. */
static int nccom_get_mem(struct nccom_queue *q, u32 id, u32 access, u64 off,
			 u64 len, struct nccom_mem **out)
{
	struct nccom_object *obj = nccom_obj_get(q->obj.ctx, id, NCCOM_OBJ_MEM);
	struct nccom_mem *mem;
	u64 end;

	if (IS_ERR(obj))
		return PTR_ERR(obj);
	mem = to_nccom_mem(obj);
	*out = mem;
	if ((mem->access & access) != access)
		return -EACCES;
	if (check_add_overflow(off, len, &end) || end > mem->length)
		return -EOVERFLOW;
	return 0;
}

static int nccom_prepare_sem(struct nccom_queue *q, struct nccom_cur *cur)
{
	const struct nccom_desc *d = &cur->desc;
	struct nccom_object *obj;

	if (d->src_handle || d->src2_handle || d->dst_offset ||
	    d->src_offset || d->src2_offset || d->dtype || d->op)
		return -EINVAL;
	obj = nccom_obj_get(q->obj.ctx, d->sem_handle, NCCOM_OBJ_SEM);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cur->sem = to_nccom_sem(obj);
	return 0;
}

static int nccom_prepare_mem(struct nccom_queue *q, struct nccom_cur *cur)
{
	const struct nccom_desc *d = &cur->desc;
	u64 len = d->length;
	int ret;

	if (d->opcode == NCCOM_OP_COPY) {
		if (d->dtype || d->op || d->src2_handle || d->src2_offset)
			return -EINVAL;
	} else {
		if (d->dtype >= NCCOM_DTYPE_COUNT || d->op >= NCCOM_REDOP_COUNT)
			return -EINVAL;
		if (!d->src2_handle && d->src2_offset)
			return -EINVAL;
		if (check_mul_overflow(d->count, (u64)nccom_dtype_size(d->dtype),
				       &len))
			return -EOVERFLOW;
	}
	ret = nccom_get_mem(q, d->dst_handle, NCCOM_MEM_WRITE, d->dst_offset,
			    len, &cur->dst);
	if (ret)
		return ret;
	ret = nccom_get_mem(q, d->src_handle, NCCOM_MEM_READ, d->src_offset,
			    len, &cur->src);
	if (ret || !d->src2_handle)
		return ret;
	return nccom_get_mem(q, d->src2_handle, NCCOM_MEM_READ, d->src2_offset,
			     len, &cur->src2);
}

/**
 * nccom_exec_prepare() - validate a fetched descriptor and take references
 * @q: the queue, run_lock held
 * @cur: holds the private copy of the descriptor
 *
 * Return: 0 (cur is valid) or the negative errno to complete it with; on
 * error every reference taken is dropped again.
 */
int nccom_exec_prepare(struct nccom_queue *q, struct nccom_cur *cur)
{
	const struct nccom_desc *d = &cur->desc;
	int ret;

	lockdep_assert_held(&q->run_lock);
	cur->done = 0;
	if (d->flags || d->__reserved0 || d->__reserved1)
		ret = -EINVAL;
	else if (d->opcode == NCCOM_OP_NOP)
		ret = (d->dst_handle || d->src_handle || d->src2_handle ||
		       d->dst_offset || d->src_offset || d->src2_offset ||
		       d->length || d->dtype || d->op) ? -EINVAL : 0;
	else if (d->opcode == NCCOM_OP_COPY || d->opcode == NCCOM_OP_REDUCE)
		ret = nccom_prepare_mem(q, cur);
	else if (d->opcode == NCCOM_OP_SEM_SIGNAL ||
		 d->opcode == NCCOM_OP_SEM_WAIT)
		ret = nccom_prepare_sem(q, cur);
	else
		ret = -EINVAL;
	if (ret) {
		struct nccom_desc copy = *d;

		nccom_cur_release(cur);
		cur->desc = copy;
		return ret;
	}
	cur->valid = true;
	return 0;
}

static int nccom_cmp_ptr(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Lock the regions of a descriptor in address order (no ABBA between two
 * engines) and check that none was invalidated (-EFAULT) or needs a
 * revalidation (-ESTALE).
 */
static int nccom_lock_regions(struct nccom_region **r, unsigned int n)
{
	unsigned int i, j;

	sort(r, n, sizeof(*r), nccom_cmp_ptr, NULL);
	for (i = 0; i < n; i++) {
		if (i && r[i] == r[i - 1])
			continue;
		down_read_nested(&r[i]->lock, i);
	}
	for (j = 0; j < n; j++)
		if (r[j]->dead)
			return -EFAULT;
	for (j = 0; j < n; j++)
		if (r[j]->stale)
			return -ESTALE;
	return 0;
}

/* Called with no region locked. */
static int nccom_revalidate_regions(struct nccom_region **r, unsigned int n)
{
	unsigned int j;
	int ret;

	for (j = 0; j < n; j++) {
		if (!READ_ONCE(r[j]->stale))
			continue;
		ret = nccom_region_revalidate(r[j]);
		if (ret)
			return ret;
	}
	return 0;
}

static void nccom_unlock_regions(struct nccom_region **r, unsigned int n)
{
	unsigned int i;

	for (i = n; i-- > 0;) {
		if (i && r[i] == r[i - 1])
			continue;
		up_read(&r[i]->lock);
	}
}

/* Copy up to NCCOM_CHUNK bytes page by page; regions are locked. */
static void nccom_copy_chunk(struct nccom_mem *dst, u64 doff,
			     struct nccom_mem *src, u64 soff, u64 len)
{
	while (len) {
		size_t slen = len, dlen;
		void *s = nccom_region_map(src->region, src->offset + soff, &slen);
		void *dp;

		dlen = slen;
		dp = nccom_region_map(dst->region, dst->offset + doff, &dlen);
		nccom_copy(dp, s, dlen);
		nccom_region_unmap(dst->region, dp);
		nccom_region_unmap(src->region, s);
		soff += dlen;
		doff += dlen;
		len -= dlen;
	}
}

/* Copy between a region window and a kernel buffer; regions are locked. */
static void nccom_bounce_rw(struct nccom_mem *mem, u64 off, void *buf,
			    size_t len, bool to_region)
{
	while (len) {
		size_t n = len;
		void *p = nccom_region_map(mem->region, mem->offset + off, &n);

		if (to_region)
			nccom_copy(p, buf, n);
		else
			nccom_copy(buf, p, n);
		nccom_region_unmap(mem->region, p);
		off += n;
		buf += n;
		len -= n;
	}
}

/* One bounce-buffered piece (at most NCCOM_REDUCE_CHUNK bytes). */
static void nccom_reduce_bounce(struct nccom_cur *cur, struct nccom_bounce *bb,
				u64 done, size_t len)
{
	const struct nccom_desc *d = &cur->desc;
	size_t n = len / nccom_dtype_size(d->dtype);

	nccom_bounce_rw(cur->src, d->src_offset + done, bb->a, len, false);
	if (cur->src2)
		nccom_bounce_rw(cur->src2, d->src2_offset + done, bb->b, len,
				false);
	else
		nccom_bounce_rw(cur->dst, d->dst_offset + done, bb->b, len,
				false);
	nccom_reduce(d->dtype, d->op, bb->b, bb->a, n);
	nccom_bounce_rw(cur->dst, d->dst_offset + done, bb->b, len, true);
}

static bool nccom_overlap(const void *a, const void *b, size_t len)
{
	return a < b + len && b < a + len;
}

/*
 * Reduce one piece directly on the mapped pages, without bounce buffers:
 * dst = src op dst, or dst = src op src2, in one pass (nccom_reduce3()).
 * The operands' kernel addresses decide aliasing: dst may be src or src2
 * itself; any other overlap goes through the bounce buffers, which read
 * every operand before writing. Returns the bytes done (a multiple of the
 * element size, at most NCCOM_REDUCE_CHUNK).
 */
static size_t nccom_reduce_piece(struct nccom_cur *cur,
				 struct nccom_bounce *bb, u64 done, size_t len)
{
	const struct nccom_desc *d = &cur->desc;
	size_t esz = nccom_dtype_size(d->dtype);
	size_t slen = min_t(size_t, len, NCCOM_REDUCE_CHUNK), dlen, s2len;
	void *s, *dp, *s2 = NULL;
	bool bounce;

	s = nccom_region_map(cur->src->region,
			     cur->src->offset + d->src_offset + done, &slen);
	dlen = slen;
	dp = nccom_region_map(cur->dst->region,
			      cur->dst->offset + d->dst_offset + done, &dlen);
	if (cur->src2) {
		s2len = dlen;
		s2 = nccom_region_map(cur->src2->region,
				      cur->src2->offset + d->src2_offset + done,
				      &s2len);
		dlen = s2len;
	}
	/* Pieces end at page boundaries, which are element boundaries here. */
	dlen = rounddown(dlen, esz);
	bounce = !dlen || (dp != s && nccom_overlap(dp, s, dlen));
	if (s2)
		bounce |= dp != s2 && nccom_overlap(dp, s2, dlen);
	if (!dlen)
		dlen = esz;
	if (!bounce)
		nccom_reduce3(d->dtype, d->op, dp, s, s2 ? s2 : dp, dlen / esz);
	if (s2)
		nccom_region_unmap(cur->src2->region, s2);
	nccom_region_unmap(cur->dst->region, dp);
	nccom_region_unmap(cur->src->region, s);
	if (bounce)
		nccom_reduce_bounce(cur, bb, done, dlen);
	return dlen;
}

/*
 * Reduce up to NCCOM_CHUNK bytes; regions are locked. Every operand
 * naturally aligned in its region (the usual case) works page piece by
 * page piece in place; otherwise an element may straddle a page boundary
 * and every piece goes through the bounce buffers.
 */
static void nccom_reduce_chunk(struct nccom_cur *cur, struct nccom_bounce *bb,
			       u64 done, size_t len)
{
	const struct nccom_desc *d = &cur->desc;
	size_t esz = nccom_dtype_size(d->dtype), n;
	bool aligned;

	aligned = !((cur->src->offset + d->src_offset) % esz) &&
		  !((cur->dst->offset + d->dst_offset) % esz) &&
		  (!cur->src2 || !((cur->src2->offset + d->src2_offset) % esz));
	while (len) {
		if (aligned) {
			n = nccom_reduce_piece(cur, bb, done, len);
		} else {
			n = min_t(size_t, len, NCCOM_REDUCE_CHUNK);
			nccom_reduce_bounce(cur, bb, done, n);
		}
		done += n;
		len -= n;
	}
}

static int nccom_step_mem(struct nccom_queue *q, struct nccom_cur *cur,
			  u64 *budget)
{
	const struct nccom_desc *d = &cur->desc;
	bool reduce = d->opcode == NCCOM_OP_REDUCE;
	u64 total = reduce ? d->count * nccom_dtype_size(d->dtype) : d->length;
	size_t esz = reduce ? nccom_dtype_size(d->dtype) : 1;
	struct nccom_region *r[3];
	struct nccom_bounce *bb = NULL;
	unsigned int n = 0, retries = 0;
	int ret = 0;

	if (reduce) {
		bb = nccom_should_fail() ? NULL : kmalloc(sizeof(*bb), GFP_KERNEL);
		if (!bb)
			return -ENOMEM;
	}
	while (cur->done < total && *budget) {
		u64 left = total - cur->done;
		size_t len = min3(left, (u64)NCCOM_CHUNK, *budget);

		len = max_t(size_t, rounddown(len, esz), esz);
		n = 0;
		r[n++] = cur->dst->region;
		r[n++] = cur->src->region;
		if (cur->src2)
			r[n++] = cur->src2->region;
		ret = nccom_lock_regions(r, n);
		if (!ret && reduce)
			nccom_reduce_chunk(cur, bb, cur->done, len);
		else if (!ret)
			nccom_copy_chunk(cur->dst, d->dst_offset + cur->done,
					 cur->src, d->src_offset + cur->done, len);
		nccom_unlock_regions(r, n);
		if (ret == -ESTALE) {
			ret = retries++ < 4 ? nccom_revalidate_regions(r, n) : -EFAULT;
			if (!ret)
				continue;
		}
		if (ret)
			break;
		cur->done += len;
		atomic64_add(len, &q->ndev->bytes);
		*budget -= min_t(u64, *budget, len);
		cond_resched();
	}
	kfree(bb);
	if (ret)
		return ret;
	return cur->done < total ? -EAGAIN : 0;
}

/**
 * nccom_exec_step() - run a prepared descriptor for at most @budget bytes
 * @q: the queue, run_lock held
 * @cur: the prepared descriptor
 * @budget: bytes left in this turn, decremented
 *
 * Return: 0 or -errno when the descriptor is finished, -EAGAIN when it must
 * continue in a later turn (out of budget, or parked on a semaphore).
 */
int nccom_exec_step(struct nccom_queue *q, struct nccom_cur *cur, u64 *budget)
{
	const struct nccom_desc *d = &cur->desc;

	lockdep_assert_held(&q->run_lock);
	switch (d->opcode) {
	case NCCOM_OP_COPY:
	case NCCOM_OP_REDUCE:
		return nccom_step_mem(q, cur, budget);
	case NCCOM_OP_SEM_SIGNAL:
		return nccom_sem_core_signal(cur->sem->core, d->value);
	case NCCOM_OP_SEM_WAIT:
		return nccom_sem_core_poll(cur->sem->core, d->value);
	default:
		return 0;
	}
}
