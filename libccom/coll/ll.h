/* SPDX-License-Identifier: MIT */
/*
 * ll.h - what the two flag-in-data protocols of coll/ share: LL (ll.c,
 * a flag per 4 data bytes) and LL128 (ll128.c, a flag per cache line).
 * Both publish the rank's whole input into its slot, then read from
 * every peer the range they need and compute the result the same way
 * (ccom_ll_finish(), in rank order: bitwise identical on every rank).
 */
#ifndef CCOM_COLL_LL_H
#define CCOM_COLL_LL_H

#include <stddef.h>

struct ccomComm;
struct ccom_op;

/**
 * struct ccom_ll_reader - how a protocol reads a peer's published input.
 * @read: wait for local rank @peer's header (checking its signature),
 *	then copy bytes [@off, @off + @len) of its input into @dst (@len
 *	0: the header only, as a synchronisation); 0 or -errno after
 *	ccom_set_last_error()
 */
struct ccom_ll_reader {
	int (*read)(struct ccom_ll_reader *rd, int peer, char *dst, size_t off, size_t len);
};

/* Bytes this rank publishes for @op (0: the header only). */
size_t ccom_ll_publish_bytes(const struct ccom_op *op, int nl, int me);
/*
 * Read what @op needs from every peer into @tmp (peer p at @tmp + p *
 * @stride) and compute the output.
 */
int ccom_ll_finish(struct ccomComm *comm, struct ccom_op *op, struct ccom_ll_reader *rd, char *tmp,
		   size_t stride);

#endif
