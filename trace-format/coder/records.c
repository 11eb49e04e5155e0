// SPDX-License-Identifier: GPL-2.0
/*
 * records.c - the stream coder's records and segment framing.
 *
 * Every write goes after the pending LOSS(OVERRUN) and the open segment's
 * OWNER. A segment whose first record is bits is packed instead: its head
 * (owner by rank, stamp delta, lengths) and its bits and codes wait in the
 * pack until the next SEGMENTS record would not fit the rest of the sink's
 * page (trace-format/FORMAT.md, "Packed segments (SEGMENTS)"). A refused write is
 * counted; the next written record follows a LOSS(OVERRUN) with the count,
 * and the coder forgets what the reader forgets there.
 */
#include "coder_internal.h"

/*
 * Page bytes a record of n body bits takes: the event header (4 bytes,
 * 8 above 112 bytes of data), a possible time extend (8) and the record.
 */
#define PT_REC_PAGE_BYTES(n) (8 + 8 + sizeof(struct pt_rec) + DIV_ROUND_UP(n, 32) * 4)

/* A record's body: up to two parts, written one after the other. */
struct pt_body {
	const void *p[2];
	unsigned int len[2];
};

static bool pt_pack_flush(struct pt_coder *c);

static void pt_drop(struct pt_coder *c, u64 n)
{
	c->dropped += n;
	c->counts.dropped += n;
}

/*
 * What the reader forgets at a LOSS: the ENTER tables, the stamp base and
 * owners of packed segments, the context; the segment reopens after it
 * with no bits written in it yet.
 */
static void pt_forget(struct pt_coder *c)
{
	pt_enters_forget(&c->enters);
	pt_segs_forget(&c->segs);
	c->ctx_row = PT_CTX_NONE;
	c->ctx_gen++;
	c->seg_bits = false;
	pt_coder_swap_forget(c);
}

/*
 * Writes LOSS(OVERRUN) for the pending drops (after the pack), then reopens
 * the open segment with another OWNER record: the drops may have swallowed
 * the OWNER record of the segment the next records belong to, and without
 * one the reader could attribute nothing until the next owner switch.
 * Returns false if the sink is still full (the drops stay pending).
 */
static bool pt_write_overrun(struct pt_coder *c)
{
	unsigned int len = sizeof(struct pt_rec) + sizeof(struct pt_rec_loss);
	struct pt_rec_loss *l;
	struct pt_rec *r;

	if (c->npack && !pt_pack_flush(c))
		return false;
	r = c->sink->reserve(c, PT_REC_LOSS, len);
	if (!r)
		return false;
	r->type = PT_REC_LOSS;
	r->len = len;
	r->arg = PT_LOSS_OVERRUN;
	l = (struct pt_rec_loss *)(r + 1);
	memset(l, 0, sizeof(*l));
	l->count = c->dropped;
	c->sink->commit(c, r);
	c->counts.records++;
	c->dropped = 0;
	/*
	 * The reader forgets the stamp base at this LOSS. So does the coder,
	 * here too: its user may have written an OWNER since the drop.
	 */
	pt_segs_forget(&c->segs);
	/*
	 * The segment reopens here, with no bits written in it yet. The
	 * context stays: what was emitted since the drop (which emptied it) is
	 * pending and goes into the reopened segment after this LOSS.
	 */
	c->seg_bits = false;
	/*
	 * The reopening OWNER goes with the record being written, with the
	 * segment's own stamp: the bits still pending were emitted in it,
	 * before whatever its owner did on other CPUs since. A stamp of now
	 * sorted them after that: a regeneration that read them out of order,
	 * with no gap to say so.
	 */
	if (c->owner != PT_CODER_OWNER_NONE)
		c->owner_open = true;
	return true;
}

/*
 * Reserves, fills (zero-padded) and commits one record, after the pack.
 * Returns false if the sink is full: nothing of the record written or
 * counted (a refused pack is counted).
 */
static bool pt_put(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
		   u32 arg, const struct pt_body *b)
{
	unsigned int i, used = 0, len;
	struct pt_rec *r;
	u8 *d;

	/* the segments kept back go first: records stay in the order they happened */
	if (c->npack && !pt_pack_flush(c))
		return false;
	for (i = 0; i < ARRAY_SIZE(b->len); i++)
		used += b->len[i];
	/* records are whole u64 (pathtrace_abi.h) */
	len = sizeof(*r) + ALIGN(used, 8);
	r = c->sink->reserve(c, type, len);
	if (unlikely(!r))
		return false;
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
	c->sink->commit(c, r);
	c->counts.records++;
	if (fc)
		fc->bytes += len;
	return true;
}

