/* SPDX-License-Identifier: MIT */
/*
 * hier_util.h - helpers of the hier_* tests: up to HT_MAX_HOSTS simulated
 * hosts (network namespaces "cch<pid>h<H>", each with a veth end renamed
 * ccv0 at 10.233.<pid%250>.<H+1>/24, the other end on a bridge in a switch
 * namespace "cch<pid>sw"), created with ip(8) as root and always removed;
 * a forked job whose ranks enter their host's namespace (CCOM_HOSTID makes
 * them different hosts) with a set of environment variables, each rank
 * reporting one 64-bit value to the parent.  The reference values come
 * from net_util.h.
 */
#ifndef CCOM_SELFTEST_HIER_UTIL_H
#define CCOM_SELFTEST_HIER_UTIL_H

#include <sys/mount.h>

#include "net_util.h"

#define HT_MAX_HOSTS 4
#define HT_MAX_RANKS 8

static char ht_ns[HT_MAX_HOSTS][32], ht_sw[32];
static int ht_nhosts, ht_sw_up;

NETT_FN void ht_hosts_down(void)
{
	int h;

	for (h = 0; h < ht_nhosts; h++)
		nett_sh("ip netns del %s 2>/dev/null", ht_ns[h]);
	if (ht_sw_up)
		nett_sh("ip netns del %s 2>/dev/null", ht_sw);
	ht_nhosts = 0;
	ht_sw_up = 0;
}

/* Create @n hosts on one bridge: 0, NETT_SKIP (reason printed) or 1 on a setup failure. */
NETT_FN int ht_hosts_up(int n)
{
	int h, pid = (int)getpid();

	if (nett_ns_prologue("hosts in namespaces", ht_hosts_down))
		return NETT_SKIP;
	snprintf(ht_sw, sizeof(ht_sw), "cch%dsw", pid);
	if (nett_sh("ip netns add %s", ht_sw)) {
		printf("SKIP: cannot create a network namespace (no CAP_SYS_ADMIN or no CONFIG_NET_NS)\n");
		return NETT_SKIP;
	}
	ht_sw_up = 1;
	if (nett_sh("ip -n %s link add br0 type bridge && ip -n %s link set br0 up", ht_sw, ht_sw)) {
		printf("SKIP: cannot create a bridge (no CONFIG_BRIDGE)\n");
		return NETT_SKIP;
	}
	for (h = 0; h < n; h++) {
		snprintf(ht_ns[h], sizeof(ht_ns[h]), "cch%dh%d", pid, h);
		if (nett_sh("ip netns add %s", ht_ns[h]))
			return 1;
		ht_nhosts++;
		if (nett_sh("ip link add chv%dh%d type veth peer name chs%dh%d", pid % 100000, h,
			    pid % 100000, h)) {
			printf("SKIP: cannot create a veth pair (no CONFIG_VETH)\n");
			return NETT_SKIP;
		}
		if (nett_sh("ip link set chv%dh%d netns %s && ip link set chs%dh%d netns %s",
			    pid % 100000, h, ht_ns[h], pid % 100000, h, ht_sw) ||
		    nett_sh("ip -n %s link set chv%dh%d name ccv0 && ip -n %s addr add 10.233.%d.%d/24 dev ccv0 && ip -n %s link set ccv0 up && ip -n %s link set lo up",
			    ht_ns[h], pid % 100000, h, ht_ns[h], pid % 250, h + 1, ht_ns[h], ht_ns[h]) ||
		    nett_sh("ip -n %s link set chs%dh%d master br0 && ip -n %s link set chs%dh%d up",
			    ht_sw, pid % 100000, h, ht_sw, pid % 100000, h))
			return 1;
	}
	return 0;
}

/*
 * In a child: enter host @h; with @own_sysfs, also a mount namespace with
 * this network namespace's sysfs on /sys (as ip netns exec does), so that
 * /sys/class/net/ccv0/statistics is this host's.
 */
NETT_FN int ht_enter_host(int h, int own_sysfs)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ht_ns[h]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "cannot enter %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	if (own_sysfs && (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			  mount("sysfs", "/sys", "sysfs", 0, NULL))) {
		fprintf(stderr, "cannot mount host %d's sysfs: %s\n", h, strerror(errno));
		return -1;
	}
	setenv("CCOM_HOSTID", ht_ns[h], 1);
	setenv("CCOM_SOCKET_IFNAME", "ccv", 1);
	return 0;
}

