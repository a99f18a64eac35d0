/* SPDX-License-Identifier: MIT */
/*
 * ccom.h - the public API of libccom, the only header users include.
 *
 * NCCL-shaped: an NCCL user ports by changing the prefix.  Ranks are
 * processes (or threads with ccomCommInitAll); data lives in host memory.
 * Every call returns a ccomResult_t; ccomGetLastError() returns the human
 * sentence of the calling thread's last failure.
 *
 * Thread safety: unless a comment says otherwise, a communicator is not
 * thread-safe: use it from one thread at a time (ccomCommAbort() and
 * ccomCommGetAsyncError() may be called from any thread at any time).
 */
#ifndef CCOM_H
#define CCOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CCOM_MAJOR 0
#define CCOM_MINOR 1
#define CCOM_PATCH 0
/* Version code as NCCL computes it: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define CCOM_VERSION_CODE (CCOM_MAJOR * 10000 + CCOM_MINOR * 100 + CCOM_PATCH)
/*
 * ABI compat id: bumped on any incompatible change of the library ABI or of
 * the bootstrap wire protocol.  Runtimes that dlopen libccom compare it.
 */
#define CCOM_ABI_COMPAT_ID 1

#define CCOM_UNIQUE_ID_BYTES 128

/**
 * typedef ccomUniqueId - opaque identifier of a bootstrap rendezvous.
 *
 * Holds the root's listen address and a random 64-bit magic; it does not
 * identify a communicator.  Copy it to every rank out of band.
 */
typedef struct {
	char internal[CCOM_UNIQUE_ID_BYTES];
} ccomUniqueId;

/**
 * enum ccomResult_t - result codes of every API call.
 * @ccomSuccess: the call succeeded.
 * @ccomUnhandledDeviceError: the nccom device (driver) failed or is unusable.
 * @ccomSystemError: a system call failed (socket, mmap, memfd, ...).
 * @ccomInternalError: a bug or unexpected state inside libccom.
 * @ccomInvalidArgument: an argument is out of range or NULL.
 * @ccomInvalidUsage: the call is not allowed in this state or combination
 *	(duplicate device, version skew, nranks mismatch, duplicate rank).
 * @ccomRemoteError: a peer failed, died or was aborted; the message names it.
 * @ccomInProgress: a nonblocking operation has not completed yet.
 * @ccomTimeout: a bounded wait expired; the message names what was awaited.
 * @ccomNumResults: number of codes.
 */
typedef enum {
	ccomSuccess = 0,
	ccomUnhandledDeviceError = 1,
	ccomSystemError = 2,
	ccomInternalError = 3,
	ccomInvalidArgument = 4,
	ccomInvalidUsage = 5,
	ccomRemoteError = 6,
	ccomInProgress = 7,
	ccomTimeout = 8,
	ccomNumResults = 9
} ccomResult_t;

/**
 * enum ccomDataType_t - element types of collectives.
 */
typedef enum {
	ccomInt8 = 0,
	ccomChar = 0,
	ccomUint8 = 1,
	ccomInt32 = 2,
	ccomInt = 2,
	ccomUint32 = 3,
	ccomInt64 = 4,
	ccomUint64 = 5,
	ccomFloat16 = 6,
	ccomHalf = 6,
	ccomFloat32 = 7,
	ccomFloat = 7,
	ccomFloat64 = 8,
	ccomDouble = 8,
	ccomBfloat16 = 9,
	ccomNumTypes = 10
} ccomDataType_t;

/**
 * enum ccomRedOp_t - reduction operations.  ccomAvg is a sum divided by the
 * number of ranks (integer types: truncating division).
 */
typedef enum {
	ccomSum = 0,
	ccomProd = 1,
	ccomMax = 2,
	ccomMin = 3,
	ccomAvg = 4,
	ccomNumOps = 5,
	/* ccomRedOpCreatePreMulSum() hands out values above ccomNumOps, up to this. */
	ccomMaxRedOp = 0x7fffffff
} ccomRedOp_t;

/** typedef ccomComm_t - opaque communicator handle. */
typedef struct ccomComm *ccomComm_t;

/**
 * typedef ccomStream_t - opaque in-order execution queue of a communicator.
 * NULL means the communicator's default stream.
 */
typedef struct ccomStream *ccomStream_t;

#define CCOM_CONFIG_MAGIC 0xcc0fc0f1u
#define CCOM_CONFIG_UNDEF_INT INT32_MIN

