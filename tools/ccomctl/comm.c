// SPDX-License-Identifier: MIT
/*
 * comm.c - `ccomctl comm [show] [hash H] [rank R] [source driver|shm] [all]`:
 * communicators of this host, merged from the driver's registrations and
 * the published state (commlist.c).  Stale published entries (their process
 * is gone) are listed only with `all`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ccomctl.h"
#include "jobcore.h"
#include "commlist.h"

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
		rc = comm_collect_local(&c->nl, c->pubdir, false, &l);
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
