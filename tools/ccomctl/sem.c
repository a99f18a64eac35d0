// SPDX-License-Identifier: MIT
/*
 * sem.c - `ccomctl sem [show [client ID [handle H]]]`: timeline semaphores
 * (NCCOM_NL_CMD_SEM_GET): value, waiters, owner.
 */
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

struct sem_filter {
	uint32_t client, handle;
	bool has_client, has_handle;
};

static void sem_help(void)
{
	fprintf(stderr, "Usage: ccomctl sem [show [client ID [handle H]]]\n");
}

static int sem_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	const struct sem_filter *f = arg;
	struct pr *p = &ctl_of(nl)->pr;

	if (!tb[NCCOM_NL_A_SEM_CLIENT_ID] || !tb[NCCOM_NL_A_SEM_HANDLE])
		return 0;
	if (f->has_client && nla_get_u32(tb[NCCOM_NL_A_SEM_CLIENT_ID]) != f->client)
		return 0;
	pr_open_object(p, NULL);
	pr_uint(p, "client", "client %llu", nla_get_u32(tb[NCCOM_NL_A_SEM_CLIENT_ID]));
	pr_uint(p, "handle", " sem %llu:", nla_get_u32(tb[NCCOM_NL_A_SEM_HANDLE]));
	if (tb[NCCOM_NL_A_SEM_VALUE])
		pr_uint(p, "value", " value %llu", ctl_nla_u64(tb[NCCOM_NL_A_SEM_VALUE]));
	if (tb[NCCOM_NL_A_SEM_WAITERS])
		pr_uint(p, "waiters", " waiters %llu", nla_get_u32(tb[NCCOM_NL_A_SEM_WAITERS]));
	if (tb[NCCOM_NL_A_SEM_OWNER_CLIENT_ID])
		pr_uint(p, "owner", " owner %llu", nla_get_u32(tb[NCCOM_NL_A_SEM_OWNER_CLIENT_ID]));
	if (tb[NCCOM_NL_A_SEM_OWNER_ALIVE])
		pr_bool(p, "owner_alive", " owner_alive %s",
			nla_get_u32(tb[NCCOM_NL_A_SEM_OWNER_ALIVE]) != 0);
	pr_close_object(p);
	pr_nl(p);
	return 0;
}

static int sem_show(struct ccomctl *c)
{
	struct sem_filter f = { 0 };
	struct nl_msg *msg;
	int rc = CTL_OK;

	while (c->argc > 0 && !rc) {
		if (strcmp(c->argv[0], "client") && strcmp(c->argv[0], "handle")) {
			fprintf(stderr, "ccomctl: unknown sem filter \"%s\"\n", c->argv[0]);
			return CTL_EUSAGE;
		}
		rc = ctl_parse_keyval_u32(c, "client", &f.client, &f.has_client);
		if (!rc)
			rc = ctl_parse_keyval_u32(c, "handle", &f.handle, &f.has_handle);
	}
	if (!rc && f.has_handle && !f.has_client) {
		fprintf(stderr, "ccomctl: handle needs client ID (handles are per client)\n");
		rc = CTL_EUSAGE;
	}
	if (!rc)
		rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_SEM_GET, f.has_handle ? 0 : NLM_F_DUMP);
	if (!msg)
		return CTL_EIO;
	if ((f.has_handle && nla_put_u32(msg, NCCOM_NL_A_SEM_HANDLE, f.handle)) ||
	    (f.has_client && nla_put_u32(msg, NCCOM_NL_A_SEM_CLIENT_ID, f.client))) {
		nlmsg_free(msg);
		return CTL_EIO;
	}
	pr_open_array(&c->pr, NULL);
	rc = ctl_nl_request(&c->nl, msg, NCCOM_NL_A_SEM_MAX, sem_line, &f);
	pr_close_array(&c->pr);
	return rc;
}

int cmd_sem(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", sem_show },
		{ "list", sem_show },
		{ NULL, NULL },
	};

	return ctl_exec(c, cmds, "sem", sem_help);
}
