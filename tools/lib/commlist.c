// SPDX-License-Identifier: MIT
/*
 * commlist.c - the communicator ranks of this host, as `ccomctl comm`,
 * `ccomctl job` and ccomd see them: the driver's registrations (netlink
 * comm-get, when the driver is loaded and knows it) merged with the state
 * files libccom publishes (always read).  A live file and a registration
 * with the same comm hash and rank are one entry (source "driver+shm").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/nccom_genl.h>

#include "commlist.h"

/* One registration of the driver's comm dump into the list (@arg). */
static int comm_nl_member(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct member_list *l = arg;
	struct member m;

	(void)nl;
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
static int comm_collect_driver(struct ctl_nl *nl, struct member_list *l)
{
	bool quiet = nl->quiet;
	int rc;

	nl->quiet = true;
	rc = ctl_nl_open(nl);
	if (!rc)
		rc = ctl_nl_dump(nl, NCCOM_NL_CMD_COMM_GET, NCCOM_NL_A_COMM_MAX, comm_nl_member, l);
	nl->quiet = quiet;
	if (rc == CTL_ENODRV)
		return CTL_OK;	/* no driver, or one without comm-get */
	if (rc && !quiet)
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
		memcpy(d->name, f->name, sizeof(d->name));
		memcpy(d->cma, f->cma, sizeof(d->cma));
		/* The pid as the rank sees it (the driver's is in our pid namespace). */
		if (!d->pid)
			d->pid = f->pid;
		/* The op ring is only in the file. */
		d->ring = f->ring;
		d->last_seq = f->last_seq;
		d->nops = f->nops;
		memcpy(d->ops, f->ops, sizeof(d->ops));
		snprintf(d->source, sizeof(d->source), "driver+shm");
		return true;
	}
	return false;
}

int comm_collect_local(struct ctl_nl *nl, const char *pubdir, bool clean, struct member_list *l)
{
	struct member_list files = { 0 };
	size_t i;
	int err, rc;

	/* A failed driver dump still lets the files answer; its error is returned. */
	rc = comm_collect_driver(nl, l);
	err = pubdir_scan(pubdir, clean, &files);
	if (err) {
		member_list_free(&files);
		if (!nl->quiet)
			fprintf(stderr, "ccomctl: cannot read the published state in %s: %s\n",
				pubdir, strerror(-err));
		return CTL_EIO;
	}
	for (i = 0; i < files.n && !rc; i++)
		if (!comm_merge(l, &files.v[i]) && member_add(l, &files.v[i]))
			rc = CTL_EIO;
	member_list_free(&files);
	return rc;
}
