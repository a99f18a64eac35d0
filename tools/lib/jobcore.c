// SPDX-License-Identifier: MIT
/*
 * jobcore.c - gathering and summarising the ranks of one communicator
 * across hosts (jobcore.h).  "Behind" means: in an earlier stage than the
 * most advanced rank, or in the same stage with fewer completed
 * operations; the most behind rank is the one to look at first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "http.h"
#include "jobcore.h"

int job_parse_hash(const char *s, uint64_t *hash)
{
	char *end;

	if (!s || !s[0])
		return -EINVAL;
	errno = 0;
	*hash = strtoull(s, &end, 16);
	if (errno || *end || s[0] == '-')
		return -EINVAL;
	return 0;
}

int job_parse_peers(const char *list, struct job_peer *peers)
{
	const char *p = list, *comma;
	size_t len;
	int n = 0;

	while (p && *p) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(peers[0].addr) || n == JOB_MAX_PEERS ||
		    !memchr(p, ':', len))
			return -EINVAL;
		memset(&peers[n], 0, sizeof(peers[n]));
		memcpy(peers[n].addr, p, len);
		n++;
		p = comma ? comma + 1 : NULL;
	}
	return n;
}

static int64_t json_int(json_object *o, const char *key, int64_t def)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : def;
}

static void json_str(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *v;

	buf[0] = '\0';
	if (json_object_object_get_ex(o, key, &v))
		snprintf(buf, len, "%s", json_object_get_string(v));
}

/* The stage number of a member's "stage" name (0, "none", if unknown). */
static uint32_t stage_from_json(json_object *o)
{
	char name[32];
	uint32_t s;

	json_str(o, "stage", name, sizeof(name));
	for (s = 0; s < 64; s++)
		if (!strcmp(member_stage_name(s), name))
			return s;
	return 0;
}

static int member_from_json(json_object *o, const char *source, struct member *m)
{
	char hash[32];

	memset(m, 0, sizeof(*m));
	json_str(o, "hash", hash, sizeof(hash));
	if (!json_object_is_type(o, json_type_object) || job_parse_hash(hash, &m->hash))
		return -EPROTO;
	m->rank = (int32_t)json_int(o, "rank", -1);
	m->nranks = (int32_t)json_int(o, "nranks", 0);
	m->pid = (int32_t)json_int(o, "pid", 0);
	m->device = (int32_t)json_int(o, "device", -1);
	m->last_error = (int32_t)json_int(o, "last_error", 0);
	m->ops_issued = (uint64_t)json_int(o, "ops_issued", 0);
	m->ops_completed = (uint64_t)json_int(o, "ops_completed", 0);
	m->stage_ns = (uint64_t)json_int(o, "stage_time_ns", 0);
	m->alive = json_int(o, "alive", 1) != 0;
	json_str(o, "host", m->host, sizeof(m->host));
	json_str(o, "error_msg", m->error_msg, sizeof(m->error_msg));
	m->stage = stage_from_json(o);
	snprintf(m->source, sizeof(m->source), "%s", source);
	return m->rank >= 0 ? 0 : -EPROTO;
}

int job_parse_members(const char *json, const char *source, struct member_list *l)
{
	json_object *arr = json_tokener_parse(json);
	struct member m;
	size_t i, n;
	int err = 0;

	if (!arr || !json_object_is_type(arr, json_type_array)) {
		json_object_put(arr);
		return -EPROTO;
	}
	n = json_object_array_length(arr);
	for (i = 0; i < n && !err; i++) {
		err = member_from_json(json_object_array_get_idx(arr, i), source, &m);
		if (!err)
			err = member_add(l, &m);
	}
	json_object_put(arr);
	return err;
}

void job_fetch_peer(struct job_peer *peer, uint64_t hash, int timeout_ms, struct member_list *l)
{
	char path[64], *body;
	size_t before = l->n;
	int status;

	snprintf(path, sizeof(path), "/v1/comm/%016llx", (unsigned long long)hash);
	peer->err = http_get(peer->addr, path, timeout_ms, &body, &status);
	if (peer->err)
		return;
	peer->err = job_parse_members(body, "peer", l);
	free(body);
	peer->members = (int)(l->n - before);
}

