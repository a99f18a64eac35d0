// SPDX-License-Identifier: MIT
/*
 * Description: the JSON writer (libccom/util/json.c) on hostile input.
 * Strings with control characters, quotes and backslashes, valid 2-, 3-
 * and 4-byte UTF-8, and ill-formed UTF-8 (stray continuation bytes,
 * truncated, overlong and surrogate sequences, beyond U+10FFFF, bytes
 * never valid) are written exactly as json.h says (checked byte for
 * byte); numbers at the int64/uint64 limits, doubles that need 17
 * digits, denormals, NaN and the infinities (null); the layout (block,
 * inline, wrap, empty containers) is the one the flight recorder's and
 * the topology dump's readers expect; misuse sets -EINVAL and writes
 * nothing more; a file writer writes what a buffer writer holds.  Then
 * python3 parses the whole document strictly (valid UTF-8, no NaN, no
 * duplicate key) and compares every string with Python's own
 * replacement decoding of the raw bytes and every number with its value.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "util/json.h"
#include "util/misc.h"

/* Raw input, and what the writer must make of it (as a top-level value). */
static const struct {
	const char *in;
	const char *out;
} strings[] = {
	{ "plain ASCII, / and ~\x7f", "\"plain ASCII, / and ~\x7f\"" },
	{ "\x01\x02\x1f\n\t\r\b\f", "\"\\u0001\\u0002\\u001f\\u000a\\u0009\\u000d\\u0008\\u000c\"" },
	{ "q\"b\\\"\\", "\"q\\\"b\\\\\\\"\\\\\"" },
	{ "", "\"\"" },
	{ "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",	/* U+E9, U+20AC, U+1F600, U+10FFFF */
	  "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"" },
	{ "\xef\xbf\xbd\xed\x9f\xbf\xee\x80\x80",	/* U+FFFD itself, U+D7FF, U+E000: valid */
	  "\"\xef\xbf\xbd\xed\x9f\xbf\xee\x80\x80\"" },
	{ "\x80", "\"\\ufffd\"" },				/* stray continuation */
	{ "a\x80\xbf" "b", "\"a\\ufffd\\ufffdb\"" },
	{ "\xe2\x82", "\"\\ufffd\"" },				/* truncated: one U+FFFD */
	{ "a\xe2\x82" "b", "\"a\\ufffdb\"" },
	{ "\xf0\x9f\x98", "\"\\ufffd\"" },
	{ "\xf0\x9f\x98\"", "\"\\ufffd\\\"\"" },		/* truncated before a quote */
	{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },			/* overlong '/' */
	{ "\xc1\xbf", "\"\\ufffd\\ufffd\"" },
	{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },		/* U+D800 */
	{ "\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\"" },		/* U+DFFF */
	{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },	/* U+110000 */
	{ "\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "\xff\xfe", "\"\\ufffd\\ufffd\"" },
	{ "\xe2\x28\xa1", "\"\\ufffd(\\ufffd\"" },		/* bad second byte */
	{ "x\xc3", "\"x\\ufffd\"" },				/* truncated at the end */
};

static char *write_one_string(const char *s, int *err)
{
	struct ccom_json w;
	char *out;

	ccom_json_init_buf(&w);
	ccom_json_str(&w, NULL, s);
	*err = ccom_json_error(&w);
	out = strdup(w.buf ? w.buf : "");
	ccom_json_fini(&w);
	return out;
}

static int test_strings(void)
{
	char want[256], *got;
	size_t i;
	int err;

	for (i = 0; i < CCOM_ARRAY_SIZE(strings); i++) {
		snprintf(want, sizeof(want), "%s\n", strings[i].out);
		got = write_one_string(strings[i].in, &err);
		T_CHECK(got && !err, "string %zu: error %d", i, err);
		if (strcmp(got, want)) {
			fprintf(stderr, "FAIL string %zu: got '%s' want '%s'\n", i, got, want);
			free(got);
			return T_FAIL;
		}
		free(got);
	}
	got = write_one_string(NULL, &err);
	T_CHECK(got && !err && !strcmp(got, "null\n"), "a NULL string is not null: '%s'", got);
	free(got);
	return T_PASS;
}

static const struct {
	int64_t v;
	const char *text;
} ints[] = {
	{ 0, "0" }, { -1, "-1" }, { INT64_MAX, "9223372036854775807" },
	{ INT64_MIN, "-9223372036854775808" },
};

static const double doubles[] = {
	0.0, -0.0, 0.1, 1.0 / 3.0, 1e308, -1.7976931348623157e308, 4.9406564584124654e-324,
	2.2250738585072014e-308, 123456789012345678.0, 1e-7, 0.30000000000000004,
};

static const char *number_doc(struct ccom_json *w)
{
	size_t i;

	ccom_json_init_buf(w);
	ccom_json_array(w, NULL, CCOM_JSON_INLINE);
	for (i = 0; i < CCOM_ARRAY_SIZE(ints); i++)
		ccom_json_int(w, NULL, ints[i].v);
	ccom_json_uint(w, NULL, UINT64_MAX);
	ccom_json_double(w, NULL, NAN);
	ccom_json_double(w, NULL, INFINITY);
	ccom_json_double(w, NULL, -INFINITY);
	ccom_json_end(w);
	return w->buf;
}

static int test_numbers(void)
{
	const char *want = "[0, -1, 9223372036854775807, -9223372036854775808, "
			   "18446744073709551615, null, null, null]\n";
	struct ccom_json w;
	char *end;
	size_t i;
	double back;
	int ok;

	number_doc(&w);
	ok = !ccom_json_error(&w) && w.buf && !strcmp(w.buf, want);
	if (!ok)
		fprintf(stderr, "FAIL numbers: got '%s' want '%s'\n", w.buf ? w.buf : "", want);
	ccom_json_fini(&w);
	if (!ok)
		return T_FAIL;
	for (i = 0; i < CCOM_ARRAY_SIZE(doubles); i++) {
		ccom_json_init_buf(&w);
		ccom_json_double(&w, NULL, doubles[i]);
		T_CHECK(!ccom_json_error(&w) && w.buf, "double %zu: error", i);
		back = strtod(w.buf, &end);
		ok = back == doubles[i] && !strcmp(end, "\n") && strlen(w.buf) <= 25 &&
		     !strpbrk(w.buf, ",");
		if (!ok)
			fprintf(stderr, "FAIL double %zu (%a): written '%s'\n", i, doubles[i], w.buf);
		ccom_json_fini(&w);
		if (!ok)
			return T_FAIL;
	}
	/* Shortest form: 0.1 is "0.1", not 0.10000000000000001. */
	ccom_json_init_buf(&w);
	ccom_json_double(&w, NULL, 0.1);
	ok = w.buf && !strcmp(w.buf, "0.1\n");
	ccom_json_fini(&w);
	T_CHECK(ok, "0.1 is not written 0.1");
	return T_PASS;
}

/* A locale whose decimal point is a comma must not leak into the output. */
static int test_locale(void)
{
	static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8" };
	struct ccom_json w;
	size_t i;
	int ok;

	for (i = 0; i < CCOM_ARRAY_SIZE(names); i++)
		if (setlocale(LC_NUMERIC, names[i]))
			break;
	if (i == CCOM_ARRAY_SIZE(names)) {
		printf("note: no locale with a decimal comma installed; the locale check did not run\n");
		return T_PASS;
	}
	ccom_json_init_buf(&w);
	ccom_json_double(&w, NULL, 1.5);
	ok = w.buf && !strcmp(w.buf, "1.5\n");
	if (!ok)
		fprintf(stderr, "FAIL locale %s: 1.5 written '%s'\n", names[i], w.buf ? w.buf : "");
	ccom_json_fini(&w);
	setlocale(LC_NUMERIC, "C");
	return ok ? T_PASS : T_FAIL;
}

/* The layouts the dumps use (topo/dump.c's "placement" and "tcp", the flight "ops"). */
static void layout_doc(struct ccom_json *w)
{
	ccom_json_object(w, NULL, CCOM_JSON_BLOCK);
	ccom_json_int(w, "version", 1);
	ccom_json_array(w, "empty_block", CCOM_JSON_BLOCK);
	ccom_json_end(w);
	ccom_json_object(w, "empty_inline", CCOM_JSON_INLINE);
	ccom_json_end(w);
	ccom_json_array(w, "ops", CCOM_JSON_BLOCK);
	ccom_json_object(w, NULL, CCOM_JSON_INLINE);
	ccom_json_uint(w, "seq", 1);
	ccom_json_null(w, "error");
	ccom_json_bool(w, "ok", true);
	ccom_json_end(w);
	ccom_json_object(w, NULL, CCOM_JSON_INLINE);
	ccom_json_end(w);
	ccom_json_end(w);
	ccom_json_object(w, "local", CCOM_JSON_BLOCK);
	ccom_json_object(w, "placement", CCOM_JSON_INLINE);
	ccom_json_str(w, "bind", "x");
	ccom_json_wrap(w);
	ccom_json_object(w, "tcp", CCOM_JSON_INLINE);
	ccom_json_array(w, "interfaces", CCOM_JSON_BLOCK);
	ccom_json_strf(w, NULL, "eth%d", 0);
	ccom_json_strf(w, NULL, "eth%d", 1);
	ccom_json_end(w);
	ccom_json_end(w);
	ccom_json_end(w);
	ccom_json_end(w);
	ccom_json_end(w);
}

static const char layout_want[] =
	"{\n"
	"  \"version\": 1,\n"
	"  \"empty_block\": [],\n"
	"  \"empty_inline\": {},\n"
	"  \"ops\": [\n"
	"    {\"seq\": 1, \"error\": null, \"ok\": true},\n"
	"    {}\n"
	"  ],\n"
	"  \"local\": {\n"
	"    \"placement\": {\"bind\": \"x\",\n"
	"      \"tcp\": {\"interfaces\": [\n"
	"        \"eth0\",\n"
	"        \"eth1\"\n"
	"      ]}}\n"
	"  }\n"
	"}\n";

static int test_layout(void)
{
	struct ccom_json w;
	char buf[1024];
	size_t n;
	FILE *f;
	int ok;

	ccom_json_init_buf(&w);
	layout_doc(&w);
	ok = !ccom_json_error(&w) && w.buf && !strcmp(w.buf, layout_want);
	if (!ok)
		fprintf(stderr, "FAIL layout: got\n%s\nwant\n%s", w.buf ? w.buf : "", layout_want);
	ccom_json_fini(&w);
	if (!ok)
		return T_FAIL;
	f = tmpfile();
	T_CHECK(f, "tmpfile: %s", strerror(errno));
	ccom_json_init_file(&w, f);
	layout_doc(&w);
	T_CHECK(!ccom_json_error(&w), "file writer: error %d", ccom_json_error(&w));
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	T_CHECK(!strcmp(buf, layout_want), "file writer wrote\n%s", buf);
	return T_PASS;
}

/* Each misuse is -EINVAL, and nothing is written after it. */
static int test_misuse(void)
{
	struct ccom_json w;
	size_t len;
	int i;

	ccom_json_init_buf(&w);
	ccom_json_object(&w, NULL, CCOM_JSON_INLINE);
	ccom_json_int(&w, NULL, 1);		/* no key in an object */
	T_CHECK(ccom_json_error(&w) == -EINVAL, "keyless member: %d", ccom_json_error(&w));
	len = w.len;
	ccom_json_int(&w, "a", 1);
	T_CHECK(w.len == len, "written after an error");
	ccom_json_fini(&w);

	ccom_json_init_buf(&w);
	ccom_json_array(&w, NULL, CCOM_JSON_INLINE);
	ccom_json_int(&w, "k", 1);		/* a key in an array */
	T_CHECK(ccom_json_error(&w) == -EINVAL, "key in an array: %d", ccom_json_error(&w));
	ccom_json_fini(&w);

	ccom_json_init_buf(&w);
	ccom_json_end(&w);			/* nothing open */
	T_CHECK(ccom_json_error(&w) == -EINVAL, "close of nothing: %d", ccom_json_error(&w));
	ccom_json_fini(&w);

	ccom_json_init_buf(&w);
	ccom_json_int(&w, NULL, 1);
	ccom_json_int(&w, NULL, 2);		/* a second top-level value */
	T_CHECK(ccom_json_error(&w) == -EINVAL, "second value: %d", ccom_json_error(&w));
	T_CHECK(w.buf && !strcmp(w.buf, "1\n"), "second value written: '%s'", w.buf);
	ccom_json_fini(&w);

	ccom_json_init_buf(&w);
	for (i = 0; i < CCOM_JSON_MAX_DEPTH; i++)
		ccom_json_array(&w, NULL, CCOM_JSON_INLINE);
	T_CHECK(!ccom_json_error(&w), "%d levels refused", CCOM_JSON_MAX_DEPTH);
	ccom_json_int(&w, NULL, 1);		/* the next element would need a comma */
	len = w.len;
	ccom_json_array(&w, NULL, CCOM_JSON_INLINE);
	T_CHECK(ccom_json_error(&w) == -EINVAL, "level %d accepted", CCOM_JSON_MAX_DEPTH + 1);
	T_CHECK(w.len == len, "level %d partly written", CCOM_JSON_MAX_DEPTH + 1);
	ccom_json_fini(&w);
	return T_PASS;
}

/*
 * The strict parse: the bytes are UTF-8 (Python's decoder refuses
 * surrogates and overlong forms), NaN/Infinity and duplicate keys are
 * refused, and each value equals what Python makes of the raw input.
 */
static const char pycheck[] =
	"import json, sys\n"
	"raw = open(sys.argv[1], 'rb').read()\n"
	"text = raw.decode('utf-8')\n"
	"def no_const(c):\n"
	"    raise ValueError('constant ' + c)\n"
	"def no_dupes(pairs):\n"
	"    keys = [k for k, _ in pairs]\n"
	"    assert len(keys) == len(set(keys)), keys\n"
	"    return dict(pairs)\n"
	"d = json.loads(text, parse_constant=no_const, object_pairs_hook=no_dupes)\n"
	"strs, keys, nums = [], [], []\n"
	"for line in open(sys.argv[2]):\n"
	"    kind, val = line.split()\n"
	"    {'s': strs, 'k': keys, 'n': nums}[kind].append(val)\n"
	"want = [bytes.fromhex(h[1:]).decode('utf-8', 'replace') for h in strs]\n"
	"assert d['strings'] == want, (d['strings'], want)\n"
	"wk = [bytes.fromhex(h[1:]).decode('utf-8', 'replace') for h in keys]\n"
	"assert list(d['keys'].keys()) == wk, (list(d['keys'].keys()), wk)\n"
	"def num(t):\n"
	"    if t == 'null':\n"
	"        return None\n"
	"    return float.fromhex(t[2:]) if t.startswith('d:') else int(t)\n"
	"wn = [num(t) for t in nums]\n"
	"assert d['numbers'] == wn, (d['numbers'], wn)\n"
	"assert all(type(a) == type(b) for a, b in zip(d['numbers'], wn) if b is not None)\n";

static void hex(FILE *f, char kind, const char *s)
{
	fprintf(f, "%c x", kind);
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
	fputc('\n', f);
}

static int write_hostile(FILE *doc, FILE *cases)
{
	struct ccom_json w;
	char key[64];
	size_t i;

	ccom_json_init_file(&w, doc);
	ccom_json_object(&w, NULL, CCOM_JSON_BLOCK);
	ccom_json_array(&w, "strings", CCOM_JSON_BLOCK);
	for (i = 0; i < CCOM_ARRAY_SIZE(strings); i++) {
		ccom_json_str(&w, NULL, strings[i].in);
		hex(cases, 's', strings[i].in);
	}
	ccom_json_end(&w);
	ccom_json_object(&w, "keys", CCOM_JSON_INLINE);
	for (i = 0; i < CCOM_ARRAY_SIZE(strings); i++) {
		/* Hostile keys, told apart by their index: two raw keys may read the same. */
		snprintf(key, sizeof(key), "%zu %s", i, strings[i].in);
		ccom_json_int(&w, key, (int64_t)i);
		hex(cases, 'k', key);
	}
	ccom_json_end(&w);
	ccom_json_array(&w, "numbers", CCOM_JSON_INLINE);
	for (i = 0; i < CCOM_ARRAY_SIZE(ints); i++) {
		ccom_json_int(&w, NULL, ints[i].v);
		fprintf(cases, "n %" PRId64 "\n", ints[i].v);
	}
	ccom_json_uint(&w, NULL, UINT64_MAX);
	fprintf(cases, "n %" PRIu64 "\n", UINT64_MAX);
	for (i = 0; i < CCOM_ARRAY_SIZE(doubles); i++) {
		ccom_json_double(&w, NULL, doubles[i]);
		fprintf(cases, "n d:%a\n", doubles[i]);
	}
	ccom_json_double(&w, NULL, NAN);
	ccom_json_double(&w, NULL, -INFINITY);
	fprintf(cases, "n null\nn null\n");
	ccom_json_end(&w);
	ccom_json_end(&w);
	return ccom_json_error(&w);
}

static int test_python(void)
{
	char dir[] = "/tmp/ccom-json-XXXXXX", p_doc[64], p_cases[64], p_py[64], cmd[256];
	FILE *doc, *cases, *py;
	int err, rc;

	if (system("python3 -c 'import json' 2>/dev/null") != 0)
		return t_skip("python3 with its json module is needed for the strict parse");
	T_CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(p_doc, sizeof(p_doc), "%s/doc.json", dir);
	snprintf(p_cases, sizeof(p_cases), "%s/cases.txt", dir);
	snprintf(p_py, sizeof(p_py), "%s/check.py", dir);
	doc = fopen(p_doc, "w");
	cases = fopen(p_cases, "w");
	py = fopen(p_py, "w");
	T_CHECK(doc && cases && py, "cannot create files in %s", dir);
	err = write_hostile(doc, cases);
	fputs(pycheck, py);
	fclose(doc);
	fclose(cases);
	fclose(py);
	T_CHECK(!err, "writer error %d", err);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s", p_py, p_doc, p_cases);
	rc = system(cmd);
	if (rc == 0) {
		unlink(p_doc);
		unlink(p_cases);
		unlink(p_py);
		rmdir(dir);
	}
	T_CHECK(rc == 0, "python3's strict parse failed (rc %d); the files are in %s", rc, dir);
	return T_PASS;
}

int main(void)
{
	int rc;

	if (test_strings() || test_numbers() || test_locale() || test_layout() || test_misuse())
		return T_FAIL;
	rc = test_python();
	if (rc == T_PASS)
		printf("util_json: %zu hostile strings, %zu doubles, layouts and misuse checked; python3 parsed it all\n",
		       CCOM_ARRAY_SIZE(strings), CCOM_ARRAY_SIZE(doubles));
	return rc;
}