/**
 * struct ccomConfig_t - options of ccomCommInitRankConfig().
 * @size: sizeof(ccomConfig_t) as the caller was compiled.
 * @magic: %CCOM_CONFIG_MAGIC.
 * @version: %CCOM_VERSION_CODE the caller was compiled with.
 * @blocking: 1 (default) waits for init to finish; 0 returns
 *	ccomInProgress at once and the caller polls ccomCommGetAsyncError().
 * @device: nccom device index to bind to, or %CCOM_CONFIG_UNDEF_INT for the
 *	default (local rank modulo the device count; CCOM_DEVICE overrides).
 * @timeoutSec: bootstrap timeout in seconds, or %CCOM_CONFIG_UNDEF_INT for
 *	CCOM_BOOTSTRAP_TIMEOUT / the default.
 * @reserved: must be zero.
 * @commName: (CCOM_1.3) a name for the communicator, or NULL: printed in
 *	the "Init BEGIN" and "Init COMPLETE" INFO lines, by `ccomctl comm
 *	show`, in the flight recorder's dump and in ccomd's JSON and metric
 *	labels.  At most %CCOM_COMM_NAME_MAX - 1 bytes, no control characters;
 *	copied at init, so the string may be freed once the call returned.
 * @netName: (CCOM_1.3) the network transport between hosts for this
 *	communicator, by name: "ib" (RDMA verbs) or "socket" (TCP), in any
 *	case ("IB" and "Socket" as NCCL spells them work), or NULL for
 *	CCOM_NET (or the automatic choice).  Every rank must pass the same.
 *	Like CCOM_NET it chooses the network only: ranks of one host still
 *	use shared memory unless CCOM_TRANSPORT=net.
 * @trafficClass: (CCOM_1.3) 0-255, or %CCOM_CONFIG_UNDEF_INT: the IP
 *	TOS / IPv6 traffic class byte of the TCP data sockets (unset:
 *	CCOM_SOCKET_TOS, else the system default) and the GRH traffic class
 *	of the RDMA queue pairs (unset: CCOM_IB_TC, else 0).  The service
 *	level of the queue pairs is CCOM_IB_SL.
 * @reserved2: must be zero.
 *
 * Initialise with CCOM_CONFIG_INITIALIZER.
 *
 * The library reads @size bytes: a caller built against an older ccom.h,
 * whose struct ends before a field, gets that field's default (before
 * CCOM_1.3 the struct was %CCOM_CONFIG_SIZE_V1 bytes, up to @reserved).
 * A @size larger than the library's struct is accepted when the extra
 * bytes are zero and refused with ccomInvalidArgument when not (fields
 * this library does not know).
 *
 * ccomCommSplit() and ccomCommShrink() with a NULL config give the child
 * the parent's settings, @commName, @netName and @trafficClass included;
 * a config passed to them is taken as it is, unset fields at their
 * defaults.
 */
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
	int device;
	int timeoutSec;
	int reserved[9];
	/* CCOM_1.3 */
	const char *commName;
	const char *netName;
	int trafficClass;
	int reserved2;
} ccomConfig_t;

/* sizeof(ccomConfig_t) before CCOM_1.3 added commName: the fields up to @reserved. */
#define CCOM_CONFIG_SIZE_V1 64
/* Bytes of ccomConfig_t.commName, its terminating NUL included, at most. */
#define CCOM_COMM_NAME_MAX 64

#define CCOM_CONFIG_INITIALIZER {					\
	sizeof(ccomConfig_t), CCOM_CONFIG_MAGIC, CCOM_VERSION_CODE,	\
	1, CCOM_CONFIG_UNDEF_INT, CCOM_CONFIG_UNDEF_INT, { 0 },		\
	NULL, NULL, CCOM_CONFIG_UNDEF_INT, 0 }

/* ---------------------------------------------------------------- */
/* Version, errors                                                   */

/**
 * ccomGetVersion() - get the library version code.
 * @version: set to MAJOR * 10000 + MINOR * 100 + PATCH.
 *
 * Thread-safe.  Return: ccomSuccess, or ccomInvalidArgument if NULL.
 */
ccomResult_t ccomGetVersion(int *version);

/**
 * struct ccomVersionInfo - what a runtime checks after dlopen("libccom.so.1").
 * @size: set by the caller to sizeof(struct ccomVersionInfo).
 * @major: library major version.
 * @minor: library minor version.
 * @patch: library patch version.
 * @abiCompatId: %CCOM_ABI_COMPAT_ID the library was built with.
 * @buildHash: 64-bit hash of the library build (sources and flags).
 * @versionString: NUL-terminated, e.g. "0.1.0".
 */
struct ccomVersionInfo {
	uint32_t size;
	uint32_t major;
	uint32_t minor;
	uint32_t patch;
	uint32_t abiCompatId;
	uint32_t reserved;
	uint64_t buildHash;
	char versionString[32];
};

/**
 * ccomGetVersionInfo() - the version handshake for runtimes that dlopen.
 * @info: filled in; info->size must be set by the caller (smaller sizes
 *	get a truncated copy, for compatibility with older callers).
 *
 * Thread-safe.  Return: ccomSuccess or ccomInvalidArgument.
 */
ccomResult_t ccomGetVersionInfo(struct ccomVersionInfo *info);

/**
 * ccomGetErrorString() - the name and meaning of a result code.
 * @result: a ccomResult_t.
 *
 * Thread-safe.  Return: a static string, never NULL.
 */
