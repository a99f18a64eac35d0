// SPDX-License-Identifier: MIT
/*
 * grow.c - ccomCommGetUniqueId() and ccomCommGrow(): a larger
 * communicator made of an existing one's ranks (which keep their ranks)
 * and new processes (which take the ranks from the old size up), NCCL
 * 2.29's shape (see Documentation/libccom/fault-tolerance.rst).
 *
 * ccomCommGetUniqueId() starts a fresh bootstrap root on the calling rank
 * (the coordinator) and returns a *grow id*: an id marked as such that
 * also carries the old size and the grown communicator's hash (derived
 * from the old comm's hash and its count of grows, so that the existing
 * ranks compute the same hash without the id).  The id is handed to the
 * new processes out of band.  Its root is listening before the id exists,
 * so a new rank whose connection is refused knows the id was used (the
 * root ends once a grow's ranks have their answer) and fails at once
 * instead of retrying until the timeout.
 *
 * ccomCommGrow() on an existing rank is an init (init.c) whose bootstrap
 * stage starts with an agreement over the old communicator's bootstrap,
 * under the new comm's abort flag: one all-gather of {epoch, nRanks,
 * whether this rank passes an id, what it found the id to be, the id}.
 * Every existing rank checks the same table in the same order, so all
 * fail with the same sentence (nRanks differ, no id, two ids, a used or
 * foreign id, a different grow count) or all take the coordinator's id;
 * then the ordinary stages run with the new ranks, which check in with
 * the same root.  A coordinator whose grow fails after the id was taken
 * retires its root, so nothing waits on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/rebuild.h"
#include "core/comm.h"
#include "init/init.h"
#include "proxy/stream.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"

#define GROW_MSG_MAGIC 0x636f6d67726f7731ULL	/* "comgrow1" */
#define GROW_IDLE_WAIT_US 100000	/* for an op that completed to be retired */

/* What an existing rank found the id it was passed to be. */
enum grow_id_check {
	GROW_ID_NONE = 0,	/* it passed NULL */
	GROW_ID_OK,		/* the unused id of this rank's ccomCommGetUniqueId */
	GROW_ID_USED,		/* that id, but a grow already used it */
	GROW_ID_FOREIGN,	/* any other id */
};

/* One existing rank's slot of the agreement all-gather. */
struct grow_entry {
	uint64_t magic;
	int32_t old_rank;
	int32_t epoch;		/* the old comm's grow_count at the call */
	int32_t nranks;		/* the nRanks it passed */
	int32_t id_check;	/* enum grow_id_check */
	ccomUniqueId id;
};

/* What the grow's init needs from the call (freed by grow_prepare). */
struct grow_job {
	struct ccomComm *old;
	int has_id;			/* this rank passed an id (in all[old->rank].id) */
	struct grow_entry all[];	/* old->nranks slots */
};

static uint64_t grow_hash(const struct ccomComm *old, int epoch)
{
	uint64_t h = ccom_hash_bytes(old->comm_hash, "grow", 4);

	h = ccom_hash_bytes(h, &epoch, sizeof(epoch));
	return ccom_hash_mix(h) | 1;	/* never 0: 0 means "derive from the id" */
}

/* The id's rank: -1 when none passes one, -2 when several do (then *@second). */
static int grow_coordinator(const struct grow_job *j, int *second)
{
	int r, c = -1;

	for (r = 0; r < j->old->nranks; r++) {
		if (j->all[r].id_check == GROW_ID_NONE)
			continue;
		if (c >= 0) {
			*second = r;
			return -2 - c;
		}
		c = r;
	}
	return c;
}

