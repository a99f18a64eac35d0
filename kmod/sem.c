// SPDX-License-Identifier: GPL-2.0
/*
 * nccom semaphores: 64-bit timeline values that only move forward. A core
 * object holds the value and is shared by the owner's handle, exported
 * semaphore files and importers' handles. When the owner's handle goes away
 * (destroy, close, process death) the core is marked ownerless and every
 * waiter is woken with -EPIPE.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/slab.h>
#include <linux/file.h>
#include <linux/anon_inodes.h>
#include <linux/poll.h>
#include <linux/hrtimer.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "nccom_private.h"

static const struct nccom_obj_ops nccom_sem_ops;

/* One open semaphore file; @target is the poll threshold of this file. */
struct nccom_sem_file {
	struct nccom_sem_core *core;
	u64 target;
};

static void nccom_sem_core_release(struct kref *kref)
{
	kfree(container_of(kref, struct nccom_sem_core, kref));
}

static void nccom_sem_core_put(struct nccom_sem_core *core)
{
	kref_put(&core->kref, nccom_sem_core_release);
}

/**
 * nccom_sem_core_signal() - move a timeline forward
 * @core: the semaphore
 * @value: the new value, at least the current one
 *
 * Return: 0, -EINVAL if @value is below the current value, -EPIPE if the
 * owner is gone.
 */
int nccom_sem_core_signal(struct nccom_sem_core *core, u64 value)
{
	int ret = 0;

	spin_lock(&core->lock);
	if (!core->owner_alive)
		ret = -EPIPE;
	else if (value < core->value)
		ret = -EINVAL;
	else
		core->value = value;
	spin_unlock(&core->lock);
	if (!ret) {
		wake_up_all(&core->wq);
		nccom_engines_kick_all();
	}
	return ret;
}

/**
 * nccom_sem_core_poll() - test a wait condition without sleeping
 * @core: the semaphore
 * @value: the value waited for
 *
 * Return: 0 if reached, -EPIPE if the owner is gone, -EAGAIN otherwise.
 */
int nccom_sem_core_poll(struct nccom_sem_core *core, u64 value)
{
	int ret;

	spin_lock(&core->lock);
	if (core->value >= value)
		ret = 0;
	else if (!core->owner_alive)
		ret = -EPIPE;
	else
		ret = -EAGAIN;
	spin_unlock(&core->lock);
	return ret;
}

/**
 * nccom_wait_deadline() - sleep until a condition holds or a deadline passes
 * @wq: wait queue woken whenever the condition may have changed
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline; 0 only tests once
 * @done: returns true when the wait is over
 * @arg: argument of @done
 *
 * Interruptible (hence killable). Return: 0, -ETIMEDOUT or -EINTR.
 */
