/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nccom: the ccom collective-communication device (/dev/nccom).
 *
 * Copyright (C) 2026 The ccom authors.
 */
#ifndef _UAPI_LINUX_NCCOM_H
#define _UAPI_LINUX_NCCOM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NCCOM_TYPE		0xCC
#define NCCOM_ABI_VERSION	1
/* Changes whenever an incompatible layout change is made; never reused. */
#define NCCOM_COMPAT_ID		0x6e63636f6d000001ULL

/**
 * DOC: General ioctl format
 *
 * Every ioctl takes a single argument struct whose first two members are
 * ``__u32 size`` and ``__u32 flags``. ``size`` is sizeof() the struct as the
 * caller knows it: the kernel zero-extends shorter structs (down to the size
 * ending at the last member of the first ABI version) and accepts longer
 * structs only if every byte the kernel does not know is zero. Output members
 * are prefixed ``out_``. Reserved members (``__reserved*``) must be zero.
 * Handles are small non-zero integers local to the file descriptor of
 * /dev/nccom that created or imported the object; they are never valid in
 * another file descriptor or process.
 *
 * Each errno has one meaning:
 *
 * - ENOTTY: unknown ioctl command.
 * - E2BIG: the struct is larger than the kernel knows and the unknown tail
 *   is not zero.
 * - EOPNOTSUPP: the feature is known but not supported (e.g. a dma-buf that
 *   cannot be mapped by the CPU).
 * - EINVAL: ``size`` below the minimum, an unknown flag, a non-zero reserved
 *   member or an invalid argument (e.g. depth not a power of two).
 * - ENOENT: the handle does not name an object of the expected type in this
 *   file descriptor.
 * - EBADF: a file descriptor argument is not open, or not of the expected
 *   kind.
 * - ENOMEM: out of memory, or pinning would exceed RLIMIT_MEMLOCK.
 * - EOVERFLOW: offset + length wraps around or exceeds the object.
 * - EFAULT: a user pointer or user range is not accessible.
 * - EMSGSIZE: an output array is too small; the needed count was written back.
 * - EBUSY: the object is in use (e.g. reset of a queue that is not in error).
 * - ETIMEDOUT: an absolute CLOCK_MONOTONIC timeout passed.
 * - EINTR: a wait was interrupted by a signal.
 * - EPIPE: the owner of a semaphore is gone (its file descriptor was closed
 *   or its process died).
 */

enum {
	NCCOM_CMD_BASE = 0x80,
	NCCOM_CMD_GET_INFO = NCCOM_CMD_BASE,
	NCCOM_CMD_DESTROY,
	NCCOM_CMD_MEM_REGISTER,
	NCCOM_CMD_MEM_EXPORT_DMABUF,
	NCCOM_CMD_MEM_IMPORT_DMABUF,
	NCCOM_CMD_QUEUE_CREATE,
	NCCOM_CMD_QUEUE_DOORBELL,
	NCCOM_CMD_QUEUE_GET_STATE,
	NCCOM_CMD_QUEUE_RESET,
	NCCOM_CMD_QUEUE_WAIT,
	NCCOM_CMD_SEM_CREATE,
	NCCOM_CMD_SEM_SIGNAL,
	NCCOM_CMD_SEM_READ,
	NCCOM_CMD_SEM_WAIT,
	NCCOM_CMD_SEM_EXPORT,
	NCCOM_CMD_SEM_IMPORT,
	NCCOM_CMD_COMM_REGISTER,
};

/**
 * enum nccom_features - feature bits reported in &nccom_info.out_features
 * @NCCOM_FEAT_MEM_REGISTER: user memory registration with invalidation
 * @NCCOM_FEAT_DMABUF_EXPORT: registrations can be exported as dma-buf fds
 * @NCCOM_FEAT_DMABUF_IMPORT: dma-buf fds (nccom's own or foreign) can be
 *	imported
 * @NCCOM_FEAT_SEM_FD: semaphores can be exported/imported as pollable fds
 * @NCCOM_FEAT_REDUCE_FP: fp16/bf16/fp32/fp64 reductions are available
 * @NCCOM_FEAT_QUEUE_WAIT: %NCCOM_IOC_QUEUE_WAIT is available
 * @NCCOM_FEAT_COMM_REGISTER: %NCCOM_IOC_COMM_REGISTER is available
 * @NCCOM_FEAT_DMABUF_MMAP: nccom dma-bufs can be mmap()ed by the peers they
 *	are granted to, and %NCCOM_MEM_EXPORT_MAP_WRITE is accepted
 */
