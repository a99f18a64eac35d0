// SPDX-License-Identifier: MIT
/*
 * job.c - `ccomctl job HASH [peers H:P,...] [timeout MS]`: the ranks of one
 * communicator over several hosts: this host's (driver and published
 * state) plus what each listed ccomd peer reports, with the missing ranks
 * and the ranks that are behind.  Without `peers`, the peers are those the
 * local ccomd (-s, default 127.0.0.1:9464) was configured with (its
 * GET /v1/peers): one list per host, kept in ccomd.conf, serves both.
 * Exit 0 when every rank was found, 4 when some are missing, 5 when a peer
 * (or the ccomd named with -s) could not be queried.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ccomctl.h"
#include "commlist.h"
#include "jobcore.h"


static void job_help(void)
{
	fprintf(stderr, "Usage: ccomctl job HASH [peers HOST:PORT[,HOST:PORT...]] [timeout MS]\n");
}

static int job_show(struct ccomctl *c, const char *hash_arg)
{
	static struct job_peer peers[JOB_MAX_PEERS];
	struct member_list l = { 0 };
	int npeers = -1, i, rc, bad = 0;
	const char *arg;
	uint32_t ms;
	uint64_t hash;

	if (job_parse_hash(hash_arg, &hash)) {
		fprintf(stderr, "ccomctl: job needs a hexadecimal communicator hash, got \"%s\"\n",
			hash_arg);
		return CTL_EUSAGE;
	}
	while ((arg = ctl_next(c))) {
		if (!strcmp(arg, "peers")) {
			arg = ctl_next(c);
			npeers = arg ? job_parse_peers(arg, peers) : -1;
			if (npeers < 0) {
				fprintf(stderr, "ccomctl: peers needs HOST:PORT[,HOST:PORT...] (at most %d)\n",
					JOB_MAX_PEERS);
				return CTL_EUSAGE;
			}
		} else if (!strcmp(arg, "timeout")) {
			if (ctl_parse_u32("timeout", ctl_next(c), &ms) || !ms)
				return CTL_EUSAGE;
			c->timeout_ms = (int)ms;
		} else {
			fprintf(stderr, "ccomctl: unknown job argument \"%s\"\n", arg);
			return CTL_EUSAGE;
		}
	}
	if (npeers < 0) {
		/*
		 * No ccomd on this host (the default address refuses) is a
		 * single-host question: this host's ranks only, as before.
		 */
		npeers = job_ccomd_peers(c->ccomd, c->timeout_ms, peers);
		if (npeers < 0 && c->ccomd_given) {
			fprintf(stderr, "ccomctl: ccomd %s did not list its peers (GET /v1/peers: %s); start it there, or name the hosts with `peers HOST:PORT,...`\n",
				c->ccomd, strerror(-npeers));
			return CTL_EIO;
		}
		if (npeers < 0)
			npeers = 0;
	}
	rc = comm_collect_local(&c->nl, c->pubdir, false, &l);
	for (i = 0; i < npeers && !rc; i++) {
		job_fetch_peer(&peers[i], hash, c->timeout_ms, &l);
		if (peers[i].err) {
			fprintf(stderr, "ccomctl: ccomd peer %s: %s\n", peers[i].addr,
				strerror(-peers[i].err));
			bad++;
		}
	}
	if (!rc) {
		job_filter(&l, hash);
		if (!job_print(&c->pr, hash, &l, peers, npeers))
			rc = CTL_ENOENT;
		if (bad)
			rc = CTL_EIO;
	}
	member_list_free(&l);
	return rc;
}

int cmd_job(struct ccomctl *c)
{
	const char *arg = ctl_next(c);

	if (!arg || ctl_match(arg, "help")) {
		job_help();
		return arg ? CTL_OK : CTL_EUSAGE;
	}
	if (!strcmp(arg, "show"))
		arg = ctl_next(c);
	if (!arg) {
		job_help();
		return CTL_EUSAGE;
	}
	return job_show(c, arg);
}