const char *ccomGetErrorString(ccomResult_t result);

/**
 * ccomGetLastError() - the sentence describing the calling thread's last error.
 * @comm: unused, for NCCL compatibility; may be NULL.
 *
 * Return: a thread-local string valid until the thread's next ccom call;
 * empty if no error happened.
 */
const char *ccomGetLastError(ccomComm_t comm);

/* ---------------------------------------------------------------- */
/* Communicator lifecycle                                            */

/**
 * ccomGetUniqueId() - create a rendezvous id and start its root thread.
 * @uniqueId: filled with 128 opaque bytes to send to every rank.
 *
 * Call once, in one process (usually rank 0's).  With CCOM_COMM_ID set the
 * address comes from the environment, no root is started here and rank 0
 * hosts the root inside ccomCommInitRank().  An id serves one communicator.
 * Do not fork() rank processes after this call (a child forked while the
 * root thread holds a lock may deadlock): fork first, then create the id.
 * Thread-safe.
 *
 * Return: ccomSuccess, ccomInvalidArgument (NULL or a malformed
 * CCOM_COMM_ID), ccomSystemError (no usable interface, socket failure).
 */
ccomResult_t ccomGetUniqueId(ccomUniqueId *uniqueId);

/**
 * ccomCommInitRank() - create this rank's communicator (blocking).
 * @comm: receives the handle; the caller owns it and frees it with
 *	ccomCommDestroy() (also after a failure that returned a handle).
 *	It is written before any wait, so that another thread may
 *	ccomCommAbort() a blocked init; invalid arguments leave it NULL.
 * @nranks: number of ranks, >= 1.
 * @commId: the id from ccomGetUniqueId(), identical on every rank.
 * @rank: this rank, 0 <= rank < nranks.
 *
 * Collective over all @nranks ranks.  Every wait is bounded by
 * CCOM_BOOTSTRAP_TIMEOUT (default 300 s).  Return: ccomSuccess or the code
 * of the stage that failed (ccomInvalidUsage for nranks mismatch,
 * duplicate rank, version skew or duplicate device; ccomTimeout naming the
 * ranks that never checked in; ccomRemoteError when a peer died or the
 * comm was aborted); ccomGetLastError() names the cause.
 */
ccomResult_t ccomCommInitRank(ccomComm_t *comm, int nranks, ccomUniqueId commId, int rank);

/**
 * ccomCommInitRankConfig() - ccomCommInitRank() with options.
 * @comm: as ccomCommInitRank().
 * @nranks: as ccomCommInitRank().
 * @commId: as ccomCommInitRank().
 * @rank: as ccomCommInitRank().
 * @config: options, or NULL for defaults.  With blocking = 0 the call
 *	returns ccomInProgress and a valid *@comm at once; poll
 *	ccomCommGetAsyncError() until it is no longer ccomInProgress.
 */
ccomResult_t ccomCommInitRankConfig(ccomComm_t *comm, int nranks, ccomUniqueId commId,
				    int rank, ccomConfig_t *config);

/**
 * ccomCommInitRankScalable() - ccomCommInitRankConfig() with several
 * rendezvous roots, so that no one root takes every rank's check-in.
 * @comm: as ccomCommInitRank().
 * @nranks: as ccomCommInitRank().
 * @rank: as ccomCommInitRank().
 * @nIds: number of ids, 1 <= nIds <= nranks, identical on every rank.
 * @commIds: @nIds ids, each from its own ccomGetUniqueId() (not from
 *	CCOM_COMM_ID), in the same order on every rank.
 * @config: as ccomCommInitRankConfig().
 *
 * Rank r checks in with the root of commIds[r * nIds / nranks]; the roots
 * combine their tables through the root of commIds[0], then every rank
 * connects as with one root.  A missing rank is named on every present
 * rank, behind whichever root; a different nIds or id order is
 * ccomInvalidUsage naming both sides.  nIds = 1 is ccomCommInitRankConfig().
 */
ccomResult_t ccomCommInitRankScalable(ccomComm_t *comm, int nranks, int rank, int nIds,
				      ccomUniqueId *commIds, ccomConfig_t *config);

/**
 * ccomCommInitAll() - create @ndev communicators in this process, one per device.
 * @comms: array of @ndev handles to fill; rank i is devlist[i].
 * @ndev: number of ranks, >= 1.
 * @devlist: device index of each rank, or NULL for 0..ndev-1.  Checked
 *	before anything is created: an out-of-range device is
 *	ccomInvalidArgument, a duplicate device is ccomInvalidUsage.  Without
 *	the nccom driver the entries are recorded as device indices only.
 *
 * Runs every rank's init on its own thread and returns when all are ready.
 * Collectives on these comms must then be issued inside
 * ccomGroupStart()/ccomGroupEnd() when one thread drives several ranks.
 */
ccomResult_t ccomCommInitAll(ccomComm_t *comms, int ndev, const int *devlist);

