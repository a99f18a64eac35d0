// SPDX-License-Identifier: MIT
/*
 * tune.c - the host algorithms' candidates of the tuner (tune/): picks an
 * algorithm x protocol per call from a cost model, time = alpha + beta * bytes, for each candidate that
 * can run on this communicator, with CCOM_ALGO / CCOM_PROTO overrides.
 *
 * Candidates:
 *   direct/LL     ranks of one host, one-shot through the LL slots; each
 *                 rank reads every peer's input: beta scales with nlocal.
 *   direct/simple ranks of one host, staged chunks + host barriers.
 *   ring/simple   any layout, over the transports (shm FIFOs, TCP).
 *   rd/simple     AllReduce by recursive doubling over the transports:
 *                 log2(n) steps of the whole vector, for small messages
 *                 when the ranks span several hosts; AllGather by Bruck's
 *                 algorithm: log2(n) steps, the ring's bytes, one extra
 *                 local copy.
 *   tree/simple   Broadcast and Reduce along a binomial tree: log2(n)
 *                 steps instead of the chain's n - 1, for small messages
 *                 when the ranks span several hosts.
 * The constants were measured on the development machine (2 vCPU EPYC,
 * see Documentation/libccom/collectives.rst); they only need to be right
 * in their ratios, the decision is the minimum.
 *
 * The choice depends only on the op, the communicator shape and the
 * environment, so every rank makes the same choice (CCOM_ALGO/CCOM_PROTO
 * must be identical on every rank).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/op.h"
#include "reduce/reduce.h"
#include "tune/kdev_race.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/log.h"
#include "util/misc.h"
#include "util/params.h"

/* Largest payload the LL path accepts for @op (coll/ll.c's slots). */
static bool ll_fits(const struct ccomComm *comm, const struct ccom_op *op, int nl)
{
	size_t b = op->count * ccom_dtype_size(op->dtype);

	if (op->kind == CCOM_COLL_REDUCESCATTER || op->kind == CCOM_COLL_ALLTOALL)
		b *= (size_t)nl;
	return b <= comm->tune->paths.ll_max_bytes;
}

bool ccom_tune_bruck_fits(const struct ccomComm *comm, size_t total_bytes)
{
	return total_bytes <= comm->tune->paths.scratch_bytes;
}

struct cost {
	double alpha_us;	/* fixed cost per step */
	double beta_us_per_kb;	/* per KiB of payload (per rank) */
};

/*
 * Measured constants (microseconds); see the file head.  The direct
 * engine's costs depend on whether every local rank has a CPU: with more
 * ranks than CPUs each synchronisation (barrier, or waiting for all peers'
 * flags) costs scheduler round trips.  LL's beta is large: every 8-byte
 * word is its own store, and each cache line of the slot must be taken
 * back from the peers that read it in the previous use (about 10 us per
 * KiB and peer on the development machines, 2-rank 16 KiB AllReduce:
 * LL 65-130 us, simple 7 us); the simple engine's copies move whole lines.
 */
static const struct cost ll_cost = { 0.3, 4.0 };		/* per peer read */
static const struct cost ll_cost_oversub = { 3.0, 4.0 };
static const struct cost simple_cost = { 0.2, 0.12 };		/* per step */
static const struct cost simple_cost_oversub = { 6.0, 0.12 };
static const struct cost ring_cost_shm = { 3.0, 0.25 };
static const struct cost ring_cost_net = { 25.0, 0.45 };
/*
 * net_ib, measured only on soft-RoCE (rxe in a TCG guest: there is no RDMA
 * hardware here), as ratios to net_socket in the same boot, interleaved
 * (Documentation/libccom/net_ib.rst, "Measured numbers"): 8-byte
 * Send/Recv ALPHA_RATIO x TCP's latency, large AllReduce BETA_RATIO x
 * its time per byte; rxe cuts every write into MTU packets with software
 * checksums.  Hardware RDMA would be the other way round: remeasure there.
 */
static const struct cost ring_cost_net_ib = { 25.0 * 1.1, 0.45 * 2.0 };

static int parse_choice(const char *name, const char *const *vals, int n)
{
	const char *v = ccom_param_str(name);
	int i;

	if (!v || !v[0])
		return -1;
	for (i = 0; i < n; i++)
		if (!strcasecmp(v, vals[i]))
			return i;
	ccom_warn("%s=%s is not one of the known values; ignoring it", name, v);
	return -1;
}

static const char *const algo_names[CCOM_ALGO_NUM] = { "direct", "ring", "rd", "tree", "rail",
							 "rab", "hostpair" };
static const char *const proto_names[CCOM_PROTO_NUM] = { "ll", "simple", "ll128" };

const char *ccom_algo_name(int algo)
{
	return algo >= 0 && algo < CCOM_ALGO_NUM ? algo_names[algo] : "auto";
}

