// SPDX-License-Identifier: MIT
/*
 * queue.c - `ccomctl queue [show [client ID [handle H]] [dev N] [state S]]`
 * and `ccomctl queue reset client ID handle H [discard]` (CAP_NET_ADMIN):
 * the driver's submission/completion rings (NCCOM_NL_CMD_QUEUE_*).
 */
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

struct queue_filter {
	uint32_t client, handle, dev, state;
	bool has_client, has_handle, has_dev, has_state;
};

static void queue_help(void)
{
	fprintf(stderr,
		"Usage: ccomctl queue [show [client ID [handle H]] [dev N] [state active|error]]\n"
		"       ccomctl queue reset client ID handle H [discard]\n");
}

static const char *queue_state_name(uint32_t s)
{
	switch (s) {
	case NCCOM_NL_QUEUE_STATE_ACTIVE:
		return "active";
	case NCCOM_NL_QUEUE_STATE_ERROR:
		return "error";
	default:
		return "unknown";
	}
}

static bool queue_skip(const struct queue_filter *f, struct nlattr **tb)
{
	if (f->has_client && tb[NCCOM_NL_A_QUEUE_CLIENT_ID] &&
	    nla_get_u32(tb[NCCOM_NL_A_QUEUE_CLIENT_ID]) != f->client)
		return true;
	if (f->has_dev && tb[NCCOM_NL_A_QUEUE_DEV_INDEX] &&
	    nla_get_u32(tb[NCCOM_NL_A_QUEUE_DEV_INDEX]) != f->dev)
		return true;
	return f->has_state && tb[NCCOM_NL_A_QUEUE_STATE] &&
	       nla_get_u32(tb[NCCOM_NL_A_QUEUE_STATE]) != f->state;
}

static void queue_u32(struct pr *p, struct nlattr *a, const char *key, const char *fmt)
{
	if (a)
		pr_uint(p, key, fmt, nla_get_u32(a));
}

static int queue_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct pr *p = &ctl_of(nl)->pr;

	if (!tb[NCCOM_NL_A_QUEUE_CLIENT_ID] || !tb[NCCOM_NL_A_QUEUE_HANDLE] || queue_skip(arg, tb))
		return 0;
	pr_open_object(p, NULL);
	pr_uint(p, "client", "client %llu", nla_get_u32(tb[NCCOM_NL_A_QUEUE_CLIENT_ID]));
	pr_uint(p, "handle", " queue %llu:", nla_get_u32(tb[NCCOM_NL_A_QUEUE_HANDLE]));
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_DEV_INDEX], "dev", " dev %llu");
	if (tb[NCCOM_NL_A_QUEUE_STATE])
		pr_str(p, "state", " state %s",
		       queue_state_name(nla_get_u32(tb[NCCOM_NL_A_QUEUE_STATE])));
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_DEPTH], "depth", " depth %llu");
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_SQ_HEAD], "sq_head", " sq %llu");
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_SQ_TAIL], "sq_tail", "/%llu");
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_CQ_HEAD], "cq_head", " cq %llu");
	queue_u32(p, tb[NCCOM_NL_A_QUEUE_CQ_TAIL], "cq_tail", "/%llu");
	if (tb[NCCOM_NL_A_QUEUE_COMPLETED])
		pr_uint(p, "completed", " completed %llu",
			ctl_nla_u64(tb[NCCOM_NL_A_QUEUE_COMPLETED]));
	if (tb[NCCOM_NL_A_QUEUE_ERROR])
		pr_int(p, "error", " error %lld", (int32_t)nla_get_u32(tb[NCCOM_NL_A_QUEUE_ERROR]));
	pr_close_object(p);
	pr_nl(p);
	return 0;
}