/**
 * ccomCommInitFromEnv() - ccomCommInitRankConfig() with rank, size and
 *	rendezvous address taken from the launcher's environment.
 * @comm: as ccomCommInitRank().
 * @config: options, or NULL for defaults.
 *
 * Rank and size: the first complete pair of CCOM_RANK/CCOM_NRANKS,
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI), PMI_RANK/PMI_SIZE,
 * SLURM_PROCID/SLURM_NTASKS (Slurm), RANK/WORLD_SIZE (torchrun).
 * Rendezvous: CCOM_COMM_ID, else MASTER_ADDR:MASTER_PORT; rank 0 hosts the
 * root there, so the address must be one of rank 0's host.  Collective.
 *
 * Return: as ccomCommInitRankConfig(); ccomInvalidArgument when no
 * launcher variables or no address are set, or they are malformed.
 */
ccomResult_t ccomCommInitFromEnv(ccomComm_t *comm, ccomConfig_t *config);

/**
 * ccomCommSplit() - create child communicators by color and key.
 * @comm: parent communicator.
 * @color: ranks with the same color form a child; CCOM_SPLIT_NOCOLOR opts out.
 * @key: orders ranks within a child (ties broken by parent rank).
 * @newcomm: receives the child, or NULL with CCOM_SPLIT_NOCOLOR.
 * @config: options for the child, or NULL to inherit the parent's.
 *
 * Collective over every rank of @comm.
 */
ccomResult_t ccomCommSplit(ccomComm_t comm, int color, int key, ccomComm_t *newcomm,
			   ccomConfig_t *config);
#define CCOM_SPLIT_NOCOLOR -1

/**
 * ccomCommFinalize() - flush every operation issued on @comm.
 * @comm: communicator.
 *
 * Collective.  Blocking config: returns when all operations completed.
 * Nonblocking: returns ccomInProgress at once and completes in the
 * background; poll ccomCommGetAsyncError() until it is no longer
 * ccomInProgress (ccomSuccess, or the error of an operation that failed).
 * While it runs, collectives and a second finalize return
 * ccomInvalidUsage; ccomCommDestroy() aborts it.
 */
ccomResult_t ccomCommFinalize(ccomComm_t comm);

#define CCOM_REVOKE_DEFAULT 0

/**
 * ccomCommRevoke() - fail every pending and future operation on @comm.
 * @comm: communicator.
 * @flags: %CCOM_REVOKE_DEFAULT (0); other values are reserved.
 *
 * Not collective; callable from any thread, also while another thread
 * waits in ccomCommSynchronize() or ccomStreamSynchronize() on @comm.  The
 * running operation and every queued one complete with ccomRemoteError
 * ("the communicator was revoked") within milliseconds, the waiting
 * threads return, and every later collective fails the same way at once;
 * ccomCommGetAsyncError() reports ccomRemoteError.  The local peers'
 * operations fail too (they see this rank as aborted).  Resources stay
 * allocated until ccomCommDestroy() (ccomCommFinalize() is refused).  A
 * revoke during a nonblocking init aborts the init.  Revoking twice is
 * harmless.  Return: ccomSuccess, or ccomInvalidArgument for an invalid
 * @comm or @flags.
 */
ccomResult_t ccomCommRevoke(ccomComm_t comm, int flags);

#define CCOM_SHRINK_DEFAULT 0x00
#define CCOM_SHRINK_ABORT 0x01

/**
 * ccomCommShrink() - make a communicator of the surviving ranks of @comm.
 * @comm: the communicator to shrink (left as it is, or revoked with
 *	%CCOM_SHRINK_ABORT; destroy it after @newcomm is ready).
 * @excludeRanks: the ranks of @comm to leave out (dead, aborted or not
 *	wanted), in any order, each once; NULL when @nExclude is 0.
 * @nExclude: number of entries of @excludeRanks, 0 to nranks - 1.
 * @newcomm: receives the new communicator.
 * @config: settings of @newcomm (NULL: those of @comm), as for
 *	ccomCommInitRankConfig(); @config->blocking = 0 makes the call
 *	nonblocking.
 * @flags: %CCOM_SHRINK_DEFAULT: @comm must be idle (no operation queued
 *	or running); %CCOM_SHRINK_ABORT: revoke @comm first
 *	(ccomCommRevoke()), failing its in-flight work - the case after a
 *	failure.
 *
 * Collective over the ranks of @comm that are not excluded: each calls it
 * with the same @excludeRanks (an excluded rank does not call it; it may be
 * dead).  No unique id is needed: the survivors agree over @comm's
 * bootstrap connections (they compare their @excludeRanks there and fail
 * with ccomInvalidUsage naming the difference if they disagree), the
 * lowest survivor starts a fresh root with a new magic (connections of
 * @comm cannot join it), and the new communicator is built among the
 * survivors only: no socket, shared-memory segment or driver grant of an
 * excluded rank is waited on.  Ranks keep their order: new rank = number
 * of survivors below the old rank.  Works on every transport and on a
 * communicator made by ccomCommSplit() or ccomCommShrink().  One shrink of
 * a given @comm at a time; @comm must outlive the call (nonblocking: until
 * ccomCommGetAsyncError(@newcomm) is no longer ccomInProgress).
 *
 * Return: ccomSuccess (ccomInProgress when nonblocking: poll
 * ccomCommGetAsyncError(*@newcomm)); ccomInvalidArgument for a bad
 * argument (invalid @comm, NULL @newcomm, undefined @flags, @nExclude out
 * of range, an excluded rank out of range, listed twice or the caller
 * itself, a bad @config); ccomInvalidUsage if @comm is still initialising
 * or finalizing, or busy without %CCOM_SHRINK_ABORT, or the survivors'
 * lists differ; ccomRemoteError/ccomSystemError/ccomTimeout as init (a
 * survivor that does not call it, or is dead but not excluded).
 */
