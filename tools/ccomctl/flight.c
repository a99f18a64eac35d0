// SPDX-License-Identifier: MIT
/*
 * flight.c - `ccomctl flight HASH [rank R]`: the flight recorder of each
 * live rank of one communicator on this host, read from the published
 * state (the ring libccom's proxy/flight.c keeps in each rank's state
 * file; ccom_pubstate.h "operation ring"), oldest operation first.  The
 * process is not asked: a rank that hangs, or is stopped, shows the same.
 * Exit 0 when at least one rank was printed, 4 when none has a recorder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ccomctl.h"
#include "jobcore.h"
#include "member.h"

struct flight_args {
	struct pr *pr;
	uint32_t rank;
	bool has_rank;
	int printed;
};

static void flight_help(void)
{
	fprintf(stderr, "Usage: ccomctl flight HASH [rank R]\n");
}

static int flight_one(const struct member *m, const struct member_op *ops, size_t n, void *arg)
{
	struct flight_args *a = arg;

	if (a->has_rank && (uint32_t)m->rank != a->rank)
		return 0;
	member_flight(a->pr, m, ops, n);
	a->printed++;
	return 0;
}

int cmd_flight(struct ccomctl *c)
{
	struct flight_args a = { .pr = &c->pr };
	const char *arg = ctl_next(c);
	uint64_t hash;
	int rc;

	if (!arg || ctl_match(arg, "help")) {
		flight_help();
		return arg ? CTL_OK : CTL_EUSAGE;
	}
	if (job_parse_hash(arg, &hash)) {
		fprintf(stderr, "ccomctl: flight needs a hexadecimal communicator hash, got \"%s\"\n",
			arg);
		return CTL_EUSAGE;
	}
	while ((arg = ctl_next(c))) {
		if (!strcmp(arg, "rank")) {
			if (ctl_parse_u32("rank", ctl_next(c), &a.rank))
				return CTL_EUSAGE;
			a.has_rank = true;
		} else {
			fprintf(stderr, "ccomctl: unknown flight argument \"%s\"\n", arg);
			return CTL_EUSAGE;
		}
	}
	pr_open_array(&c->pr, NULL);
	rc = pubdir_flight(c->pubdir, hash, flight_one, &a);
	pr_close_array(&c->pr);
	if (rc < 0) {
		fprintf(stderr, "ccomctl: cannot read the published state in %s: %s\n", c->pubdir,
			strerror(-rc));
		return CTL_EIO;
	}
	if (!a.printed) {
		fprintf(stderr,
			"ccomctl: no live rank of comm %016llx%s in %s has a flight recorder (not running here, CCOM_PUBLISH=0 or CCOM_FLIGHT_RECORDER_ENTRIES=0)\n",
			(unsigned long long)hash, a.has_rank ? " with that rank" : "", c->pubdir);
		return CTL_ENOENT;
	}
	return CTL_OK;
}
