// SPDX-License-Identifier: GPL-2.0
/*
 * nccom netlink events: the "events" multicast group of the family in
 * netlink.c (CAP_NET_ADMIN to bind). Queue errors, semaphore wait timeouts
 * and clients released with work in flight, each sent to the listeners in
 * the client's network namespace only.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/ktime.h>
#include <linux/pid.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "netlink_private.h"

/*
 * Start an event about @cl, or NULL if nobody listens in its namespace.
 * Runs in any context (engine thread under run_lock, ioctl): GFP_ATOMIC.
 */
static struct sk_buff *nccom_nl_event_new(struct nccom_nl_client *cl, u32 type,
					  void **hdr)
{
	struct sk_buff *skb;

	if (!READ_ONCE(nccom_nl_ready) ||
	    !genl_has_listeners(&nccom_nl_family, cl->net, 0))
		return NULL;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &nccom_nl_family, 0, NCCOM_NL_CMD_EVENT);
	if (!*hdr ||
	    nla_put_u32(skb, NCCOM_NL_A_EVENT_TYPE, type) ||
	    nla_put_u64_64bit(skb, NCCOM_NL_A_EVENT_TIMESTAMP, ktime_get_ns(),
			      NCCOM_NL_A_EVENT_PAD) ||
	    nla_put_u32(skb, NCCOM_NL_A_EVENT_CLIENT_ID, cl->id) ||
	    nla_put_u32(skb, NCCOM_NL_A_EVENT_PID, pid_nr(cl->tgid)) ||
	    nla_put_string(skb, NCCOM_NL_A_EVENT_COMM, cl->comm)) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void nccom_nl_event_send(struct nccom_nl_client *cl, struct sk_buff *skb,
				void *hdr)
{
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&nccom_nl_family, cl->net, skb, 0, 0, GFP_ATOMIC);
}

/**
 * nccom_nl_queue_error() - a queue entered the error state
 * @q: the queue; the caller holds its run_lock
 * @status: negative errno of the failing descriptor
 *
 * Counts the error and sends a queue-error event, except for the
 * cancellations of a queue being destroyed.
 */
void nccom_nl_queue_error(struct nccom_queue *q, int status)
{
	struct nccom_nl_client *cl = &q->obj.ctx->nl;
	struct sk_buff *skb;
	void *hdr;

	if (q->dying)
		return;
	atomic64_inc(&nccom_nl_stats[q->ndev->index].queue_errors);
	skb = nccom_nl_event_new(cl, NCCOM_NL_EVENT_QUEUE_ERROR, &hdr);
	if (!skb)
		return;
	if (nla_put_u32(skb, NCCOM_NL_A_EVENT_DEV_INDEX, q->ndev->index) ||
	    nla_put_u32(skb, NCCOM_NL_A_EVENT_HANDLE, q->obj.id) ||
	    nla_put_s32(skb, NCCOM_NL_A_EVENT_ERROR, status)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(cl, skb, hdr);
}

/**
 * nccom_nl_sem_timeout() - a semaphore wait of @ctx reached its deadline
 * @ctx: the waiting client
 * @handle: the semaphore's handle in @ctx
 * @value: the value waited for
 */
void nccom_nl_sem_timeout(struct nccom_ctx *ctx, u32 handle, u64 value)
{
	struct sk_buff *skb;
	void *hdr;

	skb = nccom_nl_event_new(&ctx->nl, NCCOM_NL_EVENT_SEM_TIMEOUT, &hdr);
	if (!skb)
		return;
	if (nla_put_u32(skb, NCCOM_NL_A_EVENT_HANDLE, handle) ||
	    nla_put_u64_64bit(skb, NCCOM_NL_A_EVENT_VALUE, value,
			      NCCOM_NL_A_EVENT_PAD)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(&ctx->nl, skb, hdr);
}

/**
 * nccom_nl_client_died() - a client is released with descriptors in flight
 * @cl: the client, already off the client list
 * @inflight: the number of submitted but not completed descriptors
 */
void nccom_nl_client_died(struct nccom_nl_client *cl, u64 inflight)
{
	struct sk_buff *skb;
	void *hdr;

	skb = nccom_nl_event_new(cl, NCCOM_NL_EVENT_CLIENT_DIED, &hdr);
	if (!skb)
		return;
	if (nla_put_u64_64bit(skb, NCCOM_NL_A_EVENT_INFLIGHT, inflight,
			      NCCOM_NL_A_EVENT_PAD)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(cl, skb, hdr);
}
