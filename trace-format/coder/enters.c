// SPDX-License-Identifier: GPL-2.0
/*
 * enters.c - the stream coder's ENTER codes (pathtrace_abi.h PT_ENTERS*).
 *
 * An ENTER is coded with the bits pending at it, in the BITS_ENTERS record
 * or packed segment that writes them: one bit when it repeats what last
 * followed the same three ENTERs, else its item (a candidate's rank, or
 * caller, function and slot or address) and its advance in the bits. The
 * return address goes only when the reader needs it (the caller is traced)
 * and its slot does not hold it already.
 */
#include "coder_internal.h"

/* Appends the low n bits of v (n <= 32) to the ENTER codes; room is checked. */
static __always_inline void pt_ebits_put(struct pt_coder *c, u64 v, unsigned int n)
{
	unsigned int w = c->nebits / 64, off = c->nebits % 64;

	v &= (1ull << n) - 1;
	c->ebits[w] |= v << off;
	if (off + n > 64)
		c->ebits[w + 1] |= v >> (64 - off);
	c->nebits += n;
}

/* Appends q one bits (any number). */
static void pt_ebits_ones(struct pt_coder *c, u32 q)
{
	for (; q; q -= min(q, 32u))
		pt_ebits_put(c, ~0ull, min(q, 32u));
}

/* Appends the Rice(PT_ENTERS_RICE_K) code of v. */
static void pt_ebits_rice(struct pt_coder *c, u32 v)
{
	pt_ebits_ones(c, v >> PT_ENTERS_RICE_K);
	pt_ebits_put(c, (u64)(v & ((1u << PT_ENTERS_RICE_K) - 1)) << 1,
		     PT_ENTERS_RICE_K + 1);
}

void pt_enters_forget(struct pt_enter_tables *t)
{
	memset(t, 0, sizeof(*t));
}

void pt_segs_forget(struct pt_seg_tables *t)
{
	t->stamp_known = false;
	memset(t->owners, 0, sizeof(t->owners));
}

void pt_segs_learn(struct pt_seg_tables *t, u64 owner, u64 stamp)
{
	t->stamp = stamp;
	t->stamp_known = true;
	PT_TO_FRONT(t->owners, PT_SEG_OWNERS, owner);
}

/* The forgotten list linked: slots 0..14 in order, every one function 0. */
void pt_recent_link(struct pt_enter_tables *t)
{
	unsigned int i;

	for (i = 0; i <= PT_RECENT_HEAD; i++) {
		t->recent_next[i] = (u8)(i == PT_RECENT_HEAD ? 0 : i + 1);
		t->recent_prev[i] = (u8)(i ? i - 1 : PT_RECENT_HEAD);
	}
	t->recent_linked = true;
}

/*
 * f's slot among the recent functions (linked), or when f is not there
 * the last one's, which f takes (coder.h pt_recent_learn).
 */
unsigned int pt_recent_find(const struct pt_enter_tables *t, u32 f)
{
	unsigned int i;

	for (i = 0; i < PT_ENTERS_RECENT; i++)
		if (t->recent[i] == f)
			return i;
	return t->recent_prev[PT_RECENT_HEAD];
}

/* f's rank among the recent functions (0: the most recent), PT_ENTERS_RECENT when it is not there. */
unsigned int pt_recent_rank(const struct pt_enter_tables *t, u32 f)
{
	unsigned int i, r = 0;

	if (!t->recent_linked || !f)
		return PT_ENTERS_RECENT;
	for (i = t->recent_next[PT_RECENT_HEAD]; i != PT_RECENT_HEAD; i = t->recent_next[i], r++)
		if (t->recent[i] == f)
			return r;
	return PT_ENTERS_RECENT;
}

/* The function of rank r (< PT_ENTERS_RECENT) among the recent ones, 0 where none is. */
u32 pt_recent_at(const struct pt_enter_tables *t, unsigned int r)
{
	unsigned int i;

	if (!t->recent_linked)
		return 0;
	for (i = t->recent_next[PT_RECENT_HEAD]; r; r--)
		i = t->recent_next[i];
	return t->recent[i];
}

/* How an ENTER names its caller. */
enum pt_caller {
	PT_CALLER_ADDR = 0,	/* traced, the address given (ret_lo) */
	PT_CALLER_UNTRACED = 2,	/* untraced caller */
	PT_CALLER_SLOT = 4,	/* traced, the address in its slot */
};

