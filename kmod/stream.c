// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - per-CPU stream state and the records it writes.
 *
 * Each CPU keeps {last owner, bit accumulator, ENTER codes with the return
 * address slots and predictions they are coded against, path register,
 * drops} and writes pt_rec records into its part of one kernel ring buffer,
 * allocated non-overwriting: a full buffer refuses a write, the CPU counts
 * it, and its next successful write is preceded by LOSS(OVERRUN, count).
 * Callers run with interrupts off (handlers and the flush IPI), so the state
 * of a CPU is only ever touched by that CPU, never half-written under
 * another writer.
 * See docs/runtime.md for the owner and path-register rules.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hardirq.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/text-patching.h>

#include "compat.h"
#include "pathtrace.h"

#define PT_OWNER_NONE (~0ull)

/*
 * Pending bits are written in records of up to this many words (2048
 * bits): a segment averages ~550 bits on bench-vm's witness run, so most
 * segments need one.
 */
#define PT_BITS_WORDS 32
/* ENTER codes that wait for their bits record (2048 bits, as many as the bits). */
#define PT_EBITS_WORDS 32
/*
 * The longest ENTER code: repeat bit, escape, caller, rank and gamma of
 * 2^20, ret_lo, Rice(4) of 2047.
 */
#define PT_ENTER_CODE_MAX 232
/* The arg of a record with bits and ENTER codes (of 1.14: PT_REC_BITS_ENTERS4). */
#define PT_ENTERS_ARG(nbits, nebits) PT_BITS_ENTERS_ARG(nbits, nebits)
/* ENTERs of larger func_ids are ENTER_AT records (an item holds func_id + 1 in 20 bits). */
#define PT_ENTERS_FUNC_MAX ((1u << 20) - 1)
/*
 * Segments wait in a PT_REC_SEGMENTS until it would not fit the rest of the
 * ring-buffer page the CPU's last record ended in (an event never spans two
 * pages: what it does not fit is left empty), at most this many bits. So a
 * page mostly holds one record, filled to its end. On bench-vm's witness
 * run a segment averages ~550 bits.
 */
#define PT_PACK_MAX_BITS (3584 * 8)
/* A segment's longest head (2 + 32 + 49 bits) and two lengths; then its bits and codes. */
#define PT_SEG_HEAD_MAX_BITS (83 + 2 * 21)
#define PT_SEG_MAX_BITS (PT_SEG_HEAD_MAX_BITS + 64 * (PT_BITS_WORDS + PT_EBITS_WORDS))
#define PT_PACK_WORDS DIV_ROUND_UP(PT_PACK_MAX_BITS + PT_SEG_MAX_BITS, 64)
/*
 * Page bytes a record of n body bits takes: the event header (4 bytes,
 * 8 above 112 bytes of data), a possible time extend (8) and the record.
 */
#define PT_REC_PAGE_BYTES(n) (8 + 8 + sizeof(struct pt_rec) + DIV_ROUND_UP(n, 32) * 4)

struct pt_cpu {
	u64 owner;		/* owner of the open segment, PT_OWNER_NONE if none */
	u64 owner_gen;		/* a task owner's se.nr_migrations when it opened */
	u64 owner_stamp;	/* when the open segment opened */
	bool owner_open;	/* its OWNER is not written yet (PT_REC_SEGMENTS) */
	u64 words[PT_BITS_WORDS];	/* pending bits, LSB first: full words, */
	unsigned int nwords;		/* then nbits (< 64) of the next one */
	unsigned int nbits;
	u64 path;		/* path register */
	u64 dropped;		/* records refused since the last LOSS(OVERRUN) */
	u64 records;		/* statistics: records written */
	u64 dropped_total;	/* statistics: records refused */
	bool busy;		/* a flush IPI is working on this state */
	u64 busy_dropped;	/* records an NMI lost meanwhile, not yet in dropped */
	u32 rets[PT_ENTER_S_SLOTS];	/* ENTER return addresses, by slot */
	u64 ebits[PT_EBITS_WORDS];	/* pending ENTER codes (PT_REC_BITS_ENTERS4) */
	unsigned int nebits;
	u32 epos;		/* position of the last pending ENTER */
	/* ENTER code tables (pathtrace_abi.h, ABI 1.14); functions as func_id + 1 */
	u32 last_func;		/* the last ENTER's function (0: none) */
	u32 prev_func;		/* the one before it */
	u32 pprev_func;		/* and the one before that */
	u32 recent[PT_ENTERS_RECENT];	/* most recent first */
	/* the items that followed (pprev, prev, last), most recent first */
	u32 cand[PT_ENTERS_CTXS][PT_ENTERS3_CANDS];
	u16 cand_adv[PT_ENTERS_CTXS];	/* the advance + 1 of the most recent */
	/* the last advances + 1 of f's ENTER after (prev, last), most recent first */
	u16 adv[PT_ENTERS_CTXS][PT_ENTERS4_ADVS];
	u64 seg_base;		/* stamp of the last OWNER or SEGMENT written */
	bool seg_base_ok;	/* ... and the reader has it too (no loss since) */
	unsigned int nsegs;	/* segments opened in the buffer, for PT_SEG_FULL_EVERY */
	u64 seg_owners[PT_SEGC_OWNERS];	/* recent segment owners, as the reader has them */
	u64 pack[PT_PACK_WORDS];	/* segments not yet written (PT_REC_SEGMENTS), */
	unsigned int pack_bits;		/* zero above their pack_bits bits */
	unsigned int npack;
	unsigned int page_left;	/* bytes after the last record in its page, 0: unknown */
	unsigned int pack_room;	/* page bytes the pack may take (pt_pack_room) */
	/* Witness words by context (ABI 1.11): the function and row of the next word. */
	u32 ctx_func;
	u32 ctx_row;		/* PT_CTX_NONE: no context */
	u64 ctx_gen;		/* PT_PLAN_CTX_RESTORE: the functions' rows of this one hold */
	bool seg_bits;		/* a bits record of the open segment was written */
	/*
	 * Adapting words (PT_PLAN_CTX_SWAP): a row's last code holds while its
	 * generation is this one, which only grows (no entry of an earlier
	 * trace can match); the ENTERs written since a switch or a refused write.
	 */
	u64 swap_gen;
	u32 swap_enters;
};

/*
 * Allocated at load: with the ENTER code tables a CPU's state is over 26 KB,
 * more than the static per-CPU area the kernel keeps for modules (8 KB);
 * alloc_percpu() takes at most PCPU_MIN_UNIT_SIZE (checked at build).
 */
static struct pt_cpu __percpu *pt_cpus;
static struct trace_buffer *pt_buffer;

/* Handlers do nothing unless this is set; see main.c for arm and disarm. */
bool pt_armed;

static struct pt_cpu *pt_this_cpu(void)
{
	return this_cpu_ptr(pt_cpus);
}

/*
 * Notes how much of its page is left after the record just reserved (len
 * bytes): the ring buffer's data pages are whole pages, records are never
 * split, so the offset of the record in its page tells. Only the pack's
 * size follows from it, never what is written.
 */
