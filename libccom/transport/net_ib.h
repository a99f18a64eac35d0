/* SPDX-License-Identifier: MIT */
/*
 * net_ib.h - the RDMA verbs transport (net_ib.c, net_ib_conn.c,
 * net_ib_verbs.c; what they share is net_ib_private.h): its probe, used by
 * the network choice of select.c, and a private view of a conn for the
 * tests.  coll/ uses only the vtable (transport.h).
 */
#ifndef CCOM_TRANSPORT_NET_IB_H
#define CCOM_TRANSPORT_NET_IB_H

#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

/*
 * Is there an RDMA port net_ib would use (libibverbs loadable, a device
 * matching CCOM_IB_HCA with an ACTIVE port)?  Returns 1, or 0 with the
 * reason (one sentence that names the fix) in @why.  Not collective.
 */
int ccom_net_ib_probe(char *why, size_t why_len);

/* One RDMA port as the topology dump shows it (ccom_net_ib_list_ports). */
struct ccom_net_ib_port_info {
	char dev[64];
	int port;
	char state[16];			/* ACTIVE, DOWN, ... */
	char link_layer[16];		/* InfiniBand or Ethernet */
	int mtu;			/* active MTU in bytes */
	int gid_index;			/* the GID net_ib would use, -1: none (not ACTIVE) */
	char gid_kind[16];		/* RoCE v2 IPv4, RoCE v2, RoCE v1, IB, forced */
	char gid[48];
	int hca_match;			/* CCOM_IB_HCA selects it */
	int selected;			/* the first port net_ib would open (no topo choice) */
	int numa_node;			/* sysfs device/numa_node, -1 unknown (virtual) */
};

/*
 * The ports of every RDMA device libibverbs lists, up to @max, into @out:
 * state, link layer, MTU and the GID index net_ib's rule picks on ACTIVE
 * ones.  Returns how many (0 with the reason in @why when the library or
 * devices are missing).  Not collective; opens and closes each device.
 */
int ccom_net_ib_list_ports(struct ccom_net_ib_port_info *out, int max, char *why, size_t len);

/* Slots net_ib's send direction of @conn has posted and had credited back, or -EINVAL. */
int ccom_net_ib_conn_stats(const struct ccom_transport_conn *conn, uint64_t *posted,
			   uint64_t *credited);

/* Bytes net_ib sent straight from callers' buffers (zero copy) in this process so far. */
uint64_t ccom_net_ib_zcopy_bytes(void);

struct ccomComm;

/*
 * ccomCommRegister (coll/register.c): register [@addr, @addr + @len) with
 * the NIC in every verbs group of @comm now, and in groups it connects
 * later at their first send from it, until ccom_net_ib_unpin(@comm, @id);
 * sends of at least one slot from inside it are then written from it
 * without a copy or a registration of their own.  0; -ENOENT when @comm's
 * network is not net_ib (nothing to do); -errno after a sentence.
 */
int ccom_net_ib_pin(struct ccomComm *comm, uint64_t id, const void *addr, size_t len);
/* Drop pin @id of @comm (a registration still in flight goes with its last write). */
void ccom_net_ib_unpin(struct ccomComm *comm, uint64_t id);

/*
 * For the tests: open the port net_ib would use, probe dma-buf
 * registration (*@supported 1 or 0, the probe's reason in @why), and when
 * @fd >= 0 register [@addr, @addr + @len) of the nccom-exported dma-buf
 * @fd (@offset into it) the way net_ib does, naming the path taken in
 * @via ("dma-buf" or "address (fallback)"), then deregister.  0 or -errno
 * (the reason in @why or ccom_last_error()).
 */
int ccom_net_ib_dmabuf_check(int fd, uint64_t offset, void *addr, size_t len, int *supported,
			     char *via, size_t via_len, char *why, size_t why_len);

#endif
