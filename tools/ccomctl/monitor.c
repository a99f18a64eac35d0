// SPDX-License-Identifier: MIT
/*
 * monitor.c - `ccomctl monitor [count N]`: print the driver's events
 * (NCCOM_NL_MCGRP_EVENTS) as they happen, one line (or one JSON object per
 * line with -j) each.  Needs CAP_NET_ADMIN to join the group.
 */
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

struct monitor_state {
	uint32_t count;		/* stop after this many events, 0 = never */
	uint32_t seen;
};

static void monitor_help(void)
{
	fprintf(stderr, "Usage: ccomctl monitor [count N]\n");
}

static int monitor_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct monitor_state *m = arg;
	struct pr *p = &ctl_of(nl)->pr;

	if (!tb[NCCOM_NL_A_EVENT_TYPE])
		return 0;
	pr_open_object(p, NULL);
	pr_str(p, "event", "%s", ctl_event_name(nla_get_u32(tb[NCCOM_NL_A_EVENT_TYPE])));
	if (tb[NCCOM_NL_A_EVENT_TIMESTAMP])
		pr_uint(p, "timestamp_ns", " ts %llu", ctl_nla_u64(tb[NCCOM_NL_A_EVENT_TIMESTAMP]));
	if (tb[NCCOM_NL_A_EVENT_CLIENT_ID])
		pr_uint(p, "client", " client %llu", nla_get_u32(tb[NCCOM_NL_A_EVENT_CLIENT_ID]));
	if (tb[NCCOM_NL_A_EVENT_PID])
		pr_uint(p, "pid", " pid %llu", nla_get_u32(tb[NCCOM_NL_A_EVENT_PID]));
	if (tb[NCCOM_NL_A_EVENT_COMM])
		pr_str(p, "comm", " comm %s", nla_get_string(tb[NCCOM_NL_A_EVENT_COMM]));
	if (tb[NCCOM_NL_A_EVENT_DEV_INDEX])
		pr_uint(p, "dev", " dev %llu", nla_get_u32(tb[NCCOM_NL_A_EVENT_DEV_INDEX]));
	if (tb[NCCOM_NL_A_EVENT_HANDLE])
		pr_uint(p, "handle", " handle %llu", nla_get_u32(tb[NCCOM_NL_A_EVENT_HANDLE]));
	if (tb[NCCOM_NL_A_EVENT_ERROR])
		pr_int(p, "error", " error %lld", (int32_t)nla_get_u32(tb[NCCOM_NL_A_EVENT_ERROR]));
	if (tb[NCCOM_NL_A_EVENT_VALUE])
		pr_uint(p, "value", " value %llu", ctl_nla_u64(tb[NCCOM_NL_A_EVENT_VALUE]));
	if (tb[NCCOM_NL_A_EVENT_INFLIGHT])
		pr_uint(p, "inflight", " inflight %llu", ctl_nla_u64(tb[NCCOM_NL_A_EVENT_INFLIGHT]));
	pr_close_object(p);
	pr_nl(p);
	fflush(p->out);
	m->seen++;
	return m->count && m->seen >= m->count ? 1 : 0;
}

static int monitor_run(struct ccomctl *c)
{
	struct monitor_state m = { 0 };
	bool has_count = false;
	int rc;

	rc = ctl_parse_keyval_u32(c, "count", &m.count, &has_count);
	if (rc)
		return rc;
	if (c->argc > 0) {
		fprintf(stderr, "ccomctl: unknown monitor argument \"%s\"\n", c->argv[0]);
		return CTL_EUSAGE;
	}
	/* One JSON object per line, so a consumer can read events as they come. */
	c->pr.pretty = false;
	return ctl_nl_monitor(&c->nl, NCCOM_NL_A_EVENT_MAX, monitor_line, &m);
}

int cmd_monitor(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", monitor_run },
		{ NULL, NULL },
	};

	if (c->argc > 0 && !strcmp(c->argv[0], "count"))
		return monitor_run(c);
	return ctl_exec(c, cmds, "monitor", monitor_help);
}