static void pt_note_page(struct pt_cpu *cs, struct ring_buffer_event *ev, unsigned int len)
{
	unsigned long end = offset_in_page(ring_buffer_event_data(ev)) + len;

	cs->page_left = end < PAGE_SIZE ? PAGE_SIZE - end : 0;
}

static bool pt_pack_flush(struct pt_cpu *cs);

/*
 * Writes LOSS(OVERRUN) for the pending drops (after the pack), then reopens
 * the open segment with another OWNER record: the drops may have swallowed
 * the OWNER record of the segment the next records belong to, and without
 * one the reader could attribute nothing until the next owner switch.
 * Returns false if the buffer is still full (the drops stay pending).
 */
static bool pt_write_overrun(struct pt_cpu *cs)
{
	struct ring_buffer_event *ev;
	struct pt_rec *r;
	struct pt_rec_loss *l;

	if (cs->npack && !pt_pack_flush(cs))
		return false;
	ev = ring_buffer_lock_reserve(pt_buffer, sizeof(*r) + sizeof(*l));
	if (!ev)
		return false;
	pt_note_page(cs, ev, sizeof(*r) + sizeof(*l));
	r = ring_buffer_event_data(ev);
	r->type = PT_REC_LOSS;
	r->len = sizeof(*r) + sizeof(*l);
	r->arg = PT_LOSS_OVERRUN;
	l = (struct pt_rec_loss *)(r + 1);
	memset(l, 0, sizeof(*l));
	l->count = cs->dropped;
	pt_rb_unlock_commit(pt_buffer, ev);
	cs->records++;
	cs->dropped = 0;
	/*
	 * The reader forgets the SEGMENT base at this LOSS. So does the CPU,
	 * here too: a flush IPI that an NMI's drop interrupted may have
	 * written an OWNER since the drop.
	 */
	cs->seg_base_ok = false;
	memset(cs->seg_owners, 0, sizeof(cs->seg_owners));
	/*
	 * The segment reopens here, with no bits written in it yet. The
	 * context stays: what was emitted since the drop (which emptied it) is
	 * pending and goes into the reopened segment after this LOSS.
	 */
	cs->seg_bits = false;
	/*
	 * The reopening OWNER goes with the record being written, with the
	 * segment's own stamp: the bits still pending were emitted in it,
	 * before whatever its owner did on other CPUs since (the LOSS is
	 * written at the next write, often the owner switch that flushes
	 * them). A stamp of now sorted them after that: a regeneration that
	 * read them out of order, with no gap to say so.
	 */
	if (cs->owner != PT_OWNER_NONE)
		cs->owner_open = true;
	return true;
}

/* Adapting words: every row's last code is forgotten (a new generation). */
static void pt_swap_forget(struct pt_cpu *cs)
{
	cs->swap_gen++;
	cs->swap_enters = 0;
}

/*
 * An ENTER written: the first of a segment and every PT_CTX_SWAP_ENTERS-th
 * after it forget the last codes (where the reader may resume after a gap).
 */
static void pt_swap_enter(struct pt_cpu *cs)
{
	if (cs->swap_enters++ % PT_CTX_SWAP_ENTERS == 0)
		cs->swap_gen++;
}

/*
 * What the reader forgets at a LOSS: return address slots, predictions and
 * the stamp a SEGMENT's delta counts from.
 */
static void pt_forget_enters(struct pt_cpu *cs)
{
	memset(cs->rets, 0, sizeof(cs->rets));
	memset(cs->recent, 0, sizeof(cs->recent));
	memset(cs->cand, 0, sizeof(cs->cand));
	memset(cs->cand_adv, 0, sizeof(cs->cand_adv));
	memset(cs->adv, 0, sizeof(cs->adv));
	cs->last_func = 0;
	cs->prev_func = 0;
	cs->pprev_func = 0;
	cs->seg_base_ok = false;
	memset(cs->seg_owners, 0, sizeof(cs->seg_owners));
	/* the segment reopens after the LOSS: no context, no bits in it yet */
	cs->ctx_row = PT_CTX_NONE;
	cs->ctx_gen++;
	cs->seg_bits = false;
	pt_swap_forget(cs);
}

/* A record's body: up to two parts, written one after the other. */
struct pt_body {
	const void *p[2];
	unsigned int len[2];
};

/*
 * Reserves, fills (zero-padded) and commits one record, after the pack
 * (pt_pack_flush). Returns false if the buffer is full: nothing of the
 * record written or counted (a refused pack is counted).
 */
static bool pt_put(struct pt_cpu *cs, struct pt_func *f, u16 type, u32 arg,
		   const struct pt_body *b)
{
	struct ring_buffer_event *ev;
	struct pt_rec *r;
	unsigned int i, used = 0, len;
	u8 *d;

	/* the segments kept back go first: records stay in the order they happened */
	if (cs->npack && !pt_pack_flush(cs))
		return false;
	for (i = 0; i < ARRAY_SIZE(b->len); i++)
		used += b->len[i];
	/* records are whole u64 (pathtrace_abi.h) */
	len = sizeof(*r) + ALIGN(used, 8);
	ev = ring_buffer_lock_reserve(pt_buffer, len);
	if (unlikely(!ev))
		return false;
	pt_note_page(cs, ev, len);
	r = ring_buffer_event_data(ev);
	r->type = type;
	r->len = len;
	r->arg = arg;
	d = (u8 *)(r + 1);
	for (i = 0; i < ARRAY_SIZE(b->len); i++) {
		if (b->len[i])
			memcpy(d, b->p[i], b->len[i]);
		d += b->len[i];
	}
	if (len > sizeof(*r) + used)
		memset(d, 0, len - sizeof(*r) - used);
	pt_rb_unlock_commit(pt_buffer, ev);
	cs->records++;
	if (f)
		this_cpu_ptr(f->pcpu)->bytes += len;
	return true;
}

/* ORs the low n bits of src (n <= 64) into the pack at bit pos. */
static void pt_seg_or(struct pt_cpu *cs, unsigned int pos, u64 src, unsigned int n)
{
	unsigned int w = pos / 64, off = pos % 64;

	if (n < 64)
		src &= (1ull << n) - 1;
	cs->pack[w] |= src << off;
	if (off && off + n > 64)
		cs->pack[w + 1] |= src >> (64 - off);
}

/* ORs n bits of the words at src into the pack at bit pos; returns pos + n. */
static unsigned int pt_seg_bits(struct pt_cpu *cs, unsigned int pos, const u64 *src,
				unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i += 64)
		pt_seg_or(cs, pos + i, src[i / 64], min(n - i, 64u));
	return pos + n;
}

/*
 * Exp-Golomb code of order k of v into the pack at pos: the Elias gamma
 * code of (v >> k) + 1 (as many zeros as it has bits after its top one,
 * then its bits from the top one down, LSB first: the one, then the low
 * bits), then the k low bits of v. Returns the position after it.
 */
static unsigned int pt_seg_expgolomb(struct pt_cpu *cs, unsigned int pos, u64 v,
				     unsigned int k)
{
	u64 q = (v >> k) + 1;
	unsigned int top = fls64(q) - 1;

	pt_seg_or(cs, pos, 1ull << top, top + 1);	/* top zeros, a one, */
	pt_seg_or(cs, pos + top + 1, q, top);		/* the top low bits */
	pos += 2 * top + 1;
	pt_seg_or(cs, pos, v, k);
	return pos + k;
}