/* Appends the code of an item that no candidate names: caller, function, slot or address. */
static void pt_enter_escape(struct pt_coder *c, u32 id, unsigned int recent,
			    u32 ret_lo, u32 slot, enum pt_caller kind)
{
	/* 0, then PT_ENTERS_CANDS zeros; the caller */
	pt_ebits_put(c, 0, PT_ENTERS_CANDS + 1);
	pt_ebits_put(c, kind == PT_CALLER_UNTRACED ? 1 : kind == PT_CALLER_SLOT ? 2 : 0,
		     kind == PT_CALLER_UNTRACED ? 1 : 2);
	pt_ebits_put(c, recent, 4);
	if (recent == PT_ENTERS_RECENT) {
		unsigned int k = fls(id) - 1;

		pt_ebits_put(c, 1ull << k, k + 1);
		pt_ebits_put(c, id, k);
	}
	if (kind == PT_CALLER_SLOT)
		pt_ebits_put(c, slot, 6);
	else if (kind == PT_CALLER_ADDR)
		pt_ebits_put(c, ret_lo, 32);
}

/* Appends one ENTER's code at bit position pending. */
static void pt_add_enter(struct pt_coder *c, u32 func_id, u32 pending,
			 u32 ret_lo, u32 slot, enum pt_caller kind)
{
	struct pt_enter_tables *t = &c->enters;
	u32 id = func_id + 1, adv = pending - c->epos;
	u32 x = pt_enters_x(t);
	const u16 *advs = t->adv[pt_enters_y(t, id)];
	const u32 *cand = t->cand[x];
	bool named = kind != PT_CALLER_ADDR;	/* a candidate may name it */
	unsigned int r;
	u32 item;

	c->epos = pending;
	if (kind == PT_CALLER_ADDR)
		slot = PT_ENTER_SLOT(ret_lo);
	item = PT_ENTERS_ITEM(id, kind != PT_CALLER_UNTRACED,
			      kind == PT_CALLER_UNTRACED ? 0 : slot);
	/* an item names its address by slot: only while the slot holds it */
	for (r = 0; named && r < PT_ENTERS_CANDS && cand[r] != item; r++)
		;
	if (named && r == 0 && t->cand_adv[x] == adv + 1) {
		pt_ebits_put(c, 1, 1);
	} else {
		if (named && r < PT_ENTERS_CANDS)
			pt_ebits_put(c, 1ull << (r + 1), r + 2);
		else
			pt_enter_escape(c, id, pt_recent_rank(t, id), ret_lo, slot, kind);
		/* the advance by its rank among f's after (prev, last) */
		for (r = 0; r < PT_ENTERS_ADVS && advs[r] != adv + 1; r++)
			;
		pt_ebits_put(c, r < PT_ENTERS_ADVS ? 1ull << r : 0,
			     r < PT_ENTERS_ADVS ? r + 1 : PT_ENTERS_ADVS);
		if (r == PT_ENTERS_ADVS)
			pt_ebits_rice(c, adv);
	}
	pt_enters_learn(t, item, adv + 1);
}

/*
 * An ENTER written: the first of a segment and every PT_CTX_SWAP_ENTERS-th
 * after it forget the rows' last codes (where the reader may resume after
 * a gap).
 */
static void pt_swap_enter(struct pt_coder *c)
{
	if (c->swap_enters++ % PT_CTX_SWAP_ENTERS == 0) {
		c->swap_gen++;
		c->counts.enter_resets += c->swap_enters > 1;
	}
}

void pt_coder_enter(struct pt_coder *c, const struct pt_coder_func *f,
		    struct pt_coder_func_cpu *fc, u32 ret_lo)
{
	u32 slot = PT_ENTER_SLOT(ret_lo), pending;

	if (f->func_id < PT_ENTERS_FUNC_MAX) {
		/*
		 * Room for the code first (the bits stay pending: positions
		 * hold). A refused flush empties the slots and predictions, as
		 * the reader does at the LOSS before this code: the kind (an
		 * emptied slot no longer holds the address) and the contexts
		 * pt_add_enter codes against are chosen after it.
		 */
		pending = pt_coder_pending(c);
		if (c->nebits + PT_CODER_ENTER_CODE_MAX > c->ebits_words * 64)
			pt_coder_flush_enters(c, fc);
		if (!ret_lo) {
			pt_add_enter(c, f->func_id, pending, 0, 0, PT_CALLER_UNTRACED);
		} else if (c->enters.rets[slot] == ret_lo) {
			pt_add_enter(c, f->func_id, pending, 0, slot, PT_CALLER_SLOT);
		} else {
			pt_add_enter(c, f->func_id, pending, ret_lo, 0, PT_CALLER_ADDR);
			c->enters.rets[slot] = ret_lo;
		}
		pt_swap_enter(c);
		return;
	}
	/* in records.c: the record's body is on its stack, not on this path's */
	if (pt_coder_write_enter_at(c, fc, f->func_id, ret_lo)) {
		if (ret_lo)
			c->enters.rets[slot] = ret_lo;
		pt_swap_enter(c);
	}
}
