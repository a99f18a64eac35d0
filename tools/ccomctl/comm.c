// SPDX-License-Identifier: MIT
/*
 * comm.c - `ccomctl comm [show] [hash H] [rank R] [source driver|shm] [all]`:
 * communicators of this host, merged from the driver's registrations
 * (NCCOM_NL_CMD_COMM_GET, when the driver is loaded) and the state libccom
 * publishes in the state directory (always).  A rank found in both is one
 * entry (source "driver+shm").  Stale published entries (their process is
 * gone) are listed only with `all`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/nccom_genl.h>

#include "ccomctl.h"
#include "jobcore.h"
#include "member.h"

struct comm_filter {
	uint64_t hash;
	uint32_t rank;
	const char *source;
	bool has_hash, has_rank, all;
};

static void comm_help(void)
{
	fprintf(stderr, "Usage: ccomctl comm [show] [hash H] [rank R] [source driver|shm] [all]\n");
}

/* One registration of the driver's comm dump into the list (@arg). */
static int comm_nl_member(struct ccomctl *c, struct nlattr **tb, void *arg)
{
	struct member_list *l = arg;
	struct member m;

	(void)c;
	if (!tb[NCCOM_NL_A_COMM_HASH] || !tb[NCCOM_NL_A_COMM_RANK] || !tb[NCCOM_NL_A_COMM_NRANKS])
		return 0;
	memset(&m, 0, sizeof(m));
	m.hash = ctl_nla_u64(tb[NCCOM_NL_A_COMM_HASH]);
	m.rank = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_RANK]);
	m.nranks = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_NRANKS]);
	m.device = -1;
	if (tb[NCCOM_NL_A_COMM_PID])
		m.pid = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_PID]);
	if (tb[NCCOM_NL_A_COMM_STAGE])
		m.stage = nla_get_u32(tb[NCCOM_NL_A_COMM_STAGE]);
	if (tb[NCCOM_NL_A_COMM_STAGE_TIME])
		m.stage_ns = ctl_nla_u64(tb[NCCOM_NL_A_COMM_STAGE_TIME]);
	if (tb[NCCOM_NL_A_COMM_OPS_ISSUED])
		m.ops_issued = ctl_nla_u64(tb[NCCOM_NL_A_COMM_OPS_ISSUED]);
	if (tb[NCCOM_NL_A_COMM_OPS_COMPLETED])
		m.ops_completed = ctl_nla_u64(tb[NCCOM_NL_A_COMM_OPS_COMPLETED]);
	if (tb[NCCOM_NL_A_COMM_LAST_ERROR])
		m.last_error = (int32_t)nla_get_u32(tb[NCCOM_NL_A_COMM_LAST_ERROR]);
	if (tb[NCCOM_NL_A_COMM_ERROR_MSG])
		nla_strlcpy(m.error_msg, tb[NCCOM_NL_A_COMM_ERROR_MSG], sizeof(m.error_msg));
	if (tb[NCCOM_NL_A_COMM_CLIENT_ID])
		m.client = nla_get_u32(tb[NCCOM_NL_A_COMM_CLIENT_ID]);
	if (tb[NCCOM_NL_A_COMM_HANDLE])
		m.handle = nla_get_u32(tb[NCCOM_NL_A_COMM_HANDLE]);
	if (gethostname(m.host, sizeof(m.host) - 1))
		snprintf(m.host, sizeof(m.host), "?");
	/* The registration lives as long as its owner's file descriptor. */
	m.alive = true;
	snprintf(m.source, sizeof(m.source), "driver");
	return member_add(l, &m) ? -ENOMEM : 0;
}

/*
 * The driver's registrations, when its family is there and knows comm-get;
 * otherwise nothing (the published files still answer).  0 or a ctl_exit.
 */
static int comm_collect_driver(struct ccomctl *c, struct member_list *l)
{
	bool quiet = c->quiet;
	int rc;

	c->quiet = true;
	rc = ctl_nl_open(c);
	if (!rc)
		rc = ctl_nl_dump(c, NCCOM_NL_CMD_COMM_GET, NCCOM_NL_A_COMM_MAX, comm_nl_member, l);
	c->quiet = quiet;
	if (rc == CTL_ENODRV)
		return CTL_OK;	/* no driver, or one without comm-get */
	if (rc)
		fprintf(stderr, "ccomctl: the driver's communicator dump failed (exit %d)\n", rc);
	return rc;
}

/* A live published rank the driver also lists: one entry, the driver's plus the file's identity. */
static bool comm_merge(struct member_list *drv, const struct member *f)
{
	size_t i;

	if (!f->alive)
		return false;
	for (i = 0; i < drv->n; i++) {
		struct member *d = &drv->v[i];

		if (d->hash != f->hash || d->rank != f->rank || !strcmp(d->source, "driver+shm"))
			continue;
		d->device = f->device;
		d->start_ns = f->start_ns;
		memcpy(d->host, f->host, sizeof(d->host));
		/* The pid as the rank sees it (the driver's is in our pid namespace). */
		if (!d->pid)
			d->pid = f->pid;
		snprintf(d->source, sizeof(d->source), "driver+shm");
		return true;
	}
	return false;
}

/*
 * Members of this host: the driver's registrations merged with the
 * published files (by comm hash and rank, live files only).  0 or an
 * &enum ctl_exit.
 */
int comm_collect_local(struct ccomctl *c, bool clean, struct member_list *l);
int comm_collect_local(struct ccomctl *c, bool clean, struct member_list *l)
{
	struct member_list files = { 0 };
	size_t i;
	int err, rc;

	rc = comm_collect_driver(c, l);
	if (rc)
		return rc;
	err = pubdir_scan(c->pubdir, clean, &files);
	if (err) {
		member_list_free(&files);
		fprintf(stderr, "ccomctl: cannot read the published state in %s: %s\n", c->pubdir,
			strerror(-err));
		return CTL_EIO;
	}
	for (i = 0; i < files.n && !rc; i++)
		if (!comm_merge(l, &files.v[i]) && member_add(l, &files.v[i]))
			rc = CTL_EIO;
	member_list_free(&files);
	return rc;
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
		} else if (!strcmp(arg, "source")) {
			arg = ctl_next(c);
			if (!arg || (strcmp(arg, "driver") && strcmp(arg, "shm"))) {
				fprintf(stderr, "ccomctl: source must be driver or shm\n");
				return CTL_EUSAGE;
			}
			f->source = arg;
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
		    (f.has_rank && (uint32_t)l.v[i].rank != f.rank) ||
		    (f.source && !strstr(l.v[i].source, f.source)))
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
			    !strcmp(c->argv[0], "source") || !strcmp(c->argv[0], "all")))
		return comm_show(c);
	return ctl_exec(c, cmds, "comm", comm_help);
}
