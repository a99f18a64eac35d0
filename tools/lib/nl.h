/* SPDX-License-Identifier: MIT */
/*
 * nl.h - the generic netlink plumbing over libnl-3 that ccomctl and ccomd
 * share (nl.c): one socket to the nccom family, requests and dumps whose
 * replies are parsed into attribute tables for a callback, the kernel's
 * extack message on errors, and the events multicast group.  The results
 * are ccomctl's exit codes (&enum ctl_exit), which ccomd maps to its own.
 */
#ifndef CCOM_TOOLS_LIB_NL_H
#define CCOM_TOOLS_LIB_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

/**
 * enum ctl_exit - results of the shared helpers, and ccomctl's exit codes
 * (documented in Documentation/ccomctl.rst)
 * @CTL_OK: success
 * @CTL_EUSAGE: bad command line or request, or any other error
 * @CTL_ENODRV: module not loaded, family missing or operation unsupported
 * @CTL_EPERM: permission denied (needs CAP_NET_ADMIN)
 * @CTL_ENOENT: the requested object does not exist
 * @CTL_EIO: netlink or ccomd communication failed
 */
enum ctl_exit {
	CTL_OK = 0,
	CTL_EUSAGE = 1,
	CTL_ENODRV = 2,
	CTL_EPERM = 3,
	CTL_ENOENT = 4,
	CTL_EIO = 5,
};

struct nl_sock;

/**
 * struct ctl_nl - a connection to the nccom netlink family; the caller owns
 *	it (zero-initialised, then ctl_nl_open(), finally ctl_nl_close())
 * @sk: netlink socket, NULL until opened
 * @family: numeric id of the nccom family, valid while @sk is open
 * @quiet: print no netlink errors (for optional sources); the result code
 *	still tells what failed
 * @flush: stream flushed after each batch of events in ctl_nl_monitor()
 *	(NULL: none)
 */
struct ctl_nl {
	struct nl_sock *sk;
	int family;
	bool quiet;
	FILE *flush;
};

/**
 * typedef ctl_nl_cb - called once per reply message or event
 * @nl: the connection the message came on
 * @tb: attributes of the message, indexed by type, NULL where absent
 * @arg: the caller's argument
 *
 * Return: 0 to go on, a negative errno to stop the request with that error,
 * or (ctl_nl_monitor() only) a positive value to stop listening without error.
 */
typedef int (*ctl_nl_cb)(struct ctl_nl *nl, struct nlattr **tb, void *arg);

/**
 * ctl_nl_open() - connect to the nccom family unless already connected
 * @nl: connection
 *
 * Prints (unless @nl->quiet) why the family is missing: driver not loaded,
 * or loaded but older than the tools.
 *
 * Return: %CTL_OK, %CTL_EIO (no socket) or %CTL_ENODRV (no family).
 */
int ctl_nl_open(struct ctl_nl *nl);

/**
 * ctl_nl_close() - close the socket if open; @nl may be opened again
 * @nl: connection
 */
void ctl_nl_close(struct ctl_nl *nl);

/**
 * ctl_nl_msg() - a new request of the nccom family
 * @nl: open connection
 * @cmd: &enum nccom_nl_cmd
 * @flags: netlink flags (NLM_F_DUMP or 0)
 *
 * Return: the message, which ctl_nl_request() consumes, or NULL (no memory).
 */
struct nl_msg *ctl_nl_msg(struct ctl_nl *nl, uint8_t cmd, int flags);

/**
 * ctl_nl_request() - send @msg, run @cb on every reply until the ack
 * @nl: open connection
 * @msg: request from ctl_nl_msg(), always freed
 * @maxattr: highest attribute type of the replies (below 64)
 * @cb: called per reply
 * @arg: passed to @cb
 *
 * Return: %CTL_OK or the &enum ctl_exit of the kernel's (or @cb's) error,
 * printed with the kernel's extack message unless @nl->quiet.
 */
int ctl_nl_request(struct ctl_nl *nl, struct nl_msg *msg, int maxattr, ctl_nl_cb cb, void *arg);

/**
 * ctl_nl_dump() - open @nl if needed and dump @cmd through @cb
 * @nl: connection
 * @cmd: &enum nccom_nl_cmd of a dumpable object
 * @maxattr: highest attribute type of the replies
 * @cb: called per object
 * @arg: passed to @cb
 *
 * Return: as ctl_nl_open() and ctl_nl_request().
 */
int ctl_nl_dump(struct ctl_nl *nl, uint8_t cmd, int maxattr, ctl_nl_cb cb, void *arg);

/**
 * ctl_nl_monitor() - join the events group and run @cb on each event
 * @nl: connection (opened if needed)
 * @maxattr: highest event attribute type
 * @cb: called per event; a positive return ends the loop
 * @arg: passed to @cb
 *
 * Blocks until @cb returns non-zero or receiving fails.
 *
 * Return: %CTL_OK (@cb returned a positive value), the &enum ctl_exit of
 * @cb's negative errno, as ctl_nl_open(), %CTL_ENODRV (no events group),
 * %CTL_EPERM (joining needs CAP_NET_ADMIN) or %CTL_EIO (receive failed).
 */
int ctl_nl_monitor(struct ctl_nl *nl, int maxattr, ctl_nl_cb cb, void *arg);

/**
 * ctl_nla_u64() - value of a u64 attribute that an older driver may send as u32
 * @a: attribute
 *
 * Return: the value.
 */
uint64_t ctl_nla_u64(struct nlattr *a);

/**
 * ctl_event_name() - name of an &enum nccom_nl_event_type
 * @type: event type
 *
 * Return: "queue-error", "sem-timeout", "client-died" or "unknown".
 */
const char *ctl_event_name(uint32_t type);

#endif