ccomResult_t ccomCommShrink(ccomComm_t comm, const int *excludeRanks, int nExclude,
			    ccomComm_t *newcomm, ccomConfig_t *config, int flags);

/**
 * ccomCommGetFailedRanks() - the ranks of @comm this rank knows to be gone.
 * @comm: communicator (also a broken or revoked one).
 * @ranks: receives the ranks, ascending; may be NULL when *@n is 0.
 * @n: in: room in @ranks (entries); out: how many ranks failed (may be
 *	more than the room: only the first ones are written).
 *
 * Not collective, never waits.  A rank is listed once a transport of this
 * rank found it to be the root cause of a failed operation (it died,
 * aborted or revoked: the one a ccomRemoteError names), and, for ranks on
 * this host, when its process is gone now.  The messenger of a failure
 * (a peer that only passed on another rank's death) is not listed.  After
 * a ccomRemoteError, every survivor's failed operation names the same root
 * cause, so survivors that call this after their operation failed get the
 * same list to pass to ccomCommShrink(), which checks that they agree (see
 * Documentation/libccom/fault-tolerance.rst for the recipe and its
 * limits).  Return: ccomSuccess, or ccomInvalidArgument for an invalid
 * @comm, a NULL @n, a negative *@n or a NULL @ranks with *@n > 0.
 */
ccomResult_t ccomCommGetFailedRanks(ccomComm_t comm, int *ranks, int *n);

/**
 * ccomCommGetUniqueId() - the id that new processes join a ccomCommGrow() of @comm with.
 * @comm: the communicator that will grow (ready, idle).
 * @uniqueId: receives the grow id, to hand to the joining processes out of
 *	band (and to pass to this rank's own ccomCommGrow()).
 *
 * Not collective: one existing rank (the coordinator, usually rank 0)
 * calls it before each grow.  It starts a bootstrap root in this process;
 * the id serves exactly one ccomCommGrow() (used, it is refused with
 * ccomInvalidUsage, never waited on) and cannot start a communicator with
 * ccomCommInitRank().  One id at a time: a second call before a grow used
 * the first fails.  An id never used is retired when @comm is destroyed.
 *
 * Return: ccomSuccess; ccomInvalidArgument for an invalid @comm or a NULL
 * @uniqueId; ccomInvalidUsage if @comm is initialising, finalizing, broken
 * or busy, or an earlier id of it is still unused; ccomSystemError if the
 * root cannot start.
 */
ccomResult_t ccomCommGetUniqueId(ccomComm_t comm, ccomUniqueId *uniqueId);

/**
 * ccomCommGrow() - make a larger communicator of @comm's ranks and new processes.
 * @comm: on an existing rank, the communicator to grow (left as it is:
 *	destroy it once @newcomm is ready); NULL on a joining process.
 * @nRanks: the new total, larger than @comm's size; the same on every rank.
 * @uniqueId: the id from ccomCommGetUniqueId(): passed by the coordinator
 *	(the existing rank that called it) and by every joining process;
 *	NULL on the other existing ranks.
 * @rank: -1 on an existing rank (it keeps its rank); on a joining process
 *	its rank in @newcomm, from @comm's size to @nRanks - 1, each once.
 * @newcomm: receives the new communicator.
 * @config: settings of @newcomm (NULL: @comm's on an existing rank, the
 *	defaults on a joining one), as for ccomCommInitRankConfig();
 *	@config->blocking = 0 makes the call nonblocking.
 *
 * Collective over every rank of @comm and the @nRanks - size(@comm)
 * joining processes.  The existing ranks first agree over @comm's
 * bootstrap (same @nRanks, exactly one id, the valid unused id of the
 * coordinator's ccomCommGetUniqueId, the same count of grows; otherwise
 * all of them fail with the same sentence), then all ranks rendezvous at
 * the id's root and build @newcomm like an init.  After a failure, the
 * recipe is: ccomCommShrink() the survivors, ccomCommGetUniqueId(), start
 * replacements, ccomCommGrow() back to the job's size
 * (Documentation/libccom/fault-tolerance.rst).  @comm must outlive the
 * call (nonblocking: until ccomCommGetAsyncError(@newcomm) is no longer
 * ccomInProgress); every wait is bounded by the bootstrap timeout and
 * ends at ccomCommAbort(@newcomm).
 *
 * Return: ccomSuccess (ccomInProgress when nonblocking); ccomInvalidArgument
 * for a bad argument (NULL @newcomm, an invalid @comm, @rank not -1 on an
 * existing rank, @nRanks not larger than the old size, a joining rank
 * without a grow id or out of range, a foreign id, a bad @config);
 * ccomInvalidUsage if @comm is not ready or idle, the existing ranks'
 * arguments differ, or the id was used already; ccomRemoteError,
 * ccomTimeout, ccomSystemError as for init (a rank that never joins, a
 * mismatch seen by the root).
 */
