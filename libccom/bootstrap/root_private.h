/* SPDX-License-Identifier: MIT */
/*
 * root_private.h - what the three parts of the bootstrap root share: the
 * root's state (struct root), the connections that have not checked in
 * yet, and the calls between root.c (the poll loop, authentication and the
 * flat check-in), root_multi.c (several roots) and root_hier.c (host
 * leaders).  Only the root's own files include it.
 */
#ifndef CCOM_BOOTSTRAP_ROOT_PRIVATE_H
#define CCOM_BOOTSTRAP_ROOT_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <poll.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"

#define ROOT_HELLO_GRACE_US 10000000	/* per step: hello, answer to the challenge, check-in */
#define ROOT_MAX_PENDING 4096

/* What a connection that has not checked in yet reads next. */
enum root_stage {
	RP_HEAD,	/* magic and type: of an auth hello, or of a wire version 1 check-in */
	RP_AUTH,	/* the rest of struct ccom_bs_auth_hello */
	RP_V1,		/* the rest of a wire version 1 check-in (to be refused) */
	RP_ANSWER,	/* struct ccom_bs_auth_answer, after our challenge */
	RP_CHECKIN,	/* struct ccom_bs_hello (and ext), after the proof */
};

#define RP_HEAD_BYTES (sizeof(uint64_t) + sizeof(uint32_t))

struct root_pending {
	int fd;
	int64_t since;
	enum root_stage stage;
	size_t got;		/* bytes of the stage's message (hello + ext in RP_CHECKIN) */
	union ccom_sockaddr from;
	struct ccom_bs_auth_hello ah;
	uint8_t nonce[CCOM_BS_NONCE_BYTES];	/* our challenge's */
	struct ccom_bs_auth_answer ans;
	struct ccom_bs_hello hello;
	struct ccom_bs_hello_ext ext;
};

/*
 * One rank of the job.  The table is calloc()ed for nranks (at most
 * CCOM_BS_MAX_RANKS) and its zero state means "not in, no connection", so
 * that only the entries of ranks that check in are ever touched.
 */
struct root_rank {
	int fd;			/* its connection while @open_at (members: never) */
	int open_at;		/* 1 + its index in root->open while @fd is open, else 0 */
	int in;			/* checked in, itself or through its host leader */
	int leader;		/* checked in as a host leader (hierarchical): @fd carries members */
	int via;		/* members: the rank of their host leader */
	struct ccom_bs_hello hello;
};

struct root {
	int lfd;
	uint64_t magic;
	uint8_t key[CCOM_BS_KEY_BYTES];		/* the id's secret */
	uint8_t sub_key[CCOM_BS_KEY_BYTES];	/* root k > 0: its key towards root 0 */
	int have_sub_key;
	char refused[400];	/* the last check-in refused unauthenticated, for the timeout */
	int nranks;		/* fixed by the first check-in, -1 before */
	int first_rank;
	int count;
	struct root_rank *ranks;
	int64_t first_us;
	int64_t deadline;	/* report a timeout at this time (0: no rank yet) */
	int64_t linger;		/* after a failure, keep answering until then */
	int64_t latest;		/* when the last checked-in rank gives up by itself */
	int failed;		/* -errno once the job cannot start */
	int mode;		/* of the first check-in: 0 none yet, CCOM_BS_HELLO(_MULTI) or _HELLO_HOST */
	int nleaders;
	char msg[CCOM_BS_MAX_MSG];
	/* Several roots (nids > 1); nids 1: one root, lo 0, hi nranks. */
	int nids, idx, lo, hi;
	uint64_t root0_magic;
	union ccom_sockaddr root0;
	union ccom_sockaddr *addrs;	/* every rank's listen address as known here */
	int *sub_fd;			/* root 0: connection of each root k > 0, or -1 */
	int subs_in;
	int reported;			/* root k > 0: root 0 was told (table or failure) */
	struct root_pending *pend;	/* connections that have not checked in yet */
	int npend;
	int cap;
	int *open;			/* ranks whose connection is open (nranks slots) */
	int nopen;
	struct pollfd *pfd;		/* poll set of one round */
	int *who;			/* rank of each polled checked-in connection */
	int pfd_cap;
};

/* A host leader's check-in (hierarchical bootstrap), with one root or several. */
static inline int is_host(uint32_t type)
{
	return type == CCOM_BS_HELLO_HOST || type == CCOM_BS_HELLO_HOST_MULTI;
}

/* First rank of root @idx's range: ceil(idx * nranks / nids). */
static inline int range_lo(int idx, int nranks, int nids)
{
	return (int)(((int64_t)idx * nranks + nids - 1) / nids);
}

/* @r's connection, or -1. */
static inline int root_rank_fd(const struct root *rt, int r)
{
	return rt->ranks[r].open_at ? rt->ranks[r].fd : -1;
}

/* root.c: a checked-in rank's connection @fd is kept open (until answered). */
void ccom_bs_root_conn_add(struct root *rt, int r, int fd);
/* root.c: close @r's connection (if open). */
void ccom_bs_root_conn_close(struct root *rt, int r);

/* root.c: answers, failure, the job's shape. */
void ccom_bs_root_send_reply_data(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
				  const void *msg, size_t len);
void ccom_bs_root_send_reply(int fd, uint64_t magic, int err, const union ccom_sockaddr *next,
			     const char *msg);
void ccom_bs_root_fail(struct root *rt, int err, int64_t linger);
void ccom_bs_root_hangup(struct root *rt, int r);
int ccom_bs_root_setup(struct root *rt, int nranks, int nids, int idx);

/* root_multi.c: several roots (nids > 1). */
void ccom_bs_root_tell_subs(struct root *rt, int err);
void ccom_bs_root_sub_report(struct root *rt, int err);
int ccom_bs_root_check_multi(struct root *rt, const struct ccom_bs_hello *h, int nids, int idx);
void ccom_bs_root_subroot_in(struct root *rt, int i);
int ccom_bs_root_sub_exchange(struct root *rt);
void ccom_bs_root_send_tables(struct root *rt);

/* root_hier.c: host leaders (hierarchical bootstrap). */
void ccom_bs_root_all_in_hier(struct root *rt);
void ccom_bs_root_members_in(struct root *rt, int l);

#endif
