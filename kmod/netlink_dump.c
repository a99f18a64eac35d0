// SPDX-License-Identifier: GPL-2.0
/*
 * nccom netlink requests: the get, dump and reset handlers of the ops table
 * in netlink.c. One attribute filler per object (device, statistics,
 * client, queue, semaphore, communicator), shared by its get and its dump;
 * dumps are resumable by (client id, handle) or device index; the per-handle
 * objects share one get, one dump and their filters (nccom_nl_objtypes).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "netlink_private.h"

/* State of a dump between dumpit calls (cb->args[0]). */
struct nccom_nl_dump {
	struct nccom_nl_viewer v;
	u32 next_client;
	u32 next_handle;
	u32 next_dev;
	u32 f_client;
	u32 f_dev;
	u64 f_hash;
	enum nccom_obj_type type;
	bool has_client;
	bool has_dev;
	bool has_hash;
	bool has_comm;
	char f_comm[TASK_COMM_LEN];
};

static int nccom_nl_dev_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_dev *ndev = arg;

	return nla_put_u32(skb, NCCOM_NL_A_DEV_INDEX, ndev->index) ||
	       nla_put_s32(skb, NCCOM_NL_A_DEV_NUMA_NODE, ndev->numa_node) ||
	       nla_put_u32(skb, NCCOM_NL_A_DEV_NENGINES, ndev->nengines) ||
	       nla_put_u32(skb, NCCOM_NL_A_DEV_NQUEUES, atomic_read(&ndev->nqueues)) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_DEV_COMPLETED,
				 atomic64_read(&ndev->completed), NCCOM_NL_A_DEV_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_DEV_BYTES,
				 atomic64_read(&ndev->bytes), NCCOM_NL_A_DEV_PAD);
}

static int nccom_nl_stats_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_dev *ndev = arg;
	struct nccom_nl_devstats *st = &nccom_nl_stats[ndev->index];

	return nla_put_u32(skb, NCCOM_NL_A_STATS_DEV_INDEX, ndev->index) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_STATS_COMPLETED,
				 atomic64_read(&ndev->completed) -
				 atomic64_read(&st->base_completed),
				 NCCOM_NL_A_STATS_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_STATS_BYTES,
				 atomic64_read(&ndev->bytes) -
				 atomic64_read(&st->base_bytes),
				 NCCOM_NL_A_STATS_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_STATS_QUEUE_ERRORS,
				 atomic64_read(&st->queue_errors),
				 NCCOM_NL_A_STATS_PAD);
}

static int nccom_nl_client_put(struct sk_buff *skb, const void *arg)
{
	struct nccom_ctx *ctx = (struct nccom_ctx *)arg;
	struct nccom_nl_client *cl = &ctx->nl;
	struct nccom_nl_counts c;

	nccom_nl_count(ctx, &c);
	return nla_put_u32(skb, NCCOM_NL_A_CLIENT_ID, cl->id) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_PID,
			   pid_nr_ns(cl->tgid, task_active_pid_ns(current))) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_UID,
			   from_kuid_munged(current_user_ns(), cl->uid)) ||
	       nla_put_string(skb, NCCOM_NL_A_CLIENT_COMM, cl->comm) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_NOBJECTS, atomic_read(&ctx->nobjs)) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_NQUEUES, c.queues) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_NSEMS, c.sems) ||
	       nla_put_u32(skb, NCCOM_NL_A_CLIENT_NMEMS, c.mems) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_CLIENT_PINNED_PAGES,
				 atomic64_read(&ctx->pinned_pages),
				 NCCOM_NL_A_CLIENT_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_CLIENT_INFLIGHT, c.inflight,
				 NCCOM_NL_A_CLIENT_PAD);
}

/*
 * Queue fields are read without run_lock: a dump is a snapshot and must not
 * wait for an engine turn. The caller holds the client's destroy_lock or a
 * reference, so the queue and its ring stay allocated.
 */
