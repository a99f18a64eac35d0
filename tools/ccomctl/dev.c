// SPDX-License-Identifier: MIT
/*
 * dev.c - `ccomctl dev [show [INDEX]]`: the driver's virtual devices
 * (NCCOM_NL_CMD_DEV_GET, dump or get).
 */
#include <stdio.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

static void dev_help(void)
{
	fprintf(stderr, "Usage: ccomctl dev [show [INDEX]]\n");
}

/* One device; a missing attribute is simply not printed. */
static int dev_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct pr *p = &ctl_of(nl)->pr;

	(void)arg;
	if (!tb[NCCOM_NL_A_DEV_INDEX])
		return 0;
	pr_open_object(p, NULL);
	pr_uint(p, "dev", "dev %llu:", nla_get_u32(tb[NCCOM_NL_A_DEV_INDEX]));
	if (tb[NCCOM_NL_A_DEV_NUMA_NODE])
		pr_int(p, "numa_node", " numa %lld", (int32_t)nla_get_u32(tb[NCCOM_NL_A_DEV_NUMA_NODE]));
	if (tb[NCCOM_NL_A_DEV_NENGINES])
		pr_uint(p, "engines", " engines %llu", nla_get_u32(tb[NCCOM_NL_A_DEV_NENGINES]));
	if (tb[NCCOM_NL_A_DEV_NQUEUES])
		pr_uint(p, "queues", " queues %llu", nla_get_u32(tb[NCCOM_NL_A_DEV_NQUEUES]));
	if (tb[NCCOM_NL_A_DEV_COMPLETED])
		pr_uint(p, "completed", " completed %llu", ctl_nla_u64(tb[NCCOM_NL_A_DEV_COMPLETED]));
	if (tb[NCCOM_NL_A_DEV_BYTES])
		pr_uint(p, "bytes", " bytes %llu", ctl_nla_u64(tb[NCCOM_NL_A_DEV_BYTES]));
	pr_close_object(p);
	pr_nl(p);
	return 0;
}

static int dev_show(struct ccomctl *c)
{
	struct nl_msg *msg;
	uint32_t index;
	int rc;

	rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	if (c->argc > 0) {
		rc = ctl_parse_u32("device index", ctl_next(c), &index);
		if (rc)
			return rc;
		msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_DEV_GET, 0);
		if (!msg || nla_put_u32(msg, NCCOM_NL_A_DEV_INDEX, index))
			return CTL_EIO;
	} else {
		msg = ctl_nl_msg(&c->nl, NCCOM_NL_CMD_DEV_GET, NLM_F_DUMP);
		if (!msg)
			return CTL_EIO;
	}
	pr_open_array(&c->pr, NULL);
	rc = ctl_nl_request(&c->nl, msg, NCCOM_NL_A_DEV_MAX, dev_line, NULL);
	pr_close_array(&c->pr);
	return rc;
}

int cmd_dev(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", dev_show },
		{ "list", dev_show },
		{ NULL, NULL },
	};

	return ctl_exec(c, cmds, "dev", dev_help);
}