const char *ccom_proto_name(int proto)
{
	return proto >= 0 && proto < CCOM_PROTO_NUM ? proto_names[proto] : "auto";
}

static void hier_init(struct ccomComm *comm, struct ccom_tune *cs);

int ccom_tune_init(struct ccomComm *comm, const struct ccom_tune_paths *paths)
{
	struct ccom_tune *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	comm->tune = cs;
	cs->paths = *paths;
	cs->direct_ok = comm->nnodes <= 1 && paths->shm;
	cs->force_algo = parse_choice("CCOM_ALGO", algo_names, CCOM_ALGO_NUM);
	cs->force_proto = parse_choice("CCOM_PROTO", proto_names, CCOM_PROTO_NUM);
	if (cs->force_algo == CCOM_ALGO_DIRECT && !cs->direct_ok)
		ccom_info(CCOM_SUBSYS_TUNE, "CCOM_ALGO=direct needs every rank on one host; using ring");
	hier_init(comm, cs);
	return ccom_tune_krace_init(comm);
}

void ccom_tune_fini(struct ccomComm *comm)
{
	if (comm->tune)
		free(comm->tune->krace);
	free(comm->tune);
	comm->tune = NULL;
}

static double cost_ll(const struct ccomComm *comm, size_t bytes)
{
	const struct cost *c = comm->tune->paths.shm_oversub ? &ll_cost_oversub : &ll_cost;
	double kb = (double)bytes / 1024.0;

	return c->alpha_us + c->beta_us_per_kb * kb * (comm->local_nranks - 1);
}

static double cost_simple(const struct ccomComm *comm, size_t bytes)
{
	const struct ccom_tune_paths *p = &comm->tune->paths;
	const struct cost *c = p->shm_oversub ? &simple_cost_oversub : &simple_cost;
	double steps = (double)(bytes / (p->shm_chunk ? p->shm_chunk : 1) + 1);

	return c->alpha_us * steps + c->beta_us_per_kb * (double)bytes / 1024.0;
}

/* Constants of the transports' algorithms: TCP or verbs once the ranks span hosts. */
static const struct cost *transport_cost(const struct ccomComm *comm)
{
	if (comm->nnodes > 1)
		return comm->tune->paths.net_ib ? &ring_cost_net_ib : &ring_cost_net;
	return &ring_cost_shm;
}

static double cost_ring_with(const struct ccomComm *comm, size_t bytes, const struct cost *c)
{
	int n = comm->nranks;

	return c->alpha_us * 2 * (n - 1) + c->beta_us_per_kb * (double)bytes / 1024.0 *
	       2.0 * (n - 1) / n;
}

static double cost_ring(const struct ccomComm *comm, size_t bytes)
{
	return cost_ring_with(comm, bytes, transport_cost(comm));
}

/* Largest AllGather (all ranks' bytes) that Bruck's algorithm takes by itself. */
#define BRUCK_MAX_BYTES (256u << 10)

/*
 * Local work of one recursive-doubling step per KiB: a copy of the vector
 * (the send must not see the reduction) and a reduction of all of it,
 * where the ring reduces 1/n of it per step.  Measured through the
 * crossover with the 2-rank pipelined ring (coll/pair.c) over TCP between
 * two namespaces: rd wins up to 32-64 KiB, the ring from 128 KiB
 * (Documentation/libccom/topology-and-tcp.rst).
 */
#define RD_LOCAL_US_PER_KB 0.35

/* Recursive doubling: ceil(log2 n) full-vector steps, two more to fold a non-power of two. */
static double cost_rd_with(const struct ccomComm *comm, size_t bytes, const struct cost *c)
{
	double kb = (double)bytes / 1024.0;
	int n = comm->nranks, p2 = 1, steps = 0;

	while (p2 * 2 <= n) {
		p2 *= 2;
		steps++;
	}
	if (p2 < n)
		steps += 2;
	return (c->alpha_us + (c->beta_us_per_kb + RD_LOCAL_US_PER_KB) * kb) * steps;
}

static double cost_rd(const struct ccomComm *comm, size_t bytes)
{
	return cost_rd_with(comm, bytes, transport_cost(comm));
}

/* Binomial tree (whole message per step) against the pipelined chain of ring.c. */
static bool tree_beats_chain(const struct ccomComm *comm, size_t bytes)
{
	const struct cost *c = transport_cost(comm);
	double kb = (double)bytes / 1024.0, pieces = (double)(bytes >> 20) + 1;
	int n = comm->nranks, steps = 0;

	while ((1 << steps) < n)
		steps++;
	return (c->alpha_us + c->beta_us_per_kb * kb) * steps <
	       c->alpha_us * (n - 1 + pieces) + c->beta_us_per_kb * kb;
}

