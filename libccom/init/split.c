// SPDX-License-Identifier: MIT
/*
 * split.c - communicators made from other communicators: ccomCommInitAll()
 * (one rank per thread of this process) and ccomCommSplit() (children by
 * color and key over the parent's bootstrap).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "init/init.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define SPLIT_TAG_BASE 0x1000	/* bootstrap tags for split ids, below the user base */

/* ------------------------------------------------------------------ */
/* ccomCommInitAll                                                     */

struct init_all_job;

/* What the ranks of one ccomCommInitAll() share. */
struct init_all_shared {
	_Atomic int first_failed;	/* rank whose init failed first, -1: none */
	_Atomic int first_local;	/* same, counting only local causes */
	_Atomic int finished;		/* threads that returned */
};

struct init_all_job {
	struct init_all_shared *sh;
	pthread_t th;
	ccomComm_t comm;
	ccomUniqueId id;
	int nranks;
	int rank;
	ccomConfig_t config;
	ccomResult_t res;
	char err[1024];
};

static void *init_all_thread(void *arg)
{
	struct init_all_job *j = arg;

	int none = -1;

	j->res = ccomCommInitRankConfig(&j->comm, j->nranks, j->id, j->rank, &j->config);
	if (j->res != ccomSuccess) {
		snprintf(j->err, sizeof(j->err), "%s", ccom_last_error());
		atomic_compare_exchange_strong(&j->sh->first_failed, &none, j->rank);
		/*
		 * A rank that fails on its own (out of files, memory...) tears
		 * down its sockets before it returns, so a sibling may report
		 * the closed connection (a remote error) first: that one only
		 * echoes the cause.
		 */
		none = -1;
		if (j->res != ccomRemoteError)
			atomic_compare_exchange_strong(&j->sh->first_local, &none, j->rank);
	}
	atomic_fetch_add(&j->sh->finished, 1);
	return NULL;
}

static int check_devlist(int ndev, const int *devlist)
{
	int ndevices = ccom_device_count(), i, k;

	for (i = 0; devlist && i < ndev; i++) {
		if (devlist[i] < 0 || (ndevices > 0 && devlist[i] >= ndevices)) {
			ccom_set_last_error("ccomCommInitAll: devlist[%d] = %d is not a device index (%d nccom device(s) present)",
					    i, devlist[i], ndevices);
			return -EINVAL;
		}
		for (k = 0; k < i; k++) {
			if (devlist[k] == devlist[i]) {
				ccom_set_last_error("ccomCommInitAll: devlist[%d] and devlist[%d] are both device %d; each rank needs its own device",
						    k, i, devlist[i]);
				return -EPERM;
			}
		}
	}
	if (!devlist && ndevices > 0 && ndev > ndevices) {
		ccom_set_last_error("ccomCommInitAll: %d ranks requested but only %d nccom device(s) present; pass a devlist or fewer ranks",
				    ndev, ndevices);
		return -EINVAL;
	}
	return 0;
}

static void init_all_abort(struct init_all_job *jobs, int n)
{
	ccomComm_t c;
	int i;

	for (i = 0; i < n; i++) {
		c = __atomic_load_n(&jobs[i].comm, __ATOMIC_ACQUIRE);
		if (c)
			atomic_store(&c->abort_flag, 1);
	}
}

ccomResult_t ccomCommInitAll(ccomComm_t *comms, int ndev, const int *devlist)
{
	struct init_all_shared sh = { -1, -1, 0 };
	struct init_all_job *jobs;
	char msg[sizeof(jobs->err)];
	ccomResult_t res = ccomSuccess;
	int ndevices, i, started = 0, rc;

	ccom_clear_last_error();
	if (!comms || ndev < 1) {
		ccom_set_last_error("ccomCommInitAll: comms is NULL or ndev %d < 1", ndev);
		return ccomInvalidArgument;
	}
	/* Device checks come before any id, socket or thread exists. */
	rc = check_devlist(ndev, devlist);
	if (rc)
		return ccom_result_from_errno(rc);
	jobs = calloc(ndev, sizeof(*jobs));
	if (!jobs) {
		ccom_set_last_error("ccomCommInitAll: out of memory");
		return ccomSystemError;
	}
	ndevices = ccom_device_count();
	rc = ccom_bootstrap_new_root(&jobs[0].id);
	if (rc) {
		free(jobs);
		return ccom_result_from_errno(rc);
	}
	for (i = 0; i < ndev; i++) {
		ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;

		jobs[i].sh = &sh;
		jobs[i].id = jobs[0].id;
		jobs[i].nranks = ndev;
		jobs[i].rank = i;
		cfg.device = devlist ? devlist[i] : ndevices > 0 ? i : -1;
		jobs[i].config = cfg;
		if (pthread_create(&jobs[i].th, NULL, init_all_thread, &jobs[i])) {
			ccom_set_last_error("ccomCommInitAll: cannot start thread %d", i);
			res = ccomSystemError;
			break;
		}
		started++;
	}
	/*
	 * One rank that fails (or a thread that never started) means the
	 * others can never complete: abort them at once instead of letting
	 * them wait for CCOM_BOOTSTRAP_TIMEOUT.  Handles are published right
	 * after validation, so keep aborting until every thread returned.
	 */
	while (atomic_load(&sh.finished) < started) {
		if (started < ndev || atomic_load(&sh.first_failed) >= 0)
			init_all_abort(jobs, started);
		usleep(1000);
	}
	for (i = 0; i < started; i++)
		pthread_join(jobs[i].th, NULL);
	rc = atomic_load(&sh.first_local);
	if (rc < 0)
		rc = atomic_load(&sh.first_failed);
	if (res == ccomSuccess && rc >= 0)
		res = jobs[rc].res;
	if (res != ccomSuccess)
		snprintf(msg, sizeof(msg), "%s", rc >= 0 ? jobs[rc].err : ccom_last_error());
	for (i = 0; i < ndev; i++) {
		if (res != ccomSuccess) {
			ccomCommDestroy(jobs[i].comm);
			comms[i] = NULL;
		} else {
			comms[i] = jobs[i].comm;
		}
	}
	/* After the destroys, which clear the thread's last error. */
	if (res != ccomSuccess)
		ccom_set_last_error_quiet(msg);
	free(jobs);
	return res;
}

