/* SPDX-License-Identifier: MIT */
/*
 * net_util.h - helpers of the net_* tests: simulated hosts (network
 * namespaces joined by a veth pair, created with ip(8) as root and always
 * removed), a forked multi-rank job whose ranks each enter their host's
 * namespace, and reference checks for collectives (values read and written
 * with coll_util.h's ct_get / ct_put).
 *
 * Each simulated host is a namespace "ccnt<pid>h<H>" holding one veth end
 * renamed to "ccv0" (NETT_SUBNET.<H+1>/24), so CCOM_SOCKET_IFNAME=ccv selects it
 * on every host; CCOM_HOSTID=<namespace name> makes the ranks of different
 * namespaces different hosts (they share hostname and boot id).
 */
#ifndef CCOM_SELFTEST_NET_UTIL_H
#define CCOM_SELFTEST_NET_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "ccom.h"
#include "coll_util.h"

/* Helpers shared by several tests: not every test uses each one. */
#define NETT_FN static __attribute__((unused))
#define NETT_SKIP 77
#define NETT_MAX_RANKS 8
#define NETT_SUBNET "10.231.0"	/* of the hosts' ccv0 */

static char nett_ns[2][32];
static int nett_nhosts;

NETT_FN int nett_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
NETT_FN int nett_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

NETT_FN void nett_hosts_down(void)
{
	int h;

	for (h = 0; h < nett_nhosts; h++)
		nett_sh("ip netns del %s 2>/dev/null", nett_ns[h]);
	nett_nhosts = 0;
}

static void (*nett_down_fn)(void);

NETT_FN void nett_on_signal(int sig)
{
	if (nett_down_fn)
		nett_down_fn();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * What every namespace set-up checks first: root and ip(8) (else NETT_SKIP,
 * the reason printed; @why says what the namespaces are for), then @down
 * registered to remove them at exit and on SIGINT/SIGTERM.  Returns 0 or
 * NETT_SKIP.
 */
NETT_FN int nett_ns_prologue(const char *why, void (*down)(void))
{
	if (geteuid() != 0) {
		printf("SKIP: network namespaces need root (run as root to test %s)\n", why);
		return NETT_SKIP;
	}
	if (nett_sh("command -v ip >/dev/null 2>&1")) {
		printf("SKIP: ip(8) is missing (install iproute2)\n");
		return NETT_SKIP;
	}
	nett_down_fn = down;
	atexit(down);
	signal(SIGINT, nett_on_signal);
	signal(SIGTERM, nett_on_signal);
	return 0;
}

/*
 * Create two simulated hosts.  Returns 0, NETT_SKIP (not root, no ip(8), no
 * namespace support: the reason is printed) or 1 on a setup failure.
 */
NETT_FN int nett_hosts_up(void)
{
	char va[16], vb[16];
	int h, pid = (int)getpid();

	if (nett_ns_prologue("TCP between hosts", nett_hosts_down))
		return NETT_SKIP;
	snprintf(va, sizeof(va), "cct%da", pid % 100000);
	snprintf(vb, sizeof(vb), "cct%db", pid % 100000);
	for (h = 0; h < 2; h++)
		snprintf(nett_ns[h], sizeof(nett_ns[h]), "ccnt%dh%d", pid, h);
	nett_nhosts = 0;
	for (h = 0; h < 2; h++) {
		if (nett_sh("ip netns add %s", nett_ns[h])) {
			nett_hosts_down();
			printf("SKIP: cannot create a network namespace (no CAP_SYS_ADMIN or no CONFIG_NET_NS)\n");
			return NETT_SKIP;
		}
		nett_nhosts++;
	}
	if (nett_sh("ip link add %s type veth peer name %s", va, vb)) {
		printf("SKIP: cannot create a veth pair (no CONFIG_VETH)\n");
		return NETT_SKIP;
	}
	if (nett_sh("ip link set %s netns %s && ip link set %s netns %s", va, nett_ns[0], vb,
		    nett_ns[1]))
		return 1;
	for (h = 0; h < 2; h++)
		if (nett_sh("ip -n %s link set %s name ccv0 && ip -n %s addr add %s.%d/24 dev ccv0 && ip -n %s link set ccv0 up && ip -n %s link set lo up",
			    nett_ns[h], h ? vb : va, nett_ns[h], NETT_SUBNET, h + 1, nett_ns[h], nett_ns[h]))
			return 1;
	return 0;
}

/* In a child: move into simulated host @h and make libccom see it as a host. */
NETT_FN int nett_enter_host(int h)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", nett_ns[h]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "cannot enter %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	setenv("CCOM_HOSTID", nett_ns[h], 1);
	setenv("CCOM_SOCKET_IFNAME", "ccv", 1);
	return 0;
}

