/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathtrace_inline.h - the table a generated inline module carries
 * (pathtrace_inline.c; docs/inline.md).
 */
#ifndef PATHTRACE_INLINE_H
#define PATHTRACE_INLINE_H

struct pt_inline_entry {
	const char *name;
	const char *objname;
	void *copy;
	unsigned long sympos;
};

/*
 * Defined in assembly (pathtrace_inline.c) so that the compiler assumes
 * nothing about its length: enable rewrites the section with as many
 * entries as it copies.
 */
extern const struct pt_inline_entry pt_inline_table[];

#endif
