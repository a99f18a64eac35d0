// SPDX-License-Identifier: MIT
/*
 * jobcore.c - gathering and summarising the ranks of one communicator
 * across hosts (jobcore.h).  "Behind" means: in an earlier stage than the
 * most advanced rank, or in the same stage with fewer completed
 * operations, or as many completed but fewer issued (a rank that has not
 * called the op the others wait in); the most behind rank is the one to
 * look at first.  The op-level verdict ("hang") says why.
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

int job_ccomd_peers(const char *ccomd, int timeout_ms, struct job_peer *peers)
{
	json_object *arr, *e;
	const char *s;
	int status, err, n = 0;
	size_t i, len;
	char *body;

	err = http_get(ccomd, "/v1/peers", timeout_ms, &body, &status);
	if (err)
		return err;
	arr = json_tokener_parse(body);
	free(body);
	if (!arr || !json_object_is_type(arr, json_type_array) ||
	    json_object_array_length(arr) > JOB_MAX_PEERS) {
		json_object_put(arr);
		return -EPROTO;
	}
	for (i = 0; i < json_object_array_length(arr); i++) {
		e = json_object_array_get_idx(arr, i);
		s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
		len = s ? strlen(s) : 0;
		if (!len || len >= sizeof(peers[0].addr) || !strchr(s, ':')) {
			json_object_put(arr);
			return -EPROTO;
		}
		memset(&peers[n], 0, sizeof(peers[n]));
		memcpy(peers[n].addr, s, len);
		n++;
	}
	json_object_put(arr);
	return n;
}

static int64_t json_int(json_object *o, const char *key, int64_t def)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : def;
}

static bool json_flag(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
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

static void op_from_json(json_object *o, struct member_op *op)
{
	char state[16];
	uint32_t st;

	memset(op, 0, sizeof(*op));
	op->seq = (uint64_t)json_int(o, "seq", 0);
	op->count = (uint64_t)json_int(o, "count", 0);
	op->root = (int32_t)json_int(o, "root", -1);
	op->nsubs = (int32_t)json_int(o, "nsubs", 0);
	op->err = (int32_t)json_int(o, "error", 0);
	op->stream_seq = (uint32_t)json_int(o, "stream_seq", 0);
	op->age_ms = json_int(o, "age_ms", -1);
	json_str(o, "collective", op->kind, sizeof(op->kind));
	json_str(o, "dtype", op->dtype, sizeof(op->dtype));
	json_str(o, "op", op->redop, sizeof(op->redop));
	json_str(o, "algorithm", op->algo, sizeof(op->algo));
	json_str(o, "protocol", op->proto, sizeof(op->proto));
	json_str(o, "state", state, sizeof(state));
	op->state = CCOM_PUB_OP_ISSUED;
	for (st = 0; st <= CCOM_PUB_OP_FAILED; st++)
		if (!strcmp(member_op_state_name(st), state))
			op->state = st;
}

static int member_from_json(json_object *o, const char *source, struct member *m)
{
	json_object *ops;
	char hash[32];
	size_t i, n;

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
	m->stopped = json_flag(o, "stopped");
	json_str(o, "host", m->host, sizeof(m->host));
	json_str(o, "name", m->name, sizeof(m->name));
	json_str(o, "error_msg", m->error_msg, sizeof(m->error_msg));
	m->stage = stage_from_json(o);
	m->ring = (uint32_t)json_int(o, "ring", 0);
	m->last_seq = (uint64_t)json_int(o, "last_seq", 0);
	if (json_object_object_get_ex(o, "ops", &ops) && json_object_is_type(ops, json_type_array)) {
		n = json_object_array_length(ops);
		for (i = n > MEMBER_OPS ? n - MEMBER_OPS : 0; i < n; i++)
			op_from_json(json_object_array_get_idx(ops, i), &m->ops[m->nops++]);
	}
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

/* Is @a further than @b (stage first, then completed, then issued operations)? */
static bool member_ahead(const struct member *a, const struct member *b)
{
	if (a->stage != b->stage)
		return a->stage > b->stage;
	if (a->ops_completed != b->ops_completed)
		return a->ops_completed > b->ops_completed;
	return a->ops_issued > b->ops_issued;
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

/*
 * Op-level localisation.  Every rank issues a communicator's operations in
 * the same order, so operation k is the same call on every rank: the op
 * that ranks wait in (the lowest one issued or started and not ended) and
 * what each other rank did with it names the rank to look at.
 */
enum job_verdict {
	JOB_IDLE, JOB_NOT_ISSUED, JOB_NOT_COMPLETED, JOB_NOT_STARTED, JOB_ALL_WAIT, JOB_MISMATCH
};

/* Ranks without a ring stand in with their counters (seqs 1..issued, the first completed ones done). */
static uint64_t job_issued(const struct member *m)
{
	return m->ring ? m->last_seq : m->ops_issued;
}

/* State of op @k on @m: &enum ccom_pub_op_state, or -1 if not issued; @op set when known. */
static int job_op_state(const struct member *m, uint64_t k, const struct member_op **op)
{
	int i;

	*op = NULL;
	if (k > job_issued(m))
		return -1;
	for (i = 0; i < m->nops; i++)
		if (m->ops[i].seq == k) {
			*op = &m->ops[i];
			return (int)m->ops[i].state;
		}
	if (m->ring)	/* older than the window: ended (the window holds the pending ones) */
		return CCOM_PUB_OP_DONE;
	return k <= m->ops_completed ? CCOM_PUB_OP_DONE : CCOM_PUB_OP_STARTED;
}

/* The lowest op @m is in (issued or started, or failed if @failed), 0 if none. */
static uint64_t job_pending(const struct member *m, bool failed)
{
	int i;

	for (i = 0; i < m->nops; i++)
		if (m->ops[i].state < CCOM_PUB_OP_DONE ||
		    (failed && m->ops[i].state == CCOM_PUB_OP_FAILED))
			return m->ops[i].seq;
	if (!m->ring && !failed && m->ops_issued > m->ops_completed)
		return m->ops_completed + 1;
	return 0;
}

/* Point-to-point calls differ between ranks by design: no signature to compare. */
static bool job_sig_comparable(const struct member_op *o)
{
	return o->kind[0] && !o->nsubs && strcmp(o->kind, "Send") && strcmp(o->kind, "Recv") &&
	       strcmp(o->kind, "p2p group");
}

/* What differs between two calls of the same op, NULL if nothing (libccom's order and words). */
static const char *job_sig_diff(const struct member_op *a, const struct member_op *b)
{
	if (strcmp(a->kind, b->kind))
		return "they called different collectives";
	if (a->count != b->count)
		return "the element counts differ";
	if (strcmp(a->dtype, b->dtype))
		return "the datatypes differ";
	if (strcmp(a->redop, b->redop))
		return "the reduction ops differ";
	if (a->root != b->root)
		return "the roots differ";
	return NULL;
}

/* "AllReduce(count 1024, float, sum)" into @buf. */
static void job_sig_str(const struct member_op *o, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s(count %llu, %s", o->kind, (unsigned long long)o->count, o->dtype);

	if (n > 0 && (size_t)n < len && o->redop[0])
		n += snprintf(buf + n, len - (size_t)n, ", %s", o->redop);
	if (n > 0 && (size_t)n < len && o->root >= 0)
		n += snprintf(buf + n, len - (size_t)n, ", root %d", o->root);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
}

/*
 * Did the ranks that issued op @k call the same thing?  The call most
 * ranks made is the reference (*@ref); the others are put in @named, the
 * reference's ranks in @others.  Returns false if they all agree.
 */
static bool job_mismatch(struct member_list *l, uint64_t k, int *named, int *nn, int *others,
			 int *no, const struct member_op **ref, const struct member_op **odd)
{
	const struct member_op *oi, *oj;
	size_t i, j;
	int best = 0, c;

	*ref = *odd = NULL;
	/* The common case, everyone agrees, in one pass. */
	for (i = 0, oj = NULL, c = 0; i < l->n && !c; i++) {
		job_op_state(&l->v[i], k, &oi);
		if (!oi || !job_sig_comparable(oi))
			continue;
		if (!oj)
			oj = oi;
		else
			c = job_sig_diff(oj, oi) != NULL;
	}
	if (!c)
		return false;
	for (i = 0; i < l->n; i++) {
		job_op_state(&l->v[i], k, &oi);
		if (!oi || !job_sig_comparable(oi))
			continue;
		for (j = 0, c = 0; j < l->n; j++) {
			job_op_state(&l->v[j], k, &oj);
			c += oj && job_sig_comparable(oj) && !job_sig_diff(oi, oj);
		}
		if (c > best) {
			best = c;
			*ref = oi;
		}
	}
	*nn = *no = 0;
	for (i = 0; *ref && i < l->n; i++) {
		job_op_state(&l->v[i], k, &oi);
		if (!oi || !job_sig_comparable(oi))
			continue;
		if (job_sig_diff(*ref, oi)) {
			named[(*nn)++] = l->v[i].rank;
			if (!*odd)
				*odd = oi;
		} else {
			others[(*no)++] = l->v[i].rank;
		}
	}
	return *nn > 0;
}

/* A JSON array of ranks (nothing in text). */
static void job_rank_json(struct pr *p, const char *key, const int *v, int n)
{
	int i;

	pr_open_array(p, key);
	for (i = 0; i < n; i++)
		pr_int(p, NULL, "", v[i]);
	pr_close_array(p);
}

/* "rank 2" / "ranks 0,1" into @buf. */
static void job_rank_words(char *buf, size_t len, const int *v, int n)
{
	size_t o;
	int i;

	o = (size_t)snprintf(buf, len, "%s ", n == 1 ? "rank" : "ranks");
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, i ? ",%d" : "%d", v[i]);
}

/* The lowest seq in the published windows, 0 if none. */
static uint64_t job_first_seq(const struct member_list *l)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].nops && (!s || l->v[i].ops[0].seq < s))
			s = l->v[i].ops[0].seq;
	return s;
}

