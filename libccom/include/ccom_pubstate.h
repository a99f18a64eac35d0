/* SPDX-License-Identifier: MIT */
/*
 * ccom_pubstate.h - the published-state file format: the contract between
 * libccom, which writes one state file per (communicator, rank), and the
 * tools that read them (ccomd, `ccomctl comm`, `ccomctl job`), with or
 * without the nccom driver.  It is to libccom and the tools what uapi/ is
 * to the kernel and userspace: the one place both sides include, so that
 * neither reaches into the other's private headers.  See
 * Documentation/ccomd.rst, "Library-published state".
 *
 * DOC: files
 *
 * One file per (communicator, rank) in $CCOM_PUBLISH_DIR (default
 * %CCOM_PUB_DEFAULT_DIR), named "<comm hash, 16 hex digits>.<rank>.<pid>",
 * mode 0644, %CCOM_PUB_FILE_SIZE bytes, mmap'd MAP_SHARED by the rank.  The
 * rank holds a shared flock() on it for its whole life: a reader that
 * obtains an exclusive flock (LOCK_EX | LOCK_NB) knows the writer is gone
 * and the file is stale.  Files with another name (temporary files of a
 * writer still filling them, strangers) are not state files.
 *
 * DOC: writers and readers
 *
 * The identity (hash, rank, nranks, pid, device, start time, host) is
 * written once before @magic, which is stored last.  Stage, error and op
 * counters are the driver's &struct nccom_comm_state (linux/nccom.h),
 * embedded at a 64-byte aligned offset: when /dev/nccom is there, the same
 * block is registered with the driver (NCCOM_IOC_COMM_REGISTER), so one
 * store per operation updates the file and what the driver's netlink
 * family reports.  Writers: stage and error under @state.seq (odd while a
 * write is in progress); the two op counters are single-writer counters
 * (the issuing thread, the executing thread) stored with relaxed atomics,
 * each on its own cache line.  Readers: copy the seqlocked fields and retry
 * while @state.seq is odd or changed; read the counters with relaxed atomic
 * loads.
 *
 * DOC: compatibility rules
 *
 * A reader uses a file only if @magic is %CCOM_PUB_MAGIC, @version is the
 * %CCOM_PUB_VERSION it was built for, @size is at least the
 * sizeof(struct ccom_pub_file) it knows, and the file is at least
 * %CCOM_PUB_FILE_SIZE bytes long; any other file is skipped, never
 * misread.  Within one version the format only grows: new fields are
 * appended after @state (or take the place of reserved bytes that were
 * always written as 0), the writer stores its own sizeof in @size, and no
 * existing field changes offset, width or meaning.  Anything else (moving,
 * resizing or reinterpreting a field, or growing past %CCOM_PUB_FILE_SIZE)
 * bumps %CCOM_PUB_VERSION, and readers of the old version then skip the
 * new files.  Every field has a fixed width and the layout below is pinned
 * by the static assertions at the end of this header.
 */
#ifndef CCOM_PUBSTATE_H
#define CCOM_PUBSTATE_H

#include <stddef.h>
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
 * @magic: %CCOM_PUB_MAGIC, written last at creation (offset 0)
 * @version: %CCOM_PUB_VERSION; readers skip files of another version
 *	(offset 4)
 * @size: sizeof(struct ccom_pub_file) as the writer knows it; readers skip
 *	files whose @size is below the size they know (offset 8)
 * @registered: 1 if the rank registered @state with the nccom driver (then
 *	the driver's comm dump lists it too), 0 if not (offset 12)
 * @comm_hash: communicator hash, the same on every rank, printed as 16 hex
 *	digits (offset 16)
 * @rank: rank of the writer, 0 to @nranks - 1 (offset 24)
 * @nranks: number of ranks of the communicator (offset 28)
 * @pid: pid of the writer, in its own pid namespace (offset 32)
 * @device: nccom device index of the rank, -1 if none (offset 36)
 * @start_ns: CLOCK_REALTIME of the creation of the file in ns (offset 40)
 * @host: host name of the writer, NUL-terminated, at most
 *	%CCOM_PUB_HOST_LEN - 1 characters (offset 48)
 * @__reserved0: Reserved, written as 0 (offset 112): pads @state to its
 *	64-byte alignment
 * @state: stage (&enum nccom_nl_stage), last error and its sentence, their
 *	CLOCK_REALTIME times and the op counters, laid out as the driver's
 *	&struct nccom_comm_state (offset 128, 384 bytes in version 2)
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
	uint8_t __reserved0[16];
	_Alignas(64) struct nccom_comm_state state;
};

/*
 * The version 2 layout, byte for byte.  An assertion that fails means the
 * format changed: follow the compatibility rules above (append, or bump
 * %CCOM_PUB_VERSION) and then update the assertion.
 */
_Static_assert(offsetof(struct ccom_pub_file, magic) == 0, "pubstate: magic moved");
_Static_assert(offsetof(struct ccom_pub_file, version) == 4, "pubstate: version moved");
_Static_assert(offsetof(struct ccom_pub_file, size) == 8, "pubstate: size moved");
_Static_assert(offsetof(struct ccom_pub_file, registered) == 12, "pubstate: registered moved");
_Static_assert(offsetof(struct ccom_pub_file, comm_hash) == 16, "pubstate: comm_hash moved");
_Static_assert(offsetof(struct ccom_pub_file, rank) == 24, "pubstate: rank moved");
_Static_assert(offsetof(struct ccom_pub_file, nranks) == 28, "pubstate: nranks moved");
_Static_assert(offsetof(struct ccom_pub_file, pid) == 32, "pubstate: pid moved");
_Static_assert(offsetof(struct ccom_pub_file, device) == 36, "pubstate: device moved");
_Static_assert(offsetof(struct ccom_pub_file, start_ns) == 40, "pubstate: start_ns moved");
_Static_assert(offsetof(struct ccom_pub_file, host) == 48, "pubstate: host moved");
_Static_assert(offsetof(struct ccom_pub_file, state) == 128,
	       "pubstate: the driver's state block must stay at offset 128 (64-byte aligned)");
_Static_assert(sizeof(struct nccom_comm_state) == 384, "pubstate: nccom_comm_state resized");
_Static_assert(offsetof(struct nccom_comm_state, seq) == 0 &&
	       offsetof(struct nccom_comm_state, stage_time_ns) == 16 &&
	       offsetof(struct nccom_comm_state, error_msg) == 32 &&
	       offsetof(struct nccom_comm_state, ops_issued) == 256 &&
	       offsetof(struct nccom_comm_state, ops_completed) == 320,
	       "pubstate: nccom_comm_state fields moved");
_Static_assert(sizeof(struct ccom_pub_file) == 512, "pubstate: struct ccom_pub_file resized");
_Static_assert(sizeof(struct ccom_pub_file) <= CCOM_PUB_FILE_SIZE, "pub file too large");

#endif
