// SPDX-License-Identifier: MIT
/*
 * Description: the bytes that cross hosts in an AllReduce, read from the
 * veth counters (/sys/class/net/ccv0/statistics/tx_bytes of each simulated
 * host, through a sysfs mounted in the host's namespace; needs root and
 * iproute2, skipped otherwise).  2 hosts x 4 ranks, S = 16 MiB of int32:
 * with CCOM_ALGO=rail each host must send at most 2(H-1)/H * S * 1.05 and
 * at least 0.95 of that (the data has to cross: a counter that reads
 * nothing fails), and the flat ring (CCOM_ALGO=ring), printed beside it,
 * must send more (2(n-1)/n * S in theory).  Both results are checked.
 */
#include <time.h>

#include "hier_util.h"

#define H 2
#define L 4
#define S (16u << 20)

/* Local rank 0's tx_bytes of ccv0 on either side of the measured call, and the time between. */
struct tx_probe {
	long long tx[2];
	struct timespec t[2];
};

static int read_tx(int rank, int after, void *ctx)
{
	struct tx_probe *p = ctx;

	if (after)
		clock_gettime(CLOCK_MONOTONIC, &p->t[1]);
	if (rank % L == 0 && (p->tx[after] = ht_counter("tx_bytes")) < 0) {
		fprintf(stderr, "rank %d: cannot read /sys/class/net/ccv0/statistics/tx_bytes\n", rank);
		return 1;
	}
	if (!after)
		clock_gettime(CLOCK_MONOTONIC, &p->t[0]);
	return 0;
}

static int body(ccomComm_t comm, int rank, int nranks, void *arg, uint64_t *result)
{
	struct tx_probe p;

	(void)arg;
	memset(&p, 0, sizeof(p));
	if (ht_measured_allreduce(comm, rank, nranks, S, read_tx, &p))
		return 1;
	if (rank == 0)
		printf("  %.1f ms for the AllReduce and a barrier\n",
		       (double)(p.t[1].tv_sec - p.t[0].tv_sec) * 1e3 +
		       (double)(p.t[1].tv_nsec - p.t[0].tv_nsec) / 1e6);
	fflush(stdout);	/* the rank leaves with _exit() */
	*result = rank % L == 0 ? (uint64_t)(p.tx[1] - p.tx[0]) : 0;
	return 0;
}

int main(void)
{
	const char *modes[2] = { "CCOM_ALGO=rail", "CCOM_ALGO=ring" };
	double sent[2][H], bound = 2.0 * (H - 1) / H * S;
	int m, h, r, rc, fails = 0;

	rc = ht_hosts_up(H);
	if (rc)
		return rc;
	for (m = 0; m < 2; m++) {
		struct ht_job j = { .nranks = H * L, .fn = body, .own_sysfs = 1 };

		for (r = 0; r < H * L; r++)
			j.host_of[r] = r / L;
		j.env[0] = modes[m];
		j.env[1] = "CCOM_OP_TIMEOUT=60";
		printf("%s, %d hosts x %d ranks, AllReduce of %u bytes:\n", modes[m], H, L, S);
		if (ht_run(&j)) {
			fprintf(stderr, "FAIL: %s: a rank failed\n", modes[m]);
			return 1;
		}
		for (h = 0; h < H; h++) {
			sent[m][h] = (double)j.result[h * L];
			printf("  host %d sent %.0f bytes = %.3f S\n", h, sent[m][h], sent[m][h] / S);
		}
	}
	printf("split-rail bound 2(H-1)/H * S * 1.05 = %.0f bytes; flat ring in theory 2(n-1)/n * S = %.0f\n",
	       bound * 1.05, 2.0 * (H * L - 1) / (H * L) * S);
	for (h = 0; h < H; h++) {
		if (sent[0][h] > bound * 1.05 || sent[0][h] < bound * 0.95) {
			fprintf(stderr, "FAIL: host %d sent %.0f bytes with split-rail, outside [0.95, 1.05] x %.0f\n",
				h, sent[0][h], bound);
			fails++;
		}
		if (sent[1][h] <= sent[0][h]) {
			fprintf(stderr, "FAIL: host %d: the flat ring sent %.0f bytes, not more than split-rail's %.0f\n",
				h, sent[1][h], sent[0][h]);
			fails++;
		}
	}
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
