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
 * %CCOM_PUB_VERSION it was built for, @size is at least
 * %CCOM_PUB_V2_BASE_SIZE (version 2 as first released, up to @state) and
 * the file is at least %CCOM_PUB_FILE_SIZE bytes long; any other file is
 * skipped, never misread.  A field appended later is read only if @size
 * covers it (an older writer's file then simply lacks it).  Within one
 * version the format only grows: new fields are appended after @state (or
 * take the place of reserved bytes that were always written as 0), the
 * writer stores its own sizeof in @size, and no existing field changes
 * offset, width or meaning.  Data past the first %CCOM_PUB_FILE_SIZE bytes
 * is described by appended fields (the operation ring below); anything
 * else (moving, resizing or reinterpreting a field, or growing the
 * described part past %CCOM_PUB_FILE_SIZE) bumps %CCOM_PUB_VERSION, and
 * readers of the old version then skip the new files.  Every field has a fixed width and the layout below is pinned
 * by the static assertions at the end of this header.
 *
 * DOC: operation ring
 *
 * Appended in version 2 without a bump (after @state, in bytes that older
 * writers left 0): @ops describes the rank's flight recorder, which lives
 * in the same file, past the first %CCOM_PUB_FILE_SIZE bytes, so that the
 * tools can tell which operation each rank is in and print its recent
 * operations.  A file whose @ops.n is 0 has no ring (an older writer, or
 * CCOM_FLIGHT_RECORDER_ENTRIES=0).  The writer grows the file to
 * @ops.offset + @ops.n * @ops.entry_size, maps the ring, fills the name
 * tables and stores @ops.n last (release); a reader loads @ops.n with
 * acquire, checks that the file is that long and maps it.  Operation seq s
 * (1, 2, ... in the order the rank issued them, the same order on every
 * rank of a communicator) is entry s & (@ops.n - 1).  Each entry is a
 * seqlock of its own: the writer stores @seq 0, the fields, then @seq s
 * (release); a reader copies the entry and keeps it only if @seq read
 * (acquire) before and after the copy is the s it wanted.  The names of
 * collectives, data types and reduction operations are indexed by the
 * entry's @kind, @dtype and @op; algorithms and protocols by @algo and
 * @proto (0: not chosen yet), added while the rank runs (@ops.algo_count,
 * release-stored after the name).
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
#define CCOM_PUB_V2_BASE_SIZE	512	/* sizeof(struct ccom_pub_file) up to @state */
#define CCOM_PUB_NAME_LEN	24
#define CCOM_PUB_KINDS		16
#define CCOM_PUB_DTYPES		16
#define CCOM_PUB_REDOPS		8
#define CCOM_PUB_ALGOS		32
#define CCOM_PUB_COMM_NAME_LEN	64	/* ccom.h's CCOM_COMM_NAME_MAX */
#define CCOM_PUB_CMA_LEN	256

/**
 * enum ccom_pub_op_state - where an operation of the ring is
 * @CCOM_PUB_OP_ISSUED: the rank called it (queued, not started)
 * @CCOM_PUB_OP_STARTED: the progress thread runs it (waits on the peers)
 * @CCOM_PUB_OP_DONE: completed
 * @CCOM_PUB_OP_FAILED: ended with an error (@err)
 */
enum ccom_pub_op_state {
	CCOM_PUB_OP_ISSUED,
	CCOM_PUB_OP_STARTED,
	CCOM_PUB_OP_DONE,
	CCOM_PUB_OP_FAILED,
};

/**
 * struct ccom_pub_op - one operation of the ring (64 bytes, one cache line)
 * @seq: operation number on the communicator (1, 2, ...); 0 while the
 *	entry is rewritten or empty (offset 0)
 * @count: element count as the API took it (offset 8)
 * @t_enqueue_us: CLOCK_MONOTONIC_COARSE when issued, in us (offset 16)
 * @t_start_us: CLOCK_MONOTONIC when started, in us, 0 if not (offset 24)
 * @t_end_us: CLOCK_MONOTONIC_COARSE when ended, in us, 0 if not (offset 32)
 * @stream_seq: position in its stream, low 32 bits (offset 40)
 * @root: root, or peer of a Send/Recv (the first of a group), -1 (offset 44)
 * @nsubs: sends and receives of a p2p group, 0 otherwise (offset 48)
 * @err: negative errno of a failed operation, 0 otherwise (offset 52)
 * @kind: collective, index into @ops.kind_names (offset 56)
 * @dtype: data type, index into @ops.dtype_names (offset 57)
 * @op: reduction operation, index into @ops.redop_names; -1 if none (offset 58)
 * @algo: algorithm, index into @ops.algo_names, 0 if not chosen (offset 59)
 * @proto: protocol, index into @ops.algo_names, 0 if not chosen (offset 60)
 * @state: &enum ccom_pub_op_state (offset 61)
 * @__reserved: Reserved, written as 0 (offset 62)
 */
struct ccom_pub_op {
	uint64_t seq;
	uint64_t count;
	int64_t t_enqueue_us;
	int64_t t_start_us;
	int64_t t_end_us;
	uint32_t stream_seq;
	int32_t root;
	int32_t nsubs;
	int32_t err;
	uint8_t kind;
	uint8_t dtype;
	int8_t op;
	uint8_t algo;
	uint8_t proto;
	uint8_t state;
	uint8_t __reserved[2];
};

/**
 * struct ccom_pub_ops - where the operation ring of the file is, and the
 *	names its entries refer to
 * @offset: byte offset of the ring in the file (%CCOM_PUB_FILE_SIZE), 0 if none
 * @n: entries, a power of two; 0 if there is no ring (stored last)
 * @entry_size: sizeof(struct ccom_pub_op) as the writer knows it
 * @algo_count: entries of @algo_names in use (slot 0 is "-")
 * @kind_names: collective names ("AllReduce", ...), by &struct ccom_pub_op.kind
 * @dtype_names: data type names ("float", ...), by &struct ccom_pub_op.dtype
 * @redop_names: reduction names ("sum", ...), by &struct ccom_pub_op.op
 * @algo_names: algorithm and protocol names, by &struct ccom_pub_op.algo
 *	and .proto
 */
struct ccom_pub_ops {
	uint32_t offset;
	uint32_t n;
	uint32_t entry_size;
	uint32_t algo_count;
	char kind_names[CCOM_PUB_KINDS][CCOM_PUB_NAME_LEN];
	char dtype_names[CCOM_PUB_DTYPES][CCOM_PUB_NAME_LEN];
	char redop_names[CCOM_PUB_REDOPS][CCOM_PUB_NAME_LEN];
	char algo_names[CCOM_PUB_ALGOS][CCOM_PUB_NAME_LEN];
};

/**
 * struct ccom_pub_file - the published state of one rank of one communicator
 * @magic: %CCOM_PUB_MAGIC, written last at creation (offset 0)
 * @version: %CCOM_PUB_VERSION; readers skip files of another version
 *	(offset 4)
 * @size: sizeof(struct ccom_pub_file) as the writer knows it; readers skip
 *	files whose @size is below %CCOM_PUB_V2_BASE_SIZE, and read appended
 *	fields only where @size covers them (offset 8)
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
 * @ops: the operation ring (see "operation ring" above; offset 512)
 * @comm_name: the communicator's name (ccomConfig_t.commName),
 *	NUL-terminated, "" if it has none; appended in version 2 without a
 *	bump, read only where @size covers it (offset 2256)
 * @cma: the CMA path's state and why (libccom/coll/cma.c: "forced
 *	(CCOM_CMA=1)", "auto: ...", "off: <reason>"), NUL-terminated, ""
 *	until the rank's init decided it; written once, its first byte last
 *	(release), so a reader that loads a non-zero first byte (acquire)
 *	may copy the rest.  Appended in version 2 without a bump, read only
 *	where @size covers it (offset 2320)
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
	struct ccom_pub_ops ops;
	char comm_name[CCOM_PUB_COMM_NAME_LEN];
	char cma[CCOM_PUB_CMA_LEN];
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
_Static_assert(offsetof(struct ccom_pub_file, ops) == CCOM_PUB_V2_BASE_SIZE, "pubstate: ops moved");
_Static_assert(sizeof(struct ccom_pub_ops) == 16 + 72 * CCOM_PUB_NAME_LEN, "pubstate: ops resized");
_Static_assert(offsetof(struct ccom_pub_file, comm_name) == 2256, "pubstate: comm_name moved");
_Static_assert(offsetof(struct ccom_pub_file, cma) == 2320, "pubstate: cma moved");
/* 2320 + 256 = 2576 bytes, padded to the 64-byte alignment of @state. */
_Static_assert(sizeof(struct ccom_pub_file) == 2624, "pubstate: struct ccom_pub_file resized");
_Static_assert(sizeof(struct ccom_pub_op) == 64 && offsetof(struct ccom_pub_op, stream_seq) == 40 &&
	       offsetof(struct ccom_pub_op, kind) == 56 && offsetof(struct ccom_pub_op, state) == 61,
	       "pubstate: struct ccom_pub_op changed");
_Static_assert(sizeof(struct ccom_pub_file) <= CCOM_PUB_FILE_SIZE, "pub file too large");

#endif
