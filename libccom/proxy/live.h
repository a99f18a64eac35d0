/* SPDX-License-Identifier: MIT */
/*
 * live.h - liveness of the hosts a communicator talks to over TCP
 * (proxy/live.c): a host that powers off or drops off the network sends no
 * FIN or RST, so nothing but silence tells its peers.
 *
 * The network transports hand over one idle TCP socket per remote peer
 * (net_socket's control socket, net_ib's liveness connection) with
 * ccom_live_watch(), which turns on the kernel's keepalive probes on it.
 * A live host's kernel answers every probe, however stalled or stopped the
 * peer process is, so only a host that is down or cut off leaves them
 * unanswered.  The waits of every room call ccom_live_check() while they
 * are stuck; it reads TCP_INFO of the watched sockets and declares a host
 * lost when one of its sockets has acknowledged nothing for
 * CCOM_PEER_TIMEOUT seconds while our probes went unanswered.  Then every
 * rank of that host is noted failed (ccomCommGetFailedRanks()), except one
 * whose own socket answered recently, and the operation fails with a
 * sentence naming them and the fix.
 */
#ifndef CCOM_PROXY_LIVE_H
#define CCOM_PROXY_LIVE_H

#include <stdbool.h>

struct ccomComm;
struct ccom_live;

/*
 * The registry of a comm's progress room, CCOM_PEER_TIMEOUT read and
 * checked here: 0 with *@out set, or -EINVAL / -ENOMEM after a sentence.
 */
int ccom_live_create(struct ccomComm *comm, struct ccom_live **out);
void ccom_live_destroy(struct ccom_live *lv);

/*
 * Arm keepalive probes on @fd (an idle TCP socket connected to @peer) and
 * watch it.  A failure only loses the early detection (logged at INFO).
 * Call ccom_live_unwatch() before closing @fd.  A comm whose progress room
 * is gone (teardown) ignores both.
 */
void ccom_live_watch(struct ccomComm *comm, int peer, int fd);
void ccom_live_unwatch(struct ccomComm *comm, int fd);

/*
 * From a stuck wait (the registry spaces the looks): 0, or -ECONNRESET
 * after ccom_set_last_error() naming the lost host and its ranks, which
 * are noted failed.
 */
int ccom_live_check(struct ccomComm *comm);

/*
 * A failure is known already (a local peer reported one, the deadline
 * passed, the comm failed): look at once, accepting half the silence, for
 * a lost host behind it.  Returns as ccom_live_check(); @quiet sets no
 * sentence (only notes the ranks).
 */
int ccom_live_confirm(struct ccomComm *comm, bool quiet);

#endif
