/* SPDX-License-Identifier: MIT */
/*
 * commlist.h - this host's communicator ranks as `ccomctl comm`, `ccomctl
 * job` and ccomd see them (commlist.c): the driver's registrations merged
 * with the state files that libccom publishes.
 */
#ifndef CCOM_TOOLS_LIB_COMMLIST_H
#define CCOM_TOOLS_LIB_COMMLIST_H

#include <stdbool.h>

#include "member.h"
#include "nl.h"

/**
 * comm_collect_local() - append this host's communicator ranks to @l
 * @nl: netlink connection, opened if the driver is there; the caller closes it
 * @pubdir: directory of the library-published state files
 * @clean: remove stale files (writer gone) instead of listing them
 * @l: list to append to; the caller frees it, also on error
 *
 * The driver's registrations (when its family is there and knows comm-get)
 * merged with the published files of @pubdir: a live file and a
 * registration with the same hash and rank become one entry (source
 * "driver+shm").  With @nl->quiet nothing is printed.
 *
 * Return: %CTL_OK, the &enum ctl_exit of a failed driver dump (the files
 * are still listed), or %CTL_EIO (directory unreadable, no memory).
 */
int comm_collect_local(struct ctl_nl *nl, const char *pubdir, bool clean, struct member_list *l);

#endif
