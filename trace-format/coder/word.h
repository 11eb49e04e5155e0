/* SPDX-License-Identifier: GPL-2.0 */
/*
 * word.h - the stream coder's witness word, inline (coder.h pt_coder_word):
 * every hit that writes a word runs it, and a call with its saves is a
 * cost each pays. Included by words.c and by the module's loop over a
 * stage's entries (kmod/handlers.c); the rare parts (a full word's spill,
 * a word looked for among its row's) stay in words.c.
 */
#ifndef PATHTRACE_CODER_WORD_H
#define PATHTRACE_CODER_WORD_H

#include "coder.h"

/* words.c */
void pt_coder_bits_spill(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v,
			 unsigned int n, unsigned int room);
const struct pt_ctx_word *pt_ctx_word(const struct pt_coder_func *f, u32 row, u32 code);

static inline const struct pt_ctx_word *pt_coder_ctx_word_at(const struct pt_coder_func *f, u32 i)
{
	return (const void *)((const u8 *)f->ctx_words + (size_t)i * f->ctx_word_size);
}

/* Inlined into its callers: most bits go into a word with room. */
static inline void pt_bits(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v, unsigned int n)
{
	unsigned int room;

	if (!n)
		return;
	c->counts.bits += n;
	if (n < 64)
		v &= (1ull << n) - 1;
	room = 64 - c->nbits;		/* 1..64: nbits never stays at 64 */
	c->words[c->nwords] |= v << c->nbits;
	if (n < room)
		c->nbits += n;
	else
		pt_coder_bits_spill(c, fc, v, n, room);
}

/* pt_bits of a context word: 1 <= n <= PT_CTX_WORD_MAX_BITS, v below 2^n (kmod/plan.c checks). */
static inline void pt_bits_word(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v,
				unsigned int n)
{
	unsigned int room = 64 - c->nbits;

	c->counts.bits += n;
	c->words[c->nwords] |= v << c->nbits;
	if (n < room)
		c->nbits += n;
	else
		pt_coder_bits_spill(c, fc, v, n, room);
}

/* PT_PLAN_CTX_RESTORE: the CPU's context is f's too, until it is forgotten. */
static inline void pt_ctx_save(struct pt_coder *c, const struct pt_coder_func *f,
			       struct pt_coder_func_cpu *fc)
{
	if (!(f->flags & PT_PLAN_CTX_RESTORE))
		return;
	fc->ctx_row = c->ctx_row;
	fc->ctx_gen = c->ctx_gen;
}

/*
 * The row f's next word is written in: the CPU's context when it is f's,
 * else (PT_PLAN_CTX_RESTORE) f's own, set before its traced callees ran.
 */
static inline u32 pt_ctx_row(struct pt_coder *c, const struct pt_coder_func *f,
			     const struct pt_coder_func_cpu *fc)
{
	if (c->ctx_func == f->func_id)
		return c->ctx_row;
	if (!(f->flags & PT_PLAN_CTX_RESTORE) || fc->ctx_gen != c->ctx_gen)
		return PT_CTX_NONE;
	c->counts.ctx_restored += fc->ctx_row != PT_CTX_NONE;
	return fc->ctx_row;
}

/*
 * f's word for code in context row, or NULL. Adapting words
 * (PT_PLAN_CTX_SWAP): the word of the code it takes in row
 * (pathtrace_abi.h): the row's last code and its top trade words, and the
 * row remembers code. The top code's word is found without a search.
 */
static inline const struct pt_ctx_word *pt_ctx_find(struct pt_coder *c,
						    const struct pt_coder_func *f,
						    struct pt_coder_func_cpu *fc, u32 row, u32 code)
{
	struct pt_ctx_last *l;
	u32 top, use = code;

	if (!fc->ctx_last || !f->ctx_top || row >= f->nr_ctx_rows)
		return pt_ctx_word(f, row, code);
	l = fc->ctx_last + row;
	top = f->ctx_top[row];
	if (l->gen == c->swap_gen && l->code != top) {
		if (code == l->code)
			use = top;
		else if (code == top)
			use = l->code;
	}
	l->gen = c->swap_gen;
	l->code = code;
	c->counts.ctx_swapped += use != code;
	/* top 0: the row has no words (codes are never 0) */
	if (use == top && top && f->ctx_top_word)
		return pt_coder_ctx_word_at(f, f->ctx_top_word[row]);
	return pt_ctx_word(f, row, use);
}

/*
 * pt_coder_word (coder.h). The context moves to the code's next row
 * before the bits go out, so a write they cause that is refused leaves
 * none.
 */
static __always_inline void pt_coder_word_inline(struct pt_coder *c,
						  const struct pt_coder_func *f,
						  struct pt_coder_func_cpu *fc, u32 code,
						  u32 value, unsigned int nbits)
{
	const struct pt_ctx_word *w = NULL;

	if (code) {
		u32 row = pt_ctx_row(c, f, fc);

		if (row != PT_CTX_NONE)
			w = pt_ctx_find(c, f, fc, row, code);
		c->ctx_func = f->func_id;
		c->ctx_row = f->ctx_next[code];
		pt_ctx_save(c, f, fc);
	}
	if (w) {
		c->counts.ctx_words++;
		pt_bits_word(c, fc, w->value, w->nbits);
	} else {
		pt_bits(c, fc, value, nbits);
	}
}

#endif
