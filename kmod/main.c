// SPDX-License-Identifier: GPL-2.0
/*
 * nccom main: module parameters and init/exit, the /dev/nccom misc device
 * and its file operations, the per-fd context and the object core (handles in
 * an xarray, alloc -> finalize/abort, reference counts, destroy).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <linux/fs.h>
#include <linux/mm.h>

#include "nccom_private.h"

unsigned int nccom_ndevs = 2;
module_param_named(ndevs, nccom_ndevs, uint, 0444);
MODULE_PARM_DESC(ndevs, "Number of virtual devices (1-16, default 2)");

static unsigned int nccom_nengines = 1;
module_param_named(engines, nccom_nengines, uint, 0444);
MODULE_PARM_DESC(engines, "Engine threads per device (1-16, default 1)");

unsigned long nccom_max_reg_size = 1UL << 34;
module_param_named(max_reg_size, nccom_max_reg_size, ulong, 0644);
MODULE_PARM_DESC(max_reg_size, "Largest registration in bytes (default 16 GiB)");

unsigned int nccom_turn_bytes = 256 * 1024;
module_param_named(turn_bytes, nccom_turn_bytes, uint, 0644);
MODULE_PARM_DESC(turn_bytes, "Bytes an engine moves for one queue per turn (default 256 KiB)");

unsigned int nccom_fail_nth;
module_param_named(fail_nth, nccom_fail_nth, uint, 0644);
MODULE_PARM_DESC(fail_nth, "Test only: fail the Nth object allocation from now (0 = off)");

struct nccom_stats nccom_stats;
struct nccom_dev *nccom_devs;
struct device *nccom_dma_dev;
static struct platform_device *nccom_pdev;

static const struct nccom_obj_ops *const nccom_obj_ops[NCCOM_OBJ_TYPE_COUNT] = {
	[NCCOM_OBJ_MEM] = &nccom_mem_ops,
	[NCCOM_OBJ_QUEUE] = &nccom_queue_ops,
	[NCCOM_OBJ_SEM] = &nccom_sem_ops,
	[NCCOM_OBJ_COMM] = &nccom_comm_ops,
};

/*
 * Test-only fault injection: when fail_nth is N > 0, the Nth call from now
 * fails (and fail_nth drops back to 0). Used by the selftests to reach the
 * unwind paths of object creation.
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
 * nccom_obj_alloc() - allocate an object and reserve its handle
 * @ctx: the owning file context
 * @size: size of the containing struct (which embeds &struct nccom_object first)
 * @type: object type
 *
 * The handle is reserved but not visible until nccom_obj_finalize().
 * Return: the zeroed object or an ERR_PTR.
 */
void *nccom_obj_alloc(struct nccom_ctx *ctx, size_t size,
		      enum nccom_obj_type type)
{
	struct nccom_object *obj;
	int ret;

	if (nccom_should_fail())
		return ERR_PTR(-ENOMEM);
	obj = kzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!obj)
		return ERR_PTR(-ENOMEM);
	obj->type = type;
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
	nccom_obj_ops[obj->type]->free(obj);
}

static void nccom_obj_destroy(struct nccom_object *obj)
{
	atomic_dec(&obj->ctx->nobjs);
	nccom_obj_ops[obj->type]->destroy(obj);
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

/*
 * Teardown order on close: queues first (quiesces the engine and drops the
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

static int nccom_fops_open(struct inode *inode, struct file *filp)
{
	struct nccom_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	xa_init_flags(&ctx->objs, XA_FLAGS_ALLOC1);
	mutex_init(&ctx->destroy_lock);
	atomic64_set(&ctx->pinned_pages, 0);
	atomic_set(&ctx->nobjs, 0);
	nccom_nl_client_add(ctx);
	filp->private_data = ctx;
	return 0;
}

static int nccom_fops_release(struct inode *inode, struct file *filp)
{
	struct nccom_ctx *ctx = filp->private_data;

	nccom_nl_client_del(ctx);
	nccom_ctx_destroy_all(ctx);
	nccom_nl_client_fini(ctx);
	xa_destroy(&ctx->objs);
	mutex_destroy(&ctx->destroy_lock);
	kfree(ctx);
	return 0;
}

static int nccom_fops_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return nccom_queue_mmap(filp->private_data, vma);
}

static const struct file_operations nccom_fops = {
	.owner = THIS_MODULE,
	.open = nccom_fops_open,
	.release = nccom_fops_release,
	.unlocked_ioctl = nccom_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = nccom_fops_mmap,
};

static struct miscdevice nccom_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nccom",
	.fops = &nccom_fops,
	.mode = 0666,
};

static int nccom_devs_init(void)
{
	unsigned int i;

	if (nccom_ndevs < 1 || nccom_ndevs > NCCOM_MAX_DEVS ||
	    nccom_nengines < 1 || nccom_nengines > NCCOM_MAX_ENGINES) {
		pr_err("nccom: ndevs must be 1-%d and engines 1-%d\n",
		       NCCOM_MAX_DEVS, NCCOM_MAX_ENGINES);
		return -EINVAL;
	}
	nccom_devs = kcalloc(nccom_ndevs, sizeof(*nccom_devs), GFP_KERNEL);
	if (!nccom_devs)
		return -ENOMEM;
	for (i = 0; i < nccom_ndevs; i++) {
		struct nccom_dev *ndev = &nccom_devs[i];

		ndev->index = i;
		ndev->numa_node = num_online_nodes() > 1 ?
				  (int)(i % num_online_nodes()) : NUMA_NO_NODE;
		ndev->nengines = nccom_nengines;
	}
	return 0;
}

/* A device for dma_buf attachments, with a DMA mask so mapping works. */
static int nccom_dma_dev_init(void)
{
	int ret;

	nccom_pdev = platform_device_register_simple("nccom", -1, NULL, 0);
	if (IS_ERR(nccom_pdev))
		return PTR_ERR(nccom_pdev);
	ret = dma_coerce_mask_and_coherent(&nccom_pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		platform_device_unregister(nccom_pdev);
		return ret;
	}
	nccom_dma_dev = &nccom_pdev->dev;
	return 0;
}

static int __init nccom_init(void)
{
	int ret;

	ret = nccom_devs_init();
	if (ret)
		return ret;
	ret = nccom_dma_dev_init();
	if (ret)
		goto err_free_devs;
	ret = nccom_engines_start();
	if (ret)
		goto err_dma_dev;
	ret = misc_register(&nccom_misc);
	if (ret)
		goto err_engines;
	ret = nccom_nl_init();
	if (ret)
		goto err_misc;
	pr_info("nccom: %u devices, %u engines each, ABI %d\n",
		nccom_ndevs, nccom_nengines, NCCOM_ABI_VERSION);
	return 0;

err_misc:
	misc_deregister(&nccom_misc);
err_engines:
	nccom_engines_stop();
err_dma_dev:
	platform_device_unregister(nccom_pdev);
err_free_devs:
	kfree(nccom_devs);
	return ret;
}

static void __exit nccom_exit(void)
{
	nccom_nl_exit();
	misc_deregister(&nccom_misc);
	nccom_engines_stop();
	platform_device_unregister(nccom_pdev);
	kfree(nccom_devs);
}

module_init(nccom_init);
module_exit(nccom_exit);

MODULE_DESCRIPTION("ccom collective-communication device");
MODULE_AUTHOR("The ccom authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