/* Check the all-gathered table; identical on every existing rank, so is the verdict. */
static int grow_agree(struct ccomComm *comm, const struct grow_job *j)
{
	const struct grow_entry *e = j->all;
	int n = j->old->nranks, r, c, second = -1;

	for (r = 0; r < n; r++) {
		if (e[r].magic != GROW_MSG_MAGIC || e[r].old_rank != r) {
			/* The peer's bytes, not ours: ccomRemoteError. */
			ccom_set_last_error("ccomCommGrow: rank %d sent a malformed agreement message (magic %#llx, rank %d; want %#llx, %d); use one libccom build on every rank",
					    r, (unsigned long long)e[r].magic, e[r].old_rank,
					    (unsigned long long)GROW_MSG_MAGIC, r);
			return -EBADMSG;
		}
	}
	for (r = 1; r < n; r++) {
		if (e[r].epoch != e[0].epoch) {
			ccom_set_last_error("ccomCommGrow: rank 0 is at grow %d of this communicator but rank %d at grow %d; every existing rank must make the same sequence of ccomCommGrow calls on it",
					    e[0].epoch, r, e[r].epoch);
			return -EPERM;
		}
		if (e[r].nranks != e[0].nranks) {
			ccom_set_last_error("ccomCommGrow: the existing ranks pass different nRanks: rank 0 passes %d but rank %d passes %d; pass the same new total everywhere",
					    e[0].nranks, r, e[r].nranks);
			return -EPERM;
		}
	}
	c = grow_coordinator(j, &second);
	if (c == -1) {
		ccom_set_last_error("ccomCommGrow: none of the %d existing ranks passes the id; the rank that called ccomCommGetUniqueId passes it, the others NULL",
				    n);
		return -EPERM;
	}
	if (c < -1) {
		ccom_set_last_error("ccomCommGrow: ranks %d and %d both pass an id; only the rank that called ccomCommGetUniqueId passes it, the others NULL",
				    -2 - c, second);
		return -EPERM;
	}
	if (e[c].id_check == GROW_ID_USED) {
		ccom_set_last_error("ccomCommGrow: rank %d passes an id that a ccomCommGrow already used; an id serves one grow: call ccomCommGetUniqueId again and hand the new id to the joining ranks",
				    c);
		return -EPERM;
	}
	if (e[c].id_check != GROW_ID_OK) {
		ccom_set_last_error("ccomCommGrow: rank %d passes an id that its ccomCommGetUniqueId on this communicator did not return (another communicator's, or ccomGetUniqueId's); pass the id ccomCommGetUniqueId gave for this communicator",
				    c);
		return -EINVAL;
	}
	comm->id = e[c].id;
	comm->magic = ccom_bootstrap_id_magic(&comm->id);
	return 0;
}

/*
 * What an existing rank's @id is to it; a valid one is used from now on.
 * Taken when the agreement starts, so that a grow whose init never got
 * there (aborted at once) leaves the id to ccom_grow_forget().
 */
static enum grow_id_check grow_take_id(struct ccomComm *comm, const ccomUniqueId *id)
{
	enum grow_id_check c = GROW_ID_FOREIGN;

	pthread_mutex_lock(&comm->lock);
	if (comm->grow_id_state && !memcmp(id, &comm->grow_id, sizeof(*id))) {
		c = comm->grow_id_state == 1 ? GROW_ID_OK : GROW_ID_USED;
		comm->grow_id_state = 2;
	}
	pthread_mutex_unlock(&comm->lock);
	return c;
}

/* comm->init_prepare of a grow on an existing rank: the agreement, then the id is ours. */
static int grow_prepare(struct ccomComm *comm)
{
	struct grow_job *j = comm->init_prepare_arg;
	const struct grow_entry *me = &j->all[j->old->rank];
	const atomic_int *prev;
	int64_t t0 = ccom_now_us();
	int rc;

	comm->init_prepare_arg = NULL;
	if (j->has_id)
		j->all[j->old->rank].id_check = grow_take_id(j->old, &me->id);
	prev = ccom_bootstrap_swap_abort(j->old->bootstrap, &comm->abort_flag);
	rc = ccom_bootstrap_allgather(j->old->bootstrap, j->all, sizeof(j->all[0]));
	ccom_bootstrap_swap_abort(j->old->bootstrap, prev);
	if (rc) {
		char why[900];

		snprintf(why, sizeof(why), "%s", ccom_last_error());
		ccom_set_last_error("ccomCommGrow: the existing ranks' agreement failed: %s; every existing rank must call ccomCommGrow (a dead one must be shrunk away first)",
				    why);
	} else {
		rc = grow_agree(comm, j);
	}
	if (rc && me->id_check == GROW_ID_OK)
		ccom_init_retire_root(&me->id, "ccomCommGrow");	/* this rank's root: end it */
	if (!rc)
		ccom_info(CCOM_SUBSYS_INIT, "ccomCommGrow: rank %d of %d -> rank %d of %d: existing ranks agreed in %lld us",
			  j->old->rank, j->old->nranks, comm->rank, comm->nranks,
			  (long long)(ccom_now_us() - t0));
	free(j);
	return rc;
}

