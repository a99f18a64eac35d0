/* SPDX-License-Identifier: MIT */
/*
 * ccom_register.h - buffer registration, NCCL's ncclCommRegister: pin a
 * buffer once for the transports that pin memory (the nccom engine,
 * net_ib) instead of once per operation.
 *
 * Part of the public API: ccom.h includes it, so users include ccom.h
 * only.  Kept apart so that each public header stays one concern.
 */
#ifndef CCOM_REGISTER_H
#define CCOM_REGISTER_H

#include "ccom.h"

#ifdef __cplusplus
extern "C" {
#endif


/**
 * ccomCommRegister() - register a buffer that collectives of @comm will use.
 * @comm: a ready communicator.
 * @buff: the first byte; memory of this process, mapped.
 * @size: bytes, more than 0.
 * @handle: receives an opaque handle for ccomCommDeregister() (NULL on error).
 *
 * Operations stay correct without registering: what it saves is the
 * per-operation work of the transports that pin memory.  The nccom engine
 * (``/dev/nccom``) registers the range now and keeps it in its
 * registration cache, never evicted, until the deregistration; it still
 * probes it once per operation (one 1-byte copy), so an unmapped buffer
 * is caught, not used.  net_ib registers it with the NIC of every verbs
 * connection of @comm (those connected later at their first use), and a
 * send of at least one slot (CCOM_IB_SLOT_SIZE) from inside it is written
 * from it without a copy (receives still copy out of the ring).  On shm
 * and TCP nothing is pinned: the call succeeds and keeps the record.
 *
 * Rules.  Ranges of one communicator may not overlap.  Deregister before
 * you free, munmap or remap the memory: the engine finds an unmapped
 * range dead (its mmu notifier invalidates the registration; the next
 * operation registers the new pages again), but verbs cannot tell: the
 * NIC keeps the old pages and a send would read them.  After fork() the
 * child must not use registered memory through @comm (it has no
 * communicator), and the parent's pinned pages become copy-on-write
 * unless the program called ibv_fork_init() or madvise(MADV_DONTFORK)
 * on them: write to them in the parent only after the child exec'd or
 * exited.  A buffer may be used by collectives whether registered or not.
 *
 * Return: ccomSuccess; ccomInvalidArgument for a NULL @buff or @handle, a
 * @size of 0, memory that is not mapped or a communicator that is not
 * ready; ccomInvalidUsage when the range overlaps one already registered
 * on @comm, when too many are registered (65536, or half the engine's
 * cache, CCOM_KDEV_CACHE); ccomSystemError when pinning failed (the
 * sentence names the limit: ulimit -l).
 */
ccomResult_t ccomCommRegister(const ccomComm_t comm, void *buff, size_t size, void **handle);

/**
 * ccomCommDeregister() - undo ccomCommRegister().
 * @comm: the communicator it was registered on.
 * @handle: its handle.
 *
 * Call it when no operation given the buffer is still queued (after the
 * stream synchronized).  net_ib deregisters at once (a send still in
 * flight keeps its registration until its last write completed); the
 * engine's entry becomes an ordinary cache entry, evicted when room is
 * needed.  Registrations left are released with the communicator.
 *
 * Return: ccomSuccess; ccomInvalidArgument for a handle that is not a
 * live registration of @comm (deregistered already, or of another
 * communicator); ccomInvalidUsage when the buffer was unmapped while
 * registered (the registration is released all the same).
 */
ccomResult_t ccomCommDeregister(const ccomComm_t comm, void *handle);

#ifdef __cplusplus
}
#endif
#endif /* CCOM_REGISTER_H */
