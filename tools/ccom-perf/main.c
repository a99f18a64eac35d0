// SPDX-License-Identifier: MIT
/*
 * main.c - ccom-perf's command line and launch: `-n N` forks N local
 * ranks; without it the process is one rank of a job started by mpirun /
 * srun / torchrun (ccomCommInitFromEnv reads the launcher's variables).
 *
 * Usage: ccom-perf <collective> [-n ranks] [-b minbytes] [-e maxbytes]
 *        [-f factor] [-d dtype] [-o op] [-r root] [-w warmup] [-i iters]
 *        [-c check] [-m] [-B 0|1] [-R] [-H hosts]
 * Exit status: 0 when every value was right, 1 on wrong values, 2 on an
 * error (bad arguments, a failed call, a rank that died).
 */
#include <errno.h>
#include <sched.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf.h"

static const char *const coll_names[PERF_NCOLLS] = {
	"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall", "sendrecv",
	"gather", "scatter"
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ccom-perf <allreduce|broadcast|reduce|allgather|reducescatter|alltoall|sendrecv|\n"
		   "                 gather|scatter>\n"
		   "         [-n ranks] [-b minbytes] [-e maxbytes] [-f factor] [-d dtype] [-o op]\n"
		   "         [-r root] [-w warmup] [-i iters] [-c 0|1] [-m] [-G] [-B 0|1] [-R] [-H hosts]\n"
		   "  -n N   fork N local ranks (default: one rank of an mpirun/srun/torchrun job)\n"
		   "  -H H   with -n N: run the ranks as H simulated hosts of N/H ranks each (ranks\n"
		   "         0..N/H-1 on the first, ...; distinct CCOM_HOSTID per block), so the\n"
		   "         network transport (CCOM_NET) carries the traffic between blocks\n"
		   "  -b/-e  sizes in bytes (K, M, G suffixes), default 32M; -f multiplier (default 2)\n"
		   "  -d     int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double\n"
		   "  -o     sum prod max min avg;  -r root of broadcast/reduce/gather/scatter (default 0)\n"
		   "  -w/-i  warm-up and timed iterations (default: scaled by size, agreed by all ranks)\n"
		   "  -c     check results (default 1);  -m  buffers from ccomMemAlloc\n"
		   "  -G     register the buffers once with ccomCommRegister (pinned up front)\n"
		   "  -B     with -n: bind rank i to the i-th allowed CPU when ranks <= CPUs\n"
		   "         (default 1, as mpirun binds 2 ranks to cores)\n"
		   "  -R     roofline: per size, this machine's memcpy and reduce bandwidth (every\n"
		   "         rank at once) and busbw as a percentage of the path's memory bound\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end && strcasecmp(end, "B"))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_dtype(const char *s, ccomDataType_t *dt)
{
	static const struct { const char *n; ccomDataType_t t; } m[] = {
		{ "int8", ccomInt8 }, { "char", ccomInt8 }, { "uint8", ccomUint8 },
		{ "int32", ccomInt32 }, { "int", ccomInt32 }, { "uint32", ccomUint32 },
		{ "int64", ccomInt64 }, { "uint64", ccomUint64 }, { "half", ccomFloat16 },
		{ "fp16", ccomFloat16 }, { "float16", ccomFloat16 }, { "float", ccomFloat32 },
		{ "fp32", ccomFloat32 }, { "float32", ccomFloat32 }, { "double", ccomFloat64 },
		{ "fp64", ccomFloat64 }, { "float64", ccomFloat64 }, { "bfloat16", ccomBfloat16 },
		{ "bf16", ccomBfloat16 },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcasecmp(s, m[i].n)) {
			*dt = m[i].t;
			return 0;
		}
	return -1;
}

static int parse_op(const char *s, ccomRedOp_t *op)
{
	static const char *const n[] = { "sum", "prod", "max", "min", "avg" };

	for (int i = 0; i < 5; i++)
		if (!strcasecmp(s, n[i])) {
			*op = (ccomRedOp_t)i;
			return 0;
		}
	return -1;
}

static int parse_coll(const char *s, enum perf_coll *c)
{
	for (int i = 0; i < PERF_NCOLLS; i++)
		if (!strcasecmp(s, coll_names[i])) {
			*c = (enum perf_coll)i;
			return 0;
		}
	if (!strcasecmp(s, "reduce_scatter") || !strcasecmp(s, "all_reduce") ||
	    !strcasecmp(s, "all_gather")) {
		*c = s[0] == 'r' ? PERF_REDUCESCATTER : s[4] == 'r' ? PERF_ALLREDUCE : PERF_ALLGATHER;
		return 0;
	}
	return -1;
}

static int bad(const char *what, const char *val)
{
	fprintf(stderr, "ccom-perf: invalid %s '%s'\n", what, val);
	usage(stderr);
	return 2;
}

static int parse_opt(struct perf_opts *o, int c, const char *a)
{
	char *end;

	switch (c) {
	case 'n': o->nranks = (int)strtol(a, &end, 10); return *end || o->nranks < 1 ? bad("-n", a) : 0;
	case 'b': return parse_size(a, &o->minbytes) ? bad("-b", a) : 0;
	case 'e': return parse_size(a, &o->maxbytes) ? bad("-e", a) : 0;
	case 'f': o->factor = strtod(a, &end); return *end || o->factor < 1 ? bad("-f", a) : 0;
	case 'd': return parse_dtype(a, &o->dtype) ? bad("-d", a) : 0;
	case 'o': return parse_op(a, &o->op) ? bad("-o", a) : 0;
	case 'r': o->root = (int)strtol(a, &end, 10); return *end || o->root < 0 ? bad("-r", a) : 0;
	case 'w': o->warmup = (int)strtol(a, &end, 10); return *end || o->warmup < 0 ? bad("-w", a) : 0;
	case 'i': o->iters = (int)strtol(a, &end, 10); return *end || o->iters < 1 ? bad("-i", a) : 0;
	case 'c': o->check = (int)strtol(a, &end, 10); return *end ? bad("-c", a) : 0;
	case 'm': o->memalloc = 1; return 0;
	case 'G': o->reg = 1; return 0;
	case 'B': o->bind = (int)strtol(a, &end, 10); return *end ? bad("-B", a) : 0;
	case 'R': o->roof = 1; return 0;
	case 'H': o->hosts = (int)strtol(a, &end, 10); return *end || o->hosts < 1 ? bad("-H", a) : 0;
	default: usage(stderr); return 2;
	}
}

static int parse_args(int argc, char **argv, struct perf_opts *o)
{
	int c, err;

	*o = (struct perf_opts){ .minbytes = 32 << 20, .maxbytes = 32 << 20, .factor = 2,
				 .dtype = ccomFloat32, .op = ccomSum, .warmup = -1, .iters = -1,
				 .check = 1, .bind = 1 };
	if (argc < 2 || argv[1][0] == '-') {
		usage(argc >= 2 && !strcmp(argv[1], "-h") ? stdout : stderr);
		return argc >= 2 && !strcmp(argv[1], "-h") ? 1 : 2;
	}
	if (parse_coll(argv[1], &o->coll))
		return bad("collective", argv[1]);
	optind = 2;
	while ((c = getopt(argc, argv, "n:b:e:f:d:o:r:w:i:c:mGB:RH:h")) != -1) {
		err = parse_opt(o, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		return bad("argument", argv[optind]);
	if (o->maxbytes < o->minbytes)
		return bad("-e (smaller than -b)", "");
	if (o->hosts && (!o->nranks || o->nranks % o->hosts)) {
		fprintf(stderr, "ccom-perf: -H %d needs -n with a multiple of %d ranks\n", o->hosts,
			o->hosts);
		return 2;
	}
	return 0;
}

/*
 * -H: rank @rank of -n N is on simulated host rank / (N / H).  libccom
 * takes a process's host identity from CCOM_HOSTID when it is set (the
 * selftests fake hosts the same way), so the blocks see each other as
 * remote: shm inside a block, the network transport between blocks.  The
 * parent's pid keeps the names of concurrent runs apart.
 */
static void set_simulated_host(const struct perf_opts *o, int rank)
{
	char host[64];

	if (!o->hosts)
		return;
	snprintf(host, sizeof(host), "ccom-perf-%d-host%d", (int)getppid(),
		 rank / (o->nranks / o->hosts));
	setenv("CCOM_HOSTID", host, 1);
}

static int alloc_buffers(struct perf_ctx *c)
{
	size_t bytes = c->o->maxbytes + 64;

	c->bufbytes = bytes;
	if (c->o->memalloc) {
		if (ccomMemAlloc(c->comm, (void **)&c->send, bytes) != ccomSuccess ||
		    ccomMemAlloc(c->comm, (void **)&c->recv, bytes) != ccomSuccess)
			return -1;
	} else {
		c->send = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
		c->recv = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
		if (!c->send || !c->recv)
			return -1;
	}
	memset(c->send, 0, bytes);
	memset(c->recv, 0, bytes);
	if (c->o->reg && (ccomCommRegister(c->comm, c->send, bytes, &c->hsend) != ccomSuccess ||
			  ccomCommRegister(c->comm, c->recv, bytes, &c->hrecv) != ccomSuccess)) {
		fprintf(stderr, "ccom-perf: rank %d: -G: %s\n", c->rank, ccomGetLastError(NULL));
		return -1;
	}
	return c->o->roof ? perf_roof_alloc(c) : 0;
}

static void free_buffers(struct perf_ctx *c)
{
	free(c->probe);
	if (c->hsend)
		ccomCommDeregister(c->comm, c->hsend);
	if (c->hrecv)
		ccomCommDeregister(c->comm, c->hrecv);
	if (c->o->memalloc) {
		ccomMemFree(c->comm, c->send);
		ccomMemFree(c->comm, c->recv);
	} else {
		free(c->send);
		free(c->recv);
	}
}

static int run_rank(const struct perf_opts *o, ccomComm_t comm, struct perf_sync *sync)
{
	struct perf_ctx c = { .o = o, .comm = comm, .sync = sync };
	int rc;

	ccomCommUserRank(comm, &c.rank);
	ccomCommCount(comm, &c.nranks);
	if (o->root >= c.nranks) {
		fprintf(stderr, "ccom-perf: root %d is not a rank of %d\n", o->root, c.nranks);
		return 2;
	}
	if (alloc_buffers(&c)) {
		fprintf(stderr, "ccom-perf: rank %d: cannot allocate %d x %zu bytes: %s\n", c.rank,
			o->roof ? 4 : 2, o->maxbytes, ccomGetLastError(comm));
		return 2;
	}
	rc = perf_run(&c);
	free_buffers(&c);
	if (rc < 0)
		return 2;
	if (ccomCommFinalize(comm) != ccomSuccess)
		rc = 2;
	return rc;
}

/*
 * -B 1 with -n N <= allowed CPUs: rank r runs on the r-th allowed CPU only
 * (what mpirun does by default for 2 ranks), so that the scheduler never
 * stacks two ranks on one CPU while another one idles or runs other work.
 */
static void bind_rank(const struct perf_opts *o, int rank)
{
	cpu_set_t allowed, one;
	int cpu, k = 0;

	if (!o->bind || sched_getaffinity(0, sizeof(allowed), &allowed) ||
	    o->nranks > CPU_COUNT(&allowed))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || k++ != rank)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			perror("ccom-perf: sched_setaffinity (running unbound)");
		return;
	}
}

static int child(const struct perf_opts *o, int idfd, int rank, struct perf_sync *sync)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;
	int rc;

	/* The parent creates the id after forking: no libccom thread is forked. */
	if (read(idfd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		fprintf(stderr, "ccom-perf: rank %d: no unique id from the parent\n", rank);
		return 2;
	}
	close(idfd);
	bind_rank(o, rank);
	set_simulated_host(o, rank);
	res = ccomCommInitRank(&comm, o->nranks, id, rank);
	if (res != ccomSuccess) {
		fprintf(stderr, "ccom-perf: rank %d: init failed: %s: %s\n", rank,
			ccomGetErrorString(res), ccomGetLastError(NULL));
		return 2;
	}
	rc = run_rank(o, comm, sync);
	ccomCommDestroy(comm);
	return rc;
}

/*
 * Reap the ranks in the order they exit; one that died or failed (exit 2)
 * before the others finished stops them at ccom-perf's next barrier.
 */
static int wait_ranks(const struct perf_opts *o, const pid_t *pids, struct perf_sync *sync)
{
	int r, st, rc = 0, left = 0;
	pid_t p;

	for (r = 0; r < o->nranks && pids[r] > 0; r++)
		left++;
	while (left > 0) {
		p = waitpid(-1, &st, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0) {
			perror("ccom-perf: waitpid");
			return 2;
		}
		for (r = 0; r < o->nranks && pids[r] != p; r++)
			;
		if (r == o->nranks)
			continue;
		left--;
		if (!WIFEXITED(st)) {
			fprintf(stderr, "ccom-perf: rank %d died (%s)\n", r,
				WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "unknown");
			rc = 2;
			perf_sync_abort(sync);
		} else if (WEXITSTATUS(st) && (rc == 0 || WEXITSTATUS(st) == 2)) {
			rc = WEXITSTATUS(st);
			if (rc == 2)
				perf_sync_abort(sync);
		}
	}
	return rc;
}

static int fork_ranks(const struct perf_opts *o)
{
	pid_t *pids = calloc((size_t)o->nranks, sizeof(pid_t));
	int *wfd = calloc((size_t)o->nranks, sizeof(int));
	struct perf_sync *sync = perf_sync_create(o->nranks);
	ccomUniqueId id;
	int r, p[2], rc = 0;

	if (!pids || !wfd || !sync)
		return 2;
	fflush(stdout);
	for (r = 0; r < o->nranks; r++) {
		if (pipe(p) < 0 || (pids[r] = fork()) < 0) {
			perror("ccom-perf: fork");
			rc = 2;
			break;
		}
		if (pids[r] == 0) {
			close(p[1]);
			_exit(child(o, p[0], r, sync));
		}
		close(p[0]);
		wfd[r] = p[1];
	}
	if (!rc && ccomGetUniqueId(&id) != ccomSuccess) {
		fprintf(stderr, "ccom-perf: ccomGetUniqueId failed: %s\n", ccomGetLastError(NULL));
		rc = 2;
	}
	for (r = 0; r < o->nranks && pids[r] > 0; r++) {
		if (!rc && write(wfd[r], &id, sizeof(id)) != (ssize_t)sizeof(id))
			rc = 2;
		close(wfd[r]);
	}
	r = wait_ranks(o, pids, sync);
	free(pids);
	free(wfd);
	return rc ? rc : r;
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	ccomComm_t comm;
	ccomResult_t res;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (o.nranks > 0)
		return fork_ranks(&o);
	res = ccomCommInitFromEnv(&comm, NULL);
	if (res != ccomSuccess) {
		fprintf(stderr, "ccom-perf: no -n and no launcher environment: %s (%s)\n",
			ccomGetErrorString(res), ccomGetLastError(NULL));
		return 2;
	}
	rc = run_rank(&o, comm, NULL);
	ccomCommDestroy(comm);
	return rc;
}
