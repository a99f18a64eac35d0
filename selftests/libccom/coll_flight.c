// SPDX-License-Identifier: MIT
/*
 * Description: the flight recorder.  3 forked ranks run 3 AllReduces, then
 * ranks 0 and 1 issue a 4th (1024 floats) that rank 2 never calls, with
 * CCOM_OP_TIMEOUT=2: ranks 0 and 1 time out and dump; rank 2 aborts once
 * both have (however long a loaded host makes that: up to 50 s) and dumps
 * on the abort.  On every rank the WARN log (CCOM_DEBUG_FILE)
 * holds one "flight" line per recorded op (first run), and the JSON dump
 * (CCOM_FLIGHT_RECORDER_FILE with %h and %p) parses (python3's json module)
 * and holds, on ranks 0 and 1, ops 1-3 done and op 4 an AllReduce of 1024
 * float failed with ccomTimeout, with its algorithm and times; on rank 2
 * ops 1-3 done and nothing after (it never issued op 4).  With
 * CCOM_FLIGHT_RECORDER_ENTRIES=2 only the last two ops are kept.
 *
 * Then the labels: 3 ranks with CCOM_CMA=1 run an AllReduce of 16 floats
 * (below CMA's minimum), one of 64 Ki floats, a Gather (root 0) and a
 * Scatter (root 1) of 32 Ki floats per rank, then two Send/Recv groups
 * (each rank sends to the next and receives from the previous) of 16 and
 * 64 Ki floats, and abort; the dump must record "direct/cma" for each
 * collective that ran on the CMA path (ccom_cma_ops() counted it),
 * "p2p/cma" for a group whose messages did (ccom_cma_p2p_ops()),
 * "p2p/simple" for a Gather/Scatter or group that did not, and a host
 * algorithm and protocol (ll, simple, ll128) for an AllReduce that did not.
 * Where the path is on (ccom_cma_describe()) the four large ops must
 * have taken it; where it is off the test says why and checks the host
 * labels only.
 */
#include <glob.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "coll_util.h"

#include "coll/cma.h"
#include "core/comm.h"

static char dir[256];
static atomic_int *timed_out;	/* shared: ranks whose op 4 has ended */

static int read_file(const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	size_t len = 0;

	*out = NULL;
	if (!f)
		return -1;
	if (getdelim(out, &len, '\0', f) < 0) {
		free(*out);
		*out = NULL;
	}
	fclose(f);
	return *out ? 0 : -1;
}

/* The python3 check of the JSON dump: exit 0 if it parses and says what it must. */
static const char *pycheck =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"rank, first, last, want_err = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]\n"
	"assert d['rank'] == rank and d['nranks'] == 3 and d['ops_issued'] == last, d\n"
	"ops = d['ops']\n"
	"assert [o['seq'] for o in ops] == list(range(first, last + 1)), [o['seq'] for o in ops]\n"
	"done = ops[:-1] if want_err != '-' else ops\n"
	"for o in done:\n"
	"    assert o['state'] == 'done' and o['error'] is None and o['t_end_us'] >= o['t_start_us'] > 0, o\n"
	"    assert o['collective'] == 'ccomAllReduce' and o['count'] == 16 and o['algorithm'], o\n"
	"if want_err != '-':\n"
	"    o = ops[-1]\n"
	"    assert o['collective'] == 'ccomAllReduce' and o['count'] == 1024 and o['dtype'] == 'float', o\n"
	"    assert o['op'] == 'sum' and o['state'] == 'failed' and o['error'] == want_err, o\n"
	"    assert o['algorithm'] and o['t_start_us'] >= o['t_enqueue_us'] > 0 and o['t_end_us'] > 0, o\n"
	"    assert 'op 4' in d['reason'], d['reason']\n"
	"else:\n"
	"    assert 'ccomCommAbort' in d['reason'], d['reason']\n";

