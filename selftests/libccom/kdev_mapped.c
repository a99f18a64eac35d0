// SPDX-License-Identifier: MIT
/*
 * Description: the mapped single-copy path (CCOM_KDEV=1 CCOM_KDEV_MAP=1)
 * for every collective the kdev schedule serves (AllReduce, Broadcast,
 * Reduce, AllGather, ReduceScatter, AlltoAll) and for grouped Send/Recv
 * above the engine's threshold (kdev_p2p.c) on malloc'd buffers, 2 and
 * 3 ranks, in and out of place, every result checked against
 * coll_matrix.h's reference with canaries past the output: each
 * collective at 256 Ki + 3 elements (fp32 sum and int8 max: uneven slices,
 * several 64 KiB reduce blocks), the reductions for every dtype x op at
 * 2053 elements and the copies for each element size at 1031 (in and out
 * of place alternating over that grid; kdev_matrix with CCOM_KDEV_MAP=1
 * runs the whole matrix and the 4 MiB streaming-store sizes).  Proof that
 * the path ran, per collective: rank 0 reads the engines' byte counter
 * (GET_INFO) around each of its collectives; with CCOM_KDEV_MAP=1 the
 * engines must copy less than 1/16 of the output, and the 256 Ki cases
 * with CCOM_KDEV_MAP=0 must make them copy at least 1/4 of it (so the
 * check can fail: those cases ran on the kdev path, not on shm).  A third
 * job runs the 256 Ki cases with the odd ranks on the mapped path and the
 * even ones on the engine (the two paths must interoperate).  Afterwards
 * the driver's counters must be zero.  Every rank also reads the flight
 * recorder's label of each collective it ran: "mapped/kdev" on the
 * mapped path, "engine/kdev" on the engine (CCOM_KDEV_MAP=0, the mixed
 * job's even ranks), and "p2p/kdev" for a Send/Recv group from 256 KiB
 * (smaller ones may be "p2p/simple").  SKIPs without /dev/nccom or without
 * NCCOM_FEAT_DMABUF_MMAP.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "coll_matrix.h"
#include "kdev_util.h"

#include "core/comm.h"
#include "proxy/flight.h"
#include "proxy/proxy.h"

/* K_SR: a ring of grouped Send/Recv, on the engine from 64 KiB (256 KiB above 2 ranks). */
static const int kinds[] = { K_AR, K_BC, K_RED, K_AG, K_RS, K_A2A, K_SR };
#define NKINDS 7
#define BIG ((256u << 10) + 3)	/* elements: several 64 KiB reduce blocks even for int8 */
#define SWEEP_RED 2053		/* elements: every dtype x op of the reductions */
#define SWEEP_COPY 1031		/* elements: each element size of the copies */

/* Engine bytes and output bytes per collective kind, seen by rank 0; this rank's label. */
struct kstat {
	long long eng[K_N], out[K_N];
	const char *want;	/* "mapped/kdev" or "engine/kdev" */
	int labelled;		/* collectives whose label was checked */
	int labelled_p2p;	/* Send/Recv groups recorded as p2p/kdev */
};

/* Sum of the engines' destination bytes over every device. */
static long long engine_bytes(void)
{
	struct nccom_dev_info dev[16];
	struct nccom_info info = { .size = sizeof(info), .dev_count = 16,
				   .dev_entry_size = sizeof(dev[0]) };
	long long sum = 0;
	int fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);

	info.devs_uptr = (uintptr_t)dev;
	if (fd < 0 || ioctl(fd, NCCOM_IOC_GET_INFO, &info)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (unsigned int i = 0; i < info.dev_count && i < 16; i++)
		sum += (long long)dev[i].bytes;
	return sum;
}

/* "algo/proto" of @comm's last recorded op, from its flight recorder; -1 if none. */
static int last_label(ccomComm_t comm, char *out, size_t len)
{
	struct ccom_flight *fr = comm->proxy ? comm->proxy->flight : NULL;
	const struct ccom_pub_op *e;
	uint32_t names;

	if (!fr || !fr->next_seq)
		return -1;
	e = &fr->e[fr->next_seq & (fr->n - 1)];
	names = fr->names->algo_count;
	if (e->seq != fr->next_seq || e->algo >= names || e->proto >= names)
		return -1;
	snprintf(out, len, "%s/%s", fr->names->algo_names[e->algo],
		 fr->names->algo_names[e->proto]);
	return 0;
}

