// SPDX-License-Identifier: MIT
/*
 * pubdir.c - reader of the library-published state files
 * (libccom/include/ccom_pubstate.h): a directory scan, a seqlock-consistent
 * copy of each file and a liveness check through flock().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

/* Read one file; 1 if @m was filled, 0 to skip it. */
static int pubdir_read(int dfd, const char *name, bool clean, struct member *m)
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
	    f->size >= sizeof(*f) && pubdir_copy(f, m)) {
		/* The writer holds LOCK_SH while alive: LOCK_EX succeeds only if it is gone. */
		m->alive = flock(fd, LOCK_EX | LOCK_NB) != 0;
		if (!m->alive)
			flock(fd, LOCK_UN);
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
		if (pubdir_read(dirfd(d), de->d_name, clean, &m) && member_add(l, &m)) {
			err = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return err;
}