/* The ranks that have not issued op @k (@named) and those in it (@others). */
static void job_count(struct member_list *l, uint64_t k, bool failed, int *named, int *nn,
		      int *others, int *no)
{
	const struct member_op *op;
	size_t i;
	int st;

	for (i = 0; i < l->n; i++) {
		st = job_op_state(&l->v[i], k, &op);
		if (st < 0)
			named[(*nn)++] = l->v[i].rank;
		else if (st < CCOM_PUB_OP_DONE || (failed && st == CCOM_PUB_OP_FAILED))
			others[(*no)++] = l->v[i].rank;
	}
}

/**
 * struct job_hang - the op-level verdict being built
 * @k: the op compared (seq)
 * @failed: @k was chosen among failed ops (nobody waits)
 * @v: the verdict
 * @named: the ranks the verdict names (@nn of them)
 * @others: the ranks they are compared with (@no of them)
 * @desc: the op's description, from a rank that has it (NULL: none recorded)
 * @odd: the differing call of a mismatch
 * @age_ms: how long the op has waited on the rank that waits longest, -1
 */
struct job_hang {
	uint64_t k;
	bool failed;
	enum job_verdict v;
	int *named, nn;
	int *others, no;
	const struct member_op *desc, *odd;
	int64_t age_ms;
};

