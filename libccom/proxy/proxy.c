// SPDX-License-Identifier: MIT
/*
 * proxy.c - the progress room's per-communicator state and the
 * communicator's asynchronous error (the completion end of the one-way
 * flow: an operation that fails on the progress thread is recorded here).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/comm.h"
#include "proxy/flight.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "proxy/stream.h"
#include "publish/publish.h"
#include "util/err.h"
#include "util/params.h"

int ccom_proxy_create(struct ccomComm *comm)
{
	struct ccom_proxy *px = calloc(1, sizeof(*px));
	int err;

	if (!px)
		return -ENOMEM;
	px->op_timeout_us = ccom_param_int("CCOM_OP_TIMEOUT") * 1000000;
	if (px->op_timeout_us <= 0)
		px->op_timeout_us = 300 * 1000000LL;
	px->failed = calloc((size_t)comm->nranks, sizeof(*px->failed));
	if (!px->failed) {
		free(px);
		return -ENOMEM;
	}
	err = ccom_live_create(comm, &px->live);
	if (err) {
		free(px->failed);
		free(px);
		return err;
	}
	atomic_init(&px->first_failed, -1);
	comm->proxy = px;
	return ccom_flight_create(comm);
}

int ccom_proxy_start(struct ccomComm *comm, ccom_proxy_exec_fn exec)
{
	int err;

	comm->proxy->exec = exec;
	err = ccom_stream_alloc(comm, true, &comm->proxy->default_stream);
	if (!err)
		err = ccom_stream_queue_start(comm);
	return err;
}

void ccom_proxy_destroy(struct ccomComm *comm)
{
	struct ccom_proxy *px = comm->proxy;

	if (!px)
		return;
	if (px->queue)
		ccom_stream_queue_stop(comm);
	ccom_stream_free(px->default_stream);
	ccom_flight_destroy(comm);
	ccom_live_destroy(px->live);
	free(px->failed);
	free(px);
	comm->proxy = NULL;
}

void ccom_proxy_note_failed(struct ccomComm *comm, int rank)
{
	int none = -1;

	if (!comm->proxy || !comm->proxy->failed || rank < 0 || rank >= comm->nranks ||
	    rank == comm->rank)
		return;
	atomic_store(&comm->proxy->failed[rank], 1);
	atomic_compare_exchange_strong(&comm->proxy->first_failed, &none, rank);
}

int ccom_proxy_first_failed(const struct ccomComm *comm)
{
	return comm->proxy ? atomic_load(&comm->proxy->first_failed) : -1;
}

int ccom_proxy_failed_ranks(const struct ccomComm *comm, int *ranks, int cap)
{
	int r, n = 0;

	if (!comm->proxy || !comm->proxy->failed)
		return 0;
	for (r = 0; r < comm->nranks; r++) {
		if (!atomic_load(&comm->proxy->failed[r]))
			continue;
		if (n < cap)
			ranks[n] = r;
		n++;
	}
	return n;
}

void ccom_comm_set_async_error(struct ccomComm *comm, ccomResult_t res)
{
	ccomResult_t cur = atomic_load(&comm->async_result);

	/* The first error wins; InProgress and Success may be replaced. */
	while (cur == ccomInProgress || cur == ccomSuccess) {
		if (atomic_compare_exchange_weak(&comm->async_result, &cur, res))
			break;
	}
	pthread_mutex_lock(&comm->lock);
	if (!comm->last_error[0])
		snprintf(comm->last_error, sizeof(comm->last_error), "%s", ccom_last_error());
	pthread_mutex_unlock(&comm->lock);
	ccom_publish_error(comm->publish, -EIO, comm->last_error, 1);
}