static int nccom_nl_queue_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_queue *q = arg;

	return nla_put_u32(skb, NCCOM_NL_A_QUEUE_DEV_INDEX, q->ndev->index) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_DEPTH, q->depth) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_SQ_HEAD, READ_ONCE(q->sq_head)) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_SQ_TAIL, READ_ONCE(q->hdr->sq_tail)) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_CQ_HEAD, READ_ONCE(q->hdr->cq_head)) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_CQ_TAIL, READ_ONCE(q->cq_tail)) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_QUEUE_COMPLETED,
				 READ_ONCE(q->completed), NCCOM_NL_A_QUEUE_PAD) ||
	       nla_put_u32(skb, NCCOM_NL_A_QUEUE_STATE, READ_ONCE(q->state)) ||
	       nla_put_s32(skb, NCCOM_NL_A_QUEUE_ERROR, READ_ONCE(q->error));
}

static int nccom_nl_sem_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_sem *sem = arg;
	struct nccom_sem_core *core = sem->core;
	bool alive;
	u64 value;

	spin_lock(&core->lock);
	value = core->value;
	alive = core->owner_alive;
	spin_unlock(&core->lock);
	return nla_put_u64_64bit(skb, NCCOM_NL_A_SEM_VALUE, value,
				 NCCOM_NL_A_SEM_PAD) ||
	       nla_put_u32(skb, NCCOM_NL_A_SEM_WAITERS, atomic_read(&core->waiters)) ||
	       nla_put_u32(skb, NCCOM_NL_A_SEM_OWNER_ALIVE, alive) ||
	       (sem->owner && nla_put_u32(skb, NCCOM_NL_A_SEM_OWNER_CLIENT_ID,
					  sem->obj.ctx->nl.id));
}

/*
 * The identity comes from the registration; stage, counters and the error
 * from the owner's state block, read now (nccom_comm_read()).
 */
static int nccom_nl_comm_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_comm *comm = arg;
	const struct nccom_nl_client *cl = &comm->obj.ctx->nl;
	struct nccom_comm_snap st;
	bool ok;

	ok = nccom_comm_read(comm, &st);
	return nla_put_u32(skb, NCCOM_NL_A_COMM_PID,
			   pid_nr_ns(cl->tgid, task_active_pid_ns(current))) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_COMM_HASH, comm->comm_hash,
				 NCCOM_NL_A_COMM_PAD) ||
	       nla_put_u32(skb, NCCOM_NL_A_COMM_RANK, comm->rank) ||
	       nla_put_u32(skb, NCCOM_NL_A_COMM_NRANKS, comm->nranks) ||
	       nla_put_u32(skb, NCCOM_NL_A_COMM_STAGE, st.stage) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_COMM_STAGE_TIME, st.stage_time_ns,
				 NCCOM_NL_A_COMM_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_COMM_OPS_ISSUED, st.ops_issued,
				 NCCOM_NL_A_COMM_PAD) ||
	       nla_put_u64_64bit(skb, NCCOM_NL_A_COMM_OPS_COMPLETED,
				 st.ops_completed, NCCOM_NL_A_COMM_PAD) ||
	       nla_put_s32(skb, NCCOM_NL_A_COMM_LAST_ERROR, st.last_error) ||
	       (st.error_msg[0] &&
		nla_put_string(skb, NCCOM_NL_A_COMM_ERROR_MSG, st.error_msg)) ||
	       nla_put_u32(skb, NCCOM_NL_A_COMM_CONSISTENT, ok);
}

/*
 * The per-handle objects (queues, semaphores, communicators) share their
 * get, dump and filters; this table says, per object type, which command,
 * policy and attributes each uses (0: the request has no such filter).
 * @put receives the object itself: &struct nccom_object is the first member
 * of every object type (nccom_private.h).
 */
struct nccom_nl_objtype {
	u8 cmd;
	int maxattr;
	const struct nla_policy *policy;
	int a_client;
	int a_handle;
	int a_dev;
	int a_hash;
	nccom_nl_put_fn put;
};