ccomResult_t ccomCommGrow(ccomComm_t comm, int nRanks, const ccomUniqueId *uniqueId, int rank,
			  ccomComm_t *newcomm, ccomConfig_t *config);

/**
 * ccomCommDestroy() - free @comm's local resources.
 * @comm: communicator; invalid after the call.  NULL is accepted.
 *
 * Not collective; call ccomCommFinalize() first for a clean shutdown.
 */
ccomResult_t ccomCommDestroy(ccomComm_t comm);

/**
 * ccomCommAbort() - stop everything on @comm and free it.
 * @comm: communicator; invalid after the call.
 *
 * Safe to call from another thread while an init or collective on @comm is
 * blocked: that call returns promptly with an error.  Peers see the abort as
 * a ccomRemoteError naming this rank.
 */
ccomResult_t ccomCommAbort(ccomComm_t comm);

/**
 * ccomCommGetAsyncError() - the state of a nonblocking init or of past errors.
 * @comm: communicator.
 * @asyncError: ccomSuccess, ccomInProgress, or the error that happened.
 *
 * Thread-safe.
 */
ccomResult_t ccomCommGetAsyncError(ccomComm_t comm, ccomResult_t *asyncError);

/** ccomCommCount() - number of ranks of @comm into *@count. */
ccomResult_t ccomCommCount(const ccomComm_t comm, int *count);

/** ccomCommUserRank() - this rank of @comm into *@rank. */
ccomResult_t ccomCommUserRank(const ccomComm_t comm, int *rank);

/**
 * ccomCommDevice() - the nccom device index this rank is bound to.
 * @comm: communicator.
 * @device: device index, or -1 when the comm does not use /dev/nccom.
 */
ccomResult_t ccomCommDevice(const ccomComm_t comm, int *device);

/* ---------------------------------------------------------------- */
/* Groups                                                            */

/**
 * ccomGroupStart() - start batching calls of this thread.
 *
 * Calls until the matching ccomGroupEnd() are recorded, not executed.
 * Groups nest.  Per thread.
 */
ccomResult_t ccomGroupStart(void);

/**
 * ccomGroupEnd() - submit every call recorded since ccomGroupStart().
 *
 * Guarantees enqueue, not completion: synchronize the streams for that.
 */
ccomResult_t ccomGroupEnd(void);

/* ---------------------------------------------------------------- */
/* Streams and memory                                                */

/**
 * ccomStreamCreate() - create an in-order execution queue on @comm.
 * @comm: communicator.
 * @stream: receives the stream; destroy it with ccomStreamDestroy()
 *	before destroying @comm.
 */
ccomResult_t ccomStreamCreate(ccomComm_t comm, ccomStream_t *stream);

/** ccomStreamDestroy() - wait for @stream's work and free it. */
ccomResult_t ccomStreamDestroy(ccomStream_t stream);

/**
 * ccomStreamSynchronize() - wait until every operation on @stream completed.
 * @stream: a stream; NULL is not accepted (use ccomCommSynchronize()).
 *
 * Bounded by CCOM_OP_TIMEOUT and honours abort.  Return: the first error of
 * an operation on the stream, or ccomSuccess.
 */
ccomResult_t ccomStreamSynchronize(ccomStream_t stream);

/**
 * ccomStreamQuery() - ccomSuccess if @stream is idle, ccomInProgress if it
 * still has work, or the error of a failed operation.
 */
ccomResult_t ccomStreamQuery(ccomStream_t stream);

/** ccomCommSynchronize() - ccomStreamSynchronize() on @comm's default stream. */
ccomResult_t ccomCommSynchronize(ccomComm_t comm);

/**
 * ccomMemAlloc() - allocate memory that local peers of @comm can read.
 * @comm: communicator.
 * @ptr: receives the buffer (page-aligned).
 * @size: bytes.
 *
 * Buffers from here let collectives use single-copy direct algorithms
 * between ranks of one host.  Free with ccomMemFree() before destroying @comm.
 */
ccomResult_t ccomMemAlloc(ccomComm_t comm, void **ptr, size_t size);