/* ------------------------------------------------------------------ */
/* ccomCommSplit                                                       */

struct split_entry {
	int32_t color;
	int32_t key;
};

static int split_members(const struct split_entry *all, int n, int color, int *members)
{
	int m = 0, i, j;

	for (i = 0; i < n; i++) {
		if (all[i].color != color)
			continue;
		/* Insertion sort by (key, parent rank). */
		for (j = m; j > 0 && all[members[j - 1]].key > all[i].key; j--)
			members[j] = members[j - 1];
		members[j] = i;
		m++;
	}
	return m;
}

static int split_exchange_id(struct ccomComm *comm, const int *members, int m, int me, int tag,
			     ccomUniqueId *id)
{
	int i, rc = 0;

	if (me == 0) {
		rc = ccom_bootstrap_new_root(id);
		/* On failure members still get a message: an all-zero id they reject. */
		if (rc)
			memset(id, 0, sizeof(*id));
		for (i = 1; i < m; i++) {
			int r = ccom_bootstrap_send(comm->bootstrap, members[i], tag, id, sizeof(*id));

			if (!rc)
				rc = r;
		}
		return rc;
	}
	return ccom_bootstrap_recv(comm->bootstrap, members[0], tag, id, sizeof(*id));
}

ccomResult_t ccomCommSplit(ccomComm_t comm, int color, int key, ccomComm_t *newcomm,
			   ccomConfig_t *config)
{
	struct ccom_init_args a;
	struct split_entry *all;
	int *members, m, me, rc, tag;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !newcomm || (color < 0 && color != CCOM_SPLIT_NOCOLOR)) {
		ccom_set_last_error("ccomCommSplit: invalid communicator, NULL newcomm or negative color %d (use CCOM_SPLIT_NOCOLOR to opt out)",
				    color);
		return ccomInvalidArgument;
	}
	*newcomm = NULL;
	if (atomic_load(&comm->async_result) != ccomSuccess) {
		ccom_set_last_error("ccomCommSplit: the parent communicator is not ready (%s)",
				    ccomGetErrorString(atomic_load(&comm->async_result)));
		return ccomInvalidUsage;
	}
	memset(&a, 0, sizeof(a));
	a.start_us = ccom_now_us();
	rc = ccom_config_validate(config ? config : &comm->config, &a.config);
	if (rc)
		return ccom_result_from_errno(rc);
	all = calloc(comm->nranks, sizeof(*all));
	members = calloc(comm->nranks, sizeof(*members));
	if (!all || !members) {
		rc = -ENOMEM;
		ccom_set_last_error("ccomCommSplit: out of memory");
		goto out_free;
	}
	all[comm->rank].color = color;
	all[comm->rank].key = key;
	rc = ccom_bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
	tag = SPLIT_TAG_BASE + (comm->split_count++ % 0x8000);
	if (rc || color == CCOM_SPLIT_NOCOLOR)
		goto out_free;
	m = split_members(all, comm->nranks, color, members);
	for (me = 0; members[me] != comm->rank; me++)
		;
	rc = split_exchange_id(comm, members, m, me, tag, &a.id);
	if (rc)
		goto out_free;
	a.nranks = m;
	a.rank = me;
	a.hash_salt = comm->comm_hash;
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommSplit: parent rank %d color %d key %d -> rank %d of %d",
		  comm->rank, color, key, me, m);
	free(all);
	free(members);
	return ccom_comm_init_rank(newcomm, &a);
out_free:
	free(all);
	free(members);
	return ccom_result_from_errno(rc);
}
