// SPDX-License-Identifier: MIT
/*
 * mpi_colls.c - the MPI side of bench/compare-vm.sh: MPI_Allreduce (fp32
 * sum), MPI_Allgather, MPI_Alltoall and MPI_Bcast, timed like nccl-tests
 * and ccom-perf, out-of-place, verified once per size.
 *
 * Usage: mpirun -np N mpi_colls COLL [-b minbytes] [-e maxbytes] [-f factor]
 *                                    [-w warmup] [-i iters]
 * COLL: allreduce allgather alltoall broadcast.  Sizes (K/M/G suffixes)
 * follow nccl-tests: the whole buffer (AllReduce, Broadcast), the gathered
 * output (AllGather), every rank's send buffer (AlltoAll).  The time of one
 * size is the slowest rank's average per op (MPI_MAX over ranks).
 *
 * Output: nccl-tests columns (size, count, type, redop, root, time, algbw,
 * busbw, #wrong); busbw = algbw * 2(n-1)/n (AllReduce), (n-1)/n (AllGather,
 * AlltoAll), 1 (Broadcast).  Exit 1 if any value is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum coll { ALLREDUCE, ALLGATHER, ALLTOALL, BROADCAST };

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0) {
		fprintf(stderr, "mpi_colls: bad size '%s'\n", s);
		exit(2);
	}
	if (*end == 'K' || *end == 'k')
		v *= 1024;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		v *= 1024.0 * 1024 * 1024;
	else if (*end) {
		fprintf(stderr, "mpi_colls: bad size suffix in '%s'\n", s);
		exit(2);
	}
	return (size_t)v;
}

/* Element i of rank r's contribution; exact in fp32 for these rank counts. */
static float val(int r, size_t i)
{
	return (float)((r + 1) * (int)(1 + i % 7));
}

/* Fill the send buffer, run one op, count wrong elements of the output. */
static long run_checked(enum coll c, float *s, float *d, size_t cnt, int rank, int n)
{
	size_t per = cnt / (size_t)n, i;
	long wrong = 0;

	switch (c) {
	case ALLREDUCE:
		for (i = 0; i < cnt; i++)
			s[i] = val(rank, i);
		MPI_Allreduce(s, d, (int)cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		for (i = 0; i < cnt; i++)
			wrong += d[i] != (float)(n * (n + 1) / 2) * (float)(1 + i % 7);
		break;
	case ALLGATHER:
		for (i = 0; i < per; i++)
			s[i] = val(rank, i);
		MPI_Allgather(s, (int)per, MPI_FLOAT, d, (int)per, MPI_FLOAT, MPI_COMM_WORLD);
		for (i = 0; i < per * (size_t)n; i++)
			wrong += d[i] != val((int)(i / per), i % per);
		break;
	case ALLTOALL:
		for (i = 0; i < cnt; i++)
			s[i] = val(rank, i);
		MPI_Alltoall(s, (int)per, MPI_FLOAT, d, (int)per, MPI_FLOAT, MPI_COMM_WORLD);
		for (i = 0; i < per * (size_t)n; i++)
			wrong += d[i] != val((int)(i / per), (size_t)rank * per + i % per);
		break;
	case BROADCAST:
		for (i = 0; i < cnt; i++)
			d[i] = rank == 0 ? val(0, i) : 0.0f;
		MPI_Bcast(d, (int)cnt, MPI_FLOAT, 0, MPI_COMM_WORLD);
		for (i = 0; i < cnt; i++)
			wrong += d[i] != val(0, i);
		break;
	}
	return wrong;
}

static void run(enum coll c, float *s, float *d, size_t cnt, int n)
{
	int per = (int)(cnt / (size_t)n);

	switch (c) {
	case ALLREDUCE:
		MPI_Allreduce(s, d, (int)cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		MPI_Allgather(s, per, MPI_FLOAT, d, per, MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		MPI_Alltoall(s, per, MPI_FLOAT, d, per, MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case BROADCAST:
		MPI_Bcast(d, (int)cnt, MPI_FLOAT, 0, MPI_COMM_WORLD);
		break;
	}
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "allreduce", "allgather", "alltoall", "broadcast" };
	size_t minb = 65536, maxb = 16 << 20, b;
	double factor = 16, bus;
	int warmup = 1, iters = 3, rank, n, i, bad = 0;
	enum coll c = ALLREDUCE;
	float *s, *d;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc < 2) {
		fprintf(stderr, "usage: mpi_colls allreduce|allgather|alltoall|broadcast [-b B] [-e B] [-f F] [-w N] [-i N]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (i = 0; i < 4 && strcmp(argv[1], names[i]); i++)
		;
	if (i == 4) {
		fprintf(stderr, "mpi_colls: unknown collective '%s'\n", argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	c = (enum coll)i;
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-b"))
			minb = parse_size(argv[i + 1]);
		else if (!strcmp(argv[i], "-e"))
			maxb = parse_size(argv[i + 1]);
		else if (!strcmp(argv[i], "-f"))
			factor = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "-w"))
			warmup = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-i"))
			iters = atoi(argv[i + 1]);
	}
	if (factor < 1.5)
		factor = 2;
	bus = c == ALLREDUCE ? 2.0 * (n - 1) / n : c == BROADCAST ? 1.0 : (double)(n - 1) / n;
	s = malloc(maxb);
	d = malloc(maxb);
	if (!s || !d) {
		fprintf(stderr, "mpi_colls: out of memory for %zu bytes\n", maxb);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0)
		printf("# mpi_colls %s: %d ranks, float%s\n#%11s %13s %9s %7s %5s %9s %7s %7s %7s\n",
		       names[c], n, c == ALLREDUCE ? ", sum" : "", "size", "count", "type", "redop",
		       "root", "time", "algbw", "busbw", "#wrong");
	for (b = minb; b <= maxb; b = (size_t)((double)b * factor)) {
		size_t cnt = b / sizeof(float);
		double t0, t, tmax;
		long wrong, wsum;

		cnt -= cnt % (size_t)n;
		wrong = run_checked(c, s, d, cnt, rank, n);
		for (i = 0; i < warmup; i++)
			run(c, s, d, cnt, n);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (i = 0; i < iters; i++)
			run(c, s, d, cnt, n);
		t = (MPI_Wtime() - t0) / iters * 1e6;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		MPI_Reduce(&wrong, &wsum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			double alg = (double)(cnt * sizeof(float)) / tmax / 1e3;

			printf("%12zu %13zu %9s %7s %5d %9.2f %7.4f %7.4f %7ld\n", cnt * sizeof(float),
			       cnt, "float", c == ALLREDUCE ? "sum" : "-", c == BROADCAST ? 0 : -1,
			       tmax, alg, alg * bus, wsum);
			bad |= wsum != 0;
		}
		if (b == maxb)
			break;
	}
	free(s);
	free(d);
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad;
}
