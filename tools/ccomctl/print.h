/* SPDX-License-Identifier: MIT */
/*
 * print.h - the JSON-aware printer shared by every ccomctl object and by
 * ccomd: one call per field prints "fmt" in text mode or "key": value in
 * JSON mode, so -j never becomes a second code path (iproute2's
 * json_print model).
 */
#ifndef CCOM_TOOLS_PRINT_H
#define CCOM_TOOLS_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PR_MAX_DEPTH 16

/**
 * struct pr - printer state; the caller owns it (stack or static)
 * @out: destination stream
 * @json: JSON output instead of text
 * @pretty: indent JSON
 * @depth: nesting level of open JSON containers
 * @count: members already printed at each level (comma placement)
 * @in_array: whether each level is an array (members have no key)
 */
struct pr {
	FILE *out;
	bool json;
	bool pretty;
	int depth;
	int count[PR_MAX_DEPTH];
	bool in_array[PR_MAX_DEPTH];
};

void pr_init(struct pr *p, FILE *out, bool json, bool pretty);
/* JSON containers; @key is NULL inside arrays and at the top level. No-ops in text mode. */
void pr_open_object(struct pr *p, const char *key);
void pr_close_object(struct pr *p);
void pr_open_array(struct pr *p, const char *key);
void pr_close_array(struct pr *p);
/* Fields: @fmt is a printf format with one conversion for the text form. */
void pr_uint(struct pr *p, const char *key, const char *fmt, uint64_t v);
void pr_int(struct pr *p, const char *key, const char *fmt, int64_t v);
void pr_hex(struct pr *p, const char *key, const char *fmt, uint64_t v);
void pr_str(struct pr *p, const char *key, const char *fmt, const char *s);
void pr_bool(struct pr *p, const char *key, const char *fmt, bool v);
/* Text only: end of a record line / free text. */
void pr_nl(struct pr *p);
void pr_text(struct pr *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
