// SPDX-License-Identifier: MIT
/*
 * json.c - the JSON writer (util/): layout, commas, string escaping with
 * UTF-8 validation, numbers; see json.h for the rules it keeps.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

void ccom_json_init_file(struct ccom_json *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

void ccom_json_init_buf(struct ccom_json *w)
{
	memset(w, 0, sizeof(*w));
}

void ccom_json_fini(struct ccom_json *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static void put(struct ccom_json *w, const char *s, size_t n)
{
	size_t cap;
	char *p;

	if (w->err || !n)
		return;
	if (w->f) {
		if (fwrite(s, 1, n, w->f) != n)
			w->err = -EIO;
		return;
	}
	if (w->len + n + 1 > w->cap) {
		cap = w->cap ? w->cap : 256;
		while (cap < w->len + n + 1)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (!p) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/*
 * Bytes of the UTF-8 sequence at @s: n > 0 for a valid character (shortest
 * form, no surrogate, at most U+10FFFF), -n for a maximal ill-formed
 * subpart of n bytes (the lead byte and the continuation bytes that could
 * still have been part of a valid character).  @s is NUL-terminated, and
 * NUL is no continuation byte, so the scan stops at the end.
 */
static int utf8_seq(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int need, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 1;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 2;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* below: overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* above: a surrogate, U+D800-DFFF */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 3;
		if (s[0] == 0xf0)
			lo = 0x90;	/* below: overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* above: beyond U+10FFFF */
	} else {
		return -1;	/* a continuation byte, C0/C1 (overlong) or F5-FF */
	}
	for (i = 1; i <= need; i++) {
		if (s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* @str as a JSON string literal (json.h: escapes and U+FFFD). */
static void put_string(struct ccom_json *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *run = s;
	char esc[8];
	int n;

	put(w, "\"", 1);
	while (*s) {
		if (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\') {
			s++;
			continue;
		}
		put(w, (const char *)run, (size_t)(s - run));
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*s;
			put(w, esc, 2);
			n = 1;
		} else if (*s < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *s);
			put(w, esc, 6);
			n = 1;
		} else {
			n = utf8_seq(s);
			if (n > 0)
				put(w, (const char *)s, (size_t)n);
			else
				put(w, "\\ufffd", 6);
			n = n > 0 ? n : -n;
		}
		s += n;
		run = s;
	}
	put(w, (const char *)run, (size_t)(s - run));
	put(w, "\"", 1);
}

/* A line break, then two spaces per container up to @d that spans lines. */
static void newline(struct ccom_json *w, int d)
{
	static const char spaces[] = "                                ";
	uint64_t mask = d > 0 ? ((2ull << d) - 1) & ~1ull : 0;
	int n = 2 * __builtin_popcountll(w->spans_lines & mask);

	put(w, "\n", 1);
	while (n > 0) {
		put(w, spaces, (size_t)(n < 32 ? n : 32));
		n -= 32;
	}
}

/* Comma, line break and key before a value; false when the writer must not write it. */
static bool begin_value(struct ccom_json *w, const char *key)
{
	uint64_t bit = 1ull << w->depth;

	if (w->err)
		return false;
	if (w->depth == 0) {
		if (w->done || key)
			w->err = -EINVAL;
		return !w->err;
	}
	if (!(w->is_object & bit) != !key) {
		w->err = -EINVAL;
		return false;
	}
	if (w->has_member & bit)
		put(w, ",", 1);
	if ((w->is_block & bit) || w->wrap) {
		if (w->wrap)
			w->spans_lines |= bit;
		w->wrap = false;
		newline(w, w->depth);
	} else if (w->has_member & bit) {
		put(w, " ", 1);
	}
	w->has_member |= bit;
	if (key) {
		put_string(w, key);
		put(w, ": ", 2);
	}
	return !w->err;
}

/* After a scalar: the document ends with a scalar at the top. */
static void end_value(struct ccom_json *w)
{
	if (w->depth == 0 && !w->err) {
		put(w, "\n", 1);
		w->done = true;
	}
}