static int flight_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	char path[512], cmd[1024], *log = NULL, *line;
	float buf[1024];
	int last = rank == 2 ? 3 : 4, first = j->count == 2 ? last - 1 : 1, i, lines = 0, found4 = 0;
	const char *want_err = rank == 2 ? "-" : "ccomTimeout";
	ccomResult_t res;
	ccomComm_t comm;
	FILE *f;
	glob_t g;

	(void)n;
	setenv("CCOM_OP_TIMEOUT", "2", 1);
	snprintf(path, sizeof(path), "%s/log-%zu-%d.txt", dir, j->count, rank);
	setenv("CCOM_DEBUG_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/fr-%zu-%d-%%h-%%p.json", dir, j->count, rank);
	setenv("CCOM_FLIGHT_RECORDER_FILE", path, 1);
	if (j->count == 2)
		setenv("CCOM_FLIGHT_RECORDER_ENTRIES", "2", 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	for (i = 0; i < 1024; i++)
		buf[i] = 1;
	for (i = 0; i < 3; i++)
		T_CCOM(ccomAllReduce(buf, buf, 16, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
	T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
	if (rank == 2) {
		double t0 = t_now();

		/* Alive, but never calls op 4: until the others' op 4 timed out. */
		while (atomic_load(timed_out) < 2 && t_now() - t0 < 50)
			usleep(10000);
		ccomCommAbort(comm);
	} else {
		T_CCOM(ccomAllReduce(buf, buf, 1024, ccomFloat32, ccomSum, comm, NULL), ccomSuccess);
		res = ccomCommSynchronize(comm);
		atomic_fetch_add(timed_out, 1);
		T_CHECK(res == ccomTimeout, "rank %d: op 4 ended in %s: %s", rank,
			ccomGetErrorString(res), ccomGetLastError(comm));
	}

	/*
	 * The WARN lines: one per recorded op; op 4 failed where it was
	 * issued.  First run only: the second one's ranks inherit the log
	 * the parent opened (on stderr) when it created the first id.
	 */
	if (j->count == 2)
		goto json;
	snprintf(path, sizeof(path), "%s/log-%zu-%d.txt", dir, j->count, rank);
	T_CHECK(!read_file(path, &log), "rank %d: no log %s", rank, path);
	for (line = strstr(log, "flight rank "); line; line = strstr(line + 1, "flight rank ")) {
		char *eol = strchr(line, '\n'), *st = strstr(line, "state failed");

		lines++;
		if (strstr(line, "seq 4 ccomAllReduce count 1024 float op sum") == strstr(line, "seq ") &&
		    st && (!eol || st < eol))
			found4++;
	}
	T_CHECK(lines == last - first + 1 && found4 == (rank != 2),
		"rank %d: %d flight lines (want %d), %d for op 4 failed; log:\n%s", rank, lines,
		last - first + 1, found4, log);
	free(log);

json:
	/* The JSON dump, %h and %p expanded. */
	snprintf(path, sizeof(path), "%s/fr-%zu-%d-*-%d.json", dir, j->count, rank, (int)getpid());
	T_CHECK(glob(path, 0, NULL, &g) == 0 && g.gl_pathc == 1, "rank %d: no dump matching %s", rank,
		path);
	snprintf(cmd, sizeof(cmd), "%s/check-%d.py", dir, rank);
	f = fopen(cmd, "w");
	T_CHECK(f && fputs(pycheck, f) >= 0 && fclose(f) == 0, "cannot write %s", cmd);
	snprintf(path, sizeof(path), "python3 %s/check-%d.py %s %d %d %d %s", dir, rank, g.gl_pathv[0],
		 rank, first, last, want_err);
	T_CHECK(system(path) == 0, "rank %d: the JSON dump %s failed the check (%s)", rank,
		g.gl_pathv[0], path);
	printf("rank %d: %d flight lines, JSON dump %s checked\n", rank, lines, g.gl_pathv[0]);
	globfree(&g);
	if (rank != 2)
		ccomCommAbort(comm);
	return T_PASS;
}

/* The python3 check of the labels: ops 1.. have the labels argv[2:] ("host": any host one). */
static const char *pylabels =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"want = sys.argv[2:]\n"
	"ops = d['ops']\n"
	"assert [o['seq'] for o in ops] == list(range(1, len(want) + 1)), ops\n"
	"for o, w in zip(ops, want):\n"
	"    got = '%s/%s' % (o['algorithm'], o['protocol'])\n"
	"    host = o['protocol'] in ('ll', 'simple', 'll128') and \\\n"
	"           o['algorithm'] in ('direct', 'ring', 'rd', 'tree', 'rail', 'rab', 'hostpair')\n"
	"    assert o['state'] == 'done' and (host if w == 'host' else got == w), (w, o)\n"
	"    print('op %d %s: %s' % (o['seq'], o['collective'], got))\n";

#define LABEL_BIG (64u << 10)	/* floats: 256 KiB, above CMA's 64 KiB per rank */
#define LABEL_ROOTED (32u << 10)	/* floats per rank: 128 KiB */
#define LABEL_NOPS 6

/* One group: @count floats to the next rank, from the previous. */
static ccomResult_t label_ring(ccomComm_t comm, int rank, int n, float *sb, float *rb, size_t count)
{
	ccomResult_t a, b, c;

	a = ccomGroupStart();
	b = ccomSend(sb, count, ccomFloat32, (rank + 1) % n, comm, NULL);
	c = ccomRecv(rb, count, ccomFloat32, (rank + n - 1) % n, comm, NULL);
	if (a == ccomSuccess)
		a = ccomGroupEnd();
	return a != ccomSuccess ? a : b != ccomSuccess ? b : c;
}

static int label_rank(int rank, int n, void *arg)
{
	struct ct_job *j = arg;
	static const char *const host_want[LABEL_NOPS] = { "host", "host", "p2p/simple",
							   "p2p/simple", "p2p/simple", "p2p/simple" };
	static const char *const what[LABEL_NOPS] = { "AllReduce", "AllReduce", "Gather", "Scatter",
						      "Send/Recv", "Send/Recv" };
	char path[512], dump[512], cmd[1400];
	const char *want[LABEL_NOPS], *why;
	uint64_t ops0, p2p0;
	size_t len = 0;
	float *sb, *rb;
	ccomResult_t res;
	ccomComm_t comm;
	bool on;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/labels-%d-%%p.json", dir, rank);
	setenv("CCOM_FLIGHT_RECORDER_FILE", path, 1);
	if (ct_init(j, rank, &comm))
		return T_FAIL;
	why = ccom_cma_describe(comm);
	on = strncmp(why, "off", 3) != 0;
	sb = calloc((size_t)n * LABEL_BIG, sizeof(float));
	rb = calloc((size_t)n * LABEL_BIG, sizeof(float));
	T_CHECK(sb && rb, "calloc");
	for (i = 0; i < LABEL_NOPS; i++) {
		ops0 = ccom_cma_ops(comm);
		p2p0 = ccom_cma_p2p_ops(comm);
		if (i < 2)
			res = ccomAllReduce(sb, rb, i ? LABEL_BIG : 16, ccomFloat32, ccomSum, comm,
					    NULL);
		else if (i == 2)
			res = ccomGather(sb, rb, LABEL_ROOTED, ccomFloat32, 0, comm, NULL);
		else if (i == 3)
			res = ccomScatter(sb, rb, LABEL_ROOTED, ccomFloat32, 1, comm, NULL);
		else
			res = label_ring(comm, rank, n, sb, rb, i == 4 ? 16 : LABEL_BIG);
		T_CCOM(res, ccomSuccess);
		T_CCOM(ccomCommSynchronize(comm), ccomSuccess);
		want[i] = ccom_cma_ops(comm) != ops0 ? "direct/cma" :
			  ccom_cma_p2p_ops(comm) != p2p0 ? "p2p/cma" : host_want[i];
		/* CCOM_CMA=1: where the path is on, every op from 64 KiB per rank (256 KiB a message) takes it. */
		T_CHECK(!on || i == 0 || i == 4 || ccom_cma_ops(comm) != ops0 ||
			ccom_cma_p2p_ops(comm) != p2p0,
			"rank %d: CMA is %s, yet op %d (%s) did not run on it: no label to check",
			rank, why, i + 1, what[i]);
		T_CHECK(!on || (i != 0 && i != 4) ||
			(ccom_cma_ops(comm) == ops0 && ccom_cma_p2p_ops(comm) == p2p0),
			"rank %d: a %s of 64 bytes ran on the CMA path", rank, what[i]);
	}
	if (!on)
		printf("rank %d: the CMA path is %s: host labels only\n", rank, why);
	/* The dump: ccomCommAbort writes it (ops 1-4, done). */
	ccomCommAbort(comm);
	free(sb);
	free(rb);
	snprintf(dump, sizeof(dump), "%s/labels-%d-%d.json", dir, rank, (int)getpid());
	T_CHECK(access(dump, R_OK) == 0, "rank %d: no dump %s", rank, dump);
	snprintf(path, sizeof(path), "%s/labels-%d.py", dir, rank);
	f = fopen(path, "w");
	T_CHECK(f && fputs(pylabels, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	len = (size_t)snprintf(cmd, sizeof(cmd), "python3 %s %s", path, dump);
	for (i = 0; i < LABEL_NOPS && len < sizeof(cmd); i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " %s", want[i]);
	T_CHECK(len < sizeof(cmd) && system(cmd) == 0, "rank %d: the labels in %s are not %s %s %s %s %s %s",
		rank, dump, want[0], want[1], want[2], want[3], want[4], want[5]);
	return T_PASS;
}

int main(void)
{
	struct ct_job j = { 0 };
	char cmd[300];

	if (system("python3 -c 'import json' 2>/dev/null") != 0)
		return t_skip("python3 with its json module is needed to parse the dump");
	snprintf(dir, sizeof(dir), "/tmp/ccom-flight-XXXXXX");
	T_CHECK(mkdtemp(dir), "mkdtemp");
	timed_out = mmap(NULL, sizeof(*timed_out), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_CHECK(timed_out != MAP_FAILED, "mmap");
	atomic_store(timed_out, 0);
	if (ct_run(&j, 3, flight_rank, 90))
		return T_FAIL;
	j.count = 2;
	atomic_store(timed_out, 0);
	if (ct_run(&j, 3, flight_rank, 90))
		return T_FAIL;
	j = (struct ct_job){ .env = { "CCOM_CMA=1" } };
	if (ct_run(&j, 3, label_rank, 90))
		return T_FAIL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? T_PASS : T_FAIL;
}
