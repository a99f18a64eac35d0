/* SPDX-License-Identifier: MIT */
/*
 * ccomd.h - the per-host inspection daemon: configuration, the state the
 * daemon keeps (recent driver events, per-rank progress), and the entry
 * points of its files (ccomd.c: options and main loop, events.c: netlink
 * events, state.c: published-state tracking, web.c: the HTTP endpoints,
 * metrics.c: Prometheus text).  main() creates the one &struct ccomd and
 * hands it to every other file; there is no other daemon state (only
 * ccomd.c's signal flag).  The printer, the member/job logic and the
 * netlink plumbing are tools/lib/, shared with ccomctl.
 */
#ifndef CCOM_DAEMON_CCOMD_H
#define CCOM_DAEMON_CCOMD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jobcore.h"
#include "member.h"

#define CCOMD_DEFAULT_LISTEN	"127.0.0.1:9464"
#define CCOMD_MAX_EVENTS	256

/**
 * struct ccomd_config - settings from the command line and the config file
 * @listen: address:port of the HTTP server
 * @pubdir: directory of the library-published state
 * @peers: other hosts' ccomd (host:port), for /v1/job
 * @npeers: number of @peers
 * @interval_ms: period of the published-state scan
 * @peer_timeout_ms: per-peer HTTP timeout
 * @clean_stale: remove state files whose process is gone
 */
struct ccomd_config {
	char listen[128];
	char pubdir[256];
	struct job_peer peers[JOB_MAX_PEERS];
	int npeers;
	int interval_ms;
	int peer_timeout_ms;
	bool clean_stale;
};

/**
 * struct ccomd_event - one event of the driver's events group
 * @type: &enum nccom_nl_event_type
 * @ts_ns: CLOCK_MONOTONIC time of the event (kernel)
 * @client: client id
 * @pid: pid of the client's opener
 * @comm: command name
 * @dev: device (-1 if none)
 * @handle: queue or semaphore handle (0 if none)
 * @error: negative errno (queue-error)
 * @value: semaphore value waited for
 * @inflight: descriptors in flight (client-died)
 */
struct ccomd_event {
	uint32_t type;
	uint64_t ts_ns;
	uint32_t client;
	uint32_t pid;
	char comm[16];
	int32_t dev;
	uint32_t handle;
	int32_t error;
	uint64_t value;
	uint64_t inflight;
};

/**
 * struct ccomd_progress - last time a rank's completed-op counter moved
 * @hash: communicator
 * @rank: rank
 * @pid: process (a new process for the same rank starts over)
 * @completed: last value seen
 * @stage: last stage seen
 * @changed_ms: CLOCK_MONOTONIC ms of the last change of @completed or @stage
 * @seen: present in the latest scan
 */
struct ccomd_progress {
	uint64_t hash;
	int32_t rank;
	int32_t pid;
	uint64_t completed;
	uint32_t stage;
	int64_t changed_ms;
	bool seen;
};

struct MHD_Daemon;

/**
 * struct ccomd - the daemon, created by main() and passed to every file
 * @cfg: configuration; written before the threads start, then read-only
 * @web: the HTTP server (libmicrohttpd), NULL when not running; started and
 *	stopped by the main thread only
 * @lock: protects everything below
 * @events: ring of the last %CCOMD_MAX_EVENTS events
 * @nevents: events received since start (ring position)
 * @event_counts: events per type since start
 * @events_joined: the events group is joined (driver loaded)
 * @progress: per-rank progress tracking
 * @nprogress: used entries of @progress
 * @cap_progress: allocated entries of @progress
 * @scans: published-state scans done
 * @requests: HTTP requests served
 */
struct ccomd {
	struct ccomd_config cfg;
	struct MHD_Daemon *web;
	pthread_mutex_t lock;
	struct ccomd_event events[CCOMD_MAX_EVENTS];
	uint64_t nevents;
	uint64_t event_counts[3];
	bool events_joined;
	struct ccomd_progress *progress;
	size_t nprogress;
	size_t cap_progress;
	uint64_t scans;
	uint64_t requests;
};

/* events.c: start the thread that joins the events group (retries while the driver is absent). */
int ccomd_events_start(struct ccomd *d);
/* Print the recent events (JSON array) to @p. */
void ccomd_events_print(struct ccomd *d, struct pr *p);

/* state.c: scan the published state and update progress; 0 or -errno. */
int ccomd_state_scan(struct ccomd *d);
/*
 * This host's communicator ranks: driver registrations merged with the
 * published files (stale files removed if @clean).  0 or -EIO.
 */
int ccomd_members(struct ccomd *d, bool clean, struct member_list *l);
/* Seconds since @m's completed counter or stage last moved (-1 if unknown). */
double ccomd_state_idle_s(struct ccomd *d, const struct member *m);

/* metrics.c: write the Prometheus text exposition to @out. */
void ccomd_metrics(struct ccomd *d, FILE *out);

/* web.c: start/stop the HTTP server (libmicrohttpd) of @d->cfg.listen into @d->web. */
int ccomd_web_start(struct ccomd *d);
void ccomd_web_stop(struct ccomd *d);

#endif