static int queue_parse_filter(struct ccomctl *c, struct queue_filter *f)
{
	const char *s;
	int rc;

	while (c->argc > 0) {
		if (!strcmp(c->argv[0], "state")) {
			ctl_next(c);
			s = ctl_next(c);
			f->has_state = true;
			if (s && !strcmp(s, "active")) {
				f->state = NCCOM_NL_QUEUE_STATE_ACTIVE;
			} else if (s && !strcmp(s, "error")) {
				f->state = NCCOM_NL_QUEUE_STATE_ERROR;
			} else {
				fprintf(stderr, "ccomctl: state must be active or error\n");
				return CTL_EUSAGE;
			}
			continue;
		}
		if (strcmp(c->argv[0], "client") && strcmp(c->argv[0], "handle") &&
		    strcmp(c->argv[0], "dev")) {
			fprintf(stderr, "ccomctl: unknown queue filter \"%s\"\n", c->argv[0]);
			return CTL_EUSAGE;
		}
		rc = ctl_parse_keyval_u32(c, "client", &f->client, &f->has_client);
		if (!rc)
			rc = ctl_parse_keyval_u32(c, "handle", &f->handle, &f->has_handle);
		if (!rc)
			rc = ctl_parse_keyval_u32(c, "dev", &f->dev, &f->has_dev);
		if (rc)
			return rc;
	}
	if (f->has_handle && !f->has_client) {
		fprintf(stderr, "ccomctl: handle needs client ID (handles are per client)\n");
		return CTL_EUSAGE;
	}
	return CTL_OK;
}

static int queue_show(struct ccomctl *c)
{
	struct queue_filter f = { 0 };
	struct nl_msg *msg;
	int rc;

	rc = queue_parse_filter(c, &f);
	if (!rc)
		rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_QUEUE_GET, f.has_handle ? 0 : NLM_F_DUMP);
	if (!msg)
		return CTL_EIO;
	/* A dump carries client and dev as kernel-side filters (and they are re-checked here). */
	if ((f.has_handle && nla_put_u32(msg, NCCOM_NL_A_QUEUE_HANDLE, f.handle)) ||
	    (f.has_client && nla_put_u32(msg, NCCOM_NL_A_QUEUE_CLIENT_ID, f.client)) ||
	    (!f.has_handle && f.has_dev && nla_put_u32(msg, NCCOM_NL_A_QUEUE_DEV_INDEX, f.dev))) {
		nlmsg_free(msg);
		return CTL_EIO;
	}
	pr_open_array(&c->pr, NULL);
	rc = ctl_nl_request(&c->nl, msg, NCCOM_NL_A_QUEUE_MAX, queue_line, &f);
	pr_close_array(&c->pr);
	return rc;
}

static int queue_reset(struct ccomctl *c)
{
	struct queue_filter f = { 0 };
	bool discard = false;
	struct nl_msg *msg;
	int rc;

	if (c->argc > 0 && !strcmp(c->argv[c->argc - 1], "discard")) {
		discard = true;
		c->argc--;
	}
	rc = queue_parse_filter(c, &f);
	if (rc)
		return rc;
	if (!f.has_client || !f.has_handle || f.has_dev || f.has_state) {
		fprintf(stderr, "ccomctl: queue reset needs exactly client ID handle H [discard]\n");
		return CTL_EUSAGE;
	}
	rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_QUEUE_RESET, 0);
	if (!msg || nla_put_u32(msg, NCCOM_NL_A_QUEUE_CLIENT_ID, f.client) ||
	    nla_put_u32(msg, NCCOM_NL_A_QUEUE_HANDLE, f.handle) ||
	    (discard && nla_put_flag(msg, NCCOM_NL_A_QUEUE_DISCARD)))
		return CTL_EIO;
	return ctl_nl_request(&c->nl, msg, NCCOM_NL_A_QUEUE_MAX, queue_line, &f);
}

int cmd_queue(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", queue_show },
		{ "list", queue_show },
		{ "reset", queue_reset },
		{ NULL, NULL },
	};

	return ctl_exec(c, cmds, "queue", queue_help);
}