enum nccom_features {
	NCCOM_FEAT_MEM_REGISTER = 1 << 0,
	NCCOM_FEAT_DMABUF_EXPORT = 1 << 1,
	NCCOM_FEAT_DMABUF_IMPORT = 1 << 2,
	NCCOM_FEAT_SEM_FD = 1 << 3,
	NCCOM_FEAT_REDUCE_FP = 1 << 4,
	NCCOM_FEAT_QUEUE_WAIT = 1 << 5,
	NCCOM_FEAT_COMM_REGISTER = 1 << 6,
	NCCOM_FEAT_DMABUF_MMAP = 1 << 7,
};

/**
 * struct nccom_dev_info - one virtual device, as reported by GET_INFO
 * @index: device index, the value to pass as &nccom_queue_create.dev_index
 * @numa_node: NUMA node of the device's engine threads, -1 if none
 * @nengines: number of engine threads of the device
 * @nqueues: number of live queues on the device (all file descriptors)
 * @completed: descriptors completed by the device since module load
 * @bytes: bytes copied or reduced (destination bytes) since module load
 */
struct nccom_dev_info {
	__u32 index;
	__s32 numa_node;
	__u32 nengines;
	__u32 nqueues;
	__aligned_u64 completed;
	__aligned_u64 bytes;
};

/**
 * struct nccom_info - ioctl(NCCOM_IOC_GET_INFO)
 * @size: sizeof(struct nccom_info)
 * @flags: Must be 0
 * @out_abi_version: %NCCOM_ABI_VERSION of the running driver
 * @dev_count: in: number of &struct nccom_dev_info entries at @devs_uptr
 *	(0: do not return devices); out: number of devices
 * @out_features: bitmap of &enum nccom_features
 * @out_compat_id: %NCCOM_COMPAT_ID of the running driver
 * @devs_uptr: user pointer to an array of @dev_count &struct nccom_dev_info
 * @dev_entry_size: size of one entry at @devs_uptr as the caller knows it;
 *	the kernel writes min(@dev_entry_size, its own size) bytes per entry
 *	and zero-fills the rest. Must be at least 8 if @dev_count is non-zero.
 * @out_max_queue_depth: largest accepted &nccom_queue_create.depth
 * @out_max_reg_size: largest accepted registration length in bytes
 * @out_desc_size: sizeof(struct nccom_desc)
 * @out_cqe_size: sizeof(struct nccom_cqe)
 * @out_pinned_pages: pages pinned by the driver right now (all users)
 * @out_objects: live objects in all file descriptors (handles), plus
 *	exported dma-bufs and semaphore files that are still open
 * @out_fd_objects: live handles in this file descriptor
 * @out_fd_pinned_pages: pages pinned by registrations of this file
 *	descriptor
 *
 * Returns the driver's ABI, features, limits, devices and counters.
 * If @dev_count is non-zero but smaller than the number of devices, the
 * ioctl fails with -EMSGSIZE and writes the needed count to @dev_count (the
 * other outputs are written too); retry with a larger array.
 */
struct nccom_info {
	__u32 size;
	__u32 flags;
	__u32 out_abi_version;
	__u32 dev_count;
	__aligned_u64 out_features;
	__aligned_u64 out_compat_id;
	__aligned_u64 devs_uptr;
	__u32 dev_entry_size;
	__u32 out_max_queue_depth;
	__aligned_u64 out_max_reg_size;
	__u32 out_desc_size;
	__u32 out_cqe_size;
	__aligned_u64 out_pinned_pages;
	__aligned_u64 out_objects;
	__aligned_u64 out_fd_objects;
	__aligned_u64 out_fd_pinned_pages;
};

#define NCCOM_IOC_GET_INFO _IO(NCCOM_TYPE, NCCOM_CMD_GET_INFO)

/**
 * struct nccom_destroy - ioctl(NCCOM_IOC_DESTROY)
 * @size: sizeof(struct nccom_destroy)
 * @flags: Must be 0
 * @handle: handle of any object in this file descriptor
 * @__reserved: Must be 0
 *
 * Destroys the handle. A registration stays pinned while an exported dma-buf
 * or a queued descriptor still references it; a queue is quiesced first
 * (its pending descriptors are cancelled); a semaphore created here wakes
 * its waiters in all processes with -EPIPE.
 */
struct nccom_destroy {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
};

#define NCCOM_IOC_DESTROY _IO(NCCOM_TYPE, NCCOM_CMD_DESTROY)

/**
 * enum nccom_mem_flags - access flags of a registration or import
 * @NCCOM_MEM_READ: descriptors may read the memory (COPY/REDUCE sources)
 * @NCCOM_MEM_WRITE: descriptors may write the memory (destinations)
 */
