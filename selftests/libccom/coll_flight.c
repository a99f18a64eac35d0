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
 */
#include <glob.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "coll_util.h"

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
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? T_PASS : T_FAIL;
}
