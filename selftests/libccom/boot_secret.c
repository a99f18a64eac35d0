// SPDX-License-Identifier: MIT
/*
 * Description: the job secret (CCOM_COMM_SECRET, CCOM_COMM_SECRET_FILE)
 * and the keys of ids made from an address (bootstrap/id.c).
 *
 * - CCOM_COMM_SECRET_FILE that group or others can read, both variables
 *   set, an empty secret: ccomGetUniqueId fails with ccomInvalidArgument
 *   and a sentence naming the fix.
 * - CCOM_COMM_ID jobs of 4 ranks: without a secret they initialise and
 *   rank 0 logs exactly one WARN that the key is public; with the same
 *   secret on every rank (one of them through a 0600 file holding it with
 *   a newline) they initialise with no such WARN; a rank without the
 *   secret and one with another fail ccomCommInitRank with ccomRemoteError
 *   "authentication failed", well before the bootstrap timeout (a
 *   timeout is what they got before).
 * - A torch-like job: the id comes from ccomGetUniqueId in a process with
 *   the secret and travels to every rank (as through torch's TCPStore); a
 *   rank that holds the id but not the secret cannot join ("authentication
 *   failed"), the ranks with it can.
 * - Two CCOM_COMM_ID jobs of 4 ranks on one (simulated) host, both forced
 *   hierarchical and started at one instant: each elects its own host
 *   leader and initialises (before, their leaders' socket names were the
 *   same, and the jobs' ranks checked in with each other's leader).
 */
#include <stdio.h>
#include <sys/stat.h>

#include "test_util.h"

static char logf[128], secret_file[128];

struct rank_env {
	const char *commid;	/* CCOM_COMM_ID, or NULL: the id from the pipe */
	const char *secret;	/* CCOM_COMM_SECRET, NULL: unset, "@": CCOM_COMM_SECRET_FILE */
	int expect;		/* 0: success, 1: authentication failed, 2: any failure */
};

struct job {
	int nranks;
	int timeout_s;
	struct rank_env r[8];
	const char *commid2;	/* two jobs: ranks nranks/2.. use this CCOM_COMM_ID */
};

static ccomUniqueId id;

static void set_secret(const char *s)
{
	unsetenv("CCOM_COMM_SECRET");
	unsetenv("CCOM_COMM_SECRET_FILE");
	if (s && !strcmp(s, "@"))
		setenv("CCOM_COMM_SECRET_FILE", secret_file, 1);
	else if (s)
		setenv("CCOM_COMM_SECRET", s, 1);
}

