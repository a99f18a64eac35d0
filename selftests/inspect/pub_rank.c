// SPDX-License-Identifier: MIT
/*
 * Description: test helper acting as one rank of a communicator through
 * libccom's publish API (libccom/publish/publish.h) without running
 * collectives: it publishes comm HASH rank R of N, walks the init stages up
 * to STAGE, counts OPS issued and completed operations (plus STALL issued
 * ones that never complete), optionally records an error, prints "ready"
 * and sleeps until killed (SIGTERM closes the state file; SIGKILL leaves a
 * stale one).  With PUB_RANK_RING=1 it also publishes a flight-recorder
 * ring as libccom's proxy/flight.c does (the format of ccom_pubstate.h):
 * ops 1..OPS done and the STALL ones started, each an AllReduce of 1024
 * floats (sum, ring/simple), so that the tools' op-level localisation can
 * be tested on states a real job cannot be held in (a rank that issued op
 * k, while the others completed it).  PUB_RANK_SIZE=N stores N as the
 * file's size field, as a writer of an older layout would (512: version 2
 * before the ring; 2304: before the communicator's name).  PUB_RANK_NAME
 * names the communicator (ccomConfig_t.commName); PUB_RANK_CMA is the CMA
 * path's sentence (2320: a size before it).
 *
 * usage: pub_rank HASH RANK NRANKS STAGE OPS STALL [ERRNO]
 * Exit: 0 after SIGTERM, 1 on a usage error, 2 if publishing failed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccom.h"
#include "core/comm.h"
#include "publish/publish.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void publish_ring(struct ccom_publish *p, long done, long started)
{
	struct ccom_pub_op *ring = ccom_publish_ops_map(p, 64), *e;
	struct ccom_pub_ops *t;
	struct timespec ts;
	long s;

	if (!ring) {
		fprintf(stderr, "pub_rank: cannot map the op ring\n");
		exit(2);
	}
	t = ccom_publish_ops_names(p);
	snprintf(t->kind_names[0], CCOM_PUB_NAME_LEN, "AllReduce");
	snprintf(t->dtype_names[ccomFloat32], CCOM_PUB_NAME_LEN, "float");
	snprintf(t->redop_names[ccomSum], CCOM_PUB_NAME_LEN, "sum");
	snprintf(t->algo_names[0], CCOM_PUB_NAME_LEN, "-");
	snprintf(t->algo_names[1], CCOM_PUB_NAME_LEN, "ring");
	snprintf(t->algo_names[2], CCOM_PUB_NAME_LEN, "simple");
	t->algo_count = 3;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (s = 1; s <= done + started; s++) {
		e = &ring[s & 63];
		e->count = 1024;
		e->kind = 0;
		e->dtype = ccomFloat32;
		e->op = ccomSum;
		e->root = -1;
		e->algo = 1;
		e->proto = 2;
		e->stream_seq = (uint32_t)s;
		e->t_enqueue_us = e->t_start_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - 1500000;
		e->state = s <= done ? CCOM_PUB_OP_DONE : CCOM_PUB_OP_STARTED;
		if (s <= done)
			e->t_end_us = e->t_start_us + 100;
		__atomic_store_n(&e->seq, (uint64_t)s, __ATOMIC_RELEASE);
	}
	ccom_publish_ops_ready(p, 64);
}

int main(int argc, char **argv)
{
	struct ccomComm comm;
	struct ccom_publish *p;
	long stage, ops, stall, i;

	if (argc < 7) {
		fprintf(stderr, "usage: pub_rank HASH RANK NRANKS STAGE OPS STALL [ERRNO]\n");
		return 1;
	}
	memset(&comm, 0, sizeof(comm));
	comm.comm_hash = strtoull(argv[1], NULL, 16);
	comm.rank = atoi(argv[2]);
	comm.nranks = atoi(argv[3]);
	comm.device = -1;
	if (getenv("PUB_RANK_NAME"))
		snprintf(comm.name, sizeof(comm.name), "%s", getenv("PUB_RANK_NAME"));
	stage = atol(argv[4]);
	ops = atol(argv[5]);
	stall = atol(argv[6]);
	signal(SIGTERM, on_term);
	p = ccom_publish_open(&comm);
	if (!p) {
		fprintf(stderr, "pub_rank: publishing is disabled or failed (CCOM_PUBLISH_DIR=%s)\n",
			getenv("CCOM_PUBLISH_DIR") ? getenv("CCOM_PUBLISH_DIR") : "");
		return 2;
	}
	for (i = 0; i <= stage && i < CCOM_INIT_NSTAGES; i++)
		ccom_publish_init_stage(p, (int)i);
	for (i = 0; i < ops + stall; i++)
		ccom_publish_op_issued(p);
	for (i = 0; i < ops; i++)
		ccom_publish_op_completed(p);
	if (getenv("PUB_RANK_RING") && atoi(getenv("PUB_RANK_RING")))
		publish_ring(p, ops, stall);
	if (getenv("PUB_RANK_CMA"))
		ccom_publish_cma(p, getenv("PUB_RANK_CMA"));
	if (getenv("PUB_RANK_SIZE"))
		p->file->size = (uint32_t)atoi(getenv("PUB_RANK_SIZE"));
	if (argc > 7)
		ccom_publish_error(p, -atoi(argv[7]), "pub_rank: injected error", 0);
	printf("ready %s\n", p->path);
	fflush(stdout);
	while (!stop)
		pause();
	ccom_publish_close(p);
	return 0;
}
