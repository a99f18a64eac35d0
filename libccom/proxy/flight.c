// SPDX-License-Identifier: MIT
/*
 * flight.c - the flight recorder (proxy/ room); see flight.h and
 * Documentation/libccom/fault-tolerance.rst for the dump formats.
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "publish/publish.h"
#include "reduce/reduce.h"
#include "util/err.h"
#include "util/json.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

#define FLIGHT_MAX_ENTRIES 65536

static const char *const state_names[] = { "enqueued", "started", "done", "failed" };

const char ccom_flight_engine[] = "engine";
const char ccom_flight_mapped[] = "mapped";
const char ccom_flight_p2p[] = "p2p";
const char ccom_flight_kdev[] = "kdev";
const char ccom_flight_cma[] = "cma";

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

/* The published short name of @k ("AllReduce" for "ccomAllReduce"). */
static const char *short_kind_name(enum ccom_coll_kind k)
{
	const char *s = ccom_coll_kind_name(k);

	return strncmp(s, "ccom", 4) ? s : s + 4;
}

static void fill_names(struct ccom_pub_ops *t)
{
	int i;

	for (i = 0; i < CCOM_COLL_NKINDS && i < CCOM_PUB_KINDS; i++)
		snprintf(t->kind_names[i], CCOM_PUB_NAME_LEN, "%s", short_kind_name((enum ccom_coll_kind)i));
	for (i = 0; i < ccomNumTypes && i < CCOM_PUB_DTYPES; i++)
		snprintf(t->dtype_names[i], CCOM_PUB_NAME_LEN, "%s", ccom_dtype_name((ccomDataType_t)i));
	/* The built-in ops, then "premulsum" for every PreMulSum op. */
	for (i = 0; i <= (int)CCOM_OP_PREMULSUM && i < CCOM_PUB_REDOPS; i++)
		snprintf(t->redop_names[i], CCOM_PUB_NAME_LEN, "%s", ccom_op_name((ccomRedOp_t)i));
	snprintf(t->algo_names[0], CCOM_PUB_NAME_LEN, "-");
	__atomic_store_n(&t->algo_count, 1, __ATOMIC_RELEASE);
}