enum nccom_mem_flags {
	NCCOM_MEM_READ = 1 << 0,
	NCCOM_MEM_WRITE = 1 << 1,
};

/**
 * struct nccom_mem_register - ioctl(NCCOM_IOC_MEM_REGISTER)
 * @size: sizeof(struct nccom_mem_register)
 * @flags: &enum nccom_mem_flags, at least one
 * @addr: start of the user virtual range, page aligned
 * @length: length in bytes, page aligned, non-zero, at most
 *	&nccom_info.out_max_reg_size
 * @out_handle: the registration's handle
 * @__reserved: Must be 0
 *
 * Pins the range (long-term) and accounts it against RLIMIT_MEMLOCK unless
 * the caller has CAP_IPC_LOCK (-ENOMEM when the limit would be exceeded).
 * Writable memory is pinned for write even for a read-only registration, so
 * the owner's later writes stay visible to descriptors.
 * If the range is later unmapped or remapped (munmap, mremap,
 * madvise(MADV_DONTNEED), process exit), the registration becomes invalid:
 * descriptors referencing it complete with -EFAULT; the handle must still be
 * destroyed to release the pins.
 */
struct nccom_mem_register {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 out_handle;
	__u32 __reserved;
};

#define NCCOM_IOC_MEM_REGISTER _IO(NCCOM_TYPE, NCCOM_CMD_MEM_REGISTER)

/**
 * enum nccom_mem_export_flags - flags of %NCCOM_IOC_MEM_EXPORT_DMABUF
 * @NCCOM_MEM_EXPORT_MAP_WRITE: holders of the dma-buf may map it writable
 *	(PROT_WRITE); the registration must have %NCCOM_MEM_WRITE. Without it
 *	the dma-buf can only be mapped read-only.
 */
enum nccom_mem_export_flags {
	NCCOM_MEM_EXPORT_MAP_WRITE = 1 << 0,
};

/**
 * struct nccom_mem_export_dmabuf - ioctl(NCCOM_IOC_MEM_EXPORT_DMABUF)
 * @size: sizeof(struct nccom_mem_export_dmabuf)
 * @flags: &enum nccom_mem_export_flags
 * @handle: a registration (not an import) of this file descriptor
 * @out_fd: a new dma-buf file descriptor (O_CLOEXEC) covering the whole
 *	registration
 *
 * The dma-buf is a grant: pass it to a peer over a Unix socket
 * (SCM_RIGHTS); the peer imports it with %NCCOM_IOC_MEM_IMPORT_DMABUF. The
 * dma-buf keeps the pages pinned until its last reference is dropped, even
 * after the registration handle is destroyed. Access rights of importers are
 * limited to those of the registration.
 *
 * A holder of the dma-buf may also mmap() it (%NCCOM_FEAT_DMABUF_MMAP) and
 * read the owner's pages directly, with no copy through the kernel: the
 * mapping must be MAP_SHARED, lie inside the dma-buf (offset and length in
 * pages, -EINVAL otherwise) and is read-only unless the export was made with
 * %NCCOM_MEM_EXPORT_MAP_WRITE (PROT_WRITE or a later mprotect() to it fails
 * with -EACCES). It is not inherited across fork(), cannot be grown by
 * mremap(), and cannot itself be registered, pinned or read with
 * process_vm_readv(). The mapping follows the owner's range: when the owner
 * unmaps or remaps it, exits or calls madvise(MADV_DONTNEED) on it, every
 * peer's mapping is zapped before the owner's call returns, and a later
 * access raises SIGBUS instead of reading pages the owner no longer sees;
 * mmap() of a dma-buf whose range was unmapped fails with -EFAULT. Register
 * the range again and export a new dma-buf. Changes that keep the owner's
 * pages mapped (the split of a transparent huge page when the owner forks or
 * changes part of it) also zap the peers' mappings, but their next access
 * finds the same pages in the owner's page tables and reads on. The pages
 * are accounted once, to the owner's RLIMIT_MEMLOCK, at registration;
 * mappings add nothing.
 */
struct nccom_mem_export_dmabuf {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__s32 out_fd;
};

#define NCCOM_IOC_MEM_EXPORT_DMABUF _IO(NCCOM_TYPE, NCCOM_CMD_MEM_EXPORT_DMABUF)