/* ORs the low n bits of src (n <= 64) into the pack at bit pos. */
static void pt_seg_or(struct pt_coder *c, unsigned int pos, u64 src, unsigned int n)
{
	unsigned int w = pos / 64, off = pos % 64;

	if (n < 64)
		src &= (1ull << n) - 1;
	c->pack[w] |= src << off;
	if (off && off + n > 64)
		c->pack[w + 1] |= src >> (64 - off);
}

/* ORs n bits of the words at src into the pack at bit pos; returns pos + n. */
static unsigned int pt_seg_bits(struct pt_coder *c, unsigned int pos, const u64 *src,
				unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i += 64)
		pt_seg_or(c, pos + i, src[i / 64], min(n - i, 64u));
	return pos + n;
}

/*
 * Exp-Golomb code of order k of v into the pack at pos: the Elias gamma
 * code of (v >> k) + 1 (as many zeros as it has bits after its top one,
 * then its bits from the top one down, LSB first: the one, then the low
 * bits), then the k low bits of v. Returns the position after it.
 */
static unsigned int pt_seg_expgolomb(struct pt_coder *c, unsigned int pos, u64 v,
				     unsigned int k)
{
	u64 q = (v >> k) + 1;
	unsigned int top = fls64(q) - 1;

	pt_seg_or(c, pos, 1ull << top, top + 1);	/* top zeros, a one, */
	pt_seg_or(c, pos + top + 1, q, top);		/* the top low bits */
	pos += 2 * top + 1;
	pt_seg_or(c, pos, v, k);
	return pos + k;
}

/*
 * Whether the open segment can go in the pack: not when the reader shares
 * no stamp base, the delta or the id is too large, or the segment is the
 * periodic one with a full stamp (a plain OWNER).
 */
static bool pt_seg_packs(const struct pt_coder *c)
{
	u64 delta = c->owner_stamp - c->segs.stamp;

	return c->segs.stamp_known && c->owner_stamp >= c->segs.stamp &&
	       delta <= U32_MAX && PT_OWNER_ID(c->owner) <= PT_SEG_ID_MAX &&
	       c->nsegs % PT_SEG_FULL_EVERY;
}

/*
 * Appends the open segment to the pack: the head (the owner by its rank
 * among the recent ones, or in full; the Exp-Golomb stamp delta), the two
 * lengths, then the nbits of @bits and the nebits of @ebits (their bits
 * above those counts are zero). The caller made room and checked
 * pt_seg_packs().
 */
static void pt_seg_pack(struct pt_coder *c, struct pt_coder_func_cpu *fc, const u64 *bits,
			u32 nbits, const u64 *ebits, u32 nebits)
{
	unsigned int r, pos = c->pack_bits;

	for (r = 1; r < PT_SEG_OWNERS && c->segs.owners[r] != c->owner; r++)
		;
	if (r < PT_SEG_OWNERS && c->owner) {
		pt_seg_or(c, pos, r - 1, 2);
		pos += 2;
	} else {
		pt_seg_or(c, pos, 3, 2);
		pt_seg_or(c, pos + 2, PT_SEG_OWNER_CODE(c->owner), 32);
		pos += 34;
	}
	pos = pt_seg_expgolomb(c, pos, c->owner_stamp - c->segs.stamp, PT_SEG_DELTA_K);
	pos = pt_seg_expgolomb(c, pos, nbits, PT_SEG_NBITS_K);
	pos = pt_seg_expgolomb(c, pos, nebits, PT_SEG_NEBITS_K);
	if (nbits)
		pos = pt_seg_bits(c, pos, bits, nbits);
	pos = pt_seg_bits(c, pos, ebits, nebits);
	if (fc)
		fc->bytes += DIV_ROUND_UP(pos - c->pack_bits, 8);
	c->pack_bits = pos;
	c->npack++;
}

/*
 * Writes the pack as one SEGMENTS record and empties it. A refusal drops
 * every segment in it (counted; the reader forgets its stamp, owners and
 * ENTER tables at the LOSS that follows, and so does the coder now).
 * Returns false then.
 */
