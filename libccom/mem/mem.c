// SPDX-License-Identifier: MIT
/*
 * mem.c - ccomMemAlloc / ccomMemFree (mem/ layer): page-aligned buffers
 * backed by a memfd, so that they can be mapped by the local peers of the
 * communicator.  The registry (a list under a mutex) maps a pointer back
 * to its memfd and size; ccom_mem_lookup() (mem/mem.h) answers "is this
 * range inside a ccomMemAlloc buffer, and which one" for the zero-copy
 * direct path (coll/direct.c), which maps the peers' buffers through
 * /proc/<pid>/fd/<fd> and caches the mappings by the region's serial
 * number (unique within the process, never reused).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/comm.h"
#include "mem/mem.h"
#include "util/err.h"

struct mem_region {
	void *ptr;
	size_t size;
	int fd;
	struct ccomComm *comm;
	uint64_t serial;
	uint64_t ino;
	struct mem_region *next;
};

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;	/* protects mem_list */
static struct mem_region *mem_list;
static uint64_t mem_serial;		/* last serial handed out, under mem_lock */

ccomResult_t ccomMemAlloc(ccomComm_t comm, void **ptr, size_t size)
{
	struct mem_region *r;
	struct stat st;
	size_t len = (size + 4095) & ~(size_t)4095;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !ptr || size == 0 || len < size) {
		ccom_set_last_error("ccomMemAlloc: %s", !ptr ? "ptr is NULL" :
				    size == 0 ? "size is 0" : "comm is not a communicator");
		return ccomInvalidArgument;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return ccomSystemError;
	r->fd = memfd_create("ccom-mem", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)len) < 0) {
		ccom_set_last_error("ccomMemAlloc: memfd of %zu bytes failed: %s", len, strerror(errno));
		goto err_free;
	}
	r->ptr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->ptr == MAP_FAILED) {
		ccom_set_last_error("ccomMemAlloc: mmap of %zu bytes failed: %s", len, strerror(errno));
		goto err_free;
	}
	r->size = len;
	r->comm = comm;
	r->ino = fstat(r->fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
	pthread_mutex_lock(&mem_lock);
	r->serial = ++mem_serial;
	r->next = mem_list;
	mem_list = r;
	pthread_mutex_unlock(&mem_lock);
	*ptr = r->ptr;
	return ccomSuccess;
err_free:
	if (r->fd >= 0)
		close(r->fd);
	free(r);
	return ccomSystemError;
}

ccomResult_t ccomMemFree(ccomComm_t comm, void *ptr)
{
	struct mem_region **pp, *r = NULL;

	ccom_clear_last_error();
	if (!ptr)
		return ccomSuccess;
	pthread_mutex_lock(&mem_lock);
	for (pp = &mem_list; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == ptr) {
			r = *pp;
			*pp = r->next;
			break;
		}
	pthread_mutex_unlock(&mem_lock);
	if (!r) {
		ccom_set_last_error("ccomMemFree: %p was not returned by ccomMemAlloc", ptr);
		return ccomInvalidArgument;
	}
	(void)comm;
	munmap(r->ptr, r->size);
	close(r->fd);
	free(r);
	return ccomSuccess;
}

bool ccom_mem_lookup(const void *ptr, size_t len, struct ccom_mem_ref *ref)
{
	const char *p = ptr;
	struct mem_region *r;
	bool found = false;

	pthread_mutex_lock(&mem_lock);
	for (r = mem_list; r; r = r->next) {
		const char *b = r->ptr;

		if (p >= b && len <= r->size && (size_t)(p - b) <= r->size - len) {
			ref->serial = r->serial;
			ref->fd = r->fd;
			ref->ino = r->ino;
			ref->offset = (size_t)(p - b);
			ref->size = r->size;
			ref->base = r->ptr;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	return found;
}
