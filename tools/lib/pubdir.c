// SPDX-License-Identifier: MIT
/*
 * pubdir.c - reader of the library-published state files
 * (libccom/include/ccom_pubstate.h): a directory scan, a seqlock-consistent
 * copy of each file and a liveness check through flock().
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "member.h"

/* "<16 hex>.<rank>.<pid>": anything else (temp files, strangers) is skipped. */
static bool pubdir_name_ok(const char *name)
{
	unsigned long long hash;
	int rank, pid, n = 0;

	if (strlen(name) < 20 || name[16] != '.')
		return false;
	return sscanf(name, "%16llx.%d.%d%n", &hash, &rank, &pid, &n) == 3 &&
	       name[n] == '\0' && rank >= 0 && pid > 0;
}

/* Copy the seqlocked part; false if the writer kept it busy (retry later). */
static bool pubdir_copy(const struct ccom_pub_file *f, struct member *m)
{
	const struct nccom_comm_state *st = &f->state;
	uint32_t s1, s2;
	int tries;

	/* Identity: written once before the magic. */
	m->hash = f->comm_hash;
	m->rank = f->rank;
	m->nranks = f->nranks;
	m->pid = f->pid;
	m->device = f->device;
	m->start_ns = f->start_ns;
	memcpy(m->host, f->host, sizeof(m->host));
	/* Appended field: an older writer's file does not have it. */
	m->name[0] = '\0';
	if (f->size >= offsetof(struct ccom_pub_file, comm_name) + sizeof(f->comm_name)) {
		memcpy(m->name, f->comm_name, sizeof(m->name));
		m->name[sizeof(m->name) - 1] = '\0';
	}
	/* Written once, its first byte last (ccom_pubstate.h). */
	m->cma[0] = '\0';
	if (f->size >= offsetof(struct ccom_pub_file, cma) + sizeof(f->cma) &&
	    __atomic_load_n(&f->cma[0], __ATOMIC_ACQUIRE)) {
		memcpy(m->cma, f->cma, sizeof(m->cma));
		m->cma[sizeof(m->cma) - 1] = '\0';
	}
	for (tries = 0; tries < 1000; tries++) {
		/* Pairs with seq_end()'s release store in publish.c. */
		s1 = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		m->stage = st->stage;
		m->last_error = st->last_error;
		m->stage_ns = st->stage_time_ns;
		memcpy(m->error_msg, st->error_msg, sizeof(st->error_msg));
		/* Pairs with seq_begin()'s release fence. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			break;
	}
	if (tries == 1000)
		return false;
	m->host[sizeof(m->host) - 1] = '\0';
	m->error_msg[sizeof(m->error_msg) - 1] = '\0';
	m->ops_issued = __atomic_load_n(&st->ops_issued, __ATOMIC_RELAXED);
	m->ops_completed = __atomic_load_n(&st->ops_completed, __ATOMIC_RELAXED);
	m->registered = f->registered != 0;
	return true;
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Name @i of a table of @n names (NUL-terminated copy), "" if out of range. */
static void ring_name(char *out, const char (*tab)[CCOM_PUB_NAME_LEN], int i, uint32_t n)
{
	out[0] = '\0';
	if (i >= 0 && (uint32_t)i < n) {
		memcpy(out, tab[i], CCOM_PUB_NAME_LEN);
		out[CCOM_PUB_NAME_LEN - 1] = '\0';
	}
}

/* Entry @e (a consistent copy) as a member_op. */
static void ring_op(const struct ccom_pub_ops *t, const struct ccom_pub_op *e, int64_t now,
		    struct member_op *o)
{
	uint32_t nalgo = __atomic_load_n(&t->algo_count, __ATOMIC_ACQUIRE);

	memset(o, 0, sizeof(*o));
	o->seq = e->seq;
	o->count = e->count;
	o->root = e->root;
	o->nsubs = e->nsubs;
	o->err = e->err;
	o->state = e->state;
	o->stream_seq = e->stream_seq;
	if (e->state >= CCOM_PUB_OP_DONE)
		o->age_ms = e->t_end_us && e->t_start_us && e->t_end_us >= e->t_start_us ?
				    (e->t_end_us - e->t_start_us) / 1000 : -1;
	else if (e->t_start_us)
		o->age_ms = now > e->t_start_us ? (now - e->t_start_us) / 1000 : 0;
	else
		o->age_ms = now > e->t_enqueue_us ? (now - e->t_enqueue_us) / 1000 : 0;
	ring_name(o->kind, t->kind_names, e->kind, CCOM_PUB_KINDS);
	ring_name(o->dtype, t->dtype_names, e->dtype, CCOM_PUB_DTYPES);
	ring_name(o->redop, t->redop_names, e->op, CCOM_PUB_REDOPS);
	if (e->algo)
		ring_name(o->algo, t->algo_names, e->algo, nalgo);
	if (e->proto)
		ring_name(o->proto, t->algo_names, e->proto, nalgo);
	if (!o->kind[0])
		snprintf(o->kind, sizeof(o->kind), "kind%u", e->kind);
	if (!o->dtype[0])
		snprintf(o->dtype, sizeof(o->dtype), "dtype%u", e->dtype);
}

/* Copy entry seq @s of @ring into @out; false if it is not there (rewritten, empty). */
static bool ring_copy(const struct ccom_pub_op *ring, uint32_t n, uint64_t s, struct ccom_pub_op *out)
{
	const struct ccom_pub_op *e = &ring[s & (n - 1)];

	/* Pairs with the writer's release store of seq (proxy/flight.c). */
	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != s)
		return false;
	memcpy(out, e, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s;
}

/*
 * Read the operation ring of @f (file @fd of @size bytes): the last
 * MEMBER_OPS operations into @m, and all of them into *@all (malloc'd,
 * *@nall entries) if @all is not NULL.
 */
static void pubdir_ring(int fd, off_t size, const struct ccom_pub_file *f, struct member *m,
			struct member_op **all, size_t *nall)
{
	uint32_t n, i, k = 0;
	const struct ccom_pub_op *ring;
	struct ccom_pub_op e;
	uint64_t last = 0, s, first;
	size_t bytes;
	int64_t now;

	/* A writer from before the ring: no ops (its bytes past @state are not ours to read). */
	if (f->size < sizeof(*f))
		return;
	n = __atomic_load_n(&f->ops.n, __ATOMIC_ACQUIRE);
	if (!n || (n & (n - 1)) || n > (1u << 20) || f->ops.entry_size != sizeof(struct ccom_pub_op) ||
	    f->ops.offset < CCOM_PUB_FILE_SIZE || f->ops.offset % 4096)
		return;
	bytes = (size_t)n * sizeof(struct ccom_pub_op);
	if ((uint64_t)size < (uint64_t)f->ops.offset + bytes)
		return;
	ring = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, f->ops.offset);
	if (ring == MAP_FAILED)
		return;
	m->ring = n;
	now = mono_us();
	for (i = 0; i < n; i++) {
		s = __atomic_load_n(&ring[i].seq, __ATOMIC_RELAXED);
		if (s > last)
			last = s;
	}
	m->last_seq = last;
	first = last >= n ? last - n + 1 : 1;
	if (all) {
		*all = calloc(n, sizeof(**all));
		*nall = 0;
	}
	for (s = first; last && s <= last; s++) {
		if (!ring_copy(ring, n, s, &e))
			continue;
		if (all && *all)
			ring_op(&f->ops, &e, now, &(*all)[(*nall)++]);
		if (s + MEMBER_OPS > last)
			ring_op(&f->ops, &e, now, &m->ops[k++]);
	}
	m->nops = (int)k;
	munmap((void *)ring, bytes);
}

/* CLOCK_REALTIME of the boot in s (/proc/stat "btime"), 0 if unknown. */
static uint64_t boot_time_s(void)
{
	unsigned long long bt = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	if (f)
		fclose(f);
	return bt;
}

/*
 * Is the writer of @m stopped ('T' stopped by a signal, 't' by a tracer)?
 * Only a process that started before the file did counts: a pid reused
 * since, or one of another pid namespace started later, is not the writer.
 */
static bool pubdir_stopped(const struct member *m)
{
	unsigned long long start_ticks;
	char path[64], buf[1024], *p, state;
	long tck = sysconf(_SC_CLK_TCK);
	uint64_t bt, start_ns;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", m->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ... starttime" (field 22); comm may hold spaces and ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &state, &start_ticks) != 2)
		return false;
	bt = boot_time_s();
	if (!bt || tck <= 0)
		return false;
	start_ns = (bt + start_ticks / (uint64_t)tck) * 1000000000ull;
	/* btime has a 1 s resolution: 2 s of slack. */
	if (start_ns > m->start_ns + 2000000000ull)
		return false;
	return state == 'T' || state == 't';
}