/* The old comm must have finished init, not be finalizing, and be idle. */
static int grow_check_state(struct ccomComm *comm, const char *fn)
{
	int busy, pending;

	pthread_mutex_lock(&comm->lock);
	busy = comm->init_running || comm->finalizing;
	pthread_mutex_unlock(&comm->lock);
	if (busy) {
		ccom_set_last_error("%s: rank %d: the communicator is still initialising or finalizing; wait until ccomCommGetAsyncError is no longer ccomInProgress",
				    fn, comm->rank);
		return -EPERM;
	}
	if (!comm->bootstrap || !comm->proxy ||
	    atomic_load(&comm->async_result) != ccomSuccess) {
		ccom_set_last_error("%s: rank %d: the communicator is not healthy (%s); grow a healthy one (after a failure, ccomCommShrink first)",
				    fn, comm->rank,
				    comm->last_error[0] ? comm->last_error :
				    ccomGetErrorString(atomic_load(&comm->async_result)));
		return -EPERM;
	}
	pending = ccom_stream_queue_settle(comm, GROW_IDLE_WAIT_US);
	if (pending > 0) {
		ccom_set_last_error("%s: rank %d: %d operation(s) are still queued or running on the communicator; synchronize first",
				    fn, comm->rank, pending);
		return -EPERM;
	}
	return 0;
}

ccomResult_t ccomCommGetUniqueId(ccomComm_t comm, ccomUniqueId *uniqueId)
{
	int rc, state;

	ccom_clear_last_error();
	if (!ccom_comm_valid(comm) || !uniqueId) {
		ccom_set_last_error("ccomCommGetUniqueId: invalid communicator %p or NULL uniqueId %p",
				    (void *)comm, (void *)uniqueId);
		return ccomInvalidArgument;
	}
	rc = grow_check_state(comm, "ccomCommGetUniqueId");
	if (rc)
		return ccom_result_from_errno(rc);
	pthread_mutex_lock(&comm->lock);
	state = comm->grow_id_state;
	pthread_mutex_unlock(&comm->lock);
	if (state == 1) {
		ccom_set_last_error("ccomCommGetUniqueId: rank %d already handed out a grow id that no ccomCommGrow used yet; one grow at a time: pass that id to ccomCommGrow",
				    comm->rank);
		return ccomInvalidUsage;
	}
	ccom_global_init();
	rc = ccom_bootstrap_new_grow_root(comm->nranks, grow_hash(comm, comm->grow_count),
					  uniqueId);
	if (rc)
		return ccom_result_from_errno(rc);
	pthread_mutex_lock(&comm->lock);
	comm->grow_id = *uniqueId;
	comm->grow_id_state = 1;
	pthread_mutex_unlock(&comm->lock);
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommGetUniqueId: rank %d of %d started the root of grow %d",
		  comm->rank, comm->nranks, comm->grow_count);
	return ccomSuccess;
}

void ccom_grow_forget(struct ccomComm *comm)
{
	if (comm->grow_id_state != 1)
		return;
	comm->grow_id_state = 0;
	ccom_init_retire_root(&comm->grow_id, "ccomCommDestroy (unused grow id)");
}