typedef int (*nett_rank_fn)(ccomComm_t comm, int rank, int nranks, void *arg);

/*
 * Rank body of nett_run(): rank 0 creates the unique id and hands it to the
 * others through pipes (created before fork), then every rank initialises,
 * runs @fn and destroys its communicator.
 */
NETT_FN int nett_rank_main(int rank, int nranks, int host, int pipes[][2], nett_rank_fn fn,
			  void *arg)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;
	int r, rc;

	if (host >= 0 && nett_enter_host(host))
		return 2;
	if (rank == 0) {
		res = ccomGetUniqueId(&id);
		if (res != ccomSuccess) {
			fprintf(stderr, "rank 0: ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
			return 2;
		}
		for (r = 1; r < nranks; r++)
			if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
				return 2;
	} else if (read(pipes[rank][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		fprintf(stderr, "rank %d: rank 0 did not send the unique id\n", rank);
		return 2;
	}
	res = ccomCommInitRank(&comm, nranks, id, rank);
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: ccomCommInitRank: %s: %s\n", rank, ccomGetErrorString(res),
			ccomGetLastError(NULL));
		return 2;
	}
	rc = fn(comm, rank, nranks, arg);
	if (rc == 0 && ccomCommFinalize(comm) != ccomSuccess) {
		fprintf(stderr, "rank %d: finalize: %s\n", rank, ccomGetLastError(comm));
		rc = 1;
	}
	ccomCommDestroy(comm);
	return rc;
}

/*
 * Run @nranks forked ranks.  @host_of[r] is the simulated host of rank r, or
 * NULL to stay in this namespace.  Returns 0 if every rank exited 0, else 1;
 * ranks whose exit status is in @allow_fail (bitmask) may fail.
 */
NETT_FN int nett_run(int nranks, const int *host_of, nett_rank_fn fn, void *arg,
		    unsigned int allow_fail)
{
	int pipes[NETT_MAX_RANKS][2], status, r, bad = 0;
	pid_t pids[NETT_MAX_RANKS];

	fflush(NULL);
	for (r = 0; r < nranks; r++)
		if (pipe(pipes[r]))
			return 1;
	for (r = 0; r < nranks; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(nett_rank_main(r, nranks, host_of ? host_of[r] : -1, pipes, fn, arg));
	}
	for (r = 0; r < nranks; r++) {
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	for (r = 0; r < nranks; r++) {
		if (waitpid(pids[r], &status, 0) < 0)
			return 1;
		if ((!WIFEXITED(status) || WEXITSTATUS(status)) && !(allow_fail & (1u << r))) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			bad = 1;
		}
	}
	return bad;
}

/* ------------------------------------------------ reference values */

/* Input of @rank at element @i for @op: small integers, exact in every type. */
NETT_FN double nett_input(int rank, size_t i, ccomRedOp_t op)
{
	if (op == ccomProd)
		return (double)((rank + i) % 3 + 1);
	return (double)((rank * 7 + i * 13) % 11 + 1);
}

