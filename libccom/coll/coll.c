// SPDX-License-Identifier: MIT
/*
 * coll.c - the data path's communicator hooks and the executor (coll/).
 *
 * ccom_coll_comm_init() runs at init's connect stage (collective) and
 * wires the rooms together, top down: the progress room (proxy/), the host
 * segment (transport/shm.c, the waits' source), one transport connection
 * per peer (shm on this host, net_socket or net_ib to other hosts), the ring order,
 * the nccom engine (transport/kdev/), the tuner, then the progress thread
 * with coll_execute() as its executor.  coll_execute() runs one operation
 * on the progress thread (proxy/ bounds it by CCOM_OP_TIMEOUT): one
 * decision of the tuner, the algorithm it names, and on failure it breaks
 * the communicator (every later op fails at once, peers on this host are
 * told through the segment's broken flag).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include "coll/algo.h"
#include "coll/channels.h"
#include "coll/cma.h"
#include "coll/coll.h"
#include "coll/krace.h"
#include "core/comm.h"
#include "core/op.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"
#include "proxy/stream.h"
#include "reduce/reduce.h"
#include "topo/topo.h"
#include "transport/kdev/kdev.h"
#include "transport/shm.h"
#include "transport/transport.h"
#include "tune/kdev_race.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

static const struct ccom_transport_ops *const transports[] = {
	&ccom_transport_shm,
	&ccom_transport_net_socket,
	&ccom_transport_net_ib,
};
#define NTRANSPORTS ((int)(sizeof(transports) / sizeof(transports[0])))

static int coll_ring_init(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	int i;

	cs->ring = calloc((size_t)comm->nranks, sizeof(int));
	if (!cs->ring)
		return -ENOMEM;
	for (i = 0; i < comm->nranks; i++)
		cs->ring[i] = (comm->topo && comm->topo->ring) ? comm->topo->ring[i] : i;
	for (i = 0; i < comm->nranks; i++)
		if (cs->ring[i] == comm->rank)
			cs->ring_pos = i;
	return 0;
}

/*
 * The mismatch check's network half: every network connection carries
 * each collective's signature (proxy/xfer.h).  The ranks agree on
 * CCOM_CHECK_MISMATCH at init (transport/select.c's vote), so both ends
 * of a stream frame it the same way.
 */
static int coll_wire_sig_init(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	int p, err;

	if (!cs->check_mismatch)
		return 0;
	for (p = 0; p < comm->nranks; p++)
		if (cs->conns[p] && cs->conns[p]->ops != &ccom_transport_shm)
			break;
	if (p == comm->nranks)
		return 0;
	err = ccom_xfer_sig_init(&cs->wire_sig, comm->rank, comm->nranks);
	for (p = 0; !err && p < comm->nranks; p++)
		if (cs->conns[p] && cs->conns[p]->ops != &ccom_transport_shm)
			cs->conns[p]->sig = &cs->wire_sig;
	return err;
}

