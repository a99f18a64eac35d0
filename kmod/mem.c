// SPDX-License-Identifier: GPL-2.0
/*
 * nccom memory: registration of user memory (long-term pins accounted
 * against RLIMIT_MEMLOCK on mm->pinned_vm), invalidation through an
 * mmu_interval_notifier, the refcounted region that backs registrations,
 * dma-buf exports and imports, and the memory handle object.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/capability.h>
#include <linux/hmm.h>

#include "nccom_private.h"

/* The max_reg_size module parameter (main.c); GET_INFO reports it. */
unsigned long nccom_max_reg_size = 1UL << 34;

static const struct nccom_obj_ops nccom_mem_ops;

#define NCCOM_PIN_BATCH 512

/*
 * Invalidation callback. Protection changes and soft-dirty updates keep the
 * same pages mapped (pinned pages are never write-protected for fork and
 * never migrated), so they leave the registration alone. Unmap (munmap,
 * mremap, MAP_FIXED over the range) and release (exit) mean the user's range
 * no longer maps the pinned pages: mark the region dead. Any other event
 * (MMU_NOTIFY_CLEAR: MADV_DONTNEED, but also the split of a pinned
 * transparent huge page at fork, which keeps the same pages) marks it stale:
 * the engine revalidates it against the page tables before the next use.
 * Both flags change under @lock, which the engine holds while touching the
 * pages, so no descriptor uses pages after their mapping went away.
 */
static bool nccom_region_invalidate(struct mmu_interval_notifier *mni,
				    const struct mmu_notifier_range *range,
				    unsigned long cur_seq)
{
	struct nccom_region *region =
		container_of(mni, struct nccom_region, notifier);

	if (range->event == MMU_NOTIFY_PROTECTION_VMA ||
	    range->event == MMU_NOTIFY_PROTECTION_PAGE ||
	    range->event == MMU_NOTIFY_SOFT_DIRTY ||
	    range->event == MMU_NOTIFY_MIGRATE)
		return true;

	/*
	 * Dead is final and its peers' mappings are already gone. Returning
	 * early also keeps the zap below from nesting into a dead region of
	 * the peer's own mm that overlaps a mapping of ours.
	 */
	if (READ_ONCE(region->dead))
		return true;
	if (mmu_notifier_range_blockable(range))
		down_write(&region->lock);
	else if (atomic_read(&region->nmaps) || !down_write_trylock(&region->lock))
		return false;	/* zapping peers' mappings may sleep */
	mmu_interval_set_seq(mni, cur_seq);
	if (range->event == MMU_NOTIFY_UNMAP ||
	    range->event == MMU_NOTIFY_RELEASE)
		region->dead = true;
	else
		region->stale = true;
	/* Peers must not keep reading pages the owner no longer maps. */
	nccom_region_zap_maps(region);
	up_write(&region->lock);
	return true;
}

static const struct mmu_interval_notifier_ops nccom_region_mn_ops = {
	.invalidate = nccom_region_invalidate,
};

static bool nccom_region_same_pages(struct nccom_region *region,
				    const unsigned long *pfns)
{
	unsigned long i;

	for (i = 0; i < region->npages; i++)
		if (!(pfns[i] & HMM_PFN_VALID) ||
		    hmm_pfn_to_page(pfns[i]) != region->pages[i])
			return false;
	return true;
}

/* One snapshot of the page tables; -EBUSY if an invalidation raced. */
static int nccom_region_check_once(struct nccom_region *region,
				   struct hmm_range *range)
{
	bool same;
	int ret;

	range->notifier_seq = mmu_interval_read_begin(&region->notifier);
	mmap_read_lock(region->mm);
	ret = hmm_range_fault(range);
	mmap_read_unlock(region->mm);
	if (ret == -EBUSY)
		return ret;
	same = !ret && nccom_region_same_pages(region, range->hmm_pfns);
	down_write(&region->lock);
	if (mmu_interval_read_retry(&region->notifier, range->notifier_seq)) {
		up_write(&region->lock);
		return -EBUSY;
	}
	if (same)
		region->stale = false;
	else
		region->dead = true;
	up_write(&region->lock);
	return same ? 0 : -EFAULT;
}

