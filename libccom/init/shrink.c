// SPDX-License-Identifier: MIT
/*
 * shrink.c - ccomCommShrink(): a communicator of the surviving ranks of
 * another, without a new unique id; and ccomCommGetFailedRanks(), the
 * ranks this rank knows to be gone (see
 * Documentation/libccom/fault-tolerance.rst).
 *
 * The shrink is an init (init.c) whose bootstrap stage starts with one
 * extra step, run on the init thread when nonblocking: the survivors'
 * agreement over the old communicator's bootstrap.  Each survivor sends
 * every other survivor one message {epoch, excluded-rank flags, and from
 * the lowest survivor (the leader) the id of a fresh root it started}, then
 * receives theirs in whatever order they come (a dead rank's closed
 * connection ends the wait at once, it never holds up the live ones).
 * Every message must carry the same excluded flags and epoch (the count of
 * shrinks this rank started on the old comm), or the survivor that sees
 * the difference fails with ccomInvalidUsage naming it; a message of an
 * older epoch is a leftover of a shrink that failed and is skipped.  All
 * shrinks of a comm use one tag, so a rank behind is told, not left
 * waiting on another tag.  The new
 * communicator's hash is derived from the old one, the epoch and the
 * excluded set, identically on every survivor; the leader's root has a new
 * random magic, so no connection of the old communicator (or of a rank
 * that was excluded) can join the new one.  Then the ordinary stages run
 * among the survivors only: no socket, segment or driver object of an
 * excluded rank is involved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/rebuild.h"
#include "core/comm.h"
#include "init/init.h"
#include "proxy/live.h"
#include "proxy/proxy.h"
#include "proxy/stream.h"
#include "transport/shm.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define SHRINK_TAG_BASE 0x9000	/* bootstrap tag of the agreement, below the user base */
#define SHRINK_MSG_MAGIC 0x636f6d73686b3031ULL
#define SHRINK_IDLE_WAIT_US 100000	/* for an op that completed to be retired */

/* One survivor's agreement message (followed by old nranks excluded flags). */
struct shrink_msg {
	uint64_t magic;
	int32_t old_rank;
	int32_t epoch;		/* the old comm's shrink_count at the call */
	int32_t nexclude;
	int32_t id_state;	/* leader: 1 id valid, -1 no root; others 0 */
	ccomUniqueId id;
	unsigned char excluded[];
};

/* What the shrink's init needs from the call (freed by shrink_prepare). */
struct shrink_job {
	struct ccomComm *old;
	int epoch;
	int nsurv;
	int *surv;		/* old ranks of the survivors, ascending */
	struct shrink_msg *msg;	/* this rank's message */
	size_t msg_size;
	char data[];
};

/* "rank 2 is excluded by rank 0 but not by rank 3"-style difference of two flag sets. */
static void shrink_disagree(const struct shrink_job *j, const struct shrink_msg *theirs)
{
	const struct shrink_msg *mine = j->msg;
	int r;

	if (theirs->epoch != mine->epoch) {
		ccom_set_last_error("ccomCommShrink: rank %d is at shrink %d of this communicator but rank %d at shrink %d; every survivor must make the same sequence of ccomCommShrink calls on a communicator",
				    mine->old_rank, mine->epoch, theirs->old_rank, theirs->epoch);
		return;
	}
	for (r = 0; r < j->old->nranks; r++) {
		if (mine->excluded[r] == theirs->excluded[r])
			continue;
		ccom_set_last_error("ccomCommShrink: the survivors pass different excludeRanks: rank %d excludes rank %d but rank %d does not; pass the same list on every survivor (from ccomCommGetFailedRanks after the failure)",
				    mine->excluded[r] ? mine->old_rank : theirs->old_rank, r,
				    mine->excluded[r] ? theirs->old_rank : mine->old_rank);
		return;
	}
}

