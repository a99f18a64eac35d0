// SPDX-License-Identifier: MIT
/*
 * comm.c - `ccomctl comm [show] [hash H] [rank R] [all]`: communicators
 * of this host, merged from the driver's registrations
 * (NCCOM_NL_CMD_COMM_GET, when the driver is loaded) and the state libccom
 * publishes in the state directory (always).  Stale published entries
 * (their process is gone) are listed only with `all`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"
#include "jobcore.h"
#include "member.h"

struct comm_filter {
	uint64_t hash;
	uint32_t rank;
	bool has_hash, has_rank, all;
};

static void comm_help(void)
{
	fprintf(stderr, "Usage: ccomctl comm [show] [hash H] [rank R] [all]\n");
}

static int comm_nl_member(struct ccomctl *c, struct nlattr **tb, void *arg)
{
	struct member m = { .device = -1, .alive = true };

	(void)c;
	if (!tb[NCCOM_NL_A_COMM_HASH] || !tb[NCCOM_NL_A_COMM_RANK])
		return 0;
	m.hash = ctl_nla_u64(tb[NCCOM_NL_A_COMM_HASH]);
	m.rank = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_RANK]);
	if (tb[NCCOM_NL_A_COMM_NRANKS])
		m.nranks = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_NRANKS]);
	if (tb[NCCOM_NL_A_COMM_STAGE])
		m.stage = nla_get_u32(tb[NCCOM_NL_A_COMM_STAGE]);
	if (tb[NCCOM_NL_A_COMM_OPS_ISSUED])
		m.ops_issued = ctl_nla_u64(tb[NCCOM_NL_A_COMM_OPS_ISSUED]);
	if (tb[NCCOM_NL_A_COMM_OPS_COMPLETED])
		m.ops_completed = ctl_nla_u64(tb[NCCOM_NL_A_COMM_OPS_COMPLETED]);
	if (tb[NCCOM_NL_A_COMM_LAST_ERROR])
		m.last_error = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_LAST_ERROR]);
	if (tb[NCCOM_NL_A_COMM_PID])
		m.pid = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_PID]);
	snprintf(m.source, sizeof(m.source), "driver");
	if (gethostname(m.host, sizeof(m.host) - 1))
		m.host[0] = '\0';
	return member_add(arg, &m) ? -ENOMEM : 0;
}

/*
 * Members of this host: the driver's (if loaded and new enough; its absence
 * is normal here) then the published files.  0 or an &enum ctl_exit.
 */
int comm_collect_local(struct ccomctl *c, bool clean, struct member_list *l);
int comm_collect_local(struct ccomctl *c, bool clean, struct member_list *l)
{
	int err;

	c->quiet = true;
	if (ctl_nl_open(c) == CTL_OK)
		ctl_nl_dump(c, NCCOM_NL_CMD_COMM_GET, NCCOM_NL_A_COMM_MAX, comm_nl_member, l);
	c->quiet = false;
	err = pubdir_scan(c->pubdir, clean, l);
	if (err) {
		fprintf(stderr, "ccomctl: cannot read the published state in %s: %s\n", c->pubdir,
			strerror(-err));
		return CTL_EIO;
	}
	return CTL_OK;
}

static int comm_parse(struct ccomctl *c, struct comm_filter *f)
{
	const char *arg;

	while ((arg = ctl_next(c))) {
		if (!strcmp(arg, "all")) {
			f->all = true;
		} else if (!strcmp(arg, "hash")) {
			arg = ctl_next(c);
			if (job_parse_hash(arg, &f->hash)) {
				fprintf(stderr, "ccomctl: hash needs a hexadecimal communicator hash\n");
				return CTL_EUSAGE;
			}
			f->has_hash = true;
		} else if (!strcmp(arg, "rank")) {
			if (ctl_parse_u32("rank", ctl_next(c), &f->rank))
				return CTL_EUSAGE;
			f->has_rank = true;
		} else {
			fprintf(stderr, "ccomctl: unknown comm argument \"%s\"; try `ccomctl comm help`\n",
				arg);
			return CTL_EUSAGE;
		}
	}
	return CTL_OK;
}

static int comm_show(struct ccomctl *c)
{
	struct comm_filter f = { 0 };
	struct member_list l = { 0 };
	size_t i;
	int rc;

	rc = comm_parse(c, &f);
	if (!rc)
		rc = comm_collect_local(c, false, &l);
	if (rc)
		goto out;
	member_sort(&l);
	pr_open_array(&c->pr, NULL);
	for (i = 0; i < l.n; i++) {
		if ((!f.all && !l.v[i].alive) || (f.has_hash && l.v[i].hash != f.hash) ||
		    (f.has_rank && (uint32_t)l.v[i].rank != f.rank))
			continue;
		member_line(&c->pr, &l.v[i]);
	}
	pr_close_array(&c->pr);
out:
	member_list_free(&l);
	return rc;
}

int cmd_comm(struct ccomctl *c)
{
	static const struct ctl_cmd cmds[] = {
		{ "show", comm_show },
		{ "list", comm_show },
		{ NULL, NULL },
	};

	if (c->argc > 0 && (!strcmp(c->argv[0], "hash") || !strcmp(c->argv[0], "rank") ||
			    !strcmp(c->argv[0], "all")))
		return comm_show(c);
	return ctl_exec(c, cmds, "comm", comm_help);
}