static bool pt_pack_flush(struct pt_coder *c)
{
	unsigned int bytes = DIV_ROUND_UP(c->pack_bits, 32) * sizeof(u32);
	struct pt_rec *r;

	r = c->sink->reserve(c, PT_REC_SEGMENTS, sizeof(*r) + bytes);
	if (likely(r)) {
		r->type = PT_REC_SEGMENTS;
		r->len = sizeof(*r) + bytes;
		r->arg = c->npack;
		memcpy(r + 1, c->pack, bytes);
		c->sink->commit(c, r);
		c->counts.records += c->npack;
		c->counts.packs_multi += c->npack > 1;
	} else {
		pt_drop(c, c->npack);
		c->counts.packed_dropped += c->npack;
		pt_forget(c);
	}
	memset(c->pack, 0, DIV_ROUND_UP(c->pack_bits, 64) * sizeof(u64));
	c->pack_bits = 0;
	c->npack = 0;
	return r != NULL;
}

/*
 * Whether a segment of n bits and codes (at most; 0: a short one) can join
 * the pack: it stays under pack_max_bits and within the page bytes the
 * pack may take. An empty pack may take the rest of the last record's page
 * when the segment fits there, else a page of its own.
 */
static bool pt_pack_room(struct pt_coder *c, unsigned int n)
{
	unsigned int bits = c->pack_bits + PT_CODER_SEG_HEAD_MAX_BITS + (n ? n : 64);

	if (!c->npack)
		c->pack_room = c->page_left && PT_REC_PAGE_BYTES(bits) <= c->page_left ?
			       c->page_left : c->page_size - 16;
	return bits <= c->pack_max_bits && PT_REC_PAGE_BYTES(bits) <= c->pack_room;
}

/*
 * Writes the open segment's OWNER with the record about to be written: into
 * the pack with that record when it is bits and the stamp packs (*fused
 * set), as a record of its own otherwise. Returns false if the sink
 * refused it (or the pack that had to go first: *fused set, the record
 * goes with it).
 */
static bool pt_write_owner(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
			   u32 arg, const void *body, const void *body2,
			   bool *fused)
{
	struct pt_rec_owner o = { .owner = c->owner, .stamp = c->owner_stamp };
	struct pt_body b = { { &o }, { sizeof(o) } };
	u32 nbits = 0, nebits = 0;

	c->owner_open = false;
	c->nsegs++;
	*fused = false;
	if (type == PT_REC_BITS_ENTERS) {
		nbits = PT_BITS_ENTERS_NBITS(arg);
		nebits = PT_BITS_ENTERS_NEBITS(arg);
	} else if (type == PT_REC_BITS && arg != PT_BITS_PARTIAL) {
		nbits = arg;
	}
	if (nbits + nebits && pt_seg_packs(c)) {
		*fused = true;
		/*
		 * Room before coding the head (a refused pack makes the coder
		 * forget the owners and the stamp that head would count on):
		 * the pack goes while it still fits its page.
		 */
		if (!pt_pack_room(c, nbits + nebits)) {
			/* an empty pack always has room: this one holds some */
			if (!pt_pack_flush(c))
				return false;
			pt_pack_room(c, nbits + nebits);
		}
		/*
		 * The codes are the second part (pt_coder_flush_bits, whose
		 * first is empty when no bits are pending), or the only one
		 * for the ENTERs alone (pt_coder_flush_enters).
		 */
		pt_seg_pack(c, fc, nbits ? body : NULL, nbits, body2 ? body2 : body, nebits);
		pt_segs_learn(&c->segs, c->owner, o.stamp);
		/* a refusal here is counted with the pack: this record is in it */
		if (!pt_pack_room(c, 0))
			pt_pack_flush(c);
		return true;
	}
	if (!pt_put(c, fc, PT_REC_OWNER, c->cpu, &b))
		return false;
	pt_segs_learn(&c->segs, c->owner, o.stamp);
	return true;
}

/*
 * Writes one record, its body in two parts (the second may be empty);
 * counts it as dropped if the sink is full. The open segment's OWNER goes
 * first (pt_write_owner), with the record when it is bits. A refused OWNER
 * takes the record with it: written alone, it would join the previous
 * segment.
 */
