/* SPDX-License-Identifier: MIT */
/*
 * params.h - every CCOM_* environment variable is declared once, in
 * params.c's table, with its default and a one-line doc.
 */
#ifndef CCOM_UTIL_PARAMS_H
#define CCOM_UTIL_PARAMS_H

#include <stdint.h>

/*
 * Integer value of a declared parameter: the environment value if set and
 * valid, else the table default.  Aborts with a WARN (and returns the
 * default) for undeclared names, so a typo is found in tests.
 */
int64_t ccom_param_int(const char *name);
/* String value (NULL if unset and no default).  Pointer valid for the process. */
const char *ccom_param_str(const char *name);
/* True if the variable is set (non-empty) in the environment. */
int ccom_param_is_set(const char *name);

struct ccom_param_desc {
	const char *name;
	const char *def;	/* default as text, NULL if none */
	const char *doc;
};
/* The table, for ccomctl/docs: returns the number of entries. */
int ccom_params_list(const struct ccom_param_desc **table);

#endif