/* Read one file; 1 if @m was filled, 0 to skip it. */
static int pubdir_read(int dfd, const char *name, bool clean, struct member *m,
		       struct member_op **all, size_t *nall)
{
	const struct ccom_pub_file *f;
	struct stat st;
	int fd, ok = 0;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < CCOM_PUB_FILE_SIZE)
		goto out_close;
	f = mmap(NULL, CCOM_PUB_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (f == MAP_FAILED)
		goto out_close;
	if (f->magic == CCOM_PUB_MAGIC && f->version == CCOM_PUB_VERSION &&
	    f->size >= CCOM_PUB_V2_BASE_SIZE && pubdir_copy(f, m)) {
		pubdir_ring(fd, st.st_size, f, m, all, nall);
		/* The writer holds LOCK_SH while alive: LOCK_EX succeeds only if it is gone. */
		m->alive = flock(fd, LOCK_EX | LOCK_NB) != 0;
		if (!m->alive)
			flock(fd, LOCK_UN);
		else
			m->stopped = pubdir_stopped(m);
		snprintf(m->source, sizeof(m->source), "shm");
		ok = 1;
		if (!m->alive && clean && unlinkat(dfd, name, 0) == 0)
			ok = 0;
	}
	munmap((void *)f, CCOM_PUB_FILE_SIZE);
out_close:
	close(fd);
	return ok;
}