/* The op to look at: the lowest pending one, else the lowest failed one (0: none). */
static void job_hang_pick(const struct member_list *l, struct job_hang *h)
{
	uint64_t pk;
	size_t i;
	int pass;

	for (pass = 0; pass < 2 && !h->k; pass++) {
		h->failed = pass == 1;
		for (i = 0; i < l->n; i++) {
			pk = job_pending(&l->v[i], h->failed);
			if (pk && (!h->k || pk < h->k))
				h->k = pk;
		}
	}
}

/*
 * A mismatch is the cause of what follows it: look for the first one in
 * the recent ops every rank published (between hosts a mismatched op may
 * even complete), up to the op they wait in, or the last one if idle.
 */
static bool job_hang_mismatch(struct member_list *l, struct job_hang *h)
{
	uint64_t s, last = h->k;
	size_t i;

	for (i = 0; !h->k && i < l->n; i++)
		if (l->v[i].last_seq > last)
			last = l->v[i].last_seq;
	for (s = job_first_seq(l); s && s <= last; s++) {
		if (job_mismatch(l, s, h->named, &h->nn, h->others, &h->no, &h->desc, &h->odd)) {
			h->v = JOB_MISMATCH;
			h->k = s;
			return true;
		}
	}
	return false;
}

/* Split the ranks into @named (op k in a state for which @named_fn is true) and @others. */
static void job_hang_split(const struct member_list *l, struct job_hang *h,
			   bool (*named_fn)(int state))
{
	const struct member_op *op;
	size_t i;

	h->nn = h->no = 0;
	for (i = 0; i < l->n; i++) {
		if (named_fn(job_op_state(&l->v[i], h->k, &op)))
			h->named[h->nn++] = l->v[i].rank;
		else
			h->others[h->no++] = l->v[i].rank;
	}
}