NETT_FN double nett_expect(int nranks, size_t i, ccomRedOp_t op, ccomDataType_t t)
{
	double acc = nett_input(0, i, op), v;
	int r;

	for (r = 1; r < nranks; r++) {
		v = nett_input(r, i, op);
		if (op == ccomSum || op == ccomAvg)
			acc += v;
		else if (op == ccomProd)
			acc *= v;
		else if (op == ccomMax)
			acc = v > acc ? v : acc;
		else
			acc = v < acc ? v : acc;
	}
	if (op != ccomAvg)
		return acc;
	if (t == ccomFloat16 || t == ccomFloat32 || t == ccomFloat64 || t == ccomBfloat16)
		return acc / nranks;
	return (double)((long long)acc / nranks);
}

/* Compare @n elements; floats get a relative tolerance of 1e-2 (fp16/bf16 avg). */
NETT_FN long nett_mismatches(const void *buf, ccomDataType_t t, size_t n, size_t first_idx,
			    int nranks, ccomRedOp_t op, const char *what, int rank)
{
	long bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double want = nett_expect(nranks, first_idx + i, op, t);
		double got = ct_get(buf, i, t);

		if (got == want || fabs(got - want) <= 1e-2 * fabs(want))
			continue;
		if (!bad)
			fprintf(stderr, "rank %d: %s: element %zu is %g, expected %g\n", rank, what,
				first_idx + i, got, want);
		bad++;
	}
	return bad;
}

/* ------------------------------------------------ the collective battery */

struct nett_combo {
	ccomDataType_t t;
	ccomRedOp_t op;
};

static const struct nett_combo nett_combos[] = {
	{ ccomInt32, ccomSum }, { ccomFloat32, ccomSum }, { ccomUint8, ccomMax },
	{ ccomInt64, ccomProd }, { ccomFloat64, ccomAvg }, { ccomBfloat16, ccomMin },
	{ ccomFloat16, ccomSum }, { ccomUint32, ccomAvg },
};
#define NETT_NCOMBOS ((int)(sizeof(nett_combos) / sizeof(nett_combos[0])))

static const size_t nett_counts[] = { 0, 1, 7, 1023 };
#define NETT_NCOUNTS ((int)(sizeof(nett_counts) / sizeof(nett_counts[0])))

NETT_FN int nett_sync(ccomComm_t comm, ccomResult_t res, const char *what, int rank)
{
	if (res == ccomSuccess)
		res = ccomCommSynchronize(comm);
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, ccomGetErrorString(res),
			ccomGetLastError(comm));
		return 1;
	}
	return 0;
}

/*
 * A rank's death at a known point, for the failure tests: each survivor
 * writes one byte to @ready once its good operations are done; the victim
 * waits for all nranks - 1 bytes, then exits 42 without a word.  Returns 0
 * to a survivor (1 if its byte could not be written).
 */
NETT_FN int nett_die_when_ready(int rank, int nranks, int victim, const int ready[2])
{
	if (rank == victim) {
		char b;
		int k;

		for (k = 0; k < nranks - 1; k++)
			if (read(ready[0], &b, 1) != 1)
				break;
		_exit(42);
	}
	return write(ready[1], "x", 1) != 1;
}

NETT_FN void nett_fill(void *buf, ccomDataType_t t, size_t n, int rank, size_t first,
		      ccomRedOp_t op)
{
	size_t i;

	for (i = 0; i < n; i++)
		ct_put(buf, i, t, nett_input(rank, first + i, op));
}

/* AllReduce (out-of-place and in-place), Reduce to the last rank, ReduceScatter. */
NETT_FN long nett_reductions(ccomComm_t comm, int rank, int n, const struct nett_combo *c,
			    size_t count, char *in, char *out)
{
	size_t es = ct_size(c->t);
	long bad = 0;
	int root = n - 1;

	nett_fill(in, c->t, count, rank, 0, c->op);
	if (nett_sync(comm, ccomAllReduce(in, out, count, c->t, c->op, comm, NULL), "allreduce", rank))
		return 1;
	bad += nett_mismatches(out, c->t, count, 0, n, c->op, "allreduce", rank);
	memcpy(out, in, count * es);
	if (nett_sync(comm, ccomAllReduce(out, out, count, c->t, c->op, comm, NULL),
		      "allreduce in-place", rank))
		return 1;
	bad += nett_mismatches(out, c->t, count, 0, n, c->op, "allreduce in-place", rank);
	if (nett_sync(comm, ccomReduce(in, out, count, c->t, c->op, root, comm, NULL), "reduce", rank))
		return 1;
	if (rank == root)
		bad += nett_mismatches(out, c->t, count, 0, n, c->op, "reduce", rank);
	nett_fill(in, c->t, count * n, rank, 0, c->op);
	if (nett_sync(comm, ccomReduceScatter(in, out, count, c->t, c->op, comm, NULL),
		      "reducescatter", rank))
		return 1;
	bad += nett_mismatches(out, c->t, count, count * rank, n, c->op, "reducescatter", rank);
	return bad;
}