/*
 * Between hosts (or with CCOM_ALGO=ring|rd|tree): ring, or rd for small
 * AllReduces, or tree for small Broadcasts and Reduces.
 */
static int pick_transport_algo(struct ccomComm *comm, const struct ccom_op *op, size_t bytes)
{
	int force = comm->tune->force_algo;

	if (force == CCOM_ALGO_RING)
		return CCOM_ALGO_RING;
	if (op->kind == CCOM_COLL_ALLREDUCE &&
	    (force == CCOM_ALGO_RD || cost_rd(comm, bytes) < cost_ring(comm, bytes)))
		return CCOM_ALGO_RD;
	/* Same bytes as the ring in fewer steps; the final copy matters only for large vectors. */
	if (op->kind == CCOM_COLL_ALLGATHER && ccom_tune_bruck_fits(comm, bytes) &&
	    (force == CCOM_ALGO_RD || bytes <= BRUCK_MAX_BYTES))
		return CCOM_ALGO_RD;
	if ((op->kind == CCOM_COLL_BROADCAST || op->kind == CCOM_COLL_REDUCE) &&
	    (force == CCOM_ALGO_TREE || tree_beats_chain(comm, bytes)))
		return CCOM_ALGO_TREE;
	return CCOM_ALGO_RING;
}

static void pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto);
static int pick_hier(struct ccomComm *comm, const struct ccom_op *op, size_t bytes, int flat);

_Static_assert(CCOM_COLL_NKINDS <= 16, "CCOM_TUNE_NPICKS covers 16 collective kinds");

static const char *const kind_names[CCOM_COLL_NKINDS] = {
	"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AlltoAll", "Gather",
	"Scatter", "Send", "Recv", "p2p group",
};

void ccom_tune_pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto)
{
	if (ccom_tune_engine_wants(comm, op)) {
		*algo = CCOM_ALGO_ENGINE;
		*proto = CCOM_PROTO_SIMPLE;
		return;
	}
	ccom_tune_pick_host(comm, op, algo, proto);
}

/* The first use of each (collective, algorithm, protocol) is logged at INFO. */
void ccom_tune_pick_host(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto)
{
	struct ccom_tune *cs = comm->tune;
	unsigned int bit;

	cs->why[0] = '\0';
	pick(comm, op, algo, proto);
	if (op->kind < 0 || op->kind >= CCOM_COLL_NKINDS || *algo < 0 || *algo >= CCOM_ALGO_NUM ||
	    *proto < 0 || *proto >= CCOM_PROTO_NUM)
		return;
	bit = ((unsigned int)op->kind * CCOM_ALGO_NUM + (unsigned int)*algo) * CCOM_PROTO_NUM +
	      (unsigned int)*proto;
	if (bit >= CCOM_TUNE_NPICKS || (cs->picks_seen[bit / 64] & (1ull << (bit % 64))))
		return;
	cs->picks_seen[bit / 64] |= 1ull << (bit % 64);
	ccom_info(CCOM_SUBSYS_TUNE, "rank %d: %s of %zu bytes on %d ranks / %d hosts -> %s/%s (first use of this choice)%s%s",
		  comm->rank, kind_names[op->kind], ccom_op_bytes(comm, op), comm->nranks,
		  comm->nnodes, ccom_algo_name(*algo), ccom_proto_name(*proto),
		  cs->why[0] ? ": " : "", cs->why);
}

/* ------------------------------------------------------------------ LL128 */

/*
 * direct/LL128 (coll/ll128.c): every rank publishes its input in whole
 * cache lines with a flag each and reads every peer's, like LL but with
 * ordinary line stores and one line each way for up to 40 bytes.
 * Measured on the 2-vCPU development machine (ccom-perf allreduce, fp32,
 * CCOM_PROTO=ll128|simple|ll interleaved, 3-5 runs each under chrt,
 * medians, us):
 *   2 ranks   8 B: 0.40 / 0.61 / 0.51   512 B: 0.52 / 0.56 / 2.4
 *             2 KiB: 0.97 / 0.91 / 8.9  8 KiB: 2.9 / 2.2 / 33
 *   4 ranks   8 B: 2.5 / 4.3-114 / 2.4  512 B: 3.0 / 3.9 / 11
 *   (2 CPUs)  2 KiB: 5.0 / 6.1 / 34     8 KiB: 15.6 / 10.1 / 139
 * so LL128 beats LL everywhere it fits and the staged engine up to about
 * 2 KiB (2 ranks) and 4 KiB (4 ranks on 2 CPUs): the constants put the
 * crossovers there against simple_cost / simple_cost_oversub (picked:
 * 2 ranks up to 1 KiB, 4 ranks up to 2 KiB).
 */
static const struct cost ll128_cost = { 0.13, 0.155 };		/* per peer read */
static const struct cost ll128_cost_oversub = { 2.9, 0.3 };