/* What every per-handle type has, by the names of its command, attributes and filler. */
#define NCCOM_NL_OBJTYPE(TYPE, type)				\
	.cmd = NCCOM_NL_CMD_##TYPE##_GET,			\
	.maxattr = NCCOM_NL_A_##TYPE##_MAX,			\
	.policy = nccom_nl_##type##_policy,			\
	.a_client = NCCOM_NL_A_##TYPE##_CLIENT_ID,		\
	.a_handle = NCCOM_NL_A_##TYPE##_HANDLE,			\
	.put = nccom_nl_##type##_put

static const struct nccom_nl_objtype nccom_nl_objtypes[NCCOM_OBJ_TYPE_COUNT] = {
	[NCCOM_OBJ_QUEUE] = { NCCOM_NL_OBJTYPE(QUEUE, queue),
			      .a_dev = NCCOM_NL_A_QUEUE_DEV_INDEX },
	[NCCOM_OBJ_SEM] = { NCCOM_NL_OBJTYPE(SEM, sem) },
	[NCCOM_OBJ_COMM] = { NCCOM_NL_OBJTYPE(COMM, comm),
			     .a_hash = NCCOM_NL_A_COMM_HASH },
};

/* Room for the attributes of any object request (the sum bounds the largest). */
#define NCCOM_NL_OBJ_MAXATTR \
	(NCCOM_NL_A_QUEUE_MAX + NCCOM_NL_A_SEM_MAX + NCCOM_NL_A_COMM_MAX + 1)

/* The object type a request's command is about, NCCOM_OBJ_ANY if none. */
static enum nccom_obj_type nccom_nl_objtype_of(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *gh = nlmsg_data(nlh);
	enum nccom_obj_type t;

	for (t = NCCOM_OBJ_MEM; t < NCCOM_OBJ_TYPE_COUNT; t++)
		if (nccom_nl_objtypes[t].put && nccom_nl_objtypes[t].cmd == gh->cmd)
			return t;
	return NCCOM_OBJ_ANY;
}

/* Client id and handle, then the type's own attributes. */
static int nccom_nl_obj_put(struct sk_buff *skb, const void *arg)
{
	const struct nccom_object *obj = arg;
	const struct nccom_nl_objtype *t = &nccom_nl_objtypes[obj->type];

	return nla_put_u32(skb, t->a_client, obj->ctx->nl.id) ||
	       nla_put_u32(skb, t->a_handle, obj->id) ||
	       t->put(skb, obj);
}

/* ---- dumps ---- */

/* One entry of a dump: @cmd's NLM_F_MULTI message for the requester. */
static int nccom_nl_dump_entry(struct sk_buff *skb, struct netlink_callback *cb,
			       u8 cmd, nccom_nl_put_fn put, const void *arg)
{
	return nccom_nl_fill(skb, cmd, NETLINK_CB(cb->skb).portid,
			     cb->nlh->nlmsg_seq, NLM_F_MULTI, put, arg);
}

/* A dumpit's return: the bytes filled, or @err when not even one entry fit. */
static int nccom_nl_dump_ret(struct sk_buff *skb, int err)
{
	return err && !skb->len ? err : skb->len;
}

static struct nccom_nl_dump *nccom_nl_dump_state(struct netlink_callback *cb)
{
	return (struct nccom_nl_dump *)cb->args[0];
}

/*
 * Allocate the dump state and parse the optional filters of the request
 * (the core already validated them against the same policy).
 */
static struct nccom_nl_dump *
nccom_nl_dump_alloc(struct netlink_callback *cb, struct nlattr **tb,
		    const struct nla_policy *policy, int maxattr)
{
	struct nccom_nl_dump *d;
	int err;

	err = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, maxattr, policy, cb->extack);
	if (err)
		return ERR_PTR(err);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	nccom_nl_viewer_init(&d->v, cb->skb);
	cb->args[0] = (long)d;
	return d;
}

int nccom_nl_dump_done(struct netlink_callback *cb)
{
	kfree(nccom_nl_dump_state(cb));
	return 0;
}

