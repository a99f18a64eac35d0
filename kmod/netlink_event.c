// SPDX-License-Identifier: GPL-2.0
/*
 * nccom netlink events: the "events" multicast group of the family in
 * netlink.c (CAP_NET_ADMIN to bind). Queue errors, semaphore wait timeouts
 * and clients released with work in flight, each sent to the listeners in
 * the client's network namespace only; and the per-device counters that
 * stats-get reports. A leaf: queue.c and sem.c call it, it calls no other
 * nccom file.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/ktime.h>
#include <linux/pid.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "netlink_private.h"

/*
 * The registered family, NULL while events cannot be sent: handed over by
 * nccom_nl_init() so that this file needs nothing from the rest of netlink
 * and the subsystems that raise events do not depend on the ops table.
 */
static const struct genl_family *nccom_nl_ev_family;

struct nccom_nl_devstats nccom_nl_stats[NCCOM_MAX_DEVS];

/* An event between nccom_nl_event_new() and nccom_nl_event_send(). */
struct nccom_nl_event {
	const struct genl_family *family;
	void *hdr;
};

/**
 * nccom_nl_events_start() - events may be sent from now on
 * @family: the family, registered
 */
void nccom_nl_events_start(const struct genl_family *family)
{
	WRITE_ONCE(nccom_nl_ev_family, family);
}

/**
 * nccom_nl_events_stop() - no more events, the family is unregistered next
 */
void nccom_nl_events_stop(void)
{
	WRITE_ONCE(nccom_nl_ev_family, NULL);
}

/*
 * Start an event about @cl, or NULL if nobody listens in its namespace.
 * Runs in any context (engine thread under run_lock, ioctl): GFP_ATOMIC.
 */
static struct sk_buff *nccom_nl_event_new(struct nccom_nl_client *cl, u32 type,
					  struct nccom_nl_event *ev)
{
	struct sk_buff *skb;

	ev->family = READ_ONCE(nccom_nl_ev_family);
	if (!ev->family || !genl_has_listeners(ev->family, cl->net, 0))
		return NULL;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	ev->hdr = genlmsg_put(skb, 0, 0, ev->family, 0, NCCOM_NL_CMD_EVENT);
	if (!ev->hdr ||
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
				const struct nccom_nl_event *ev)
{
	genlmsg_end(skb, ev->hdr);
	genlmsg_multicast_netns(ev->family, cl->net, skb, 0, 0, GFP_ATOMIC);
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
	struct nccom_nl_event ev;
	struct sk_buff *skb;

	if (q->dying)
		return;
	atomic64_inc(&nccom_nl_stats[q->ndev->index].queue_errors);
	skb = nccom_nl_event_new(cl, NCCOM_NL_EVENT_QUEUE_ERROR, &ev);
	if (!skb)
		return;
	if (nla_put_u32(skb, NCCOM_NL_A_EVENT_DEV_INDEX, q->ndev->index) ||
	    nla_put_u32(skb, NCCOM_NL_A_EVENT_HANDLE, q->obj.id) ||
	    nla_put_s32(skb, NCCOM_NL_A_EVENT_ERROR, status)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(cl, skb, &ev);
}

/**
 * nccom_nl_sem_timeout() - a semaphore wait of @ctx reached its deadline
 * @ctx: the waiting client
 * @handle: the semaphore's handle in @ctx
 * @value: the value waited for
 */
void nccom_nl_sem_timeout(struct nccom_ctx *ctx, u32 handle, u64 value)
{
	struct nccom_nl_event ev;
	struct sk_buff *skb;

	skb = nccom_nl_event_new(&ctx->nl, NCCOM_NL_EVENT_SEM_TIMEOUT, &ev);
	if (!skb)
		return;
	if (nla_put_u32(skb, NCCOM_NL_A_EVENT_HANDLE, handle) ||
	    nla_put_u64_64bit(skb, NCCOM_NL_A_EVENT_VALUE, value,
			      NCCOM_NL_A_EVENT_PAD)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(&ctx->nl, skb, &ev);
}

/**
 * nccom_nl_client_died() - a client is released with descriptors in flight
 * @cl: the client, already off the client list
 * @inflight: the number of submitted but not completed descriptors
 */
void nccom_nl_client_died(struct nccom_nl_client *cl, u64 inflight)
{
	struct nccom_nl_event ev;
	struct sk_buff *skb;

	skb = nccom_nl_event_new(cl, NCCOM_NL_EVENT_CLIENT_DIED, &ev);
	if (!skb)
		return;
	if (nla_put_u64_64bit(skb, NCCOM_NL_A_EVENT_INFLIGHT, inflight,
			      NCCOM_NL_A_EVENT_PAD)) {
		nlmsg_free(skb);
		return;
	}
	nccom_nl_event_send(cl, skb, &ev);
}
