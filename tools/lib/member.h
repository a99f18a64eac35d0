/* SPDX-License-Identifier: MIT */
/*
 * member.h - one rank of one communicator as ccomctl and ccomd see it,
 * whatever the source: the library-published state files (pubdir.c), the
 * driver's comm dump, or a remote ccomd (JSON).  Shared by `ccomctl comm`,
 * `ccomctl job` and ccomd.
 */
#ifndef CCOM_TOOLS_LIB_MEMBER_H
#define CCOM_TOOLS_LIB_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "print.h"
#include "ccom_pubstate.h"

#define MEMBER_OPS 8

/**
 * struct member_op - one operation of a rank's flight recorder, as read
 *	from the published ring (ccom_pubstate.h "operation ring") or a peer
 * @seq: operation number on the communicator (1, 2, ...)
 * @count: element count
 * @root: root or peer, -1 if none
 * @nsubs: sends and receives of a p2p group
 * @err: negative errno of a failed operation
 * @state: &enum ccom_pub_op_state
 * @stream_seq: position in its stream (low 32 bits)
 * @age_ms: issued or started, not ended: ms since it started (or since it
 *	was issued, if not started); ended: how long it ran; -1 if unknown
 * @kind: collective ("AllReduce")
 * @dtype: data type ("float")
 * @redop: reduction ("sum"), "" if none
 * @algo: algorithm, "" if not chosen
 * @proto: protocol, "" if not chosen
 */
struct member_op {
	uint64_t seq;
	uint64_t count;
	int32_t root;
	int32_t nsubs;
	int32_t err;
	uint32_t state;
	uint32_t stream_seq;
	int64_t age_ms;
	char kind[CCOM_PUB_NAME_LEN];
	char dtype[CCOM_PUB_NAME_LEN];
	char redop[CCOM_PUB_NAME_LEN];
	char algo[CCOM_PUB_NAME_LEN];
	char proto[CCOM_PUB_NAME_LEN];
};

/**
 * member_op_state_name() - "issued", "started", "done" or "failed"
 * @state: &enum ccom_pub_op_state
 *
 * Return: the name, "unknown" for other values.
 */
const char *member_op_state_name(uint32_t state);

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
 * @stopped: the rank's process is stopped (SIGSTOP, a debugger): read from
 *	/proc on the host that holds the file, for a pid whose process
 *	started before the file was created (pid reuse excluded)
 * @registered: the published file says the rank registered with the driver
 * @client: driver client id of the registration (0 if not from the driver)
 * @handle: driver handle of the registration (0 if not from the driver)
 * @ring: entries of the rank's published flight recorder, 0 if it has none
 * @last_seq: the highest operation number the rank issued (from the ring)
 * @nops: entries of @ops
 * @ops: the rank's last @nops operations, oldest first (from the ring)
 * @source: "shm" (published file), "driver" (netlink), "driver+shm" (both,
 *	merged) or "peer"
 * @host: host name
 * @name: the communicator's name (ccomConfig_t.commName), "" if none or
 *	unknown (a driver-only entry, an older writer)
 * @error_msg: sentence of the last error
 * @cma: the CMA path's state and why ("" if unknown: a driver-only entry,
 *	an older writer, a rank still before its connect stage)
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
	bool stopped;
	bool registered;
	uint32_t client;
	uint32_t handle;
	uint32_t ring;
	uint64_t last_seq;
	int nops;
	struct member_op ops[MEMBER_OPS];
	char source[12];
	char host[CCOM_PUB_HOST_LEN];
	char name[CCOM_PUB_COMM_NAME_LEN];
	char error_msg[CCOM_PUB_ERRMSG_LEN];
	char cma[CCOM_PUB_CMA_LEN];
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

/**
 * member_add() - append a copy of @m to @l
 * @l: list
 * @m: member
 *
 * Return: 0 or -ENOMEM (@l unchanged).
 */
int member_add(struct member_list *l, const struct member *m);

/**
 * member_list_free() - free the entries; @l is empty and reusable afterwards
 * @l: list
 */
void member_list_free(struct member_list *l);

/**
 * member_stage_name() - name of an &enum nccom_nl_stage
 * @stage: stage
 *
 * Return: "ready", "error"..., or "unknown" for values this build does not know.
 */
const char *member_stage_name(uint32_t stage);

/**
 * member_line() - print @m: one line in text, one object in JSON
 * @p: printer
 * @m: member
 */
void member_line(struct pr *p, const struct member *m);

/**
 * member_sort() - sort @l by hash, then rank
 * @l: list
 */
void member_sort(struct member_list *l);

/**
 * pubdir_scan() - append every state file of @dir to @l (pubdir.c)
 * @dir: directory of the library-published state
 * @clean: remove stale files (writer gone) instead of listing them, where
 *	the caller may unlink them
 * @l: list to append to; the caller frees it, also on error
 *
 * Files of another format version, too short or busy are skipped; stale
 * files are listed with @alive false unless @clean.
 *
 * Return: 0 (also for a missing directory), -ENOMEM or the -errno of
 * opendir().
 */
int pubdir_scan(const char *dir, bool clean, struct member_list *l);

/**
 * pubdir_flight() - the whole published flight recorder of the live ranks
 *	of @hash in @dir (pubdir.c)
 * @dir: directory of the library-published state
 * @hash: communicator
 * @fn: called once per rank that has a ring, with its member and its
 *	operations, oldest first; a non-zero return stops the scan
 * @arg: passed to @fn
 *
 * Return: the number of ranks @fn was called for, -ENOMEM or the -errno of
 * opendir().
 */
int pubdir_flight(const char *dir, uint64_t hash,
		  int (*fn)(const struct member *m, const struct member_op *ops, size_t n,
			    void *arg),
		  void *arg);

/**
 * member_op_line() - print one operation: a line in text, an object in JSON
 * @p: printer
 * @o: operation
 */
void member_op_line(struct pr *p, const struct member_op *o);

/**
 * member_flight() - print one rank's flight recorder: a header line and
 *	one line per operation in text, one object with an "ops" array in JSON
 * @p: printer
 * @m: the rank
 * @ops: its operations, oldest first
 * @n: number of @ops
 */
void member_flight(struct pr *p, const struct member *m, const struct member_op *ops, size_t n);

/**
 * member_op_desc() - "AllReduce, 1024 x float" into @buf
 * @o: operation
 * @buf: result
 * @len: size of @buf
 */
void member_op_desc(const struct member_op *o, char *buf, size_t len);

#endif
