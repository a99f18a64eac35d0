// SPDX-License-Identifier: GPL-2.0
/*
 * nccom communicators: NCCOM_IOC_COMM_REGISTER makes a communicator of the
 * caller visible to the netlink family. The caller's state block (struct
 * nccom_comm_state) is updated by the library with plain stores; its page
 * is pinned read-only here and read only when someone dumps communicators,
 * so registration costs the data path nothing.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nccom_private.h"

static const struct nccom_obj_ops nccom_comm_ops;

/* Retries of a snapshot while the owner is writing the block. */
#define NCCOM_COMM_READ_TRIES	16

static int nccom_comm_register_check(const struct nccom_comm_register *cmd)
{
	u64 end;

	if (cmd->flags)
		return -EINVAL;
	if (!cmd->nranks || cmd->rank >= cmd->nranks)
		return -EINVAL;
	if (cmd->state_size < sizeof(struct nccom_comm_state) ||
	    !IS_ALIGNED(cmd->state_uptr, 64))
		return -EINVAL;
	if (check_add_overflow(cmd->state_uptr, (u64)cmd->state_size, &end) ||
	    end > TASK_SIZE)
		return -EOVERFLOW;
	if (offset_in_page(cmd->state_uptr) + cmd->state_size > PAGE_SIZE)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(cmd->state_uptr), cmd->state_size))
		return -EFAULT;
	return 0;
}

/*
 * Long-term read-only pin of the page holding the block. A read-only pin is
 * allowed on every kind of mapping on 6.1 and 6.12 (only fsdax refuses
 * FOLL_LONGTERM; the file-backed restriction of 6.5+ is for FOLL_WRITE).
 * Anonymous pages are unshared for a read-only pin, so the pinned page stays
 * the one the owner writes to.
 */
static int nccom_comm_pin(struct nccom_comm *comm, u64 uptr)
{
	struct mm_struct *mm = current->mm;
	int ret;

	ret = nccom_account_pinned(mm, 1);
	if (ret)
		return ret;
	ret = pin_user_pages_fast(uptr & PAGE_MASK, 1, FOLL_LONGTERM, &comm->page);
	if (ret != 1) {
		atomic64_sub(1, &mm->pinned_vm);
		return ret < 0 ? ret : -EFAULT;
	}
	mmgrab(mm);
	comm->mm = mm;
	comm->offset = offset_in_page(uptr);
	atomic64_inc(&nccom_stats.pinned_pages);
	return 0;
}

static void nccom_comm_unpin(struct nccom_comm *comm)
{
	unpin_user_page(comm->page);
	atomic64_sub(1, &comm->mm->pinned_vm);
	atomic64_dec(&nccom_stats.pinned_pages);
	mmdrop(comm->mm);
}

int nccom_ioctl_comm_register(struct nccom_ucmd *ucmd)
{
	struct nccom_comm_register *cmd = ucmd->cmd;
	struct nccom_comm *comm;
	int ret;

	ret = nccom_comm_register_check(cmd);
	if (ret) {
		nccom_dbg("COMM_REGISTER: bad arguments (%d)\n", ret);
		return ret;
	}
	comm = nccom_obj_alloc(ucmd->ctx, sizeof(*comm), &nccom_comm_ops);
	if (IS_ERR(comm))
		return PTR_ERR(comm);
	comm->comm_hash = cmd->comm_hash;
	comm->rank = cmd->rank;
	comm->nranks = cmd->nranks;
	ret = nccom_comm_pin(comm, cmd->state_uptr);
	if (ret)
		goto err_abort;
	cmd->out_handle = comm->obj.id;
	ret = nccom_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret)
		goto err_unpin;
	atomic64_inc(&ucmd->ctx->pinned_pages);
	nccom_obj_finalize(&comm->obj);
	return 0;

err_unpin:
	nccom_comm_unpin(comm);
err_abort:
	nccom_obj_abort(&comm->obj);
	return ret;
}

/**
 * nccom_comm_read() - snapshot the state block of a registration
 * @comm: the registration; the caller holds a reference or destroy_lock
 * @out: filled with the owner's last consistent values
 *
 * The block belongs to the owner, who may write it at any time (or never
 * finish a write): the copy is retried while the sequence count is odd or
 * moves, at most %NCCOM_COMM_READ_TRIES times, and the message is
 * NUL-terminated whatever the owner wrote.
 *
 * Return: true if the copy is consistent, false if the owner kept it busy
 * (@out then holds the last, possibly torn, copy).
 */
bool nccom_comm_read(const struct nccom_comm *comm, struct nccom_comm_snap *out)
{
	const struct nccom_comm_state *st;
	bool ok = false;
	void *va;
	u32 s1;
	int i;

	va = kmap_local_page(comm->page);
	st = va + comm->offset;
	for (i = 0; i < NCCOM_COMM_READ_TRIES && !ok; i++) {
		s1 = READ_ONCE(st->seq);
		smp_rmb(); /* pairs with the owner's release before the data */
		out->stage = READ_ONCE(st->stage);
		out->last_error = READ_ONCE(st->last_error);
		out->stage_time_ns = READ_ONCE(st->stage_time_ns);
		memcpy(out->error_msg, st->error_msg, sizeof(out->error_msg));
		smp_rmb(); /* the data before the second look at seq */
		ok = !(s1 & 1) && READ_ONCE(st->seq) == s1;
	}
	out->error_msg[sizeof(out->error_msg) - 1] = '\0';
	out->ops_issued = READ_ONCE(st->ops_issued);
	out->ops_completed = READ_ONCE(st->ops_completed);
	kunmap_local(va);
	return ok;
}

static void nccom_comm_destroy(struct nccom_object *obj)
{
	atomic64_dec(&obj->ctx->pinned_pages);
}

static void nccom_comm_free(struct nccom_object *obj)
{
	struct nccom_comm *comm = to_nccom_comm(obj);

	nccom_comm_unpin(comm);
	kfree(comm);
}

static const struct nccom_obj_ops nccom_comm_ops = {
	.type = NCCOM_OBJ_COMM,
	.destroy = nccom_comm_destroy,
	.free = nccom_comm_free,
};
