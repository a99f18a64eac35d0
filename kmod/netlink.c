// SPDX-License-Identifier: GPL-2.0
/*
 * nccom netlink: the generic netlink family "nccom" (spec in
 * Documentation/netlink/specs/nccom.yaml, constants in
 * uapi/linux/nccom_genl.h). Dumps and gets of devices, clients (open files
 * of /dev/nccom), communicators registered by clients, queues, semaphores
 * and per-device statistics; two
 * CAP_NET_ADMIN operations (queue-reset, stats-reset); the "events"
 * multicast group (queue errors, semaphore wait timeouts, clients released
 * with work in flight).
 *
 * This file holds the family, its ops table and request policies, the list
 * of clients and the helpers the other two share (netlink_private.h):
 * netlink_dump.c has the get, dump and reset handlers, netlink_event.c the
 * events.
 *
 * Visibility: a request sees the clients opened in its own network
 * namespace, and without CAP_NET_ADMIN only those opened by its own
 * effective uid; anything else looks like it does not exist (-ENOENT).
 * Devices and statistics are visible to everyone. Pids are reported in the
 * requester's pid namespace (0 if not visible there).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "netlink_private.h"

/* Also protects nccom_nl_last_id. */
DEFINE_MUTEX(nccom_nl_lock);
LIST_HEAD(nccom_nl_clients);
static u32 nccom_nl_last_id;

/* ---- clients: who may see what ---- */

void nccom_nl_viewer_init(struct nccom_nl_viewer *v, struct sk_buff *skb)
{
	v->uid = current_euid();
	v->net = sock_net(skb->sk);
	v->admin = netlink_capable(skb, CAP_NET_ADMIN);
}

bool nccom_nl_visible(const struct nccom_nl_viewer *v,
		      const struct nccom_nl_client *cl)
{
	return net_eq(v->net, cl->net) && (v->admin || uid_eq(v->uid, cl->uid));
}

/* Find a visible client by id; the caller holds nccom_nl_lock. */
struct nccom_ctx *nccom_nl_find_locked(const struct nccom_nl_viewer *v, u32 id)
{
	struct nccom_nl_client *cl;

	lockdep_assert_held(&nccom_nl_lock);
	list_for_each_entry(cl, &nccom_nl_clients, node)
		if (cl->id == id)
			return nccom_nl_visible(v, cl) ? nccom_nl_ctx(cl) : NULL;
	return NULL;
}

/* Submitted but not completed descriptors; the user may have lied: clamp. */
static u32 nccom_nl_queue_inflight(struct nccom_queue *q)
{
	u32 n = READ_ONCE(q->hdr->sq_tail) - READ_ONCE(q->cq_tail);

	return min(n, q->depth);
}

/* Live objects and in-flight descriptors of one client. */
void nccom_nl_count(struct nccom_ctx *ctx, struct nccom_nl_counts *c)
{
	struct nccom_object *obj;
	unsigned long id;

	memset(c, 0, sizeof(*c));
	/* Objects in the xarray stay alive while destroy_lock is held. */
	mutex_lock(&ctx->destroy_lock);
	xa_for_each(&ctx->objs, id, obj) {
		if (obj->type == NCCOM_OBJ_QUEUE) {
			c->queues++;
			c->inflight += nccom_nl_queue_inflight(to_nccom_queue(obj));
		} else if (obj->type == NCCOM_OBJ_SEM) {
			c->sems++;
		} else if (obj->type == NCCOM_OBJ_MEM) {
			c->mems++;
		}
	}
	mutex_unlock(&ctx->destroy_lock);
}

/* ---- messages ---- */

/* One message of @cmd whose attributes @put writes; 0 or -EMSGSIZE. */
int nccom_nl_fill(struct sk_buff *skb, u8 cmd, u32 portid, u32 seq, int flags,
		  nccom_nl_put_fn put, const void *arg)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &nccom_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (put(skb, arg)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * ---- request policies ----
 *
 * One per attribute set, shared by the get, dump and reset of that set.
 * Written by hand, not generated with ynl-gen-c.py --mode kernel: for a
 * genetlink-c family the generator emits struct genl_split_ops (6.2 on, not
 * in 6.1) with separate do and dump policies that reject attributes these
 * accept, it has no range checks to emit, its string length is one more,
 * and its events group lacks GENL_MCAST_CAP_NET_ADMIN. Keep these in step
 * with Documentation/netlink/specs/nccom.yaml.
 */

const struct nla_policy nccom_nl_dev_policy[NCCOM_NL_A_DEV_MAX + 1] = {
	[NCCOM_NL_A_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, NCCOM_MAX_DEVS - 1),
};

const struct nla_policy nccom_nl_client_policy[NCCOM_NL_A_CLIENT_MAX + 1] = {
	[NCCOM_NL_A_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_CLIENT_COMM] = { .type = NLA_NUL_STRING, .len = TASK_COMM_LEN - 1 },
};

const struct nla_policy nccom_nl_queue_policy[NCCOM_NL_A_QUEUE_MAX + 1] = {
	[NCCOM_NL_A_QUEUE_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_QUEUE_HANDLE] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_QUEUE_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, NCCOM_MAX_DEVS - 1),
	[NCCOM_NL_A_QUEUE_DISCARD] = { .type = NLA_FLAG },
};

const struct nla_policy nccom_nl_sem_policy[NCCOM_NL_A_SEM_MAX + 1] = {
	[NCCOM_NL_A_SEM_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_SEM_HANDLE] = NLA_POLICY_MIN(NLA_U32, 1),
};

const struct nla_policy nccom_nl_comm_policy[NCCOM_NL_A_COMM_MAX + 1] = {
	[NCCOM_NL_A_COMM_CLIENT_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_COMM_HANDLE] = NLA_POLICY_MIN(NLA_U32, 1),
	[NCCOM_NL_A_COMM_HASH] = { .type = NLA_U64 },
};