/*
 * One case; rank 0 adds the engines' bytes during it and its output size.
 * Every copy and reduction of a collective is done before any rank
 * returns from it (the final semaphore wait), and none of the next one
 * starts before rank 0 enters it, so rank 0's two readings frame it.
 */
static int run_case(ccomComm_t comm, const struct ct_case *c, int rank, int n, char *sb,
		    char *rb, size_t bufsz, struct kstat *st)
{
	long long e0 = rank == 0 ? engine_bytes() : 0;
	char label[2 * CCOM_PUB_NAME_LEN];

	if (ct_case_run(comm, c, rank, n, sb, rb, bufsz))
		return T_FAIL;
	/* The path this rank took, as recorded. */
	if (last_label(comm, label, sizeof(label)))
		snprintf(label, sizeof(label), "nothing");
	if (c->kind != K_SR) {
		T_CHECK(!strcmp(label, st->want),
			"rank %d, %d ranks: %s of %zu elements recorded as %s, want %s", rank, n,
			k_names[c->kind], c->count, label, st->want);
		st->labelled++;
	} else {
		/* A group's label is its messages' path: the kdev room's from 256 KiB. */
		T_CHECK(!strcmp(label, "p2p/kdev") ||
			(c->count * ct_size(c->dt) < (256u << 10) && !strcmp(label, "p2p/simple")),
			"rank %d, %d ranks: a Send/Recv group of %zu bytes recorded as %s, want p2p/kdev%s",
			rank, n, c->count * ct_size(c->dt), label,
			c->count * ct_size(c->dt) < (256u << 10) ? " or p2p/simple" : "");
		st->labelled_p2p += !strcmp(label, "p2p/kdev");
	}
	if (rank == 0) {
		long long e1 = engine_bytes();

		T_CHECK(e0 >= 0 && e1 >= 0, "GET_INFO device counters");
		st->eng[c->kind] += e1 - e0;
		st->out[c->kind] += (long long)(c->count * ct_size(c->dt) *
						(size_t)ct_blocks_out(c->kind, n));
	}
	return T_PASS;
}

static int run_cases(ccomComm_t comm, int rank, int n, char *sb, char *rb, size_t bufsz,
		     struct kstat *st, bool sweep)
{
	static const struct { ccomDataType_t dt; ccomRedOp_t op; } big[] = {
		{ ccomFloat32, ccomSum }, { ccomInt8, ccomMax },
	};
	static const ccomDataType_t copy_dts[] = { ccomInt8, ccomFloat16, ccomFloat32, ccomFloat64 };
	struct ct_case c;
	int k, i, dt, op, ip;

	for (k = 0; k < NKINDS; k++)
		for (i = 0; i < 2; i++)
			for (ip = 0; ip < (kinds[k] == K_SR ? 1 : 2); ip++) {
				c = (struct ct_case){ kinds[k], ip, (i + ip) % n, big[i].dt, big[i].op,
						      ct_blocked(kinds[k]) ? BIG / (size_t)n + 1 : BIG };
				if (run_case(comm, &c, rank, n, sb, rb, bufsz, st))
					return T_FAIL;
			}
	/* In and out of place alternate over the dtype x op grid (the emulated VM is slow). */
	for (k = 0; sweep && k < NKINDS; k++) {
		bool red = ct_is_reduction(kinds[k]);

		for (dt = 0; dt < (red ? ccomNumTypes : 4); dt++)
			for (op = 0; op < (red ? ccomNumOps : 1); op++) {
				ip = kinds[k] == K_SR ? 0 : (dt + op + k) % 2;
				c = (struct ct_case){ kinds[k], ip, (dt + op) % n,
						      red ? (ccomDataType_t)dt : copy_dts[dt],
						      (ccomRedOp_t)op, red ? SWEEP_RED : SWEEP_COPY };
				if (run_case(comm, &c, rank, n, sb, rb, bufsz, st))
					return T_FAIL;
			}
	}
	return T_PASS;
}

