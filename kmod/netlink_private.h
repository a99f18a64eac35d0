/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nccom netlink internals shared by the three files of the "nccom" family:
 * netlink.c (family, ops table, policies, clients, common helpers),
 * netlink_dump.c (get, dump and reset handlers) and netlink_event.c (the
 * events multicast group). The rest of the driver includes netlink.h only.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#ifndef _NCCOM_NETLINK_PRIVATE_H
#define _NCCOM_NETLINK_PRIVATE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <net/genetlink.h>

#include "../uapi/linux/nccom_genl.h"
#include "nccom_private.h"

extern struct genl_family nccom_nl_family;

/*
 * Protects nccom_nl_clients (sorted by id). Taken before a client's
 * destroy_lock, never inside it.
 */
extern struct mutex nccom_nl_lock;
extern struct list_head nccom_nl_clients;

/*
 * Counters kept by netlink itself (netlink_event.c counts queue errors),
 * and the baseline set by stats-reset.
 */
struct nccom_nl_devstats {
	atomic64_t queue_errors;
	atomic64_t base_completed;
	atomic64_t base_bytes;
};

extern struct nccom_nl_devstats nccom_nl_stats[NCCOM_MAX_DEVS];

/* Who is asking: decides which clients a request may see. */
struct nccom_nl_viewer {
	kuid_t uid;
	struct net *net;
	bool admin;
};

struct nccom_nl_counts {
	u32 queues;
	u32 sems;
	u32 mems;
	u64 inflight;
};

static inline struct nccom_ctx *nccom_nl_ctx(struct nccom_nl_client *cl)
{
	return container_of(cl, struct nccom_ctx, nl);
}

/* Writes the attributes of one message; nonzero if @skb is full. */
typedef int (*nccom_nl_put_fn)(struct sk_buff *skb, const void *arg);

/* netlink.c */
void nccom_nl_viewer_init(struct nccom_nl_viewer *v, struct sk_buff *skb);
bool nccom_nl_visible(const struct nccom_nl_viewer *v,
		      const struct nccom_nl_client *cl);
struct nccom_ctx *nccom_nl_find_locked(const struct nccom_nl_viewer *v, u32 id);
void nccom_nl_count(struct nccom_ctx *ctx, struct nccom_nl_counts *c);
int nccom_nl_fill(struct sk_buff *skb, u8 cmd, u32 portid, u32 seq, int flags,
		  nccom_nl_put_fn put, const void *arg);

extern const struct nla_policy nccom_nl_dev_policy[NCCOM_NL_A_DEV_MAX + 1];
extern const struct nla_policy nccom_nl_client_policy[NCCOM_NL_A_CLIENT_MAX + 1];
extern const struct nla_policy nccom_nl_queue_policy[NCCOM_NL_A_QUEUE_MAX + 1];
extern const struct nla_policy nccom_nl_sem_policy[NCCOM_NL_A_SEM_MAX + 1];
extern const struct nla_policy nccom_nl_comm_policy[NCCOM_NL_A_COMM_MAX + 1];
extern const struct nla_policy nccom_nl_stats_policy[NCCOM_NL_A_STATS_MAX + 1];

/* netlink_dump.c: the handlers of the ops table */
int nccom_nl_dump_done(struct netlink_callback *cb);
int nccom_nl_devs_start(struct netlink_callback *cb);
int nccom_nl_dev_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int nccom_nl_stats_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int nccom_nl_client_start(struct netlink_callback *cb);
int nccom_nl_client_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int nccom_nl_obj_start(struct netlink_callback *cb);
int nccom_nl_obj_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int nccom_nl_devs_get_doit(struct sk_buff *skb, struct genl_info *info);
int nccom_nl_client_get_doit(struct sk_buff *skb, struct genl_info *info);
int nccom_nl_obj_get_doit(struct sk_buff *skb, struct genl_info *info);
int nccom_nl_queue_reset_doit(struct sk_buff *skb, struct genl_info *info);
int nccom_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info);

/* netlink_event.c */
void nccom_nl_events_start(const struct genl_family *family);
void nccom_nl_events_stop(void);
void nccom_nl_client_died(struct nccom_nl_client *cl, u64 inflight);

#endif /* _NCCOM_NETLINK_PRIVATE_H */
