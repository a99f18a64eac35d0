/* SPDX-License-Identifier: MIT */
/*
 * ccomctl.h - what the object files of ccomctl share: the context, the
 * command tables and the argument helpers.  The netlink plumbing, the exit
 * codes, the printer and the member/job logic are in tools/lib/, which
 * ccomd links too.
 */
#ifndef CCOM_TOOLS_CCOMCTL_H
#define CCOM_TOOLS_CCOMCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl.h"
#include "print.h"

/**
 * struct ccomctl - one invocation
 * @pr: the printer (text or JSON)
 * @argc: arguments left to parse
 * @argv: the next argument
 * @nl: netlink connection to the nccom family, opened on first use
 * @pubdir: directory of the library-published state
 * @ccomd: address of the local ccomd (host:port)
 * @ccomd_given: @ccomd came from -s (so it must answer)
 * @peers: comma-separated ccomd peers for `job`
 * @timeout_ms: per-request timeout of ccomd queries
 */
struct ccomctl {
	struct pr pr;
	int argc;
	char **argv;
	struct ctl_nl nl;
	const char *pubdir;
	const char *ccomd;
	bool ccomd_given;
	const char *peers;
	int timeout_ms;
};

/* The invocation that owns @nl (the first argument of every netlink callback). */
static inline struct ccomctl *ctl_of(struct ctl_nl *nl)
{
	return (struct ccomctl *)((char *)nl - offsetof(struct ccomctl, nl));
}

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

/* Object entry points. */
int cmd_dev(struct ccomctl *c);
int cmd_client(struct ccomctl *c);
int cmd_comm(struct ccomctl *c);
int cmd_queue(struct ccomctl *c);
int cmd_sem(struct ccomctl *c);
int cmd_stats(struct ccomctl *c);
int cmd_monitor(struct ccomctl *c);
int cmd_job(struct ccomctl *c);
int cmd_flight(struct ccomctl *c);

#endif
