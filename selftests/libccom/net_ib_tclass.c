// SPDX-License-Identifier: MIT
/*
 * Description: the traffic class and service level of net_ib's queue
 * pairs (in the VM with soft-RoCE: selftests/libccom/ib/run-vm; SKIPs
 * without an RDMA device).  Two simulated hosts (CCOM_HOSTID), one rank
 * each, CCOM_NET=ib, 2 QPs per connection, CCOM_IB_TC=32 and CCOM_IB_SL=3:
 * a comm with config trafficClass 0x60 and a NULL-config split child
 * (inherits it) have every QP of the connection to the peer in RTS with
 * ah_attr.grh.traffic_class 0x60 (ibv_query_qp, the QPs reached through
 * the library's internals: the test links libccom statically); a comm
 * without trafficClass has CCOM_IB_TC's 32.  The service level: sl 3 by
 * ibv_query_qp on InfiniBand; RoCE keeps none (rxe answers 0), so a
 * wrapper around the library's modify_qp checks that the child's and the
 * plain comm's RTR asked for sl 3 (and the same traffic class).  An
 * AllReduce checks each comm works.
 */
#include <dlfcn.h>

#include "coll/coll.h"
#include "core/comm.h"
#include "transport/net_ib_abi.h"
#include "transport/net_ib_private.h"
#include "net_util.h"
#include "test_util.h"

typedef int (*query_qp_fn)(struct ccib_qp *qp, struct ccib_qp_attr *attr, int mask,
			   void *init_attr);

/*
 * RoCE devices keep no service level (rxe reports 0 whatever was set), so
 * what the library asks for at RTR is also recorded, by a wrapper around
 * its modify_qp (installed once libibverbs is loaded).
 */
static int g_ib_link_layer_eth;
static int (*real_modify_qp)(struct ccib_qp *qp, struct ccib_qp_attr *attr, int mask);
static int rtr_seen, rtr_sl = -1, rtr_tc = -1;

static int spy_modify_qp(struct ccib_qp *qp, struct ccib_qp_attr *attr, int mask)
{
	if (attr->qp_state == CCIB_QPS_RTR) {
		rtr_seen++;
		rtr_sl = attr->ah_attr.sl;
		rtr_tc = attr->ah_attr.grh.traffic_class;
	}
	return real_modify_qp(qp, attr, mask);
}

static void spy_install(void)
{
	real_modify_qp = ccom_ibv.modify_qp;
	ccom_ibv.modify_qp = spy_modify_qp;
}

/* Since the last call: every RTR asked for traffic class @tc and sl @sl. */
static int check_rtr(int tc, int sl)
{
	T_CHECK(rtr_seen > 0, "no RTR seen by the modify_qp wrapper");
	T_CHECK(rtr_tc == tc && rtr_sl == sl, "RTR asked for traffic class %#x sl %d, want %#x and %d",
		rtr_tc, rtr_sl, tc, sl);
	rtr_seen = 0;
	return 0;
}

static int check_qps(ccomComm_t comm, int peer, int tc, int sl)
{
	static query_qp_fn query;
	struct ccib_qp_attr a;
	/* struct ibv_qp_init_attr, which the test does not read: room enough. */
	long init_attr[32];
	struct ib_conn *c;
	uint32_t q;
	int r;

	if (!query) {
		void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);

		T_CHECK(h, "libibverbs.so.1 is not loaded: %s", dlerror());
		query = (query_qp_fn)dlsym(h, "ibv_query_qp");
		T_CHECK(query, "no ibv_query_qp");
	}
	T_CHECK(comm->coll && comm->coll->conns && comm->coll->conns[peer], "no conn to rank %d",
		peer);
	T_CHECK(comm->coll->conns[peer]->ops == &ccom_transport_net_ib,
		"the conn to rank %d is %s, not net_ib", peer, comm->coll->conns[peer]->ops->name);
	c = to_ib(comm->coll->conns[peer]);
	g_ib_link_layer_eth = c->g->port.attr.link_layer == CCIB_LINK_LAYER_ETHERNET;
	T_CHECK(c->nqps == 2, "%u QPs, want CCOM_IB_QPS_PER_CONN=2", c->nqps);
	for (q = 0; q < c->nqps; q++) {
		memset(&a, 0, sizeof(a));
		r = query(c->qps[q], &a, CCIB_QP_STATE | CCIB_QP_AV, init_attr);
		T_CHECK(!r, "ibv_query_qp of QP %u: %s", c->qps[q]->qp_num, strerror(r));
		T_CHECK(a.qp_state == CCIB_QPS_RTS, "QP %u in state %d, not RTS", c->qps[q]->qp_num,
			a.qp_state);
		T_CHECK(a.ah_attr.is_global && a.ah_attr.grh.traffic_class == tc,
			"QP %u: global %u traffic class %#x, want traffic class %#x",
			c->qps[q]->qp_num, a.ah_attr.is_global, a.ah_attr.grh.traffic_class, tc);
		/* InfiniBand keeps the SL in the address vector; RoCE has none (check_rtr()). */
		T_CHECK(g_ib_link_layer_eth || a.ah_attr.sl == sl, "QP %u: sl %u, want %d",
			c->qps[q]->qp_num, a.ah_attr.sl, sl);
	}
	return 0;
}