/**
 * struct nccom_mem_import_dmabuf - ioctl(NCCOM_IOC_MEM_IMPORT_DMABUF)
 * @size: sizeof(struct nccom_mem_import_dmabuf)
 * @flags: &enum nccom_mem_flags, at least one
 * @fd: a dma-buf file descriptor (from nccom or another exporter)
 * @out_handle: the new handle, local to this file descriptor
 * @__reserved: Must be 0
 * @__reserved2: Must be 0
 * @offset: start of the imported window inside the dma-buf, page aligned
 * @length: length of the window, page aligned; 0 means up to the end
 * @out_length: length of the window actually imported
 *
 * A dma-buf exported by nccom is accessed directly through the exporter's
 * pinned pages. A foreign dma-buf is attached dynamically, pinned, mapped and
 * vmapped for CPU access (-EOPNOTSUPP if the exporter cannot vmap).
 * Requesting %NCCOM_MEM_WRITE on an nccom dma-buf whose registration is not
 * writable fails with -EINVAL.
 */
struct nccom_mem_import_dmabuf {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 out_handle;
	__u32 __reserved;
	__u32 __reserved2;
	__aligned_u64 offset;
	__aligned_u64 length;
	__aligned_u64 out_length;
};

#define NCCOM_IOC_MEM_IMPORT_DMABUF _IO(NCCOM_TYPE, NCCOM_CMD_MEM_IMPORT_DMABUF)

/**
 * struct nccom_queue_create - ioctl(NCCOM_IOC_QUEUE_CREATE)
 * @size: sizeof(struct nccom_queue_create)
 * @flags: Must be 0
 * @dev_index: device (&nccom_dev_info.index) whose engines run the queue
 * @depth: number of submission and of completion entries, a power of two
 *	between 2 and &nccom_info.out_max_queue_depth
 * @out_handle: the queue's handle
 * @out_sq_offset: byte offset of the &struct nccom_desc array in the mapping
 * @out_cq_offset: byte offset of the &struct nccom_cqe array in the mapping
 * @__reserved: Must be 0
 * @out_mmap_offset: offset to pass to mmap() on this file descriptor
 * @out_mmap_size: length to pass to mmap()
 *
 * The mapping starts with &struct nccom_ring_hdr. Map it with
 * PROT_READ | PROT_WRITE and MAP_SHARED; it must be mapped whole.
 */
struct nccom_queue_create {
	__u32 size;
	__u32 flags;
	__u32 dev_index;
	__u32 depth;
	__u32 out_handle;
	__u32 out_sq_offset;
	__u32 out_cq_offset;
	__u32 __reserved;
	__aligned_u64 out_mmap_offset;
	__aligned_u64 out_mmap_size;
};

#define NCCOM_IOC_QUEUE_CREATE _IO(NCCOM_TYPE, NCCOM_CMD_QUEUE_CREATE)

/**
 * struct nccom_queue_doorbell - ioctl(NCCOM_IOC_QUEUE_DOORBELL)
 * @size: sizeof(struct nccom_queue_doorbell)
 * @flags: Must be 0
 * @handle: a queue of this file descriptor
 * @__reserved: Must be 0
 *
 * Tells the engine that &nccom_ring_hdr.sq_tail moved. Write the descriptors,
 * then store the new tail with release semantics, then ring the doorbell.
 * Fails with -EIO if the queue is in the error state.
 */
struct nccom_queue_doorbell {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
};

#define NCCOM_IOC_QUEUE_DOORBELL _IO(NCCOM_TYPE, NCCOM_CMD_QUEUE_DOORBELL)

/**
 * enum nccom_queue_state - &nccom_ring_hdr.state and
 *	&nccom_queue_get_state.out_state
 * @NCCOM_QUEUE_ACTIVE: descriptors are executed
 * @NCCOM_QUEUE_ERROR: a descriptor failed; nothing after it runs until
 *	%NCCOM_IOC_QUEUE_RESET
 */
enum nccom_queue_state {
	NCCOM_QUEUE_ACTIVE = 0,
	NCCOM_QUEUE_ERROR = 1,
};

/**
 * struct nccom_queue_get_state - ioctl(NCCOM_IOC_QUEUE_GET_STATE)
 * @size: sizeof(struct nccom_queue_get_state)
 * @flags: Must be 0
 * @handle: a queue of this file descriptor
 * @out_state: &enum nccom_queue_state
 * @out_error: negative errno of the first failing descriptor, 0 if none
 * @out_sq_head: descriptors consumed by the engine (free-running)
 * @out_error_cookie: cookie of the first failing descriptor
 * @out_completed: descriptors completed on this queue since creation
 */
struct nccom_queue_get_state {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 out_state;
	__s32 out_error;
	__u32 out_sq_head;
	__aligned_u64 out_error_cookie;
	__aligned_u64 out_completed;
};

