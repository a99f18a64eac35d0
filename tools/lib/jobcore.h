/* SPDX-License-Identifier: MIT */
/*
 * jobcore.h - "where is my job stuck?": gather the members of one
 * communicator from this host and from remote ccomd peers, and print which
 * ranks are present, missing and behind.  Shared by `ccomctl job` and
 * ccomd's /v1/job endpoint.
 */
#ifndef CCOM_TOOLS_LIB_JOBCORE_H
#define CCOM_TOOLS_LIB_JOBCORE_H

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

/**
 * job_parse_hash() - parse a 64-bit communicator hash given in hex
 * @s: hexadecimal, with or without 0x, at most 64 bits
 * @hash: result
 *
 * Return: 0 or -EINVAL.
 */
int job_parse_hash(const char *s, uint64_t *hash);

/**
 * job_parse_peers() - split "a:1,b:2" into @peers
 * @list: comma-separated host:port list
 * @peers: array of %JOB_MAX_PEERS entries, filled with the addresses
 *
 * Return: the number of peers, or -EINVAL (an empty or too long entry, one
 * without ':', or more than %JOB_MAX_PEERS).
 */
int job_parse_peers(const char *list, struct job_peer *peers);

/**
 * job_ccomd_peers() - the peers a ccomd was configured with (GET /v1/peers)
 * @ccomd: that ccomd's host:port
 * @timeout_ms: deadline of the whole request
 * @peers: array of %JOB_MAX_PEERS entries, filled with the addresses
 *
 * Return: the number of peers, or the -errno of http_get(), or -EPROTO (not
 * an array of host:port strings of at most %JOB_MAX_PEERS entries).
 */
int job_ccomd_peers(const char *ccomd, int timeout_ms, struct job_peer *peers);

/**
 * job_fetch_peer() - append @peer's members of @hash to @l (source "peer")
 * @peer: peer; @peer->err and @peer->members are set
 * @hash: communicator
 * @timeout_ms: deadline of the whole request
 * @l: list to append to
 *
 * Asks the peer's ccomd for GET /v1/comm/<hash>.
 */
void job_fetch_peer(struct job_peer *peer, uint64_t hash, int timeout_ms, struct member_list *l);

/**
 * job_parse_members() - append a JSON array of members (a /v1/comm body) to @l
 * @json: NUL-terminated body
 * @source: source name given to the members
 * @l: list to append to
 *
 * Return: 0, -EPROTO (not an array of members) or -ENOMEM.
 */
int job_parse_members(const char *json, const char *source, struct member_list *l);

/**
 * job_filter() - keep only the members of @hash, one per rank
 * @l: list, filtered in place
 * @hash: communicator
 *
 * Of duplicates of a rank the live, then the most advanced one stays.
 */
void job_filter(struct member_list *l, uint64_t hash);

/**
 * job_print() - print the summary (present, missing, behind) and the members
 * @p: printer
 * @hash: communicator
 * @l: its members, as job_filter() left them (sorted by hash and rank)
 * @peers: the peers queried, with their outcome
 * @npeers: number of @peers
 *
 * Return: true if every rank of the communicator is present.
 */
bool job_print(struct pr *p, uint64_t hash, struct member_list *l, const struct job_peer *peers,
	       int npeers);

#endif
