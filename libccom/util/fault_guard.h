/* SPDX-License-Identifier: MIT */
/*
 * fault_guard.h - run a copy from memory that another process may revoke
 * (a peer's grant mapped through nccom) so that the revocation returns an
 * error instead of killing this process.
 *
 * The driver zaps a peer's mapping of a grant when the owner unmaps its
 * buffer or exits, and a later access raises SIGBUS (uapi/linux/nccom.h).
 * An owner that aborts and frees its buffers, or dies, while this rank
 * copies from them is a lost peer, not a reason to crash the survivors.
 * libccom installs one SIGBUS handler, the first time a guard runs; a
 * SIGBUS on a thread inside ccom_fault_guard() unwinds the guarded call,
 * any other SIGBUS goes to the handler that was there before (or the
 * default action).
 */
#ifndef CCOM_UTIL_FAULT_GUARD_H
#define CCOM_UTIL_FAULT_GUARD_H

/**
 * ccom_fault_guard() - call @fn(@arg), turning a SIGBUS on this thread into -EFAULT
 * @fn: pure memory work: it takes no lock and allocates nothing, since a
 *	fault leaves it in the middle
 * @arg: its argument
 *
 * Return: 0 if @fn returned, -EFAULT if it touched a revoked mapping, or
 * -errno if the handler could not be installed (@fn not called).
 */
int ccom_fault_guard(void (*fn)(void *arg), void *arg);

#endif