/* The owner moves to the front of the CPU's recent segment owners. */
static void pt_seg_owner_front(struct pt_cpu *cs, u64 owner)
{
	unsigned int r;

	for (r = 0; r < PT_SEGC_OWNERS - 1 && cs->seg_owners[r] != owner; r++)
		;
	memmove(&cs->seg_owners[1], &cs->seg_owners[0], r * sizeof(cs->seg_owners[0]));
	cs->seg_owners[0] = owner;
}

/*
 * Whether the open segment can go in the pack (a PT_REC_SEGMENTS): not
 * when the reader shares no stamp base, the delta or the id is too large,
 * or the segment is the periodic one with a full stamp (a plain OWNER).
 */
static bool pt_seg_packs(const struct pt_cpu *cs)
{
	u64 delta = cs->owner_stamp - cs->seg_base;

	return cs->seg_base_ok && cs->owner_stamp >= cs->seg_base &&
	       delta <= U32_MAX && PT_OWNER_ID(cs->owner) <= PT_SEG_ID_MAX &&
	       cs->nsegs % PT_SEG_FULL_EVERY;
}

/*
 * Appends the open segment to the pack (pathtrace_abi.h PT_REC_SEGMENTS):
 * the head (the owner by its rank among the recent ones, or in full; the
 * Exp-Golomb stamp delta), the two lengths, then the nbits of @bits and the
 * nebits of @ebits (their bits above those counts are zero). The caller
 * made room (PT_SEG_MAX_BITS) and checked pt_seg_packs().
 */
static void pt_seg_pack(struct pt_cpu *cs, struct pt_func *f, const u64 *bits,
			u32 nbits, const u64 *ebits, u32 nebits)
{
	unsigned int r, pos = cs->pack_bits;

	for (r = 1; r < PT_SEGC_OWNERS && cs->seg_owners[r] != cs->owner; r++)
		;
	if (r < PT_SEGC_OWNERS && cs->owner) {
		pt_seg_or(cs, pos, r - 1, 2);
		pos += 2;
	} else {
		pt_seg_or(cs, pos, 3, 2);
		pt_seg_or(cs, pos + 2, (u32)PT_SEG_HEAD(cs->owner, 0), 32);
		pos += 34;
	}
	pos = pt_seg_expgolomb(cs, pos, cs->owner_stamp - cs->seg_base, PT_SEGC_DELTA_K);
	pos = pt_seg_expgolomb(cs, pos, nbits, PT_SEGS_NBITS_K);
	pos = pt_seg_expgolomb(cs, pos, nebits, PT_SEGS_NEBITS_K);
	if (nbits)
		pos = pt_seg_bits(cs, pos, bits, nbits);
	pos = pt_seg_bits(cs, pos, ebits, nebits);
	if (f)
		this_cpu_ptr(f->pcpu)->bytes += DIV_ROUND_UP(pos - cs->pack_bits, 8);
	cs->pack_bits = pos;
	cs->npack++;
}

/*
 * Writes the pack as one PT_REC_SEGMENTS record and empties it. A refusal
 * drops every segment in it (counted; the reader forgets its stamp, owners
 * and ENTER tables at the LOSS that follows, and so does the CPU now).
 * Returns false then.
 */
static bool pt_pack_flush(struct pt_cpu *cs)
{
	unsigned int bytes = DIV_ROUND_UP(cs->pack_bits, 32) * sizeof(u32);
	struct ring_buffer_event *ev;
	struct pt_rec *r;

	ev = ring_buffer_lock_reserve(pt_buffer, sizeof(*r) + bytes);
	if (likely(ev)) {
		pt_note_page(cs, ev, sizeof(*r) + bytes);
		r = ring_buffer_event_data(ev);
		r->type = PT_REC_SEGMENTS4;
		r->len = sizeof(*r) + bytes;
		r->arg = cs->npack;
		memcpy(r + 1, cs->pack, bytes);
		pt_rb_unlock_commit(pt_buffer, ev);
		cs->records += cs->npack;
	} else {
		cs->dropped += cs->npack;
		cs->dropped_total += cs->npack;
		pt_forget_enters(cs);
	}
	memset(cs->pack, 0, DIV_ROUND_UP(cs->pack_bits, 64) * sizeof(u64));
	cs->pack_bits = 0;
	cs->npack = 0;
	return ev != NULL;
}

/*
 * Whether a segment of n bits and codes (at most; 0: a short one) can join
 * the pack: it stays under PT_PACK_MAX_BITS and within the page bytes the
 * pack may take. An empty pack may take the rest of the last record's page
 * when the segment fits there, else a page of its own.
 */
static bool pt_pack_room(struct pt_cpu *cs, unsigned int n)
{
	unsigned int bits = cs->pack_bits + PT_SEG_HEAD_MAX_BITS + (n ? n : 64);

	if (!cs->npack)
		cs->pack_room = cs->page_left && PT_REC_PAGE_BYTES(bits) <= cs->page_left ?
				cs->page_left : PAGE_SIZE - 16;
	return bits <= PT_PACK_MAX_BITS && PT_REC_PAGE_BYTES(bits) <= cs->pack_room;
}

/*
 * Writes the open segment's OWNER with the record about to be written: into
 * the pack with that record when it is bits and the stamp packs (*fused
 * set), as a record of its own otherwise. Returns false if the buffer
 * refused it (or the pack that had to go first: *fused set, the record
 * goes with it).
 */
static bool pt_write_owner(struct pt_cpu *cs, struct pt_func *f, u16 type,
			   u32 arg, const void *body, const void *body2,
			   bool *fused)
{
	struct pt_rec_owner o = { .owner = cs->owner, .stamp = cs->owner_stamp };
	struct pt_body b = { { &o }, { sizeof(o) } };
	u32 nbits = 0, nebits = 0;

	cs->owner_open = false;
	cs->nsegs++;
	*fused = false;
	if (type == PT_REC_BITS_ENTERS4) {
		nbits = PT_BITS_ENTERS_NBITS(arg);
		nebits = PT_BITS_ENTERS_NEBITS(arg);
	} else if (type == PT_REC_BITS && arg != PT_BITS_PARTIAL) {
		nbits = arg;
	}
	if (nbits + nebits && pt_seg_packs(cs)) {
		*fused = true;
		/*
		 * Room before coding the head (a refused pack makes the CPU
		 * forget the owners and the stamp that head would count on):
		 * the pack goes while it still fits its page.
		 */
		if (!pt_pack_room(cs, nbits + nebits)) {
			/* an empty pack always has room: this one holds some */
			if (!pt_pack_flush(cs))
				return false;
			pt_pack_room(cs, nbits + nebits);
		}
		/*
		 * The codes are the second part (pt_flush_bits, whose first
		 * is empty when no bits are pending), or the only one for the
		 * ENTERs alone (pt_flush_enters).
		 */
		pt_seg_pack(cs, f, nbits ? body : NULL, nbits,
			    body2 ? body2 : body, nebits);
		cs->seg_base = o.stamp;
		pt_seg_owner_front(cs, cs->owner);
		/* a refusal here is counted with the pack: this record is in it */
		if (!pt_pack_room(cs, 0))
			pt_pack_flush(cs);
		return true;
	}
	if (!pt_put(cs, f, PT_REC_OWNER, smp_processor_id(), &b))
		return false;
	cs->seg_base = o.stamp;
	cs->seg_base_ok = true;
	pt_seg_owner_front(cs, cs->owner);
	return true;
}

