/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bit reader's and context's operations (regen.h), inline for the
 * engine's and the decoders' hot paths; bitreader.c exports them under
 * their regen_* names.
 */
#ifndef PATHTRACE_REGEN_BITREADER_H
#define PATHTRACE_REGEN_BITREADER_H

#include "regen.h"

/* regen_read_bits */
static inline uint64_t br_read(struct regen_bitreader *br, unsigned int n)
{
	uint64_t w, off, v;

	if (n == 0)
		return 0;
	if (n > 64 || br->pos > br->nbits || br->nbits - br->pos < n) {
		br->eof = 1;
		return 0;
	}
	w = br->pos >> 6;
	off = br->pos & 63;
	v = br->bits[w] >> off;
	if (off + n > 64)
		v |= br->bits[w + 1] << (64 - off);
	if (n < 64)
		v &= (1ull << n) - 1;
	br->pos += n;
	return v;
}

/*
 * The first of a[0..n) (ascending) at or after pos, or UINT64_MAX; *cur is
 * where the last lookup ended. Every a[i] below it is below the position
 * looked up then: when pos is not lower, the search goes on from there (a
 * walk's reads move forward, so nearly always by nothing or one). The
 * answer holds for every position in [~*lo_not, *limit], kept there: a
 * position in that range is answered without a search.
 */
static inline uint64_t br_first_at_or_after(const uint64_t *a, uint32_t n, uint64_t pos,
					    uint32_t *cur, uint64_t *lo_not, uint64_t *limit)
{
	uint32_t lo = *cur, hi = n;

	if (pos >= ~*lo_not && pos <= *limit)
		return *limit;
	if (lo > n || (lo && a[lo - 1] >= pos)) {
		lo = 0;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (a[mid] < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
	} else {
		while (lo < n && a[lo] < pos)
			lo++;
	}
	*cur = lo;
	*lo_not = !lo ? ~0ull : a[lo - 1] == UINT64_MAX ? 0 : ~(a[lo - 1] + 1);
	*limit = lo < n ? a[lo] : UINT64_MAX;
	return *limit;
}

/* regen_seg_limit */
static inline uint64_t br_seg_limit(struct regen_bitreader *br, uint64_t pos)
{
	return br_first_at_or_after(br->seg_starts, br->nseg_starts, pos, &br->seg_cur,
				    &br->seg_lo_not, &br->seg_limit);
}

/* regen_reset_limit */
static inline uint64_t br_reset_limit(struct regen_bitreader *br, uint64_t pos)
{
	return br_first_at_or_after(br->resets, br->nresets, pos, &br->reset_cur,
				    &br->reset_lo_not, &br->reset_limit);
}

/* regen_ctx_set */
static inline void br_ctx_set(struct regen_bitreader *br, uint32_t func, uint32_t row,
			      uint64_t pos)
{
	/*
	 * A segment that starts where the context was set ends it: the event
	 * came first in the segment (the module sets none then) or last in
	 * the one before (the owner switch after it empties it).
	 */
	br->ctx_func = func;
	br->ctx_row = row;
	br->ctx_limit = br_seg_limit(br, pos);
}

/* regen_ctx_row */
static inline uint32_t br_ctx_row(const struct regen_bitreader *br, uint32_t func)
{
	if (br->ctx_row == REGEN_CTX_NONE || br->ctx_func != func || br->pos >= br->ctx_limit)
		return REGEN_CTX_NONE;
	return br->ctx_row;
}

/* regen_ctx_row_of */
static inline uint32_t br_ctx_row_of(const struct regen_func *f, const struct regen_bitreader *br)
{
	const struct regen_ctx_saved *s = f->ctx_saved;

	if (br->ctx_func == f->func_id || !s)
		return br_ctx_row(br, f->func_id);
	return s->walk == br->walk && br->pos < s->limit ? s->row : REGEN_CTX_NONE;
}

static inline uint64_t br_call_hash(const struct regen_func *f, uint32_t func, uint64_t ret)
{
	uint64_t h = (ret ^ (uint64_t)(uintptr_t)f ^ ((uint64_t)func << 32)) * 0x9e3779b97f4a7c15ull;

	return h ^ h >> 29;
}

/*
 * The call vertex of f whose call is direct to the traced function func
 * and returns to ret (an ENTER marker's func and value), or GRAPH_NONE:
 * the first such vertex of f.
 */
static inline uint32_t br_call_vertex(const struct regen_bitreader *br, const struct regen_func *f,
				      uint32_t func, uint64_t ret)
{
	uint64_t i = br_call_hash(f, func, ret) & br->calls_mask;

	for (; br->calls[i].f; i = (i + 1) & br->calls_mask)
		if (br->calls[i].f == f && br->calls[i].ret == ret && br->calls[i].callee == func)
			return br->calls[i].v;
	return GRAPH_NONE;
}

#endif
