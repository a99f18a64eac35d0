/* SPDX-License-Identifier: MIT */
/*
 * mem.h - the library-internal side of ccomMemAlloc (mem/ layer): which
 * ccomMemAlloc buffer holds a range, so that local peers can map it.
 */
#ifndef CCOM_MEM_MEM_H
#define CCOM_MEM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ccom_mem_ref {
	uint64_t serial;	/* unique per buffer within this process, never reused */
	int fd;			/* the buffer's memfd (in this process) */
	uint64_t ino;		/* its inode number */
	size_t offset;		/* of the range from the buffer's start */
	size_t size;		/* of the whole buffer (page multiple) */
	void *base;		/* the buffer's start in this process */
};

/* Is [ptr, ptr + len) inside one live ccomMemAlloc buffer?  Fills @ref if so. */
bool ccom_mem_lookup(const void *ptr, size_t len, struct ccom_mem_ref *ref);

#endif