/**
 * nccom_region_revalidate() - check a stale region against the page tables
 * @region: the region
 *
 * Context: the engine thread, a registering process or a peer faulting on
 * a mapped grant; no locks held, not even the caller's mmap lock (this
 * takes the owner's). Snapshots the user's page tables
 * (hmm_range_fault() without faulting) and compares them with the pinned
 * pages: the same pages clear the stale flag, anything else marks the
 * region dead.
 * Return: 0 if usable, -EFAULT if dead or the check kept racing.
 */
int nccom_region_revalidate(struct nccom_region *region)
{
	struct hmm_range range = {
		.notifier = &region->notifier,
		.start = region->uaddr,
		.end = region->uaddr + region->length,
	};
	int tries, ret = -EFAULT;

	if (region->kind != NCCOM_REGION_PAGES)
		return 0;
	range.hmm_pfns = kvmalloc_array(region->npages, sizeof(unsigned long),
					GFP_KERNEL);
	if (!range.hmm_pfns)
		return -ENOMEM;
	if (!mmget_not_zero(region->mm))
		goto out_free;
	for (tries = 0; tries < 8; tries++) {
		ret = nccom_region_check_once(region, &range);
		if (ret != -EBUSY)
			break;
	}
	mmput(region->mm);
out_free:
	kvfree(range.hmm_pfns);
	return ret == -EBUSY ? -EFAULT : ret;
}

/**
 * nccom_account_pinned() - charge @npages long-term pins to RLIMIT_MEMLOCK
 * @mm: the pinning process's mm (its pinned_vm is charged)
 * @npages: pages about to be pinned
 *
 * Return: 0, or -ENOMEM over the limit without CAP_IPC_LOCK (logged).
 * Undo with atomic64_sub(npages, &mm->pinned_vm).
 */
int nccom_account_pinned(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 total;

	total = atomic64_add_return(npages, &mm->pinned_vm);
	if (total > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		nccom_warn_rl("pin of %lu pages over RLIMIT_MEMLOCK %lu: raise ulimit -l\n",
			      npages, limit);
		return -ENOMEM;
	}
	return 0;
}

static void nccom_unpin(struct nccom_region *region, unsigned long npinned)
{
	unpin_user_pages_dirty_lock(region->pages, npinned,
				    region->access & NCCOM_MEM_WRITE);
}

/*
 * Pin one batch. A read-only registration of writable memory is pinned for
 * write all the same: that breaks copy-on-write sharing (e.g. the shared zero
 * page of untouched anonymous memory) up front, so the owner's later writes
 * land in the pinned pages instead of replacing them. Only a mapping that
 * cannot be written (-EFAULT) is pinned for read.
 */
static int nccom_pin_batch(struct nccom_region *region, unsigned long done,
			   int batch)
{
	unsigned long addr = region->uaddr + done * PAGE_SIZE;
	int ret;

	if (nccom_should_fail())
		return -ENOMEM;
	ret = pin_user_pages_fast(addr, batch, FOLL_LONGTERM | FOLL_WRITE,
				  region->pages + done);
	if (ret == -EFAULT && !(region->access & NCCOM_MEM_WRITE))
		ret = pin_user_pages_fast(addr, batch, FOLL_LONGTERM,
					  region->pages + done);
	return ret ? ret : -EFAULT;
}

static int nccom_pin_pages(struct nccom_region *region)
{
	unsigned long done = 0;
	int ret;

	while (done < region->npages) {
		int batch = min_t(unsigned long, region->npages - done,
				  NCCOM_PIN_BATCH);

		ret = nccom_pin_batch(region, done, batch);
		if (ret < 0)
			goto err_unpin;
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}
	return 0;

err_unpin:
	nccom_unpin(region, done);
	return ret;
}

