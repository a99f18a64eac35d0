// SPDX-License-Identifier: MIT
/*
 * Description: the choice of the network transport between hosts (CCOM_NET,
 * libccom/transport/select.c), on a host without an RDMA device: 2 ranks
 * made two hosts by CCOM_HOSTID (no root needed).  CCOM_NET=ib fails init
 * fast on both ranks with ccomUnhandledDeviceError and a sentence naming
 * the rank, the cause and the fix, both when the verbs library is missing
 * (CCOM_IB_LIB pointing at a file that does not exist: "libibverbs.so.1
 * not found") and, with the real library, when no device exists ("no RDMA
 * device found"; where libibverbs itself is absent the missing-library
 * sentence is expected instead).  CCOM_NET unset chooses net_socket (read
 * from the INFO log) and an AllReduce across the two hosts is right; a
 * CCOM_NET that differs between ranks and an unknown value are refused.
 * Skipped where an RDMA device is present (the forced case would work).
 */
#include <dlfcn.h>
#include <fcntl.h>

#include "coll_util.h"

struct ib_case {
	const char *name;
	const char *net[2];	/* CCOM_NET of rank 0 and rank 1 (NULL: unset) */
	const char *lib;	/* CCOM_IB_LIB, NULL: default */
	ccomResult_t want;
	const char *words[4];	/* in the error of every rank */
};

static char logdir[64], logfile[80];

static struct ib_case *cur;

static int rank_fn(int rank, int nranks, void *arg)
{
	struct ct_job *j = arg;
	struct ib_case *c = cur;
	ccomComm_t comm;
	ccomResult_t res;
	double t0 = t_now();
	float in[4] = { 1, 2, 3, 4 }, out[4];
	int i;

	t_set_host("nibhost", rank);
	if (c->net[rank])
		setenv("CCOM_NET", c->net[rank], 1);
	if (c->lib)
		setenv("CCOM_IB_LIB", c->lib, 1);
	res = ccomCommInitRank(&comm, nranks, j->id, rank);
	if (c->want != ccomSuccess) {
		const char *e = ccomGetLastError(NULL);

		T_CHECK(res == c->want, "%s: rank %d: init returned %s, want %s (%s)", c->name, rank,
			ccomGetErrorString(res), ccomGetErrorString(c->want), e);
		T_CHECK(t_now() - t0 < 15, "%s: rank %d: failing took %.1f s, not fast", c->name,
			rank, t_now() - t0);
		for (i = 0; i < 4 && c->words[i]; i++)
			T_CHECK(strstr(e, c->words[i]), "%s: rank %d: error lacks \"%s\": %s", c->name,
				rank, c->words[i], e);
		printf("%s: rank %d: %s: %s\n", c->name, rank, ccomGetErrorString(res), e);
		return T_PASS;
	}
	T_CHECK(res == ccomSuccess, "%s: rank %d: init failed: %s: %s", c->name, rank,
		ccomGetErrorString(res), ccomGetLastError(NULL));
	T_CCOM(ccomAllReduce(in, out, 4, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	for (i = 0; i < 4; i++)
		T_CHECK(out[i] == 2 * in[i], "%s: rank %d: element %d is %g, want %g", c->name, rank,
			i, out[i], 2 * in[i]);
	T_CCOM(ccomCommFinalize(comm), ccomSuccess);
	ccomCommDestroy(comm);
	return T_PASS;
}

/* Does the log of the current case (every rank's file) hold @what? */
static int log_has(const char *what)
{
	char buf[16384];

	t_read_logs(logdir, buf, sizeof(buf));
	return strstr(buf, what) != NULL;
}

static int run_case(struct ib_case *c)
{
	struct ct_job j = { 0 };
	int rc;

	cur = c;
	rc = ct_run(&j, 2, rank_fn, 60);
	if (!rc && c->want == ccomSuccess)
		for (int r = 0; r < 2; r++) {
			char what[64];

			snprintf(what, sizeof(what), "rank %d: network transport net_socket", r);
			if (!log_has(what)) {
				fprintf(stderr, "%s: rank %d did not log the choice of net_socket\n",
					c->name, r);
				rc = T_FAIL;
			}
		}
	printf("%s %s\n", rc ? "FAIL" : "PASS", c->name);
	fflush(stdout);
	return rc;
}

int main(void)
{
	static struct ib_case cases[] = {
		{ "forced ib, no verbs library", { "ib", "ib" }, "/nonexistent/libibverbs.so.1",
		  ccomUnhandledDeviceError,
		  { "CCOM_NET=ib", "libibverbs.so.1 not found", "CCOM_NET=socket", "rank 0" } },
		{ "forced ib, no RDMA device", { "ib", "ib" }, NULL, ccomUnhandledDeviceError,
		  { "CCOM_NET=ib", "no RDMA device found", "rdma_rxe", "CCOM_NET=socket" } },
		{ "automatic choice without RDMA", { NULL, NULL }, NULL, ccomSuccess, { NULL } },
		{ "CCOM_NET differs", { "ib", "socket" }, NULL, ccomInvalidUsage,
		  { "CCOM_NET differs between ranks", "same value" } },
		{ "unknown CCOM_NET", { "rdma", "rdma" }, NULL, ccomInvalidArgument,
		  { "CCOM_NET=rdma is not a network transport", "ib, socket" } },
	};
	char cmd[200];
	void *h;
	int i, bad = 0;

	if (t_rdma_devices())
		return t_skip("this host has an RDMA device (/sys/class/infiniband): forced ib would work; the VM test covers net_ib");
	h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* Without the library the "no device" case reports the missing library. */
		cases[1].words[1] = "libibverbs.so.1 not found";
		cases[1].words[2] = "ibverbs-providers";
	} else {
		dlclose(h);
	}
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "30", 1);
	/* Before anything initialises the log: each rank logs to its own file. */
	snprintf(logdir, sizeof(logdir), "/tmp/ccom-nibc-%d", (int)getpid());
	snprintf(logfile, sizeof(logfile), "%s/%%p.log", logdir);
	t_log_to(logfile, "INFO", "NET");
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", logdir, logdir);
	if (system(cmd))
		return T_FAIL;
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++)
		bad += run_case(&cases[i]) != T_PASS;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", logdir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", logdir);
	printf("%d passed, %d failed\n", (int)(sizeof(cases) / sizeof(cases[0])) - bad, bad);
	return bad ? T_FAIL : T_PASS;
}