/* Price of LL128 for @op, or a negative value when it does not fit. */
static double cost_ll128(const struct ccomComm *comm, const struct ccom_op *op, size_t bytes)
{
	const struct ccom_tune_paths *p = &comm->tune->paths;
	const struct cost *c = p->shm_oversub ? &ll128_cost_oversub : &ll128_cost;

	if (!p->ll128_fits || !p->ll128_fits(op, comm->local_nranks, p->scratch_bytes))
		return -1;
	return c->alpha_us + c->beta_us_per_kb * (double)bytes / 1024.0 * (comm->local_nranks - 1);
}

/* ------------------------------------------------------------------ the pick */

static void pick(struct ccomComm *comm, const struct ccom_op *op, int *algo, int *proto)
{
	struct ccom_tune *cs = comm->tune;
	bool direct_ok = cs->direct_ok;
	bool ll_ok = direct_ok && ll_fits(comm, op, comm->local_nranks);
	size_t bytes = ccom_op_bytes(comm, op);
	double best, c;

	*algo = CCOM_ALGO_RING;
	*proto = CCOM_PROTO_SIMPLE;
	if (cs->force_algo == CCOM_ALGO_RING || cs->force_algo == CCOM_ALGO_RD ||
	    cs->force_algo == CCOM_ALGO_TREE || !direct_ok) {
		*algo = pick_transport_algo(comm, op, bytes);
		if (comm->nnodes > 1)
			*algo = pick_hier(comm, op, bytes, *algo);
		return;
	}
	*algo = CCOM_ALGO_DIRECT;
	best = cost_simple(comm, bytes);
	c = cost_ring(comm, bytes);
	if (cs->force_algo != CCOM_ALGO_DIRECT && c < best) {
		*algo = CCOM_ALGO_RING;
		best = c;	/* LL has to beat the cheaper of the two */
	}
	if (cs->force_proto == CCOM_PROTO_SIMPLE)
		return;
	c = cost_ll128(comm, op, bytes);
	if (c >= 0 && cs->force_proto != CCOM_PROTO_LL &&
	    (cs->force_proto == CCOM_PROTO_LL128 || c < best)) {
		*algo = CCOM_ALGO_DIRECT;
		*proto = CCOM_PROTO_LL128;
		best = c;
		if (cs->force_proto == CCOM_PROTO_LL128)
			return;
	}
	if (!ll_ok || cs->force_proto == CCOM_PROTO_LL128)
		return;
	c = cost_ll(comm, bytes);
	if (cs->force_proto == CCOM_PROTO_LL || c < best) {
		*algo = CCOM_ALGO_DIRECT;
		*proto = CCOM_PROTO_LL;
	}
}

/* ------------------------------------------------------------------ hierarchical */

/*
 * CPUs per host from the peer records (identical on every rank): each
 * machine's online CPUs divided by the hosts on it (simulated hosts,
 * CCOM_HOSTID, share one machine), the fewest over the hosts.  @nl holds
 * the ranks per host; a host with more ranks than CPUs makes the tuner
 * price by CPU work.
 */
static void hier_cpus(const struct ccomComm *comm, struct ccom_tune *cs, const int *nl)
{
	int H = comm->nnodes, h, g, r, *first = calloc((size_t)H, sizeof(int));
	double cpus;

	cs->hier_cpus = 1e9;
	cs->hier_oversub = false;
	if (!first) {
		cs->hier_cpus = 1;
		return;
	}
	for (r = comm->nranks - 1; r >= 0; r--)	/* the lowest rank of each host */
		first[comm->rank_to_node[r]] = r;
	for (h = 0; h < H; h++) {
		const struct ccom_peer_info *p = &comm->peers[first[h]];
		int shared = 0;

		for (g = 0; g < H; g++)
			shared += comm->peers[first[g]].machine_id == p->machine_id;
		cpus = (double)(p->ncpus > 0 ? p->ncpus : 1) / (shared > 0 ? shared : 1);
		if (cpus < cs->hier_cpus)
			cs->hier_cpus = cpus;
		if (cpus < nl[h])
			cs->hier_oversub = true;
	}
	free(first);
}

/*
 * The layout decides which hierarchical schedules exist (coll/hier.c);
 * logged once per communicator with the reason when one is ruled out.
 */
