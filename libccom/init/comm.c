// SPDX-License-Identifier: MIT
/*
 * comm.c - communicator lifetime after init: finalize, destroy, abort,
 * queries, asynchronous errors, and the version handshake.
 *
 * Ownership: the handle is published to the caller as soon as its init
 * starts and stays valid until ccomCommDestroy() or ccomCommAbort(), also
 * after a failed init.  Abort may run on another thread while an init is
 * blocked: it sets the abort flag (every bootstrap wait polls it), waits
 * for the init to let go of the comm, and frees it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "init/init.h"
#include "proxy/proxy.h"
#include "publish/publish.h"
#include "topo/topo.h"
#include "util/err.h"
#include "util/log.h"

static int check_comm(const struct ccomComm *comm, const char *fn)
{
	if (!ccom_comm_valid(comm)) {
		ccom_set_last_error("%s: invalid communicator %p (NULL, destroyed or corrupted)", fn,
				    (const void *)comm);
		return -EINVAL;
	}
	return 0;
}

/* Wait until no init uses @comm any more, and reap its thread. */
static void comm_wait_init(struct ccomComm *comm)
{
	pthread_mutex_lock(&comm->lock);
	while (comm->init_running)
		pthread_cond_wait(&comm->cond, &comm->lock);
	pthread_mutex_unlock(&comm->lock);
	if (comm->init_thread_valid) {
		pthread_join(comm->init_thread, NULL);
		comm->init_thread_valid = 0;
	}
}

static void comm_free(struct ccomComm *comm)
{
	/* The progress thread publishes op counters: stop it before the file goes. */
	ccom_coll_comm_fini(comm);
	ccom_publish_close(comm->publish);
	comm->publish = NULL;
	ccom_topo_fini(comm);
	ccom_bootstrap_close(comm->bootstrap);
	ccom_grow_forget(comm);
	free(comm->peers);
	free(comm->rank_to_node);
	free(comm->rank_to_local);
	free(comm->local_to_rank);
	free(comm->ids);
	free(comm->init_prepare_arg);	/* a shrink whose init never reached its exchange */
	pthread_mutex_destroy(&comm->lock);
	pthread_cond_destroy(&comm->cond);
	comm->start_magic = comm->end_magic = 0;
	free(comm);
}

/* Drain the queue; the result becomes the comm's async state (nonblocking finalize). */
static ccomResult_t comm_finalize_run(struct ccomComm *comm)
{
	ccomResult_t cur = ccomInProgress;
	int rc;

	rc = ccom_coll_comm_finalize(comm);
	if (rc) {
		ccom_comm_set_async_error(comm, ccom_result_from_errno(rc));
		return ccom_result_from_errno(rc);
	}
	/* An op that failed meanwhile already replaced ccomInProgress: keep it. */
	atomic_compare_exchange_strong(&comm->async_result, &cur, ccomSuccess);
	pthread_mutex_lock(&comm->lock);
	comm->finalized = 1;
	pthread_mutex_unlock(&comm->lock);
	return ccomSuccess;
}

static void *comm_finalize_thread(void *arg)
{
	struct ccomComm *comm = arg;

	ccom_log_set_rank(comm->rank);
	comm_finalize_run(comm);
	pthread_mutex_lock(&comm->lock);
	comm->init_running = 0;
	pthread_cond_broadcast(&comm->cond);
	pthread_mutex_unlock(&comm->lock);
	return NULL;
}

/*
 * Nonblocking finalize: the comm's async state goes back to ccomInProgress
 * (new operations are refused) and a thread drains the queue, then sets it
 * to ccomSuccess or the error.  The thread uses the init slot of the comm
 * (init_running, init_thread), so destroy and abort wait for it exactly as
 * for a nonblocking init.
 */
