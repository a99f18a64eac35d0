/* SPDX-License-Identifier: MIT */
/*
 * jobcore.h - "where is my job stuck?": gather the members of one
 * communicator from this host and from remote ccomd peers, and print which
 * ranks are present, missing and behind.  Shared by `ccomctl job` and
 * ccomd's /v1/job endpoint.
 */
#ifndef CCOM_TOOLS_JOBCORE_H
#define CCOM_TOOLS_JOBCORE_H

#include <stdbool.h>
#include <stdint.h>

#include "member.h"
#include "print.h"

#define JOB_MAX_PEERS 64

/**
 * struct job_peer - outcome of one peer query
 * @addr: host:port of the peer's ccomd
 * @err: 0 or the -errno of the query
 * @members: members the peer returned
 */
struct job_peer {
	char addr[128];
	int err;
	int members;
};

/* Parse a 64-bit hash given as hex (with or without 0x); 0 or -EINVAL. */
int job_parse_hash(const char *s, uint64_t *hash);
/* Split "a:1,b:2" into @peers (at most JOB_MAX_PEERS); returns the count or -EINVAL. */
int job_parse_peers(const char *list, struct job_peer *peers);
/*
 * Ask @peer's ccomd for its members of @hash (GET /v1/comm/<hash>) and append
 * them to @l (source "peer").  Sets @peer->err and @peer->members.
 */
void job_fetch_peer(struct job_peer *peer, uint64_t hash, int timeout_ms, struct member_list *l);
/* Parse a JSON array of members (the /v1/comm body) into @l; 0 or -EPROTO. */
int job_parse_members(const char *json, const char *source, struct member_list *l);
/* Keep only the members of @hash, drop duplicates of a rank (keep the live/most advanced). */
void job_filter(struct member_list *l, uint64_t hash);
/* Print the summary and the members; returns true if every rank is present. */
bool job_print(struct pr *p, uint64_t hash, struct member_list *l, const struct job_peer *peers,
	       int npeers);

#endif