#define NCCOM_IOC_QUEUE_GET_STATE _IO(NCCOM_TYPE, NCCOM_CMD_QUEUE_GET_STATE)

/**
 * enum nccom_queue_reset_flags - flags of %NCCOM_IOC_QUEUE_RESET
 * @NCCOM_QUEUE_RESET_DISCARD: complete every descriptor that is still in the
 *	submission ring with -ECANCELED instead of running it
 */
enum nccom_queue_reset_flags {
	NCCOM_QUEUE_RESET_DISCARD = 1 << 0,
};

/**
 * struct nccom_queue_reset - ioctl(NCCOM_IOC_QUEUE_RESET)
 * @size: sizeof(struct nccom_queue_reset)
 * @flags: &enum nccom_queue_reset_flags
 * @handle: a queue of this file descriptor, in the error state
 * @__reserved: Must be 0
 *
 * Returns the queue to %NCCOM_QUEUE_ACTIVE and clears the error. The
 * failing descriptor was already completed; execution resumes with the next
 * one. -EBUSY if the queue is not in the error state.
 */
struct nccom_queue_reset {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
};

#define NCCOM_IOC_QUEUE_RESET _IO(NCCOM_TYPE, NCCOM_CMD_QUEUE_RESET)

/**
 * struct nccom_queue_wait - ioctl(NCCOM_IOC_QUEUE_WAIT)
 * @size: sizeof(struct nccom_queue_wait)
 * @flags: Must be 0
 * @handle: a queue of this file descriptor
 * @cq_tail: the completion tail the caller has already seen
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline in ns; 0 does not wait
 * @out_cq_tail: the completion tail when the ioctl returned
 * @__reserved: Must be 0
 *
 * Sleeps until the completion tail differs from @cq_tail or the queue is in
 * the error state. Returns 0, -ETIMEDOUT or -EINTR.
 */
struct nccom_queue_wait {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 cq_tail;
	__aligned_u64 timeout_ns;
	__u32 out_cq_tail;
	__u32 __reserved;
};

#define NCCOM_IOC_QUEUE_WAIT _IO(NCCOM_TYPE, NCCOM_CMD_QUEUE_WAIT)

/**
 * struct nccom_sem_create - ioctl(NCCOM_IOC_SEM_CREATE)
 * @size: sizeof(struct nccom_sem_create)
 * @flags: Must be 0
 * @initial_value: starting value of the timeline
 * @out_handle: the semaphore's handle; this file descriptor is its owner
 * @__reserved: Must be 0
 */
struct nccom_sem_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 initial_value;
	__u32 out_handle;
	__u32 __reserved;
};

#define NCCOM_IOC_SEM_CREATE _IO(NCCOM_TYPE, NCCOM_CMD_SEM_CREATE)

/**
 * struct nccom_sem_signal - ioctl(NCCOM_IOC_SEM_SIGNAL)
 * @size: sizeof(struct nccom_sem_signal)
 * @flags: Must be 0
 * @handle: a created or imported semaphore of this file descriptor
 * @__reserved: Must be 0
 * @value: new value, at least the current one (-EINVAL if smaller; equal
 *	is a no-op)
 *
 * -EPIPE if the owner is gone.
 */
struct nccom_sem_signal {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
	__aligned_u64 value;
};

#define NCCOM_IOC_SEM_SIGNAL _IO(NCCOM_TYPE, NCCOM_CMD_SEM_SIGNAL)

/**
 * struct nccom_sem_read - ioctl(NCCOM_IOC_SEM_READ)
 * @size: sizeof(struct nccom_sem_read)
 * @flags: Must be 0
 * @handle: a created or imported semaphore of this file descriptor
 * @out_owner_alive: 1 while the owner is alive, 0 once it is gone
 * @out_value: current value
 */
struct nccom_sem_read {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 out_owner_alive;
	__aligned_u64 out_value;
};

#define NCCOM_IOC_SEM_READ _IO(NCCOM_TYPE, NCCOM_CMD_SEM_READ)

/**
 * struct nccom_sem_wait - ioctl(NCCOM_IOC_SEM_WAIT)
 * @size: sizeof(struct nccom_sem_wait)
 * @flags: Must be 0
 * @handle: a created or imported semaphore of this file descriptor
 * @__reserved: Must be 0
 * @value: wait until the semaphore's value is at least this
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline in ns; 0 does not sleep
 * @out_value: value when the ioctl returned
 *
 * Returns 0 once the value is reached, -ETIMEDOUT when the deadline passes,
 * -EINTR on a signal, -EPIPE when the owner is gone before the value was
 * reached.
 */
