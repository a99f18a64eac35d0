/* SPDX-License-Identifier: MIT */
/*
 * publish.h - libccom publishes the state of each communicator (rank,
 * nranks, hash, init stage, op counters, last error) in a small mmap'd file
 * (layout in ccom_pubstate.h) so that ccomd and ccomctl can answer "which rank is
 * stuck where" without the driver, and registers the same state block with
 * the nccom driver when /dev/nccom is usable (NCCOM_IOC_COMM_REGISTER), so
 * that the driver's netlink family lists the communicator too.
 *
 * Every function accepts a NULL handle and then does nothing: publishing is
 * best effort and never fails a communicator (CCOM_PUBLISH=0 turns it off).
 * The op counters are inline single stores for the hot path; everything
 * else is off the hot path.
 */
#ifndef CCOM_PUBLISH_PUBLISH_H
#define CCOM_PUBLISH_PUBLISH_H

#include <stdint.h>

#include <linux/nccom_genl.h>

#include "ccom_pubstate.h"

struct ccomComm;

/**
 * struct ccom_publish - a rank's handle on its published state (opaque to
 * callers except for the inline counter helpers below)
 * @state: the state block: inside @file, or in @anon when there is no file
 * @file: the shared mapping of the state file, NULL if there is none
 * @anon: a shared anonymous page holding @state for the driver alone, NULL
 *	if @file is used
 * @fd: the file, holding a shared flock for the life of the handle; -1
 * @dev_fd: /dev/nccom, open while the communicator is registered; -1
 * @handle: the driver's handle of the registration, 0 if not registered
 * @path: file name, unlinked by ccom_publish_close() ("" without a file)
 * @comm: the communicator (outlives the handle), for fields that are only
 *	known after some init stages (the device)
 * @ring: the operation ring mapped past the first page of @file, NULL if none
 * @ring_bytes: length of the @ring mapping
 */
struct ccom_publish {
	struct nccom_comm_state *state;
	struct ccom_pub_file *file;
	void *anon;
	int fd;
	int dev_fd;
	uint32_t handle;
	char path[256];
	const struct ccomComm *comm;
	struct ccom_pub_op *ring;
	size_t ring_bytes;
};

/**
 * ccom_publish_open() - create the state file of @comm's rank
 * @comm: a communicator whose rank, nranks, comm_hash and device are set
 *
 * Also registers the state block with the nccom driver when /dev/nccom is
 * present, its compat id matches and it has NCCOM_FEAT_COMM_REGISTER (one
 * INFO line says why not otherwise).  Returns a handle owned by the caller
 * (free it with ccom_publish_close()), or NULL when publishing is disabled
 * or both the file and the registration failed (logged at INFO level; the
 * communicator works the same).
 */
struct ccom_publish *ccom_publish_open(const struct ccomComm *comm);

/**
 * ccom_publish_stage() - record that the communicator entered @stage
 * @p: handle or NULL
 * @stage: &enum nccom_nl_stage
 */
void ccom_publish_stage(struct ccom_publish *p, enum nccom_nl_stage stage);

/**
 * ccom_publish_init_stage() - same, for an init stage of core/comm.h
 * @p: handle or NULL
 * @init_stage: &enum ccom_init_stage (CCOM_STAGE_VALIDATE ... CCOM_STAGE_READY)
 */
void ccom_publish_init_stage(struct ccom_publish *p, int init_stage);

/**
 * ccom_publish_error() - record an error (@err < 0) and its sentence
 * @p: handle or NULL
 * @err: negative errno
 * @msg: the sentence (e.g. ccom_last_error()); NULL or "" keeps none
 * @fatal: true if the communicator is unusable (stage becomes ERROR)
 */
void ccom_publish_error(struct ccom_publish *p, int err, const char *msg, int fatal);

/**
 * ccom_publish_cma() - record the CMA path's state and why (coll/cma.c),
 *	once, at init, for `ccomctl comm show`
 * @p: handle or NULL
 * @why: the sentence ("off: ..." when the path is off)
 */
void ccom_publish_cma(struct ccom_publish *p, const char *why);

/**
 * ccom_publish_close() - unregister from the driver, unlink the state file
 *	and free @p (NULL is a no-op)
 * @p: handle or NULL
 */
void ccom_publish_close(struct ccom_publish *p);

/**
 * ccom_publish_ops_map() - grow the state file by an operation ring and map it
 * @p: handle or NULL
 * @n: entries, a power of two
 *
 * The ring (&struct ccom_pub_op, ccom_pubstate.h "operation ring") is zeroed
 * and not yet visible to readers: the caller fills the name tables of
 * ccom_publish_ops_names() and then calls ccom_publish_ops_ready().  The
 * mapping lives until ccom_publish_close().
 *
 * Return: the ring, or NULL without a state file or if growing or mapping
 * it failed (logged at INFO; the caller keeps its ring in memory).
 */
struct ccom_pub_op *ccom_publish_ops_map(struct ccom_publish *p, uint32_t n);

/**
 * ccom_publish_ops_names() - the ring's name tables in the state file
 * @p: a handle whose ccom_publish_ops_map() succeeded
 *
 * Return: the &struct ccom_pub_ops of the file.
 */
static inline struct ccom_pub_ops *ccom_publish_ops_names(struct ccom_publish *p)
{
	return &p->file->ops;
}

/**
 * ccom_publish_ops_ready() - make the ring of ccom_publish_ops_map() visible
 * @p: a handle whose ccom_publish_ops_map() succeeded
 * @n: its entries
 */
void ccom_publish_ops_ready(struct ccom_publish *p, uint32_t n);

/**
 * ccom_publish_op_issued() - count one issued operation
 * @p: handle or NULL
 *
 * Single writer (the thread issuing on the communicator): a relaxed load and
 * one relaxed store, no locked instruction; the file's readers and the
 * driver read the same word.
 */
static inline void ccom_publish_op_issued(struct ccom_publish *p)
{
	if (p) {
		uint64_t v = __atomic_load_n(&p->state->ops_issued, __ATOMIC_RELAXED);

		__atomic_store_n(&p->state->ops_issued, v + 1, __ATOMIC_RELAXED);
	}
}

/**
 * ccom_publish_op_completed() - count one completed operation
 * @p: handle or NULL
 *
 * Single writer (the thread executing the communicator's queue, serialized
 * by the queue's exec lock).  Errors are reported with ccom_publish_error().
 */
static inline void ccom_publish_op_completed(struct ccom_publish *p)
{
	if (p) {
		uint64_t v = __atomic_load_n(&p->state->ops_completed, __ATOMIC_RELAXED);

		__atomic_store_n(&p->state->ops_completed, v + 1, __ATOMIC_RELAXED);
	}
}

#endif
