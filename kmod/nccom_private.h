/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nccom private definitions: the object core shared by every subsystem, the
 * per-fd context, virtual devices and their engines, and the prototypes each
 * file exports to the others.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#ifndef _NCCOM_PRIVATE_H
#define _NCCOM_PRIVATE_H

#include <linux/types.h>
#include <linux/refcount.h>
#include <linux/kref.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/ratelimit.h>
#include <linux/iosys-map.h>
#include "../uapi/linux/nccom.h"
#include "netlink.h"

#define NCCOM_MAX_DEVS		16
#define NCCOM_MAX_ENGINES	16
#define NCCOM_MAX_DEPTH		65536U
#define NCCOM_MMAP_SHIFT	32	/* mmap offset = handle << 32 */

#define nccom_err_rl(fmt, ...) pr_err_ratelimited("nccom: " fmt, ##__VA_ARGS__)
#define nccom_warn_rl(fmt, ...) pr_warn_ratelimited("nccom: " fmt, ##__VA_ARGS__)
#define nccom_dbg(fmt, ...) pr_debug("nccom: " fmt, ##__VA_ARGS__)

/* Module-wide counters, read by GET_INFO. */
struct nccom_stats {
	atomic64_t pinned_pages;
	atomic64_t objects;
};

extern struct nccom_stats nccom_stats;

/*
 * Module parameters: declared in main.c, stored with the file that reads
 * them (dev.c, mem.c, queue.c, object.c).
 */
extern unsigned int nccom_ndevs;
extern unsigned int nccom_nengines;
extern unsigned long nccom_max_reg_size;
extern unsigned int nccom_turn_bytes;
extern unsigned int nccom_doorbell_bytes;
extern unsigned int nccom_fail_nth;

/* Test-only fault injection (object.c): true for the fail_nth-th call. */
bool nccom_should_fail(void);

enum nccom_obj_type {
	NCCOM_OBJ_ANY = 0,
	NCCOM_OBJ_MEM,
	NCCOM_OBJ_QUEUE,
	NCCOM_OBJ_SEM,
	NCCOM_OBJ_COMM,
	NCCOM_OBJ_TYPE_COUNT,
};

struct nccom_object;

/* One per object type, defined by the type's file (mem.c, queue.c, ...). */
struct nccom_obj_ops {
	enum nccom_obj_type type;
	/* Called once when the handle goes away (destroy ioctl or close). */
	void (*destroy)(struct nccom_object *obj);
	/* Called when the last reference is dropped. */
	void (*free)(struct nccom_object *obj);
};

/*
 * Every object reachable through a handle embeds this first. @users counts
 * the xarray slot plus every short-term user (ioctl, engine); the object is
 * freed by its type's free op when the count drops to zero.
 */
struct nccom_object {
	enum nccom_obj_type type;
	u32 id;
	refcount_t users;
	struct nccom_ctx *ctx;
	const struct nccom_obj_ops *ops;
};

/* Per open file of /dev/nccom. */
struct nccom_ctx {
	struct xarray objs;		/* handle -> object; has its own lock */
	struct mutex destroy_lock;	/* serializes destroy against close */
	atomic64_t pinned_pages;	/* pages pinned by our registrations */
	atomic_t nobjs;			/* live handles */
	struct nccom_nl_client nl;	/* netlink.c: id, opener, list node */
};

struct nccom_engine {
	struct nccom_dev *ndev;
	struct task_struct *thread;
	spinlock_t lock;		/* protects @queues and @nqueues */
	struct list_head queues;
	unsigned int nqueues;
	wait_queue_head_t wq;
	atomic_t kick;			/* bumped on every doorbell/signal */
};

struct nccom_dev {
	u32 index;
	int numa_node;
	u32 nengines;
	atomic_t next_engine;
	atomic_t nqueues;
	atomic64_t completed;
	atomic64_t bytes;
	struct nccom_engine engines[NCCOM_MAX_ENGINES];
};

/* dev.c: the virtual devices and the DMA device (calls no other nccom file) */
extern struct nccom_dev *nccom_devs;
extern struct device *nccom_dma_dev;
int nccom_devs_init(void);
void nccom_devs_fini(void);
int nccom_dma_dev_init(void);
void nccom_dma_dev_fini(void);

/*
 * Backing memory shared by a registration, its dma-buf exports and nccom
 * imports of those. @lock is held for reading by the engines for as long
 * as they touch the pages (several at once: the engines of a collective's
 * ranks read and write the same regions) and for writing by the
 * invalidation callback while it marks @dead, so no engine touches a page
 * after its mapping went away.
 */
enum nccom_region_kind {
	NCCOM_REGION_PAGES,
	NCCOM_REGION_VMAP,
};