static ccomResult_t comm_finalize_start(struct ccomComm *comm)
{
	int rc;

	pthread_mutex_lock(&comm->lock);
	if (comm->init_running || comm->init_thread_valid) {
		pthread_mutex_unlock(&comm->lock);
		ccom_set_last_error("ccomCommFinalize: rank %d: a finalize of this communicator is already running; poll ccomCommGetAsyncError until it is not ccomInProgress",
				    comm->rank);
		return ccomInvalidUsage;
	}
	comm->finalizing = 1;
	comm->init_running = 1;
	comm->init_thread_valid = 1;
	atomic_store(&comm->async_result, ccomInProgress);
	rc = pthread_create(&comm->init_thread, NULL, comm_finalize_thread, comm);
	if (rc) {
		comm->init_thread_valid = 0;
		comm->init_running = 0;
		comm->finalizing = 0;
		atomic_store(&comm->async_result, ccomSuccess);
		pthread_mutex_unlock(&comm->lock);
		ccom_set_last_error("ccomCommFinalize: rank %d: cannot start the finalize thread: %s",
				    comm->rank, strerror(rc));
		return ccomSystemError;
	}
	pthread_mutex_unlock(&comm->lock);
	return ccomInProgress;
}

ccomResult_t ccomCommFinalize(ccomComm_t comm)
{
	ccomResult_t res;
	int rc;

	ccom_clear_last_error();
	rc = check_comm(comm, "ccomCommFinalize");
	if (rc)
		return ccom_result_from_errno(rc);
	res = atomic_load(&comm->async_result);
	if (res == ccomInProgress && comm->finalizing) {
		ccom_set_last_error("ccomCommFinalize: rank %d: a finalize of this communicator is already running; poll ccomCommGetAsyncError until it is not ccomInProgress",
				    comm->rank);
		return ccomInvalidUsage;
	}
	if (res != ccomSuccess) {
		ccom_set_last_error("ccomCommFinalize: the communicator is not ready (%s)%s%s",
				    ccomGetErrorString(res), comm->last_error[0] ? ": " : "",
				    comm->last_error);
		return res == ccomInProgress ? ccomInvalidUsage : res;
	}
	ccom_publish_stage(comm->publish, NCCOM_NL_STAGE_FINALIZING);
	if (!comm->config.blocking) {
		/* The nonblocking init's thread, if any, has ended: reap it first. */
		comm_wait_init(comm);
		return comm_finalize_start(comm);
	}
	comm->finalizing = 1;
	return comm_finalize_run(comm);
}

ccomResult_t ccomCommDestroy(ccomComm_t comm)
{
	ccom_clear_last_error();
	if (!comm)
		return ccomSuccess;
	if (check_comm(comm, "ccomCommDestroy"))
		return ccomInvalidArgument;
	pthread_mutex_lock(&comm->lock);
	if (comm->init_running) {
		ccom_warn(comm->finalizing ?
			  "ccomCommDestroy: rank %d is still finalizing; aborting the operations it waits for" :
			  "ccomCommDestroy: rank %d is still initialising; aborting its init",
			  comm->rank);
		atomic_store(&comm->abort_flag, 1);
	}
	pthread_mutex_unlock(&comm->lock);
	comm_wait_init(comm);
	comm_free(comm);
	return ccomSuccess;
}

ccomResult_t ccomCommAbort(ccomComm_t comm)
{
	ccom_clear_last_error();
	if (!comm)
		return ccomSuccess;
	if (check_comm(comm, "ccomCommAbort"))
		return ccomInvalidArgument;
	atomic_store(&comm->abort_flag, 1);
	ccom_publish_stage(comm->publish, NCCOM_NL_STAGE_ABORTED);
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommAbort: rank %d aborting", comm->rank);
	if (ccom_coll_comm_abort(comm))
		return ccomSuccess;	/* leaked, see the warning: never freed under a running thread */
	comm_wait_init(comm);
	comm_free(comm);
	return ccomSuccess;
}

