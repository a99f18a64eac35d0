// SPDX-License-Identifier: MIT
/*
 * member.c - the member list and its printer (member.h), shared by
 * ccomctl's comm/job objects and ccomd.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/nccom_genl.h>

#include "member.h"

int member_add(struct member_list *l, const struct member *m)
{
	struct member *v;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 16;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *m;
	return 0;
}

void member_list_free(struct member_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const char *member_stage_name(uint32_t stage)
{
	static const char *const names[] = {
		[NCCOM_NL_STAGE_NONE] = "none",
		[NCCOM_NL_STAGE_VALIDATE] = "validate",
		[NCCOM_NL_STAGE_BOOTSTRAP] = "bootstrap",
		[NCCOM_NL_STAGE_PEER_INFO] = "peer-info",
		[NCCOM_NL_STAGE_RANKS] = "ranks",
		[NCCOM_NL_STAGE_TOPO] = "topo",
		[NCCOM_NL_STAGE_ALIGN] = "align",
		[NCCOM_NL_STAGE_CONNECT] = "connect",
		[NCCOM_NL_STAGE_BARRIER] = "barrier",
		[NCCOM_NL_STAGE_READY] = "ready",
		[NCCOM_NL_STAGE_FINALIZING] = "finalizing",
		[NCCOM_NL_STAGE_DESTROYED] = "destroyed",
		[NCCOM_NL_STAGE_ABORTED] = "aborted",
		[NCCOM_NL_STAGE_ERROR] = "error",
	};

	if (stage < sizeof(names) / sizeof(names[0]) && names[stage])
		return names[stage];
	return "unknown";
}

const char *member_op_state_name(uint32_t state)
{
	static const char *const names[] = {
		[CCOM_PUB_OP_ISSUED] = "issued", [CCOM_PUB_OP_STARTED] = "started",
		[CCOM_PUB_OP_DONE] = "done", [CCOM_PUB_OP_FAILED] = "failed",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}

void member_op_desc(const struct member_op *o, char *buf, size_t len)
{
	if (o->nsubs)
		snprintf(buf, len, "%s of %d, first %llu x %s", o->kind, o->nsubs,
			 (unsigned long long)o->count, o->dtype);
	else
		snprintf(buf, len, "%s, %llu x %s", o->kind, (unsigned long long)o->count, o->dtype);
}

void member_op_line(struct pr *p, const struct member_op *o)
{
	pr_open_object(p, NULL);
	pr_uint(p, "seq", "op %llu", o->seq);
	pr_str(p, "collective", " %s", o->kind);
	pr_uint(p, "count", " %llu", o->count);
	pr_str(p, "dtype", " x %s", o->dtype);
	if (o->redop[0])
		pr_str(p, "op", " %s", o->redop);
	if (o->root >= 0)
		pr_int(p, "root", " root/peer %lld", o->root);
	if (o->nsubs)
		pr_int(p, "nsubs", " (%lld sends+recvs)", o->nsubs);
	if (o->algo[0] || o->proto[0]) {
		pr_str(p, "algorithm", " %s", o->algo[0] ? o->algo : "-");
		pr_str(p, "protocol", "/%s", o->proto[0] ? o->proto : "-");
	}
	pr_str(p, "state", " %s", member_op_state_name(o->state));
	if (o->err)
		pr_int(p, "error", " error %lld", o->err);
	if (o->age_ms >= 0)
		pr_int(p, "age_ms", o->state >= CCOM_PUB_OP_DONE ? " in %lld ms" : " for %lld ms",
		       o->age_ms);
	pr_uint(p, "stream_seq", "", o->stream_seq);
	pr_close_object(p);
}

void member_line(struct pr *p, const struct member *m)
{
	pr_open_object(p, NULL);
	pr_hex(p, "hash", "comm %016llx", m->hash);
	if (m->name[0])
		pr_str(p, "name", " name \"%s\"", m->name);
	pr_int(p, "rank", " rank %lld", m->rank);
	pr_int(p, "nranks", "/%lld", m->nranks);
	pr_str(p, "stage", " stage %s", member_stage_name(m->stage));
	pr_uint(p, "ops_issued", " issued %llu", m->ops_issued);
	pr_uint(p, "ops_completed", " completed %llu", m->ops_completed);
	pr_int(p, "last_error", " error %lld", m->last_error);
	pr_str(p, "host", " host %s", m->host);
	pr_int(p, "pid", " pid %lld", m->pid);
	pr_int(p, "device", " dev %lld", m->device);
	if (m->client) {
		pr_uint(p, "client", " client %llu", m->client);
		pr_uint(p, "handle", "", m->handle);
	}
	pr_str(p, "source", " [%s", m->source);
	if (p->json)
		pr_bool(p, "alive", "", m->alive);
	pr_text(p, " %s]", m->alive ? "alive" : "stale");
	if (m->stopped)
		pr_bool(p, "stopped", " (process stopped: %s)", m->stopped);
	pr_uint(p, "stage_time_ns", "", m->stage_ns);
	if (m->error_msg[0])
		pr_str(p, "error_msg", "\n    last error: %s", m->error_msg);
	if (m->cma[0])
		pr_str(p, "cma", "\n    cma: %s", m->cma);
	pr_uint(p, "ring", "", m->ring);
	if (m->ring) {
		int i;

		pr_uint(p, "last_seq", "\n    last issued op %llu", m->last_seq);
		/* Text: the op the rank is in, the oldest not ended; JSON: the recent ops. */
		for (i = 0; !p->json && i < m->nops; i++)
			if (m->ops[i].state < CCOM_PUB_OP_DONE)
				break;
		if (!p->json && i < m->nops) {
			pr_text(p, ", in ");
			member_op_line(p, &m->ops[i]);
		}
		if (p->json) {
			pr_open_array(p, "ops");
			for (i = 0; i < m->nops; i++)
				member_op_line(p, &m->ops[i]);
			pr_close_array(p);
		}
	}
	pr_close_object(p);
	pr_nl(p);
}

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

void member_sort(struct member_list *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), member_cmp);
}

void member_flight(struct pr *p, const struct member *m, const struct member_op *ops, size_t n)
{
	size_t i;

	pr_open_object(p, NULL);
	pr_hex(p, "hash", "comm %016llx", m->hash);
	if (m->name[0])
		pr_str(p, "name", " name \"%s\"", m->name);
	pr_int(p, "rank", " rank %lld", m->rank);
	pr_int(p, "nranks", "/%lld", m->nranks);
	pr_str(p, "host", " host %s", m->host);
	pr_int(p, "pid", " pid %lld", m->pid);
	pr_uint(p, "entries", ": flight recorder of %llu entries", m->ring);
	pr_uint(p, "last_seq", ", last issued op %llu", m->last_seq);
	pr_uint(p, "ops_completed", ", %llu completed", m->ops_completed);
	pr_nl(p);
	pr_open_array(p, "ops");
	for (i = 0; i < n; i++) {
		pr_text(p, "  ");
		member_op_line(p, &ops[i]);
		pr_nl(p);
	}
	pr_close_array(p);
	pr_close_object(p);
}