static bool state_not_done(int state)
{
	return state != CCOM_PUB_OP_DONE;
}

static bool state_issued(int state)
{
	return state == CCOM_PUB_OP_ISSUED;
}

/* Not issued, not completed, not started or all waiting: who did what with op k. */
static void job_hang_judge(struct member_list *l, struct job_hang *h)
{
	const struct member_op *op;
	size_t i;
	int st;

	for (i = 0; i < l->n; i++) {
		st = job_op_state(&l->v[i], h->k, &op);
		if (op && !h->desc && op->kind[0])
			h->desc = op;
		if (op && st < CCOM_PUB_OP_DONE && op->age_ms > h->age_ms)
			h->age_ms = op->age_ms;
	}
	if (h->v == JOB_MISMATCH)
		return;
	h->nn = h->no = 0;
	job_count(l, h->k, h->failed, h->named, &h->nn, h->others, &h->no);
	if (h->nn) {
		h->v = JOB_NOT_ISSUED;
		return;
	}
	job_hang_split(l, h, state_not_done);
	if (h->no) {
		h->v = JOB_NOT_COMPLETED;
		return;
	}
	job_hang_split(l, h, state_issued);
	if (h->nn && h->no) {
		h->v = JOB_NOT_STARTED;
		return;
	}
	h->v = JOB_ALL_WAIT;
	for (i = 0; i < l->n; i++)
		h->others[i] = l->v[i].rank;
	h->nn = 0;
	h->no = (int)l->n;
}