/* Connect every peer with its transport; collective (each transport's setup is). */
static int coll_connect(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	struct ccom_transport_conn **tmp;
	int *peers, t, p, n, err = 0;

	cs->conns = calloc((size_t)comm->nranks, sizeof(*cs->conns));
	peers = calloc((size_t)comm->nranks, sizeof(int));
	tmp = calloc((size_t)comm->nranks, sizeof(*tmp));
	if (!cs->conns || !peers || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	err = ccom_transport_net_agree(comm);
	if (!err)
		ccom_topo_dump(comm);	/* its transports: now the agreed network's */
	for (t = 0; t < NTRANSPORTS && !err; t++) {
		for (p = 0, n = 0; p < comm->nranks; p++)
			if (p != comm->rank && ccom_transport_select(comm, p) == transports[t])
				peers[n++] = p;
		err = transports[t]->setup(comm, peers, n, tmp);
		for (p = 0; !err && p < n; p++)
			cs->conns[peers[p]] = tmp[p];
	}
	if (!err)
		err = coll_wire_sig_init(comm, cs);
out:
	free(peers);
	free(tmp);
	return err;
}

static void coll_disconnect(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	int p;

	if (!cs->conns)
		return;
	for (p = 0; p < comm->nranks; p++)
		if (cs->conns[p])
			cs->conns[p]->ops->teardown(comm, &cs->conns[p], 1);
	free(cs->conns);
	cs->conns = NULL;
}

static void coll_state_free(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	ccom_proxy_destroy(comm);
	ccom_regs_free(comm, cs->regs);
	ccom_tune_fini(comm);
	ccom_kdev_comm_fini(comm);
	ccom_cma_fini(comm);
	coll_disconnect(comm, cs);
	ccom_xfer_sig_fini(&cs->wire_sig);
	ccom_channels_stop(cs->channels);
	ccom_shm_fini(comm->shm);
	comm->shm = NULL;
	ccom_hier_free(cs->hier);
	free(cs->ring);
	if (cs->tmp)
		munmap(cs->tmp, cs->tmp_size);
	ccom_redops_free(cs->redops);
	free(cs->premul_tmp);
	free(cs);
	comm->coll = NULL;
}

static int coll_execute(struct ccomComm *comm, struct ccom_op *op);

/*
 * What the tuner prices, from the rooms below it (tune/ reads no
 * transport's state): the host segment's shape and LL/LL128 limits, the
 * network between hosts, and the nccom engine's configuration and
 * calibration (transport/kdev/, fixed once ccom_kdev_comm_init() returned).
 */
static void coll_tune_paths(const struct ccomComm *comm, const struct ccom_coll_state *cs,
			    struct ccom_tune_paths *p)
{
	const struct ccom_kdev *kd = comm->kdev;

	memset(p, 0, sizeof(*p));
	p->scratch_bytes = cs->tmp_size;
	p->shm = comm->shm != NULL;
	p->shm_oversub = comm->shm && comm->shm->oversubscribed;
	p->shm_chunk = comm->shm ? comm->shm->chunk : 0;
	p->ll_max_bytes = CCOM_SHM_LL_MAX_BYTES;
	p->ll128_fits = ccom_shm_ll128_fits;
	p->net_ib = comm->net == &ccom_transport_net_ib;
	if (!kd)
		return;
	p->engine.present = true;
	p->engine.forced = kd->forced;
	p->engine.p2p_only = kd->p2p_only;
	p->engine.reduce_fp = (kd->info.out_features & NCCOM_FEAT_REDUCE_FP) != 0;
	p->engine.slow = kd->engine_slow;
	p->engine.nlocal = kd->nlocal;
	p->engine.min_bytes = kd->min_bytes;
	p->engine.map_feature = (kd->info.out_features & NCCOM_FEAT_DMABUF_MMAP) != 0;
	if (ccom_kdev_load_key(p->engine.load_key, sizeof(p->engine.load_key)))
		p->engine.load_key[0] = '\0';
}

static int coll_init_locked(struct ccomComm *comm, struct ccom_coll_state *cs)
{
	int err;

	err = ccom_proxy_create(comm);
	if (err)
		return err;
	cs->tmp_size = (size_t)comm->local_nranks * CCOM_SHM_LL_MAX_BYTES + (4u << 20);
	/*
	 * Mapped, not malloc'd: a freed block this large raises glibc's mmap
	 * threshold, so the next communicator's would come from the heap and
	 * stay resident after its destroy (grow_cycles --ib saw RSS climb by
	 * 2-16 MiB per shrink/grow cycle that way).
	 */
	cs->tmp = mmap(NULL, cs->tmp_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cs->tmp == MAP_FAILED) {
		cs->tmp = NULL;
		return -ENOMEM;
	}
	err = coll_ring_init(comm, cs);
	if (!err && comm->local_nranks > 1)
		err = ccom_shm_init(comm, &comm->shm);
	if (!err && comm->shm) {
		comm->proxy->wait_src = &comm->shm->wait_src;
		err = ccom_channels_start(comm, &cs->channels);
	}
	if (!err)
		err = coll_connect(comm, cs);
	if (!err)
		err = ccom_kdev_comm_init(comm);
	if (!err)
		err = ccom_cma_init(comm);
	if (!err)
		ccom_topo_note_cma(comm, ccom_cma_describe(comm));
	if (!err) {
		struct ccom_tune_paths paths;

		coll_tune_paths(comm, cs, &paths);
		err = ccom_tune_init(comm, &paths);
	}
	if (!err)
		err = ccom_proxy_start(comm, coll_execute);
	return err;
}

int ccom_coll_comm_init(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = calloc(1, sizeof(*cs));
	int err;

	if (!cs)
		return -ENOMEM;
	cs->comm = comm;
	cs->check_mismatch = ccom_param_int("CCOM_CHECK_MISMATCH") != 0;
	comm->coll = cs;
	err = coll_init_locked(comm, cs);
	if (err) {
		coll_state_free(comm, cs);
		return err;
	}
	ccom_info(CCOM_SUBSYS_COLL, "rank %d: data path ready (%d local ranks, %d hosts, shm %s, %d channels)",
		  comm->rank, comm->local_nranks, comm->nnodes, comm->shm ? "yes" : "no",
		  ccom_channels_count(cs->channels));
	return 0;
}

/*
 * Finalize drains the queue.  No barrier: a rank that leaves after its last
 * op marks itself departed in the host segment, so peers still reading
 * data it sent do not take its exit for a death.
 */
int ccom_coll_comm_finalize(struct ccomComm *comm)
{
	if (!comm->coll)
		return 0;
	return ccom_stream_queue_drain(comm);
}

int ccom_coll_comm_abort(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;
	int64_t until = ccom_now_us() + 5000000;

	if (!cs)
		return 0;
	/* What each rank last issued and ran, unless a failure already dumped it. */
	if (comm->proxy && comm->proxy->flight && comm->proxy->flight->next_seq)
		ccom_flight_dump(comm, ccom_flight_pending(comm->proxy->flight) ?
				 "ccomCommAbort with operations pending" : "ccomCommAbort", true);
	/* comm->abort_flag is already set: every wait returns -ECANCELED soon. */
	ccom_shm_mark_broken(comm->shm, CCOM_SHM_ABORTED);
	ccom_kdev_comm_abort(comm);
	/* Let threads blocked in stream waits see the flag and leave before the free. */
	while (comm->proxy && atomic_load(&comm->proxy->api_busy) > 0) {
		if (ccom_now_us() > until) {
			ccom_warn("ccomCommAbort: rank %d: %d thread(s) still inside ccomStreamSynchronize after 5 s; the communicator is leaked rather than freed under them",
				  comm->rank, atomic_load(&comm->proxy->api_busy));
			return -EBUSY;
		}
		ccom_sleep_us(200, NULL);
	}
	return 0;
}

/* Remote peers waiting in an op of this comm learn that it ended (a note, then shutdown). */
static void coll_revoke_remote(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;
	int p;

	for (p = 0; cs->conns && p < comm->nranks; p++)
		if (cs->conns[p] && cs->conns[p]->ops->revoke)
			cs->conns[p]->ops->revoke(comm, cs->conns[p]);
}

void ccom_coll_comm_revoke(struct ccomComm *comm)
{
	if (!comm->coll)
		return;
	ccom_shm_mark_broken(comm->shm, CCOM_SHM_ABORTED);
	ccom_kdev_comm_abort(comm);
	coll_revoke_remote(comm);
}

void ccom_coll_comm_fini(struct ccomComm *comm)
{
	struct ccom_coll_state *cs = comm->coll;

	if (!cs)
		return;
	/*
	 * A synchronizer is woken by its last op's completion a moment before
	 * the progress thread retires the op: a rank that destroys right then
	 * must leave as departed, not failed (a peer still reading its data
	 * would report it).  An op still running or queued keeps it "failed".
	 */
	if (ccom_stream_queue_settle(comm, 100000) == 0 && !cs->broken_err)
		ccom_shm_mark_departed(comm->shm);
	else
		ccom_shm_mark_broken(comm->shm, CCOM_SHM_FAILED);
	coll_state_free(comm, cs);
}

/* One rank alone: every collective is a local copy (and avg of one value). */
static int coll_run_single(struct ccomComm *comm, struct ccom_op *op)
{
	size_t bytes = op->count * ccom_dtype_size(op->dtype);

	if (op->kind == CCOM_COLL_P2P_GROUP)
		return ccom_p2p_group_run(comm, op);
	if (op->recvbuff != op->sendbuff && bytes)
		memmove(op->recvbuff, op->sendbuff, bytes);
	return 0;
}

/*
 * The small-op memo.  A loop that repeats one small collective (a loss, a
 * flag, a norm) would have the tuner price every path on every call:
 * about 270 of the ~1,600 instructions an 8-byte AllReduce of 2 ranks
 * cost per op (callgrind).  The tuner's choice depends only on the call's
 * shape (kind, count, dtype, reduction, root) and on the communicator,
 * which does not change, so a choice of direct LL or LL128 for at most
 * COLL_MEMO_MAX_BYTES is reused for the next call of the same shape.  Only
 * those: larger ops and ops that may take the engine, CMA or the staged
 * paths ask the tuner every time, so a choice it revises at run time (by
 * measurement) is never frozen here.
 */
#define COLL_MEMO_MAX_BYTES 4096

static void coll_pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto)
{
	struct ccom_coll_state *cs = comm->coll;
	struct ccom_pick_memo *m = &cs->pick_memo;

	if (m->valid && m->kind == (int)op->kind && m->count == op->count && m->dtype == op->dtype &&
	    m->op == op->op && m->root == op->root) {
		*algo = CCOM_ALGO_DIRECT;
		*proto = m->proto;
		return;
	}
	ccom_tune_pick(comm, op, algo, proto);
	m->valid = *algo == CCOM_ALGO_DIRECT && (*proto == CCOM_PROTO_LL || *proto == CCOM_PROTO_LL128) &&
		   ccom_op_bytes(comm, op) <= COLL_MEMO_MAX_BYTES;
	m->kind = (int)op->kind;
	m->count = op->count;
	m->dtype = op->dtype;
	m->op = op->op;
	m->root = op->root;
	m->proto = *proto;
}