uint8_t ccom_flight_name_slow(struct ccom_flight *fr, const char *name)
{
	uint32_t i, n;

	if (!name)
		return 0;
	pthread_mutex_lock(&fr->algo_lock);
	n = fr->names->algo_count;
	for (i = 1; i < n && fr->algo_ptr[i] != name; i++)
		;
	if (i == n && n < CCOM_PUB_ALGOS) {
		fr->algo_ptr[n] = name;
		snprintf(fr->names->algo_names[n], CCOM_PUB_NAME_LEN, "%s", name);
		/* The name before the count that makes it visible (lock-free readers). */
		__atomic_store_n(&fr->names->algo_count, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&fr->algo_lock);
	return i < CCOM_PUB_ALGOS ? (uint8_t)i : 0;
}

/*
 * Dump on request: CCOM_FLIGHT_RECORDER_SIGNAL names a signal whose
 * handler posts a semaphore (async-signal-safe); a thread of ours waits on
 * it and dumps every recorder of the process.
 */
static pthread_mutex_t request_lock = PTHREAD_MUTEX_INITIALIZER;	/* the three below */
static struct ccom_flight *request_list;
static pid_t request_pid;	/* process that set up the dumper: a forked child redoes it */
static int request_signo;
static sem_t request_sem;

static void request_handler(int sig)
{
	int saved = errno;

	(void)sig;
	sem_post(&request_sem);
	errno = saved;
}

static void *request_thread(void *arg)
{
	char reason[96];
	struct ccom_flight *fr;

	(void)arg;
	snprintf(reason, sizeof(reason), "dump on request (signal %s, CCOM_FLIGHT_RECORDER_SIGNAL)",
		 sigabbrev_np(request_signo) ? sigabbrev_np(request_signo) : "?");
	for (;;) {
		if (sem_wait(&request_sem))
			continue;	/* EINTR */
		pthread_mutex_lock(&request_lock);
		for (fr = request_list; fr; fr = fr->next)
			ccom_flight_dump(fr->comm, reason, false);
		pthread_mutex_unlock(&request_lock);
	}
	return NULL;
}

/* "USR2", "SIGUSR2" or "12"; 0 if unset, -1 if not a signal one may catch. */
static int parse_signal(const char *s)
{
	char *end;
	long v;
	int i;

	if (!s || !s[0] || !strcmp(s, "0"))
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	v = strtol(s, &end, 10);
	if (!*end)
		return v > 0 && v < NSIG && v != SIGKILL && v != SIGSTOP ? (int)v : -1;
	for (i = 1; i < NSIG; i++)
		if (sigabbrev_np(i) && !strcmp(sigabbrev_np(i), s))
			return i != SIGKILL && i != SIGSTOP ? i : -1;
	return -1;
}

/* fork() while the dumper holds request_lock would leave the child's copy locked. */
static void request_fork_prepare(void)
{
	pthread_mutex_lock(&request_lock);
}

static void request_fork_done(void)
{
	pthread_mutex_unlock(&request_lock);
}

/* Called once per process under request_lock (the dumper thread takes it only later). */
static void request_setup(void)
{
	static bool atfork_registered;	/* inherited by a child, like the handlers */
	const char *s = ccom_param_str("CCOM_FLIGHT_RECORDER_SIGNAL");
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t t;
	int sig = parse_signal(s);

	request_signo = 0;
	if (sig < 0) {
		ccom_warn("CCOM_FLIGHT_RECORDER_SIGNAL=%s is not a signal that can be caught; set a name such as USR2 or a number, or unset it (no dump on request)",
			  s);
		return;
	}
	if (!sig || sem_init(&request_sem, 0, 0))
		return;
	if (!atfork_registered &&
	    !pthread_atfork(request_fork_prepare, request_fork_done, request_fork_done))
		atfork_registered = true;
	request_signo = sig;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, request_thread, NULL)) {
		ccom_warn("flight recorder: cannot start the thread that dumps on signal %s; no dump on request",
			  sigabbrev_np(sig));
		pthread_attr_destroy(&attr);
		request_signo = 0;
		return;
	}
	pthread_attr_destroy(&attr);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = request_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		ccom_warn("flight recorder: cannot catch signal %s: %s; no dump on request",
			  sigabbrev_np(sig), strerror(errno));
		request_signo = 0;
		return;
	}
	ccom_info(CCOM_SUBSYS_INIT, "flight recorder: signal %s dumps every communicator's recorder",
		  sigabbrev_np(sig));
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
	if (posix_memalign((void **)&fr, 64, sizeof(*fr)))
		return -ENOMEM;
	memset(fr, 0, sizeof(*fr));
	fr->n = (uint32_t)n;
	fr->comm = comm;
	pthread_mutex_init(&fr->algo_lock, NULL);
	fr->e = ccom_publish_ops_map(comm->publish, fr->n);
	if (fr->e) {
		fr->published = true;
		fr->names = ccom_publish_ops_names(comm->publish);
	} else {
		fr->e = calloc((size_t)n, sizeof(fr->e[0]));
		fr->names = calloc(1, sizeof(*fr->names));
		if (!fr->e || !fr->names) {
			free(fr->e);
			free(fr->names);
			free(fr);
			return -ENOMEM;
		}
	}
	fill_names(fr->names);
	if (fr->published)
		ccom_publish_ops_ready(comm->publish, fr->n);
	comm->proxy->flight = fr;
	pthread_mutex_lock(&request_lock);
	if (request_pid != getpid()) {
		/* First comm of this process (a forked child has neither the thread nor the comms). */
		request_pid = getpid();
		request_list = NULL;
		request_setup();
	}
	if (request_signo) {
		fr->next = request_list;
		request_list = fr;
	}
	pthread_mutex_unlock(&request_lock);
	return 0;
}

