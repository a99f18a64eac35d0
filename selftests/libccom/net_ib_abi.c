// SPDX-License-Identifier: MIT
/*
 * Description: the verbs layouts net_ib declares itself
 * (libccom/transport/net_ib_abi.h, so that libccom builds without
 * libibverbs-dev) match <infiniband/verbs.h>: the offset of every member
 * net_ib reads or writes and the size of every struct it allocates or
 * passes by pointer to the library.  Skipped where libibverbs-dev is not
 * installed (tools/deps/packages.txt installs it).
 */
#include "test_util.h"

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>

#include "transport/net_ib_abi.h"

static int bad;

#define SAME_SIZE(ours, theirs)							\
	do {									\
		if (sizeof(struct ours) != sizeof(struct theirs)) {		\
			fprintf(stderr, "FAIL: sizeof(%s) %zu != sizeof(%s) %zu\n", #ours, \
				sizeof(struct ours), #theirs, sizeof(struct theirs)); \
			bad++;							\
		}								\
	} while (0)
#define SAME_OFF(ours, theirs, m)						\
	do {									\
		if (offsetof(struct ours, m) != offsetof(struct theirs, m)) {	\
			fprintf(stderr, "FAIL: offsetof(%s, %s) %zu != %zu\n", #ours, #m, \
				offsetof(struct ours, m), offsetof(struct theirs, m)); \
			bad++;							\
		}								\
	} while (0)
#define SAME_VAL(ours, theirs)							\
	do {									\
		if ((long)(ours) != (long)(theirs)) {				\
			fprintf(stderr, "FAIL: %s %ld != %s %ld\n", #ours, (long)(ours), \
				#theirs, (long)(theirs));			\
			bad++;							\
		}								\
	} while (0)

int main(void)
{
	SAME_SIZE(ccib_context_ops, ibv_context_ops);
	SAME_OFF(ccib_context_ops, ibv_context_ops, poll_cq);
	SAME_OFF(ccib_context_ops, ibv_context_ops, req_notify_cq);
	SAME_OFF(ccib_context_ops, ibv_context_ops, post_send);
	SAME_OFF(ccib_context_ops, ibv_context_ops, post_recv);
	SAME_SIZE(ccib_context, ibv_context);
	SAME_OFF(ccib_context, ibv_context, ops);
	/* Ours is larger on purpose (room for newer members); the prefix must match. */
	if (sizeof(struct ccib_port_attr) < sizeof(struct ibv_port_attr)) {
		fprintf(stderr, "FAIL: struct ccib_port_attr is smaller than struct ibv_port_attr\n");
		bad++;
	}
	SAME_OFF(ccib_port_attr, ibv_port_attr, state);
	SAME_OFF(ccib_port_attr, ibv_port_attr, active_mtu);
	SAME_OFF(ccib_port_attr, ibv_port_attr, gid_tbl_len);
	SAME_OFF(ccib_port_attr, ibv_port_attr, lid);
	SAME_OFF(ccib_port_attr, ibv_port_attr, link_layer);
	SAME_SIZE(ccib_mr, ibv_mr);
	SAME_OFF(ccib_mr, ibv_mr, lkey);
	SAME_OFF(ccib_mr, ibv_mr, rkey);
	SAME_SIZE(ccib_comp_channel, ibv_comp_channel);
	SAME_OFF(ccib_comp_channel, ibv_comp_channel, fd);
	SAME_OFF(ccib_cq, ibv_cq, context);
	SAME_OFF(ccib_qp, ibv_qp, context);
	SAME_OFF(ccib_qp, ibv_qp, qp_num);
	SAME_SIZE(ccib_qp_cap, ibv_qp_cap);
	SAME_SIZE(ccib_qp_init_attr, ibv_qp_init_attr);
	SAME_OFF(ccib_qp_init_attr, ibv_qp_init_attr, cap);
	SAME_OFF(ccib_qp_init_attr, ibv_qp_init_attr, qp_type);
	SAME_SIZE(ccib_global_route, ibv_global_route);
	SAME_SIZE(ccib_ah_attr, ibv_ah_attr);
	SAME_OFF(ccib_ah_attr, ibv_ah_attr, dlid);
	SAME_OFF(ccib_ah_attr, ibv_ah_attr, is_global);
	SAME_OFF(ccib_ah_attr, ibv_ah_attr, port_num);
	SAME_SIZE(ccib_qp_attr, ibv_qp_attr);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, path_mtu);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, rq_psn);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, sq_psn);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, dest_qp_num);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, qp_access_flags);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, ah_attr);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, pkey_index);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, max_rd_atomic);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, max_dest_rd_atomic);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, min_rnr_timer);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, port_num);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, timeout);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, retry_cnt);
	SAME_OFF(ccib_qp_attr, ibv_qp_attr, rnr_retry);
	SAME_SIZE(ccib_sge, ibv_sge);
	SAME_SIZE(ccib_send_wr, ibv_send_wr);
	SAME_OFF(ccib_send_wr, ibv_send_wr, sg_list);
	SAME_OFF(ccib_send_wr, ibv_send_wr, num_sge);
	SAME_OFF(ccib_send_wr, ibv_send_wr, opcode);
	SAME_OFF(ccib_send_wr, ibv_send_wr, send_flags);
	SAME_OFF(ccib_send_wr, ibv_send_wr, imm_data);
	SAME_OFF(ccib_send_wr, ibv_send_wr, wr.rdma.remote_addr);
	SAME_OFF(ccib_send_wr, ibv_send_wr, wr.rdma.rkey);
	SAME_SIZE(ccib_recv_wr, ibv_recv_wr);
	SAME_SIZE(ccib_wc, ibv_wc);
	SAME_OFF(ccib_wc, ibv_wc, status);
	SAME_OFF(ccib_wc, ibv_wc, opcode);
	SAME_OFF(ccib_wc, ibv_wc, vendor_err);
	SAME_OFF(ccib_wc, ibv_wc, imm_data);
	SAME_VAL(CCIB_PORT_ACTIVE, IBV_PORT_ACTIVE);
	SAME_VAL(CCIB_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
	SAME_VAL(CCIB_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_INFINIBAND);
	SAME_VAL(CCIB_MTU_256, IBV_MTU_256);
	SAME_VAL(CCIB_MTU_1024, IBV_MTU_1024);
	SAME_VAL(CCIB_MTU_4096, IBV_MTU_4096);
	SAME_VAL(CCIB_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
	SAME_VAL(CCIB_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
	SAME_VAL(CCIB_QPT_RC, IBV_QPT_RC);
	SAME_VAL(CCIB_QPS_INIT, IBV_QPS_INIT);
	SAME_VAL(CCIB_QPS_RTR, IBV_QPS_RTR);
	SAME_VAL(CCIB_QPS_RTS, IBV_QPS_RTS);
	SAME_VAL(CCIB_QPS_ERR, IBV_QPS_ERR);
	SAME_VAL(CCIB_QP_STATE, IBV_QP_STATE);
	SAME_VAL(CCIB_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
	SAME_VAL(CCIB_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
	SAME_VAL(CCIB_QP_PORT, IBV_QP_PORT);
	SAME_VAL(CCIB_QP_AV, IBV_QP_AV);
	SAME_VAL(CCIB_QP_PATH_MTU, IBV_QP_PATH_MTU);
	SAME_VAL(CCIB_QP_TIMEOUT, IBV_QP_TIMEOUT);
	SAME_VAL(CCIB_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
	SAME_VAL(CCIB_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
	SAME_VAL(CCIB_QP_RQ_PSN, IBV_QP_RQ_PSN);
	SAME_VAL(CCIB_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
	SAME_VAL(CCIB_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
	SAME_VAL(CCIB_QP_SQ_PSN, IBV_QP_SQ_PSN);
	SAME_VAL(CCIB_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
	SAME_VAL(CCIB_QP_DEST_QPN, IBV_QP_DEST_QPN);
	SAME_VAL(CCIB_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
	SAME_VAL(CCIB_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
	SAME_VAL(CCIB_SEND_SIGNALED, IBV_SEND_SIGNALED);
	SAME_VAL(CCIB_WC_SUCCESS, IBV_WC_SUCCESS);
	SAME_VAL(CCIB_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
	SAME_VAL(CCIB_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
	SAME_VAL(CCIB_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
	SAME_VAL(CCIB_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
	SAME_VAL(CCIB_WC_RESP_TIMEOUT_ERR, IBV_WC_RESP_TIMEOUT_ERR);
	SAME_VAL(CCIB_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
	SAME_VAL(CCIB_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
	if (bad) {
		fprintf(stderr, "%d layout differences between net_ib_abi.h and <infiniband/verbs.h>\n", bad);
		return T_FAIL;
	}
	printf("net_ib_abi.h matches <infiniband/verbs.h>\n");
	return T_PASS;
}
#else
int main(void)
{
	return t_skip("<infiniband/verbs.h> is not installed (Debian: libibverbs-dev)");
}
#endif