struct nccom_sem_wait {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 __reserved;
	__aligned_u64 value;
	__aligned_u64 timeout_ns;
	__aligned_u64 out_value;
};

#define NCCOM_IOC_SEM_WAIT _IO(NCCOM_TYPE, NCCOM_CMD_SEM_WAIT)

/**
 * struct nccom_sem_export - ioctl(NCCOM_IOC_SEM_EXPORT)
 * @size: sizeof(struct nccom_sem_export)
 * @flags: Must be 0
 * @handle: a created or imported semaphore of this file descriptor
 * @out_fd: a new semaphore file descriptor (O_CLOEXEC)
 *
 * The semaphore fd is a grant: pass it over a Unix socket and import it
 * with %NCCOM_IOC_SEM_IMPORT. It also works on its own: read() of 8 bytes
 * returns the current value; write() of 8 bytes sets this open file's poll
 * target (initially 0); poll() reports EPOLLIN once value >= target and
 * EPOLLHUP once the owner is gone.
 */
struct nccom_sem_export {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__s32 out_fd;
};

#define NCCOM_IOC_SEM_EXPORT _IO(NCCOM_TYPE, NCCOM_CMD_SEM_EXPORT)

/**
 * struct nccom_sem_import - ioctl(NCCOM_IOC_SEM_IMPORT)
 * @size: sizeof(struct nccom_sem_import)
 * @flags: Must be 0
 * @fd: a semaphore file descriptor from %NCCOM_IOC_SEM_EXPORT
 * @out_handle: a new handle in this file descriptor
 */
struct nccom_sem_import {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 out_handle;
};

#define NCCOM_IOC_SEM_IMPORT _IO(NCCOM_TYPE, NCCOM_CMD_SEM_IMPORT)

#define NCCOM_COMM_MSG_LEN	224

/**
 * struct nccom_comm_state - state block of a registered communicator
 * @seq: sequence count: the owner makes it odd before it changes @stage,
 *	@last_error, @stage_time_ns, @error_time_ns or @error_msg and even
 *	again afterwards; readers retry while it is odd or changed
 * @stage: &enum nccom_nl_stage (linux/nccom_genl.h), written by the owner
 * @last_error: negative errno of the last error, 0 if none
 * @__pad0: Reserved, written as 0
 * @stage_time_ns: CLOCK_REALTIME of the last change of @stage in ns
 * @error_time_ns: CLOCK_REALTIME of the last error in ns, 0 if none
 * @error_msg: sentence of the last error, NUL-terminated ("" if none)
 * @ops_issued: operations issued on the communicator (single writer,
 *	one aligned store per operation)
 * @__pad1: Reserved: keeps @ops_completed on its own cache line
 * @ops_completed: operations completed, with or without error (single
 *	writer)
 * @__pad2: Reserved
 *
 * The owner of a communicator keeps this block up to date with plain
 * stores; the driver never writes it and reads it only when the
 * communicator is dumped or got through the netlink family, so updating it
 * costs nothing more than the stores. The block is 64-byte aligned and
 * must not cross a page boundary.
 */
struct nccom_comm_state {
	__u32 seq;
	__u32 stage;
	__s32 last_error;
	__u32 __pad0;
	__aligned_u64 stage_time_ns;
	__aligned_u64 error_time_ns;
	char error_msg[NCCOM_COMM_MSG_LEN];
	__aligned_u64 ops_issued;
	__u8 __pad1[56];
	__aligned_u64 ops_completed;
	__u8 __pad2[56];
};

/**
 * struct nccom_comm_register - ioctl(NCCOM_IOC_COMM_REGISTER)
 * @size: sizeof(struct nccom_comm_register)
 * @flags: Must be 0
 * @comm_hash: communicator hash (the same on every rank)
 * @rank: rank of the caller in the communicator, below @nranks
 * @nranks: number of ranks of the communicator, at least 1
 * @state_uptr: user address of the caller's &struct nccom_comm_state,
 *	64-byte aligned
 * @state_size: sizeof(struct nccom_comm_state) as the caller knows it, at
 *	least the size of the first version (384); the block from @state_uptr
 *	to @state_uptr + @state_size must lie inside one page
 * @out_handle: the registration's handle
 *
 * Makes a communicator visible to inspection tools (the netlink family's
 * comm-get). The page holding the state block is pinned read-only
 * (long-term) and accounted against RLIMIT_MEMLOCK like a registration.
 * Put the block in a MAP_SHARED mapping (a shared memory file, or
 * MAP_SHARED | MAP_ANONYMOUS), or in private memory that was written
 * before the ioctl: the pin keeps the page the owner writes to. The handle
 * goes away with %NCCOM_IOC_DESTROY or when the file descriptor is closed.
 */