/** ccomMemFree() - free a buffer from ccomMemAlloc(). */
ccomResult_t ccomMemFree(ccomComm_t comm, void *ptr);

/* ---------------------------------------------------------------- */
/* Collectives: enqueue on @stream (NULL = default) and return.      */

/** ccomAllReduce() - recvbuff[i] = op over ranks of sendbuff[i], on every rank. */
ccomResult_t ccomAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ccomDataType_t datatype, ccomRedOp_t op, ccomComm_t comm,
			   ccomStream_t stream);

/** ccomBroadcast() - copy @root's sendbuff to every rank's recvbuff. */
ccomResult_t ccomBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			   ccomDataType_t datatype, int root, ccomComm_t comm,
			   ccomStream_t stream);

/** ccomReduce() - reduce into @root's recvbuff (recvbuff ignored elsewhere). */
ccomResult_t ccomReduce(const void *sendbuff, void *recvbuff, size_t count,
			ccomDataType_t datatype, ccomRedOp_t op, int root,
			ccomComm_t comm, ccomStream_t stream);

/** ccomAllGather() - recvbuff[r * sendcount ...] = rank r's sendbuff. */
ccomResult_t ccomAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			   ccomDataType_t datatype, ccomComm_t comm, ccomStream_t stream);

/** ccomReduceScatter() - rank r gets block r (recvcount elements) of the reduction. */
ccomResult_t ccomReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
			       ccomDataType_t datatype, ccomRedOp_t op, ccomComm_t comm,
			       ccomStream_t stream);

/** ccomAlltoAll() - block p of rank r's sendbuff goes to block r of rank p's recvbuff. */
ccomResult_t ccomAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
			  ccomDataType_t datatype, ccomComm_t comm, ccomStream_t stream);

/**
 * ccomSend() - send @count elements to @peer.  Matches the peer's ccomRecv()
 * in issue order.  Sends and receives that depend on each other must be in
 * one ccomGroupStart()/ccomGroupEnd() (as in NCCL) or they may deadlock.
 */
ccomResult_t ccomSend(const void *sendbuff, size_t count, ccomDataType_t datatype,
		      int peer, ccomComm_t comm, ccomStream_t stream);

/** ccomRecv() - receive @count elements from @peer; see ccomSend(). */
ccomResult_t ccomRecv(void *recvbuff, size_t count, ccomDataType_t datatype,
		      int peer, ccomComm_t comm, ccomStream_t stream);

/**
 * ccomRecvAny() - receive @count elements from whichever peer sends first
 * (MPI_ANY_SOURCE).
 * @recvbuff: room for @count elements.
 * @count: elements; the matched send must have the same count and type.
 * @datatype: element type.
 * @peer: set to -1 at once, and to the rank whose send matched when the
 *	receive ran: read it after the stream synchronized; it must stay
 *	valid until then.
 * @comm: communicator of at least 2 ranks.
 * @stream: stream (NULL: the default one).
 *
 * Matching: when the receive runs (in its stream's issue order, like every
 * operation), it takes the next ccomSend() to this rank of the first peer,
 * in round-robin order starting after the peer that matched the previous
 * ccomRecvAny() on @comm, whose send has arrived; so no sending peer
 * starves, and between peers whose sends are all there the order is that
 * rotation, not the arrival time.  Per peer, sends match in the order the
 * peer issued them (no overtaking), whether by ccomRecv() or by
 * ccomRecvAny(): a later ccomRecv() from the matched peer gets its
 * following send.  A peer whose next message to this rank belongs to a
 * collective cannot match (its bytes are left for that collective); when
 * every peer is in that state the receive fails with ccomInvalidUsage, as
 * it could never match.  A send to self never matches.  Several
 * ccomRecvAny() calls in one ccomGroupStart()/ccomGroupEnd() on one
 * stream receive a message in parts: the first picks the peer, the others
 * take that peer's next sends (all report it); a group may not mix them
 * with ccomSend()/ccomRecv() on the same stream.  The wait honours
 * ccomCommAbort() and CCOM_OP_TIMEOUT and fails when a peer dies.  It
 * reads the first bytes of every peer's stream, so over TCP it connects
 * every peer not yet connected (CCOM_NET_CONNECT=lazy).
 *
 * Return: ccomSuccess once enqueued; ccomInvalidArgument for a NULL
 * @peer, a NULL @recvbuff with @count > 0 or a bad datatype;
 * ccomInvalidUsage on a communicator of one rank, and from ccomGroupEnd()
 * for a group that mixes it with sends or receives (that group is
 * dropped).  A matched send of another size fails at the stream's
 * synchronize with ccomInvalidArgument naming both sizes.
 */
ccomResult_t ccomRecvAny(void *recvbuff, size_t count, ccomDataType_t datatype, int *peer,
			 ccomComm_t comm, ccomStream_t stream);

/* ---------------------------------------------------------------- */
/* Rooted collectives (NCCL 2.28's Gather and Scatter)               */

