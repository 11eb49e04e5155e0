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
static void pt_ebits_put(struct pt_coder *c, u64 v, unsigned int n)
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

/* Appends the Rice(PT_ENTERS_RICE_K2) code of v. */
static void pt_ebits_rice(struct pt_coder *c, u32 v)
{
	pt_ebits_ones(c, v >> PT_ENTERS_RICE_K2);
	pt_ebits_put(c, (u64)(v & ((1u << PT_ENTERS_RICE_K2) - 1)) << 1,
		     PT_ENTERS_RICE_K2 + 1);
}

/* f (func_id + 1) to the front of the recent functions; returns its rank before. */
static unsigned int pt_recent_rank(struct pt_coder *c, u32 f)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS_RECENT - 1 && c->recent[r] != f; r++)
		;
	if (c->recent[r] != f)
		r = PT_ENTERS_RECENT;
	memmove(&c->recent[1], &c->recent[0],
		min(r, PT_ENTERS_RECENT - 1u) * sizeof(c->recent[0]));
	c->recent[0] = f;
	return r;
}

/* An advance + 1 to the front of f's (the others keep their order). */
static void pt_adv_front(u16 *a, u16 v)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS4_ADVS - 1 && a[r] != v; r++)
		;
	memmove(&a[1], &a[0], r * sizeof(a[0]));
	a[0] = v;
}

/* item to the front of candidates cand (the others keep their order). */
static void pt_cand_front(u32 *cand, u32 item)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS3_CANDS - 1 && cand[r] != item; r++)
		;
	memmove(&cand[1], &cand[0], r * sizeof(cand[0]));
	cand[0] = item;
}

/* How an ENTER names its caller. */
enum pt_enter_kind {
	PT_ENTER_ADDR = 0,	/* traced, the address given (ret_lo) */
	PT_ENTER_UNTRACED = 2,	/* untraced caller */
	PT_ENTER_SLOT = 4,	/* traced, the address in its slot */
};

/* Appends the code of an item that no candidate names: caller, function, slot or address. */
static void pt_enter_escape(struct pt_coder *c, u32 id, unsigned int recent,
			    u32 ret_lo, u32 slot, enum pt_enter_kind kind)
{
	/* 0, then PT_ENTERS3_CANDS zeros; the caller */
	pt_ebits_put(c, 0, PT_ENTERS3_CANDS + 1);
	pt_ebits_put(c, kind == PT_ENTER_UNTRACED ? 1 : kind == PT_ENTER_SLOT ? 2 : 0,
		     kind == PT_ENTER_UNTRACED ? 1 : 2);
	pt_ebits_put(c, recent, 4);
	if (recent == PT_ENTERS_RECENT) {
		unsigned int k = fls(id) - 1;

		pt_ebits_put(c, 1ull << k, k + 1);
		pt_ebits_put(c, id, k);
	}
	if (kind == PT_ENTER_SLOT)
		pt_ebits_put(c, slot, 6);
	else if (kind == PT_ENTER_ADDR)
		pt_ebits_put(c, ret_lo, 32);
}

/* Appends one ENTER's code at bit position pending. */
static void pt_add_enter(struct pt_coder *c, u32 func_id, u32 pending,
			 u32 ret_lo, u32 slot, enum pt_enter_kind kind)
{
	u32 id = func_id + 1, adv = pending - c->epos;
	u32 x = PT_ENTERS3_CTX(c->pprev_func, c->prev_func, c->last_func);
	u16 *advs = c->adv[PT_ENTERS3_CTX(c->prev_func, c->last_func, id)];
	u32 *cand = c->cand[x], item;
	unsigned int r, recent = pt_recent_rank(c, id);
	bool named = kind != PT_ENTER_ADDR;	/* a candidate may name it */

	c->epos = pending;
	if (kind == PT_ENTER_ADDR)
		slot = PT_ENTER_S_SLOT(ret_lo);
	item = PT_ENTERS3_ITEM(id, kind != PT_ENTER_UNTRACED,
			       kind == PT_ENTER_UNTRACED ? 0 : slot);
	/* an item names its address by slot: only while the slot holds it */
	for (r = 0; named && r < PT_ENTERS3_CANDS && cand[r] != item; r++)
		;
	if (named && r == 0 && c->cand_adv[x] == adv + 1) {
		pt_ebits_put(c, 1, 1);
	} else {
		if (named && r < PT_ENTERS3_CANDS)
			pt_ebits_put(c, 1ull << (r + 1), r + 2);
		else
			pt_enter_escape(c, id, recent, ret_lo, slot, kind);
		/* the advance by its rank among f's after (prev, last) */
		for (r = 0; r < PT_ENTERS4_ADVS && advs[r] != adv + 1; r++)
			;
		pt_ebits_put(c, r < PT_ENTERS4_ADVS ? 1ull << r : 0,
			     r < PT_ENTERS4_ADVS ? r + 1 : PT_ENTERS4_ADVS);
		if (r == PT_ENTERS4_ADVS)
			pt_ebits_rice(c, adv);
	}
	pt_cand_front(cand, item);
	c->cand_adv[x] = adv + 1;
	pt_adv_front(advs, adv + 1);
	c->pprev_func = c->prev_func;
	c->prev_func = c->last_func;
	c->last_func = id;
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

void pt_coder_forget_enters(struct pt_coder *c)
{
	memset(c->rets, 0, sizeof(c->rets));
	memset(c->recent, 0, sizeof(c->recent));
	memset(c->cand, 0, sizeof(c->cand));
	memset(c->cand_adv, 0, sizeof(c->cand_adv));
	memset(c->adv, 0, sizeof(c->adv));
	c->last_func = 0;
	c->prev_func = 0;
	c->pprev_func = 0;
}

void pt_coder_enter(struct pt_coder *c, const struct pt_coder_func *f,
		    struct pt_coder_func_cpu *fc, u32 ret_lo)
{
	struct pt_rec_enter_at e = { .ret_lo = ret_lo, .pending = pt_coder_pending(c) };
	u32 slot = PT_ENTER_S_SLOT(ret_lo);

	if (f->func_id < PT_CODER_ENTERS_FUNC_MAX) {
		/*
		 * Room for the code first (the bits stay pending: positions
		 * hold). A refused flush empties the slots and predictions, as
		 * the reader does at the LOSS before this code: the kind (an
		 * emptied slot no longer holds the address) and the contexts
		 * pt_add_enter codes against are chosen after it.
		 */
		if (c->nebits + PT_CODER_ENTER_CODE_MAX > c->ebits_words * 64)
			pt_coder_flush_enters(c, fc);
		if (!ret_lo) {
			pt_add_enter(c, f->func_id, e.pending, 0, 0, PT_ENTER_UNTRACED);
		} else if (c->rets[slot] == ret_lo) {
			pt_add_enter(c, f->func_id, e.pending, 0, slot, PT_ENTER_SLOT);
		} else {
			pt_add_enter(c, f->func_id, e.pending, ret_lo, 0, PT_ENTER_ADDR);
			c->rets[slot] = ret_lo;
		}
		pt_swap_enter(c);
		return;
	}
	pt_coder_flush_enters(c, fc);
	if (pt_coder_write(c, fc, PT_REC_ENTER_AT, f->func_id, &e, sizeof(e))) {
		if (ret_lo)
			c->rets[slot] = ret_lo;
		pt_swap_enter(c);
	}
}