int nccom_nl_devs_start(struct netlink_callback *cb)
{
	struct nlattr *tb[NCCOM_NL_A_DEV_MAX + 1];

	return PTR_ERR_OR_ZERO(nccom_nl_dump_alloc(cb, tb, nccom_nl_dev_policy,
						   NCCOM_NL_A_DEV_MAX));
}

/* Devices and statistics: one entry per device index. */
static int nccom_nl_devs_dump(struct sk_buff *skb, struct netlink_callback *cb,
			      u8 cmd, nccom_nl_put_fn put)
{
	struct nccom_nl_dump *d = nccom_nl_dump_state(cb);
	int err = 0;

	for (; d->next_dev < nccom_ndevs; d->next_dev++) {
		err = nccom_nl_dump_entry(skb, cb, cmd, put, &nccom_devs[d->next_dev]);
		if (err)
			break;
	}
	return nccom_nl_dump_ret(skb, err);
}

int nccom_nl_dev_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nccom_nl_devs_dump(skb, cb, NCCOM_NL_CMD_DEV_GET, nccom_nl_dev_put);
}

int nccom_nl_stats_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nccom_nl_devs_dump(skb, cb, NCCOM_NL_CMD_STATS_GET, nccom_nl_stats_put);
}

int nccom_nl_client_start(struct netlink_callback *cb)
{
	struct nlattr *tb[NCCOM_NL_A_CLIENT_MAX + 1];
	struct nccom_nl_dump *d;

	d = nccom_nl_dump_alloc(cb, tb, nccom_nl_client_policy,
				NCCOM_NL_A_CLIENT_MAX);
	if (IS_ERR(d))
		return PTR_ERR(d);
	if (tb[NCCOM_NL_A_CLIENT_COMM]) {
		d->has_comm = true;
		nla_strscpy(d->f_comm, tb[NCCOM_NL_A_CLIENT_COMM], sizeof(d->f_comm));
	}
	return 0;
}

/* What a dump puts for one client: 0, or the error that ends this part. */
typedef int (*nccom_nl_client_dump_fn)(struct sk_buff *skb, struct netlink_callback *cb,
				       struct nccom_nl_client *cl);

/*
 * Client and object dumps: the clients the requester sees and the filters
 * let through (client dumps have no client filter, object dumps no comm
 * filter), from d->next_client on. A part that fills up resumes at the
 * client it stopped in, from d->next_handle (@one's resume point within
 * the client, reset when that client went away or was done).
 */
static int nccom_nl_clients_dump(struct sk_buff *skb, struct netlink_callback *cb,
				 nccom_nl_client_dump_fn one)
{
	struct nccom_nl_dump *d = nccom_nl_dump_state(cb);
	struct nccom_nl_client *cl;
	int err = 0;

	mutex_lock(&nccom_nl_lock);
	list_for_each_entry(cl, &nccom_nl_clients, node) {
		if (cl->id < d->next_client || !nccom_nl_visible(&d->v, cl) ||
		    (d->has_comm && strcmp(cl->comm, d->f_comm)) ||
		    (d->has_client && cl->id != d->f_client))
			continue;
		if (cl->id != d->next_client)
			d->next_handle = 0;	/* the resume client went away */
		d->next_client = cl->id;
		err = one(skb, cb, cl);
		if (err)
			break;
		d->next_client = cl->id + 1;
		d->next_handle = 0;
	}
	mutex_unlock(&nccom_nl_lock);
	return nccom_nl_dump_ret(skb, err);
}

static int nccom_nl_client_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
				    struct nccom_nl_client *cl)
{
	return nccom_nl_dump_entry(skb, cb, NCCOM_NL_CMD_CLIENT_GET, nccom_nl_client_put,
				   nccom_nl_ctx(cl));
}

int nccom_nl_client_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nccom_nl_clients_dump(skb, cb, nccom_nl_client_dump_one);
}

