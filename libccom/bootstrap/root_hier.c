// SPDX-License-Identifier: MIT
/*
 * root_hier.c - the bootstrap root's part of the hierarchical bootstrap:
 * one rank per host (its leader, bootstrap/hier.c) checks in and then
 * reports the runs of ranks of its host, or its host's failure; once every
 * rank is in, each leader learns its place in the ring of all leaders.
 * The poll loop that calls it is root.c's, the combine step of several
 * roots root_multi.c's.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/root_private.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

/* Hierarchical: every rank is in; tell each host leader its place in the leaders' ring. */
void ccom_bs_root_all_in_hier(struct root *rt)
{
	int *lead, h = 0, r, mine = rt->nleaders;

	/* With several roots the leaders of the other roots are marked too (root 0's table). */
	for (rt->nleaders = 0, r = 0; r < rt->nranks; r++)
		rt->nleaders += rt->ranks[r].leader;
	lead = malloc(rt->nleaders * sizeof(*lead));
	ccom_info(CCOM_SUBSYS_BOOT, "Bootstrap root %d/%d: all %d ranks of its range checked in through %d host leaders (%d in the job) after %.3f ms",
		  rt->idx, rt->nids, rt->hi - rt->lo, mine, rt->nleaders,
		  (ccom_now_us() - rt->first_us) / 1e3);
	for (r = 0; lead && r < rt->nranks; r++)
		if (rt->ranks[r].leader)
			lead[h++] = r;
	for (h = 0; lead && h < rt->nleaders; h++) {
		struct ccom_bs_host_info hi = {
			.nhosts = rt->nleaders,
			.index = h,
			.prev_leader = lead[(h - 1 + rt->nleaders) % rt->nleaders],
			.next_leader = lead[(h + 1) % rt->nleaders],
		};
		int fd = root_rank_fd(rt, lead[h]);

		if (fd < 0)
			continue;	/* a leader of another root */
		ccom_bs_root_send_reply_data(fd, rt->magic, 0, &rt->addrs[hi.next_leader], &hi, sizeof(hi));
		ccom_bs_root_conn_close(rt, lead[h]);
	}
	free(lead);
}

/* Hierarchical: host leader @l sends ranks of its host (runs), or its host's failure. */
void ccom_bs_root_members_in(struct root *rt, int l)
{
	const struct ccom_bs_hello *lh = &rt->ranks[l].hello;
	int64_t until = ccom_now_us() + 2000000;
	struct ccom_bs_members m;
	struct ccom_bs_run run[64];
	char text[CCOM_BS_MAX_MSG + 1];
	uint32_t k;
	int r, fd = root_rank_fd(rt, l);

	if (ccom_sock_recv_all(fd, &m, sizeof(m), until, NULL)) {
		ccom_bs_root_hangup(rt, l);
		return;
	}
	if (m.magic != rt->magic || m.type != CCOM_BS_MEMBERS || m.msg_len > CCOM_BS_MAX_MSG ||
	    (!m.err && m.count > sizeof(run) / sizeof(run[0]))) {
		snprintf(rt->msg, sizeof(rt->msg), "host leader rank %d (%s pid %d) sent a malformed member list",
			 l, lh->host, lh->pid);
		ccom_bs_root_fail(rt, -EPROTO, rt->deadline);
		return;
	}
	if (m.err) {
		size_t len = m.msg_len;

		if (ccom_sock_recv_all(fd, text, len, until, NULL))
			len = 0;
		text[len] = '\0';
		snprintf(rt->msg, sizeof(rt->msg), "%.1000s", len ? text : "a host leader failed");
		ccom_bs_root_fail(rt, m.err, rt->latest);
		return;
	}
	if (ccom_sock_recv_all(fd, run, m.count * sizeof(run[0]), until, NULL)) {
		ccom_bs_root_hangup(rt, l);
		return;
	}
	for (k = 0; k < m.count; k++) {
		/* With several roots a leader's members check in with its root: its range. */
		if (run[k].first < rt->lo || run[k].n < 1 || run[k].first >= rt->hi ||
		    run[k].n > rt->hi - run[k].first) {
			snprintf(rt->msg, sizeof(rt->msg),
				 "host leader rank %d (%s pid %d) reported ranks %d-%lld to the root of ranks %d-%d of a job of %d",
				 l, lh->host, lh->pid, run[k].first,
				 (long long)run[k].first + run[k].n - 1,
				 rt->lo, rt->hi - 1, rt->nranks);
			ccom_bs_root_fail(rt, -EINVAL, rt->deadline);
			return;
		}
		for (r = run[k].first; r < run[k].first + run[k].n; r++) {
			if (rt->ranks[r].in) {
				const struct ccom_bs_hello *o = &rt->ranks[rt->ranks[r].via].hello;

				snprintf(rt->msg, sizeof(rt->msg),
					 "duplicate rank: rank %d checked in twice (on the host of rank %d, %s pid %d, and on that of rank %d, %s pid %d); every process must pass a distinct rank",
					 r, rt->ranks[r].via, o->host, o->pid, l, lh->host, lh->pid);
				ccom_bs_root_fail(rt, -EPERM, rt->deadline);
				return;
			}
			rt->ranks[r].in = 1;
			rt->ranks[r].via = l;
			rt->count++;
		}
	}
	ccom_trace(CCOM_SUBSYS_BOOT, "Bootstrap root: host leader %d reported %u run(s), %d ranks in",
		   l, m.count, rt->count);
}
