// SPDX-License-Identifier: MIT
/*
 * flight.c - the flight recorder (proxy/ room); see flight.h and
 * Documentation/libccom/fault-tolerance.rst for the dump formats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "reduce/reduce.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define FLIGHT_MAX_ENTRIES 65536

static const char *const state_names[] = { "enqueued", "started", "done", "failed" };

/* The ccomResult_t name of -errno @err ("ccomTimeout"). */
static const char *result_name(int err)
{
	static const char *const names[ccomNumResults] = {
		"ccomSuccess", "ccomUnhandledDeviceError", "ccomSystemError", "ccomInternalError",
		"ccomInvalidArgument", "ccomInvalidUsage", "ccomRemoteError", "ccomInProgress",
		"ccomTimeout",
	};
	ccomResult_t r = ccom_result_from_errno(err);

	return (unsigned int)r < ccomNumResults && names[r] ? names[r] : "unknown";
}

int ccom_flight_create(struct ccomComm *comm)
{
	int64_t n = ccom_param_int("CCOM_FLIGHT_RECORDER_ENTRIES");
	struct ccom_flight *fr;

	if (n <= 0)
		return 0;
	if (n > FLIGHT_MAX_ENTRIES) {
		ccom_warn("CCOM_FLIGHT_RECORDER_ENTRIES=%lld is above %d; using %d",
			  (long long)n, FLIGHT_MAX_ENTRIES, FLIGHT_MAX_ENTRIES);
		n = FLIGHT_MAX_ENTRIES;
	}
	while (n & (n - 1))
		n += n & -n;		/* round up to a power of two: the index is a mask */
	/* Cache-line aligned: the enqueue's counter has a line of its own. */
	if (posix_memalign((void **)&fr, 64, sizeof(*fr) + (size_t)n * sizeof(fr->e[0])))
		return -ENOMEM;
	memset(fr, 0, sizeof(*fr) + (size_t)n * sizeof(fr->e[0]));
	fr->n = (uint32_t)n;
	comm->proxy->flight = fr;
	return 0;
}

void ccom_flight_destroy(struct ccomComm *comm)
{
	free(comm->proxy->flight);
	comm->proxy->flight = NULL;
}

void ccom_flight_enqueue(struct ccom_flight *fr, struct ccom_op *op)
{
	struct ccom_flight_entry *e;
	uint64_t seq;

	if (!fr)
		return;
	seq = ++fr->next_seq;
	op->flight_seq = seq;
	e = &fr->e[seq & (fr->n - 1)];
	/* Invalidate first: a dump racing with the rewrite skips the entry. */
	atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
	e->stream_seq = op->stream_seq;
	e->kind = (int32_t)op->kind;
	e->nsubs = op->nsubs;
	if (op->kind == CCOM_COLL_P2P_GROUP && op->nsubs > 0) {
		e->count = op->subs[0].count;
		e->dtype = (int32_t)op->subs[0].dtype;
		e->root = op->subs[0].root;
	} else {
		e->count = op->count;
		e->dtype = (int32_t)op->dtype;
		e->root = ccom_coll_has_root(op->kind) ? op->root : -1;
	}
	e->op = ccom_coll_has_op(op->kind) ? (int32_t)op->op : -1;
	e->err = 0;
	e->algo = e->proto = NULL;
	e->t_enqueue_us = ccom_flight_now();
	e->t_start_us = e->t_end_us = 0;
	atomic_store_explicit(&e->state, CCOM_FLIGHT_ENQUEUED, memory_order_relaxed);
	atomic_store_explicit(&e->seq, seq, memory_order_release);
}

bool ccom_flight_pending(const struct ccom_flight *fr)
{
	uint32_t i;

	for (i = 0; fr && i < fr->n; i++)
		if (atomic_load(&fr->e[i].seq) &&
		    atomic_load(&fr->e[i].state) <= CCOM_FLIGHT_STARTED)
			return true;
	return false;
}