/* Is @a further than @b (stage first, then completed operations)? */
static bool member_ahead(const struct member *a, const struct member *b)
{
	if (a->stage != b->stage)
		return a->stage > b->stage;
	return a->ops_completed > b->ops_completed;
}

void job_filter(struct member_list *l, uint64_t hash)
{
	size_t i, j, n = 0;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].hash != hash)
			continue;
		for (j = 0; j < n; j++)
			if (l->v[j].rank == l->v[i].rank)
				break;
		if (j == n)
			l->v[n++] = l->v[i];
		else if ((l->v[i].alive && !l->v[j].alive) ||
			 (l->v[i].alive == l->v[j].alive && member_ahead(&l->v[i], &l->v[j])))
			l->v[j] = l->v[i];
	}
	l->n = n;
	member_sort(l);
}

static void job_rank_array(struct pr *p, const char *key, const char *label, const int *v, int n)
{
	int i;

	pr_open_array(p, key);
	pr_text(p, " %s", label);
	for (i = 0; i < n; i++)
		pr_int(p, NULL, i ? ",%lld" : " %lld", v[i]);
	if (!n)
		pr_text(p, " -");
	pr_close_array(p);
}

/* Ranks missing and behind; @nranks is the largest nranks any member reported. */
static void job_summary(struct pr *p, struct member_list *l, int nranks, int *buf)
{
	const struct member *top = NULL, *low = NULL;
	int i, n = 0;
	size_t k;

	for (i = 0, k = 0; i < nranks; i++) {
		while (k < l->n && l->v[k].rank < i)
			k++;
		if (k == l->n || l->v[k].rank != i)
			buf[n++] = i;
	}
	job_rank_array(p, "missing", "missing", buf, n);
	for (k = 0; k < l->n; k++) {
		if (!top || member_ahead(&l->v[k], top))
			top = &l->v[k];
		if (!low || member_ahead(low, &l->v[k]))
			low = &l->v[k];
	}
	for (k = 0, n = 0; top && k < l->n; k++)
		if (member_ahead(top, &l->v[k]))
			buf[n++] = l->v[k].rank;
	job_rank_array(p, "behind", "behind", buf, n);
	if (low && n) {
		pr_open_object(p, "most_behind");
		pr_int(p, "rank", "\n  most behind: rank %lld", low->rank);
		pr_str(p, "stage", " stage %s", member_stage_name(low->stage));
		pr_uint(p, "ops_completed", " completed %llu", low->ops_completed);
		pr_str(p, "host", " host %s", low->host);
		pr_int(p, "pid", " pid %lld", low->pid);
		pr_close_object(p);
	}
}

bool job_print(struct pr *p, uint64_t hash, struct member_list *l, const struct job_peer *peers,
	       int npeers)
{
	int nranks = 0, *buf, i;
	size_t k;
	bool complete;

	for (k = 0; k < l->n; k++)
		if (l->v[k].nranks > nranks)
			nranks = l->v[k].nranks;
	buf = calloc((size_t)nranks + l->n + 1, sizeof(*buf));
	pr_open_object(p, NULL);
	pr_hex(p, "hash", "comm %016llx:", hash);
	pr_int(p, "nranks", " nranks %lld", nranks);
	pr_uint(p, "present", " present %llu", l->n);
	if (buf)
		job_summary(p, l, nranks, buf);
	pr_nl(p);
	pr_open_array(p, "peers");
	for (i = 0; i < npeers; i++) {
		pr_open_object(p, NULL);
		pr_str(p, "peer", "  peer %s:", peers[i].addr);
		pr_int(p, "members", " %lld members", peers[i].members);
		pr_str(p, "error", peers[i].err ? " (error: %s)" : "%s",
		       peers[i].err ? strerror(-peers[i].err) : "");
		pr_close_object(p);
		pr_nl(p);
	}
	pr_close_array(p);
	pr_open_array(p, "members");
	for (k = 0; k < l->n; k++) {
		pr_text(p, "  ");
		member_line(p, &l->v[k]);
	}
	pr_close_array(p);
	pr_close_object(p);
	complete = nranks > 0 && (size_t)nranks == l->n;
	free(buf);
	return complete;
}