static void hier_init(struct ccomComm *comm, struct ccom_tune *cs)
{
	int *nl, r, lmin, force = cs->force_algo;
	char shape[96];
	size_t len = 0;

	if (comm->nnodes <= 1) {
		if (force == CCOM_ALGO_RAIL || force == CCOM_ALGO_RAB || force == CCOM_ALGO_HOSTPAIR)
			ccom_info(CCOM_SUBSYS_TUNE, "CCOM_ALGO=%s needs ranks on several hosts (all %d are on one); using the flat choice",
				  algo_names[force], comm->nranks);
		return;
	}
	nl = calloc((size_t)comm->nnodes, sizeof(int));
	if (!nl)
		return;	/* no hierarchical candidates: the flat algorithms run */
	for (r = 0; r < comm->nranks; r++)
		nl[comm->rank_to_node[r]]++;
	lmin = nl[0];
	for (r = 0; r < comm->nnodes; r++) {
		cs->hier_lmax = nl[r] > cs->hier_lmax ? nl[r] : cs->hier_lmax;
		lmin = nl[r] < lmin ? nl[r] : lmin;
		if (len < sizeof(shape) - 16)
			len += (size_t)snprintf(shape + len, sizeof(shape) - len, "%s%d", r ? "+" : "",
						nl[r]);
	}
	hier_cpus(comm, cs, nl);
	free(nl);
	cs->hier_rab = cs->hier_lmax >= 2;
	cs->hier_rail = cs->hier_rab && lmin == cs->hier_lmax;
	if (!cs->hier_rab)
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: hierarchical: every one of the %d hosts holds one rank, so the hierarchical schedules are the flat ones; flat algorithms only",
			  comm->rank, comm->nnodes);
	else if (!cs->hier_rail)
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: hierarchical: the hosts hold %s ranks; split-rail needs the same count on every host, so rab and the flat algorithms are priced",
			  comm->rank, shape);
	else
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: hierarchical: %d hosts x %d ranks; rail, rab and the flat algorithms are priced",
			  comm->rank, comm->nnodes, cs->hier_lmax);
	if (cs->hier_rab)
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: hierarchical: %.2g CPUs per host for up to %d ranks: AllReduce priced by %s",
			  comm->rank, cs->hier_cpus, cs->hier_lmax,
			  cs->hier_oversub ? "the CPU work of a host (its ranks take turns on the CPUs)"
					   : "the critical path (a CPU per rank)");
	if ((force == CCOM_ALGO_RAIL && !cs->hier_rail) ||
	    ((force == CCOM_ALGO_RAB || force == CCOM_ALGO_HOSTPAIR) && !cs->hier_rab))
		ccom_info(CCOM_SUBSYS_TUNE, "rank %d: CCOM_ALGO=%s cannot run on hosts of %s ranks (%s); using the flat choice",
			  comm->rank, algo_names[force], shape,
			  cs->hier_rab ? "split-rail needs the same count on every host"
				       : "every host holds one rank");
}

/*
 * Step constants of the flat-vs-hierarchical AlltoAll decision, fitted to
 * ccom-perf between network namespaces (2 hosts x 2 and x 4 ranks, 4-8
 * ranks sharing the 2 CPUs of the development machine): the byte terms
 * are the transports' (TCP 0.45, shm 0.15 us/KiB), the step terms what a
 * lock-step step costs there, 120 us between hosts and 60 us in a host.
 * AllReduce is priced by allreduce_prices() below instead.
 */
static const struct cost hier_cost_net = { 120.0, 0.45 };
static const struct cost hier_cost_shm = { 60.0, 0.15 };

static int ceil_log2(int n)
{
	int s = 0;

	while ((1 << s) < n)
		s++;
	return s;
}

/*
 * AllReduce between hosts: the four candidates (flat ring, flat recursive
 * doubling, split-rail, rab), each described by what it does on the
 * critical path (lock-step steps, the bytes one rank moves and reduces)
 * and by what a host does in all (the bytes its ranks send over TCP and
 * shm and reduce, summed).  Two machine models price them:
 *
 *   a CPU per rank (real hosts): the critical path with the transports'
 *   constants: steps x alpha + the bytes of the busiest rank, a host's
 *   link carrying the bytes of all its rails;
 *
 *   fewer CPUs than ranks on a host (hier_init(): cpus = online CPUs of
 *   the machine / simulated hosts on it): the ranks take turns on the
 *   CPUs, so a host's time is its summed work over its CPUs plus one
 *   scheduling round per lock-step step (the fit found a ring step and a
 *   tree or doubling step equally dear, so one constant).
 *
 * The second model's constants were fitted to ccom-perf between network
 * namespaces on the 2-vCPU development machine (2 x 2 and 2 x 4 ranks, 8
 * B - 16 MiB, CCOM_ALGO=ring|rd|rail|rab interleaved, medians of 15 runs
 * at 8 B / 64 KiB / 1 MiB / 16 MiB and 5 at 256 KiB / 4 MiB;
 * Documentation/libccom/collectives.rst, "Choosing between flat and
 * hierarchical").
 */
