// SPDX-License-Identifier: MIT
/*
 * stats.c - `ccomctl stats [show [dev N]]` and `ccomctl stats reset [dev N]`
 * (CAP_NET_ADMIN): per-device counters (NCCOM_NL_CMD_STATS_*).
 */
#include <stdio.h>
#include <string.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"

static void stats_help(void)
{
	fprintf(stderr, "Usage: ccomctl stats [show [dev N]]\n"
			"       ccomctl stats reset [dev N]\n");
}

static void stats_u64(struct pr *p, struct nlattr *a, const char *key, const char *fmt)
{
	if (a)
		pr_uint(p, key, fmt, ctl_nla_u64(a));
}

static int stats_line(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct pr *p = &ctl_of(nl)->pr;

	(void)arg;
	if (!tb[NCCOM_NL_A_STATS_DEV_INDEX])
		return 0;
	pr_open_object(p, NULL);
	pr_uint(p, "dev", "dev %llu:", nla_get_u32(tb[NCCOM_NL_A_STATS_DEV_INDEX]));
	stats_u64(p, tb[NCCOM_NL_A_STATS_COMPLETED], "completed", " completed %llu");
	stats_u64(p, tb[NCCOM_NL_A_STATS_BYTES], "bytes", " bytes %llu");
	stats_u64(p, tb[NCCOM_NL_A_STATS_QUEUE_ERRORS], "queue_errors", " queue_errors %llu");
	pr_close_object(p);
	pr_nl(p);
	return 0;
}

static int stats_parse_dev(struct ccomctl *c, uint32_t *dev, bool *has_dev)
{
	int rc;

	if (c->argc > 0 && strcmp(c->argv[0], "dev")) {
		fprintf(stderr, "ccomctl: unknown stats argument \"%s\"\n", c->argv[0]);
		return CTL_EUSAGE;
	}
	rc = ctl_parse_keyval_u32(c, "dev", dev, has_dev);
	if (!rc && c->argc > 0) {
		fprintf(stderr, "ccomctl: unexpected argument \"%s\"\n", c->argv[0]);
		return CTL_EUSAGE;
	}
	return rc;
}

static int stats_request(struct ccomctl *c, uint8_t cmd, bool reset)
{
	bool has_dev = false;
	struct nl_msg *msg;
	uint32_t dev;
	int rc;

	rc = stats_parse_dev(c, &dev, &has_dev);
	if (!rc)
		rc = ctl_nl_open(&c->nl);
	if (rc)
		return rc;
	msg = ctl_nl_msg(&c->nl, cmd, has_dev || reset ? 0 : NLM_F_DUMP);
	if (!msg)
		return CTL_EIO;
	if (has_dev && nla_put_u32(msg, NCCOM_NL_A_STATS_DEV_INDEX, dev)) {
		nlmsg_free(msg);
		return CTL_EIO;
	}
	if (!reset)
		pr_open_array(&c->pr, NULL);
	rc = ctl_nl_request(&c->nl, msg, NCCOM_NL_A_STATS_MAX, stats_line, NULL);
	if (!reset)
		pr_close_array(&c->pr);
	return rc;
}

static int stats_show(struct ccomctl *c)
{
	return stats_request(c, NCCOM_NL_CMD_STATS_GET, false);
}

static int stats_reset(struct ccomctl *c)
{
	return stats_request(c, NCCOM_NL_CMD_STATS_RESET, true);
}

int cmd_stats(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", stats_show },
		{ "list", stats_show },
		{ "reset", stats_reset },
		{ NULL, NULL },
	};

	return ctl_exec(c, cmds, "stats", stats_help);
}