/*
 * The lists differ: ranks that this rank excludes but @theirs does not
 * wait for this rank's message (in their view it is a survivor).  Send it
 * to them too (best effort), so that they see the difference and fail at
 * once instead of at the bootstrap timeout.
 */
static void shrink_tell_excluded(const struct shrink_job *j, const struct shrink_msg *theirs)
{
	char keep[1024];
	int r;

	snprintf(keep, sizeof(keep), "%s", ccom_last_error());
	for (r = 0; r < j->old->nranks; r++)
		if (r != j->old->rank && r != theirs->old_rank && j->msg->excluded[r] &&
		    !theirs->excluded[r])
			ccom_bootstrap_send(j->old->bootstrap, r, SHRINK_TAG_BASE, j->msg, j->msg_size);
	ccom_set_last_error_quiet(keep);
}

/* Send to every other survivor (all of them, even past a failure), then receive theirs. */
static int shrink_exchange(struct ccomComm *comm, struct shrink_job *j)
{
	struct ccom_bootstrap *bs = j->old->bootstrap;
	int tag = SHRINK_TAG_BASE;
	int me = j->old->rank, i, k, from, rc = 0, got_id = 0;
	unsigned char *got = calloc((size_t)j->nsurv, 1);
	struct shrink_msg *in = malloc(j->msg_size);
	char first[512] = "";

	if (!got || !in) {
		free(got);
		free(in);
		ccom_set_last_error("ccomCommShrink: out of memory for the survivors' agreement");
		return -ENOMEM;
	}
	for (i = 0; i < j->nsurv; i++) {
		int r;

		if (j->surv[i] == me) {
			got[i] = 1;
			continue;
		}
		r = ccom_bootstrap_send(bs, j->surv[i], tag, j->msg, j->msg_size);
		if (r && !rc) {
			rc = r;
			snprintf(first, sizeof(first), "%s", ccom_last_error());
		}
	}
	if (rc) {
		ccom_set_last_error("ccomCommShrink: rank %d cannot reach a survivor: %s; if that rank is dead, add it to excludeRanks on every survivor",
				    me, first);
		goto out;
	}
	if (me == j->surv[0])
		got_id = 1;
	for (k = 1; k < j->nsurv; k++) {
		rc = ccom_bootstrap_recv_any(bs, j->surv, j->nsurv, got, tag, in, j->msg_size, &from);
		if (!rc && in->magic == SHRINK_MSG_MAGIC && in->epoch < j->msg->epoch) {
			/* Left over from an earlier shrink of this comm that failed: wait on. */
			for (i = 0; i < j->nsurv && j->surv[i] != from; i++)
				;
			if (i < j->nsurv)
				got[i] = 0;
			k--;
			continue;
		}
		if (rc) {
			snprintf(first, sizeof(first), "%s", ccom_last_error());
			if (rc == -ECONNRESET && from >= 0)
				ccom_set_last_error("ccomCommShrink: survivor rank %d is gone (%s); add it to excludeRanks on every survivor and shrink again",
						    from, first);
			else
				ccom_set_last_error("ccomCommShrink: the survivors' agreement failed: %s",
						    first);
			goto out;
		}
		if (in->magic != SHRINK_MSG_MAGIC || in->old_rank != from) {
			/* The peer's bytes, not ours: ccomRemoteError. */
			ccom_set_last_error("ccomCommShrink: rank %d sent a malformed agreement message (magic %#llx, rank %d; want %#llx, %d); use one libccom build on every rank",
					    from, (unsigned long long)in->magic, in->old_rank,
					    (unsigned long long)SHRINK_MSG_MAGIC, from);
			rc = -EBADMSG;
			goto out;
		}
		if (in->epoch != j->msg->epoch || in->nexclude != j->msg->nexclude ||
		    memcmp(in->excluded, j->msg->excluded, (size_t)j->old->nranks)) {
			shrink_disagree(j, in);
			shrink_tell_excluded(j, in);
			rc = -EPERM;
			goto out;
		}
		if (from == j->surv[0]) {
			if (in->id_state != 1) {
				ccom_set_last_error("ccomCommShrink: the lowest survivor, rank %d, could not start the new communicator's root (see its log); shrink again",
						    from);
				rc = -EIO;
				goto out;
			}
			j->msg->id = in->id;
			got_id = 1;
		}
	}
	if (!got_id || j->msg->id_state < 0) {
		ccom_set_last_error("ccomCommShrink: no id from the lowest survivor, rank %d", j->surv[0]);
		rc = -EIO;
		goto out;
	}
	comm->id = j->msg->id;
	comm->magic = ccom_bootstrap_id_magic(&comm->id);
out:
	free(got);
	free(in);
	return rc;
}

