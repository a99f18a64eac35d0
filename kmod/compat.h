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

#endif /* _NCCOM_COMPAT_H */
