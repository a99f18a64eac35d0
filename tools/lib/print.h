/* SPDX-License-Identifier: MIT */
/*
 * print.h - the JSON-aware printer shared by every ccomctl object and by
 * ccomd: one call per field prints "fmt" in text mode or "key": value in
 * JSON mode, so -j never becomes a second code path (iproute2's
 * json_print model).
 */
#ifndef CCOM_TOOLS_LIB_PRINT_H
#define CCOM_TOOLS_LIB_PRINT_H

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

/**
 * pr_init() - set up a printer
 * @p: printer, owned by the caller
 * @out: destination stream
 * @json: print JSON instead of text
 * @pretty: indent the JSON
 */
void pr_init(struct pr *p, FILE *out, bool json, bool pretty);

/**
 * pr_open_object() - open a JSON object (no-op in text mode)
 * @p: printer
 * @key: member name, NULL inside arrays and at the top level
 */
void pr_open_object(struct pr *p, const char *key);

/**
 * pr_close_object() - close the innermost JSON object (no-op in text mode)
 * @p: printer
 */
void pr_close_object(struct pr *p);

/**
 * pr_open_array() - open a JSON array (no-op in text mode)
 * @p: printer
 * @key: member name, NULL inside arrays and at the top level
 */
void pr_open_array(struct pr *p, const char *key);

/**
 * pr_close_array() - close the innermost JSON array (no-op in text mode)
 * @p: printer
 */
void pr_close_array(struct pr *p);

/**
 * pr_uint() - an unsigned field: "key": v in JSON, @fmt in text
 * @p: printer
 * @key: JSON member name (NULL inside arrays)
 * @fmt: printf format of the text form with one conversion (%llu style)
 * @v: value
 */
void pr_uint(struct pr *p, const char *key, const char *fmt, uint64_t v);

/**
 * pr_int() - a signed field, as pr_uint()
 * @p: printer
 * @key: JSON member name (NULL inside arrays)
 * @fmt: printf format of the text form with one conversion (%lld style)
 * @v: value
 */
void pr_int(struct pr *p, const char *key, const char *fmt, int64_t v);

/**
 * pr_hex() - a field printed in hex; a JSON string "0x..." so that 64-bit
 *	values survive parsers that read numbers as doubles
 * @p: printer
 * @key: JSON member name (NULL inside arrays)
 * @fmt: printf format of the text form with one conversion (%llx style)
 * @v: value
 */
void pr_hex(struct pr *p, const char *key, const char *fmt, uint64_t v);

/**
 * pr_str() - a string field, escaped per RFC 8259 in JSON
 * @p: printer
 * @key: JSON member name (NULL inside arrays)
 * @fmt: printf format of the text form with one %s
 * @s: NUL-terminated value
 */
void pr_str(struct pr *p, const char *key, const char *fmt, const char *s);

/**
 * pr_bool() - a boolean field: true/false in JSON
 * @p: printer
 * @key: JSON member name (NULL inside arrays)
 * @fmt: printf format of the text form with one %s ("yes"/"no")
 * @v: value
 */
void pr_bool(struct pr *p, const char *key, const char *fmt, bool v);

/**
 * pr_nl() - end of a record line (text mode only)
 * @p: printer
 */
void pr_nl(struct pr *p);

/**
 * pr_text() - free text (text mode only)
 * @p: printer
 * @fmt: printf format
 */
void pr_text(struct pr *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
