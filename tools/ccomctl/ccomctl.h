/* SPDX-License-Identifier: MIT */
/*
 * ccomctl.h - what the object files of ccomctl share: the context, the
 * command tables, argument helpers, netlink helpers (nl.c) and the exit
 * codes.
 */
#ifndef CCOM_TOOLS_CCOMCTL_H
#define CCOM_TOOLS_CCOMCTL_H

#include <stdbool.h>
#include <stdint.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "print.h"

/* Exit codes (documented in Documentation/ccomctl.rst). */
enum ctl_exit {
	CTL_OK = 0,
	CTL_EUSAGE = 1,		/* bad command line, or any other error */
	CTL_ENODRV = 2,		/* module not loaded / family missing / op unsupported */
	CTL_EPERM = 3,		/* permission denied (needs CAP_NET_ADMIN) */
	CTL_ENOENT = 4,		/* the requested object does not exist */
	CTL_EIO = 5,		/* netlink or ccomd communication failed */
};

struct nl_sock;

/**
 * struct ccomctl - one invocation
 * @pr: the printer (text or JSON)
 * @argc: arguments left to parse
 * @argv: the next argument
 * @sk: netlink socket, opened on first use
 * @family: numeric id of the nccom family
 * @pubdir: directory of the library-published state
 * @ccomd: address of the local ccomd (host:port)
 * @peers: comma-separated ccomd peers for `job`
 * @timeout_ms: per-request timeout of ccomd queries
 * @quiet: do not print netlink errors (optional sources)
 */
struct ccomctl {
	struct pr pr;
	int argc;
	char **argv;
	struct nl_sock *sk;
	int family;
	const char *pubdir;
	const char *ccomd;
	const char *peers;
	int timeout_ms;
	bool quiet;
};

/**
 * struct ctl_cmd - a table entry; the first entry of a table is the default
 * @name: keyword
 * @fn: handler, returns an &enum ctl_exit value
 */
struct ctl_cmd {
	const char *name;
	int (*fn)(struct ccomctl *c);
};

int ctl_exec(struct ccomctl *c, const struct ctl_cmd *cmds, const char *what,
	     void (*help)(void));
const char *ctl_next(struct ccomctl *c);
bool ctl_match(const char *arg, const char *kw);
int ctl_parse_u64(const char *what, const char *s, uint64_t *v);
int ctl_parse_u32(const char *what, const char *s, uint32_t *v);
int ctl_parse_keyval_u32(struct ccomctl *c, const char *kw, uint32_t *v, bool *set);

/* nl.c */
int ctl_nl_open(struct ccomctl *c);
void ctl_nl_close(struct ccomctl *c);
struct nl_msg *ctl_nl_msg(struct ccomctl *c, uint8_t cmd, int flags);
typedef int (*ctl_nl_cb)(struct ccomctl *c, struct nlattr **tb, void *arg);
int ctl_nl_request(struct ccomctl *c, struct nl_msg *msg, int maxattr, ctl_nl_cb cb, void *arg);
int ctl_nl_dump(struct ccomctl *c, uint8_t cmd, int maxattr, ctl_nl_cb cb, void *arg);
int ctl_nl_monitor(struct ccomctl *c, int maxattr, ctl_nl_cb cb, void *arg);
uint64_t ctl_nla_u64(struct nlattr *a);
/* "queue-error", "sem-timeout", "client-died" or "unknown". */
const char *ctl_event_name(uint32_t type);

/* commlist.c */
struct member_list;
/*
 * This host's communicator ranks: the driver's registrations merged with
 * the published files of c->pubdir (stale files removed if @clean).  0 or
 * an &enum ctl_exit; with c->quiet nothing is printed.
 */
int comm_collect_local(struct ccomctl *c, bool clean, struct member_list *l);

/* Object entry points. */
int cmd_dev(struct ccomctl *c);
int cmd_client(struct ccomctl *c);
int cmd_comm(struct ccomctl *c);
int cmd_queue(struct ccomctl *c);
int cmd_sem(struct ccomctl *c);
int cmd_stats(struct ccomctl *c);
int cmd_monitor(struct ccomctl *c);
int cmd_job(struct ccomctl *c);

#endif
