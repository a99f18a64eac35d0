/* SPDX-License-Identifier: MIT */
/*
 * params.h - every CCOM_* environment variable is declared once, in
 * params.c's table, with its default and a one-line doc.
 */
#ifndef CCOM_UTIL_PARAMS_H
#define CCOM_UTIL_PARAMS_H

#include <stdint.h>

/*
 * Values come from the environment, else the configuration file
 * (CCOM_CONF_FILE, or ~/.ccom.conf over /etc/ccom.conf), else the table.
 *
 * Integer value of a declared parameter: the set value if valid, else the
 * table default.  Aborts with a WARN (and returns the
 * default) for undeclared names, so a typo is found in tests.
 */
int64_t ccom_param_int(const char *name);
/* String value (NULL if unset and no default).  Pointer valid for the process. */
const char *ccom_param_str(const char *name);
/* True if the variable is set (non-empty) in the environment or a file. */
int ccom_param_is_set(const char *name);
/* "environment", "path:line" of the file that set it, or "default". */
const char *ccom_param_origin(const char *name);
/* The declared name nearest to @name (edit distance), for typo hints. */
const char *ccom_param_nearest(const char *name);
/*
 * Print, once per process, the WARN lines (unknown CCOM_* names, unreadable
 * or malformed files) and ENV INFO lines found while loading.  Called by
 * the logger after its own setup; safe to call any time.
 */
void ccom_params_flush_warnings(void);

struct ccom_param_desc {
	const char *name;
	const char *def;	/* default as text, NULL if none */
	const char *doc;
};
/* The table, for ccomctl/docs: returns the number of entries. */
int ccom_params_list(const struct ccom_param_desc **table);

#endif