void ccom_flight_destroy(struct ccomComm *comm)
{
	struct ccom_flight *fr = comm->proxy->flight, **pp;

	if (!fr)
		return;
	pthread_mutex_lock(&request_lock);
	for (pp = &request_list; *pp; pp = &(*pp)->next)
		if (*pp == fr) {
			*pp = fr->next;
			break;
		}
	pthread_mutex_unlock(&request_lock);
	/* A published ring is the state file's: unmapped by ccom_publish_close(). */
	if (!fr->published) {
		free(fr->e);
		free(fr->names);
	}
	pthread_mutex_destroy(&fr->algo_lock);
	free(fr);
	comm->proxy->flight = NULL;
}

void ccom_flight_enqueue(struct ccom_flight *fr, struct ccom_op *op)
{
	struct ccom_pub_op *e;
	uint64_t seq;

	if (!fr)
		return;
	seq = ++fr->next_seq;
	op->flight_seq = seq;
	e = &fr->e[seq & (fr->n - 1)];
	/* Invalidate first: a dump or a reader racing with the rewrite skips the entry. */
	__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->stream_seq = (uint32_t)op->stream_seq;
	e->kind = (uint8_t)op->kind;
	e->nsubs = op->nsubs;
	if (op->kind == CCOM_COLL_P2P_GROUP && op->nsubs > 0) {
		e->count = op->subs[0].count;
		e->dtype = (uint8_t)op->subs[0].dtype;
		e->root = op->subs[0].root;
	} else {
		e->count = op->count;
		e->dtype = (uint8_t)op->dtype;
		e->root = ccom_coll_has_root(op->kind) ? op->root : -1;
	}
	e->op = !ccom_coll_has_op(op->kind) ? -1 :
		op->premul ? (int8_t)CCOM_OP_PREMULSUM : (int8_t)op->op;
	e->err = 0;
	e->algo = e->proto = 0;
	e->t_enqueue_us = ccom_flight_now();
	e->t_start_us = e->t_end_us = 0;
	e->state = CCOM_FLIGHT_ENQUEUED;
	__atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
}

bool ccom_flight_pending(const struct ccom_flight *fr)
{
	uint32_t i;

	for (i = 0; fr && i < fr->n; i++)
		if (__atomic_load_n(&fr->e[i].seq, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&fr->e[i].state, __ATOMIC_ACQUIRE) <= CCOM_FLIGHT_STARTED)
			return true;
	return false;
}

/* One consistent copy of each recorded entry, oldest first; returns the count. */
static uint32_t snapshot(struct ccom_flight *fr, struct ccom_pub_op *out)
{
	uint64_t last = fr->next_seq, first, s;
	uint32_t k = 0;

	first = last >= fr->n ? last - fr->n + 1 : 1;
	for (s = first; s <= last && s; s++) {
		struct ccom_pub_op *e = &fr->e[s & (fr->n - 1)];

		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != s)
			continue;
		memcpy(&out[k], e, sizeof(*e));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s)
			k++;
	}
	return k;
}

/* The name of algorithm/protocol slot @i, NULL if none was chosen. */
static const char *algo_str(const struct ccom_flight *fr, uint8_t i)
{
	return i && i < __atomic_load_n(&fr->names->algo_count, __ATOMIC_ACQUIRE) ?
		       fr->names->algo_names[i] : NULL;
}

