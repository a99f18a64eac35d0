// SPDX-License-Identifier: MIT
/*
 * events.c - ccomd's listener on the driver's events multicast group: a
 * thread that joins the group (retrying while the driver is not loaded)
 * and keeps the last CCOMD_MAX_EVENTS events and per-type counts.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomd.h"
#include "nl.h"

static int events_cb(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct ccomd *d = arg;
	struct ccomd_event e = { .dev = -1 };

	(void)nl;
	if (!tb[NCCOM_NL_A_EVENT_TYPE])
		return 0;
	e.type = nla_get_u32(tb[NCCOM_NL_A_EVENT_TYPE]);
	if (tb[NCCOM_NL_A_EVENT_TIMESTAMP])
		e.ts_ns = ctl_nla_u64(tb[NCCOM_NL_A_EVENT_TIMESTAMP]);
	if (tb[NCCOM_NL_A_EVENT_CLIENT_ID])
		e.client = nla_get_u32(tb[NCCOM_NL_A_EVENT_CLIENT_ID]);
	if (tb[NCCOM_NL_A_EVENT_PID])
		e.pid = nla_get_u32(tb[NCCOM_NL_A_EVENT_PID]);
	if (tb[NCCOM_NL_A_EVENT_COMM])
		snprintf(e.comm, sizeof(e.comm), "%s", nla_get_string(tb[NCCOM_NL_A_EVENT_COMM]));
	if (tb[NCCOM_NL_A_EVENT_DEV_INDEX])
		e.dev = (int32_t)nla_get_u32(tb[NCCOM_NL_A_EVENT_DEV_INDEX]);
	if (tb[NCCOM_NL_A_EVENT_HANDLE])
		e.handle = nla_get_u32(tb[NCCOM_NL_A_EVENT_HANDLE]);
	if (tb[NCCOM_NL_A_EVENT_ERROR])
		e.error = (int32_t)nla_get_u32(tb[NCCOM_NL_A_EVENT_ERROR]);
	if (tb[NCCOM_NL_A_EVENT_VALUE])
		e.value = ctl_nla_u64(tb[NCCOM_NL_A_EVENT_VALUE]);
	if (tb[NCCOM_NL_A_EVENT_INFLIGHT])
		e.inflight = ctl_nla_u64(tb[NCCOM_NL_A_EVENT_INFLIGHT]);
	fprintf(stderr, "ccomd: event %s client %u pid %u (%s)\n", ctl_event_name(e.type),
		e.client, e.pid, e.comm);
	pthread_mutex_lock(&d->lock);
	d->events[d->nevents % CCOMD_MAX_EVENTS] = e;
	d->nevents++;
	if (e.type < 3)
		d->event_counts[e.type]++;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static void *events_main(void *arg)
{
	struct ccomd *d = arg;
	struct ctl_nl nl;
	int rc;

	for (;;) {
		memset(&nl, 0, sizeof(nl));
		nl.quiet = true;
		rc = ctl_nl_open(&nl);
		if (rc == CTL_OK) {
			pthread_mutex_lock(&d->lock);
			d->events_joined = true;
			pthread_mutex_unlock(&d->lock);
			rc = ctl_nl_monitor(&nl, NCCOM_NL_A_EVENT_MAX, events_cb, d);
			pthread_mutex_lock(&d->lock);
			d->events_joined = false;
			pthread_mutex_unlock(&d->lock);
		}
		ctl_nl_close(&nl);
		if (rc == CTL_EPERM) {
			fprintf(stderr, "ccomd: not allowed to join the nccom events group (run ccomd with CAP_NET_ADMIN); driver events are off\n");
			return NULL;
		}
		/* Driver not loaded (or unloaded): try again later. */
		sleep(5);
	}
	return NULL;
}

int ccomd_events_start(struct ccomd *d)
{
	pthread_t t;
	int rc;

	rc = pthread_create(&t, NULL, events_main, d);
	if (rc) {
		fprintf(stderr, "ccomd: cannot start the events thread: %s\n", strerror(rc));
		return -rc;
	}
	pthread_detach(t);
	return 0;
}

void ccomd_events_print(struct ccomd *d, struct pr *p)
{
	uint64_t i, first;

	pthread_mutex_lock(&d->lock);
	first = d->nevents > CCOMD_MAX_EVENTS ? d->nevents - CCOMD_MAX_EVENTS : 0;
	pr_open_array(p, NULL);
	for (i = first; i < d->nevents; i++) {
		const struct ccomd_event *e = &d->events[i % CCOMD_MAX_EVENTS];

		pr_open_object(p, NULL);
		pr_str(p, "event", "%s", ctl_event_name(e->type));
		pr_uint(p, "timestamp_ns", " ts %llu", e->ts_ns);
		pr_uint(p, "client", " client %llu", e->client);
		pr_uint(p, "pid", " pid %llu", e->pid);
		pr_str(p, "comm", " comm %s", e->comm);
		pr_int(p, "dev", " dev %lld", e->dev);
		pr_uint(p, "handle", " handle %llu", e->handle);
		pr_int(p, "error", " error %lld", e->error);
		pr_uint(p, "value", " value %llu", e->value);
		pr_uint(p, "inflight", " inflight %llu", e->inflight);
		pr_close_object(p);
		pr_nl(p);
	}
	pr_close_array(p);
	pthread_mutex_unlock(&d->lock);
}