/* One consistent copy of each recorded entry, oldest first; returns the count. */
static uint32_t snapshot(struct ccom_flight *fr, struct ccom_flight_entry *out)
{
	uint64_t last = fr->next_seq, first, s;
	uint32_t k = 0;

	first = last >= fr->n ? last - fr->n + 1 : 1;
	for (s = first; s <= last && s; s++) {
		struct ccom_flight_entry *e = &fr->e[s & (fr->n - 1)];

		if (atomic_load_explicit(&e->seq, memory_order_acquire) != s)
			continue;
		memcpy(&out[k], e, sizeof(*e));
		if (atomic_load_explicit(&e->seq, memory_order_acquire) == s)
			k++;
	}
	return k;
}

static const char *op_str(const struct ccom_flight_entry *e)
{
	return e->op >= 0 ? ccom_op_name((ccomRedOp_t)e->op) : "-";
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Expand %h (host), %p (pid) and %r (rank) of @pat; -ENAMETOOLONG if it does not fit. */
static int expand(char *out, size_t len, const char *pat, const struct ccomComm *comm)
{
	size_t o = 0;
	int n;

	for (; *pat; pat++) {
		if (pat[0] == '%' && pat[1] == 'h')
			n = snprintf(out + o, len - o, "%s", comm->peers ? comm->peers[comm->rank].host : "host");
		else if (pat[0] == '%' && pat[1] == 'p')
			n = snprintf(out + o, len - o, "%d", (int)getpid());
		else if (pat[0] == '%' && pat[1] == 'r')
			n = snprintf(out + o, len - o, "%d", comm->rank);
		else
			n = snprintf(out + o, len - o, "%c", *pat);
		if (n < 0 || (size_t)n >= len - o)
			return -ENAMETOOLONG;
		o += (size_t)n;
		if (pat[0] == '%' && pat[1] && strchr("hpr", pat[1]))
			pat++;
	}
	return 0;
}

static void write_json(struct ccomComm *comm, const char *pattern, const char *reason,
		       const struct ccom_flight_entry *v, uint32_t k, uint32_t cap)
{
	char path[4096], tmp[4200];
	struct timeval tv;
	uint32_t i;
	FILE *f;

	if (expand(path, sizeof(path), pattern, comm)) {
		ccom_warn("CCOM_FLIGHT_RECORDER_FILE=%s is too long after expansion; use a shorter path",
			  pattern);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		ccom_warn("flight recorder: cannot write %s: %s (check CCOM_FLIGHT_RECORDER_FILE's directory)",
			  tmp, strerror(errno));
		return;
	}
	gettimeofday(&tv, NULL);
	fprintf(f, "{\n  \"version\": 1,\n  \"rank\": %d,\n  \"nranks\": %d,\n", comm->rank, comm->nranks);
	fprintf(f, "  \"comm_hash\": \"%016llx\",\n  \"host\": ", (unsigned long long)comm->comm_hash);
	json_str(f, comm->peers ? comm->peers[comm->rank].host : "");
	fprintf(f, ",\n  \"pid\": %d,\n  \"time_unix_us\": %lld,\n  \"now_us\": %lld,\n",
		(int)getpid(), (long long)tv.tv_sec * 1000000 + tv.tv_usec, (long long)ccom_flight_now());
	fprintf(f, "  \"reason\": ");
	json_str(f, reason);
	fprintf(f, ",\n  \"entries\": %u,\n  \"ops_issued\": %llu,\n  \"ops\": [", cap,
		(unsigned long long)comm->proxy->flight->next_seq);
	for (i = 0; i < k; i++) {
		const struct ccom_flight_entry *e = &v[i];

		fprintf(f, "%s\n    {\"seq\": %llu, \"collective\": ", i ? "," : "",
			(unsigned long long)e->seq);
		json_str(f, ccom_coll_kind_name((enum ccom_coll_kind)e->kind));
		fprintf(f, ", \"dtype\": ");
		json_str(f, ccom_dtype_name((ccomDataType_t)e->dtype));
		fprintf(f, ", \"count\": %llu, \"op\": ", (unsigned long long)e->count);
		if (e->op >= 0)
			json_str(f, op_str(e));
		else
			fprintf(f, "null");
		fprintf(f, ", \"%s\": %d, \"nsubs\": %d, \"algorithm\": ",
			e->kind == CCOM_COLL_P2P_GROUP ? "peer" : "root", e->root, e->nsubs);
		if (e->algo)
			json_str(f, e->algo);
		else
			fprintf(f, "null");
		fprintf(f, ", \"protocol\": ");
		if (e->proto)
			json_str(f, e->proto);
		else
			fprintf(f, "null");
		fprintf(f, ", \"stream_seq\": %llu, \"state\": \"%s\", \"error\": ",
			(unsigned long long)e->stream_seq, state_names[e->state & 3]);
		if (e->err)
			json_str(f, result_name(e->err));
		else
			fprintf(f, "null");
		fprintf(f, ", \"t_enqueue_us\": %lld, \"t_start_us\": %lld, \"t_end_us\": %lld}",
			(long long)e->t_enqueue_us, (long long)e->t_start_us, (long long)e->t_end_us);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) || rename(tmp, path)) {
		ccom_warn("flight recorder: cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	ccom_warn("flight recorder of rank %d written to %s", comm->rank, path);
}

void ccom_flight_dump(struct ccomComm *comm, const char *reason, bool once)
{
	struct ccom_flight *fr = comm->proxy ? comm->proxy->flight : NULL;
	struct ccom_flight_entry *v;
	const char *file;
	int64_t now = ccom_flight_now();
	uint32_t k, i;
	int zero = 0;

	if (!fr)
		return;
	if (once && !atomic_compare_exchange_strong(&fr->dumped, &zero, 1))
		return;
	v = malloc((size_t)fr->n * sizeof(*v));
	if (!v)
		return;
	k = snapshot(fr, v);
	ccom_warn("flight recorder of rank %d (commHash %016llx): last %u of %llu ops; %s",
		  comm->rank, (unsigned long long)comm->comm_hash, k,
		  (unsigned long long)fr->next_seq, reason);
	for (i = 0; i < k; i++) {
		const struct ccom_flight_entry *e = &v[i];
		char root[24] = "root -", algo[48];

		if (e->root >= 0)
			snprintf(root, sizeof(root), "%s %d", e->kind == CCOM_COLL_P2P_GROUP ? "peer" : "root",
				 e->root);
		snprintf(algo, sizeof(algo), "%s/%s", e->algo ? e->algo : "-", e->proto ? e->proto : "-");
		ccom_warn("flight rank %d seq %llu %s count %llu %s op %s %s algo %s state %s%s%s enqueued %.3f s ago, started %s%.3f s, ended %s%.3f s",
			  comm->rank, (unsigned long long)e->seq,
			  ccom_coll_kind_name((enum ccom_coll_kind)e->kind), (unsigned long long)e->count,
			  ccom_dtype_name((ccomDataType_t)e->dtype), op_str(e), root, algo,
			  state_names[e->state & 3], e->err ? " error " : "",
			  e->err ? result_name(e->err) : "",
			  (double)(now - e->t_enqueue_us) / 1e6, e->t_start_us ? "+" : "never ",
			  e->t_start_us ? (double)(e->t_start_us - e->t_enqueue_us) / 1e6 : 0.0,
			  e->t_end_us ? "+" : "never ",
			  e->t_end_us ? (double)(e->t_end_us - e->t_enqueue_us) / 1e6 : 0.0);
	}
	file = ccom_param_str("CCOM_FLIGHT_RECORDER_FILE");
	if (file && file[0])
		write_json(comm, file, reason, v, k, fr->n);
	free(v);
}