static int rank_main(int rank, int nranks, void *arg)
{
	const struct job *j = arg;
	const struct rank_env *e = &j->r[rank];
	ccomConfig_t cfg = CCOM_CONFIG_INITIALIZER;
	int n = j->commid2 ? nranks / 2 : nranks, me = j->commid2 ? rank % n : rank;
	int32_t in, out;
	ccomUniqueId uid = id;
	ccomComm_t comm;
	ccomResult_t res;
	double t0;

	set_secret(e->secret);
	if (e->commid) {
		setenv("CCOM_COMM_ID", e->commid, 1);
		T_CCOM(ccomGetUniqueId(&uid), ccomSuccess);
	}
	cfg.timeoutSec = j->timeout_s;
	t0 = t_now();
	res = ccomCommInitRankConfig(&comm, n, uid, me, &cfg);
	if (e->expect == 1) {
		T_CHECK(res == ccomRemoteError, "rank %d: got %s (%s), want ccomRemoteError", rank,
			ccomGetErrorString(res), ccomGetLastError(NULL));
		T_CHECK(t_has_words(ccomGetLastError(NULL), "authentication failed", NULL),
			"rank %d: message: %s", rank, ccomGetLastError(NULL));
		/* A key mismatch is found at the first connection, not by a timeout. */
		T_CHECK(t_now() - t0 < j->timeout_s * 0.75, "rank %d: failed after %.1f s of %d",
			rank, t_now() - t0, j->timeout_s);
		printf("rank %d: refused in %.2f s: %s\n", rank, t_now() - t0, ccomGetLastError(NULL));
		ccomCommDestroy(comm);
		return T_PASS;
	}
	if (e->expect == 2) {
		T_CHECK(res != ccomSuccess, "rank %d: joined a job with a foreign rank", rank);
		ccomCommDestroy(comm);
		return T_PASS;
	}
	T_CHECK(res == ccomSuccess, "rank %d: %s: %s", rank, ccomGetErrorString(res),
		ccomGetLastError(NULL));
	/* Jobs that share nothing: the sum is of this job's ranks only. */
	in = me + 1 + (rank >= n ? 100 : 0);
	T_CCOM(ccomAllReduce(&in, &out, 1, ccomInt32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	T_CHECK(out == n * (n + 1) / 2 + (rank >= n ? 100 * n : 0), "rank %d: sum %d", rank, out);
	T_CCOM(ccomCommDestroy(comm), ccomSuccess);
	return T_PASS;
}

/* Run @j: its ranks all at one instant, the id from ccomGetUniqueId here unless CCOM_COMM_ID. */
static int run(const char *what, struct job *j, const char *parent_secret)
{
	struct t_ranks t;
	int codes[8], i, bad;

	T_CHECK(!t_ranks_start(&t, j->nranks, rank_main, j, &id), "fork");
	memset(&id, 0, sizeof(id));
	if (!j->r[0].commid) {
		set_secret(parent_secret);
		T_CCOM(ccomGetUniqueId(&id), ccomSuccess);
		set_secret(NULL);
	}
	t_ranks_release(&t, &id);
	bad = t_ranks_wait(&t, codes, 3 * j->timeout_s + 30);
	for (i = 0; i < j->nranks; i++)
		if (codes[i])
			fprintf(stderr, "%s: rank %d exited %d\n", what, i, codes[i]);
	T_CHECK(!bad, "%s: %d ranks failed", what, bad);
	printf("%s: as expected\n", what);
	return 0;
}

static int check_refused(const char *what, const char *want)
{
	ccomUniqueId u;
	ccomResult_t res;

	unsetenv("CCOM_COMM_ID");
	res = ccomGetUniqueId(&u);
	T_CHECK(res == ccomInvalidArgument, "%s: ccomGetUniqueId gave %s", what,
		ccomGetErrorString(res));
	T_CHECK(t_has_words(ccomGetLastError(NULL), want, NULL), "%s: message: %s", what,
		ccomGetLastError(NULL));
	printf("%s: %s\n", what, ccomGetLastError(NULL));
	return 0;
}

static int check_secret_file(void)
{
	FILE *f = fopen(secret_file, "w");

	T_CHECK(f && fputs("s3cret\n", f) >= 0 && !fclose(f), "write %s", secret_file);
	T_CHECK(!chmod(secret_file, 0644), "chmod");
	set_secret("@");
	if (check_refused("secret file of mode 0644", "chmod 600"))
		return T_FAIL;
	T_CHECK(!chmod(secret_file, 0600), "chmod");
	setenv("CCOM_COMM_SECRET", "s3cret", 1);
	if (check_refused("both variables set", "set one of them"))
		return T_FAIL;
	set_secret("");
	setenv("CCOM_COMM_SECRET_FILE", "/dev/null", 1);
	if (check_refused("secret file /dev/null", "not a regular file"))
		return T_FAIL;
	f = fopen(secret_file, "w");
	T_CHECK(f && !fclose(f), "truncate");
	set_secret("@");
	if (check_refused("empty secret file", "is empty"))
		return T_FAIL;
	f = fopen(secret_file, "w");
	T_CHECK(f && fputs("s3cret\n", f) >= 0 && !fclose(f), "write %s", secret_file);
	set_secret(NULL);
	return 0;
}

/* WARNs that a key is public since the last call (the log is shared and appended to). */
static int public_warns(void)
{
	static int seen;
	int n = t_file_lines(logf, "Bootstrap:", "its key is public"), d;

	n = n < 0 ? 0 : n;
	d = n - seen;
	seen = n;
	return d;
}

/* argv[1], if given, runs one part: files, public, secret, torch or hosts. */
static int part(int argc, char **argv, const char *name)
{
	return argc < 2 || !strcmp(argv[1], name);
}

int main(int argc, char **argv)
{
	char a1[64], a2[64];
	struct job j;
	int i, w;

	snprintf(logf, sizeof(logf), "/tmp/ccom-boot-secret-%d.log", (int)getpid());
	snprintf(secret_file, sizeof(secret_file), "/tmp/ccom-boot-secret-%d.key", (int)getpid());
	unlink(logf);
	setenv("CCOM_DEBUG_FILE", logf, 1);
	if (part(argc, argv, "files") && check_secret_file())
		return T_FAIL;

	snprintf(a1, sizeof(a1), "127.0.0.1:%d", t_free_port(AF_INET));
	memset(&j, 0, sizeof(j));
	j.nranks = 4;
	j.timeout_s = 30;
	for (i = 0; i < 4; i++)
		j.r[i].commid = a1;
	if (part(argc, argv, "public")) {
		if (run("CCOM_COMM_ID, no secret", &j, NULL))
			return T_FAIL;
		w = public_warns();
		T_CHECK(w == 1, "%d WARNs that the key is public, want 1 (see %s)", w, logf);
	}
	if (!part(argc, argv, "secret"))
		goto torch;
	snprintf(a1, sizeof(a1), "127.0.0.1:%d", t_free_port(AF_INET));
	for (i = 0; i < 4; i++)
		j.r[i].secret = i == 1 ? "@" : "s3cret";
	if (run("CCOM_COMM_ID, the same secret (rank 1 from a 0600 file)", &j, NULL))
		return T_FAIL;
	w = public_warns();
	T_CHECK(w == 0, "%d WARNs that the key is public with a secret set", w);

	snprintf(a1, sizeof(a1), "127.0.0.1:%d", t_free_port(AF_INET));
	j.timeout_s = 5;
	j.r[0].expect = j.r[1].expect = 2;
	j.r[2].secret = NULL;
	j.r[2].expect = 1;
	j.r[3].secret = "other";
	j.r[3].expect = 1;
	if (run("CCOM_COMM_ID, rank 2 without the secret, rank 3 with another", &j, NULL))
		return T_FAIL;

torch:
	if (!part(argc, argv, "torch"))
		goto hosts;
	/* torch: the id through a store anyone may read; the secret in the environment. */
	memset(&j, 0, sizeof(j));
	j.nranks = 3;
	j.timeout_s = 5;
	j.r[0].secret = j.r[1].secret = "t0rch";
	j.r[0].expect = j.r[1].expect = 2;
	j.r[2].expect = 1;
	if (run("ccomGetUniqueId id, rank 2 holds the id but not the secret", &j, "t0rch"))
		return T_FAIL;
	for (i = 0; i < 3; i++) {
		j.r[i].secret = "t0rch";
		j.r[i].expect = 0;
	}
	j.timeout_s = 30;
	if (run("ccomGetUniqueId id, every rank with the secret", &j, "t0rch"))
		return T_FAIL;

hosts:
	if (!part(argc, argv, "hosts"))
		goto out;
	/* Two hierarchical CCOM_COMM_ID jobs on one host: one leader socket each. */
	setenv("CCOM_BOOTSTRAP_HIER", "1", 1);
	setenv("CCOM_HOSTID", "one-host", 1);
	snprintf(a1, sizeof(a1), "127.0.0.1:%d", t_free_port(AF_INET));
	do
		snprintf(a2, sizeof(a2), "127.0.0.1:%d", t_free_port(AF_INET));
	while (!strcmp(a1, a2));
	memset(&j, 0, sizeof(j));
	j.nranks = 8;
	j.timeout_s = 30;
	j.commid2 = a2;
	for (i = 0; i < 8; i++)
		j.r[i].commid = i < 4 ? a1 : a2;
	if (run("two hierarchical CCOM_COMM_ID jobs on one host", &j, NULL))
		return T_FAIL;
	unsetenv("CCOM_BOOTSTRAP_HIER");
	unsetenv("CCOM_HOSTID");
out:
	unlink(logf);
	unlink(secret_file);
	return T_PASS;
}