/* Queue, semaphore and communicator dumps: the type's filters from the table. */
int nccom_nl_obj_start(struct netlink_callback *cb)
{
	enum nccom_obj_type type = nccom_nl_objtype_of(cb->nlh);
	const struct nccom_nl_objtype *t = &nccom_nl_objtypes[type];
	struct nlattr *tb[NCCOM_NL_OBJ_MAXATTR];
	struct nccom_nl_dump *d;

	if (type == NCCOM_OBJ_ANY)
		return -EOPNOTSUPP;
	d = nccom_nl_dump_alloc(cb, tb, t->policy, t->maxattr);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d->type = type;
	if (tb[t->a_client]) {
		d->has_client = true;
		d->f_client = nla_get_u32(tb[t->a_client]);
	}
	if (t->a_dev && tb[t->a_dev]) {
		d->has_dev = true;
		d->f_dev = nla_get_u32(tb[t->a_dev]);
	}
	if (t->a_hash && tb[t->a_hash]) {
		d->has_hash = true;
		d->f_hash = nla_get_u64(tb[t->a_hash]);
	}
	return 0;
}

static bool nccom_nl_obj_match(const struct nccom_nl_dump *d,
			       struct nccom_object *obj)
{
	if (obj->type != d->type)
		return false;
	if (d->has_hash && to_nccom_comm(obj)->comm_hash != d->f_hash)
		return false;
	return !d->has_dev || to_nccom_queue(obj)->ndev->index == d->f_dev;
}

/* Objects of one client from d->next_handle on; 0 or -EMSGSIZE. */
static int nccom_nl_objs_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
				  struct nccom_nl_client *cl)
{
	struct nccom_nl_dump *d = nccom_nl_dump_state(cb);
	struct nccom_ctx *ctx = nccom_nl_ctx(cl);
	struct nccom_object *obj;
	unsigned long id;
	int err = 0;

	mutex_lock(&ctx->destroy_lock);
	xa_for_each_start(&ctx->objs, id, obj, d->next_handle) {
		if (!nccom_nl_obj_match(d, obj))
			continue;
		err = nccom_nl_dump_entry(skb, cb, nccom_nl_objtypes[obj->type].cmd,
					  nccom_nl_obj_put, obj);
		if (err)
			break;
		d->next_handle = id + 1;
	}
	mutex_unlock(&ctx->destroy_lock);
	return err;
}

int nccom_nl_obj_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nccom_nl_clients_dump(skb, cb, nccom_nl_objs_dump_one);
}

/* ---- gets and resets ---- */

static int nccom_nl_reply(struct genl_info *info, struct sk_buff *skb, int err)
{
	if (err) {
		nlmsg_free(skb);
		return err;
	}
	return genlmsg_reply(skb, info);
}

/* A get's answer: @cmd's message for @arg, sent to the requester. */
static int nccom_nl_get_reply(struct genl_info *info, u8 cmd, nccom_nl_put_fn put,
			      const void *arg)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);

	if (!msg)
		return -ENOMEM;
	return nccom_nl_reply(info, msg, nccom_nl_fill(msg, cmd, info->snd_portid,
						       info->snd_seq, 0, put, arg));
}

/* dev-get and stats-get: the device index attribute of the request. */
int nccom_nl_devs_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool stats = info->genlhdr->cmd == NCCOM_NL_CMD_STATS_GET;
	int attr = stats ? NCCOM_NL_A_STATS_DEV_INDEX : NCCOM_NL_A_DEV_INDEX;
	u32 i;

	if (GENL_REQ_ATTR_CHECK(info, attr))
		return -EINVAL;
	i = nla_get_u32(info->attrs[attr]);
	if (i >= nccom_ndevs) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr], "no such nccom device");
		return -ENOENT;
	}
	return nccom_nl_get_reply(info, info->genlhdr->cmd,
				  stats ? nccom_nl_stats_put : nccom_nl_dev_put,
				  &nccom_devs[i]);
}

