/* SPDX-License-Identifier: MIT */
/*
 * pubfile.h - layout of the per-communicator state file that libccom
 * publishes when ranks run without the driver (shm and TCP paths), read by
 * ccomd and `ccomctl comm` / `ccomctl job`.  See Documentation/ccomd.rst,
 * "Library-published state".
 *
 * One file per (communicator, rank) in CCOM_PUBLISH_DIR (default
 * /dev/shm/ccom), named "<comm hash, 16 hex digits>.<rank>.<pid>", mode 0644,
 * CCOM_PUB_FILE_SIZE bytes, mmap'd MAP_SHARED by the rank.  The rank holds a
 * shared flock() on it for its whole life: a reader that obtains an exclusive
 * flock (LOCK_EX | LOCK_NB) knows the writer is gone and the file is stale.
 *
 * Writers: the identity and stage fields are written under the @seq
 * seqlock (odd while a write is in progress) by whatever thread changes the
 * stage; the two op counters are single-writer counters (the issuing thread,
 * the executing thread) stored with relaxed atomics, each on its own cache
 * line, so publishing costs one plain store per operation.
 * Readers: copy the seqlocked fields and retry while @seq is odd or changed;
 * read the counters with relaxed atomic loads.
 */
#ifndef CCOM_PUBLISH_PUBFILE_H
#define CCOM_PUBLISH_PUBFILE_H

#include <stdatomic.h>
#include <stdint.h>

#define CCOM_PUB_MAGIC		0x42504343u	/* "CCPB" */
#define CCOM_PUB_VERSION	1
#define CCOM_PUB_FILE_SIZE	4096
#define CCOM_PUB_DEFAULT_DIR	"/dev/shm/ccom"
#define CCOM_PUB_HOST_LEN	64
#define CCOM_PUB_ERRMSG_LEN	256

/**
 * struct ccom_pub_file - the published state of one rank of one communicator
 * @magic: %CCOM_PUB_MAGIC, written last at creation
 * @version: %CCOM_PUB_VERSION; readers skip files of another version
 * @size: sizeof(struct ccom_pub_file) as the writer knows it
 * @seq: seqlock of the fields from @comm_hash to @error_msg
 * @comm_hash: communicator hash (the same on every rank, printed as 16 hex)
 * @rank: rank of the writer
 * @nranks: number of ranks of the communicator
 * @pid: pid of the writer (in its own pid namespace)
 * @device: nccom device of the rank, -1 if none
 * @stage: &enum nccom_nl_stage
 * @last_error: negative errno of the last error, 0 if none
 * @start_ns: CLOCK_REALTIME of the creation of the file, ns
 * @stage_ns: CLOCK_REALTIME of the last stage change, ns
 * @error_ns: CLOCK_REALTIME of the last error, ns (0 if none)
 * @host: host name of the writer
 * @error_msg: sentence of the last error ("" if none)
 * @ops_issued: collective/p2p operations issued (relaxed atomic)
 * @ops_completed: operations completed, with or without error (relaxed atomic)
 */
struct ccom_pub_file {
	uint32_t magic;
	uint32_t version;
	uint32_t size;
	_Atomic uint32_t seq;
	uint64_t comm_hash;
	int32_t rank;
	int32_t nranks;
	int32_t pid;
	int32_t device;
	uint32_t stage;
	int32_t last_error;
	uint64_t start_ns;
	uint64_t stage_ns;
	uint64_t error_ns;
	char host[CCOM_PUB_HOST_LEN];
	char error_msg[CCOM_PUB_ERRMSG_LEN];
	_Alignas(64) _Atomic uint64_t ops_issued;
	_Alignas(64) _Atomic uint64_t ops_completed;
	_Alignas(64) uint8_t reserved[64];
};

_Static_assert(sizeof(struct ccom_pub_file) <= CCOM_PUB_FILE_SIZE, "pub file too large");

#endif