void ccom_init_retire_root(const ccomUniqueId *id, const char *fn)
{
	struct ccom_bootstrap_args a = { .id = id, .rank = 0, .nranks = 1 };
	struct ccom_bootstrap *bs = NULL;
	atomic_int never = 0;
	char why[1024];

	snprintf(why, sizeof(why), "%s", ccom_last_error());
	a.start_us = ccom_now_us();
	a.timeout_ms = 2000;
	a.abort = &never;
	if (ccom_bootstrap_init(&a, &bs) == 0)
		ccom_bootstrap_close(bs);
	else
		ccom_info(CCOM_SUBSYS_INIT, "%s: the unused root did not end at once (%s); it ends at the bootstrap timeout",
			  fn, ccom_last_error());
	ccom_set_last_error_quiet(why);
}

/* comm->init_prepare of a shrink: the agreement under the new comm's abort flag. */
static int shrink_prepare(struct ccomComm *comm)
{
	struct shrink_job *j = comm->init_prepare_arg;
	const atomic_int *prev;
	int64_t t0 = ccom_now_us();
	int rc;

	comm->init_prepare_arg = NULL;
	/* The old comm's flag is set for good after a revoke: wait on ours instead. */
	prev = ccom_bootstrap_swap_abort(j->old->bootstrap, &comm->abort_flag);
	rc = shrink_exchange(comm, j);
	ccom_bootstrap_swap_abort(j->old->bootstrap, prev);
	if (rc && j->msg->id_state == 1)
		ccom_init_retire_root(&j->msg->id, "ccomCommShrink");	/* only the leader holds a valid id */
	if (!rc)
		ccom_info(CCOM_SUBSYS_INIT, "ccomCommShrink: old rank %d -> rank %d of %d: survivors agreed in %lld us",
			  j->old->rank, comm->rank, comm->nranks, (long long)(ccom_now_us() - t0));
	free(j);
	return rc;
}

/* Every check of the arguments, in order, with one sentence each; fills @excluded. */
static int shrink_check_args(struct ccomComm *comm, const int *ex, int nex, ccomComm_t *newcomm,
			     int flags, unsigned char *excluded)
{
	int i;

	if (!ccom_comm_valid(comm)) {
		ccom_set_last_error("ccomCommShrink: invalid communicator %p (NULL, destroyed or corrupted)",
				    (void *)comm);
		return -EINVAL;
	}
	if (!newcomm) {
		ccom_set_last_error("ccomCommShrink: newcomm is NULL; pass where the new communicator goes");
		return -EINVAL;
	}
	*newcomm = NULL;
	if (flags != CCOM_SHRINK_DEFAULT && flags != CCOM_SHRINK_ABORT) {
		ccom_set_last_error("ccomCommShrink: flags %#x are not defined; pass CCOM_SHRINK_DEFAULT or CCOM_SHRINK_ABORT",
				    (unsigned int)flags);
		return -EINVAL;
	}
	if (nex < 0 || nex >= comm->nranks) {
		ccom_set_last_error("ccomCommShrink: nExclude %d is out of range for %d ranks (0 to %d: at least one rank must survive)",
				    nex, comm->nranks, comm->nranks - 1);
		return -EINVAL;
	}
	if (nex > 0 && !ex) {
		ccom_set_last_error("ccomCommShrink: excludeRanks is NULL but nExclude is %d", nex);
		return -EINVAL;
	}
	for (i = 0; i < nex; i++) {
		if (ex[i] < 0 || ex[i] >= comm->nranks) {
			ccom_set_last_error("ccomCommShrink: excludeRanks[%d] = %d is not a rank of this communicator (0 to %d)",
					    i, ex[i], comm->nranks - 1);
			return -EINVAL;
		}
		if (excluded[ex[i]]) {
			ccom_set_last_error("ccomCommShrink: rank %d is listed twice in excludeRanks (entry %d); list each rank once",
					    ex[i], i);
			return -EINVAL;
		}
		if (ex[i] == comm->rank) {
			ccom_set_last_error("ccomCommShrink: rank %d excludes itself (excludeRanks[%d]); an excluded rank does not call ccomCommShrink, it destroys its communicator",
					    comm->rank, i);
			return -EINVAL;
		}
		excluded[ex[i]] = 1;
	}
	return 0;
}

