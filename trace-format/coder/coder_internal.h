/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coder_internal.h - what the stream coder's files share (coder.h is the
 * interface): records.c writes records and frames segments, enters.c codes
 * ENTERs, words.c codes bits, witness words and path numbers.
 */
#ifndef PATHTRACE_CODER_INTERNAL_H
#define PATHTRACE_CODER_INTERNAL_H

#include "coder.h"

/* records.c */
bool pt_coder_write_parts(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
		     u32 arg, const void *body, unsigned int body_len,
		     const void *body2, unsigned int body2_len);
void pt_coder_flush_bits(struct pt_coder *c, struct pt_coder_func_cpu *fc);
void pt_coder_flush_enters(struct pt_coder *c, struct pt_coder_func_cpu *fc);
bool pt_coder_write_enter_at(struct pt_coder *c, struct pt_coder_func_cpu *fc, u32 func_id,
			     u32 ret_lo);

/* words.c */
void pt_coder_swap_forget(struct pt_coder *c);

/* Bits of the open segment emitted but not yet written. */
static inline u32 pt_coder_pending(const struct pt_coder *c)
{
	return c->nwords * 64 + c->nbits;
}

#endif