static struct nccom_region *nccom_region_alloc(u32 access, u64 length)
{
	struct nccom_region *region;

	if (nccom_should_fail())
		return NULL;
	region = kzalloc(sizeof(*region), GFP_KERNEL_ACCOUNT);
	if (!region)
		return NULL;
	kref_init(&region->kref);
	init_rwsem(&region->lock);
	INIT_LIST_HEAD(&region->exports);
	region->access = access;
	region->length = length;
	return region;
}

static struct nccom_region *nccom_region_pin(unsigned long uaddr, u64 length,
					     u32 access)
{
	struct mm_struct *mm = current->mm;
	struct nccom_region *region;
	int ret;

	region = nccom_region_alloc(access, length);
	if (!region)
		return ERR_PTR(-ENOMEM);
	region->kind = NCCOM_REGION_PAGES;
	region->uaddr = uaddr;
	region->npages = length >> PAGE_SHIFT;
	ret = -ENOMEM;
	if (nccom_should_fail())
		goto err_free_region;
	region->pages = kvmalloc_array(region->npages, sizeof(*region->pages),
				       GFP_KERNEL_ACCOUNT);
	if (!region->pages)
		goto err_free_region;
	ret = nccom_account_pinned(mm, region->npages);
	if (ret)
		goto err_free_pages;
	mmgrab(mm);
	region->mm = mm;
	/* Insert first: any later change of the range marks the region dead. */
	ret = mmu_interval_notifier_insert(&region->notifier, mm, uaddr, length,
					   &nccom_region_mn_ops);
	if (ret)
		goto err_unaccount;
	region->notifier_live = true;
	ret = nccom_pin_pages(region);
	if (ret)
		goto err_remove_notifier;
	/*
	 * Pinning for write breaks copy-on-write (the zero page a read
	 * mapped), which notifies the range we just inserted: see whether the
	 * pages we hold are still the ones mapped.
	 */
	if (region->stale && !region->dead)
		nccom_region_revalidate(region);
	if (region->dead) {
		/* The range changed while we pinned it. */
		ret = -EAGAIN;
		goto err_unpin;
	}
	atomic64_add(region->npages, &nccom_stats.pinned_pages);
	return region;

err_unpin:
	nccom_unpin(region, region->npages);
err_remove_notifier:
	mmu_interval_notifier_remove(&region->notifier);
err_unaccount:
	atomic64_sub(region->npages, &mm->pinned_vm);
	mmdrop(mm);
err_free_pages:
	kvfree(region->pages);
err_free_region:
	kfree(region);
	return ERR_PTR(ret);
}

static void nccom_region_release(struct kref *kref)
{
	struct nccom_region *region =
		container_of(kref, struct nccom_region, kref);

	if (region->kind == NCCOM_REGION_VMAP) {
		nccom_region_free_dmabuf(region);
	} else {
		if (region->notifier_live)
			mmu_interval_notifier_remove(&region->notifier);
		nccom_unpin(region, region->npages);
		atomic64_sub(region->npages, &region->mm->pinned_vm);
		atomic64_sub(region->npages, &nccom_stats.pinned_pages);
		mmdrop(region->mm);
		kvfree(region->pages);
	}
	kfree(region);
}

struct nccom_region *nccom_region_get(struct nccom_region *region)
{
	kref_get(&region->kref);
	return region;
}

void nccom_region_put(struct nccom_region *region)
{
	kref_put(&region->kref, nccom_region_release);
}

/**
 * nccom_region_map() - map part of a region for CPU access
 * @region: the region; the caller holds @region->lock and checked !dead
 * @off: byte offset into the region
 * @len: in: bytes wanted; out: bytes mapped (stops at a page boundary)
 *
 * Return: kernel address; undo with nccom_region_unmap() in LIFO order.
 */
