// SPDX-License-Identifier: GPL-2.0
/*
 * nccom object core, the leaf every subsystem builds on: the per-fd
 * context, handle objects in its xarray (alloc -> finalize/abort, reference
 * counts, lookup, destroy), the reply helper of the ioctl handlers, the
 * module-wide counters and the test-only allocation fault injection. It
 * calls no other nccom file: each object carries its type's ops
 * (&struct nccom_obj_ops), given by the type at nccom_obj_alloc().
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nccom_private.h"

/* The fail_nth module parameter (main.c). */
unsigned int nccom_fail_nth;

struct nccom_stats nccom_stats;

/*
 * Test-only fault injection: when fail_nth is N > 0, the Nth call from now
 * fails (and fail_nth drops back to 0). Used by the selftests to reach the
 * unwind paths of object creation. Called at every allocation and pin
 * behind object creation (mem.c, dmabuf.c, queue.c, sem.c, comm.c, engine.c).
 */
bool nccom_should_fail(void)
{
	unsigned int n = READ_ONCE(nccom_fail_nth);

	if (!n)
		return false;
	if (cmpxchg(&nccom_fail_nth, n, n - 1) != n)
		return false;
	return n == 1;
}

/**
 * nccom_ucmd_respond() - copy the command struct back to the user
 * @ucmd: the command
 * @len: size of the kernel struct; at most the user's size is copied
 *
 * Return: 0 or -EFAULT.
 */
int nccom_ucmd_respond(struct nccom_ucmd *ucmd, size_t len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd, min_t(size_t, ucmd->user_size, len)))
		return -EFAULT;
	return 0;
}

/**
 * nccom_ctx_alloc() - allocate the context of a new open file
 *
 * Return: the context with an empty handle table, or NULL.
 */
struct nccom_ctx *nccom_ctx_alloc(void)
{
	struct nccom_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	xa_init_flags(&ctx->objs, XA_FLAGS_ALLOC1);
	mutex_init(&ctx->destroy_lock);
	atomic64_set(&ctx->pinned_pages, 0);
	atomic_set(&ctx->nobjs, 0);
	return ctx;
}

/**
 * nccom_ctx_free() - free a context after nccom_ctx_destroy_all()
 * @ctx: the context
 */
void nccom_ctx_free(struct nccom_ctx *ctx)
{
	xa_destroy(&ctx->objs);
	mutex_destroy(&ctx->destroy_lock);
	kfree(ctx);
}

/**
 * nccom_obj_alloc() - allocate an object and reserve its handle
 * @ctx: the owning file context
 * @size: size of the containing struct (which embeds &struct nccom_object first)
 * @ops: the type's ops, which also give the object's type
 *
 * The handle is reserved but not visible until nccom_obj_finalize().
 * Return: the zeroed object or an ERR_PTR.
 */
void *nccom_obj_alloc(struct nccom_ctx *ctx, size_t size,
		      const struct nccom_obj_ops *ops)
{
	struct nccom_object *obj;
	int ret;

	if (nccom_should_fail())
		return ERR_PTR(-ENOMEM);
	obj = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!obj)
		return ERR_PTR(-ENOMEM);
	obj->type = ops->type;
	obj->ops = ops;
	obj->ctx = ctx;
	refcount_set(&obj->users, 1);
	ret = xa_alloc(&ctx->objs, &obj->id, XA_ZERO_ENTRY, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		kfree(obj);
		return ERR_PTR(ret == -EBUSY ? -ENOSPC : ret);
	}
	return obj;
}

/**
 * nccom_obj_finalize() - publish the handle of an allocated object
 * @obj: the object
 */
void nccom_obj_finalize(struct nccom_object *obj)
{
	struct nccom_ctx *ctx = obj->ctx;

	atomic_inc(&ctx->nobjs);
	atomic64_inc(&nccom_stats.objects);
	xa_store(&ctx->objs, obj->id, obj, GFP_KERNEL);
}

/**
 * nccom_obj_abort() - free an object that was never finalized
 * @obj: the object; its type-specific parts must be undone already
 */
void nccom_obj_abort(struct nccom_object *obj)
{
	xa_erase(&obj->ctx->objs, obj->id);
	kfree(obj);
}

/**
 * nccom_obj_get() - look up a handle and take a reference
 * @ctx: file context
 * @id: the handle
 * @type: expected type or %NCCOM_OBJ_ANY
 *
 * Return: the object (release with nccom_obj_put()) or ERR_PTR(-ENOENT).
 */
struct nccom_object *nccom_obj_get(struct nccom_ctx *ctx, u32 id,
				   enum nccom_obj_type type)
{
	struct nccom_object *obj;

	xa_lock(&ctx->objs);
	obj = xa_load(&ctx->objs, id);
	if (!obj || (type != NCCOM_OBJ_ANY && obj->type != type) ||
	    !refcount_inc_not_zero(&obj->users))
		obj = ERR_PTR(-ENOENT);
	xa_unlock(&ctx->objs);
	return obj;
}

/**
 * nccom_obj_put() - drop a reference; frees the object on the last one
 * @obj: the object
 */
void nccom_obj_put(struct nccom_object *obj)
{
	if (!refcount_dec_and_test(&obj->users))
		return;
	atomic64_dec(&nccom_stats.objects);
	obj->ops->free(obj);
}

static void nccom_obj_destroy(struct nccom_object *obj)
{
	atomic_dec(&obj->ctx->nobjs);
	obj->ops->destroy(obj);
	nccom_obj_put(obj);
}

/**
 * nccom_obj_destroy_id() - remove a handle and destroy its object
 * @ctx: file context
 * @id: the handle
 *
 * Return: 0 or -ENOENT.
 */
int nccom_obj_destroy_id(struct nccom_ctx *ctx, u32 id)
{
	struct nccom_object *obj;

	mutex_lock(&ctx->destroy_lock);
	xa_lock(&ctx->objs);
	obj = xa_load(&ctx->objs, id);
	if (obj)
		__xa_erase(&ctx->objs, id);
	xa_unlock(&ctx->objs);
	if (obj)
		nccom_obj_destroy(obj);
	mutex_unlock(&ctx->destroy_lock);
	return obj ? 0 : -ENOENT;
}

static void nccom_ctx_destroy_type(struct nccom_ctx *ctx,
				   enum nccom_obj_type type)
{
	struct nccom_object *obj;
	unsigned long id;

	xa_for_each(&ctx->objs, id, obj) {
		if (obj->type != type)
			continue;
		xa_erase(&ctx->objs, id);
		nccom_obj_destroy(obj);
	}
}

/**
 * nccom_ctx_destroy_all() - destroy every object of a file being released
 * @ctx: the context
 *
 * Teardown order: queues first (quiesces the engine and drops the
 * references in-flight descriptors hold), then semaphores (wakes waiters of
 * peers with -EPIPE), then memory (unpins unless a dma-buf still holds it),
 * then communicator registrations (unpin their state pages).
 */
void nccom_ctx_destroy_all(struct nccom_ctx *ctx)
{
	mutex_lock(&ctx->destroy_lock);
	nccom_ctx_destroy_type(ctx, NCCOM_OBJ_QUEUE);
	nccom_ctx_destroy_type(ctx, NCCOM_OBJ_SEM);
	nccom_ctx_destroy_type(ctx, NCCOM_OBJ_MEM);
	nccom_ctx_destroy_type(ctx, NCCOM_OBJ_COMM);
	mutex_unlock(&ctx->destroy_lock);
}