/*
 * Writes one record on this CPU, its body in two parts (the second may be
 * empty); counts it as dropped if the buffer is full. The open segment's
 * OWNER goes first (pt_write_owner), with the record when it is bits. A
 * refused OWNER takes the record with it: written alone, it would join the
 * previous segment.
 */
static bool pt_write2(struct pt_cpu *cs, struct pt_func *f, u16 type, u32 arg,
		      const void *body, unsigned int body_len,
		      const void *body2, unsigned int body2_len)
{
	struct pt_body b = { { body, body2 }, { body_len, body2_len } };
	bool fused;

	if (unlikely(!pt_buffer))
		return false;
	if (unlikely(cs->dropped) && !pt_write_overrun(cs))
		goto drop;
	if (cs->owner_open) {
		if (!pt_write_owner(cs, f, type, arg, body, body2, &fused)) {
			if (!fused && type != PT_REC_OWNER) {
				/* the record goes with its OWNER: two refused */
				cs->dropped++;
				cs->dropped_total++;
			}
			goto drop;
		}
		if (fused || type == PT_REC_OWNER)	/* pt_close_segment: alone */
			return true;
	}
	if (likely(pt_put(cs, f, type, arg, &b)))
		return true;
drop:
	/*
	 * The reader empties its slots and predictions at the LOSS this drop
	 * leads to; ENTERs coded against them go too (one more drop).
	 */
	pt_forget_enters(cs);
	if (cs->nebits) {
		memset(cs->ebits, 0, sizeof(cs->ebits));
		cs->nebits = 0;
		cs->epos = 0;
		cs->dropped++;
		cs->dropped_total++;
	}
	cs->dropped++;
	cs->dropped_total++;
	if (f)
		this_cpu_ptr(f->pcpu)->dropped++;
	return false;
}

static bool pt_write(struct pt_cpu *cs, struct pt_func *f, u16 type, u32 arg,
		     const void *body, unsigned int body_len)
{
	return pt_write2(cs, f, type, arg, body, body_len, NULL, 0);
}

/*
 * Takes the pending ENTER codes for a record about to be written: its
 * nebits and words (*n of them). A refusal of that record must not count
 * them twice.
 */
static u32 pt_take_enters(struct pt_cpu *cs, unsigned int *n)
{
	u32 nebits = cs->nebits;

	*n = DIV_ROUND_UP(nebits, 64);
	cs->nebits = 0;
	cs->epos = 0;
	return nebits;
}

/*
 * Writes the pending bits as one BITS record, with the pending ENTERs as
 * one BITS_ENTERS. They are written at the latest when the owner changes,
 * so ENTER and BLOCK markers name their place in them (pt_pending) instead
 * of forcing a record per few bits.
 */
static void pt_flush_bits(struct pt_cpu *cs, struct pt_func *f)
{
	unsigned int n = cs->nwords + !!cs->nbits, ne;
	u32 nbits = cs->nwords * 64 + cs->nbits;
	u32 nebits = pt_take_enters(cs, &ne);
	bool written = false;

	if (nebits)
		written = pt_write2(cs, f, PT_REC_BITS_ENTERS4,
				    PT_ENTERS_ARG(nbits, nebits), cs->words,
				    n * sizeof(cs->words[0]), cs->ebits,
				    ne * sizeof(cs->ebits[0]));
	else if (n)
		written = pt_write(cs, f, PT_REC_BITS, nbits, cs->words,
				   n * sizeof(cs->words[0]));
	if (written && nbits)
		cs->seg_bits = true;
	memset(cs->ebits, 0, ne * sizeof(cs->ebits[0]));
	if (!n)
		return;
	memset(cs->words, 0, n * sizeof(cs->words[0]));
	cs->nwords = 0;
	cs->nbits = 0;
}

/*
 * The pending ENTERs alone (a BITS_ENTERS of no bits; the bits stay
 * pending), before a record that names its own place in the bits: the
 * reader keeps the order of markers at one bit position as written.
 */
static void pt_flush_enters(struct pt_cpu *cs, struct pt_func *f)
{
	unsigned int ne;
	u32 nebits = pt_take_enters(cs, &ne);

	if (!nebits)
		return;
	pt_write(cs, f, PT_REC_BITS_ENTERS4, PT_ENTERS_ARG(0, nebits),
		 cs->ebits, ne * sizeof(cs->ebits[0]));
	memset(cs->ebits, 0, ne * sizeof(cs->ebits[0]));
}

/* Appends the low n bits of v (n <= 32) to the ENTER codes; room is checked. */
static void pt_ebits_put(struct pt_cpu *cs, u64 v, unsigned int n)
{
	unsigned int w = cs->nebits / 64, off = cs->nebits % 64;

	v &= (1ull << n) - 1;
	cs->ebits[w] |= v << off;
	if (off + n > 64)
		cs->ebits[w + 1] |= v >> (64 - off);
	cs->nebits += n;
}

/* Appends q one bits (any number). */
static void pt_ebits_ones(struct pt_cpu *cs, u32 q)
{
	for (; q; q -= min(q, 32u))
		pt_ebits_put(cs, ~0ull, min(q, 32u));
}

/* f (func_id + 1) to the front of the recent functions; returns its rank before. */
static unsigned int pt_recent_rank(struct pt_cpu *cs, u32 f)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS_RECENT - 1 && cs->recent[r] != f; r++)
		;
	if (cs->recent[r] != f)
		r = PT_ENTERS_RECENT;
	memmove(&cs->recent[1], &cs->recent[0],
		min(r, PT_ENTERS_RECENT - 1u) * sizeof(cs->recent[0]));
	cs->recent[0] = f;
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

/* item to the front of candidates c (the others keep their order). */
static void pt_cand_front(u32 *c, u32 item)
{
	unsigned int r;

	for (r = 0; r < PT_ENTERS3_CANDS - 1 && c[r] != item; r++)
		;
	memmove(&c[1], &c[0], r * sizeof(c[0]));
	c[0] = item;
}

/* Appends the Rice(PT_ENTERS_RICE_K2) code of v. */
static void pt_ebits_rice(struct pt_cpu *cs, u32 v)
{
	pt_ebits_ones(cs, v >> PT_ENTERS_RICE_K2);
	pt_ebits_put(cs, (u64)(v & ((1u << PT_ENTERS_RICE_K2) - 1)) << 1,
		     PT_ENTERS_RICE_K2 + 1);
}

/*
 * Appends one ENTER's code (ABI 1.14, pathtrace_abi.h PT_ENTERS3_*, PT_ENTERS4_*): one
 * bit when it repeats what last followed the same three ENTERs, else its
 * item (a candidate's rank, or caller, function and slot or address) and
 * its advance. kind: 2 untraced caller, 4 traced with the address in its
 * slot, 0 traced with the address given (ret_lo).
 */