struct nccom_comm_register {
	__u32 size;
	__u32 flags;
	__aligned_u64 comm_hash;
	__u32 rank;
	__u32 nranks;
	__aligned_u64 state_uptr;
	__u32 state_size;
	__u32 out_handle;
};

#define NCCOM_IOC_COMM_REGISTER _IO(NCCOM_TYPE, NCCOM_CMD_COMM_REGISTER)

/**
 * DOC: Rings
 *
 * A queue's mapping holds &struct nccom_ring_hdr at offset 0, then the
 * submission array (&nccom_queue_create.out_sq_offset, depth entries of
 * &struct nccom_desc) and the completion array
 * (&nccom_queue_create.out_cq_offset, depth entries of &struct nccom_cqe).
 * Indices are free-running __u32 counters; the slot is index & (depth - 1).
 *
 * The producer of descriptors (user) owns @sq_tail and @cq_head; the engine
 * owns @sq_head, @cq_tail and @state. User: write descriptors at
 * sq_tail & mask, store sq_tail with release semantics, then
 * %NCCOM_IOC_QUEUE_DOORBELL. Read completions from cq_head up to cq_tail
 * (load cq_tail with acquire semantics), then store cq_head with release
 * semantics. The engine consumes a descriptor only when a completion slot is
 * free, so the completion ring never overflows; every descriptor produces
 * exactly one completion, in submission order. A queue that stalled on a
 * full completion ring resumes on the next %NCCOM_IOC_QUEUE_DOORBELL or
 * %NCCOM_IOC_QUEUE_WAIT.
 */

#define NCCOM_RING_MAGIC	0x4e43524eU	/* "NCRN" */
#define NCCOM_RING_VERSION	1

/**
 * struct nccom_ring_hdr - header at offset 0 of a queue mapping
 * @magic: %NCCOM_RING_MAGIC
 * @version: %NCCOM_RING_VERSION
 * @depth: number of entries of each array
 * @mask: depth - 1
 * @sq_offset: same as &nccom_queue_create.out_sq_offset
 * @cq_offset: same as &nccom_queue_create.out_cq_offset
 * @state: &enum nccom_queue_state, written by the engine
 * @error: negative errno of the first failing descriptor, written by the
 *	engine
 * @__pad0: Reserved
 * @sq_tail: next free submission slot, written by the user
 * @__pad1: Reserved
 * @sq_head: next submission slot the engine will consume, written by the
 *	engine
 * @__pad2: Reserved
 * @cq_tail: next completion slot the engine will fill, written by the engine
 * @__pad3: Reserved
 * @cq_head: next completion slot the user will read, written by the user
 * @__pad4: Reserved
 */
struct nccom_ring_hdr {
	__u32 magic;
	__u32 version;
	__u32 depth;
	__u32 mask;
	__u32 sq_offset;
	__u32 cq_offset;
	__u32 state;
	__s32 error;
	__u8 __pad0[32];
	__u32 sq_tail;
	__u8 __pad1[60];
	__u32 sq_head;
	__u8 __pad2[60];
	__u32 cq_tail;
	__u8 __pad3[60];
	__u32 cq_head;
	__u8 __pad4[60];
};

/**
 * enum nccom_opcode - &nccom_desc.opcode
 * @NCCOM_OP_NOP: complete with status 0
 * @NCCOM_OP_COPY: copy length bytes from (src_handle, src_offset) to
 *	(dst_handle, dst_offset)
 * @NCCOM_OP_REDUCE: element-wise reduction of count elements of dtype with
 *	the operation op: dst = src op src2 if src2_handle is non-zero, else
 *	dst = src op dst
 * @NCCOM_OP_SEM_SIGNAL: signal sem_handle to value (>= current value)
 * @NCCOM_OP_SEM_WAIT: park the queue until sem_handle >= value
 *	(completes with -EPIPE if the semaphore's owner is gone)
 */
enum nccom_opcode {
	NCCOM_OP_NOP = 0,
	NCCOM_OP_COPY = 1,
	NCCOM_OP_REDUCE = 2,
	NCCOM_OP_SEM_SIGNAL = 3,
	NCCOM_OP_SEM_WAIT = 4,
};