/**
 * ccomGather() - gather every rank's @count elements on @root.
 * @sendbuff: this rank's @count elements.
 * @recvbuff: on @root, nranks * @count elements: rank i's data lands at
 *	recvbuff + i * count; not used (may be NULL) on the other ranks.
 * @count: elements per rank.
 * @datatype: element type.
 * @root: the receiving rank, in [0, nranks).
 * @comm: communicator.
 * @stream: stream (NULL: the default one).
 *
 * In place when, on @root, sendbuff == recvbuff + root * count (that block
 * is then left as it is).  Runs on every transport over the grouped
 * send/receive machinery (the nccom engine between local ranks where it
 * takes point-to-point transfers); it is a collective for the mismatch
 * check (CCOM_CHECK_MISMATCH) and the flight recorder.
 *
 * Return: ccomSuccess once enqueued; ccomInvalidArgument for a bad root,
 * datatype, count or a NULL buffer that is used; errors of the transfer
 * come from the stream's synchronize.
 */
ccomResult_t ccomGather(const void *sendbuff, void *recvbuff, size_t count,
			ccomDataType_t datatype, int root, ccomComm_t comm, ccomStream_t stream);

/**
 * ccomScatter() - send block i of @root's sendbuff to rank i.
 * @sendbuff: on @root, nranks * @count elements (block i goes to rank i);
 *	not used (may be NULL) on the other ranks.
 * @recvbuff: this rank's @count elements.
 * @count: elements per rank.
 * @datatype: element type.
 * @root: the sending rank, in [0, nranks).
 * @comm: communicator.
 * @stream: stream (NULL: the default one).
 *
 * In place when, on @root, recvbuff == sendbuff + root * count.  Otherwise
 * as ccomGather().
 *
 * Return: as ccomGather().
 */
ccomResult_t ccomScatter(const void *sendbuff, void *recvbuff, size_t count,
			 ccomDataType_t datatype, int root, ccomComm_t comm, ccomStream_t stream);

/* ---------------------------------------------------------------- */
/* Custom reduction ops (NCCL's PreMulSum)                           */

/**
 * enum ccomScalarResidence_t - where the scalar of ccomRedOpCreatePreMulSum() lives.
 * @ccomScalarDevice: @scalar is a pointer, read when each operation that
 *	uses the op executes (on the stream, as NCCL reads device memory in
 *	the kernel); it must stay valid and hold the value until then.
 * @ccomScalarHostImmediate: the value at @scalar is copied at creation;
 *	the memory may be reused at once.
 */
typedef enum {
	ccomScalarDevice = 0,
	ccomScalarHostImmediate = 1
} ccomScalarResidence_t;

/**
 * ccomRedOpCreatePreMulSum() - create a reduction op that multiplies each
 * rank's input by a scalar, then sums.
 * @op: receives the new op, a ccomRedOp_t above ccomNumOps, valid for
 *	@comm only.
 * @scalar: one element of @datatype (see ccomScalarResidence_t).
 * @datatype: the only datatype the op may be used with.
 * @residence: ccomScalarDevice or ccomScalarHostImmediate.
 * @comm: a ready communicator.
 *
 * Every reduction (ccomAllReduce(), ccomReduce(), ccomReduceScatter())
 * takes it, on every path.  Rounding is NCCL's: each input element is
 * multiplied by the scalar and rounded to @datatype (integers wrap), and
 * the products are summed as ccomSum sums them.  The mismatch check
 * reports a rank that uses such an op where a peer uses a built-in one
 * (the scalars may differ between ranks: a weighted sum).
 *
 * Return: ccomSuccess; ccomInvalidArgument for a NULL @op or @scalar, an
 * invalid @datatype or @residence, or a communicator that is not ready;
 * ccomInvalidUsage when 65536 ops are live on @comm; ccomSystemError when
 * out of memory.  Destroy with ccomRedOpDestroy().
 */
ccomResult_t ccomRedOpCreatePreMulSum(ccomRedOp_t *op, void *scalar, ccomDataType_t datatype,
				      ccomScalarResidence_t residence, ccomComm_t comm);

/**
 * ccomRedOpDestroy() - destroy an op of ccomRedOpCreatePreMulSum().
 * @op: the op.
 * @comm: the communicator it was created on.
 *
 * It may be destroyed as soon as the last call given it returned (calls
 * capture it when they are enqueued; a ccomScalarDevice pointer is still
 * read at execution).  Ops left are freed with the communicator.
 *
 * Return: ccomSuccess, or ccomInvalidArgument for a built-in op, an op
 * of another communicator or one already destroyed.
 */
ccomResult_t ccomRedOpDestroy(ccomRedOp_t op, ccomComm_t comm);

#ifdef __cplusplus
}
#endif

/* Buffer registration (NCCL's ncclCommRegister) has its own header. */
#include "ccom_register.h"

#endif /* CCOM_H */
