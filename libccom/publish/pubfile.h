/* SPDX-License-Identifier: MIT */
/*
 * pubfile.h - layout of the per-communicator state file that libccom
 * publishes for ccomd and `ccomctl comm` / `ccomctl job` (with or without
 * the driver).  See Documentation/ccomd.rst, "Library-published state".
 *
 * One file per (communicator, rank) in CCOM_PUBLISH_DIR (default
 * /dev/shm/ccom), named "<comm hash, 16 hex digits>.<rank>.<pid>", mode 0644,
 * CCOM_PUB_FILE_SIZE bytes, mmap'd MAP_SHARED by the rank.  The rank holds a
 * shared flock() on it for its whole life: a reader that obtains an exclusive
 * flock (LOCK_EX | LOCK_NB) knows the writer is gone and the file is stale.
 *
 * The identity (hash, rank, nranks, pid, device, start time, host) is
 * written once before @magic.  Stage, error and op counters are the
 * driver's &struct nccom_comm_state (linux/nccom.h), embedded at a 64-byte
 * aligned offset: when /dev/nccom is there, the same block is registered
 * with the driver (NCCOM_IOC_COMM_REGISTER), so one store per operation
 * updates the file and what the driver's netlink family reports.
 * Writers: stage and error under @state.seq (odd while a write is in
 * progress); the two op counters are single-writer counters (the issuing
 * thread, the executing thread) stored with relaxed atomics, each on its
 * own cache line.  Readers: copy the seqlocked fields and retry while
 * @state.seq is odd or changed; read the counters with relaxed atomic loads.
 */
#ifndef CCOM_PUBLISH_PUBFILE_H
#define CCOM_PUBLISH_PUBFILE_H

#include <stdint.h>

#include <linux/nccom.h>

#define CCOM_PUB_MAGIC		0x42504343u	/* "CCPB" */
#define CCOM_PUB_VERSION	2
#define CCOM_PUB_FILE_SIZE	4096
#define CCOM_PUB_DEFAULT_DIR	"/dev/shm/ccom"
#define CCOM_PUB_HOST_LEN	64
#define CCOM_PUB_ERRMSG_LEN	NCCOM_COMM_MSG_LEN

/**
 * struct ccom_pub_file - the published state of one rank of one communicator
 * @magic: %CCOM_PUB_MAGIC, written last at creation
 * @version: %CCOM_PUB_VERSION; readers skip files of another version
 * @size: sizeof(struct ccom_pub_file) as the writer knows it
 * @registered: 1 if the rank registered @state with the nccom driver (then
 *	the driver's comm dump lists it too), 0 if not
 * @comm_hash: communicator hash (the same on every rank, printed as 16 hex)
 * @rank: rank of the writer
 * @nranks: number of ranks of the communicator
 * @pid: pid of the writer (in its own pid namespace)
 * @device: nccom device of the rank, -1 if none
 * @start_ns: CLOCK_REALTIME of the creation of the file, ns
 * @host: host name of the writer
 * @state: stage (&enum nccom_nl_stage), last error and its sentence, their
 *	CLOCK_REALTIME times, and the op counters
 */
struct ccom_pub_file {
	uint32_t magic;
	uint32_t version;
	uint32_t size;
	uint32_t registered;
	uint64_t comm_hash;
	int32_t rank;
	int32_t nranks;
	int32_t pid;
	int32_t device;
	uint64_t start_ns;
	char host[CCOM_PUB_HOST_LEN];
	_Alignas(64) struct nccom_comm_state state;
};

_Static_assert(sizeof(struct ccom_pub_file) <= CCOM_PUB_FILE_SIZE, "pub file too large");
_Static_assert(__builtin_offsetof(struct ccom_pub_file, state) % 64 == 0,
	       "the driver wants a 64-byte aligned state block");

#endif