/* A new process: comm NULL, the grow id, its rank from the old size up. */
static ccomResult_t grow_new_rank(int nranks, const ccomUniqueId *id, int rank,
				  ccomComm_t *newcomm, ccomConfig_t *config)
{
	struct ccom_init_args a;
	int base, rc;
	uint64_t hash;

	if (!id) {
		ccom_set_last_error("ccomCommGrow: a joining rank (comm NULL) passes the id that ccomCommGetUniqueId returned on the existing communicator, not NULL");
		return ccomInvalidArgument;
	}
	if (ccom_bootstrap_id_grow_info(id, &base, &hash)) {
		ccom_set_last_error("ccomCommGrow: the id is not from ccomCommGetUniqueId (an id of ccomGetUniqueId, or not an id); a joining rank needs the id the existing communicator's coordinator got from ccomCommGetUniqueId");
		return ccomInvalidArgument;
	}
	if (nranks <= base) {
		ccom_set_last_error("ccomCommGrow: nRanks %d is not larger than the %d ranks of the communicator that grows; nRanks is the new total",
				    nranks, base);
		return ccomInvalidArgument;
	}
	if (rank < base || rank >= nranks) {
		ccom_set_last_error("ccomCommGrow: rank %d is out of range for a joining rank: the existing ranks keep 0 to %d, the joining ranks take %d to %d",
				    rank, base - 1, base, nranks - 1);
		return ccomInvalidArgument;
	}
	memset(&a, 0, sizeof(a));
	a.start_us = ccom_now_us();
	rc = ccom_config_validate(config, &a.config);
	if (rc)
		return ccom_result_from_errno(rc);
	a.nranks = nranks;
	a.rank = rank;
	a.id = *id;
	a.comm_hash = hash;
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommGrow: joining as rank %d of %d (%d existing)", rank,
		  nranks, base);
	return ccom_comm_init_rank(newcomm, &a);
}

static ccomResult_t grow_existing(struct ccomComm *comm, int nranks, const ccomUniqueId *id,
				  int rank, ccomComm_t *newcomm, ccomConfig_t *config)
{
	struct ccom_init_args a;
	struct grow_job *j;
	struct grow_entry *me;
	ccomResult_t res;
	int rc, epoch;

	if (!ccom_comm_valid(comm)) {
		ccom_set_last_error("ccomCommGrow: invalid communicator %p (destroyed or corrupted); a joining rank passes NULL",
				    (void *)comm);
		return ccomInvalidArgument;
	}
	if (rank != -1) {
		ccom_set_last_error("ccomCommGrow: rank %d of the existing communicator passes rank %d; existing ranks pass -1 (they keep their rank), only joining ranks (comm NULL) pass theirs",
				    comm->rank, rank);
		return ccomInvalidArgument;
	}
	if (nranks <= comm->nranks) {
		ccom_set_last_error("ccomCommGrow: nRanks %d is not larger than the communicator's %d ranks; nRanks is the new total",
				    nranks, comm->nranks);
		return ccomInvalidArgument;
	}
	rc = grow_check_state(comm, "ccomCommGrow");
	memset(&a, 0, sizeof(a));
	a.start_us = ccom_now_us();
	if (!rc)
		rc = ccom_config_validate(config ? config : &comm->config, &a.config);
	if (rc)
		return ccom_result_from_errno(rc);
	j = calloc(1, sizeof(*j) + (size_t)comm->nranks * sizeof(j->all[0]));
	if (!j) {
		ccom_set_last_error("ccomCommGrow: out of memory");
		return ccomSystemError;
	}
	/* Counted once the local checks passed: every existing rank counts the same calls. */
	epoch = comm->grow_count++;
	j->old = comm;
	me = &j->all[comm->rank];
	me->magic = GROW_MSG_MAGIC;
	me->old_rank = comm->rank;
	me->epoch = epoch;
	me->nranks = nranks;
	if (id) {
		j->has_id = 1;
		me->id = *id;
	}
	a.nranks = nranks;
	a.rank = comm->rank;
	a.comm_hash = grow_hash(comm, epoch);
	a.prepare = grow_prepare;
	a.prepare_arg = j;
	ccom_info(CCOM_SUBSYS_INIT, "ccomCommGrow: rank %d of %d grows to %d ranks%s", comm->rank,
		  comm->nranks, nranks, id ? " (coordinator)" : "");
	res = ccom_comm_init_rank(newcomm, &a);
	if (!*newcomm)
		free(j);	/* no comm took it over */
	return res;
}

ccomResult_t ccomCommGrow(ccomComm_t comm, int nRanks, const ccomUniqueId *uniqueId, int rank,
			  ccomComm_t *newcomm, ccomConfig_t *config)
{
	ccom_clear_last_error();
	if (!newcomm) {
		ccom_set_last_error("ccomCommGrow: newcomm is NULL; pass where the new communicator goes");
		return ccomInvalidArgument;
	}
	*newcomm = NULL;
	if (!comm)
		return grow_new_rank(nRanks, uniqueId, rank, newcomm, config);
	return grow_existing(comm, nRanks, uniqueId, rank, newcomm, config);
}
