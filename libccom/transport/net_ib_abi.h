/* SPDX-License-Identifier: MIT */
/*
 * net_ib_abi.h - the part of libibverbs' binary interface (libibverbs.so.1,
 * symbol version IBVERBS_1.1) that net_ib uses, declared here so that
 * libccom builds without libibverbs-dev: net_ib_verbs.c loads the library
 * with dlopen() at run time (see Documentation/libccom/net_ib.rst).
 *
 * Only what net_ib touches is declared, under our own names (ccib_*);
 * the layouts are those of the public ABI, which rdma-core keeps stable.
 * Members net_ib never reads are kept as padding of the same size.
 * selftests/libccom/net_ib_abi.c compares every offset and size below with
 * <infiniband/verbs.h> when that header is installed.
 *
 * The data-path verbs (post_send, post_recv, poll_cq, req_notify_cq) are
 * inline functions in verbs.h that call through the context's ops table;
 * net_ib.c does the same through struct ccib_context_ops.
 */
#ifndef CCOM_TRANSPORT_NET_IB_ABI_H
#define CCOM_TRANSPORT_NET_IB_ABI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ccib_device;
struct ccib_pd;
struct ccib_cq;
struct ccib_qp;
struct ccib_send_wr;
struct ccib_recv_wr;
struct ccib_wc;

/* enum values of verbs.h */
#define CCIB_PORT_ACTIVE 4
#define CCIB_LINK_LAYER_INFINIBAND 1
#define CCIB_LINK_LAYER_ETHERNET 2
#define CCIB_MTU_256 1
#define CCIB_MTU_1024 3
#define CCIB_MTU_4096 5
#define CCIB_ACCESS_LOCAL_WRITE 1
#define CCIB_ACCESS_REMOTE_WRITE 2
#define CCIB_QPT_RC 2
#define CCIB_QPS_RESET 0
#define CCIB_QPS_INIT 1
#define CCIB_QPS_RTR 2
#define CCIB_QPS_RTS 3
#define CCIB_QPS_ERR 6
#define CCIB_QP_STATE (1 << 0)
#define CCIB_QP_ACCESS_FLAGS (1 << 3)
#define CCIB_QP_PKEY_INDEX (1 << 4)
#define CCIB_QP_PORT (1 << 5)
#define CCIB_QP_AV (1 << 7)
#define CCIB_QP_PATH_MTU (1 << 8)
#define CCIB_QP_TIMEOUT (1 << 9)
#define CCIB_QP_RETRY_CNT (1 << 10)
#define CCIB_QP_RNR_RETRY (1 << 11)
#define CCIB_QP_RQ_PSN (1 << 12)
#define CCIB_QP_MAX_QP_RD_ATOMIC (1 << 13)
#define CCIB_QP_MIN_RNR_TIMER (1 << 15)
#define CCIB_QP_SQ_PSN (1 << 16)
#define CCIB_QP_MAX_DEST_RD_ATOMIC (1 << 17)
#define CCIB_QP_DEST_QPN (1 << 20)
#define CCIB_WR_RDMA_WRITE 0
#define CCIB_WR_RDMA_WRITE_WITH_IMM 1
#define CCIB_SEND_SIGNALED (1 << 1)
#define CCIB_WC_SUCCESS 0
#define CCIB_WC_WR_FLUSH_ERR 5
#define CCIB_WC_RETRY_EXC_ERR 12
#define CCIB_WC_RNR_RETRY_EXC_ERR 13
#define CCIB_WC_REM_ABORT_ERR 16
#define CCIB_WC_RESP_TIMEOUT_ERR 20
#define CCIB_WC_RDMA_WRITE 1
#define CCIB_WC_RECV_RDMA_WITH_IMM ((1 << 7) + 1)

union ccib_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

/* struct ibv_context_ops: 32 pointers; the four net_ib.c calls are named. */
struct ccib_context_ops {
	void *pad0[11];
	int (*poll_cq)(struct ccib_cq *cq, int num_entries, struct ccib_wc *wc);
	int (*req_notify_cq)(struct ccib_cq *cq, int solicited_only);
	void *pad1[12];
	int (*post_send)(struct ccib_qp *qp, struct ccib_send_wr *wr, struct ccib_send_wr **bad);
	int (*post_recv)(struct ccib_qp *qp, struct ccib_recv_wr *wr, struct ccib_recv_wr **bad);
	void *pad2[5];
};

struct ccib_context {
	struct ccib_device *device;
	struct ccib_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
};

struct ccib_port_attr {
	int state;
	int max_mtu;
	int active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
	uint32_t active_speed_ex;	/* newer rdma-core; room to spare for older */
	uint8_t spare[60];
};

struct ccib_mr {
	struct ccib_context *context;
	struct ccib_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

struct ccib_comp_channel {
	struct ccib_context *context;
	int fd;
	int refcnt;
};

struct ccib_cq {
	struct ccib_context *context;
	struct ccib_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	/* mutex, cond, event counters follow: never touched here */
};

struct ccib_qp {
	struct ccib_context *context;
	void *qp_context;
	struct ccib_pd *pd;
	struct ccib_cq *send_cq;
	struct ccib_cq *recv_cq;
	void *srq;
	uint32_t handle;
	uint32_t qp_num;
	int state;
	int qp_type;
	/* mutex, cond, events_completed follow: never touched here */
};

struct ccib_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ccib_qp_init_attr {
	void *qp_context;
	struct ccib_cq *send_cq;
	struct ccib_cq *recv_cq;
	void *srq;
	struct ccib_qp_cap cap;
	int qp_type;
	int sq_sig_all;
};

struct ccib_global_route {
	union ccib_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct ccib_ah_attr {
	struct ccib_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct ccib_qp_attr {
	int qp_state;
	int cur_qp_state;
	int path_mtu;
	int path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	struct ccib_qp_cap cap;
	struct ccib_ah_attr ah_attr;
	struct ccib_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint32_t rate_limit;
};

struct ccib_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct ccib_send_wr {
	uint64_t wr_id;
	struct ccib_send_wr *next;
	struct ccib_sge *sg_list;
	int num_sge;
	int opcode;
	unsigned int send_flags;
	uint32_t imm_data;		/* network byte order */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		uint64_t pad[4];	/* the atomic and ud members */
	} wr;
	uint32_t xrc_remote_srqn;
	uint64_t pad_bind_tso[6];	/* the bind_mw / tso union */
};

struct ccib_recv_wr {
	uint64_t wr_id;
	struct ccib_recv_wr *next;
	struct ccib_sge *sg_list;
	int num_sge;
};

struct ccib_wc {
	uint64_t wr_id;
	int status;
	int opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;		/* network byte order */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

#endif