/* The old comm must have finished init and not be finalizing; idle unless ABORT. */
static int shrink_check_state(struct ccomComm *comm, int flags)
{
	int busy, pending;

	pthread_mutex_lock(&comm->lock);
	busy = comm->init_running || comm->finalizing;
	pthread_mutex_unlock(&comm->lock);
	if (busy) {
		ccom_set_last_error("ccomCommShrink: rank %d: the communicator is still initialising or finalizing; wait until ccomCommGetAsyncError is no longer ccomInProgress",
				    comm->rank);
		return -EPERM;
	}
	if (!comm->bootstrap || !comm->proxy) {
		ccom_set_last_error("ccomCommShrink: rank %d: the communicator's init failed (%s), so it has no ranks to shrink; create a new communicator",
				    comm->rank, comm->last_error[0] ? comm->last_error : "no reason recorded");
		return -EPERM;
	}
	if (flags & CCOM_SHRINK_ABORT)
		return 0;
	pending = ccom_stream_queue_settle(comm, SHRINK_IDLE_WAIT_US);
	if (pending > 0) {
		ccom_set_last_error("ccomCommShrink: rank %d: %d operation(s) are still queued or running on the communicator; synchronize first, or pass CCOM_SHRINK_ABORT to revoke them",
				    comm->rank, pending);
		return -EPERM;
	}
	return 0;
}

static uint64_t shrink_comm_hash(const struct ccomComm *old, int epoch, const unsigned char *ex)
{
	uint64_t h = ccom_hash_bytes(old->comm_hash, "shrink", 6);

	h = ccom_hash_bytes(h, &epoch, sizeof(epoch));
	h = ccom_hash_bytes(h, ex, (size_t)old->nranks);
	return ccom_hash_mix(h) | 1;	/* never 0: 0 means "derive from the id" */
}

