/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out_line - a writer's line built in memory and written in one call, for
 * the lines a writer writes for every block or activation: without a
 * format string parsed each, which cost the text output more than
 * regenerating it did (docs/pathregen.md, "The text output's lines").
 * The stream is the writer's own (one thread's): written unlocked.
 */
#ifndef PATHTRACE_REGEN_OUT_LINE_H
#define PATHTRACE_REGEN_OUT_LINE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct out_line {
	char buf[512];
	size_t len;
};

/* n bytes of s after what l holds; a piece larger than l's room goes straight to fp. */
static inline void out_line_put(struct out_line *l, FILE *fp, const char *s, size_t n)
{
	if (l->len + n > sizeof(l->buf)) {
		fwrite_unlocked(l->buf, 1, l->len, fp);
		l->len = 0;
		if (n > sizeof(l->buf)) {
			fwrite_unlocked(s, 1, n, fp);
			return;
		}
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static inline void out_line_str(struct out_line *l, FILE *fp, const char *s)
{
	out_line_put(l, fp, s, strlen(s));
}

/* v in decimal, at least width digits (zeros before). */
static inline void out_line_dec(struct out_line *l, FILE *fp, uint64_t v, unsigned int width)
{
	char d[24];
	unsigned int n = 0;

	do {
		d[sizeof(d) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v || n < width);
	out_line_put(l, fp, d + sizeof(d) - n, n);
}

/* v as "0x" and lower-case hex digits, as printf's "0x%" PRIx64. */
static inline void out_line_hex(struct out_line *l, FILE *fp, uint64_t v)
{
	char d[24];
	unsigned int n = 0;

	do {
		d[sizeof(d) - ++n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	d[sizeof(d) - ++n] = 'x';
	d[sizeof(d) - ++n] = '0';
	out_line_put(l, fp, d + sizeof(d) - n, n);
}

/* s as a JSON string: quoted, '"' and '\\' escaped, control characters as \\u00XX. */
static inline void out_line_json_str(struct out_line *l, FILE *fp, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;
	char esc[6] = { '\\', 'u', '0', '0' };

	out_line_put(l, fp, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		out_line_put(l, fp, run, (size_t)(s - run));
		run = s + 1;
		if (c >= 0x20) {
			esc[1] = (char)c;
			out_line_put(l, fp, esc, 2);
			esc[1] = 'u';
		} else {
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			out_line_put(l, fp, esc, 6);
		}
	}
	out_line_put(l, fp, run, (size_t)(s - run));
	out_line_put(l, fp, "\"", 1);
}

/* What l holds, written. */
static inline void out_line_end(struct out_line *l, FILE *fp)
{
	fwrite_unlocked(l->buf, 1, l->len, fp);
	l->len = 0;
}

#endif