static int coll_dispatch_one(struct ccomComm *comm, struct ccom_op *op);

/* One operation, timed for the kdev race when its path is measured. */
static int coll_dispatch(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_race *r = NULL;
	uint64_t t0 = 0;
	int kpath = -1, err;

	if (comm->kdev && comm->nranks > 1 && op->kind != CCOM_COLL_P2P_GROUP && op->count &&
	    op->kind != CCOM_COLL_GATHER && op->kind != CCOM_COLL_SCATTER) {
		err = ccom_krace_begin(comm, op, &r, &kpath);
		if (err)
			return err;
		/* CCOM_KDEV_MAP=auto: the engine's copies unless the race runs the mapped path. */
		comm->kdev->map_skip = comm->kdev->map_mode == 2 && kpath != CCOM_KPATH_MAPPED;
		if (r)	/* no clock read for an operation no race times */
			t0 = ccom_krace_now_ns();
	}
	err = coll_dispatch_one(comm, op);
	if (!err && r)
		ccom_krace_end(comm, op, r, ccom_krace_now_ns() - t0);
	return err;
}

static int coll_dispatch_one(struct ccomComm *comm, struct ccom_op *op)
{
	int algo, proto, err;

	if (op->premul) {
		err = ccom_premul_prepare(comm, op);
		if (err)
			return err;
	}
	if (comm->nranks == 1)
		return coll_run_single(comm, op);
	if (op->kind == CCOM_COLL_P2P_GROUP)
		return ccom_p2p_group_run(comm, op);
	if (op->count == 0)
		return 0;
	if (op->kind == CCOM_COLL_GATHER || op->kind == CCOM_COLL_SCATTER) {
		/* CMA, when it takes the op, says so (ccom_cma_run()). */
		ccom_flight_algo(comm->proxy->flight, op, ccom_flight_p2p,
				 ccom_proto_name(CCOM_PROTO_SIMPLE));
		return ccom_rooted_run(comm, op);
	}
	coll_pick(comm, op, &algo, &proto);
	if (algo == CCOM_ALGO_ENGINE) {
		/* The mapped path, when the ranks' exchange picks it, says so (kdev_sched.c). */
		ccom_flight_algo(comm->proxy->flight, op, ccom_flight_engine, ccom_flight_kdev);
		err = ccom_kdev_run(comm, op);
		if (err <= 0)
			return err;
		/* 1: the ranks fell back from the engine together: run it on the host. */
		ccom_tune_pick_host(comm, op, &algo, &proto);
	}
	ccom_flight_algo(comm->proxy->flight, op, ccom_algo_name(algo), ccom_proto_name(proto));
	if (algo == CCOM_ALGO_DIRECT && proto == CCOM_PROTO_LL)
		return ccom_ll_run(comm, op);
	if (algo == CCOM_ALGO_DIRECT && proto == CCOM_PROTO_LL128)
		return ccom_ll128_run(comm, op);
	if (algo == CCOM_ALGO_DIRECT) {
		err = ccom_cma_run(comm, op);
		if (err <= 0)
			return err;
		err = ccom_direct_run(comm, op);
		ccom_cma_staged_done(comm);
		return err;
	}
	if (algo == CCOM_ALGO_RD && op->kind == CCOM_COLL_ALLGATHER)
		return ccom_bruck_allgather(comm, op);
	if (algo == CCOM_ALGO_RD)
		return ccom_rd_allreduce(comm, op);
	if (algo == CCOM_ALGO_RAIL || algo == CCOM_ALGO_RAB || algo == CCOM_ALGO_HOSTPAIR)
		return ccom_hier_run(comm, op, algo);
	if (algo == CCOM_ALGO_TREE)
		return ccom_tree_run(comm, op);
	return ccom_ring_run(comm, op);
}

