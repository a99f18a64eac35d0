// SPDX-License-Identifier: MIT
/*
 * state.c - ccomd's view of this host's communicator ranks (the driver's
 * registrations merged with the library-published state, commlist.c): a
 * periodic scan that remembers, per (comm, rank, pid), when its
 * completed-op counter or its stage last moved, so that a stuck rank shows
 * a growing idle time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccomd.h"
#include "commlist.h"

/* The clock of the idle times: CLOCK_MONOTONIC in ms. */
static int64_t state_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ccomd_members(struct ccomd *d, bool clean, struct member_list *l)
{
	struct ctl_nl nl = { .quiet = true };
	int rc;

	rc = comm_collect_local(&nl, d->cfg.pubdir, clean, l);
	ctl_nl_close(&nl);
	return rc ? -EIO : 0;
}

static struct ccomd_progress *state_find_locked(struct ccomd *d, const struct member *m)
{
	size_t i;

	for (i = 0; i < d->nprogress; i++)
		if (d->progress[i].hash == m->hash && d->progress[i].rank == m->rank &&
		    d->progress[i].pid == m->pid)
			return &d->progress[i];
	return NULL;
}

static int state_track_locked(struct ccomd *d, const struct member *m, int64_t now)
{
	struct ccomd_progress *p = state_find_locked(d, m), *v;

	if (!p) {
		if (d->nprogress == d->cap_progress) {
			size_t cap = d->cap_progress ? d->cap_progress * 2 : 64;

			v = realloc(d->progress, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			d->progress = v;
			d->cap_progress = cap;
		}
		p = &d->progress[d->nprogress++];
		memset(p, 0, sizeof(*p));
		p->hash = m->hash;
		p->rank = m->rank;
		p->pid = m->pid;
		p->completed = m->ops_completed;
		p->stage = m->stage;
		p->changed_ms = now;
	} else if (p->completed != m->ops_completed || p->stage != m->stage) {
		p->completed = m->ops_completed;
		p->stage = m->stage;
		p->changed_ms = now;
	}
	p->seen = true;
	return 0;
}

int ccomd_state_scan(struct ccomd *d)
{
	struct member_list l = { 0 };
	int64_t now = state_now_ms();
	size_t i, n;
	int err;

	err = ccomd_members(d, d->cfg.clean_stale, &l);
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nprogress; i++)
		d->progress[i].seen = false;
	for (i = 0; !err && i < l.n; i++)
		err = state_track_locked(d, &l.v[i], now);
	/* Forget ranks whose file is gone. */
	for (i = 0, n = 0; i < d->nprogress; i++)
		if (d->progress[i].seen)
			d->progress[n++] = d->progress[i];
	d->nprogress = n;
	d->scans++;
	pthread_mutex_unlock(&d->lock);
	member_list_free(&l);
	return err;
}

double ccomd_state_idle_s(struct ccomd *d, const struct member *m)
{
	struct ccomd_progress *p;
	double idle = -1;

	pthread_mutex_lock(&d->lock);
	p = state_find_locked(d, m);
	if (p && p->completed == m->ops_completed && p->stage == m->stage)
		idle = (double)(state_now_ms() - p->changed_ms) / 1000.0;
	else if (p)
		idle = 0;
	pthread_mutex_unlock(&d->lock);
	return idle;
}