/**
 * enum nccom_dtype - &nccom_desc.dtype
 * @NCCOM_DTYPE_INT8: signed 8-bit integer
 * @NCCOM_DTYPE_UINT8: unsigned 8-bit integer
 * @NCCOM_DTYPE_INT32: signed 32-bit integer (wrapping arithmetic)
 * @NCCOM_DTYPE_UINT32: unsigned 32-bit integer
 * @NCCOM_DTYPE_INT64: signed 64-bit integer (wrapping arithmetic)
 * @NCCOM_DTYPE_UINT64: unsigned 64-bit integer
 * @NCCOM_DTYPE_FP16: IEEE 754 binary16
 * @NCCOM_DTYPE_BF16: bfloat16
 * @NCCOM_DTYPE_FP32: IEEE 754 binary32
 * @NCCOM_DTYPE_FP64: IEEE 754 binary64
 * @NCCOM_DTYPE_COUNT: number of dtypes
 */
enum nccom_dtype {
	NCCOM_DTYPE_INT8 = 0,
	NCCOM_DTYPE_UINT8 = 1,
	NCCOM_DTYPE_INT32 = 2,
	NCCOM_DTYPE_UINT32 = 3,
	NCCOM_DTYPE_INT64 = 4,
	NCCOM_DTYPE_UINT64 = 5,
	NCCOM_DTYPE_FP16 = 6,
	NCCOM_DTYPE_BF16 = 7,
	NCCOM_DTYPE_FP32 = 8,
	NCCOM_DTYPE_FP64 = 9,
	NCCOM_DTYPE_COUNT,
};

/**
 * enum nccom_redop - &nccom_desc.op
 * @NCCOM_REDOP_SUM: a + b
 * @NCCOM_REDOP_PROD: a * b
 * @NCCOM_REDOP_MIN: the smaller of a and b
 * @NCCOM_REDOP_MAX: the larger of a and b
 * @NCCOM_REDOP_COUNT: number of operations
 */
enum nccom_redop {
	NCCOM_REDOP_SUM = 0,
	NCCOM_REDOP_PROD = 1,
	NCCOM_REDOP_MIN = 2,
	NCCOM_REDOP_MAX = 3,
	NCCOM_REDOP_COUNT,
};

/**
 * struct nccom_desc - a submission entry (64 bytes)
 * @opcode: &enum nccom_opcode
 * @dtype: &enum nccom_dtype (REDUCE), else Must be 0
 * @op: &enum nccom_redop (REDUCE), else Must be 0
 * @__reserved0: Must be 0
 * @flags: Must be 0
 * @cookie: opaque value copied to the completion
 * @dst_handle: destination memory handle (COPY, REDUCE)
 * @sem_handle: semaphore handle (SEM_SIGNAL, SEM_WAIT)
 * @src_handle: source memory handle (COPY, REDUCE)
 * @src2_handle: second source (REDUCE), 0 for in-place dst = dst op src
 * @__reserved1: Must be 0
 * @dst_offset: byte offset in the destination
 * @src_offset: byte offset in the source
 * @src2_offset: byte offset in the second source
 * @length: bytes to copy (COPY)
 * @count: elements to reduce (REDUCE)
 * @value: semaphore value (SEM_SIGNAL, SEM_WAIT)
 *
 * Members an opcode does not use Must be 0. Offsets need no alignment.
 * Every range must lie inside its object (-EOVERFLOW otherwise).
 */
struct nccom_desc {
	__u8 opcode;
	__u8 dtype;
	__u8 op;
	__u8 __reserved0;
	__u32 flags;
	__aligned_u64 cookie;
	union {
		__u32 dst_handle;
		__u32 sem_handle;
	};
	__u32 src_handle;
	__u32 src2_handle;
	__u32 __reserved1;
	__aligned_u64 dst_offset;
	__aligned_u64 src_offset;
	__aligned_u64 src2_offset;
	union {
		__aligned_u64 length;
		__aligned_u64 count;
		__aligned_u64 value;
	};
};

/**
 * struct nccom_cqe - a completion entry (16 bytes)
 * @cookie: &nccom_desc.cookie of the completed descriptor
 * @status: 0 or a negative errno: -EINVAL (malformed descriptor), -ENOENT
 *	(unknown handle), -EACCES (access flags), -EOVERFLOW (range outside
 *	the object), -EFAULT (registration invalidated), -EPIPE (semaphore
 *	owner gone), -ECANCELED (queue destroyed, reset with discard, or file
 *	closed)
 * @__reserved: 0
 */
struct nccom_cqe {
	__aligned_u64 cookie;
	__s32 status;
	__u32 __reserved;
};

#endif /* _UAPI_LINUX_NCCOM_H */