const struct nla_policy nccom_nl_stats_policy[NCCOM_NL_A_STATS_MAX + 1] = {
	[NCCOM_NL_A_STATS_DEV_INDEX] = NLA_POLICY_MAX(NLA_U32, NCCOM_MAX_DEVS - 1),
};

/* A get command with its dump: doit, start, dumpit and the shared done. */
#define NCCOM_NL_GET_OP(_cmd, _doit, _start, _dumpit, _policy, _max) {	\
		.cmd = _cmd,						\
		.doit = _doit,						\
		.start = _start,					\
		.dumpit = _dumpit,					\
		.done = nccom_nl_dump_done,				\
		.policy = _policy,					\
		.maxattr = _max,					\
	}

static const struct genl_ops nccom_nl_ops[] = {
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_DEV_GET, nccom_nl_devs_get_doit,
			nccom_nl_devs_start, nccom_nl_dev_dumpit,
			nccom_nl_dev_policy, NCCOM_NL_A_DEV_MAX),
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_CLIENT_GET, nccom_nl_client_get_doit,
			nccom_nl_client_start, nccom_nl_client_dumpit,
			nccom_nl_client_policy, NCCOM_NL_A_CLIENT_MAX),
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_QUEUE_GET, nccom_nl_obj_get_doit,
			nccom_nl_obj_start, nccom_nl_obj_dumpit,
			nccom_nl_queue_policy, NCCOM_NL_A_QUEUE_MAX),
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_SEM_GET, nccom_nl_obj_get_doit,
			nccom_nl_obj_start, nccom_nl_obj_dumpit,
			nccom_nl_sem_policy, NCCOM_NL_A_SEM_MAX),
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_STATS_GET, nccom_nl_devs_get_doit,
			nccom_nl_devs_start, nccom_nl_stats_dumpit,
			nccom_nl_stats_policy, NCCOM_NL_A_STATS_MAX),
	{
		.cmd = NCCOM_NL_CMD_QUEUE_RESET,
		.doit = nccom_nl_queue_reset_doit,
		.policy = nccom_nl_queue_policy,
		.maxattr = NCCOM_NL_A_QUEUE_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = NCCOM_NL_CMD_STATS_RESET,
		.doit = nccom_nl_stats_reset_doit,
		.policy = nccom_nl_stats_policy,
		.maxattr = NCCOM_NL_A_STATS_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	NCCOM_NL_GET_OP(NCCOM_NL_CMD_COMM_GET, nccom_nl_obj_get_doit,
			nccom_nl_obj_start, nccom_nl_obj_dumpit,
			nccom_nl_comm_policy, NCCOM_NL_A_COMM_MAX),
};

static const struct genl_multicast_group nccom_nl_mcgrps[] = {
	{ .name = NCCOM_NL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN, },
};

struct genl_family nccom_nl_family = {
	.name = NCCOM_GENL_NAME,
	.version = NCCOM_GENL_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = nccom_nl_ops,
	.n_ops = ARRAY_SIZE(nccom_nl_ops),
	.mcgrps = nccom_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(nccom_nl_mcgrps),
};

/* ---- client lifecycle (called from main.c) and registration ---- */

/**
 * nccom_nl_client_add() - make a new open file visible to netlink
 * @ctx: the file's context, before it is published to the file
 *
 * Records the opener (tgid, euid, network namespace, command name).
 */
void nccom_nl_client_add(struct nccom_ctx *ctx)
{
	struct nccom_nl_client *cl = &ctx->nl;

	cl->tgid = get_pid(task_tgid(current));
	cl->uid = current_euid();
	cl->net = get_net(current->nsproxy->net_ns);
	get_task_comm(cl->comm, current);
	mutex_lock(&nccom_nl_lock);
	/* Ids grow, so the list stays sorted for resumable dumps. */
	cl->id = ++nccom_nl_last_id;
	list_add_tail(&cl->node, &nccom_nl_clients);
	mutex_unlock(&nccom_nl_lock);
}

/**
 * nccom_nl_client_del() - the file is being released
 * @ctx: its context, before any object is destroyed
 *
 * Takes the client off the dump list (waiting for a dump that walks it)
 * and sends a client-died event if descriptors were still in flight.
 * nccom_nl_client_fini() must follow once the objects are gone.
 */
void nccom_nl_client_del(struct nccom_ctx *ctx)
{
	struct nccom_nl_client *cl = &ctx->nl;
	struct nccom_nl_counts c;

	mutex_lock(&nccom_nl_lock);
	list_del(&cl->node);
	mutex_unlock(&nccom_nl_lock);
	nccom_nl_count(ctx, &c);
	if (c.inflight)
		nccom_nl_client_died(cl, c.inflight);
}

/**
 * nccom_nl_client_fini() - drop what nccom_nl_client_add() referenced
 * @ctx: the context, after all its objects were destroyed (no event about
 *	it can be raised any more)
 */
void nccom_nl_client_fini(struct nccom_ctx *ctx)
{
	put_net(ctx->nl.net);
	put_pid(ctx->nl.tgid);
}

/**
 * nccom_nl_init() - register the "nccom" generic netlink family
 *
 * Return: 0 or a negative errno from genl_register_family().
 */
int nccom_nl_init(void)
{
	int ret;

	ret = genl_register_family(&nccom_nl_family);
	if (ret)
		return ret;
	nccom_nl_events_start(&nccom_nl_family);
	return 0;
}

/**
 * nccom_nl_exit() - unregister the family (no client is left at this point)
 */
void nccom_nl_exit(void)
{
	nccom_nl_events_stop();
	genl_unregister_family(&nccom_nl_family);
}