ccomResult_t ccomCommRevoke(ccomComm_t comm, int flags)
{
	ccom_clear_last_error();
	if (check_comm(comm, "ccomCommRevoke"))
		return ccomInvalidArgument;
	if (flags != CCOM_REVOKE_DEFAULT) {
		ccom_set_last_error("ccomCommRevoke: flags %#x are not defined; pass CCOM_REVOKE_DEFAULT (0)",
				    (unsigned int)flags);
		return ccomInvalidArgument;
	}
	if (atomic_exchange(&comm->revoked, 1))
		return ccomSuccess;	/* revoked before: nothing more to do */
	/* Every wait of every room polls the abort flag: running ops fail within ms. */
	atomic_store(&comm->abort_flag, 1);
	pthread_mutex_lock(&comm->lock);
	/* An init still building the data path fails on the flag; do not touch its rooms. */
	if (!comm->init_running || comm->finalizing)
		ccom_coll_comm_revoke(comm);
	pthread_mutex_unlock(&comm->lock);
	ccom_set_last_error("rank %d: the communicator was revoked (ccomCommRevoke); destroy it",
			    comm->rank);
	ccom_comm_set_async_error(comm, ccomRemoteError);
	ccom_publish_stage(comm->publish, NCCOM_NL_STAGE_ABORTED);
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommRevoke: rank %d revoked its communicator", comm->rank);
	ccom_clear_last_error();
	return ccomSuccess;
}

ccomResult_t ccomCommGetAsyncError(ccomComm_t comm, ccomResult_t *asyncError)
{
	ccomResult_t res;

	if (check_comm(comm, "ccomCommGetAsyncError"))
		return ccomInvalidArgument;
	if (!asyncError) {
		ccom_set_last_error("ccomCommGetAsyncError: asyncError is NULL");
		return ccomInvalidArgument;
	}
	res = atomic_load(&comm->async_result);
	if (res != ccomSuccess && res != ccomInProgress) {
		pthread_mutex_lock(&comm->lock);
		ccom_set_last_error_quiet(comm->last_error);
		pthread_mutex_unlock(&comm->lock);
	}
	*asyncError = res;
	return ccomSuccess;
}

static int check_query(const struct ccomComm *comm, const void *out, const char *fn)
{
	int rc = check_comm(comm, fn);

	if (!rc && !out) {
		ccom_set_last_error("%s: output pointer is NULL", fn);
		rc = -EINVAL;
	}
	return rc;
}

ccomResult_t ccomCommCount(const ccomComm_t comm, int *count)
{
	if (check_query(comm, count, "ccomCommCount"))
		return ccomInvalidArgument;
	*count = comm->nranks;
	return ccomSuccess;
}

ccomResult_t ccomCommUserRank(const ccomComm_t comm, int *rank)
{
	if (check_query(comm, rank, "ccomCommUserRank"))
		return ccomInvalidArgument;
	*rank = comm->rank;
	return ccomSuccess;
}

ccomResult_t ccomCommDevice(const ccomComm_t comm, int *device)
{
	if (check_query(comm, device, "ccomCommDevice"))
		return ccomInvalidArgument;
	if (atomic_load(&comm->async_result) != ccomSuccess) {
		ccom_set_last_error("ccomCommDevice: rank %d has not finished init; the device is chosen by then",
				    comm->rank);
		return ccomInvalidUsage;
	}
	*device = comm->device;
	return ccomSuccess;
}

const char *ccomGetLastError(ccomComm_t comm)
{
	const char *e = ccom_last_error();

	if (!e[0] && ccom_comm_valid(comm))
		return comm->last_error;
	return e;
}

ccomResult_t ccomGetVersion(int *version)
{
	if (!version) {
		ccom_set_last_error("ccomGetVersion: version is NULL");
		return ccomInvalidArgument;
	}
	*version = CCOM_VERSION_CODE;
	return ccomSuccess;
}

ccomResult_t ccomGetVersionInfo(struct ccomVersionInfo *info)
{
	struct ccomVersionInfo v;
	uint32_t size;

	if (!info || info->size < 2 * sizeof(uint32_t)) {
		ccom_set_last_error("ccomGetVersionInfo: info is NULL or info->size is not set");
		return ccomInvalidArgument;
	}
	size = info->size < sizeof(v) ? info->size : sizeof(v);
	memset(&v, 0, sizeof(v));
	v.size = size;
	v.major = CCOM_MAJOR;
	v.minor = CCOM_MINOR;
	v.patch = CCOM_PATCH;
	v.abiCompatId = CCOM_ABI_COMPAT_ID;
	v.buildHash = CCOM_BUILD_HASH;
	snprintf(v.versionString, sizeof(v.versionString), "%d.%d.%d", CCOM_MAJOR, CCOM_MINOR,
		 CCOM_PATCH);
	memcpy(info, &v, size);
	return ccomSuccess;
}
