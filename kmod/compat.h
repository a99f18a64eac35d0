/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nccom compatibility helpers for the kernels the module is built for
 * (Debian's 6.1 and 6.12). Kbuild detects the APIs from the headers.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#ifndef _NCCOM_COMPAT_H
#define _NCCOM_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/mm.h>

#ifdef NCCOM_HAVE_DMA_BUF_VMAP_UNLOCKED
static inline int nccom_compat_dma_buf_vmap(struct dma_buf *d,
					    struct iosys_map *m)
{
	return dma_buf_vmap_unlocked(d, m);
}

static inline void nccom_compat_dma_buf_vunmap(struct dma_buf *d,
					       struct iosys_map *m)
{
	dma_buf_vunmap_unlocked(d, m);
}
#else
/* Before 6.2, dma_buf_vmap() takes the dma-buf's own lock. */
static inline int nccom_compat_dma_buf_vmap(struct dma_buf *d,
					    struct iosys_map *m)
{
	return dma_buf_vmap(d, m);
}

static inline void nccom_compat_dma_buf_vunmap(struct dma_buf *d,
					       struct iosys_map *m)
{
	dma_buf_vunmap(d, m);
}
#endif

#ifdef NCCOM_HAVE_VM_FLAGS_SET
static inline void nccom_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void nccom_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#else
/* Before 6.3, ->mmap() writes vm_flags directly. */
static inline void nccom_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void nccom_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#ifdef NCCOM_HAVE_RELEASE_FAULT_LOCK
static inline void nccom_release_fault_lock(struct vm_fault *vmf)
{
	release_fault_lock(vmf);
}
#else
/* Before 6.4, every fault holds the mmap lock for read. */
static inline void nccom_release_fault_lock(struct vm_fault *vmf)
{
	mmap_read_unlock(vmf->vma->vm_mm);
}
#endif

#endif /* _NCCOM_COMPAT_H */
