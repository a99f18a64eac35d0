// SPDX-License-Identifier: MIT
/*
 * Description: test helper acting as one rank of a communicator through
 * libccom's publish API (libccom/publish/publish.h) without running
 * collectives: it publishes comm HASH rank R of N, walks the init stages up
 * to STAGE, counts OPS issued and completed operations (plus STALL issued
 * ones that never complete), optionally records an error, prints "ready"
 * and sleeps until killed (SIGTERM closes the state file; SIGKILL leaves a
 * stale one).
 *
 * usage: pub_rank HASH RANK NRANKS STAGE OPS STALL [ERRNO]
 * Exit: 0 after SIGTERM, 1 on a usage error, 2 if publishing failed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "publish/publish.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
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
	if (argc > 7)
		ccom_publish_error(p, -atoi(argv[7]), "pub_rank: injected error", 0);
	printf("ready %s\n", p->path);
	fflush(stdout);
	while (!stop)
		pause();
	ccom_publish_close(p);
	return 0;
}
