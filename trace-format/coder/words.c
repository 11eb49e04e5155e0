// SPDX-License-Identifier: GPL-2.0
/*
 * words.c - the stream coder's bits: witness words by context (and the
 * words that adapt within a segment), path numbers coded by start, and the
 * accumulator they go into (docs/runtime.md "Witness words by context",
 * "Path numbers coded by start").
 */
#include "coder_internal.h"
#include "word.h"

static const struct pt_path_code *pt_path_code_at(const struct pt_coder_func *f, u32 i)
{
	return (const void *)((const u8 *)f->path_codes + (size_t)i * f->path_code_size);
}

static const struct pt_path_range *pt_path_range_at(const struct pt_coder_func *f, u32 i)
{
	return (const void *)((const u8 *)f->path_ranges + (size_t)i * f->path_range_size);
}

/* pt_coder_bits once the word is full: keep it, and write them all when none is left. */
void pt_coder_bits_spill(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v,
			 unsigned int n, unsigned int room)
{
	u64 *w;

	c->nwords++;
	c->nbits = 0;
	if (c->nwords == c->bits_words) {
		pt_coder_flush_bits(c, fc);
		w = &c->words[0];
	} else {
		w = &c->words[c->nwords];
	}
	if (n > room) {
		*w = v >> room;		/* room < n <= 64, so room <= 63 */
		c->nbits = n - room;
	}
}

void pt_coder_bits(struct pt_coder *c, struct pt_coder_func_cpu *fc, u64 v, unsigned int n)
{
	pt_bits(c, fc, v, n);
}

/* Adapting words: every row's last code is forgotten (a new generation). */
void pt_coder_swap_forget(struct pt_coder *c)
{
	c->swap_gen++;
	c->swap_enters = 0;
}

/*
 * The context of f's first word is its entry's row (ctx_next[0]), unless
 * nothing of the segment precedes the ENTER: at one bit position the
 * reader cannot tell an event that ended the previous segment from one
 * that began this one, so it takes no context there, and neither does the
 * coder. Called after the ENTER's code is taken (pt_coder_enter): a write
 * refused there empties the context, and the reader reads the LOSS before
 * this ENTER.
 */
void pt_coder_ctx_enter(struct pt_coder *c, const struct pt_coder_func *f,
			struct pt_coder_func_cpu *fc)
{
	c->ctx_func = f->func_id;
	c->ctx_row = f->nr_ctx_codes && (c->seg_bits || pt_coder_pending(c)) ?
		     f->ctx_next[0] : PT_CTX_NONE;
	pt_ctx_save(c, f, fc);
}

/*
 * f's word for code in context row, or NULL: a binary search of the row's
 * words by code, or without f->ctx_first of all of them by (row, code).
 */
const struct pt_ctx_word *pt_ctx_word(const struct pt_coder_func *f, u32 row, u32 code)
{
	u32 lo = 0, hi = f->nr_ctx_words;

	if (f->ctx_first) {
		if (row >= f->nr_ctx_rows)
			return NULL;
		lo = f->ctx_first[row];
		hi = f->ctx_first[row + 1];
		while (lo < hi) {
			u32 mid = lo + (hi - lo) / 2;
			const struct pt_ctx_word *w = pt_coder_ctx_word_at(f, mid);

			if (w->code == code)
				return w;
			if (w->code < code)
				lo = mid + 1;
			else
				hi = mid;
		}
		return NULL;
	}
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct pt_ctx_word *w = pt_coder_ctx_word_at(f, mid);

		if (w->row == row && w->code == code)
			return w;
		if (w->row < row || (w->row == row && w->code < code))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void pt_coder_word(struct pt_coder *c, const struct pt_coder_func *f,
		   struct pt_coder_func_cpu *fc, u32 code, u32 value, unsigned int nbits)
{
	pt_coder_word_inline(c, f, fc, code, value, nbits);
}

/* f's listed code of path number id, or NULL (binary search: sorted by path). */
static const struct pt_path_code *pt_path_code(const struct pt_coder_func *f, u64 id)
{
	u32 lo = 0, hi = f->nr_path_codes;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct pt_path_code *p = pt_path_code_at(f, mid);

		if (p->path == id)
			return p;
		if (p->path < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The range holding path number id: the last whose lo is at or below it (ranges[0].lo is 0). */
static const struct pt_path_range *pt_path_range(const struct pt_coder_func *f, u64 id)
{
	u32 lo = 0, hi = f->nr_path_ranges;

	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (pt_path_range_at(f, mid)->lo <= id)
			lo = mid;
		else
			hi = mid;
	}
	return pt_path_range_at(f, lo);
}

/*
 * With path codes the number's word, or its range's escape and the number,
 * unless no bit of the open segment precedes it: then the number may be
 * what a PARTIAL sum left of a path that began elsewhere, whose word nobody
 * knows, and the reader, seeing a segment start there, reads n bits.
 */
void pt_coder_path_emit(struct pt_coder *c, const struct pt_coder_func *f,
			struct pt_coder_func_cpu *fc, u64 v, unsigned int n)
{
	u64 id = c->path + v;
	const struct pt_path_code *p;
	const struct pt_path_range *r;

	c->path = 0;
	if (n < 64)
		id &= (1ull << n) - 1;
	if (!f->nr_path_ranges || !(c->seg_bits || pt_coder_pending(c))) {
		pt_bits(c, fc, id, n);
		return;
	}
	p = pt_path_code(f, id);
	if (p) {
		c->counts.path_words++;
		pt_bits(c, fc, p->value, p->nbits);
		return;
	}
	r = pt_path_range(f, id);
	c->counts.path_escapes++;
	pt_bits(c, fc, r->esc_value, r->esc_nbits);
	pt_bits(c, fc, id, n);
}

u32 pt_coder_ctx_rows(const struct pt_coder_func *f)
{
	return f->nr_ctx_words ? pt_coder_ctx_word_at(f, f->nr_ctx_words - 1)->row + 1 : 0;
}

void pt_coder_ctx_tops(const struct pt_coder_func *f, u32 *top, u32 *top_word)
{
	const struct pt_ctx_word *w, *best = NULL;
	u32 i, best_i = 0;

	for (i = 0; i < f->nr_ctx_words; i++) {
		w = pt_coder_ctx_word_at(f, i);
		if (!best || best->row != w->row || w->nbits < best->nbits ||
		    (w->nbits == best->nbits && w->value < best->value)) {
			best = w;
			best_i = i;
		}
		top[w->row] = best->code;
		if (top_word)
			top_word[w->row] = best_i;
	}
}

void pt_coder_ctx_first(const struct pt_coder_func *f, u32 *first)
{
	u32 i, r = 0;

	for (i = 0; i < f->nr_ctx_words; i++)
		for (; r <= pt_coder_ctx_word_at(f, i)->row; r++)
			first[r] = i;
	first[r] = f->nr_ctx_words;
}