static void pt_add_enter(struct pt_cpu *cs, struct pt_func *f, u32 pending,
			 u32 ret_lo, u32 slot, unsigned int kind)
{
	u32 id = f->func_id + 1, adv = pending - cs->epos;
	u32 x = PT_ENTERS3_CTX(cs->pprev_func, cs->prev_func, cs->last_func);
	u16 *advs = cs->adv[PT_ENTERS3_CTX(cs->prev_func, cs->last_func, id)];
	u32 *cand = cs->cand[x], item;
	unsigned int r, recent = pt_recent_rank(cs, id);

	cs->epos = pending;
	if (kind == 0)
		slot = PT_ENTER_S_SLOT(ret_lo);
	item = PT_ENTERS3_ITEM(id, kind != 2, kind == 2 ? 0 : slot);
	/* an item names its address by slot: only while the slot holds it */
	for (r = 0; kind != 0 && r < PT_ENTERS3_CANDS && cand[r] != item; r++)
		;
	if (kind != 0 && r == 0 && cs->cand_adv[x] == adv + 1) {
		pt_ebits_put(cs, 1, 1);
	} else {
		if (kind != 0 && r < PT_ENTERS3_CANDS) {
			pt_ebits_put(cs, 1ull << (r + 1), r + 2);
		} else {
			/* 0, then PT_ENTERS3_CANDS zeros; the caller */
			pt_ebits_put(cs, 0, PT_ENTERS3_CANDS + 1);
			pt_ebits_put(cs, kind == 2 ? 1 : kind == 4 ? 2 : 0,
				     kind == 2 ? 1 : 2);
			pt_ebits_put(cs, recent, 4);
			if (recent == PT_ENTERS_RECENT) {
				unsigned int k = fls(id) - 1;

				pt_ebits_put(cs, 1ull << k, k + 1);
				pt_ebits_put(cs, id, k);
			}
			if (kind == 4)
				pt_ebits_put(cs, slot, 6);
			else if (kind == 0)
				pt_ebits_put(cs, ret_lo, 32);
		}
		/* the advance by its rank among f's after (prev, last) */
		for (r = 0; r < PT_ENTERS4_ADVS && advs[r] != adv + 1; r++)
			;
		pt_ebits_put(cs, r < PT_ENTERS4_ADVS ? 1ull << r : 0,
			     r < PT_ENTERS4_ADVS ? r + 1 : PT_ENTERS4_ADVS);
		if (r == PT_ENTERS4_ADVS)
			pt_ebits_rice(cs, adv);
	}
	pt_cand_front(cand, item);
	cs->cand_adv[x] = adv + 1;
	pt_adv_front(advs, adv + 1);
	cs->pprev_func = cs->prev_func;
	cs->prev_func = cs->last_func;
	cs->last_func = id;
}

/* Bits of the current owner emitted but not yet written. */
static u32 pt_pending(const struct pt_cpu *cs)
{
	return cs->nwords * 64 + cs->nbits;
}

/* A non-zero path register leaves as a partial sum (docs/runtime.md rule 2). */
static void pt_flush_path(struct pt_cpu *cs, struct pt_func *f)
{
	if (!cs->path)
		return;
	pt_write(cs, f, PT_REC_BITS, PT_BITS_PARTIAL, &cs->path, sizeof(cs->path));
	cs->path = 0;
}

/*
 * A segment that wrote no record still says that its owner ran here (the
 * regenerator places missed hits at segment boundaries): its OWNER alone.
 */
static void pt_close_segment(struct pt_cpu *cs, struct pt_func *f)
{
	if (cs->owner_open)
		pt_write(cs, f, PT_REC_OWNER, smp_processor_id(), NULL, 0);
}

/*
 * The owner of the code that hit the probe. An int3-based probe's handler
 * runs inside the int3 exception, which the kernel enters as an NMI
 * (irqentry_nmi_enter: one NMI and one hardirq level); those levels are the
 * probe's own, not the probed code's, so they are taken off first. A probe
 * came through int3 when its first byte is still INT3: an optimized probe
 * is a jmp there and an ftrace-based one never traps.
 */
static u64 pt_current_owner(struct kprobe *p, unsigned int cpu)
{
	unsigned long pc = preempt_count();
	unsigned long nmi = (pc & NMI_MASK) >> NMI_SHIFT;
	unsigned long hard = (pc & HARDIRQ_MASK) >> HARDIRQ_SHIFT;

	if (nmi && hard && !(p->flags & KPROBE_FLAG_FTRACE) &&
	    READ_ONCE(*(u8 *)p->addr) == INT3_INSN_OPCODE) {
		nmi--;
		hard--;
	}
	if (nmi)
		return PT_OWNER(PT_OWNER_NMI, cpu);
	if (hard)
		return PT_OWNER(PT_OWNER_HARDIRQ, cpu);
	if (pc & SOFTIRQ_OFFSET)
		return PT_OWNER(PT_OWNER_SOFTIRQ, cpu);
	if (is_idle_task(current))
		return PT_OWNER(PT_OWNER_IDLE, cpu);
	return PT_OWNER(PT_OWNER_TASK, task_pid_nr(current));
}

/*
 * The owner a handler runs for, and for a task its se.nr_migrations
 * (*gen; 0 for others): a task that left this CPU and came back is not the
 * same run of that owner here.
 */
u64 pt_stream_owner(struct kprobe *p, unsigned int cpu, u64 *gen)
{
	u64 owner = pt_current_owner(p, cpu);

	*gen = PT_OWNER_KIND(owner) == PT_OWNER_TASK ?
	       READ_ONCE(current->se.nr_migrations) : 0;
	return owner;
}

/*
 * Only an NMI can run a handler while this CPU's flush IPI holds the
 * state: what it would record or count is lost, and counted as a buffer
 * drop. Returns true then; interrupts are off.
 */
bool pt_stream_busy(void)
{
	struct pt_cpu *cs = pt_this_cpu();

	if (unlikely(READ_ONCE(cs->busy))) {
		pt_forget_enters(cs);
		cs->busy_dropped++;
		cs->dropped_total++;
		return true;
	}
	if (unlikely(cs->busy_dropped)) {
		cs->dropped += cs->busy_dropped;
		cs->busy_dropped = 0;
	}
	return false;
}

/*
 * Called first by every handler that records (interrupts off): opens a
 * new segment when the owner differs from the one that wrote last on this
 * CPU.
 */
struct pt_cpu *pt_stream_enter_handler(struct pt_func *f, struct kprobe *p,
				       unsigned int cpu)
{
	struct pt_cpu *cs = pt_this_cpu();
	u64 owner, gen;

	if (pt_stream_busy())
		return NULL;
	owner = pt_current_owner(p, cpu);
	/*
	 * A task that left this CPU and came back with no other owner writing
	 * here in between must still open a new segment, or its records would
	 * join the old one and sort before what it wrote elsewhere meanwhile.
	 */
	gen = PT_OWNER_KIND(owner) == PT_OWNER_TASK ?
	      READ_ONCE(current->se.nr_migrations) : 0;
	if (likely(owner == cs->owner && gen == cs->owner_gen))
		return cs;
	pt_flush_bits(cs, f);
	pt_flush_path(cs, f);
	pt_close_segment(cs, f);
	/*
	 * The new segment's OWNER waits for its first record (most often its
	 * bits, a segment of a PT_REC_SEGMENTS). Should that write be refused, the
	 * LOSS(OVERRUN) and the reopening OWNER that follow tell the reader.
	 */
	cs->owner = owner;
	cs->owner_gen = gen;
	cs->owner_stamp = ktime_get_mono_fast_ns();
	cs->owner_open = true;
	/* another owner's code ran: the reader forgets the context at a segment start */
	cs->ctx_row = PT_CTX_NONE;
	cs->ctx_gen++;
	cs->seg_bits = false;
	pt_swap_forget(cs);
	return cs;
}

