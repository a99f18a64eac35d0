// SPDX-License-Identifier: GPL-2.0
/*
 * Description: seeded, reproducible fuzzer of /dev/nccom, run inside the VM
 * (tools/vm/run) with the module loaded. A parent forks generations of
 * worker processes, half of them (when run as root) under an unprivileged
 * uid; each worker opens /dev/nccom one to three times and issues random
 * sequences of every ioctl with argument structs that are valid with one
 * mutation (size, flags, reserved bytes, foreign/stale/never-issued/
 * wrong-type handles, offsets and lengths at and across boundaries,
 * wrapping sums, bad pointers), maps and unmaps rings and registered
 * buffers, writes valid and invalid descriptors into the rings, passes
 * dma-buf and semaphore fds to the next worker over a Unix socket (which
 * may belong to the other uid), polls and reads exported fds, and kills
 * itself with SIGKILL at a point fixed by the seed while work is in flight.
 * Netlink workers (fuzz_nl.c) fuzz the genl family beside them.
 *
 * Oracles (a failure is a finding, printed as "FINDING: ..."):
 *  - every ioctl result is checked against a model of the worker's own
 *    file descriptors: a single mutation must fail with its documented
 *    errno; any errno outside the documented set is a finding;
 *  - handles, mmap offsets and fd numbers received from another worker
 *    (another fd, often another uid) that are not live in this fd must
 *    fail (ENOENT/EINVAL/EBADF): isolation;
 *  - every completion is checked against the model: a descriptor the model
 *    says is malformed, out of range, of the wrong access or naming no
 *    object must not complete with 0 and must carry its exact errno;
 *  - a worker that dies from a signal other than its own planned SIGKILL,
 *    or hangs, is a finding;
 *  - at the end the driver's object and pinned-page counters and the
 *    per-device queue counts must be back to zero.
 * The kernel side (dmesg splats, rmmod) is checked by fuzz/campaign.
 *
 * usage: nccom_fuzz [--seed S] [--iters N] [--procs P] [--gens G]
 *                   [--uid U] [--nl P] [--no-kill] [--verbose]
 * Each worker's operation sequence is a function of (seed, generation,
 * slot) only; what it receives from its peer depends on scheduling.
 *
 * This file is the parent: options, the generations of workers, hang and
 * crash detection, the final counter check and the statistics. The ioctl
 * workers are fuzz_worker.c (the loop) over fuzz_model.c, fuzz_ioctl.c,
 * fuzz_ops.c, fuzz_ring.c, fuzz_fdpass.c and fuzz_isolation.c (fuzz.h);
 * the netlink workers are fuzz_nl.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/nccom.h>

#include "fuzz.h"

struct fz_shared *fz_sh;
int fz_slot = -1;
int fz_verbose;

/* ---- reporting -------------------------------------------------------- */

void fz_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "nccom_fuzz[%d]: ", fz_slot);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
}

void fz_finding(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "FINDING: +%.1fs worker %d uid %u op %" PRIu64 ": ",
		     (fz_now_ms() - fz_sh->t0_ms) / 1000.0, fz_slot, (unsigned int)geteuid(),
		     fz_slot >= 0 ? fz_sh->w[fz_slot].ops : 0);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", buf);
	fz_add(&fz_sh->findings, 1);
	if (fz_slot >= 0)
		fz_add(&fz_sh->w[fz_slot].findings, 1);
}

/* ---- the parent -------------------------------------------------------------- */