bool pt_coder_write_parts(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
		     u32 arg, const void *body, unsigned int body_len,
		     const void *body2, unsigned int body2_len)
{
	struct pt_body b = { { body, body2 }, { body_len, body2_len } };
	bool fused;

	if (unlikely(c->dropped) && !pt_write_overrun(c))
		goto drop;
	if (c->owner_open) {
		if (!pt_write_owner(c, fc, type, arg, body, body2, &fused)) {
			/* the record goes with its OWNER: two refused */
			if (!fused && type != PT_REC_OWNER)
				pt_drop(c, 1);
			goto drop;
		}
		if (fused || type == PT_REC_OWNER)	/* pt_close_segment: alone */
			return true;
	}
	if (likely(pt_put(c, fc, type, arg, &b)))
		return true;
drop:
	/*
	 * The reader empties its slots and predictions at the LOSS this drop
	 * leads to; ENTERs coded against them go too (one more drop).
	 */
	pt_forget(c);
	if (c->nebits) {
		memset(c->ebits, 0, sizeof(c->ebits));
		c->nebits = 0;
		c->epos = 0;
		pt_drop(c, 1);
	}
	pt_drop(c, 1);
	if (fc)
		fc->dropped++;
	return false;
}

bool pt_coder_write(struct pt_coder *c, struct pt_coder_func_cpu *fc, u16 type,
		    u32 arg, const void *body, unsigned int len)
{
	return pt_coder_write_parts(c, fc, type, arg, body, len, NULL, 0);
}

/*
 * The ENTER_AT record of a function the ENTER codes cannot name (enters.c),
 * after the codes pending before it; returns whether it was written. Here,
 * not in enters.c, so that the record's body is on this function's stack
 * and the coded ENTER's path holds nothing a stack protector guards.
 */
bool pt_coder_write_enter_at(struct pt_coder *c, struct pt_coder_func_cpu *fc, u32 func_id,
			     u32 ret_lo)
{
	struct pt_rec_enter_at e = { .ret_lo = ret_lo, .pending = pt_coder_pending(c) };

	pt_coder_flush_enters(c, fc);
	return pt_coder_write(c, fc, PT_REC_ENTER_AT, func_id, &e, sizeof(e));
}

/*
 * Takes the pending ENTER codes for a record about to be written: its
 * nebits and words (*n of them). A refusal of that record must not count
 * them twice.
 */
static u32 pt_take_enters(struct pt_coder *c, unsigned int *n)
{
	u32 nebits = c->nebits;

	*n = DIV_ROUND_UP(nebits, 64);
	c->nebits = 0;
	c->epos = 0;
	return nebits;
}

/*
 * Writes the pending bits as one BITS record, with the pending ENTERs as
 * one BITS_ENTERS. They are written at the latest when the owner changes,
 * so ENTER and BLOCK markers name their place in them (pt_coder_pending)
 * instead of forcing a record per few bits.
 */
void pt_coder_flush_bits(struct pt_coder *c, struct pt_coder_func_cpu *fc)
{
	unsigned int n = c->nwords + !!c->nbits, ne;
	u32 nbits = c->nwords * 64 + c->nbits;
	u32 nebits = pt_take_enters(c, &ne);
	bool written = false;

	if (nebits)
		written = pt_coder_write_parts(c, fc, PT_REC_BITS_ENTERS,
					  PT_BITS_ENTERS_ARG(nbits, nebits), c->words,
					  n * sizeof(c->words[0]), c->ebits,
					  ne * sizeof(c->ebits[0]));
	else if (n)
		written = pt_coder_write(c, fc, PT_REC_BITS, nbits, c->words,
					 n * sizeof(c->words[0]));
	if (written && nbits)
		c->seg_bits = true;
	memset(c->ebits, 0, ne * sizeof(c->ebits[0]));
	if (!n)
		return;
	memset(c->words, 0, n * sizeof(c->words[0]));
	c->nwords = 0;
	c->nbits = 0;
}

/*
 * The pending ENTERs alone (a BITS_ENTERS of no bits; the bits stay
 * pending), before a record that names its own place in the bits: the
 * reader keeps the order of markers at one bit position as written.
 */
void pt_coder_flush_enters(struct pt_coder *c, struct pt_coder_func_cpu *fc)
{
	unsigned int ne;
	u32 nebits = pt_take_enters(c, &ne);

	if (!nebits)
		return;
	pt_coder_write(c, fc, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(0, nebits),
		       c->ebits, ne * sizeof(c->ebits[0]));
	memset(c->ebits, 0, ne * sizeof(c->ebits[0]));
}