struct ar_shape {
	double steps;		/* lock-step steps on the critical path */
	double crit_net_kb;	/* critical path: KiB over TCP (a host's link) */
	double crit_shm_kb;	/* critical path: KiB through shm per rank */
	double crit_net_steps;	/* of the steps, those that cross hosts */
	double crit_red_kb;	/* critical path: KiB reduced and copied by one rank */
	double host_tcp_kb;	/* a host in all: KiB its ranks send over TCP */
	double host_shm_kb;	/* ... through shm */
	double host_red_kb;	/* ... reduce (and copy for doubling) */
};

static const struct {
	double step_us;		/* per lock-step step: a scheduling round */
	double tcp_us_per_kb;	/* CPU time per KiB sent over TCP (both ends) */
	double shm_us_per_kb;	/* per KiB through a shm FIFO (both ends) */
	double red_us_per_kb;	/* per KiB reduced */
} oversub_cost = { 20.0, 0.75, 1.0, 0.2 };

/* Doubling steps over @n: ceil(log2) for powers of two, two more to fold the rest. */
static int rd_steps(int n)
{
	int p2 = 1, s = 0;

	while (p2 * 2 <= n) {
		p2 *= 2;
		s++;
	}
	return p2 < n ? s + 2 : s;
}

static int ceil_log2(int n);

/* What @algo does for an AllReduce of @bytes on H hosts x L ranks (see above). */
static struct ar_shape ar_shape_of(const struct ccomComm *comm, int algo, size_t bytes)
{
	int H = comm->nnodes, L = comm->tune->hier_lmax, n = comm->nranks;
	double kb = (double)bytes / 1024.0, nseg;
	struct ar_shape a = { 0 };
	int st, sl;

	switch (algo) {
	case CCOM_ALGO_RING:	/* ring.c: segments of n MiB, hosts contiguous on the ring */
		nseg = (double)((bytes + ((size_t)n << 20) - 1) / ((size_t)n << 20));
		a.steps = 2.0 * (n - 1) * (nseg > 0 ? nseg : 1);
		a.crit_net_steps = a.steps;
		a.crit_net_kb = kb * 2.0 * (n - 1) / n;
		a.crit_red_kb = kb * (n - 1) / n;
		a.host_tcp_kb = kb * 2.0 * (n - 1) / n;
		a.host_shm_kb = kb * (L - 1) * 2.0 * (n - 1) / n;
		a.host_red_kb = kb * L * (n - 1.0) / n;
		break;
	case CCOM_ALGO_RD:	/* whole vector per step; a copy and a reduction per step */
		st = rd_steps(n);
		sl = ceil_log2(L);
		a.steps = st;
		a.crit_net_steps = st;
		a.crit_net_kb = kb * st;
		a.crit_red_kb = 2.0 * kb * st;
		a.host_tcp_kb = kb * L * (st - sl);
		a.host_shm_kb = kb * L * sl;
		a.host_red_kb = 2.0 * kb * L * st;
		break;
	case CCOM_ALGO_RAIL:	/* hier.c: segments of L MiB */
		nseg = (double)((bytes + ((size_t)L << 20) - 1) / ((size_t)L << 20));
		nseg = nseg > 0 ? nseg : 1;
		a.steps = nseg * 2.0 * (L - 1 + H - 1);
		a.crit_net_steps = nseg * 2.0 * (H - 1);
		a.crit_net_kb = kb * 2.0 * (H - 1) / H;	/* all L rails share the link */
		a.crit_shm_kb = kb * 2.0 * (L - 1) / L;
		a.crit_red_kb = kb * ((L - 1.0) / L + (H - 1.0) / H / L);
		a.host_tcp_kb = kb * 2.0 * (H - 1) / H;
		a.host_shm_kb = kb * 2.0 * (L - 1);
		a.host_red_kb = kb * ((L - 1) + (H - 1.0) / H);
		break;
	default:		/* rab: segments of 1 MiB; tree, leaders' doubling, tree */
		st = rd_steps(H);
		sl = ceil_log2(L);
		nseg = (double)((bytes + (1u << 20) - 1) >> 20);
		nseg = nseg > 0 ? nseg : 1;
		a.steps = nseg * (2.0 * sl + st);
		a.crit_net_steps = nseg * st;
		a.crit_net_kb = kb * st;
		a.crit_shm_kb = kb * 2.0 * sl;
		a.crit_red_kb = kb * (sl + 2.0 * st);
		a.host_tcp_kb = kb * st;
		a.host_shm_kb = kb * 2.0 * (L - 1);
		a.host_red_kb = kb * ((L - 1) + 2.0 * st);
		break;
	}
	return a;
}

