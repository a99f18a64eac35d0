// SPDX-License-Identifier: MIT
/*
 * print.c - text/JSON printer (see print.h).  JSON strings are escaped per
 * RFC 8259; hex values are JSON strings ("0x...") so that 64-bit hashes
 * survive parsers that read numbers as doubles.
 */
#include <stdarg.h>
#include <string.h>

#include "print.h"

void pr_init(struct pr *p, FILE *out, bool json, bool pretty)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->json = json;
	p->pretty = pretty;
}

static void pr_indent(struct pr *p)
{
	int i;

	if (!p->pretty)
		return;
	fputc('\n', p->out);
	for (i = 0; i < p->depth; i++)
		fputs("    ", p->out);
}

static void pr_json_string(struct pr *p, const char *s)
{
	const unsigned char *c;

	fputc('"', p->out);
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(p->out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(p->out, "\\u%04x", *c);
		else
			fputc(*c, p->out);
	}
	fputc('"', p->out);
}

/* Comma, indentation and "key": for the next member of the current container. */
static void pr_member(struct pr *p, const char *key)
{
	if (p->depth > 0) {
		if (p->count[p->depth - 1]++)
			fputc(',', p->out);
		pr_indent(p);
		if (key && !p->in_array[p->depth - 1]) {
			pr_json_string(p, key);
			fputs(p->pretty ? ": " : ":", p->out);
		}
	}
}

static void pr_open(struct pr *p, const char *key, bool array)
{
	if (!p->json || p->depth >= PR_MAX_DEPTH)
		return;
	pr_member(p, key);
	fputc(array ? '[' : '{', p->out);
	p->count[p->depth] = 0;
	p->in_array[p->depth] = array;
	p->depth++;
}

static void pr_close(struct pr *p, bool array)
{
	if (!p->json || p->depth == 0)
		return;
	p->depth--;
	if (p->count[p->depth])
		pr_indent(p);
	fputc(array ? ']' : '}', p->out);
	if (p->depth == 0)
		fputc('\n', p->out);
}

void pr_open_object(struct pr *p, const char *key)
{
	pr_open(p, key, false);
}

void pr_close_object(struct pr *p)
{
	pr_close(p, false);
}

void pr_open_array(struct pr *p, const char *key)
{
	pr_open(p, key, true);
}

void pr_close_array(struct pr *p)
{
	pr_close(p, true);
}

void pr_uint(struct pr *p, const char *key, const char *fmt, uint64_t v)
{
	if (p->json) {
		pr_member(p, key);
		fprintf(p->out, "%llu", (unsigned long long)v);
	} else {
		fprintf(p->out, fmt, (unsigned long long)v);
	}
}

void pr_int(struct pr *p, const char *key, const char *fmt, int64_t v)
{
	if (p->json) {
		pr_member(p, key);
		fprintf(p->out, "%lld", (long long)v);
	} else {
		fprintf(p->out, fmt, (long long)v);
	}
}

void pr_hex(struct pr *p, const char *key, const char *fmt, uint64_t v)
{
	char buf[24];

	if (p->json) {
		pr_member(p, key);
		snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)v);
		pr_json_string(p, buf);
	} else {
		fprintf(p->out, fmt, (unsigned long long)v);
	}
}

void pr_str(struct pr *p, const char *key, const char *fmt, const char *s)
{
	if (p->json) {
		pr_member(p, key);
		pr_json_string(p, s ? s : "");
	} else {
		fprintf(p->out, fmt, s ? s : "");
	}
}

void pr_bool(struct pr *p, const char *key, const char *fmt, bool v)
{
	if (p->json) {
		pr_member(p, key);
		fputs(v ? "true" : "false", p->out);
	} else {
		fprintf(p->out, fmt, v ? "yes" : "no");
	}
}

void pr_nl(struct pr *p)
{
	if (!p->json)
		fputc('\n', p->out);
}

void pr_text(struct pr *p, const char *fmt, ...)
{
	va_list ap;

	if (p->json)
		return;
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
}
