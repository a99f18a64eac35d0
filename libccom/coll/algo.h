/* SPDX-License-Identifier: MIT */
/*
 * algo.h - the algorithms of coll/, private to the folder: each runs one
 * operation on the progress thread and returns 0 or -errno after
 * ccom_set_last_error().  coll.c dispatches to them on the tuner's choice.
 */
#ifndef CCOM_COLL_ALGO_H
#define CCOM_COLL_ALGO_H

#include <stdbool.h>

struct ccomComm;
struct ccom_op;
struct ccom_transport_conn;
struct ccom_hier;

int ccom_direct_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_ll_run(struct ccomComm *comm, struct ccom_op *op);
/* ll128.c: the one-flag-per-cache-line protocol (ops that ccom_shm_ll128_fits()). */
int ccom_ll128_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_ring_run(struct ccomComm *comm, struct ccom_op *op);
int ccom_rd_allreduce(struct ccomComm *comm, struct ccom_op *op);
/* Two ranks: pipelined full-duplex reduce-scatter + all-gather with @peer (@pos: 0 or 1). */
int ccom_pair_allreduce(struct ccomComm *comm, struct ccom_op *op, struct ccom_transport_conn *peer,
			int pos);
int ccom_bruck_allgather(struct ccomComm *comm, struct ccom_op *op);
int ccom_tree_run(struct ccomComm *comm, struct ccom_op *op);
/*
 * hier.c: the hierarchical schedules between hosts, @algo CCOM_ALGO_RAIL
 * (split-rail AllReduce) or CCOM_ALGO_RAB (reduce / leaders / broadcast
 * AllReduce; Broadcast and Reduce through the hosts' leaders for both);
 * CCOM_ALGO_HOSTPAIR: AlltoAll aggregated per host pair (hier_alltoall.c);
 * the tuner chose them only on layouts they cover.  ccom_hier_free()
 * frees the layout cached in comm->coll->hier.
 */
int ccom_hier_run(struct ccomComm *comm, struct ccom_op *op, int algo);
void ccom_hier_free(struct ccom_hier *h);
/*
 * p2p.c: the sends/receives of one group run concurrently; _group_run()
 * for the user's (ccomSend/ccomRecv/ccomRecvAny: @group's subs, and its
 * flight label), _run() for those of a collective (rooted.c), whose
 * headers an any-source receive never takes.
 */
int ccom_p2p_group_run(struct ccomComm *comm, struct ccom_op *group);
int ccom_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops);

/*
 * kdev_sched.c: run @op as descriptor schedules on the nccom engine.
 * Returns 0, -errno, or 1 when the ranks fell back together (a rank could
 * not register its buffers, or voted for shm): run it on the host then.
 */
int ccom_kdev_run(struct ccomComm *comm, struct ccom_op *op);
/*
 * kdev_p2p.c: run the sends/recvs of @ops (their sizes already agreed by
 * p2p.c's header pass) that ccom_tune_engine_p2p_wants(): single copy
 * from the sender's buffer into the receiver's by the receiver's engine,
 * the sender waiting on the receiver's semaphore.  Sets done[i] for every
 * op it completed; the others (self, remote, small, or a registration that
 * failed on either side, decided identically on both) are left to the shm
 * path.  0 or -errno naming the cause.
 */
int ccom_kdev_p2p_run(struct ccomComm *comm, struct ccom_op *ops, int nops, bool *done);

/* rooted.c: Gather and Scatter as one group of p2p transfers with the root; 0 or -errno. */
int ccom_rooted_run(struct ccomComm *comm, struct ccom_op *op);

/*
 * redop.c: PreMulSum ops.  _resolve() (API thread, enqueue) turns @op's
 * custom handle into ccomSum plus the captured scalar, or returns -EINVAL
 * after ccom_set_last_error(); _prepare() (executor, before the algorithm)
 * multiplies this rank's input by the scalar and points @op->sendbuff at
 * the products (0 or -ENOMEM); _free() frees the table at the comm's end.
 */
struct ccom_redops;
int ccom_redop_resolve(struct ccomComm *comm, struct ccom_op *op);
int ccom_premul_prepare(struct ccomComm *comm, struct ccom_op *op);
void ccom_redops_free(struct ccom_redops *r);
/* register.c: release what is still registered on @comm (from destroy). */
struct ccom_regs;
void ccom_regs_free(struct ccomComm *comm, struct ccom_regs *r);

#endif
