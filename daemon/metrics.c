// SPDX-License-Identifier: MIT
/*
 * metrics.c - Prometheus text exposition (format 0.0.4) of what ccomd
 * knows: per-rank state of the library-published communicators, the
 * driver's devices and statistics (when it is loaded) and the events seen.
 */
#include <stdio.h>

#include <netlink/genl/genl.h>

#include <linux/nccom_genl.h>

#include "ccomd.h"
#include "nl.h"

/* Label values escape backslash, double quote and newline. */
static void metric_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void metric_head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric_rank(FILE *out, const char *name, const struct member *m, double v)
{
	fprintf(out, "%s{comm=\"%016llx\",name=\"", name, (unsigned long long)m->hash);
	metric_label(out, m->name);
	fprintf(out, "\",rank=\"%d\",nranks=\"%d\",host=\"", m->rank, m->nranks);
	metric_label(out, m->host);
	fprintf(out, "\",pid=\"%d\"} %.17g\n", m->pid, v);
}

/* One family (HELP/TYPE) followed by one sample per live rank. */
static void metrics_ranks(struct ccomd *d, FILE *out, const struct member_list *l)
{
	static const struct {
		const char *name, *type, *help;
	} fams[] = {
		{ "ccom_comm_ops_issued_total", "counter", "Operations issued by the rank." },
		{ "ccom_comm_ops_completed_total", "counter", "Operations completed by the rank." },
		{ "ccom_comm_stage", "gauge",
		  "Stage of the rank (enum nccom_nl_stage: 9 ready, 13 error)." },
		{ "ccom_comm_last_error", "gauge", "Last error of the rank (negative errno, 0 none)." },
		{ "ccom_comm_idle_seconds", "gauge",
		  "Seconds since the rank's completed counter or stage last moved." },
	};
	size_t f, i;
	double v;

	for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		metric_head(out, fams[f].name, fams[f].type, fams[f].help);
		for (i = 0; i < l->n; i++) {
			const struct member *m = &l->v[i];

			if (!m->alive)
				continue;
			if (f == 0)
				v = (double)m->ops_issued;
			else if (f == 1)
				v = (double)m->ops_completed;
			else if (f == 2)
				v = m->stage;
			else if (f == 3)
				v = m->last_error;
			else
				v = ccomd_state_idle_s(d, m);
			if (v >= 0 || f == 3)
				metric_rank(out, fams[f].name, m, v);
		}
	}
}

struct metrics_ctx {
	FILE *out;
	int pass;		/* which device family is being printed */
};

static int metrics_dev_cb(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct metrics_ctx *m = arg;
	static const int attrs[] = { NCCOM_NL_A_DEV_NQUEUES, NCCOM_NL_A_DEV_COMPLETED,
				     NCCOM_NL_A_DEV_BYTES };
	static const char *const names[] = { "ccom_dev_queues", "ccom_dev_completed_total",
					     "ccom_dev_bytes_total" };
	struct nlattr *a = tb[attrs[m->pass]];

	(void)nl;
	if (!tb[NCCOM_NL_A_DEV_INDEX] || !a)
		return 0;
	fprintf(m->out, "%s{dev=\"%u\"} %llu\n", names[m->pass],
		nla_get_u32(tb[NCCOM_NL_A_DEV_INDEX]), (unsigned long long)ctl_nla_u64(a));
	return 0;
}

static int metrics_stats_cb(struct ctl_nl *nl, struct nlattr **tb, void *arg)
{
	struct metrics_ctx *m = arg;

	(void)nl;
	if (!tb[NCCOM_NL_A_STATS_DEV_INDEX] || !tb[NCCOM_NL_A_STATS_QUEUE_ERRORS])
		return 0;
	fprintf(m->out, "ccom_dev_queue_errors_total{dev=\"%u\"} %llu\n",
		nla_get_u32(tb[NCCOM_NL_A_STATS_DEV_INDEX]),
		(unsigned long long)ctl_nla_u64(tb[NCCOM_NL_A_STATS_QUEUE_ERRORS]));
	return 0;
}

/* The driver's devices through a private netlink socket; false if not loaded. */
static bool metrics_driver(FILE *out)
{
	static const char *const help[][3] = {
		{ "ccom_dev_queues", "gauge", "Live queues on the nccom device." },
		{ "ccom_dev_completed_total", "counter", "Descriptors completed by the device." },
		{ "ccom_dev_bytes_total", "counter", "Bytes copied or reduced by the device." },
	};
	struct metrics_ctx m = { .out = out };
	struct ctl_nl nl = { .quiet = true };

	if (ctl_nl_open(&nl) != CTL_OK)
		return false;
	for (m.pass = 0; m.pass < 3; m.pass++) {
		metric_head(out, help[m.pass][0], help[m.pass][1], help[m.pass][2]);
		ctl_nl_dump(&nl, NCCOM_NL_CMD_DEV_GET, NCCOM_NL_A_DEV_MAX, metrics_dev_cb, &m);
	}
	metric_head(out, "ccom_dev_queue_errors_total", "counter",
		    "Queues of the device that entered the error state.");
	ctl_nl_dump(&nl, NCCOM_NL_CMD_STATS_GET, NCCOM_NL_A_STATS_MAX, metrics_stats_cb, &m);
	ctl_nl_close(&nl);
	return true;
}

void ccomd_metrics(struct ccomd *d, FILE *out)
{
	static const char *const ev[] = { "queue-error", "sem-timeout", "client-died" };
	struct member_list l = { 0 };
	size_t i, live = 0;
	bool drv;
	int err;

	err = ccomd_members(d, false, &l);
	for (i = 0; i < l.n; i++)
		live += l.v[i].alive;
	metric_head(out, "ccom_publish_ranks", "gauge",
		    "Live communicator ranks on this host (published state and driver registrations).");
	fprintf(out, "ccom_publish_ranks %zu\n", live);
	metric_head(out, "ccom_publish_scan_ok", "gauge",
		    "1 if the published state (and the driver's registrations) could be read.");
	fprintf(out, "ccom_publish_scan_ok %d\n", err ? 0 : 1);
	metrics_ranks(d, out, &l);
	member_list_free(&l);
	drv = metrics_driver(out);
	metric_head(out, "ccom_driver_loaded", "gauge", "1 if the nccom netlink family exists.");
	fprintf(out, "ccom_driver_loaded %d\n", drv);
	metric_head(out, "ccom_events_total", "counter", "Driver events received by ccomd.");
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < 3; i++)
		fprintf(out, "ccom_events_total{type=\"%s\"} %llu\n", ev[i],
			(unsigned long long)d->event_counts[i]);
	metric_head(out, "ccomd_events_joined", "gauge", "1 while ccomd listens to driver events.");
	fprintf(out, "ccomd_events_joined %d\n", d->events_joined);
	metric_head(out, "ccomd_requests_total", "counter", "HTTP requests served.");
	fprintf(out, "ccomd_requests_total %llu\n", (unsigned long long)d->requests);
	pthread_mutex_unlock(&d->lock);
}
