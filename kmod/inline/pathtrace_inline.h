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

/* Defined in assembly too (pathtrace_inline.c): enable sizes them. */
extern void __percpu *pt_inline_pieces[];
extern const unsigned long pt_inline_counter_bytes;

/* What the copies' sites call: pathtrace.ko's (kmod/inline_hit.S). */
void pt_inline_hit(void);
void pt_inline_stage(void);

/*
 * Where the copies keep the stack pointer of their innermost call in
 * flight (PT_ADD_INLINE_FRAMES): pathtrace.ko's (kmod/frames.c).
 */
DECLARE_PER_CPU(unsigned long, pt_inline_frame);

/*
 * The copies' activations in flight on each CPU, and whether the count
 * holds every traced one: pathtrace.ko's (kmod/frames.c).
 */
DECLARE_PER_CPU(int, pt_inline_depth);
DECLARE_PER_CPU(bool, pt_inline_depth_known);

/* What the word held as each activation in flight began, by depth: pathtrace.ko's too. */
DECLARE_PER_CPU(unsigned long [PT_INLINE_FRAMES_SAVED], pt_inline_frames_saved);

/*
 * The len bytes of per-CPU counters at off in the copies' counter space
 * (pieces of PT_INLINE_PIECE_BYTES, pathtrace_abi.h), NULL when they are
 * not all inside it and in one piece. pathtrace.ko calls it through
 * symbol_get(PT_INLINE_COUNTERS_SYM).
 */
#define PT_INLINE_COUNTERS_SYM "pt_inline_counters"
typedef void __percpu *(*pt_inline_counters_fn)(unsigned long off, unsigned long len);
void __percpu *pt_inline_counters(unsigned long off, unsigned long len);

#endif