ccomResult_t ccomCommShrink(ccomComm_t comm, const int *excludeRanks, int nExclude,
			    ccomComm_t *newcomm, ccomConfig_t *config, int flags)
{
	struct ccom_init_args a;
	struct shrink_job *j = NULL;
	unsigned char *excluded = NULL;
	size_t msg_size;
	ccomResult_t res;
	int rc, i, m, me = -1;

	ccom_clear_last_error();
	if (ccom_comm_valid(comm)) {
		excluded = calloc((size_t)comm->nranks, 1);
		if (!excluded) {
			ccom_set_last_error("ccomCommShrink: out of memory");
			return ccomSystemError;
		}
	}
	rc = shrink_check_args(comm, excludeRanks, nExclude, newcomm, flags, excluded);
	if (!rc)
		rc = shrink_check_state(comm, flags);
	memset(&a, 0, sizeof(a));
	a.start_us = ccom_now_us();
	if (!rc)
		rc = ccom_config_validate(config ? config : &comm->config, &a.config);
	if (rc) {
		free(excluded);
		return ccom_result_from_errno(rc);
	}
	m = comm->nranks - nExclude;
	msg_size = sizeof(struct shrink_msg) + (size_t)comm->nranks;
	j = calloc(1, sizeof(*j) + (size_t)m * sizeof(int) + msg_size + sizeof(uint64_t));
	if (!j) {
		free(excluded);
		ccom_set_last_error("ccomCommShrink: out of memory");
		return ccomSystemError;
	}
	j->old = comm;
	j->nsurv = m;
	j->surv = (int *)j->data;
	j->msg = (struct shrink_msg *)(j->data + (((size_t)m * sizeof(int) + 7) & ~(size_t)7));
	j->msg_size = msg_size;
	for (i = 0, m = 0; i < comm->nranks; i++) {
		if (excluded[i])
			continue;
		if (i == comm->rank)
			me = m;
		j->surv[m++] = i;
	}
	if (flags & CCOM_SHRINK_ABORT) {
		res = ccomCommRevoke(comm, CCOM_REVOKE_DEFAULT);
		if (res != ccomSuccess) {
			free(j);
			free(excluded);
			return res;
		}
	}
	/* Counted once the arguments passed: every survivor counts the same calls. */
	j->epoch = comm->shrink_count++;
	j->msg->magic = SHRINK_MSG_MAGIC;
	j->msg->old_rank = comm->rank;
	j->msg->epoch = j->epoch;
	j->msg->nexclude = nExclude;
	memcpy(j->msg->excluded, excluded, (size_t)comm->nranks);
	if (me == 0) {
		/* The leader hosts the new root; its failure reaches the others in the message. */
		j->msg->id_state = ccom_bootstrap_new_root(&j->msg->id) ? -1 : 1;
		if (j->msg->id_state < 0)
			ccom_warn("ccomCommShrink: rank %d cannot start the new root: %s", comm->rank,
				  ccom_last_error());
	}
	a.nranks = j->nsurv;
	a.rank = me;
	a.comm_hash = shrink_comm_hash(comm, j->epoch, excluded);
	a.prepare = shrink_prepare;
	a.prepare_arg = j;
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommShrink: rank %d of %d -> rank %d of %d (%d excluded, %s)",
		  comm->rank, comm->nranks, me, j->nsurv, nExclude,
		  flags & CCOM_SHRINK_ABORT ? "old comm revoked" : "old comm idle");
	free(excluded);
	res = ccom_comm_init_rank(newcomm, &a);
	if (!*newcomm)
		free(j);	/* no comm took it over */
	return res;
}

ccomResult_t ccomCommGetFailedRanks(ccomComm_t comm, int *ranks, int *n)
{
	int cap;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm)) {
		ccom_set_last_error("ccomCommGetFailedRanks: invalid communicator %p (NULL, destroyed or corrupted)",
				    (void *)comm);
		return ccomInvalidArgument;
	}
	if (!n || *n < 0 || (*n > 0 && !ranks)) {
		ccom_set_last_error("ccomCommGetFailedRanks: n is NULL or *n is negative, or ranks is NULL with *n = %d; *n is the room in ranks",
				    n ? *n : 0);
		return ccomInvalidArgument;
	}
	cap = *n;
	/* Ranks of this host: a process that is gone now counts even before an op saw it. */
	if (atomic_load(&comm->async_result) != ccomInProgress)
		ccom_shm_note_dead_peers(comm->shm);
	/*
	 * A failed comm: remote hosts whose sockets are silent now count too
	 * (a local peer that broke passed on only the first rank it saw fail).
	 */
	if (atomic_load(&comm->async_result) != ccomInProgress &&
	    atomic_load(&comm->async_result) != ccomSuccess)
		ccom_live_confirm(comm, true);
	*n = ccom_proxy_failed_ranks(comm, ranks, cap);
	return ccomSuccess;
}