/* The sentence of verdict @h into @msg. */
static void job_hang_message(const struct job_hang *h, char *msg, size_t len)
{
	char a[256], b[256], desc[128], sa[160], sb[160];
	const char *has = h->nn == 1 ? "has" : "have";
	unsigned long long k = h->k;

	if (h->desc)
		member_op_desc(h->desc, desc, sizeof(desc));
	else
		snprintf(desc, sizeof(desc), "not recorded");
	job_rank_words(a, sizeof(a), h->named, h->nn);
	job_rank_words(b, sizeof(b), h->others, h->no);
	switch (h->v) {
	case JOB_MISMATCH:
		job_sig_str(h->odd, sa, sizeof(sa));
		job_sig_str(h->desc, sb, sizeof(sb));
		snprintf(msg, len, "%s called %s but %s %s as op %llu (%s)", a, sa, b, sb, k,
			 job_sig_diff(h->desc, h->odd));
		break;
	case JOB_NOT_ISSUED:
		snprintf(msg, len, "%s %s not issued op %llu (%s) that %s %s", a, has, k, desc, b,
			 h->failed ? "failed in" : h->no == 1 ? "waits in" : "wait in");
		break;
	case JOB_NOT_COMPLETED:
		snprintf(msg, len, "%s %s not completed op %llu (%s) that %s completed", a, has, k,
			 desc, b);
		break;
	case JOB_NOT_STARTED:
		snprintf(msg, len, "%s %s issued but not started op %llu (%s) that %s %s in", a, has,
			 k, desc, b, h->no == 1 ? "is" : "are");
		break;
	default:
		snprintf(msg, len,
			 "every rank %s op %llu (%s): no rank is behind at the op level; look at the ranks' errors and links",
			 h->failed ? "failed in" : "waits in", k, desc);
		break;
	}
}

/* The ranks whose process is stopped (a debugger, SIGSTOP): often the reason itself. */
static void job_hang_stopped(struct pr *p, const struct member_list *l, int *buf)
{
	char words[256];
	size_t i;
	int n = 0;

	for (i = 0; i < l->n; i++)
		if (l->v[i].stopped)
			buf[n++] = l->v[i].rank;
	job_rank_json(p, "stopped", buf, n);
	if (n) {
		job_rank_words(words, sizeof(words), buf, n);
		pr_text(p, "\n  stopped: %s (SIGSTOP or a debugger holds the process)", words);
	}
}

static void job_hang(struct pr *p, struct member_list *l, int *named, int *others)
{
	static const char *const verdicts[] = {
		[JOB_IDLE] = "idle", [JOB_NOT_ISSUED] = "not_issued",
		[JOB_NOT_COMPLETED] = "not_completed", [JOB_NOT_STARTED] = "not_started",
		[JOB_ALL_WAIT] = "all_waiting", [JOB_MISMATCH] = "mismatch",
	};
	struct job_hang h = { .named = named, .others = others, .age_ms = -1 };
	char msg[1024];

	job_hang_pick(l, &h);
	if (!job_hang_mismatch(l, &h) && !h.k) {
		pr_open_object(p, "hang");
		pr_str(p, "verdict", "\n  ops: %s", verdicts[JOB_IDLE]);
		pr_close_object(p);
		return;
	}
	job_hang_judge(l, &h);
	job_hang_message(&h, msg, sizeof(msg));
	pr_open_object(p, "hang");
	pr_str(p, "verdict", "", verdicts[h.v]);
	pr_uint(p, "op", "", h.k);
	if (h.desc) {
		pr_str(p, "collective", "", h.desc->kind);
		pr_uint(p, "count", "", h.desc->count);
		pr_str(p, "dtype", "", h.desc->dtype);
	}
	job_rank_json(p, "ranks", h.named, h.nn);
	job_rank_json(p, "others", h.others, h.no);
	pr_int(p, "wait_ms", "", h.age_ms);
	pr_str(p, "message", "\n  hang: %s", msg);
	if (h.age_ms >= 0)
		pr_text(p, " (for %.1f s)", (double)h.age_ms / 1000);
	job_hang_stopped(p, l, named);
	pr_close_object(p);
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
	buf = calloc(((size_t)nranks + l->n + 1) * 2, sizeof(*buf));
	pr_open_object(p, NULL);
	pr_hex(p, "hash", "comm %016llx:", hash);
	pr_int(p, "nranks", " nranks %lld", nranks);
	pr_uint(p, "present", " present %llu", l->n);
	if (buf)
		job_summary(p, l, nranks, buf);
	if (buf)
		job_hang(p, l, buf, buf + l->n + 1);
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
