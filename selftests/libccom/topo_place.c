// SPDX-License-Identifier: MIT
/*
 * Description: placement at init (topo/bind.c, transport/shm.c) on this
 * host, 2 forked ranks, three runs:
 *   1 CCOM_BIND unset (auto), ranks not bound: each rank ends bound to the
 *     CPUs of a NUMA node (sched_getaffinity equals that node's cpulist)
 *     and logs "bound to NUMA node";
 *   2 CCOM_BIND=auto under a narrower affinity set before init (what
 *     taskset or mpirun --bind-to do; needs 2 online CPUs, else this run
 *     is reported as skipped): the mask is unchanged and the log says
 *     "kept the launcher's binding";
 *   3 CCOM_BIND=none: the mask is unchanged, logged "CCOM_BIND=none".
 * In every run each rank's shared-memory staging slot and the FIFO it
 * writes must carry MPOL_PREFERRED with its node in the mask
 * (get_mempolicy(MPOL_F_ADDR) by syscall(2)), after an AllReduce their
 * touched pages must lie on that node (move_pages(2) query), the shm log
 * line must name the node, and the topology dump (CCOM_TOPO_DUMP_FILE)
 * must carry the placement.  On a one-node machine the node is 0 and
 * "bound" means every CPU; the multi-node choices (NIC's node, spreading
 * by local rank) are exercised only where the machine has them.
 */
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/comm.h"
#include "test_util.h"
#include "transport/shm.h"
#include "util/numa.h"

#define NRANKS 2
#define COUNT (64u << 10)

struct place_case {
	const char *name;
	const char *bind;	/* CCOM_BIND, NULL: unset */
	int narrow;		/* set the affinity to one CPU before init */
	const char *log_says;
};

static const struct place_case cases[] = {
	{ "auto, unbound", NULL, 0, "bound to NUMA node" },
	{ "auto, launcher-bound", "auto", 1, "kept the launcher's binding" },
	{ "none", "none", 0, "CCOM_BIND=none" },
};

static char dir[64];

struct place_arg {
	const struct place_case *c;
	ccomUniqueId id;	/* filled in each rank by t_fork_ranks_id() */
};

struct both {
	const char *a, *b;
	int n;
};

static void count_both(const char *line, void *ctx)
{
	struct both *w = ctx;

	w->n += strstr(line, w->a) && strstr(line, w->b);
}

/* Lines of the logs in dir that contain both @a and @b. */
static int log_lines(const char *a, const char *b)
{
	struct both w = { a, b, 0 };

	return t_dir_lines(dir, "log.", count_both, &w) ? -1 : w.n;
}

/* The policy of the page at @addr: 0 if MPOL_PREFERRED with @node in its mask. */
static int policy_is(void *addr, int node, const char *what, int rank)
{
	unsigned long mask[16] = { 0 };
	int mode = -1;

	if (syscall(SYS_get_mempolicy, &mode, mask, 16 * 8 * sizeof(unsigned long), addr,
		    MPOL_F_ADDR)) {
		fprintf(stderr, "rank %d: get_mempolicy(%s): %s\n", rank, what, strerror(errno));
		return 1;
	}
	if (mode != MPOL_PREFERRED || !(mask[node / 64] & (1ul << (node % 64)))) {
		fprintf(stderr, "rank %d: %s has policy %d, mask %#lx; expected MPOL_PREFERRED (%d) on node %d\n",
			rank, what, mode, mask[0], MPOL_PREFERRED, node);
		return 1;
	}
	return 0;
}

/* The node of the (touched) page at @addr must be @node. */
static int page_on(void *addr, int node, const char *what, int rank)
{
	void *pages[1] = { (void *)((uintptr_t)addr & ~(uintptr_t)4095) };
	int status[1] = { -1 };

	if (syscall(SYS_move_pages, 0, 1UL, pages, NULL, status, 0)) {
		fprintf(stderr, "rank %d: move_pages(%s): %s\n", rank, what, strerror(errno));
		return 1;
	}
	if (status[0] != node) {
		fprintf(stderr, "rank %d: the page of %s is on node %d (or error), expected %d\n", rank,
			what, status[0], node);
		return 1;
	}
	return 0;
}

