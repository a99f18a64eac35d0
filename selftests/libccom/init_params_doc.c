// SPDX-License-Identifier: MIT
/*
 * Description: every variable of the CCOM_* parameter table
 * (libccom/util/params.c) has a default that parses where it is numeric,
 * a one-line doc, and is documented in
 * Documentation/libccom/environment.rst with that same text and default
 * (found from the current directory,
 * i.e. the top of the tree when run by make; skipped if absent).
 * Undeclared names are reported, not silently read.
 */
#include "util/params.h"
#include "test_util.h"

int main(void)
{
	const struct ccom_param_desc *t;
	char *doc = NULL;
	size_t len = 0;
	FILE *f;
	int n, i, bad = 0;

	n = ccom_params_list(&t);
	T_CHECK(n > 10, "only %d parameters", n);
	for (i = 0; i < n; i++) {
		T_CHECK(!strncmp(t[i].name, "CCOM_", 5), "%s lacks the CCOM_ prefix", t[i].name);
		T_CHECK(t[i].doc && strlen(t[i].doc) > 10, "%s has no doc", t[i].name);
	}
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "12", 1);
	T_CHECK(ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT") == 12, "env value not read");
	setenv("CCOM_BOOTSTRAP_TIMEOUT", "12x", 1);
	T_CHECK(ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT") == 300, "malformed value not defaulted");
	T_CHECK(ccom_param_str("CCOM_NO_SUCH_VARIABLE") == NULL, "undeclared name returned a value");

	f = fopen("Documentation/libccom/environment.rst", "r");
	if (!f)
		return t_skip("Documentation/libccom/environment.rst not found from %s",
			      getenv("PWD") ? getenv("PWD") : ".");
	if (getdelim(&doc, &len, '\0', f) < 0)
		doc = NULL;
	fclose(f);
	T_CHECK(doc, "cannot read environment.rst");
	for (i = 0; i < n; i++) {
		char key[80], *entry;
		int m;

		snprintf(key, sizeof(key), "``%s``", t[i].name);
		if (!strstr(doc, key)) {
			fprintf(stderr, "FAIL: %s is not documented in environment.rst\n", t[i].name);
			bad++;
			continue;
		}
		/* The entry as the table says it: name, indented doc, default. */
		m = asprintf(&entry, "``%s``\n    %s\n\n    Default: %s%s%s\n", t[i].name, t[i].doc,
			     t[i].def ? "``" : "", t[i].def ? t[i].def : "unset",
			     t[i].def ? "``" : "");
		T_CHECK(m > 0, "asprintf");
		if (!strstr(doc, entry)) {
			fprintf(stderr, "FAIL: environment.rst's entry for %s differs from params.c; want:\n%s",
				t[i].name, entry);
			bad++;
		}
		free(entry);
	}
	free(doc);
	T_CHECK(!bad, "%d variables undocumented or documented differently", bad);
	printf("%d parameters declared and documented\n", n);
	return T_PASS;
}
