/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nccom generic netlink family "nccom": what the rest of the driver calls
 * (client lifecycle and registration in netlink.c, events in
 * netlink_event.c). Spec: Documentation/netlink/specs/nccom.yaml.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#ifndef _NCCOM_NETLINK_H
#define _NCCOM_NETLINK_H

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct nccom_ctx;
struct nccom_queue;
struct pid;
struct net;

/**
 * struct nccom_nl_client - netlink's view of one open file (&nccom_ctx.nl)
 * @node: on the list of clients, under the netlink client lock, by @id
 * @id: client id, unique while the module is loaded
 * @tgid: thread-group pid of the opener (referenced)
 * @uid: effective uid of the opener
 * @net: network namespace of the opener (referenced); dumps and events
 *	of the client are visible in this namespace only
 * @comm: command name of the opener
 */
struct nccom_nl_client {
	struct list_head node;
	u32 id;
	struct pid *tgid;
	kuid_t uid;
	struct net *net;
	char comm[TASK_COMM_LEN];
};

/* netlink.c */
int nccom_nl_init(void);
void nccom_nl_exit(void);
void nccom_nl_client_add(struct nccom_ctx *ctx);
void nccom_nl_client_del(struct nccom_ctx *ctx);
void nccom_nl_client_fini(struct nccom_ctx *ctx);

/* netlink_event.c */
void nccom_nl_queue_error(struct nccom_queue *q, int status);
void nccom_nl_sem_timeout(struct nccom_ctx *ctx, u32 handle, u64 value);

#endif /* _NCCOM_NETLINK_H */