/* A counter of this host's ccv@ifidx (tx_bytes, rx_bytes), or -1. */
NETT_FN long long ht_if_counter(int ifidx, const char *name)
{
	char path[96];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/ccv%d/statistics/%s", ifidx, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The same for ccv0, the one interface of most layouts. */
NETT_FN long long ht_counter(const char *name)
{
	return ht_if_counter(0, name);
}

/* A 1-element AllReduce of @buf as a barrier between byte counts; 0 or 1. */
NETT_FN int ht_barrier(ccomComm_t comm, int rank, char *buf)
{
	return nett_sync(comm, ccomAllReduce(buf, buf, 1, ccomInt32, ccomSum, comm, NULL), "barrier",
			 rank);
}

/* Called before (@after 0) and after (@after 1) the measured call; non-zero fails the rank. */
typedef int (*ht_probe_fn)(int rank, int after, void *ctx);

/*
 * The byte-counting tests' AllReduce: @bytes of int32 sum, first a warm-up
 * call (first-use allocations, TCP windows) and a barrier, then one call
 * between barriers with @probe on either side, its result checked.  0 or 1.
 */
NETT_FN int ht_measured_allreduce(ccomComm_t comm, int rank, int nranks, size_t bytes,
				  ht_probe_fn probe, void *ctx)
{
	size_t count = bytes / 4;
	char *in = malloc(bytes), *out = malloc(bytes), one[8] = { 0 };
	int rc = 1;

	if (!in || !out)
		goto out;
	nett_fill(in, ccomInt32, count, rank, 0, ccomSum);
	if (nett_sync(comm, ccomAllReduce(in, out, count, ccomInt32, ccomSum, comm, NULL), "warm-up",
		      rank) || ht_barrier(comm, rank, one) || probe(rank, 0, ctx))
		goto out;
	memset(out, 0, bytes);
	if (nett_sync(comm, ccomAllReduce(in, out, count, ccomInt32, ccomSum, comm, NULL),
		      "allreduce", rank) || ht_barrier(comm, rank, one) || probe(rank, 1, ctx))
		goto out;
	rc = nett_mismatches(out, ccomInt32, count, 0, nranks, ccomSum, "allreduce", rank) ? 1 : 0;
out:
	free(in);
	free(out);
	return rc;
}

/* A rank's body: 0 on success; *result is reported to the parent. */
typedef int (*ht_rank_fn)(ccomComm_t comm, int rank, int nranks, void *arg, uint64_t *result);

struct ht_job {
	int nranks;
	int host_of[HT_MAX_RANKS];
	const char *env[8];		/* "NAME=value", NULL-terminated; set after ht_enter_host() */
	int own_sysfs;
	unsigned int allow_fail;	/* ranks (bitmask) that may exit non-zero without a result */
	int fn_ends_comm;		/* fn aborted the communicator itself: no finalize/destroy */
	ht_rank_fn fn;
	void *arg;
	uint64_t result[HT_MAX_RANKS];	/* filled by ht_run() */
};

NETT_FN int ht_rank_main(struct ht_job *j, int rank, int pipes[][2], int res_fd)
{
	ccomUniqueId id;
	ccomComm_t comm;
	ccomResult_t res;
	uint64_t result = 0;
	int r, rc;

	if (ht_enter_host(j->host_of[rank], j->own_sysfs))
		return 2;
	/* After the host's defaults, so that a job may override CCOM_SOCKET_IFNAME. */
	t_setenvs(j->env, 8);
	if (rank == 0) {
		if (ccomGetUniqueId(&id) != ccomSuccess) {
			fprintf(stderr, "rank 0: ccomGetUniqueId: %s\n", ccomGetLastError(NULL));
			return 2;
		}
		for (r = 1; r < j->nranks; r++)
			if (write(pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
				return 2;
	} else if (read(pipes[rank][0], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		fprintf(stderr, "rank %d: rank 0 did not send the unique id\n", rank);
		return 2;
	}
	res = ccomCommInitRank(&comm, j->nranks, id, rank);
	if (res != ccomSuccess) {
		fprintf(stderr, "rank %d: ccomCommInitRank: %s: %s\n", rank, ccomGetErrorString(res),
			ccomGetLastError(NULL));
		return 2;
	}
	rc = j->fn(comm, rank, j->nranks, j->arg, &result);
	if (!j->fn_ends_comm) {
		if (rc == 0 && ccomCommFinalize(comm) != ccomSuccess) {
			fprintf(stderr, "rank %d: finalize: %s\n", rank, ccomGetLastError(comm));
			rc = 1;
		}
		ccomCommDestroy(comm);
	}
	if (rc == 0) {
		uint64_t msg[2] = { (uint64_t)rank, result };

		if (write(res_fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
			rc = 2;
	}
	return rc;
}

/* Run the job: 0 if every rank not in allow_fail exited 0 and reported its result, else 1. */
NETT_FN int ht_run(struct ht_job *j)
{
	int pipes[HT_MAX_RANKS][2], res[2], status, r, bad = 0, got = 0, may_fail = 0;
	pid_t pids[HT_MAX_RANKS];
	uint64_t msg[2];

	fflush(NULL);
	if (pipe(res))
		return 1;
	for (r = 0; r < j->nranks; r++)
		if (pipe(pipes[r]))
			return 1;
	for (r = 0; r < j->nranks; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			close(res[0]);
			_exit(ht_rank_main(j, r, pipes, res[1]));
		}
	}
	close(res[1]);
	for (r = 0; r < j->nranks; r++) {
		close(pipes[r][0]);
		close(pipes[r][1]);
	}
	while (read(res[0], msg, sizeof(msg)) == (ssize_t)sizeof(msg))
		if (msg[0] < (uint64_t)j->nranks) {
			j->result[msg[0]] = msg[1];
			got++;
		}
	close(res[0]);
	for (r = 0; r < j->nranks; r++) {
		if (waitpid(pids[r], &status, 0) < 0)
			return 1;
		if (j->allow_fail & (1u << r)) {
			may_fail++;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			bad = 1;
		}
	}
	return bad || got < j->nranks - may_fail;
}

#endif
