// SPDX-License-Identifier: MIT
/*
 * ring_bench.c - does a ring schedule beat the direct one on the nccom
 * engine (one host)?  Not a test: it prints numbers (bench-vm --ring runs
 * it in the guest).
 *
 * For each size (the AllGather output, ccom-perf's size column) it times,
 * on N ranks with the communicator's transport as configured
 * (CCOM_KDEV=1 for the engine):
 *   direct  ccomAllGather (coll/kdev_sched.c: every rank copies every peer's
 *           input straight into its output, 2 synchronisations);
 *   ring    the ring AllGather built from grouped Send/Recv: N-1 steps,
 *           step s sends block (rank - s) to the next rank and receives
 *           block (rank - s - 1) from the previous one, straight into the
 *           output (on kdev each step is one single-copy engine transfer
 *           per rank and a semaphore handshake: what a ring schedule on
 *           the engine would do, step by step).
 * The ring's bytes per rank equal the direct schedule's ((N-1)/N of the
 * output); what differs is N-1 dependent steps against one.  A
 * reduce-scatter ring has the same step structure with reductions.
 *
 * usage: ring_bench N ITERS SIZE...   (sizes in bytes; prints one line per size)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

struct rb {
	int iters, nsizes;
	size_t sizes[16];
	ccomUniqueId id;	/* filled in each rank by t_fork_ranks_id() */
};

static int ring_ag(ccomComm_t comm, char *out, size_t blk, int rank, int n)
{
	int next = (rank + 1) % n, prev = (rank + n - 1) % n, s;

	for (s = 0; s < n - 1; s++) {
		int sb = ((rank - s) % n + n) % n, rb = ((rank - s - 1) % n + n) % n;

		ccomGroupStart();
		ccomSend(out + (size_t)sb * blk, blk, ccomUint8, next, comm, NULL);
		ccomRecv(out + (size_t)rb * blk, blk, ccomUint8, prev, comm, NULL);
		if (ccomGroupEnd() != ccomSuccess)
			return -1;
	}
	return 0;
}

static double timed(ccomComm_t comm, int ring, const char *in, char *out, size_t blk, int rank,
		    int n, int iters)
{
	double t0 = 0, t;
	int i;

	for (i = -2; i < iters; i++) {	/* two warm-up runs */
		if (i == 0) {
			if (ccomCommSynchronize(comm) != ccomSuccess)
				return -1;
			t0 = t_now();
		}
		if (ring) {
			memcpy(out + (size_t)rank * blk, in, blk);
			if (ring_ag(comm, out, blk, rank, n))
				return -1;
		} else if (ccomAllGather(in, out, blk, ccomUint8, comm, NULL) != ccomSuccess) {
			return -1;
		}
	}
	if (ccomCommSynchronize(comm) != ccomSuccess)
		return -1;
	t = (t_now() - t0) / iters;
	/* The slowest rank's time counts. */
	if (ccomAllReduce(&t, &t, 1, ccomFloat64, ccomMax, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess)
		return -1;
	return t;
}

static int bench_rank(int rank, int n, void *arg)
{
	struct rb *b = arg;
	ccomComm_t comm;
	int k;

	if (ccomCommInitRank(&comm, n, b->id, rank) != ccomSuccess) {
		fprintf(stderr, "rank %d: init: %s\n", rank, ccomGetLastError(NULL));
		return 1;
	}
	for (k = 0; k < b->nsizes; k++) {
		size_t blk = b->sizes[k] / (size_t)n;
		char *in = malloc(blk), *out = malloc(blk * (size_t)n);
		double td, tr;
		size_t i;

		if (!in || !out)
			return 1;
		for (i = 0; i < blk; i++)
			in[i] = (char)(rank * 7 + (int)i);
		td = timed(comm, 0, in, out, blk, rank, n, b->iters);
		tr = timed(comm, 1, in, out, blk, rank, n, b->iters);
		for (i = 0; i < blk * (size_t)n; i += 4093)
			if (out[i] != (char)((int)(i / blk) * 7 + (int)(i % blk))) {
				fprintf(stderr, "rank %d: wrong byte %zu after the ring\n", rank, i);
				return 1;
			}
		if (td < 0 || tr < 0) {
			fprintf(stderr, "rank %d: %s\n", rank, ccomGetLastError(comm));
			return 1;
		}
		if (rank == 0)
			printf("ring_bench n %d bytes %zu direct_us %.1f ring_us %.1f ring/direct %.2f\n",
			       n, blk * (size_t)n, td * 1e6, tr * 1e6, tr / td);
		fflush(stdout);
		free(in);
		free(out);
	}
	ccomCommDestroy(comm);
	return 0;
}

int main(int argc, char **argv)
{
	static struct rb b;
	int n, codes[16], k;

	if (argc < 4 || (n = atoi(argv[1])) < 2 || n > 16 || (b.iters = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: ring_bench N(2-16) ITERS SIZE...\n");
		return 2;
	}
	for (k = 3; k < argc && b.nsizes < 16; k++)
		b.sizes[b.nsizes++] = strtoull(argv[k], NULL, 0);
	if (!t_fork_ranks_id(n, bench_rank, &b, codes, 1200, &b.id))
		return 0;
	for (k = 0; k < n; k++)
		if (codes[k])
			fprintf(stderr, "ring_bench: rank %d exited with %d\n", k, codes[k]);
	return 1;
}
