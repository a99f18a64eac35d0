// SPDX-License-Identifier: GPL-2.0
/*
 * nccom main: module parameters and init/exit, and the /dev/nccom misc
 * device with its file operations. The top of the driver: it calls the
 * subsystems (ioctl, queue, engine, netlink) and the leaves (object.c,
 * dev.c), and no other file calls into it.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>

#include "nccom_private.h"

/* Each parameter's variable lives with the file that reads it. */
module_param_named(ndevs, nccom_ndevs, uint, 0444);
MODULE_PARM_DESC(ndevs, "Number of virtual devices (1-16, default 2)");

module_param_named(engines, nccom_nengines, uint, 0444);
MODULE_PARM_DESC(engines, "Engine threads per device (1-16, default 1)");

module_param_named(max_reg_size, nccom_max_reg_size, ulong, 0644);
MODULE_PARM_DESC(max_reg_size, "Largest registration in bytes (default 16 GiB)");

module_param_named(turn_bytes, nccom_turn_bytes, uint, 0644);
MODULE_PARM_DESC(turn_bytes, "Bytes an engine moves for one queue per turn (default 256 KiB)");

module_param_named(doorbell_bytes, nccom_doorbell_bytes, uint, 0644);
MODULE_PARM_DESC(doorbell_bytes, "Bytes a doorbell runs in the caller before waking the engine (default 4096, 0 = off)");

module_param_named(fail_nth, nccom_fail_nth, uint, 0644);
MODULE_PARM_DESC(fail_nth, "Test only: fail the Nth allocation or pin from now (0 = off)");

static int nccom_fops_open(struct inode *inode, struct file *filp)
{
	struct nccom_ctx *ctx;

	ctx = nccom_ctx_alloc();
	if (!ctx)
		return -ENOMEM;
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
	nccom_ctx_free(ctx);
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

static int __init nccom_init(void)
{
	int ret;

	ret = nccom_devs_init();
	if (ret)
		return ret;
	ret = nccom_dma_dev_init();
	if (ret)
		goto err_free_devs;
	nccom_copy_init();
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
	nccom_dma_dev_fini();
err_free_devs:
	nccom_devs_fini();
	return ret;
}

static void __exit nccom_exit(void)
{
	nccom_nl_exit();
	misc_deregister(&nccom_misc);
	nccom_engines_stop();
	nccom_dma_dev_fini();
	nccom_devs_fini();
}

module_init(nccom_init);
module_exit(nccom_exit);

MODULE_DESCRIPTION("ccom collective-communication device");
MODULE_AUTHOR("The ccom authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
