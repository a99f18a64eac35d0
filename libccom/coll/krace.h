/* SPDX-License-Identifier: MIT */
/*
 * krace.h - the kdev race in the data path (coll/krace.c), for
 * coll_dispatch(): which path an operation runs, and its time.
 */
#ifndef CCOM_COLL_KRACE_H
#define CCOM_COLL_KRACE_H

#include <stdint.h>

struct ccomComm;
struct ccom_op;
struct ccom_race;

/*
 * Which kdev path @op runs (*@kpath: enum ccom_kpath, -1 when not
 * measured; *@rp: its race or NULL), after the ranks' agreement if one is
 * due (collective: every rank reaches it at the same operation): 0 or
 * -errno.
 */
int ccom_krace_begin(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race **rp,
		     int *kpath);
/* The operation of race @r took @ns on this rank. */
void ccom_krace_end(struct ccomComm *comm, const struct ccom_op *op, struct ccom_race *r,
		    uint64_t ns);
uint64_t ccom_krace_now_ns(void);

#endif
