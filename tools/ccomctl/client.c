// SPDX-License-Identifier: MIT
/*
 * client.c - `ccomctl client [show [ID]]`: open file descriptors of
 * /dev/nccom (NCCOM_NL_CMD_CLIENT_GET); unprivileged callers see their own
 * uid's clients only.
 */
#include <stdio.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

static void client_help(void)
{
	fprintf(stderr, "Usage: ccomctl client [show [ID]]\n");
}

static int client_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct pr *p = &ctl_of(nl)->pr;

	(void)arg;
	if (!tb[NCCOM_NL_A_CLIENT_ID])
		return 0;
	pr_open_object(p, NULL);
	pr_uint(p, "client", "client %llu:", nla_get_u32(tb[NCCOM_NL_A_CLIENT_ID]));
	if (tb[NCCOM_NL_A_CLIENT_PID])
		pr_uint(p, "pid", " pid %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_PID]));
	if (tb[NCCOM_NL_A_CLIENT_UID])
		pr_uint(p, "uid", " uid %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_UID]));
	if (tb[NCCOM_NL_A_CLIENT_COMM])
		pr_str(p, "comm", " comm %s", nla_get_string(tb[NCCOM_NL_A_CLIENT_COMM]));
	if (tb[NCCOM_NL_A_CLIENT_NOBJECTS])
		pr_uint(p, "objects", " objects %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_NOBJECTS]));
	if (tb[NCCOM_NL_A_CLIENT_NQUEUES])
		pr_uint(p, "queues", " queues %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_NQUEUES]));
	if (tb[NCCOM_NL_A_CLIENT_NSEMS])
		pr_uint(p, "sems", " sems %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_NSEMS]));
	if (tb[NCCOM_NL_A_CLIENT_NMEMS])
		pr_uint(p, "mems", " mems %llu", nla_get_u32(tb[NCCOM_NL_A_CLIENT_NMEMS]));
	if (tb[NCCOM_NL_A_CLIENT_PINNED_PAGES])
		pr_uint(p, "pinned_pages", " pinned %llu",
			ctl_nla_u64(tb[NCCOM_NL_A_CLIENT_PINNED_PAGES]));
	if (tb[NCCOM_NL_A_CLIENT_INFLIGHT])
		pr_uint(p, "inflight", " inflight %llu", ctl_nla_u64(tb[NCCOM_NL_A_CLIENT_INFLIGHT]));
	pr_close_object(p);
	pr_nl(p);
	return 0;
}

static int client_show(struct ccomctl *c)
{
	struct nl_msg *msg;
	uint32_t id;
	int rc;

	rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	if (c->argc > 0) {
		rc = ctl_parse_u32("client id", ctl_next(c), &id);
		if (rc)
			return rc;
		msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_CLIENT_GET, 0);
		if (!msg || nla_put_u32(msg, NCCOM_NL_A_CLIENT_ID, id))
			return CTL_EIO;
	} else {
		msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_CLIENT_GET, NLM_F_DUMP);
		if (!msg)
			return CTL_EIO;
	}
	pr_open_array(&c->pr, NULL);
	rc = ctl_nl_request(&c->nl, msg, NCCOM_NL_A_CLIENT_MAX, client_line, NULL);
	pr_close_array(&c->pr);
	return rc;
}

int cmd_client(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", client_show },
		{ "list", client_show },
		{ NULL, NULL },
	};

	return ctl_exec(c, cmds, "client", client_help);
}