/*
 * LOSS(MISSED) on this CPU for hits of f's probes skipped in (since, until].
 * Where it sits in the stream carries no meaning (see pt_rec_loss), so the
 * pending bits stay pending. Callers hold off interrupts.
 */
static bool pt_stream_loss_missed(struct pt_cpu *cs, struct pt_func *f, u64 n,
				  u64 since, u64 until)
{
	struct pt_rec_loss l = {
		.count = n, .func_id = f->func_id, .since = since, .until = until,
	};

	return pt_write(cs, f, PT_REC_LOSS, PT_LOSS_MISSED, &l, sizeof(l));
}

/*
 * ret_addr: a traced caller's return address, 0 for an untraced caller
 * (the handler looked it up in the plans' ranges). frame: 0, or for an
 * untraced caller the traced frame it runs under (frames.c;
 * PT_ENTER_FRAME), written where a traced caller's return address would be.
 */
void pt_stream_enter(struct pt_cpu *cs, struct pt_func *f, u64 ret_addr, u32 frame)
{
	/* Kernel and module text lie in the top 2 GiB: the low half says it. */
	struct pt_rec_enter_at e = {
		.ret_lo = frame ? frame : (u32)ret_addr, .pending = pt_pending(cs),
	};
	u32 slot = PT_ENTER_S_SLOT(e.ret_lo);

	/*
	 * Coded with the bits (PT_REC_BITS_ENTERS4): the return address only
	 * when the reader needs it (the caller is traced) and its slot does
	 * not hold it already. The slot is set now; a refused write empties
	 * them all, as the reader does at the LOSS that follows.
	 */
	if (f->func_id < PT_ENTERS_FUNC_MAX) {
		/*
		 * Room for the code first (the bits stay pending: positions
		 * hold). A refused flush empties the slots and predictions, as
		 * the reader does at the LOSS before this code: the kind (an
		 * emptied slot no longer holds the address) and the contexts
		 * pt_add_enter codes against are chosen after it.
		 */
		if (cs->nebits + PT_ENTER_CODE_MAX > PT_EBITS_WORDS * 64)
			pt_flush_enters(cs, f);
		if (!e.ret_lo) {
			pt_add_enter(cs, f, e.pending, 0, 0, 2);
		} else if (cs->rets[slot] == e.ret_lo) {
			pt_add_enter(cs, f, e.pending, 0, slot, 4);
		} else {
			pt_add_enter(cs, f, e.pending, e.ret_lo, 0, 0);
			cs->rets[slot] = e.ret_lo;
		}
		pt_swap_enter(cs);
		return;
	}
	pt_flush_enters(cs, f);
	if (pt_write(cs, f, PT_REC_ENTER_AT, f->func_id, &e, sizeof(e))) {
		if (e.ret_lo)
			cs->rets[slot] = e.ret_lo;
		pt_swap_enter(cs);
	}
}

void pt_stream_block(struct pt_cpu *cs, struct pt_func *f, u32 block)
{
	struct pt_rec_block b = { .block = block, .pending = pt_pending(cs) };

	pt_flush_enters(cs, f);
	pt_write(cs, f, PT_REC_BLOCK, f->func_id, &b, sizeof(b));
}

/* Appends the low n bits of v (n <= 64); full words wait in cs->words. */
void pt_stream_bits(struct pt_cpu *cs, struct pt_func *f, u64 v, unsigned int n)
{
	unsigned int room;
	u64 *w;

	if (!n)
		return;
	if (n < 64)
		v &= (1ull << n) - 1;
	w = &cs->words[cs->nwords];
	room = 64 - cs->nbits;		/* 1..64: nbits never stays at 64 */
	*w |= v << cs->nbits;
	if (n < room) {
		cs->nbits += n;
		return;
	}
	/* The word is full: keep it, and write them all when none is left. */
	cs->nwords++;
	cs->nbits = 0;
	if (cs->nwords == PT_BITS_WORDS) {
		pt_flush_bits(cs, f);
		w = &cs->words[0];
	} else {
		w++;
	}
	if (n > room) {
		*w = v >> room;		/* room < n <= 64, so room <= 63 */
		cs->nbits = n - room;
	}
}

/* PT_PLAN_CTX_RESTORE: the CPU's context is f's too, until it is forgotten. */
static void pt_ctx_save(struct pt_cpu *cs, const struct pt_func *f)
{
	struct pt_func_pcpu *p;

	if (!(f->plan->flags & PT_PLAN_CTX_RESTORE))
		return;
	p = this_cpu_ptr(f->pcpu);
	p->ctx_row = cs->ctx_row;
	p->ctx_gen = cs->ctx_gen;
}

/*
 * The row f's next word is written in: the CPU's context when it is f's,
 * else (PT_PLAN_CTX_RESTORE) f's own, set before its traced callees ran.
 */
static u32 pt_ctx_row(const struct pt_cpu *cs, const struct pt_func *f)
{
	const struct pt_func_pcpu *p;

	if (cs->ctx_func == f->func_id)
		return cs->ctx_row;
	if (!(f->plan->flags & PT_PLAN_CTX_RESTORE))
		return PT_CTX_NONE;
	p = this_cpu_ptr(f->pcpu);
	return p->ctx_gen == cs->ctx_gen ? p->ctx_row : PT_CTX_NONE;
}

/*
 * ENTER of f (written or implicit): the context of f's first word is its
 * entry's row (ctx_next[0]), unless nothing of the segment precedes the
 * ENTER: at one bit position the reader cannot tell an event that ended
 * the previous segment from one that began this one, so it takes no
 * context there, and neither does the module. Called after the ENTER's
 * code is taken (pt_stream_enter): a write refused there empties the
 * context, and the reader reads the LOSS before this ENTER.
 */
void pt_stream_ctx_enter(struct pt_cpu *cs, const struct pt_func *f)
{
	cs->ctx_func = f->func_id;
	cs->ctx_row = f->nr_ctx_codes && (cs->seg_bits || pt_pending(cs)) ?
		      f->ctx_next[0] : PT_CTX_NONE;
	pt_ctx_save(cs, f);
}

