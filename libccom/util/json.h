/* SPDX-License-Identifier: MIT */
/*
 * json.h - the one JSON writer of libccom (util/): the flight recorder's
 * dump (proxy/flight.c) and the topology dump (topo/dump.c) write through
 * it.  The writer puts the commas, the key separators and the layout;
 * strings are escaped per RFC 8259 and their UTF-8 is validated.
 *
 * Strings: '"' and '\' are escaped, control characters (below 0x20) are
 * written \u00XX; valid UTF-8 (up to U+10FFFF, shortest form, no
 * surrogates) is copied as it is; every maximal ill-formed subpart
 * (Unicode's "substitution of maximal subparts": a stray continuation
 * byte, a truncated, overlong or surrogate sequence, a byte never valid)
 * becomes one U+FFFD, written \ufffd, so the output is always valid UTF-8
 * and a reader sees where the input was broken.  Numbers: int64, uint64
 * and double (the shortest of %.15g..%.17g that reads back the same, a
 * '.' whatever the locale, "1.0" rather than "1"); NaN and the
 * infinities, which JSON cannot say, are written null.
 *
 * Layout: a container is inline ({"a": 1, "b": 2} on one line) or block
 * (each member on a line of its own).  Each container that spans lines
 * (block, or inline after ccom_json_wrap()) indents the lines inside it
 * by two more spaces; an empty container is {} or [].  Closing the
 * outermost container ends the document with a newline.
 *
 * No external library: libccom depends on nothing but libc (json-c is
 * used only by ccomctl and ccomd), and this is all it needs of JSON.
 */
#ifndef CCOM_UTIL_JSON_H
#define CCOM_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CCOM_JSON_MAX_DEPTH 32

enum ccom_json_layout {
	CCOM_JSON_INLINE,
	CCOM_JSON_BLOCK,
};

/**
 * struct ccom_json - a writer (the caller's, on its stack).
 * @f: where the text goes, or NULL: into @buf
 * @buf: the text so far (NUL-terminated) when @f is NULL
 * @len: bytes in @buf
 * @cap: bytes allocated for @buf
 * @err: the first error: -ENOMEM (buffer), -EIO (a short write to @f),
 *	-EINVAL (misuse: a key missing in an object or given in an array,
 *	too deep, a close with nothing open, a second top-level value)
 * @depth: open containers
 * @done: the top-level value is complete
 * @wrap: the next member starts on a line of its own
 * @is_object: bit d: container d (1-based) is an object
 * @spans_lines: bit d: container d indents what is inside it
 * @is_block: bit d: container d puts every member on its own line
 * @has_member: bit d: container d has a member (the next needs a comma)
 */
struct ccom_json {
	FILE *f;
	char *buf;
	size_t len;
	size_t cap;
	int err;
	int depth;
	bool done;
	bool wrap;
	uint64_t is_object;
	uint64_t spans_lines;
	uint64_t is_block;
	uint64_t has_member;
};

/* Start a writer into @f (the caller opens and closes it). */
void ccom_json_init_file(struct ccom_json *w, FILE *f);
/* Start a writer into a buffer that grows (ccom_json_fini() frees it). */
void ccom_json_init_buf(struct ccom_json *w);
/* Free the buffer of a buffer writer. */
void ccom_json_fini(struct ccom_json *w);
/*
 * The first error (0: none so far); a writer in error writes nothing
 * more.  For a file writer, the caller's fclose() still says whether the
 * data reached the disk.
 */
static inline int ccom_json_error(const struct ccom_json *w)
{
	return w->err;
}

/*
 * Open an object or an array: a member named @key of the enclosing
 * object, or (@key NULL) an element of the enclosing array or the
 * top-level value.
 */
void ccom_json_object(struct ccom_json *w, const char *key, enum ccom_json_layout layout);
void ccom_json_array(struct ccom_json *w, const char *key, enum ccom_json_layout layout);
/* Close the innermost open container. */
void ccom_json_end(struct ccom_json *w);
/* Start the next member of the innermost container on a line of its own. */
void ccom_json_wrap(struct ccom_json *w);

/* Values, named @key in an object, @key NULL in an array.  @s NULL: null. */
void ccom_json_str(struct ccom_json *w, const char *key, const char *s);
/* A string formatted by printf's rules (then escaped like any string). */
void ccom_json_strf(struct ccom_json *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ccom_json_int(struct ccom_json *w, const char *key, int64_t v);
void ccom_json_uint(struct ccom_json *w, const char *key, uint64_t v);
void ccom_json_double(struct ccom_json *w, const char *key, double v);
void ccom_json_bool(struct ccom_json *w, const char *key, bool v);
void ccom_json_null(struct ccom_json *w, const char *key);

#endif
