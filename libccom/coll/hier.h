/* SPDX-License-Identifier: MIT */
/*
 * hier.h - the host layout the hierarchical schedules share (coll/hier.c,
 * coll/hier_alltoall.c), private to coll/.
 */
#ifndef CCOM_COLL_HIER_H
#define CCOM_COLL_HIER_H

struct ccomComm;
struct ccom_op;

/**
 * struct ccom_hier - where the ranks are, cached in comm->coll->hier.
 * @nhosts: hosts of the communicator
 * @lmax: most ranks on one host
 * @nlocal: ranks of host h
 * @host_rank: rank of local index l of host h at [h * lmax + l] (sorted by rank)
 * @grp: scratch group of up to max(nhosts, lmax) ranks
 * @grp2: a second one
 */
struct ccom_hier {
	int nhosts, lmax;
	int *nlocal;
	int *host_rank;
	int *grp;
	int *grp2;
};

/* The layout of @comm (built on first use); NULL when out of memory. */
struct ccom_hier *ccom_hier_get(struct ccomComm *comm);
/* AlltoAll aggregated per host pair (hier_alltoall.c): 0 or -errno. */
int ccom_hier_alltoall(struct ccomComm *comm, struct ccom_hier *h, struct ccom_op *op);

#endif