/* f's word for code in context row, or NULL (binary search: sorted by (row, code)). */
static const struct pt_ctx_word *pt_ctx_word(const struct pt_func *f, u32 row, u32 code)
{
	u32 lo = 0, hi = f->nr_ctx_words;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct pt_ctx_word *w = pt_ctx_word_at(f, mid);

		if (w->row == row && w->code == code)
			return w;
		if (w->row < row || (w->row == row && w->code < code))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Adapting words (PT_PLAN_CTX_SWAP): the code whose word code takes in row
 * (pathtrace_abi.h): the row's last code and its top trade words. The row
 * remembers code.
 */
static u32 pt_swap_code(struct pt_cpu *cs, struct pt_func *f, u32 row, u32 code)
{
	struct pt_ctx_last *l;
	u32 top, use = code;

	if (!f->ctx_last || row >= f->nr_ctx_rows)
		return code;
	l = this_cpu_ptr(f->ctx_last) + row;
	top = f->ctx_top[row];
	if (l->gen == cs->swap_gen && l->code != top) {
		if (code == l->code)
			use = top;
		else if (code == top)
			use = l->code;
	}
	l->gen = cs->swap_gen;
	l->code = code;
	return use;
}

/*
 * EMIT: a witness's word. With context words (a->arg is its code) and a
 * context of this function, the word of its row (adapting words: maybe
 * another code's); else the action's own. The context moves to the
 * code's next row before the bits go out, so a write they cause that is
 * refused leaves none.
 */
void pt_stream_word(struct pt_cpu *cs, struct pt_func *f, const struct pt_action *a)
{
	const struct pt_ctx_word *w = NULL;
	u32 code = a->arg;

	if (code) {
		u32 row = pt_ctx_row(cs, f);

		if (row != PT_CTX_NONE)
			w = pt_ctx_word(f, row, pt_swap_code(cs, f, row, code));
		cs->ctx_func = f->func_id;
		cs->ctx_row = f->ctx_next[code];
		pt_ctx_save(cs, f);
	}
	if (w)
		pt_stream_bits(cs, f, w->value, w->nbits);
	else
		pt_stream_bits(cs, f, a->value, a->nbits);
}

void pt_stream_path_add(struct pt_cpu *cs, u64 v)
{
	cs->path += v;
}

/* f's listed code of path number id, or NULL (binary search: sorted by path). */
static const struct pt_path_code *pt_path_code(const struct pt_func *f, u64 id)
{
	u32 lo = 0, hi = f->nr_path_codes;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct pt_path_code *c = pt_path_code_at(f, mid);

		if (c->path == id)
			return c;
		if (c->path < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The range holding path number id: the last whose lo is at or below it (ranges[0].lo is 0). */
static const struct pt_path_range *pt_path_range(const struct pt_func *f, u64 id)
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
 * PATH_EMIT: the low n bits of register + v. With path codes (ABI 1.12)
 * the number's word, or its range's escape and the number, unless no bit
 * of the open segment precedes it: then the number may be what a PARTIAL
 * sum left of a path that began elsewhere, whose word nobody knows, and
 * the reader, seeing a segment start there, reads n bits as before.
 */
void pt_stream_path_emit(struct pt_cpu *cs, struct pt_func *f, u64 v,
			 unsigned int n)
{
	u64 id = cs->path + v;
	const struct pt_path_code *c;
	const struct pt_path_range *r;

	cs->path = 0;
	if (n < 64)
		id &= (1ull << n) - 1;
	if (!f->nr_path_ranges || !(cs->seg_bits || pt_pending(cs))) {
		pt_stream_bits(cs, f, id, n);
		return;
	}
	c = pt_path_code(f, id);
	if (c) {
		pt_stream_bits(cs, f, c->value, c->nbits);
		return;
	}
	r = pt_path_range(f, id);
	pt_stream_bits(cs, f, r->esc_value, r->esc_nbits);
	pt_stream_bits(cs, f, id, n);
}

void pt_stream_path_set(struct pt_cpu *cs, u64 v)
{
	cs->path = v;
}

/* Flush IPI: pending bits, path register and drop count of this CPU. */
static void pt_flush_cpu(void *unused)
{
	struct pt_cpu *cs;
	unsigned long flags;

	local_irq_save(flags);
	cs = pt_this_cpu();
	cs->dropped += cs->busy_dropped;
	cs->busy_dropped = 0;
	WRITE_ONCE(cs->busy, true);
	barrier();
	pt_flush_bits(cs, NULL);
	pt_flush_path(cs, NULL);
	pt_close_segment(cs, NULL);
	if (cs->npack)
		pt_pack_flush(cs);
	if (cs->dropped && pt_write_overrun(cs))
		pt_close_segment(cs, NULL);	/* the reopened segment */
	barrier();
	WRITE_ONCE(cs->busy, false);
	local_irq_restore(flags);
}

void pt_stream_flush_all(void)
{
	on_each_cpu(pt_flush_cpu, NULL, 1);
}

/*
 * Edge-mode counters: one COUNTERS record per CPU with the counts since the
 * previous one (arg func_id, body nr_counters u64), then zero them.
 */
static void pt_counters_cpu(void *arg)
{
	struct pt_func *f = arg;
	unsigned long flags;
	u32 n = f->plan->nr_counters;
	u64 *c;

	local_irq_save(flags);
	c = this_cpu_ptr(f->counters);
	WRITE_ONCE(pt_this_cpu()->busy, true);
	barrier();
	if (memchr_inv(c, 0, n * sizeof(*c)) &&
	    pt_write(pt_this_cpu(), f, PT_REC_COUNTERS, f->func_id, c,
		     n * sizeof(*c)))
		memset(c, 0, n * sizeof(*c));
	barrier();
	WRITE_ONCE(pt_this_cpu()->busy, false);
	local_irq_restore(flags);
}

void pt_stream_counters_flush(struct pt_func *f)
{
	if (f->counters)
		on_each_cpu(pt_counters_cpu, f, 1);
}

/* Path counts per PT_REC_PATHS record: a small body, written from an IPI. */
#define PT_PATHS_PER_REC 32

/*
 * Writes one PT_REC_PATHS record (lost and overflow, then n pairs) and on
 * success zeroes what it reported; on failure (a full buffer, counted as a
 * drop) the counts stay for the next flush.
 */
static bool pt_paths_write(struct pt_func *f, struct pt_profile *pr, u64 *body,
			   const u32 *idx, unsigned int n, bool dense)
{
	unsigned int i;

	if (!pt_write(pt_this_cpu(), f, PT_REC_PATHS, f->func_id, body,
		      (2 + 2 * n) * sizeof(u64)))
		return false;
	pr->lost -= body[0];
	pr->overflow -= body[1];
	for (i = 0; i < n; i++) {
		if (dense)
			pr->count[idx[i]] = 0;
		else
			pr->slot[idx[i]].count = 0;
	}
	return true;
}

/* Path-profile counts of this CPU: PT_REC_PATHS records, then zero. */
static void pt_paths_cpu(void *arg)
{
	struct pt_func *f = arg;
	bool dense = pt_profile_dense(f);
	u32 size = f->profile_size;
	u64 body[2 + 2 * PT_PATHS_PER_REC];
	u32 idx[PT_PATHS_PER_REC];
	struct pt_profile *pr;
	unsigned long flags;
	unsigned int n = 0;
	u32 i;

	local_irq_save(flags);
	pr = this_cpu_ptr(f->profile);
	WRITE_ONCE(pt_this_cpu()->busy, true);
	barrier();
	body[0] = pr->lost;
	body[1] = pr->overflow;
	for (i = 0; i < size; i++) {
		u64 count = dense ? pr->count[i] : pr->slot[i].count;

		if (!count)
			continue;
		body[2 + 2 * n] = pt_profile_path(f, pr, i);
		body[3 + 2 * n] = count;
		idx[n++] = i;
		if (n < PT_PATHS_PER_REC)
			continue;
		if (!pt_paths_write(f, pr, body, idx, n, dense))
			goto out;
		body[0] = body[1] = 0;
		n = 0;
	}
	if (n || body[0] || body[1])
		pt_paths_write(f, pr, body, idx, n, dense);
out:
	barrier();
	WRITE_ONCE(pt_this_cpu()->busy, false);
	local_irq_restore(flags);
}

void pt_stream_paths_flush(struct pt_func *f)
{
	if (f->profile)
		on_each_cpu(pt_paths_cpu, f, 1);
}

static void pt_reset_cpu(void *unused)
{
	struct pt_cpu *cs;
	unsigned long flags;

	local_irq_save(flags);
	cs = pt_this_cpu();
	cs->owner = PT_OWNER_NONE;
	cs->owner_gen = 0;
	cs->owner_open = false;
	cs->nsegs = 0;
	memset(cs->words, 0, sizeof(cs->words));
	cs->nwords = 0;
	cs->nbits = 0;
	cs->path = 0;
	cs->dropped = 0;
	cs->records = 0;
	cs->dropped_total = 0;
	cs->busy_dropped = 0;
	pt_forget_enters(cs);
	memset(cs->ebits, 0, sizeof(cs->ebits));
	cs->nebits = 0;
	cs->epos = 0;
	memset(cs->pack, 0, sizeof(cs->pack));
	cs->pack_bits = 0;
	cs->npack = 0;
	cs->page_left = 0;
	cs->pack_room = 0;
	local_irq_restore(flags);
}

/* Before arming: empty buffers and fresh per-CPU state (nothing in flight). */
void pt_stream_reset(void)
{
	if (pt_buffer)
		ring_buffer_reset(pt_buffer);
	on_each_cpu(pt_reset_cpu, NULL, 1);
}

/* True when @cpu's buffer holds nothing to read (or there is none). */
bool pt_stream_cpu_empty(unsigned int cpu)
{
	return !pt_buffer || ring_buffer_empty_cpu(pt_buffer, cpu);
}

bool pt_stream_ready(void)
{
	return pt_buffer != NULL;
}

/* (Re)allocates the ring buffer; only while disarmed. Returns 0 or -ENOMEM. */
int pt_stream_alloc(unsigned long bytes_per_cpu)
{
	struct trace_buffer *b, *old;

	b = ring_buffer_alloc(bytes_per_cpu, 0);
	if (!b)
		return -ENOMEM;
	/* not under a CPU going offline, which may be flushing into the old one */
	cpus_read_lock();
	old = pt_buffer;
	WRITE_ONCE(pt_buffer, b);
	cpus_read_unlock();
	if (old)
		ring_buffer_free(old);
	pt_stream_reset();
	return 0;
}

/*
 * Copies one page of @cpu's buffer, in ring_buffer_read_page() layout, to
 * @ubuf. *out_len is 0 when there is nothing to read. Returns 0, -EINVAL
 * (bad cpu, short buffer), -ENODATA (no buffer yet), -ENOMEM or -EFAULT.
 */
int pt_stream_read_page(unsigned int cpu, void __user *ubuf, u32 buf_len,
			u32 *out_len)
{
	void *page;
	int ret;

	*out_len = 0;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu) || buf_len < PAGE_SIZE)
		return -EINVAL;
	if (!pt_buffer)
		return -ENODATA;
	/*
	 * Drops still pending on a stopped CPU (its buffer was full when the
	 * stop flushed it) get their LOSS record now that there is room: at
	 * the end of that CPU's stream, where they happened.
	 */
	if (ring_buffer_empty_cpu(pt_buffer, cpu) && !READ_ONCE(pt_armed) &&
	    READ_ONCE(per_cpu_ptr(pt_cpus, cpu)->dropped) && cpu_online(cpu))
		smp_call_function_single(cpu, pt_flush_cpu, NULL, 1);
	if (ring_buffer_empty_cpu(pt_buffer, cpu))
		return 0;
	page = pt_rb_alloc_read_page(pt_buffer, cpu);
	if (IS_ERR(page))
		return PTR_ERR(page);
	/*
	 * While tracing, only pages the writer has left (full ones): a page
	 * read under the writer is copied out half empty and the rest of it
	 * is wasted in the file. After stop, what is left.
	 */
	ret = pt_rb_read_page(pt_buffer, &page, PAGE_SIZE, cpu,
			      READ_ONCE(pt_armed));
	if (ret >= 0) {
		if (copy_to_user(ubuf, pt_rb_read_page_data(page), PAGE_SIZE))
			ret = -EFAULT;
		else
			*out_len = PAGE_SIZE;
	}
	pt_rb_free_read_page(pt_buffer, cpu, page);
	return ret == -EFAULT ? ret : 0;
}

void pt_stream_totals(u64 *records, u64 *dropped)
{
	unsigned int cpu;

	*records = 0;
	*dropped = 0;
	for_each_possible_cpu(cpu) {
		struct pt_cpu *cs = per_cpu_ptr(pt_cpus, cpu);

		*records += READ_ONCE(cs->records);
		*dropped += READ_ONCE(cs->dropped_total);
	}
}

/*
 * A CPU going offline (run on it, interrupts on): what it keeps back (bits,
 * ENTER codes, segments, drops to report) is written now, as at stop. The
 * stop's flush reaches only online CPUs: without this, a CPU offline at
 * stop took a piece out of the middle of its tasks' streams.
 */
static int pt_cpu_offline(unsigned int cpu)
{
	if (READ_ONCE(pt_buffer))
		pt_flush_cpu(NULL);
	return 0;
}

static enum cpuhp_state pt_cpuhp_state;

/* Returns 0, -ENOMEM (the per-CPU states) or the error of the hotplug state. */
int pt_stream_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct pt_cpu) > PCPU_MIN_UNIT_SIZE);
	pt_cpus = alloc_percpu(struct pt_cpu);
	if (!pt_cpus)
		return -ENOMEM;
	on_each_cpu(pt_reset_cpu, NULL, 1);
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "pathtrace:online", NULL,
					pt_cpu_offline);
	if (err < 0) {
		free_percpu(pt_cpus);
		pt_cpus = NULL;
		return err;
	}
	pt_cpuhp_state = err;
	return 0;
}

void pt_stream_exit(void)
{
	cpuhp_remove_state_nocalls(pt_cpuhp_state);
	if (pt_buffer)
		ring_buffer_free(pt_buffer);
	pt_buffer = NULL;
	free_percpu(pt_cpus);
	pt_cpus = NULL;
}

/*
 * Writes LOSS(MISSED) from process context on the calling CPU's stream.
 * Returns false if the full buffer refused it (counted as a drop).
 */
bool pt_stream_missed(struct pt_func *f, u64 n, u64 since, u64 until)
{
	unsigned long flags;
	bool ok;

	local_irq_save(flags);
	ok = pt_stream_loss_missed(pt_this_cpu(), f, n, since, until);
	local_irq_restore(flags);
	return ok;
}