struct nccom_region {
	struct kref kref;
	enum nccom_region_kind kind;
	struct rw_semaphore lock;	/* engines read, state changes write */
	bool dead;			/* the user's mapping is gone for good */
	bool stale;			/* page tables changed: revalidate first */
	u32 access;
	u64 length;
	/* NCCOM_REGION_PAGES */
	struct page **pages;
	unsigned long npages;
	unsigned long uaddr;
	struct mm_struct *mm;		/* mmgrab'ed, for pinned_vm */
	struct mmu_interval_notifier notifier;
	bool notifier_live;
	struct list_head exports;	/* &nccom_export.node, under @lock */
	atomic_t nmaps;			/* peers' VMAs mapping the pages */
	/* NCCOM_REGION_VMAP: a foreign dma-buf */
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	struct iosys_map map;
};

/*
 * One dma-buf export of a registration: the dma-buf's priv. @nvmas counts
 * the VMAs mapping it and changes under the region's lock; while it is
 * non-zero the dma-buf file (and so its address space) is alive.
 */
struct nccom_export {
	struct nccom_region *region;
	struct dma_buf *dmabuf;
	struct list_head node;		/* on region->exports */
	unsigned int nvmas;
	bool map_write;
};

/* A memory handle: a window [offset, offset + length) into a region. */
struct nccom_mem {
	struct nccom_object obj;
	struct nccom_region *region;
	u32 access;
	bool registration;		/* owns the fd's pinned-page count */
	u64 offset;
	u64 length;
};

/* A semaphore timeline, shared by handles and exported files. */
struct nccom_sem_core {
	struct kref kref;
	spinlock_t lock;		/* protects @value and @owner_alive */
	u64 value;
	bool owner_alive;
	wait_queue_head_t wq;
	atomic_t waiters;		/* tasks in SEM_WAIT (netlink dumps) */
};

struct nccom_sem {
	struct nccom_object obj;
	struct nccom_sem_core *core;
	bool owner;
};

struct nccom_ring {
	struct kref kref;
	void *mem;			/* vmalloc_user */
	size_t size;
};

/* The descriptor a queue is executing, with the references it holds. */
struct nccom_cur {
	bool valid;
	struct nccom_desc desc;
	u64 done;			/* bytes (COPY/REDUCE) already done */
	struct nccom_mem *dst;
	struct nccom_mem *src;
	struct nccom_mem *src2;
	struct nccom_sem *sem;
};

struct nccom_queue {
	struct nccom_object obj;
	struct nccom_dev *ndev;
	struct nccom_engine *eng;
	struct list_head eng_node;	/* on eng->queues, under eng->lock */
	struct nccom_ring *ring;
	struct nccom_ring_hdr *hdr;
	struct nccom_desc *sq;
	struct nccom_cqe *cq;
	u32 depth;
	u32 mask;
	struct mutex run_lock;		/* held while executing; protects below */
	u32 sq_head;			/* kernel copies of the engine's indices */
	u32 cq_tail;
	u32 state;
	s32 error;
	u64 error_cookie;
	u64 completed;
	bool dying;
	bool cq_full;			/* stalled on a full completion ring */
	u32 discard;			/* descriptors left to cancel (RESET) */
	struct nccom_cur cur;
	wait_queue_head_t cq_wq;	/* QUEUE_WAIT sleepers */
};

/*
 * A registered communicator (comm.c): identity given at registration, and
 * the pinned page holding the owner's &struct nccom_comm_state at @offset.
 */
struct nccom_comm {
	struct nccom_object obj;
	u64 comm_hash;
	u32 rank;
	u32 nranks;
	struct page *page;
	unsigned int offset;
	struct mm_struct *mm;		/* mmgrab'ed, for pinned_vm */
};

/* A snapshot of a &struct nccom_comm_state (nccom_comm_read()). */
struct nccom_comm_snap {
	u32 stage;
	s32 last_error;
	u64 stage_time_ns;
	u64 ops_issued;
	u64 ops_completed;
	char error_msg[NCCOM_COMM_MSG_LEN];
};

