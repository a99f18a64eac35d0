// SPDX-License-Identifier: GPL-2.0
/*
 * nccom mapped grants: a peer holding an nccom dma-buf mmap()s the owner's
 * pinned pages into its own address space and reads (or, if the grant says
 * so, writes) them directly, with no copy through the kernel per operation.
 * The PTEs are inserted on fault and zapped when the owner's range stops
 * mapping the pages (mem.c's notifier calls nccom_region_zap_maps()), so a
 * peer never reads a page the owner no longer sees: it gets SIGBUS instead.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/dma-buf.h>
#include <linux/fs.h>
#include <linux/mm.h>

#include "nccom_private.h"
#include "compat.h"

/**
 * nccom_region_zap_maps() - remove every peer's PTEs of a region
 * @region: a registration whose owner's range changed
 *
 * Context: the region's lock held, may sleep. The caller marked the region
 * dead or stale first, so the fault handler inserts no new PTE after this.
 */
void nccom_region_zap_maps(struct nccom_region *region)
{
	struct nccom_export *exp;

	lockdep_assert_held_write(&region->lock);
	list_for_each_entry(exp, &region->exports, node)
		if (exp->nvmas)
			unmap_mapping_range(exp->dmabuf->file->f_mapping,
					    0, 0, 1);
}

static void nccom_map_open(struct vm_area_struct *vma)
{
	struct nccom_export *exp = vma->vm_private_data;

	down_write(&exp->region->lock);
	exp->nvmas++;
	atomic_inc(&exp->region->nmaps);
	up_write(&exp->region->lock);
}

static void nccom_map_close(struct vm_area_struct *vma)
{
	struct nccom_export *exp = vma->vm_private_data;

	down_write(&exp->region->lock);
	exp->nvmas--;
	atomic_dec(&exp->region->nmaps);
	up_write(&exp->region->lock);
}

/*
 * A stale region may still hold the owner's pages: the kernel also reports
 * MMU_NOTIFY_CLEAR when it splits a huge page's PMD (the owner's madvise(),
 * mprotect() or fork() of part of it) or breaks copy-on-write of the zero
 * page while pinning. Check it against the owner's page tables before
 * giving up, with this fault's lock dropped: the check takes the owner's
 * mmap lock, and holding ours meanwhile could deadlock against an owner
 * that faults on a grant of ours. The fault is then retried once.
 */
static vm_fault_t nccom_map_fault_stale(struct vm_fault *vmf,
					struct nccom_region *region)
{
	if (!fault_flag_allow_retry_first(vmf->flags))
		return VM_FAULT_SIGBUS;
	if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
		return VM_FAULT_RETRY;
	nccom_region_get(region);
	nccom_release_fault_lock(vmf);
	nccom_region_revalidate(region);
	nccom_region_put(region);
	return VM_FAULT_RETRY;
}

/*
 * Inserts the PTE without the region's lock (allocating page tables under
 * it could recurse into the notifier through reclaim), then checks that no
 * invalidation ran meanwhile; if one did, the PTE may postdate its zap, so
 * remove it and look again.
 */
static vm_fault_t nccom_map_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nccom_export *exp = vma->vm_private_data;
	struct nccom_region *region = exp->region;
	unsigned long addr = vmf->address & PAGE_MASK;
	unsigned long seq;
	vm_fault_t ret;
	bool changed;

	if (vmf->pgoff >= region->npages)
		return VM_FAULT_SIGBUS;
	for (;;) {
		seq = mmu_interval_read_begin(&region->notifier);
		if (READ_ONCE(region->dead))
			return VM_FAULT_SIGBUS;
		if (READ_ONCE(region->stale))
			return nccom_map_fault_stale(vmf, region);
		ret = vmf_insert_pfn(vma, addr,
				     page_to_pfn(region->pages[vmf->pgoff]));
		if (ret != VM_FAULT_NOPAGE)
			return ret;
		down_read(&region->lock);
		changed = mmu_interval_read_retry(&region->notifier, seq);
		up_read(&region->lock);
		if (!changed)
			return VM_FAULT_NOPAGE;
		zap_vma_ptes(vma, addr, PAGE_SIZE);
	}
}

static const struct vm_operations_struct nccom_map_vm_ops = {
	.open = nccom_map_open,
	.close = nccom_map_close,
	.fault = nccom_map_fault,
};

static int nccom_map_check(struct nccom_export *exp,
			   struct vm_area_struct *vma)
{
	unsigned long npages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED)) {
		nccom_warn_rl("grant mmap: MAP_PRIVATE unsupported, use MAP_SHARED\n");
		return -EINVAL;
	}
	if (vma->vm_pgoff >= exp->region->npages ||
	    npages > exp->region->npages - vma->vm_pgoff) {
		nccom_warn_rl("grant mmap: window past the %lu pages of the dma-buf\n",
			      exp->region->npages);
		return -EINVAL;
	}
	if ((vma->vm_flags & VM_WRITE) && !exp->map_write) {
		nccom_warn_rl("grant mmap: read-only grant, map PROT_READ or export MAP_WRITE\n");
		return -EACCES;
	}
	return 0;
}

/**
 * nccom_export_mmap() - map an exported registration into a peer
 * @exp: the export, priv of the dma-buf being mapped
 * @vma: the new mapping (dma-buf core checked it against the dma-buf size)
 *
 * Return: 0, -EINVAL (private or out of range), -EACCES (writable mapping
 * of a read-only grant) or -EFAULT (the owner's range is gone).
 */
int nccom_export_mmap(struct nccom_export *exp, struct vm_area_struct *vma)
{
	struct nccom_region *region = exp->region;
	int ret;

	ret = nccom_map_check(exp, vma);
	if (ret)
		return ret;
	/* A stale region is checked at the first fault (nccom_map_fault()). */
	down_write(&region->lock);
	if (region->dead) {
		up_write(&region->lock);
		nccom_warn_rl("grant mmap: owner's range is gone, register and export again\n");
		return -EFAULT;
	}
	exp->nvmas++;
	atomic_inc(&region->nmaps);
	up_write(&region->lock);
	/* PFN mappings: GUP and process_vm_readv() refuse them. */
	nccom_vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND |
			   VM_DONTDUMP | VM_DONTCOPY);
	if (!exp->map_write)
		nccom_vm_flags_clear(vma, VM_MAYWRITE);
	vma->vm_private_data = exp;
	vma->vm_ops = &nccom_map_vm_ops;
	return 0;
}
