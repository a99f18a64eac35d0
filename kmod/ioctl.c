// SPDX-License-Identifier: GPL-2.0
/*
 * nccom ioctl dispatch: one table line per command records the argument
 * struct and the member that ends its first ABI version; the dispatcher
 * reads the user's size, applies copy_struct_from_user() semantics and calls
 * a short handler. Also holds the two generic commands, GET_INFO and DESTROY.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/sched/signal.h>

#include "nccom_private.h"

union nccom_ucmd_buffer {
	struct nccom_info info;
	struct nccom_destroy destroy;
	struct nccom_mem_register mem_register;
	struct nccom_mem_export_dmabuf mem_export;
	struct nccom_mem_import_dmabuf mem_import;
	struct nccom_queue_create queue_create;
	struct nccom_queue_doorbell queue_doorbell;
	struct nccom_queue_get_state queue_get_state;
	struct nccom_queue_reset queue_reset;
	struct nccom_queue_wait queue_wait;
	struct nccom_sem_create sem_create;
	struct nccom_sem_signal sem_signal;
	struct nccom_sem_read sem_read;
	struct nccom_sem_wait sem_wait;
	struct nccom_sem_export sem_export;
	struct nccom_sem_import sem_import;
	struct nccom_comm_register comm_register;
};

struct nccom_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct nccom_ucmd *ucmd);
};

#define NCCOM_IOCTL_OP(_ioctl, _fn, _struct, _last)                          \
	[_IOC_NR(_ioctl) - NCCOM_CMD_BASE] = {                               \
		.size = sizeof(_struct) +                                    \
			BUILD_BUG_ON_ZERO(sizeof(union nccom_ucmd_buffer) <  \
					  sizeof(_struct)),                  \
		.min_size = offsetofend(_struct, _last),                     \
		.execute = _fn,                                              \
	}

static const struct nccom_ioctl_op nccom_ioctl_ops[] = {
	NCCOM_IOCTL_OP(NCCOM_IOC_GET_INFO, nccom_ioctl_get_info,
		       struct nccom_info, out_fd_pinned_pages),
	NCCOM_IOCTL_OP(NCCOM_IOC_DESTROY, nccom_ioctl_destroy,
		       struct nccom_destroy, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_MEM_REGISTER, nccom_ioctl_mem_register,
		       struct nccom_mem_register, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_MEM_EXPORT_DMABUF,
		       nccom_ioctl_mem_export_dmabuf,
		       struct nccom_mem_export_dmabuf, out_fd),
	NCCOM_IOCTL_OP(NCCOM_IOC_MEM_IMPORT_DMABUF,
		       nccom_ioctl_mem_import_dmabuf,
		       struct nccom_mem_import_dmabuf, out_length),
	NCCOM_IOCTL_OP(NCCOM_IOC_QUEUE_CREATE, nccom_ioctl_queue_create,
		       struct nccom_queue_create, out_mmap_size),
	NCCOM_IOCTL_OP(NCCOM_IOC_QUEUE_DOORBELL, nccom_ioctl_queue_doorbell,
		       struct nccom_queue_doorbell, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_QUEUE_GET_STATE, nccom_ioctl_queue_get_state,
		       struct nccom_queue_get_state, out_completed),
	NCCOM_IOCTL_OP(NCCOM_IOC_QUEUE_RESET, nccom_ioctl_queue_reset,
		       struct nccom_queue_reset, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_QUEUE_WAIT, nccom_ioctl_queue_wait,
		       struct nccom_queue_wait, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_CREATE, nccom_ioctl_sem_create,
		       struct nccom_sem_create, __reserved),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_SIGNAL, nccom_ioctl_sem_signal,
		       struct nccom_sem_signal, value),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_READ, nccom_ioctl_sem_read,
		       struct nccom_sem_read, out_value),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_WAIT, nccom_ioctl_sem_wait,
		       struct nccom_sem_wait, out_value),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_EXPORT, nccom_ioctl_sem_export,
		       struct nccom_sem_export, out_fd),
	NCCOM_IOCTL_OP(NCCOM_IOC_SEM_IMPORT, nccom_ioctl_sem_import,
		       struct nccom_sem_import, out_handle),
	NCCOM_IOCTL_OP(NCCOM_IOC_COMM_REGISTER, nccom_ioctl_comm_register,
		       struct nccom_comm_register, out_handle),
};

static u64 nccom_features(void)
{
	return NCCOM_FEAT_MEM_REGISTER | NCCOM_FEAT_DMABUF_EXPORT |
	       NCCOM_FEAT_DMABUF_IMPORT | NCCOM_FEAT_SEM_FD |
	       NCCOM_FEAT_REDUCE_FP | NCCOM_FEAT_QUEUE_WAIT |
	       NCCOM_FEAT_COMM_REGISTER | NCCOM_FEAT_DMABUF_MMAP;
}

static int nccom_copy_devs(struct nccom_info *cmd)
{
	u8 __user *uptr = u64_to_user_ptr(cmd->devs_uptr);
	struct nccom_dev_info di;
	size_t len = min_t(size_t, cmd->dev_entry_size, sizeof(di));
	unsigned int i;

	for (i = 0; i < nccom_ndevs; i++) {
		struct nccom_dev *ndev = &nccom_devs[i];

		memset(&di, 0, sizeof(di));
		di.index = ndev->index;
		di.numa_node = ndev->numa_node;
		di.nengines = ndev->nengines;
		di.nqueues = atomic_read(&ndev->nqueues);
		di.completed = atomic64_read(&ndev->completed);
		di.bytes = atomic64_read(&ndev->bytes);
		if (copy_to_user(uptr, &di, len))
			return -EFAULT;
		if (cmd->dev_entry_size > len &&
		    clear_user(uptr + len, cmd->dev_entry_size - len))
			return -EFAULT;
		uptr += cmd->dev_entry_size;
	}
	return 0;
}

int nccom_ioctl_get_info(struct nccom_ucmd *ucmd)
{
	struct nccom_info *cmd = ucmd->cmd;
	struct nccom_ctx *ctx = ucmd->ctx;
	int ret = 0;

	if (cmd->flags)
		return -EINVAL;
	if (cmd->dev_count && cmd->dev_entry_size < 8)
		return -EINVAL;
	if (cmd->dev_count && cmd->dev_count < nccom_ndevs)
		ret = -EMSGSIZE;
	else if (cmd->dev_count)
		ret = nccom_copy_devs(cmd);
	if (ret == -EFAULT)
		return ret;

	cmd->out_abi_version = NCCOM_ABI_VERSION;
	cmd->dev_count = nccom_ndevs;
	cmd->out_features = nccom_features();
	cmd->out_compat_id = NCCOM_COMPAT_ID;
	cmd->out_max_queue_depth = NCCOM_MAX_DEPTH;
	cmd->out_max_reg_size = READ_ONCE(nccom_max_reg_size);
	cmd->out_desc_size = sizeof(struct nccom_desc);
	cmd->out_cqe_size = sizeof(struct nccom_cqe);
	cmd->out_pinned_pages = atomic64_read(&nccom_stats.pinned_pages);
	cmd->out_objects = atomic64_read(&nccom_stats.objects);
	cmd->out_fd_objects = atomic_read(&ctx->nobjs);
	cmd->out_fd_pinned_pages = atomic64_read(&ctx->pinned_pages);
	if (nccom_ucmd_respond(ucmd, sizeof(*cmd)))
		return -EFAULT;
	return ret;
}

int nccom_ioctl_destroy(struct nccom_ucmd *ucmd)
{
	struct nccom_destroy *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	return nccom_obj_destroy_id(ucmd->ctx, cmd->handle);
}

long nccom_fops_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	const struct nccom_ioctl_op *op;
	union nccom_ucmd_buffer buf;
	struct nccom_ucmd ucmd = {};
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (nr < NCCOM_CMD_BASE ||
	    nr >= NCCOM_CMD_BASE + ARRAY_SIZE(nccom_ioctl_ops))
		return -ENOTTY;
	/* The size travels in-band: only the plain _IO() number is valid. */
	if (cmd != _IO(NCCOM_TYPE, nr))
		return -ENOTTY;
	op = &nccom_ioctl_ops[nr - NCCOM_CMD_BASE];

	ucmd.ctx = filp->private_data;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	ucmd.cmd = &buf;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;
	return op->execute(&ucmd);
}