int nccom_nl_client_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nccom_nl_viewer v;
	struct nccom_ctx *ctx;
	struct sk_buff *msg;
	int err = -ENOENT;

	if (GENL_REQ_ATTR_CHECK(info, NCCOM_NL_A_CLIENT_ID))
		return -EINVAL;
	nccom_nl_viewer_init(&v, skb);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&nccom_nl_lock);
	ctx = nccom_nl_find_locked(&v, nla_get_u32(info->attrs[NCCOM_NL_A_CLIENT_ID]));
	if (ctx)
		err = nccom_nl_fill(msg, NCCOM_NL_CMD_CLIENT_GET, info->snd_portid,
				    info->snd_seq, 0, nccom_nl_client_put, ctx);
	mutex_unlock(&nccom_nl_lock);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NCCOM_NL_A_CLIENT_ID],
				    "no such client (or not visible to this user)");
	return nccom_nl_reply(info, msg, err);
}

/*
 * Look up (client, handle) of @type for the requester and take a reference;
 * returns the object or an ERR_PTR with the extack set.
 */
static struct nccom_object *nccom_nl_obj_lookup(struct sk_buff *skb,
						struct genl_info *info,
						enum nccom_obj_type type)
{
	int a_client = nccom_nl_objtypes[type].a_client;
	int a_handle = nccom_nl_objtypes[type].a_handle;
	struct nccom_object *obj = ERR_PTR(-ENOENT);
	struct nccom_nl_viewer v;
	struct nccom_ctx *ctx;

	if (GENL_REQ_ATTR_CHECK(info, a_client) || GENL_REQ_ATTR_CHECK(info, a_handle))
		return ERR_PTR(-EINVAL);
	nccom_nl_viewer_init(&v, skb);
	mutex_lock(&nccom_nl_lock);
	ctx = nccom_nl_find_locked(&v, nla_get_u32(info->attrs[a_client]));
	if (!ctx)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[a_client],
				    "no such client (or not visible to this user)");
	else
		obj = nccom_obj_get(ctx, nla_get_u32(info->attrs[a_handle]), type);
	mutex_unlock(&nccom_nl_lock);
	if (ctx && IS_ERR(obj))
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[a_handle],
				    "no object of this type with this handle in the client");
	return obj;
}

/* queue-get, sem-get and comm-get of one (client, handle). */
int nccom_nl_obj_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	enum nccom_obj_type type = nccom_nl_objtype_of(info->nlhdr);
	struct nccom_object *obj;
	int err;

	if (type == NCCOM_OBJ_ANY)
		return -EOPNOTSUPP;
	obj = nccom_nl_obj_lookup(skb, info, type);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	err = nccom_nl_get_reply(info, nccom_nl_objtypes[type].cmd, nccom_nl_obj_put, obj);
	nccom_obj_put(obj);
	return err;
}

/* CAP_NET_ADMIN (GENL_ADMIN_PERM): like NCCOM_IOC_QUEUE_RESET, for an operator. */
int nccom_nl_queue_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nccom_object *obj;
	int err;

	obj = nccom_nl_obj_lookup(skb, info, NCCOM_OBJ_QUEUE);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	err = nccom_queue_reset(to_nccom_queue(obj),
				nla_get_flag(info->attrs[NCCOM_NL_A_QUEUE_DISCARD]));
	nccom_obj_put(obj);
	if (err == -EBUSY)
		NL_SET_ERR_MSG(info->extack, "the queue is not in the error state");
	return err;
}

/* CAP_NET_ADMIN: restart the counters of one device, or of all. */
int nccom_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[NCCOM_NL_A_STATS_DEV_INDEX];
	u32 i, first = 0, last = nccom_ndevs;

	if (a) {
		first = nla_get_u32(a);
		if (first >= nccom_ndevs) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "no such nccom device");
			return -ENOENT;
		}
		last = first + 1;
	}
	for (i = first; i < last; i++) {
		atomic64_set(&nccom_nl_stats[i].base_completed,
			     atomic64_read(&nccom_devs[i].completed));
		atomic64_set(&nccom_nl_stats[i].base_bytes,
			     atomic64_read(&nccom_devs[i].bytes));
		atomic64_set(&nccom_nl_stats[i].queue_errors, 0);
	}
	return 0;
}

