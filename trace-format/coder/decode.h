/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decode.h - the stream coder's inverse: ENTER codes and packed segment
 * heads read back with the same tables the coder keeps (coder.h). The
 * reader (userspace/lib/tracefile/pages.c) takes records apart and calls
 * these for the coded parts; the module never reads.
 */
#ifndef PATHTRACE_CODER_DECODE_H
#define PATHTRACE_CODER_DECODE_H

#include "coder.h"

/*
 * LSB-first reading of n bits at p (pt_br_init). avail bytes at p may be
 * read: at least the n bits' (n + 7) / 8, and where more follow them in
 * memory, codes are read 8 bytes at a time up to the n bits' end. A read
 * past n is cut off either way.
 */
struct pt_bitreader {
	const u8 *p;
	u32 n, pos;
	u32 avail;
	u32 fast;		/* below it, a read of 32 bits at most loads 8 bytes */
	bool bad;		/* read past n, or a code out of range */
};

/* c reads the n bits at p from bit pos on; avail bytes at p may be read. */
void pt_br_init(struct pt_bitreader *c, const u8 *p, u32 n, u32 pos, u32 avail);

/* The next n (<= 32) bits; past the end: 0, and bad is set. */
u32 pt_br_bits(struct pt_bitreader *c, unsigned int n);

/* An Exp-Golomb code of order k of at most max; bad when larger or cut off. */
u32 pt_br_expgolomb(struct pt_bitreader *c, unsigned int k, u32 max);

/* One ENTER read from its code, and the bits each part took (statistics). */
struct pt_enter_read {
	u32 func_id;
	u32 ret_lo;		/* 0: an untraced caller or an empty slot */
	u32 pos;		/* its position: the caller sets 0 at a record's first */
	u32 kind_bits, func_bits, ret_bits, adv_bits;
};

/*
 * Reads the next ENTER code at c into e, the tables learning it as the
 * coder's did. Returns false when the code is cut off or names an empty
 * candidate, rank or advance (the record is corrupt).
 */
bool pt_decode_enter(struct pt_bitreader *c, struct pt_enter_tables *t,
		     struct pt_enter_read *e);

/* A packed segment's head, and the bits each part took (statistics). */
struct pt_seg_head {
	u64 owner;
	u64 delta;		/* its stamp after the previous segment's */
	u32 owner_bits, delta_bits;
};

/*
 * Reads a packed segment's head: its owner (by rank among t's recent owners,
 * or in full) and stamp delta. Returns false when it names an owner t has
 * not got or is cut off.
 */
bool pt_decode_seg_head(struct pt_bitreader *c, const struct pt_seg_tables *t,
			struct pt_seg_head *h);

#endif