int pubdir_scan(const char *dir, bool clean, struct member_list *l)
{
	struct dirent *de;
	struct member m;
	DIR *d;
	int err = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!pubdir_name_ok(de->d_name))
			continue;
		memset(&m, 0, sizeof(m));
		if (pubdir_read(dirfd(d), de->d_name, clean, &m, NULL, NULL) && member_add(l, &m)) {
			err = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return err;
}

/* One rank's recorder, collected by pubdir_flight(). */
struct pubdir_rank {
	struct member m;
	struct member_op *ops;
	size_t n;
};

static int pubdir_rank_cmp(const void *a, const void *b)
{
	const struct pubdir_rank *x = a, *y = b;

	return x->m.rank < y->m.rank ? -1 : x->m.rank > y->m.rank;
}

/* Append the live ranks of @want ("<hash>.") with a ring to *@v; 0 or -ENOMEM. */
static int pubdir_collect(DIR *d, const char *want, struct pubdir_rank **v, size_t *n)
{
	struct pubdir_rank r, *nv;
	struct dirent *de;
	size_t cap = 0;

	while ((de = readdir(d))) {
		if (!pubdir_name_ok(de->d_name) || strncmp(de->d_name, want, 17))
			continue;
		memset(&r, 0, sizeof(r));
		if (!pubdir_read(dirfd(d), de->d_name, false, &r.m, &r.ops, &r.n) || !r.m.alive ||
		    !r.m.ring || !r.ops) {
			free(r.ops);
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(*v, cap * sizeof(*nv));
			if (!nv) {
				free(r.ops);
				return -ENOMEM;
			}
			*v = nv;
		}
		(*v)[(*n)++] = r;
	}
	return 0;
}

int pubdir_flight(const char *dir, uint64_t hash,
		  int (*fn)(const struct member *m, const struct member_op *ops, size_t n,
			    void *arg),
		  void *arg)
{
	struct pubdir_rank *v = NULL;
	size_t i, n = 0;
	char want[20];
	int err, called = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	snprintf(want, sizeof(want), "%016llx.", (unsigned long long)hash);
	err = pubdir_collect(d, want, &v, &n);
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), pubdir_rank_cmp);
	for (i = 0; i < n; i++) {
		if (!err) {
			called++;
			if (fn(&v[i].m, v[i].ops, v[i].n, arg))
				err = 1;	/* @fn asked to stop */
		}
		free(v[i].ops);
	}
	free(v);
	return err < 0 ? err : called;
}