/* The price of @algo under the machine model hier_init() chose. */
static double ar_price(const struct ccomComm *comm, int algo, size_t bytes)
{
	const struct ccom_tune *cs = comm->tune;
	struct ar_shape a = ar_shape_of(comm, algo, bytes);
	const struct cost *net = transport_cost(comm);

	if (cs->hier_oversub)
		return a.steps * oversub_cost.step_us +
		       (a.host_tcp_kb * oversub_cost.tcp_us_per_kb +
			a.host_shm_kb * oversub_cost.shm_us_per_kb +
			a.host_red_kb * oversub_cost.red_us_per_kb) / cs->hier_cpus;
	return a.crit_net_steps * net->alpha_us + (a.steps - a.crit_net_steps) * ring_cost_shm.alpha_us +
	       a.crit_net_kb * net->beta_us_per_kb + a.crit_shm_kb * ring_cost_shm.beta_us_per_kb +
	       a.crit_red_kb * RD_LOCAL_US_PER_KB;
}

/* Broadcast / Reduce through the leaders: a tree between hosts, then (or before) one in each. */
static double cost_hier_tree(const struct ccomComm *comm, size_t bytes)
{
	double kb = (double)bytes / 1024.0;

	return ceil_log2(comm->nnodes) * (ring_cost_net.alpha_us + ring_cost_net.beta_us_per_kb * kb) +
	       ceil_log2(comm->tune->hier_lmax) *
	       (ring_cost_shm.alpha_us + ring_cost_shm.beta_us_per_kb * kb);
}

/* The flat choice's price for Broadcast / Reduce: the binomial tree or the pipelined chain. */
static double cost_flat_tree_or_chain(const struct ccomComm *comm, size_t bytes, int flat)
{
	const struct cost *c = transport_cost(comm);
	double kb = (double)bytes / 1024.0, pieces = (double)(bytes >> 20) + 1;
	int n = comm->nranks;

	if (flat == CCOM_ALGO_TREE)
		return (c->alpha_us + c->beta_us_per_kb * kb) * ceil_log2(n);
	return c->alpha_us * (n - 1 + pieces) + c->beta_us_per_kb * kb;
}

/*
 * AllGather / ReduceScatter of @bytes in all (T) by rails: H - 1 network
 * steps (the host's link carries (H - 1)/H * T), L - 1 shm steps of
 * (L - 1)/L * T per rank; ReduceScatter repeats the steps per piece of
 * 4 MiB / 3H per block.
 */
static double cost_rail_gather(const struct ccomComm *comm, const struct ccom_op *op, size_t bytes)
{
	int H = comm->nnodes, L = comm->tune->hier_lmax;
	double kb = (double)bytes / 1024.0, npieces = 1;

	if (op->kind == CCOM_COLL_REDUCESCATTER)
		npieces = (double)(bytes / (size_t)comm->nranks / ((4u << 20) / (3u * (unsigned)H)) + 1);
	return npieces * (ring_cost_net.alpha_us * (H - 1) + ring_cost_shm.alpha_us * (L - 1)) +
	       ring_cost_net.beta_us_per_kb * kb * (H - 1) / H +
	       ring_cost_shm.beta_us_per_kb * kb * (L - 1) / L;
}

/* The flat ring (n - 1 steps) or Bruck's AllGather (log2 n steps), same bytes. */
static double cost_flat_gather(const struct ccomComm *comm, size_t bytes, int flat)
{
	const struct cost *c = transport_cost(comm);
	int n = comm->nranks;

	return c->alpha_us * (flat == CCOM_ALGO_RD ? ceil_log2(n) : n - 1) +
	       c->beta_us_per_kb * (double)bytes / 1024.0 * (n - 1) / n;
}

/*
 * The flat AlltoAll between hosts (ring.c: every pair at once): n - L
 * TCP and L - 1 shm messages per rank; a host's link carries
 * L (n - L) / n * T of the T bytes of every rank's input.
 */
static double cost_flat_alltoall(const struct ccomComm *comm, size_t bytes)
{
	int n = comm->nranks, L = comm->tune->hier_lmax;
	double kb = (double)bytes / 1024.0;

	return hier_cost_net.alpha_us * (n - L) + hier_cost_shm.alpha_us * (L - 1) +
	       hier_cost_net.beta_us_per_kb * kb * L * (n - L) / n;
}

/*
 * AlltoAll per host pair (coll/hier_alltoall.c), per piece of every block:
 * a gather and a scatter step in the host (each one shm step: its L - 1
 * messages run at once) and one TCP message per remote host an agent
 * serves; the same bytes on the host's link as the flat exchange, plus
 * each rank's remote blocks crossing shm twice (into and out of the
 * agents' staging).  Measured (ccom-perf alltoall between namespaces, 3
 * interleaved runs, minima): 2 x 4 ranks, 1 KiB - 1 MiB per rank:
 * hostpair 64 / 284 / 3849 us against the flat 300 / 540 / 7430 us; 16
 * MiB: flat 59.9 ms, hostpair 94.7; 2 x 2: within noise up to 1 KiB, the
 * flat exchange faster at 64 KiB - 1 MiB.
 */