static int coll_execute(struct ccomComm *comm, struct ccom_op *op)
{
	struct ccom_coll_state *cs = comm->coll;
	bool sig;
	int err;

	if (cs->broken_err) {
		ccom_set_last_error("rank %d: the communicator failed earlier (%s); destroy it and create a new one",
				    comm->rank, ccomGetErrorString(ccom_result_from_errno(cs->broken_err)));
		return cs->broken_err;
	}
	/*
	 * The mismatch check: post this collective's signature on the host
	 * segment; every wait of the algorithm compares it with the peers'
	 * (so a rank stuck because its peer called something else fails in
	 * milliseconds), and after it ran it is compared once more (the rank
	 * whose call needed less data would otherwise succeed).  Network
	 * peers get it in-band instead: the first bytes each way of every
	 * network conn the op uses (proxy/xfer.h), checked before any data
	 * byte is taken.
	 */
	sig = cs->check_mismatch && op->kind != CCOM_COLL_P2P_GROUP;
	if (sig) {
		struct ccom_op_sig os;

		ccom_op_sig_make(&os, op, ++cs->coll_seq);
		if (comm->shm)
			ccom_shm_sig_post(comm->shm, &os);
		if (cs->wire_sig.cap)
			ccom_xfer_sig_begin(&cs->wire_sig, &os);
	}
	err = coll_dispatch(comm, op);
	/* Network peers: both directions of every conn the op used (xfer.h). */
	if (sig && cs->wire_sig.cap) {
		if (!err)
			err = ccom_xfer_sig_end(comm, &cs->wire_sig);
		else
			ccom_xfer_sig_reset(&cs->wire_sig);
	}
	if (sig && comm->shm) {
		if (!err && !comm->shm->sig_checked)
			err = ccom_shm_sig_verify(comm->shm, false);
		ccom_shm_sig_clear(comm->shm);
	}
	if (err) {
		cs->broken_err = err;
		ccom_shm_mark_broken(comm->shm, err == -ECANCELED ? CCOM_SHM_ABORTED :
				     err == -ETIMEDOUT ? CCOM_SHM_FAILED | CCOM_SHM_TIMEDOUT :
				     CCOM_SHM_FAILED);
		ccom_comm_set_async_error(comm, ccom_result_from_errno(err));
		/*
		 * A mismatch ends the comm for every rank, but a rank on another
		 * host whose own exchanges all matched may have completed this
		 * op: without a word it would wait in its next one until this
		 * process goes away.  The host's ranks see the segment's mark.
		 */
		if (sig && err == -EPERM)
			coll_revoke_remote(comm);
	}
	return err;
}