static int check_sum(ccomComm_t comm)
{
	int v[64], i;

	for (i = 0; i < 64; i++)
		v[i] = i;
	T_CCOM(ccomAllReduce(v, v, 64, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < 64; i++)
		T_CHECK(v[i] == 2 * i, "element %d is %d", i, v[i]);
	return 0;
}

static int rank_main(int rank, int pipes[2])
{
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	ccomComm_t comm, child, plain;
	ccomUniqueId id[2];
	char host[48];
	int peer = 1 - rank, rc;

	snprintf(host, sizeof(host), "ibtchost%d-%d", rank, (int)getppid());
	setenv("CCOM_HOSTID", host, 1);
	T_SETENV("CCOM_NET=ib", "CCOM_IB_QPS_PER_CONN=2", "CCOM_IB_TC=32", "CCOM_IB_SL=3",
		 "CCOM_OP_TIMEOUT=60", "CCOM_KDEV=0");
	if (rank == 0) {
		T_CCOM(ccomGetUniqueId(&id[0]), ccomSuccess);
		T_CCOM(ccomGetUniqueId(&id[1]), ccomSuccess);
		T_CHECK(write(pipes[1], id, sizeof(id)) == (ssize_t)sizeof(id), "pipe");
	} else {
		T_CHECK(read(pipes[0], id, sizeof(id)) == (ssize_t)sizeof(id), "no unique id");
	}
	cfg.trafficClass = 0x60;
	cfg.commName = "ib-tclass";
	T_CCOM(ccomCommInitRankConfig(&comm, 2, id[0], rank, &cfg), ccomSuccess);
	rc = check_sum(comm) || check_qps(comm, peer, 0x60, 3);
	spy_install();
	if (!rc) {
		T_CCOM(ccomCommSplit(comm, 0, rank, &child, NULL), ccomSuccess);
		rc = check_sum(child) || check_qps(child, peer, 0x60, 3) || check_rtr(0x60, 3);
		ccomCommDestroy(child);
	}
	if (!rc) {
		T_CCOM(ccomCommInitRank(&plain, 2, id[1], rank), ccomSuccess);
		rc = check_sum(plain) || check_qps(plain, peer, 32, 3) || check_rtr(32, 3);
		ccomCommDestroy(plain);
	}
	ccomCommDestroy(comm);
	if (!rc)
		printf("rank %d: QPs carry traffic class 0x60 (config), 32 (CCOM_IB_TC) and sl 3\n",
		       rank);
	return rc;
}

int main(void)
{
	int pipes[2], status, r, bad = 0;
	pid_t pids[2];

	if (!t_rdma_devices())
		return t_skip("no RDMA device (/sys/class/infiniband): run selftests/libccom/ib/run-vm");
	T_CHECK(!pipe(pipes), "pipe");
	fflush(NULL);
	for (r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(rank_main(r, pipes));
	}
	close(pipes[0]);
	close(pipes[1]);
	for (r = 0; r < 2; r++) {
		T_CHECK(waitpid(pids[r], &status, 0) == pids[r], "waitpid");
		bad += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	T_CHECK(!bad, "%d rank(s) failed", bad);
	printf("PASS: net_ib QPs carry the traffic class and service level\n");
	return T_PASS;
}