static int rank_main(int rank, int nranks, void *arg)
{
	struct place_arg *pa = arg;
	const struct place_case *c = pa->c;
	cpu_set_t before, after, node_cpus;
	ccomComm_t comm;
	struct ccom_shm *s;
	float *buf;
	int node, bad = 0;

	(void)nranks;
	if (c->narrow) {
		CPU_ZERO(&before);
		CPU_SET(rank % 2, &before);
		if (sched_setaffinity(0, sizeof(before), &before))
			return 2;
	}
	sched_getaffinity(0, sizeof(before), &before);
	if (ccomCommInitRank(&comm, NRANKS, pa->id, rank) != ccomSuccess) {
		fprintf(stderr, "rank %d: init: %s\n", rank, ccomGetLastError(NULL));
		return 2;
	}
	sched_getaffinity(0, sizeof(after), &after);
	node = ccom_numa_node_of_cpus(&after);
	if (node < 0) {
		fprintf(stderr, "rank %d: after init the CPUs (%d) span NUMA nodes\n", rank,
			CPU_COUNT(&after));
		bad = 1;
	} else if (!c->bind && (ccom_numa_node_cpus(node, &node_cpus) ||
				!CPU_EQUAL(&after, &node_cpus))) {
		fprintf(stderr, "rank %d: CCOM_BIND=auto left %d CPUs, node %d has others\n", rank,
			CPU_COUNT(&after), node);
		bad = 1;
	} else if (c->bind && !CPU_EQUAL(&before, &after)) {
		fprintf(stderr, "rank %d: CCOM_BIND=%s changed the affinity (%d CPUs -> %d)\n", rank,
			c->bind, CPU_COUNT(&before), CPU_COUNT(&after));
		bad = 1;
	}
	s = comm->shm;
	if (!s || node < 0) {
		fprintf(stderr, "rank %d: no shm segment\n", rank);
		bad = 1;
		goto out;
	}
	if (s->numa_node != node) {
		fprintf(stderr, "rank %d: shm says node %d, the CPUs are on %d\n", rank, s->numa_node,
			node);
		bad = 1;
	}
	bad |= policy_is(ccom_shm_stage(s, 0, s->me), node, "staging slot 0", rank);
	bad |= policy_is(ccom_shm_stage(s, CCOM_SHM_NBUF - 1, s->me), node, "last staging slot",
			 rank);
	bad |= policy_is((char *)ccom_shm_fifo(s, s->me, 1 - s->me) + 4096, node, "outgoing FIFO",
			 rank);
	buf = calloc(COUNT, sizeof(float));
	if (!buf || ccomAllReduce(buf, buf, COUNT, ccomFloat32, ccomSum, comm, NULL) != ccomSuccess ||
	    ccomCommSynchronize(comm) != ccomSuccess) {
		fprintf(stderr, "rank %d: allreduce: %s\n", rank, ccomGetLastError(comm));
		bad = 1;
	}
	free(buf);
	/* The ring's chunks went through the FIFOs: their first data page is touched now. */
	bad |= page_on((char *)ccom_shm_fifo(s, s->me, 1 - s->me) + 4096, node, "outgoing FIFO",
		       rank);
out:
	ccomCommDestroy(comm);
	return bad;
}

/* One case in a fresh process: libccom reads its parameters once per process. */
static int run_case(const struct place_case *c)
{
	char path[160], logenv[128], dumpenv[128];
	static struct place_arg pa;
	int codes[NRANKS], bad;

	snprintf(logenv, sizeof(logenv), "%s/log.%%p", dir);
	snprintf(dumpenv, sizeof(dumpenv), "%s/topo.%%r.json", dir);
	t_log_to(logenv, "INFO", "TOPO");
	setenv("CCOM_TOPO_DUMP_FILE", dumpenv, 1);
	setenv("CCOM_ALGO", "ring", 1);	/* through the FIFOs, whose pages are checked */
	if (c->bind)
		setenv("CCOM_BIND", c->bind, 1);
	pa.c = c;
	bad = t_fork_ranks_id(NRANKS, rank_main, &pa, codes, 60, &pa.id);
	if (!bad && log_lines("placement: rank ", c->log_says) != NRANKS) {
		fprintf(stderr, "%s: not every rank logged '%s' (logs in %s)\n", c->name, c->log_says,
			dir);
		bad = 1;
	}
	if (!bad && log_lines("shm: rank ", ") prefer NUMA node") != NRANKS) {
		fprintf(stderr, "%s: the shm placement line is missing (logs in %s)\n", c->name, dir);
		bad = 1;
	}
	snprintf(path, sizeof(path), "%s/topo.0.json", dir);
	if (!bad && (t_file_count(path, "\"placement\": {\"bind\": ") != 1 ||
		     t_file_count(path, "\"mem_policy\": \"preferred\"") != 1)) {
		fprintf(stderr, "%s: %s lacks the placement\n", c->name, path);
		bad = 1;
	}
	return bad;
}

int main(void)
{
	int i, fails = 0, skips = 0, status;
	char cmd[160];
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/topo_place.%d", (int)getpid());
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		const struct place_case *c = &cases[i];
		int bad;

		if (c->narrow && sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			printf("SKIP part: %s needs 2 online CPUs to narrow the affinity\n", c->name);
			skips++;
			continue;
		}
		snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
		if (system(cmd))
			return 1;
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			_exit(run_case(c));
		bad = pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		      WEXITSTATUS(status);
		printf("%s: CCOM_BIND %s\n", bad ? "FAIL" : "ok", c->name);
		fails += bad;
		if (bad)
			break;	/* keep its logs */
	}
	if (!fails) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fails++;
	}
	printf("%s: %d failure(s), %d part(s) skipped\n", fails ? "FAIL" : "PASS", fails, skips);
	return fails ? 1 : 0;
}