static void open_container(struct ccom_json *w, const char *key, enum ccom_json_layout layout,
			   bool object)
{
	uint64_t bit;

	if (w->depth >= CCOM_JSON_MAX_DEPTH && !w->err)
		w->err = -EINVAL;
	if (!begin_value(w, key))
		return;
	bit = 1ull << ++w->depth;
	w->has_member &= ~bit;
	w->is_object = object ? w->is_object | bit : w->is_object & ~bit;
	w->is_block = layout == CCOM_JSON_BLOCK ? w->is_block | bit : w->is_block & ~bit;
	w->spans_lines = layout == CCOM_JSON_BLOCK ? w->spans_lines | bit : w->spans_lines & ~bit;
	put(w, object ? "{" : "[", 1);
}

void ccom_json_object(struct ccom_json *w, const char *key, enum ccom_json_layout layout)
{
	open_container(w, key, layout, true);
}

void ccom_json_array(struct ccom_json *w, const char *key, enum ccom_json_layout layout)
{
	open_container(w, key, layout, false);
}

void ccom_json_end(struct ccom_json *w)
{
	uint64_t bit = 1ull << w->depth;

	if (w->err)
		return;
	if (w->depth == 0) {
		w->err = -EINVAL;
		return;
	}
	if ((w->is_block & bit) && (w->has_member & bit))
		newline(w, w->depth - 1);
	put(w, (w->is_object & bit) ? "}" : "]", 1);
	w->depth--;
	w->wrap = false;
	end_value(w);
}

void ccom_json_wrap(struct ccom_json *w)
{
	if (w->depth > 0)
		w->wrap = true;
}

void ccom_json_str(struct ccom_json *w, const char *key, const char *s)
{
	if (!begin_value(w, key))
		return;
	if (s)
		put_string(w, s);
	else
		put(w, "null", 4);
	end_value(w);
}

void ccom_json_strf(struct ccom_json *w, const char *key, const char *fmt, ...)
{
	char small[256], *s = small;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	if ((size_t)n >= sizeof(small)) {
		s = malloc((size_t)n + 1);
		if (!s) {
			w->err = w->err ? w->err : -ENOMEM;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	ccom_json_str(w, key, s);
	if (s != small)
		free(s);
}

static void put_number(struct ccom_json *w, const char *key, const char *text)
{
	if (!begin_value(w, key))
		return;
	put(w, text, strlen(text));
	end_value(w);
}

void ccom_json_int(struct ccom_json *w, const char *key, int64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRId64, v);
	put_number(w, key, t);
}

void ccom_json_uint(struct ccom_json *w, const char *key, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRIu64, v);
	put_number(w, key, t);
}

/*
 * The shortest of %.15g, %.16g, %.17g that reads back as @v (17 always
 * does), its decimal point a '.' whatever LC_NUMERIC says (%g writes only
 * digits, a sign, 'e' and the locale's point, which is followed by a
 * digit), and ".0" after an integral value so that it reads as a double.
 */
void ccom_json_double(struct ccom_json *w, const char *key, double v)
{
	char t[48], out[48];
	size_t i, o = 0;
	int p;

	if (!isfinite(v)) {
		ccom_json_null(w, key);
		return;
	}
	for (p = 15; p <= 17; p++) {
		snprintf(t, sizeof(t), "%.*g", p, v);
		if (strtod(t, NULL) == v)
			break;
	}
	for (i = 0; t[i] && o + 1 < sizeof(out); i++) {
		if ((t[i] >= '0' && t[i] <= '9') || t[i] == '-' || t[i] == '+' || t[i] == 'e') {
			out[o++] = t[i];
			continue;
		}
		out[o++] = '.';
		while (t[i + 1] && !(t[i + 1] >= '0' && t[i + 1] <= '9'))
			i++;	/* the rest of a multibyte decimal point */
	}
	out[o] = '\0';
	if (!strpbrk(out, ".e") && o + 2 < sizeof(out))
		strcpy(out + o, ".0");	/* 0.0 and -0.0, not the integer 0 */
	put_number(w, key, out);
}

void ccom_json_bool(struct ccom_json *w, const char *key, bool v)
{
	put_number(w, key, v ? "true" : "false");
}

void ccom_json_null(struct ccom_json *w, const char *key)
{
	put_number(w, key, "null");
}