/* Rank 0's verdict: the engines' share of the output with the path on (1) or off (0). */
static int check_share(const struct kstat *st, int n, int map)
{
	for (int k = 0; k < NKINDS; k++) {
		long long e = st->eng[kinds[k]], o = st->out[kinds[k]];

		printf("%d ranks, %s: %-13s engine bytes %lld for %lld bytes of output\n", n,
		       map == 1 ? "CCOM_KDEV_MAP=1" : map == 0 ? "CCOM_KDEV_MAP=0" : "odd ranks mapped",
		       k_names[kinds[k]], e, o);
		if (map == 1)
			T_CHECK(e < o / 16,
				"%d ranks, CCOM_KDEV_MAP=1: %s: the engines copied %lld bytes for %lld bytes of output: the mapped path did not run",
				n, k_names[kinds[k]], e, o);
		else if (map == 0)
			T_CHECK(e >= o / 4,
				"%d ranks, CCOM_KDEV_MAP=0: %s: the engines copied only %lld bytes for %lld bytes of output: the counter cannot tell the paths apart",
				n, k_names[kinds[k]], e, o);
	}
	fflush(stdout);
	return T_PASS;
}

/* The mixed job: odd ranks map their peers' grants, even ranks use the engine. */
static void mixed_env(int rank)
{
	setenv("CCOM_KDEV_MAP", rank % 2 ? "1" : "0", 1);
}

static int mapped_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	size_t bufsz = ((size_t)BIG + 8) * 4 + 4096;
	const char *env;
	struct kstat st = { { 0 }, { 0 }, NULL, 0, 0 };
	ccomComm_t comm;
	char *sb, *rb;
	int map;

	if (ct_init(j, rank, &comm))
		return T_FAIL;
	env = getenv("CCOM_KDEV_MAP");
	map = j->at_init ? -1 : (env && !strcmp(env, "1"));
	st.want = (map == -1 ? rank % 2 : map) ? "mapped/kdev" : "engine/kdev";
	sb = malloc(bufsz);
	rb = malloc(bufsz);
	T_CHECK(sb && rb, "malloc");
	if (run_cases(comm, rank, n, sb, rb, bufsz, &st, map == 1))
		return T_FAIL;
	printf("%d ranks, rank %d: %d collectives recorded as %s, %d Send/Recv groups as p2p/kdev\n",
	       n, rank, st.labelled, st.want, st.labelled_p2p);
	T_CHECK(st.labelled_p2p > 0, "rank %d: no Send/Recv group recorded as p2p/kdev", rank);
	if (rank == 0 && check_share(&st, n, map))
		return T_FAIL;
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	free(sb);
	free(rb);
	return T_PASS;
}

int main(void)
{
	struct ct_job on = { .env = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=1", "CCOM_DEBUG=INFO",
				      "CCOM_DEBUG_SUBSYS=KDEV" } };
	struct ct_job off = { .env = { "CCOM_KDEV=1", "CCOM_KDEV_MAP=0" } };
	struct ct_job mixed = { .env = { "CCOM_KDEV=1" }, .at_init = mixed_env };
	struct nccom_info info = { .size = sizeof(info) };
	double t0;
	int fd;

	KT_REQUIRE(3);
	fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	T_CHECK(fd >= 0 && ioctl(fd, NCCOM_IOC_GET_INFO, &info) == 0, "GET_INFO");
	close(fd);
	if (!(info.out_features & NCCOM_FEAT_DMABUF_MMAP))
		return t_skip("nccom.ko has no NCCOM_FEAT_DMABUF_MMAP");
	for (int n = 2; n <= 3; n++) {
		t0 = t_now();
		if (ct_run(&on, n, mapped_rank, 400) || ct_run(&off, n, mapped_rank, 400))
			return T_FAIL;
		printf("%d ranks: every collective correct with CCOM_KDEV_MAP=1 and 0 (%.1f s)\n", n,
		       t_now() - t0);
		t0 = t_now();
		if (ct_run(&mixed, n, mapped_rank, 400))
			return T_FAIL;
		printf("%d ranks: correct with odd ranks mapped, even ranks on the engine (%.1f s)\n", n,
		       t_now() - t0);
		if (kt_counters_zero("after the mapped collectives"))
			return T_FAIL;
	}
	return T_PASS;
}
