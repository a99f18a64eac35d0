// SPDX-License-Identifier: MIT
/*
 * mpi_allreduce.c - the MPI side of bench/compare.sh: MPI_Allreduce of
 * fp32 sums, timed like nccl-tests (and ccom-perf), out-of-place, verified.
 *
 * Usage: mpirun -np N mpi_allreduce [-b minbytes] [-e maxbytes] [-f factor]
 *                                    [-w warmup] [-i iters]
 * Sizes accept K/M/G suffixes.  Every rank fills element i with
 * (rank + 1) * (1 + i % 7); the result must be n(n+1)/2 * (1 + i % 7),
 * exact in fp32 for the rank counts used here.  Iteration counts come from
 * the command line, identical on every rank, so no rank waits for a
 * collective the others never call.  The time of one size is the slowest
 * rank's average per op (MPI_MAX over ranks), as nccl-tests reports it.
 *
 * Output: nccl-tests columns (size, count, type, redop, root, time, algbw,
 * busbw, #wrong); busbw = algbw * 2(n-1)/n.  Exit 1 if any value is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	size_t minb, maxb;
	double factor;
	int warmup, iters;
};

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0) {
		fprintf(stderr, "mpi_allreduce: bad size '%s'\n", s);
		exit(2);
	}
	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	case '\0': break;
	default:
		fprintf(stderr, "mpi_allreduce: bad size suffix in '%s'\n", s);
		exit(2);
	}
	return (size_t)v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){ .minb = 8, .maxb = 256 << 20, .factor = 2, .warmup = 5, .iters = 20 };
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-b"))
			o->minb = parse_size(argv[i + 1]);
		else if (!strcmp(argv[i], "-e"))
			o->maxb = parse_size(argv[i + 1]);
		else if (!strcmp(argv[i], "-f"))
			o->factor = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-w"))
			o->warmup = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-i"))
			o->iters = atoi(argv[i + 1]);
		else
			break;
	}
	if (i < argc || o->factor <= 1 || o->iters < 1 || o->warmup < 0 || o->minb < 4 ||
	    o->maxb < o->minb) {
		fprintf(stderr, "usage: mpi_allreduce [-b minbytes] [-e maxbytes] [-f factor>1] [-w warmup] [-i iters>0]\n");
		exit(2);
	}
}

static long check(const float *out, size_t count, int n)
{
	float expect = (float)n * (n + 1) / 2;
	long wrong = 0;
	size_t i;

	for (i = 0; i < count; i++)
		if (out[i] != expect * (float)(1 + i % 7))
			wrong++;
	return wrong;
}

static long run_size(size_t bytes, const struct opts *o, int rank, int n, float *in, float *out)
{
	size_t count = bytes / sizeof(float), i;
	double t0, dt, tmax;
	long wrong, wsum;
	int it;

	for (i = 0; i < count; i++)
		in[i] = (float)(rank + 1) * (float)(1 + i % 7);
	memset(out, 0, count * sizeof(float));
	for (it = 0; it < o->warmup; it++)
		MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (it = 0; it < o->iters; it++)
		MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	dt = (MPI_Wtime() - t0) / o->iters;
	MPI_Allreduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	wrong = check(out, count, n);
	MPI_Allreduce(&wrong, &wsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		double us = tmax * 1e6, algbw = bytes / tmax / 1e9;

		printf("%12zu  %12zu  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %6ld\n", count * 4, count,
		       "float", "sum", -1, us, algbw, algbw * 2.0 * (n - 1) / n, wsum);
		fflush(stdout);
	}
	return wsum;
}

int main(int argc, char **argv)
{
	struct opts o;
	float *in, *out;
	long wrong = 0;
	int rank, n;
	size_t b;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	parse_opts(argc, argv, &o);
	in = malloc(o.maxb + 4);
	out = malloc(o.maxb + 4);
	if (!in || !out) {
		fprintf(stderr, "mpi_allreduce: cannot allocate 2 x %zu bytes\n", o.maxb);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0) {
		printf("# mpi_allreduce: %d ranks, warmup %d, iters %d\n", n, o.warmup, o.iters);
		printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s\n", "size", "count", "type",
		       "redop", "root", "time", "algbw", "busbw", "#wrong");
		printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %6s\n", "(B)", "(elements)", "", "",
		       "", "(us)", "(GB/s)", "(GB/s)", "");
	}
	for (b = o.minb; b <= o.maxb; b = (size_t)(b * o.factor) > b ? (size_t)(b * o.factor) : b + 4)
		wrong += run_size(b / 4 * 4, &o, rank, n, in, out);
	if (rank == 0)
		printf("# Out of bounds values : %ld %s\n", wrong, wrong ? "FAILED" : "OK");
	free(in);
	free(out);
	MPI_Finalize();
	return wrong ? 1 : 0;
}