int nccom_wait_deadline(wait_queue_head_t *wq, u64 timeout_ns,
			bool (*done)(void *arg), void *arg)
{
	ktime_t deadline = ns_to_ktime(min_t(u64, timeout_ns, KTIME_MAX));
	DEFINE_WAIT(wait);
	int ret = 0;

	for (;;) {
		prepare_to_wait(wq, &wait, TASK_INTERRUPTIBLE);
		if (done(arg))
			break;
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (ktime_compare(ktime_get(), deadline) >= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		schedule_hrtimeout(&deadline, HRTIMER_MODE_ABS);
	}
	finish_wait(wq, &wait);
	return ret;
}

static struct nccom_sem_core *nccom_sem_core_alloc(u64 value)
{
	struct nccom_sem_core *core;

	core = kzalloc(sizeof(*core), GFP_KERNEL_ACCOUNT);
	if (!core)
		return NULL;
	kref_init(&core->kref);
	spin_lock_init(&core->lock);
	init_waitqueue_head(&core->wq);
	atomic_set(&core->waiters, 0);
	core->value = value;
	core->owner_alive = true;
	return core;
}

static struct nccom_sem *nccom_sem_get(struct nccom_ctx *ctx, u32 id)
{
	struct nccom_object *obj = nccom_obj_get(ctx, id, NCCOM_OBJ_SEM);

	return IS_ERR(obj) ? ERR_CAST(obj) : to_nccom_sem(obj);
}

static int nccom_sem_publish(struct nccom_ucmd *ucmd, struct nccom_sem *sem,
			     u32 *out_handle, size_t len)
{
	int ret;

	*out_handle = sem->obj.id;
	ret = nccom_ucmd_respond(ucmd, len);
	if (ret) {
		nccom_sem_core_put(sem->core);
		nccom_obj_abort(&sem->obj);
		return ret;
	}
	nccom_obj_finalize(&sem->obj);
	return 0;
}

int nccom_ioctl_sem_create(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_create *cmd = ucmd->cmd;
	struct nccom_sem *sem;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	sem = nccom_obj_alloc(ucmd->ctx, sizeof(*sem), &nccom_sem_ops);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	sem->core = nccom_sem_core_alloc(cmd->initial_value);
	if (!sem->core) {
		nccom_obj_abort(&sem->obj);
		return -ENOMEM;
	}
	sem->owner = true;
	return nccom_sem_publish(ucmd, sem, &cmd->out_handle, sizeof(*cmd));
}

int nccom_ioctl_sem_signal(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_signal *cmd = ucmd->cmd;
	struct nccom_sem *sem;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	sem = nccom_sem_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	ret = nccom_sem_core_signal(sem->core, cmd->value);
	nccom_obj_put(&sem->obj);
	return ret;
}

int nccom_ioctl_sem_read(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_read *cmd = ucmd->cmd;
	struct nccom_sem *sem;

	if (cmd->flags)
		return -EINVAL;
	sem = nccom_sem_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	spin_lock(&sem->core->lock);
	cmd->out_value = sem->core->value;
	cmd->out_owner_alive = sem->core->owner_alive;
	spin_unlock(&sem->core->lock);
	nccom_obj_put(&sem->obj);
	return nccom_ucmd_respond(ucmd, sizeof(*cmd));
}

struct nccom_sem_waiter {
	struct nccom_sem_core *core;
	u64 value;
	int status;
};

static bool nccom_sem_wait_done(void *arg)
{
	struct nccom_sem_waiter *w = arg;

	w->status = nccom_sem_core_poll(w->core, w->value);
	return w->status != -EAGAIN;
}

int nccom_ioctl_sem_wait(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_wait *cmd = ucmd->cmd;
	struct nccom_sem_waiter w;
	struct nccom_sem *sem;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	sem = nccom_sem_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	w.core = sem->core;
	w.value = cmd->value;
	atomic_inc(&w.core->waiters);
	ret = nccom_wait_deadline(&w.core->wq, cmd->timeout_ns,
				  nccom_sem_wait_done, &w);
	atomic_dec(&w.core->waiters);
	if (ret == -ETIMEDOUT)
		nccom_nl_sem_timeout(ucmd->ctx, cmd->handle, cmd->value);
	if (!ret)
		ret = w.status;
	cmd->out_value = READ_ONCE(w.core->value);
	nccom_obj_put(&sem->obj);
	if (nccom_ucmd_respond(ucmd, sizeof(*cmd)))
		return -EFAULT;
	return ret;
}

static int nccom_sem_file_release(struct inode *inode, struct file *filp)
{
	struct nccom_sem_file *sf = filp->private_data;

	nccom_sem_core_put(sf->core);
	kfree(sf);
	atomic64_dec(&nccom_stats.objects);
	return 0;
}

static ssize_t nccom_sem_file_read(struct file *filp, char __user *buf,
				   size_t len, loff_t *ppos)
{
	struct nccom_sem_file *sf = filp->private_data;
	u64 value;

	if (len < sizeof(value))
		return -EINVAL;
	spin_lock(&sf->core->lock);
	value = sf->core->value;
	spin_unlock(&sf->core->lock);
	if (copy_to_user(buf, &value, sizeof(value)))
		return -EFAULT;
	return sizeof(value);
}

static ssize_t nccom_sem_file_write(struct file *filp, const char __user *buf,
				    size_t len, loff_t *ppos)
{
	struct nccom_sem_file *sf = filp->private_data;
	u64 target;

	if (len != sizeof(target))
		return -EINVAL;
	if (copy_from_user(&target, buf, sizeof(target)))
		return -EFAULT;
	WRITE_ONCE(sf->target, target);
	wake_up_all(&sf->core->wq);
	return sizeof(target);
}

static __poll_t nccom_sem_file_poll(struct file *filp, poll_table *wait)
{
	struct nccom_sem_file *sf = filp->private_data;
	__poll_t mask = 0;

	poll_wait(filp, &sf->core->wq, wait);
	spin_lock(&sf->core->lock);
	if (sf->core->value >= READ_ONCE(sf->target))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!sf->core->owner_alive)
		mask |= EPOLLHUP;
	spin_unlock(&sf->core->lock);
	return mask;
}