struct nccom_ucmd {
	struct nccom_ctx *ctx;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/* object.c: the object core (calls no other nccom file) */
int nccom_ucmd_respond(struct nccom_ucmd *ucmd, size_t len);
struct nccom_ctx *nccom_ctx_alloc(void);
void nccom_ctx_free(struct nccom_ctx *ctx);
void *nccom_obj_alloc(struct nccom_ctx *ctx, size_t size,
		      const struct nccom_obj_ops *ops);
void nccom_obj_finalize(struct nccom_object *obj);
void nccom_obj_abort(struct nccom_object *obj);
struct nccom_object *nccom_obj_get(struct nccom_ctx *ctx, u32 id,
				   enum nccom_obj_type type);
void nccom_obj_put(struct nccom_object *obj);
int nccom_obj_destroy_id(struct nccom_ctx *ctx, u32 id);
void nccom_ctx_destroy_all(struct nccom_ctx *ctx);

/* ioctl.c */
long nccom_fops_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
int nccom_ioctl_get_info(struct nccom_ucmd *ucmd);
int nccom_ioctl_destroy(struct nccom_ucmd *ucmd);

/* mem.c */
int nccom_ioctl_mem_register(struct nccom_ucmd *ucmd);
struct nccom_region *nccom_region_get(struct nccom_region *region);
void nccom_region_put(struct nccom_region *region);
struct nccom_mem *nccom_mem_create(struct nccom_ctx *ctx,
				   struct nccom_region *region, u32 access,
				   u64 offset, u64 length);
int nccom_account_pinned(struct mm_struct *mm, unsigned long npages);
int nccom_region_revalidate(struct nccom_region *region);
void *nccom_region_map(struct nccom_region *region, u64 off, size_t *len);
void nccom_region_unmap(struct nccom_region *region, void *addr);

/* mem_map.c: peers' mmap() of exported registrations */
int nccom_export_mmap(struct nccom_export *exp, struct vm_area_struct *vma);
void nccom_region_zap_maps(struct nccom_region *region);

/* dmabuf.c */
int nccom_ioctl_mem_export_dmabuf(struct nccom_ucmd *ucmd);
int nccom_ioctl_mem_import_dmabuf(struct nccom_ucmd *ucmd);
void nccom_region_free_dmabuf(struct nccom_region *region);

/* sem.c */
int nccom_ioctl_sem_create(struct nccom_ucmd *ucmd);
int nccom_ioctl_sem_signal(struct nccom_ucmd *ucmd);
int nccom_ioctl_sem_read(struct nccom_ucmd *ucmd);
int nccom_ioctl_sem_wait(struct nccom_ucmd *ucmd);
int nccom_ioctl_sem_export(struct nccom_ucmd *ucmd);
int nccom_ioctl_sem_import(struct nccom_ucmd *ucmd);
int nccom_sem_core_signal(struct nccom_sem_core *core, u64 value);
int nccom_sem_core_poll(struct nccom_sem_core *core, u64 value);
int nccom_wait_deadline(wait_queue_head_t *wq, u64 timeout_ns,
			bool (*done)(void *arg), void *arg);

/* comm.c */
int nccom_ioctl_comm_register(struct nccom_ucmd *ucmd);
bool nccom_comm_read(const struct nccom_comm *comm,
		     struct nccom_comm_snap *out);

/* queue.c */
int nccom_ioctl_queue_create(struct nccom_ucmd *ucmd);
int nccom_ioctl_queue_doorbell(struct nccom_ucmd *ucmd);
int nccom_ioctl_queue_get_state(struct nccom_ucmd *ucmd);
int nccom_ioctl_queue_reset(struct nccom_ucmd *ucmd);
int nccom_ioctl_queue_wait(struct nccom_ucmd *ucmd);
int nccom_queue_reset(struct nccom_queue *q, bool discard);
int nccom_queue_mmap(struct nccom_ctx *ctx, struct vm_area_struct *vma);
bool nccom_queue_run(struct nccom_queue *q);

/* engine.c */
int nccom_engines_start(void);
void nccom_engines_stop(void);
void nccom_engine_kick(struct nccom_engine *eng);
void nccom_engines_kick_all(void);
void nccom_engine_add_queue(struct nccom_engine *eng, struct nccom_queue *q);
void nccom_engine_del_queue(struct nccom_engine *eng, struct nccom_queue *q);
int nccom_exec_prepare(struct nccom_queue *q, struct nccom_cur *cur);
int nccom_exec_step(struct nccom_queue *q, struct nccom_cur *cur,
		    u64 *budget);
void nccom_cur_release(struct nccom_cur *cur);

/* engine_copy.c */
void nccom_copy_init(void);
void nccom_copy(void *dst, const void *src, size_t len);

/* reduce.c / reduce_fp.c */
size_t nccom_dtype_size(u8 dtype);
void nccom_reduce(u8 dtype, u8 op, void *inout, const void *in, size_t n);
void nccom_reduce_fp(u8 dtype, u8 op, void *inout, const void *in, size_t n);
void nccom_reduce3(u8 dtype, u8 op, void *dst, const void *a, const void *b,
		   size_t n);
void nccom_reduce3_fp(u8 dtype, u8 op, void *dst, const void *a,
		      const void *b, size_t n);

static inline struct nccom_mem *to_nccom_mem(struct nccom_object *obj)
{
	return container_of(obj, struct nccom_mem, obj);
}

static inline struct nccom_sem *to_nccom_sem(struct nccom_object *obj)
{
	return container_of(obj, struct nccom_sem, obj);
}

static inline struct nccom_queue *to_nccom_queue(struct nccom_object *obj)
{
	return container_of(obj, struct nccom_queue, obj);
}

static inline struct nccom_comm *to_nccom_comm(struct nccom_object *obj)
{
	return container_of(obj, struct nccom_comm, obj);
}

#endif /* _NCCOM_PRIVATE_H */