uint64_t fz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int counters_zero(int wait_ms)
{
	struct nccom_dev_info devs[64];
	struct nccom_info info;
	uint64_t end = fz_now_ms() + wait_ms;
	uint32_t i, nq;
	int fd;

	for (;;) {
		fd = open(DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.dev_count = 64;
		info.devs_uptr = (uintptr_t)devs;
		info.dev_entry_size = sizeof(devs[0]);
		if (ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
			close(fd);
			return -errno;
		}
		close(fd);
		for (i = 0, nq = 0; i < info.dev_count && i < 64; i++)
			nq += devs[i].nqueues;
		if (!info.out_objects && !info.out_pinned_pages && !nq)
			return 0;
		if (fz_now_ms() > end) {
			fz_finding("counters not back to zero after the run: objects=%llu pinned_pages=%llu queues=%u",
				   (unsigned long long)info.out_objects,
				   (unsigned long long)info.out_pinned_pages, nq);
			return 1;
		}
		usleep(20000);
	}
}

static const char *const cmd_names[FZ_NIOCTL] = {
	"GET_INFO", "DESTROY", "MEM_REGISTER", "MEM_EXPORT_DMABUF", "MEM_IMPORT_DMABUF",
	"QUEUE_CREATE", "QUEUE_DOORBELL", "QUEUE_GET_STATE", "QUEUE_RESET", "QUEUE_WAIT",
	"SEM_CREATE", "SEM_SIGNAL", "SEM_READ", "SEM_WAIT", "SEM_EXPORT", "SEM_IMPORT",
	"COMM_REGISTER", NULL, NULL, NULL,
	[FZ_X_MMAP] = "mmap", [FZ_X_MREMAP] = "mremap", [FZ_X_SEMFD_READ] = "fd-read",
	[FZ_X_SEMFD_WRITE] = "fd-write", [FZ_X_FD_POLL] = "fd-poll",
	[FZ_X_BADCMD] = "raw-ioctl", [FZ_X_DMABUF_MMAP] = "dmabuf-mmap",
	[FZ_X_PROCFD] = "proc-fd-open",
};

static const char *const desc_names[FZ_NDESC] = {
	"NOP", "COPY", "REDUCE", "SEM_SIGNAL", "SEM_WAIT", NULL, NULL, "bad-opcode",
};

static const char *const nl_names[FZ_NNL] = {
	"bad-cmd-0", "DEV_GET", "CLIENT_GET", "QUEUE_GET", "SEM_GET", "STATS_GET",
	"QUEUE_RESET", "STATS_RESET", "EVENT", "COMM_GET",
	[FZ_NNL - 1] = "bad-cmd",
};

static unsigned int print_cov(const char *kind, uint32_t (*t)[FZ_NERR], int n,
			      const char *const *names)
{
	unsigned int paths = 0, i, e;
	char line[1024];
	int len;

	for (i = 0; i < (unsigned int)n; i++) {
		len = 0;
		for (e = 0; e < FZ_NERR; e++) {
			if (!t[i][e])
				continue;
			paths++;
			len += snprintf(line + len, sizeof(line) - len, " %s=%u",
					e ? (e == FZ_NERR - 1 ? "other" : strerrorname_np(e)) : "ok",
					t[i][e]);
			if (len >= (int)sizeof(line))
				break;
		}
		if (len)
			printf("#   %s %s:%s\n", kind, names[i] ? names[i] : "?", line);
	}
	return paths;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nccom_fuzz [--seed S] [--iters N] [--procs P] [--gens G] [--uid U]\n"
		"                  [--nl P] [--no-kill] [--verbose]\n"
		"  --iters N  operations in all (default 20000), split over generations and workers;\n"
		"             extra generations make up for the budgets of killed workers\n"
		"  --procs P  ioctl workers per generation (default 4, max %d)\n"
		"  --gens G   generations of workers (default 4)\n"
		"  --uid U    uid of the unprivileged half (default 65534; 0 = all root)\n"
		"  --nl P     netlink workers per generation (default 2)\n",
		FZ_MAXWORKERS);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' }, { "iters", required_argument, NULL, 'n' },
		{ "procs", required_argument, NULL, 'p' }, { "gens", required_argument, NULL, 'g' },
		{ "uid", required_argument, NULL, 'u' }, { "nl", required_argument, NULL, 'l' },
		{ "no-kill", no_argument, NULL, 'k' }, { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	uint64_t seed = 0, iters = 20000, per, t0, gen_deadline;
	unsigned int procs = 4, gens = 4, nlp = 2, g, i, paths, nw, alive;
	bool have_seed = false, may_kill = true;
	uid_t uid = 65534;
	int c, status, socks[FZ_MAXWORKERS][2];
	pid_t pids[FZ_MAXWORKERS];

	while ((c = getopt_long(argc, argv, "s:n:p:g:u:l:kvh", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			procs = strtoul(optarg, NULL, 0);
			break;
		case 'g':
			gens = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			uid = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			nlp = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			may_kill = false;
			break;
		case 'v':
			fz_verbose = 1;
			break;
		default:
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (!procs || procs + nlp > FZ_MAXWORKERS || !gens) {
		usage();
		return 2;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = fz_mix(ts.tv_sec, ts.tv_nsec ^ getpid());
	}
	if (geteuid() != 0)
		uid = geteuid();
	printf("# nccom_fuzz: seed=%" PRIu64 " iters=%" PRIu64 " procs=%u nl=%u gens=%u uid=%u\n",
	       seed, iters, procs, nlp, gens, (unsigned int)uid);
	printf("# reproduce: tools/vm/run [--kernel K] -- build/selftests/nccom/fuzz/nccom_fuzz --seed %" PRIu64
	       " --iters %" PRIu64 " --procs %u --nl %u --gens %u%s\n",
	       seed, iters, procs, nlp, gens, may_kill ? "" : " --no-kill");
	fflush(stdout);
	fz_sh = mmap(NULL, sizeof(*fz_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	if (fz_sh == MAP_FAILED) {
		perror("nccom_fuzz: mmap");
		return 2;
	}
	memset(fz_sh, 0, sizeof(*fz_sh));
	signal(SIGPIPE, SIG_IGN);
	nw = procs + nlp;
	per = iters / gens / nw;
	if (!per)
		per = 1;
	t0 = fz_now_ms();
	fz_sh->t0_ms = t0;
	/*
	 * A killed worker's remaining budget is lost: extra generations (up to
	 * 3 * gens in all) run until --iters operations were done.
	 */
	for (g = 0; g < gens || (fz_sh->ops < iters && g < 3 * gens); g++) {
		for (i = 0; i < procs; i++)
			if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, socks[i])) {
				perror("nccom_fuzz: socketpair");
				return 2;
			}
		for (i = 0; i < nw; i++) {
			uint64_t wseed = fz_mix(fz_mix(seed, g), i);
			bool unpriv = uid != geteuid() && (i & 1);

			fflush(NULL);
			pids[i] = fork();
			if (pids[i] < 0) {
				perror("nccom_fuzz: fork");
				return 2;
			}
			if (pids[i])
				continue;
			fz_slot = i;
			if (unpriv && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
				       setresuid(uid, uid, uid))) {
				perror("nccom_fuzz: setresuid");
				_exit(2);
			}
			/* After the uid change, which clears it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			fz_sh->w[i].uid = geteuid();
			fz_sh->w[i].pid = getpid();
			fz_sh->w[i].alive = 1;
			if (i < procs) {
				unsigned int j;

				fz_w.sock_next = socks[(i + 1) % procs][0];
				fz_w.sock_prev = socks[i][1];
				for (j = 0; j < procs; j++) {
					if (socks[j][0] != fz_w.sock_next)
						close(socks[j][0]);
					if (socks[j][1] != fz_w.sock_prev)
						close(socks[j][1]);
				}
				_exit(fz_worker(wseed, per, may_kill));
			}
			for (c = 0; c < (int)procs; c++) {
				close(socks[c][0]);
				close(socks[c][1]);
			}
			_exit(fz_nl_worker(wseed, per));
		}
		for (i = 0; i < procs; i++) {
			close(socks[i][0]);
			close(socks[i][1]);
		}
		/* Wait for the generation; a worker that stops making progress is hung. */
		gen_deadline = fz_now_ms() + 120000 + per * 20;
		alive = nw;
		while (alive) {
			pid_t p = waitpid(-1, &status, WNOHANG);

			if (p <= 0) {
				if (fz_now_ms() > gen_deadline) {
					for (i = 0; i < nw; i++) {
						if (!pids[i])
							continue;
						fz_finding("worker %u (pid %d, uid %u) hung at op %" PRIu64
							   " (cmd %u)",
							   i, pids[i], fz_sh->w[i].uid, fz_sh->w[i].ops,
							   fz_sh->w[i].cur_op);
						{
							char cmd[96];

							snprintf(cmd, sizeof(cmd),
								 "cat /proc/%d/stack >&2", pids[i]);
							if (system(cmd) != 0)
								fz_log("no kernel stack for pid %d", pids[i]);
						}
						kill(pids[i], SIGKILL);
					}
					gen_deadline = UINT64_MAX;
				}
				usleep(10000);
				continue;
			}
			for (i = 0; i < nw; i++)
				if (pids[i] == p)
					break;
			if (i == nw)
				continue;
			pids[i] = 0;
			alive--;
			fz_sh->w[i].alive = 0;
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
				continue;	/* planned (or killed as hung: already reported) */
			if (WIFSIGNALED(status))
				fz_finding("worker %u (uid %u) died of signal %d at op %" PRIu64 " (cmd %u)",
					   i, fz_sh->w[i].uid, WTERMSIG(status), fz_sh->w[i].ops,
					   fz_sh->w[i].cur_op);
			else if (WEXITSTATUS(status))
				fz_finding("worker %u exited %d", i, WEXITSTATUS(status));
		}
		if (fz_verbose)
			printf("# generation %u: %" PRIu64 " ops, %" PRIu64 " killed, %" PRIu64
			       " findings\n", g, fz_sh->ops, fz_sh->kills, fz_sh->findings);
	}
	fz_failnth_off();
	counters_zero(10000);
	printf("# coverage (result counts per path):\n");
	paths = print_cov("ioctl", fz_sh->ioctl_cov, FZ_NIOCTL, cmd_names);
	paths += print_cov("desc", fz_sh->desc_cov, FZ_NDESC, desc_names);
	paths += print_cov("netlink", fz_sh->nl_cov, FZ_NNL, nl_names);
	printf("# nccom_fuzz: seed=%" PRIu64 " %" PRIu64 " ops, %" PRIu64 " processes killed, %" PRIu64
	       " descriptors, %" PRIu64 " completions checked, %" PRIu64 " isolation probes, %" PRIu64
	       " fds passed, %" PRIu64 " netlink messages, %" PRIu64 " fail_nth arms, %u distinct paths, %" PRIu64 " s\n",
	       seed, fz_sh->ops, fz_sh->kills, fz_sh->descs, fz_sh->cqes, fz_sh->isolation,
	       fz_sh->fds_passed, fz_sh->nl_msgs, fz_sh->failnth, paths,
	       (fz_now_ms() - t0) / 1000);
	printf("nccom_fuzz: %" PRIu64 " ops, %" PRIu64 " processes killed, %" PRIu64 " findings\n",
	       fz_sh->ops, fz_sh->kills, fz_sh->findings);
	return fz_sh->findings ? 1 : 0;
}