static const char *op_str(const struct ccom_pub_op *e)
{
	return e->op >= 0 ? ccom_op_name((ccomRedOp_t)e->op) : "-";
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

/* One op of the "ops" array, on a line of its own. */
static void write_json_op(struct ccom_json *w, const struct ccom_flight *fr,
			  const struct ccom_pub_op *e)
{
	ccom_json_object(w, NULL, CCOM_JSON_INLINE);
	ccom_json_uint(w, "seq", e->seq);
	ccom_json_str(w, "collective", ccom_coll_kind_name((enum ccom_coll_kind)e->kind));
	ccom_json_str(w, "dtype", ccom_dtype_name((ccomDataType_t)e->dtype));
	ccom_json_uint(w, "count", e->count);
	ccom_json_str(w, "op", e->op >= 0 ? op_str(e) : NULL);
	ccom_json_int(w, e->kind == CCOM_COLL_P2P_GROUP ? "peer" : "root", e->root);
	ccom_json_int(w, "nsubs", e->nsubs);
	ccom_json_str(w, "algorithm", algo_str(fr, e->algo));
	ccom_json_str(w, "protocol", algo_str(fr, e->proto));
	ccom_json_uint(w, "stream_seq", e->stream_seq);
	ccom_json_str(w, "state", state_names[e->state & 3]);
	ccom_json_str(w, "error", e->err ? result_name(e->err) : NULL);
	ccom_json_int(w, "t_enqueue_us", e->t_enqueue_us);
	ccom_json_int(w, "t_start_us", e->t_start_us);
	ccom_json_int(w, "t_end_us", e->t_end_us);
	ccom_json_end(w);
}

static void write_json(struct ccomComm *comm, const char *pattern, const char *reason,
		       const struct ccom_pub_op *v, uint32_t k, uint32_t cap)
{
	const struct ccom_flight *fr = comm->proxy->flight;
	char path[4096], tmp[4200];
	struct ccom_json w;
	struct timeval tv;
	uint32_t i;
	FILE *f;
	int err;

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
	ccom_json_init_file(&w, f);
	ccom_json_object(&w, NULL, CCOM_JSON_BLOCK);
	ccom_json_int(&w, "version", 1);
	ccom_json_int(&w, "rank", comm->rank);
	ccom_json_int(&w, "nranks", comm->nranks);
	ccom_json_strf(&w, "comm_hash", "%016llx", (unsigned long long)comm->comm_hash);
	ccom_json_str(&w, "comm_name", comm->name[0] ? comm->name : NULL);
	ccom_json_str(&w, "host", comm->peers ? comm->peers[comm->rank].host : "");
	ccom_json_int(&w, "pid", (int)getpid());
	ccom_json_int(&w, "time_unix_us", (int64_t)tv.tv_sec * 1000000 + tv.tv_usec);
	ccom_json_int(&w, "now_us", ccom_flight_now());
	ccom_json_str(&w, "reason", reason ? reason : "");
	ccom_json_uint(&w, "entries", cap);
	ccom_json_uint(&w, "ops_issued", comm->proxy->flight->next_seq);
	ccom_json_array(&w, "ops", CCOM_JSON_BLOCK);
	for (i = 0; i < k; i++)
		write_json_op(&w, fr, &v[i]);
	ccom_json_end(&w);
	ccom_json_end(&w);
	err = ccom_json_error(&w);
	if (fclose(f) || err || rename(tmp, path)) {
		ccom_warn("flight recorder: cannot write %s: %s", path, strerror(err ? -err : errno));
		unlink(tmp);
		return;
	}
	ccom_warn("flight recorder of rank %d written to %s", comm->rank, path);
}

void ccom_flight_dump(struct ccomComm *comm, const char *reason, bool once)
{
	struct ccom_flight *fr = comm->proxy ? comm->proxy->flight : NULL;
	struct ccom_pub_op *v;
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
	ccom_warn("flight recorder of rank %d (commHash %016llx%s%s%s): last %u of %llu ops; %s",
		  comm->rank, (unsigned long long)comm->comm_hash,
		  comm->name[0] ? " commName \"" : "", comm->name, comm->name[0] ? "\"" : "", k,
		  (unsigned long long)fr->next_seq, reason);
	for (i = 0; i < k; i++) {
		const struct ccom_pub_op *e = &v[i];
		char root[24] = "root -", algo[48];

		if (e->root >= 0)
			snprintf(root, sizeof(root), "%s %d", e->kind == CCOM_COLL_P2P_GROUP ? "peer" : "root",
				 e->root);
		snprintf(algo, sizeof(algo), "%s/%s", algo_str(fr, e->algo) ? algo_str(fr, e->algo) : "-",
			 algo_str(fr, e->proto) ? algo_str(fr, e->proto) : "-");
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