/* A non-zero path register leaves as a partial sum (docs/runtime.md "Partial sums"). */
static void pt_flush_path(struct pt_coder *c, struct pt_coder_func_cpu *fc)
{
	if (!c->path)
		return;
	pt_coder_write(c, fc, PT_REC_BITS, PT_BITS_PARTIAL, &c->path, sizeof(c->path));
	c->path = 0;
}

/*
 * A segment that wrote no record still says that its owner ran here (the
 * regenerator places missed hits at segment boundaries): its OWNER alone.
 */
static void pt_close_segment(struct pt_coder *c)
{
	if (c->owner_open)
		pt_coder_write(c, NULL, PT_REC_OWNER, c->cpu, NULL, 0);
}

void pt_coder_open(struct pt_coder *c, u64 owner, u64 gen, u64 stamp)
{
	pt_coder_flush_bits(c, NULL);
	pt_flush_path(c, NULL);
	pt_close_segment(c);
	/*
	 * The new segment's OWNER waits for its first record (most often its
	 * bits, a packed segment). Should that write be refused, the
	 * LOSS(OVERRUN) and the reopening OWNER that follow tell the reader.
	 */
	c->owner = owner;
	c->owner_gen = gen;
	c->owner_stamp = stamp;
	c->owner_open = true;
	/* another owner's code ran: the reader forgets the context at a segment start */
	c->ctx_row = PT_CTX_NONE;
	c->ctx_gen++;
	c->seg_bits = false;
	pt_coder_swap_forget(c);
}

void pt_coder_flush(struct pt_coder *c)
{
	pt_coder_flush_bits(c, NULL);
	pt_flush_path(c, NULL);
	pt_close_segment(c);
	if (c->npack)
		pt_pack_flush(c);
	if (c->dropped && pt_write_overrun(c))
		pt_close_segment(c);	/* the reopened segment */
}

void pt_coder_forget(struct pt_coder *c)
{
	pt_forget(c);
}

void pt_coder_reset(struct pt_coder *c)
{
	const struct pt_coder_sink *sink = c->sink;
	u32 cpu = c->cpu, bw = c->bits_words, ew = c->ebits_words;
	u32 page = c->page_size, pack = c->pack_max_bits;
	/*
	 * The generations only grow: rows that functions saved in an earlier
	 * recording (their tables outlive a reset) never hold again.
	 */
	u64 ctx_gen = c->ctx_gen + 1, swap_gen = c->swap_gen + 1;

	memset(c, 0, sizeof(*c));
	c->sink = sink;
	c->cpu = cpu;
	c->bits_words = bw;
	c->ebits_words = ew;
	c->page_size = page;
	c->pack_max_bits = pack;
	c->owner = PT_CODER_OWNER_NONE;
	c->ctx_row = PT_CTX_NONE;
	c->ctx_gen = ctx_gen;
	c->swap_gen = swap_gen;
}

void pt_coder_block(struct pt_coder *c, const struct pt_coder_func *f,
		    struct pt_coder_func_cpu *fc, u32 block)
{
	struct pt_rec_block b = { .block = block, .pending = pt_coder_pending(c) };

	pt_coder_flush_enters(c, fc);
	pt_coder_write(c, fc, PT_REC_BLOCK, f->func_id, &b, sizeof(b));
}

/* A task event (FORK, EXEC) r of len bytes, after the pending ENTERs. */
static void pt_coder_task_event(struct pt_coder *c, u16 type, const void *r, unsigned int len)
{
	pt_coder_flush_enters(c, NULL);
	pt_coder_write(c, NULL, type, 0, r, len);
}

void pt_coder_fork(struct pt_coder *c, u64 child, u64 stamp)
{
	struct pt_rec_fork r = { .child = child, .stamp = stamp, .pending = pt_coder_pending(c) };

	pt_coder_task_event(c, PT_REC_FORK, &r, sizeof(r));
}

void pt_coder_exec(struct pt_coder *c, u64 old_owner)
{
	struct pt_rec_exec r = { .old_owner = old_owner, .pending = pt_coder_pending(c) };

	pt_coder_task_event(c, PT_REC_EXEC, &r, sizeof(r));
}
