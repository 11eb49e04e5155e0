// SPDX-License-Identifier: GPL-2.0
/*
 * decode.c - ENTER codes and segment heads read back (decode.h), the
 * inverse of enters.c and records.c.
 */
#include "decode.h"

/*
 * The bits from pos on, the first the lowest: 57 of them at least, those
 * past c->n whatever follows in memory. Only where the 8 bytes at pos / 8
 * may be read (pt_br_room).
 */
static inline u64 pt_br_peek(const struct pt_bitreader *c, u32 pos)
{
	u64 w;

	memcpy(&w, c->p + pos / 8, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w >> (pos % 8);
}

/* Whether the 8 bytes at pos / 8 may be read: pt_br_peek may read there. */
static inline bool pt_br_room(const struct pt_bitreader *c, u32 pos)
{
	return pos / 8 + 8 <= c->avail;
}

void pt_br_init(struct pt_bitreader *c, const u8 *p, u32 n, u32 pos, u32 avail)
{
	/* pos < fast: pt_br_room, and 32 bits from pos lie within n */
	u64 room = avail >= 8 ? ((u64)avail - 7) * 8 : 0, within = n >= 32 ? (u64)n - 31 : 0;

	c->p = p;
	c->n = n;
	c->pos = pos;
	c->avail = avail;
	c->fast = (u32)(room < within ? room : within);
	c->bad = false;
}

/* pt_br_bits, inline for the codes below */
static inline u32 pt_br_take(struct pt_bitreader *c, unsigned int n)
{
	u32 pos = c->pos, first, i;
	u64 v = 0;

	if (likely(pos < c->fast) || (pt_br_room(c, pos) && (u64)pos + n <= c->n)) {
		c->pos = pos + n;
		return (u32)(pt_br_peek(c, pos) & ((1ull << n) - 1));
	}
	if (!n)
		return 0;
	if (pos >= c->n || n > c->n - pos) {
		/* as read a bit at a time: up to the end, then bad */
		if (pos < c->n)
			c->pos = c->n;
		c->bad = true;
		return 0;
	}
	/* n <= 32 bits at bit pos % 8: at most 5 bytes, all within the n bits */
	first = pos / 8;
	for (i = (pos + n - 1) / 8; i > first; i--)
		v = v << 8 | c->p[i];
	v = (v << 8 | c->p[first]) >> (pos % 8);
	c->pos = pos + n;
	return (u32)(v & ((1ull << n) - 1));
}

/*
 * The zeros before the next one, at most max (< 57) of them, read with the
 * one that ends them (none when there are max): as that many one-bit
 * reads, up to the end and then bad.
 */
static inline u32 pt_br_zeros(struct pt_bitreader *c, unsigned int max)
{
	u32 r, k;

	if (likely(c->pos < c->fast) || pt_br_room(c, c->pos)) {
		r = (u32)__builtin_ctzll(pt_br_peek(c, c->pos) | 1ull << max);
		k = r + (r < max);
		/* the bits that decided it are the code's */
		if ((u64)c->pos + k <= c->n) {
			c->pos += k;
			return r;
		}
	}
	for (r = 0; r < max && !pt_br_take(c, 1) && !c->bad; r++)
		;
	return r;
}

u32 pt_br_bits(struct pt_bitreader *c, unsigned int n)
{
	return pt_br_take(c, n);
}

u32 pt_br_expgolomb(struct pt_bitreader *c, unsigned int k, u32 max)
{
	unsigned int top = pt_br_zeros(c, 20);
	u64 q, v;

	if (top >= 20 || c->bad) {
		c->bad = true;
		return 0;
	}
	q = (1ull << top | pt_br_take(c, top)) - 1;
	v = q << k | pt_br_take(c, k);
	if (v > max)
		c->bad = true;
	return (u32)v;
}

/* The Elias gamma code of a func_id + 1: that value (bad past 2^31). */
static u32 pt_br_gamma(struct pt_bitreader *c)
{
	unsigned int k = pt_br_zeros(c, 31);

	if (k >= 31)
		c->bad = true;
	return 1u << k | pt_br_take(c, k);
}

/* The Rice(PT_ENTERS_RICE_K) code of an advance, + 1. */
static u32 pt_br_rice_adv(struct pt_bitreader *c)
{
	u32 q = 0;

	while (pt_br_take(c, 1) && !c->bad && q <= 0xffffu >> PT_ENTERS_RICE_K)
		q++;
	return (q << PT_ENTERS_RICE_K | pt_br_take(c, PT_ENTERS_RICE_K)) + 1;
}

/*
 * A new item (after the escape): caller, function, slot or address. Returns
 * it, 0 when it names an empty rank (c->bad when cut off).
 */
static u32 pt_read_item(struct pt_bitreader *c, struct pt_enter_tables *t,
			struct pt_enter_read *e)
{
	u32 r, f, slot = 0, at = c->pos, traced, kind;

	traced = !pt_br_take(c, 1);
	kind = traced ? (pt_br_take(c, 1) ? 4 : 0) : 2;
	e->kind_bits += c->pos - at;
	at = c->pos;
	r = pt_br_take(c, 4);
	f = r < PT_ENTERS_RECENT ? pt_recent_at(t, r) : pt_br_gamma(c);
	e->func_bits = c->pos - at;
	at = c->pos;
	if (f >= 1u << 20)
		c->bad = true;
	if (kind == 4) {
		slot = pt_br_take(c, 6);
	} else if (kind == 0) {
		e->ret_lo = pt_br_take(c, 32);
		slot = PT_ENTER_SLOT(e->ret_lo);
		if (e->ret_lo && !c->bad)
			t->rets[slot] = e->ret_lo;
	}
	e->ret_bits = c->pos - at;
	return f ? PT_ENTERS_ITEM(f, traced, slot) : 0;
}

/* An advance (+ 1): by its rank among y's, or Rice. */
static u32 pt_read_adv(struct pt_bitreader *c, const u16 *advs)
{
	unsigned int r = pt_br_zeros(c, PT_ENTERS_ADVS);

	return r < PT_ENTERS_ADVS ? advs[r] : pt_br_rice_adv(c);
}

bool pt_decode_enter(struct pt_bitreader *c, struct pt_enter_tables *t,
		     struct pt_enter_read *e)
{
	u32 x = pt_enters_x(t);
	const u32 *cand = t->cand[x];
	u32 item, adv, r, at = c->pos;

	e->ret_lo = 0;
	e->kind_bits = 0;
	e->func_bits = 0;
	e->ret_bits = 0;
	e->adv_bits = 0;
	if (pt_br_take(c, 1)) {
		item = cand[0];
		adv = t->cand_adv[x];
		e->kind_bits = 1;
	} else {
		r = pt_br_zeros(c, PT_ENTERS_CANDS);
		e->kind_bits = c->pos - at;
		item = r < PT_ENTERS_CANDS ? cand[r] : pt_read_item(c, t, e);
		if (c->bad || !item)
			return false;
		at = c->pos;
		adv = pt_read_adv(c, t->adv[pt_enters_y(t, PT_ENTERS_ITEM_FUNC(item))]);
		e->adv_bits = c->pos - at;
	}
	/* cut off, an empty candidate or advance, or one past the positions there are */
	if (c->bad || !item || !adv || adv > 0xffff || e->pos + adv - 1 > 0xffff)
		return false;
	if (PT_ENTERS_ITEM_TRACED(item) && !e->ret_lo)
		e->ret_lo = t->rets[PT_ENTERS_ITEM_SLOT(item)];
	e->pos += adv - 1;
	e->func_id = PT_ENTERS_ITEM_FUNC(item) - 1;
	pt_enters_learn(t, item, adv);
	return true;
}

bool pt_decode_seg_head(struct pt_bitreader *c, const struct pt_seg_tables *t,
			struct pt_seg_head *h)
{
	u32 r = pt_br_take(c, 2), at = c->pos - 2;

	if (r < 3) {
		h->owner = t->owners[r + 1];
		if (!h->owner)
			return false;
	} else {
		u32 code = pt_br_take(c, 32);	/* PT_SEG_OWNER reads it twice */

		h->owner = PT_SEG_OWNER(code);
	}
	h->owner_bits = c->pos - at;
	at = c->pos;
	h->delta = pt_br_expgolomb(c, PT_SEG_DELTA_K, U32_MAX);
	h->delta_bits = c->pos - at;
	return !c->bad;
}