/* Broadcast from rank 1 % n, AllGather, AlltoAll, and a grouped Send/Recv ring. */
NETT_FN long nett_movement(ccomComm_t comm, int rank, int n, ccomDataType_t t, size_t count,
			  char *in, char *out)
{
	size_t es = ct_size(t), i;
	int root = 1 % n, r, next = (rank + 1) % n, prev = (rank + n - 1) % n;
	long bad = 0;

	for (i = 0; i < count * n; i++)
		ct_put(in, i, t, (double)((rank * 31 + i) % 97));
	if (nett_sync(comm, ccomBroadcast(in, out, count, t, root, comm, NULL), "broadcast", rank))
		return 1;
	for (i = 0; i < count; i++)
		bad += ct_get(out, i, t) != (double)((root * 31 + i) % 97);
	if (nett_sync(comm, ccomAllGather(in, out, count, t, comm, NULL), "allgather", rank))
		return 1;
	for (r = 0; r < n; r++)
		for (i = 0; i < count; i++)
			bad += ct_get(out + (r * count) * es, i, t) != (double)((r * 31 + i) % 97);
	if (nett_sync(comm, ccomAlltoAll(in, out, count, t, comm, NULL), "alltoall", rank))
		return 1;
	for (r = 0; r < n; r++)
		for (i = 0; i < count; i++)
			bad += ct_get(out + (r * count) * es, i, t) !=
			       (double)((r * 31 + rank * count + i) % 97);
	ccomGroupStart();
	ccomSend(in, count, t, next, comm, NULL);
	ccomRecv(out, count, t, prev, comm, NULL);
	if (nett_sync(comm, ccomGroupEnd(), "send/recv", rank))
		return 1;
	for (i = 0; i < count; i++)
		bad += ct_get(out, i, t) != (double)((prev * 31 + i) % 97);
	if (bad)
		fprintf(stderr, "rank %d: %ld wrong values in data movement (%s, count %zu)\n", rank,
			bad, t == ccomInt8 ? "int8" : "other", count);
	return bad;
}

/* Every collective, every combo, counts 0/1/7/1023, plus @large elements of int32/fp32 sum. */
NETT_FN int nett_battery(ccomComm_t comm, int rank, int nranks, size_t large)
{
	size_t max = (large > 1023 ? large : 1023) * nranks * 8 + 64;
	char *in = calloc(1, max), *out = calloc(1, max);
	long bad = 0;
	int c, k;

	if (!in || !out)
		return 1;
	for (c = 0; c < NETT_NCOMBOS && !bad; c++)
		for (k = 0; k < NETT_NCOUNTS && !bad; k++)
			bad += nett_reductions(comm, rank, nranks, &nett_combos[c], nett_counts[k],
					       in, out);
	for (k = 0; k < NETT_NCOUNTS && !bad; k++) {
		bad += nett_movement(comm, rank, nranks, ccomInt8, nett_counts[k], in, out);
		bad += nett_movement(comm, rank, nranks, ccomFloat64, nett_counts[k], in, out);
	}
	for (c = 0; c < 2 && large && !bad; c++)
		bad += nett_reductions(comm, rank, nranks, &nett_combos[c], large, in, out);
	if (large && !bad)
		bad += nett_movement(comm, rank, nranks, ccomInt32, large, in, out);
	free(in);
	free(out);
	return bad ? 1 : 0;
}

#endif