void *nccom_region_map(struct nccom_region *region, u64 off, size_t *len)
{
	size_t in_page;

	lockdep_assert_held(&region->lock);
	if (region->kind == NCCOM_REGION_VMAP)
		return region->map.vaddr + off;
	in_page = offset_in_page(off);
	*len = min_t(size_t, *len, PAGE_SIZE - in_page);
	return kmap_local_page(region->pages[off >> PAGE_SHIFT]) + in_page;
}

void nccom_region_unmap(struct nccom_region *region, void *addr)
{
	if (region->kind == NCCOM_REGION_PAGES)
		kunmap_local(addr);
}

/**
 * nccom_mem_create() - create a memory handle for a window of a region
 * @ctx: file context
 * @region: the backing region; the handle takes its own reference
 * @access: &enum nccom_mem_flags, a subset of the region's
 * @offset: window start
 * @length: window length
 *
 * Return: the unpublished handle object (finalize or abort it) or ERR_PTR.
 */
struct nccom_mem *nccom_mem_create(struct nccom_ctx *ctx,
				   struct nccom_region *region, u32 access,
				   u64 offset, u64 length)
{
	struct nccom_mem *mem;

	mem = nccom_obj_alloc(ctx, sizeof(*mem), &nccom_mem_ops);
	if (IS_ERR(mem))
		return mem;
	mem->region = nccom_region_get(region);
	mem->access = access;
	mem->offset = offset;
	mem->length = length;
	return mem;
}

static int nccom_mem_register_check(struct nccom_mem_register *cmd)
{
	u64 end;

	if (cmd->__reserved || !cmd->flags ||
	    (cmd->flags & ~(u32)(NCCOM_MEM_READ | NCCOM_MEM_WRITE)))
		return -EINVAL;
	if (!cmd->length || !PAGE_ALIGNED(cmd->addr) ||
	    !PAGE_ALIGNED(cmd->length))
		return -EINVAL;
	if (cmd->length > READ_ONCE(nccom_max_reg_size))
		return -EINVAL;
	if (check_add_overflow(cmd->addr, cmd->length, &end) ||
	    end > TASK_SIZE)
		return -EOVERFLOW;
	if (!access_ok(u64_to_user_ptr(cmd->addr), cmd->length))
		return -EFAULT;
	return 0;
}

int nccom_ioctl_mem_register(struct nccom_ucmd *ucmd)
{
	struct nccom_mem_register *cmd = ucmd->cmd;
	struct nccom_region *region;
	struct nccom_mem *mem;
	int ret;

	ret = nccom_mem_register_check(cmd);
	if (ret) {
		nccom_dbg("MEM_REGISTER: bad arguments (%d)\n", ret);
		return ret;
	}
	region = nccom_region_pin(cmd->addr, cmd->length, cmd->flags);
	if (IS_ERR(region))
		return PTR_ERR(region);
	mem = nccom_mem_create(ucmd->ctx, region, cmd->flags, 0, cmd->length);
	nccom_region_put(region);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	mem->registration = true;
	atomic64_add(region->npages, &ucmd->ctx->pinned_pages);
	cmd->out_handle = mem->obj.id;
	ret = nccom_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret) {
		atomic64_sub(region->npages, &ucmd->ctx->pinned_pages);
		nccom_region_put(mem->region);
		nccom_obj_abort(&mem->obj);
		return ret;
	}
	nccom_obj_finalize(&mem->obj);
	return 0;
}

static void nccom_mem_destroy(struct nccom_object *obj)
{
	struct nccom_mem *mem = to_nccom_mem(obj);

	if (mem->registration)
		atomic64_sub(mem->region->npages, &obj->ctx->pinned_pages);
}

static void nccom_mem_free(struct nccom_object *obj)
{
	struct nccom_mem *mem = to_nccom_mem(obj);

	nccom_region_put(mem->region);
	kfree(mem);
}

static const struct nccom_obj_ops nccom_mem_ops = {
	.type = NCCOM_OBJ_MEM,
	.destroy = nccom_mem_destroy,
	.free = nccom_mem_free,
};