static double cost_hostpair(const struct ccomComm *comm, const struct ccom_op *op, size_t bytes)
{
	int n = comm->nranks, H = comm->nnodes, L = comm->tune->hier_lmax, nserve;
	double kb = (double)bytes / 1024.0, remote = kb * (n - L) / n, npieces;
	size_t per;

	nserve = (H - 1 + L - 1) / L;
	per = (4u << 20) / (2 * (size_t)nserve * (size_t)L * (size_t)L);
	npieces = (double)(op->count * ccom_dtype_size(op->dtype) / per + 1);
	return npieces * (2 * hier_cost_shm.alpha_us + hier_cost_net.alpha_us * nserve) +
	       hier_cost_net.beta_us_per_kb * kb * L * (n - L) / n +
	       2 * hier_cost_shm.beta_us_per_kb * remote;
}

/*
 * AllReduce between hosts: the cheapest of ring, rd, rail (same count on
 * every host) and rab (several ranks on some host) by ar_price(); @flat
 * when every host holds one rank.  The prices go to cs->why, which the
 * first use of a choice logs.
 */
static int pick_hier_allreduce(struct ccomComm *comm, size_t bytes, int flat)
{
	static const int cand[] = { CCOM_ALGO_RING, CCOM_ALGO_RD, CCOM_ALGO_RAIL, CCOM_ALGO_RAB };
	struct ccom_tune *cs = comm->tune;
	double best = 0, c;
	size_t len = 0, i;
	int algo = flat;

	if (!cs->hier_rab)
		return flat;
	for (i = 0; i < CCOM_ARRAY_SIZE(cand); i++) {
		if (cand[i] == CCOM_ALGO_RAIL && !cs->hier_rail)
			continue;
		c = ar_price(comm, cand[i], bytes);
		if (!len || c < best) {
			best = c;
			algo = cand[i];
		}
		if (len < sizeof(cs->why) - 32)
			len += (size_t)snprintf(cs->why + len, sizeof(cs->why) - len, "%s%s %.0f",
						len ? ", " : "", algo_names[cand[i]], c);
	}
	if (len < sizeof(cs->why))
		snprintf(cs->why + len, sizeof(cs->why) - len, " us by the %s",
			 cs->hier_oversub ? "CPU-work model" : "critical-path model");
	return algo;
}

/*
 * Flat (@flat, pick_transport_algo()'s choice) or hierarchical, for a
 * communicator spanning hosts.  CCOM_ALGO=rail|rab forces a schedule the
 * layout allows (hier_init() logged the ones it does not); the other
 * forced names keep the flat choice.
 */
static int pick_hier(struct ccomComm *comm, const struct ccom_op *op, size_t bytes, int flat)
{
	const struct ccom_tune *cs = comm->tune;
	int force = cs->force_algo;

	if (force != CCOM_ALGO_AUTO && force != CCOM_ALGO_RAIL && force != CCOM_ALGO_RAB &&
	    force != CCOM_ALGO_HOSTPAIR)
		return flat;
	if (op->kind == CCOM_COLL_ALLTOALL) {
		if (!cs->hier_rab || (force != CCOM_ALGO_AUTO && force != CCOM_ALGO_HOSTPAIR))
			return flat;
		if (force == CCOM_ALGO_HOSTPAIR ||
		    cost_hostpair(comm, op, bytes) < cost_flat_alltoall(comm, bytes))
			return CCOM_ALGO_HOSTPAIR;
		return flat;
	}
	if (force == CCOM_ALGO_HOSTPAIR)
		return flat;
	if (op->kind == CCOM_COLL_ALLREDUCE) {
		if (force == CCOM_ALGO_RAIL)
			return cs->hier_rail ? CCOM_ALGO_RAIL : flat;
		if (force == CCOM_ALGO_RAB)
			return cs->hier_rab ? CCOM_ALGO_RAB : flat;
		return pick_hier_allreduce(comm, bytes, flat);
	}
	if (op->kind == CCOM_COLL_ALLGATHER || op->kind == CCOM_COLL_REDUCESCATTER) {
		if (!cs->hier_rail || force == CCOM_ALGO_RAB)
			return flat;
		if (force == CCOM_ALGO_RAIL ||
		    cost_rail_gather(comm, op, bytes) < cost_flat_gather(comm, bytes, flat))
			return CCOM_ALGO_RAIL;
		return flat;
	}
	if (op->kind != CCOM_COLL_BROADCAST && op->kind != CCOM_COLL_REDUCE)
		return flat;
	if (!cs->hier_rab || (force == CCOM_ALGO_RAIL && !cs->hier_rail))
		return flat;
	if (force != CCOM_ALGO_AUTO ||
	    cost_hier_tree(comm, bytes) < cost_flat_tree_or_chain(comm, bytes, flat))
		return CCOM_ALGO_RAB;
	return flat;
}