static const struct file_operations nccom_sem_fops = {
	.owner = THIS_MODULE,
	.release = nccom_sem_file_release,
	.read = nccom_sem_file_read,
	.write = nccom_sem_file_write,
	.poll = nccom_sem_file_poll,
	.llseek = noop_llseek,
};

int nccom_ioctl_sem_export(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_export *cmd = ucmd->cmd;
	struct nccom_sem_file *sf;
	struct nccom_sem *sem;
	struct file *file;
	int fd, ret;

	if (cmd->flags)
		return -EINVAL;
	sem = nccom_sem_get(ucmd->ctx, cmd->handle);
	if (IS_ERR(sem))
		return PTR_ERR(sem);
	ret = -ENOMEM;
	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		goto err_put_sem;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free_sf;
	}
	sf->core = sem->core;
	file = anon_inode_getfile("nccom-sem", &nccom_sem_fops, sf, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}
	kref_get(&sem->core->kref);
	atomic64_inc(&nccom_stats.objects);
	cmd->out_fd = fd;
	if (nccom_ucmd_respond(ucmd, sizeof(*cmd))) {
		fput(file);	/* drops the core reference and the counter */
		put_unused_fd(fd);
		nccom_obj_put(&sem->obj);
		return -EFAULT;
	}
	fd_install(fd, file);
	nccom_obj_put(&sem->obj);
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_free_sf:
	kfree(sf);
err_put_sem:
	nccom_obj_put(&sem->obj);
	return ret;
}

int nccom_ioctl_sem_import(struct nccom_ucmd *ucmd)
{
	struct nccom_sem_import *cmd = ucmd->cmd;
	struct nccom_sem_file *sf;
	struct nccom_sem *sem;
	struct file *file;

	if (cmd->flags)
		return -EINVAL;
	file = fget(cmd->fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &nccom_sem_fops) {
		fput(file);
		return -EBADF;
	}
	sf = file->private_data;
	sem = nccom_obj_alloc(ucmd->ctx, sizeof(*sem), &nccom_sem_ops);
	if (IS_ERR(sem)) {
		fput(file);
		return PTR_ERR(sem);
	}
	kref_get(&sf->core->kref);
	sem->core = sf->core;
	fput(file);
	return nccom_sem_publish(ucmd, sem, &cmd->out_handle, sizeof(*cmd));
}

/* The owner's handle going away breaks the semaphore for everyone. */
static void nccom_sem_destroy(struct nccom_object *obj)
{
	struct nccom_sem *sem = to_nccom_sem(obj);

	if (!sem->owner)
		return;
	spin_lock(&sem->core->lock);
	sem->core->owner_alive = false;
	spin_unlock(&sem->core->lock);
	wake_up_all(&sem->core->wq);
	nccom_engines_kick_all();
}

static void nccom_sem_free(struct nccom_object *obj)
{
	struct nccom_sem *sem = to_nccom_sem(obj);

	nccom_sem_core_put(sem->core);
	kfree(sem);
}

static const struct nccom_obj_ops nccom_sem_ops = {
	.type = NCCOM_OBJ_SEM,
	.destroy = nccom_sem_destroy,
	.free = nccom_sem_free,
};
