/* SPDX-License-Identifier: MIT */
/*
 * member.h - one rank of one communicator as ccomctl and ccomd see it,
 * whatever the source: the library-published state files (pubdir.c), the
 * driver's comm dump, or a remote ccomd (JSON).  Shared by `ccomctl comm`,
 * `ccomctl job` and ccomd.
 */
#ifndef CCOM_TOOLS_MEMBER_H
#define CCOM_TOOLS_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "print.h"
#include "publish/pubfile.h"

/**
 * struct member - one rank of one communicator
 * @hash: communicator hash
 * @rank: rank
 * @nranks: number of ranks
 * @pid: pid of the rank's process
 * @device: nccom device or -1
 * @stage: &enum nccom_nl_stage
 * @last_error: negative errno of the last error, 0 if none
 * @ops_issued: operations issued
 * @ops_completed: operations completed
 * @start_ns: CLOCK_REALTIME when the rank published first (0 if unknown)
 * @stage_ns: CLOCK_REALTIME of the last stage change (0 if unknown)
 * @alive: the rank's process still holds its state (not stale)
 * @registered: the published file says the rank registered with the driver
 * @client: driver client id of the registration (0 if not from the driver)
 * @handle: driver handle of the registration (0 if not from the driver)
 * @source: "shm" (published file), "driver" (netlink), "driver+shm" (both,
 *	merged) or "peer"
 * @host: host name
 * @error_msg: sentence of the last error
 */
struct member {
	uint64_t hash;
	int32_t rank;
	int32_t nranks;
	int32_t pid;
	int32_t device;
	uint32_t stage;
	int32_t last_error;
	uint64_t ops_issued;
	uint64_t ops_completed;
	uint64_t start_ns;
	uint64_t stage_ns;
	bool alive;
	bool registered;
	uint32_t client;
	uint32_t handle;
	char source[12];
	char host[CCOM_PUB_HOST_LEN];
	char error_msg[CCOM_PUB_ERRMSG_LEN];
};

/**
 * struct member_list - growable array; the owner frees @v with free()
 * @v: entries
 * @n: used entries
 * @cap: allocated entries
 */
struct member_list {
	struct member *v;
	size_t n;
	size_t cap;
};

/* Append a copy of @m; 0 or -ENOMEM. */
int member_add(struct member_list *l, const struct member *m);
void member_list_free(struct member_list *l);
/* Name of a stage ("ready"...), "unknown" for values this build does not know. */
const char *member_stage_name(uint32_t stage);
/* Print @m (one line in text, one object in JSON). */
void member_line(struct pr *p, const struct member *m);
/* Sort by hash, then rank. */
void member_sort(struct member_list *l);

/*
 * Read every state file of @dir into @l (appending).  Stale files (writer
 * gone) are included with @alive false, or removed when @clean is true and
 * the caller may unlink them.  Returns 0 (also for a missing directory) or
 * -errno.
 */
int pubdir_scan(const char *dir, bool clean, struct member_list *l);

#endif
