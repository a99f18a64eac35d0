/* SPDX-License-Identifier: MIT */
/*
 * init.h - what the files of init/ share: the arguments of one init, config
 * validation, device count and process-wide set-up.  Private to init/.
 */
#ifndef CCOM_INIT_INIT_H
#define CCOM_INIT_INIT_H

#include <stdint.h>

#include "ccom.h"

struct ccomComm;

/* Name of @stage ("bootstrap", ...). */
const char *ccom_init_stage_name(int stage);

/* Init internals shared by the files of init/. */
struct ccom_init_args {
	int nranks;
	int rank;
	ccomUniqueId id;
	ccomConfig_t config;	/* validated, effective */
	uint64_t hash_salt;	/* 0, or a split child's salt */
	int64_t start_us;	/* when the API call started (0: now) */
	const ccomUniqueId *ids;	/* nids > 1: every root's id (ids[0] == id) */
	int nids;
	uint64_t comm_hash;	/* nonzero: the comm hash to use (shrink), else from id + salt */
	/* Shrink: the step that fills the id before the bootstrap (see core/comm.h) */
	int (*prepare)(struct ccomComm *comm);
	void *prepare_arg;
};
/*
 * A root of @id that nobody will check in with (a failed shrink or grow,
 * an unused grow id) would wait until the bootstrap timeout, or forever
 * when no rank ever came: check in once as the only rank of a 1-rank job,
 * which the root answers and then ends.  The caller's error sentence is
 * kept; @fn names the API call in the log.  (shrink.c)
 */
void ccom_init_retire_root(const ccomUniqueId *id, const char *fn);
/* Retire the root of @comm's grow id if it was handed out and never used.  (grow.c) */
void ccom_grow_forget(struct ccomComm *comm);

/* Validate @config (NULL: defaults) into @out; 0 or -EINVAL with the error set. */
int ccom_config_validate(const ccomConfig_t *config, ccomConfig_t *out);
/* Allocate, publish into *@comm and run (or start) the init; returns a ccomResult_t. */
ccomResult_t ccom_comm_init_rank(ccomComm_t *comm, const struct ccom_init_args *args);
/* Number of nccom devices (0 when /dev/nccom is absent). */
int ccom_device_count(void);
/* Raise RLIMIT_NOFILE etc. once per process. */
void ccom_global_init(void);

#endif
