// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's module back end (sim.h): the kernel module's handlers
 * (docs/runtime.md, kmod/stream.c) emulated on the executor's walk of a
 * lowered program. At each block of a traced activation the plan's
 * actions of its instructions run as the probes would: per-CPU bit
 * accumulators and path registers, ENTER codes pending for BITS_ENTERS,
 * BLOCK records in verify mode, owner switches with partial sums, task
 * migration between CPUs, interrupts, and a ring buffer that drops records
 * and says so with LOSS. Its output is records; the truth is the
 * executor's.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "sim.h"

/* ENTER code bits a CPU keeps for its next BITS_ENTERS (the module keeps 1024). */
#define SIM_EBITS 256
#define SIM_ENTER_CODE_MAX 128	/* as the module's PT_ENTER_CODE_MAX */
/* As the module: records with ENTER codes of ABI 1.14 (PT_REC_BITS_ENTERS4). */
#define SIM_ENTERS_ARG(nbits, nebits) PT_BITS_ENTERS_ARG(nbits, nebits)
/*
 * Segments wait for their SEGMENTS record until it holds this many bits
 * (the module fills a ring-buffer page: small here, so records hold a few).
 */
#define SIM_PACK_FLUSH_BITS 700
/* The longest segment here: head, lengths, 64 bits and SIM_EBITS of codes. */
#define SIM_SEG_MAX_BITS (83 + 42 + 64 + SIM_EBITS)

struct cpu_state {
	uint32_t dropping;	/* records still to refuse */
	uint64_t dropped;	/* refused since the last write */
	uint64_t owner;		/* UINT64_MAX: none yet */
	uint64_t owner_gen;	/* a task owner's migration count when it opened */
	uint64_t owner_stamp;	/* when the open segment opened */
	int owner_open;		/* its OWNER not written yet: it goes with the next record */
	uint64_t seg_base;	/* stamp of the last OWNER or SEGMENT written */
	int seg_base_ok;	/* ... and no refused write since */
	uint64_t seg_owners[PT_SEGC_OWNERS];	/* recent segment owners, most recent first */
	uint32_t nsegs;		/* segments opened, for PT_SEG_FULL_EVERY */
	uint64_t acc;
	uint32_t nacc;
	uint64_t reg;
	uint32_t rets[PT_ENTER_S_SLOTS];	/* as the module: ENTER_AT returns, for ENTER_S */
	uint64_t ebits[SIM_EBITS / 64];	/* pending ENTER codes (BITS_ENTERS) */
	uint32_t nebits;
	uint32_t epos;			/* the last pending ENTER's position */
	/* as the module: ENTER code tables of ABI 1.13, functions as func_id + 1 */
	uint32_t last_func, prev_func, pprev_func;
	uint32_t recent[PT_ENTERS_RECENT];
	uint32_t cand[PT_ENTERS_CTXS][PT_ENTERS3_CANDS];	/* items, the most recent first */
	uint32_t cand_adv[PT_ENTERS_CTXS];
	uint32_t adv[PT_ENTERS_CTXS][PT_ENTERS4_ADVS];	/* most recent first */
	/* segments not yet written (PT_REC_SEGMENTS, kmod/stream.c pt_seg_pack) */
	uint64_t pack[(SIM_PACK_FLUSH_BITS + SIM_SEG_MAX_BITS + 63) / 64];
	uint32_t pack_bits, npack;
	/* as the module: witness words by context (ABI 1.11) */
	uint32_t ctx_func, ctx_row;	/* ctx_row PT_CTX_NONE: none */
	int seg_bits;		/* a bits record of the open segment was written */
	/* as the module: the functions' own rows (PT_PLAN_CTX_RESTORE) hold while this is theirs */
	uint64_t ctx_gen;
	/* as the module: adapting words (ABI 1.14), a row's last code while its gen is this */
	uint64_t swap_gen;
	uint32_t swap_enters;	/* ENTERs written since swap_gen moved */
};

/* A function's own context row on a CPU (PT_PLAN_CTX_RESTORE). */
struct ctx_saved {
	uint64_t gen;
	uint32_t row;
};

/* A context row's last code on a CPU (adapting words). */
struct swap_row {
	uint64_t gen;
	uint32_t code;
};

_Static_assert(sizeof(((struct sim_rec *)0)->payload) >=
	       sizeof(struct pt_rec) + sizeof(((struct cpu_state *)0)->pack), "sim_rec payload");

struct exec {
	const struct sim_program *p;
	const struct sim_kmod_opts *o;
	uint64_t *rng;
	struct sim_kmod_run *r;
	struct cpu_state cpu[8];
	uint64_t clock;
	uint64_t owner;		/* the running task */
	uint32_t cur;		/* its cpu */
	uint64_t task_gen[SIM_MAX_TASKS];	/* migrations per task (se.nr_migrations) */
	struct swap_row **swap;	/* [cpu * nfuncs + function]: by row, made when first used */
	struct ctx_saved *saved;	/* [cpu * nfuncs + function] */
	int framed;		/* a plan has PT_PLAN_FRAMED: ENTERs name frames */
};

static void push_rec_bytes(struct exec *x, uint32_t cpu, uint16_t type, uint32_t arg,
			   const void *body, uint32_t nbytes);

/* The segments kept back, as one SEGMENTS record (kmod/stream.c pt_pack_flush). */
static void flush_pack(struct exec *x, uint32_t cpu)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t n = cs->npack;

	if (!n)
		return;
	cs->npack = 0;	/* before the push, which would flush it again */
	x->r->packs_multi += n > 1;
	push_rec_bytes(x, cpu, PT_REC_SEGMENTS4, n, cs->pack, (cs->pack_bits + 31) / 32 * 4);
	memset(cs->pack, 0, sizeof(cs->pack));
	cs->pack_bits = 0;
}

/*
 * Appends one record of nbytes of body to the run as the ring buffer would
 * hold it, after the CPU's pack: records stay in the order they happened.
 */
static void push_rec_bytes(struct exec *x, uint32_t cpu, uint16_t type, uint32_t arg,
			   const void *body, uint32_t nbytes)
{
	struct sim_kmod_run *r = x->r;
	struct sim_rec *rec;
	struct pt_rec h = { .type = type, .len = (uint16_t)(8 + nbytes), .arg = arg };

	if (type != PT_REC_SEGMENTS4)
		flush_pack(x, cpu);

	if (r->nrecs == r->cap) {
		uint64_t cap = r->cap ? r->cap * 2 : 1024;
		struct sim_rec *n = realloc(r->recs, cap * sizeof(*n));

		if (!n) {
			r->nomem = 1;
			return;
		}
		r->recs = n;
		r->cap = cap;
	}
	rec = &r->recs[r->nrecs++];
	rec->ts = ++x->clock;
	rec->cpu = cpu;
	rec->len = h.len;
	memcpy(rec->payload, &h, 8);
	if (nbytes)
		memcpy(rec->payload + 8, body, nbytes);
}

static void push_rec(struct exec *x, uint32_t cpu, uint16_t type, uint32_t arg,
		     const uint64_t *body, uint32_t nwords)
{
	push_rec_bytes(x, cpu, type, arg, body, 8 * nwords);
}

/* Appends the low n bits of v to the bitstring w at *pos, bit by bit: it is the oracle. */
static void seg_put(uint64_t *w, uint32_t *pos, uint64_t v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++, (*pos)++)
		w[*pos / 64] |= ((v >> i) & 1) << (*pos % 64);
}

/* owner to the front of the CPU's recent segment owners (pathtrace_abi.h SEGMENT_CODED, SEGMENTS). */
static void seg_owner_front(struct cpu_state *cs, uint64_t owner)
{
	uint32_t r = 0;

	while (r < PT_SEGC_OWNERS && cs->seg_owners[r] != owner)
		r++;
	if (r == PT_SEGC_OWNERS)
		r--;
	memmove(&cs->seg_owners[1], &cs->seg_owners[0], r * sizeof(cs->seg_owners[0]));
	cs->seg_owners[0] = owner;
}

/* Exp-Golomb of order k: gamma of (v >> k) + 1 (zeros, a one, the low bits), then k bits of v. */
static void seg_expgolomb(uint64_t *w, uint32_t *pos, uint64_t v, uint32_t k)
{
	uint64_t q = (v >> k) + 1;
	uint32_t top = 0;

	while (q >> (top + 1))
		top++;
	seg_put(w, pos, 0, top);
	seg_put(w, pos, 1, 1);
	seg_put(w, pos, q, top);
	seg_put(w, pos, v, k);
}

/*
 * An open segment into the CPU's pack (kmod/stream.c pt_seg_pack): the
 * owner by its rank among the recent ones (2nd to 4th) or in full, the
 * stamp delta as Exp-Golomb(16), the two lengths, then the bits and the
 * ENTER codes. The pack is written once it holds SIM_PACK_FLUSH_BITS.
 */
static void push_segment(struct exec *x, uint32_t cpu, uint64_t delta, const uint64_t *body,
			 uint32_t nbits, uint32_t nebits)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t pos, r = 1, i, bw = (nbits + 63) / 64;

	if (cs->pack_bits + SIM_SEG_MAX_BITS > 64 * sizeof(cs->pack) / 8)
		flush_pack(x, cpu);
	pos = cs->pack_bits;
	while (r < PT_SEGC_OWNERS && (cs->seg_owners[r] != cs->owner || !cs->owner))
		r++;
	if (r < PT_SEGC_OWNERS) {
		seg_put(cs->pack, &pos, r - 1, 2);
	} else {
		seg_put(cs->pack, &pos, 3, 2);
		seg_put(cs->pack, &pos, (uint32_t)PT_SEG_HEAD(cs->owner, 0), 32);
	}
	seg_expgolomb(cs->pack, &pos, delta, PT_SEGC_DELTA_K);
	seg_expgolomb(cs->pack, &pos, nbits, PT_SEGS_NBITS_K);
	seg_expgolomb(cs->pack, &pos, nebits, PT_SEGS_NEBITS_K);
	for (i = 0; i < nbits; i++)
		seg_put(cs->pack, &pos, body[i / 64] >> (i % 64), 1);
	for (i = 0; i < nebits; i++)
		seg_put(cs->pack, &pos, body[bw + i / 64] >> (i % 64), 1);
	cs->pack_bits = pos;
	cs->npack++;
	seg_owner_front(cs, cs->owner);
	if (cs->pack_bits >= SIM_PACK_FLUSH_BITS)
		flush_pack(x, cpu);
}

/*
 * As the module at an owner switch and a refused write: no context, a
 * fresh segment, no row's last code.
 */
static void ctx_forget(struct cpu_state *cs)
{
	cs->ctx_row = PT_CTX_NONE;
	cs->ctx_gen++;
	cs->seg_bits = 0;
	cs->swap_gen++;
	cs->swap_enters = 0;
}

/*
 * An ENTER written: at the first of a segment and every PT_CTX_SWAP_ENTERS-th
 * after it the rows forget.
 */
static void swap_enter(struct exec *x, struct cpu_state *cs)
{
	if (cs->swap_enters++ % PT_CTX_SWAP_ENTERS == 0) {
		cs->swap_gen++;
		x->r->enter_resets += cs->swap_enters > 1;	/* beyond the first */
	}
}

/*
 * One write of the module (kmod/stream.c pt_write2): refused by a full
 * buffer (counted, the LOSS goes with the next write), else after the
 * pending LOSS, with the open segment's OWNER: into the pack as a segment when
 * the record is bits, a record of its own before it otherwise.
 */
static void add_rec(struct exec *x, uint32_t cpu, uint16_t type, uint32_t arg, const uint64_t *body,
		    uint32_t nwords)
{
	struct sim_kmod_run *r = x->r;
	struct cpu_state *cs = &x->cpu[cpu];

	/* A full ring buffer: the write fails and is counted (the LOSS goes with the next write). */
	if (type != PT_REC_LOSS && !cs->dropping && x->o->drop_permille &&
	    sim_below(x->rng, 1000) < x->o->drop_permille)
		cs->dropping = 1 + sim_below(x->rng, 8);
	if (type != PT_REC_LOSS && cs->dropping) {
		cs->dropping--;
		cs->dropped++;
		r->dropped++;
		/* the segments kept back were to go first: refused with it, one drop each */
		cs->dropped += cs->npack;
		r->dropped += cs->npack;
		r->packed_dropped += cs->npack;
		memset(cs->pack, 0, sizeof(cs->pack));
		cs->pack_bits = 0;
		cs->npack = 0;
		/* as the module at a refused write: slots, predictions and pending ENTERs go */
		memset(cs->rets, 0, sizeof(cs->rets));
		memset(cs->recent, 0, sizeof(cs->recent));
		memset(cs->cand, 0, sizeof(cs->cand));
		memset(cs->cand_adv, 0, sizeof(cs->cand_adv));
		memset(cs->adv, 0, sizeof(cs->adv));
		cs->last_func = 0;
		cs->prev_func = 0;
		cs->pprev_func = 0;
		if (cs->nebits) {
			memset(cs->ebits, 0, sizeof(cs->ebits));
			cs->nebits = 0;
			cs->epos = 0;
			cs->dropped++;
			r->dropped++;
		}
		cs->owner_open = 0;	/* a refused OWNER is reopened after the LOSS */
		cs->seg_base_ok = 0;	/* the reader forgets it at the LOSS */
		memset(cs->seg_owners, 0, sizeof(cs->seg_owners));
		ctx_forget(cs);
		return;
	}
	if (cs->dropped && type != PT_REC_LOSS) {
		uint64_t loss[2] = { cs->dropped, 0 };

		cs->dropped = 0;
		add_rec(x, cpu, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
		cs->seg_base_ok = 0;	/* the reader forgets it at this LOSS */
		memset(cs->seg_owners, 0, sizeof(cs->seg_owners));
		/*
		 * The segment reopens after it. The context stays: what was
		 * emitted since the drop is pending and follows the LOSS in
		 * the reopened segment, read (if at all) with what set it.
		 */
		cs->seg_bits = 0;
		if (r->nomem)
			return;
		/*
		 * As the module: reopen the open segment after a loss, with its
		 * own stamp (its pending bits were emitted in it).
		 */
		if (cs->owner != UINT64_MAX)
			cs->owner_open = 1;
	}
	if (cs->owner_open && type != PT_REC_LOSS) {
		uint64_t seg[2 + 1 + SIM_EBITS / 64] = { cs->owner, cs->owner_stamp };
		uint32_t nbits = 0, nebits = 0;

		cs->owner_open = 0;
		cs->nsegs++;
		if (type == PT_REC_OWNER) {	/* the open segment's OWNER alone */
			push_rec(x, cpu, PT_REC_OWNER, cpu, seg, 2);
			cs->seg_base = seg[1];
			cs->seg_base_ok = 1;
			seg_owner_front(cs, cs->owner);
			return;
		}
		if (type == PT_REC_BITS_ENTERS4) {
			nbits = PT_BITS_ENTERS_NBITS(arg);
			nebits = PT_BITS_ENTERS_NEBITS(arg);
		} else if (type == PT_REC_BITS && arg != PT_BITS_PARTIAL) {
			nbits = arg;
		}
		/* packed with the bits when the stamp packs (kmod/stream.c pt_seg_pack) */
		if (nbits + nebits && cs->seg_base_ok && cs->owner_stamp >= cs->seg_base &&
		    cs->owner_stamp - cs->seg_base <= UINT32_MAX &&
		    PT_OWNER_ID(cs->owner) <= PT_SEG_ID_MAX && cs->nsegs % PT_SEG_FULL_EVERY) {
			push_segment(x, cpu, cs->owner_stamp - cs->seg_base, body, nbits, nebits);
			cs->seg_base = cs->owner_stamp;
			cs->seg_base_ok = 1;
			return;
		}
		add_rec(x, cpu, PT_REC_OWNER, cpu, seg, 2);
		if (r->nomem)
			return;
		if (!cs->dropped) {
			cs->seg_base = seg[1];
			cs->seg_base_ok = 1;
			seg_owner_front(cs, cs->owner);
		}
		if (cs->dropped) {	/* that OWNER was refused: so is this record */
			cs->dropped++;
			r->dropped++;
			return;
		}
	}
	push_rec(x, cpu, type, arg, body, nwords);
}

/*
 * The pending bits, with the pending ENTERs as one BITS_ENTERS (as
 * kmod/stream.c pt_flush_bits); enters_only: the ENTERs alone, the bits
 * stay pending (pt_flush_enters).
 */
static void flush_recs(struct exec *x, uint32_t cpu, int enters_only)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint64_t body[1 + SIM_EBITS / 64] = { 0 };
	uint32_t nbits = enters_only ? 0 : cs->nacc, w = 0, nebits = cs->nebits;
	uint64_t dropped;

	if (!nebits && !nbits)
		return;
	if (nbits)
		body[w++] = cs->acc;
	/* taken before the write: its refusal does not count them twice */
	cs->nebits = 0;
	cs->epos = 0;
	dropped = x->r->dropped;
	if (!nebits) {
		add_rec(x, cpu, PT_REC_BITS, nbits, body, w);
	} else {
		memcpy(body + w, cs->ebits, (nebits + 63) / 64 * 8);
		memset(cs->ebits, 0, sizeof(cs->ebits));
		add_rec(x, cpu, PT_REC_BITS_ENTERS4, SIM_ENTERS_ARG(nbits, nebits), body,
			w + (nebits + 63) / 64);
	}
	if (nbits && x->r->dropped == dropped)
		cs->seg_bits = 1;	/* written into the open segment */
	if (nbits) {
		cs->acc = 0;
		cs->nacc = 0;
	}
}

static void flush(struct exec *x, uint32_t cpu)
{
	flush_recs(x, cpu, 0);
}

static void emit_bits(struct exec *x, uint32_t cpu, uint32_t nbits, uint64_t value)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t i;

	x->r->bits += nbits;
	for (i = 0; i < nbits; i++) {	/* bit by bit: clarity over speed, it is the oracle */
		cs->acc |= ((value >> i) & 1) << cs->nacc;
		if (++cs->nacc == 64)
			flush(x, cpu);
	}
}

static uint64_t owner_gen(const struct exec *x, uint64_t owner)
{
	uint32_t t = PT_OWNER_ID(owner) - 100;

	return PT_OWNER_KIND(owner) == PT_OWNER_TASK && t < SIM_MAX_TASKS ? x->task_gen[t] : 0;
}

/* A segment that wrote nothing: its OWNER alone (kmod/stream.c pt_close_segment). */
static void close_segment(struct exec *x, uint32_t cpu)
{
	if (x->cpu[cpu].owner_open)
		add_rec(x, cpu, PT_REC_OWNER, cpu, NULL, 0);
}

/*
 * What every handler does first: a new owner on this CPU, or a task that
 * migrated since it opened its segment here, closes the old segment.
 */
static void switch_owner(struct exec *x, uint32_t cpu, uint64_t owner)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint64_t gen = owner_gen(x, owner);

	if (cs->owner == owner && cs->owner_gen == gen)
		return;
	flush(x, cpu);
	if (cs->reg) {
		add_rec(x, cpu, PT_REC_BITS, PT_BITS_PARTIAL, &cs->reg, 1);
		cs->reg = 0;
	}
	close_segment(x, cpu);
	ctx_forget(cs);
	cs->owner = owner;
	cs->owner_gen = gen;
	cs->owner_stamp = ++x->clock;
	cs->owner_open = 1;	/* its OWNER goes with its first record */
}

/* A probe hit of the running task: maybe migrate first, then the owner check. */
static uint32_t handler_cpu(struct exec *x)
{
	if (x->o->nr_cpus > 1 && sim_below(x->rng, 100) < x->o->migrate_pct) {
		uint32_t old = x->cur, t = PT_OWNER_ID(x->owner) - 100;

		x->cur = (x->cur + 1 + sim_below(x->rng, x->o->nr_cpus - 1)) % x->o->nr_cpus;
		if (t < SIM_MAX_TASKS)
			x->task_gen[t]++;
		if (sim_below(x->rng, 100) < x->o->irq_pct)
			switch_owner(x, old, PT_OWNER(PT_OWNER_HARDIRQ, old));
	}
	switch_owner(x, x->cur, x->owner);
	return x->cur;
}

/* Whether addr lies in one of the program's traced functions, as kmod/ranges.c tells. */
static int traced_code(const struct sim_program *p, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].traced && addr >= p->funcs[i].addr &&
		    addr <= p->funcs[i].addr + p->funcs[i].len)
			return 1;
	return 0;
}

static void ebits_put(struct cpu_state *cs, uint64_t v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++, cs->nebits++)	/* bit by bit: it is the oracle */
		cs->ebits[cs->nebits / 64] |= ((v >> i) & 1) << (cs->nebits % 64);
}

/* The Elias gamma code of v >= 1: k zeros, a one, the k low bits. */
static void ebits_gamma(struct cpu_state *cs, uint32_t v)
{
	uint32_t k = 0;

	while (v >> (k + 1))
		k++;
	ebits_put(cs, 0, k);
	ebits_put(cs, 1, 1);
	ebits_put(cs, v, k);
}

/*
 * Appends an ENTER's code to cpu's pending ones, as kmod/stream.c
 * pt_add_enter (pathtrace_abi.h PT_ENTERS3_*, PT_ENTERS4_*, ABI 1.14): 1 when the item
 * (function, caller traced, slot) and advance are what last followed the
 * three last functions; else 0, the item's rank among that context's
 * candidates in unary or an escape with caller (kind 2 untraced, 4 slot,
 * 0 return address given), recent rank or id, slot or address; then the
 * advance as one of two this function had after the last two, or Rice(4).
 */
static void pend_enter(struct exec *x, uint32_t cpu, uint32_t func_id, uint32_t pending,
		       uint32_t kind, uint32_t slot, uint32_t ret_lo)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t adv = pending - cs->epos, f = func_id + 1, q, r, rr, item;
	uint32_t cctx = PT_ENTERS3_CTX(cs->pprev_func, cs->prev_func, cs->last_func);
	uint32_t actx = PT_ENTERS3_CTX(cs->prev_func, cs->last_func, f);
	uint32_t *cand = cs->cand[cctx];

	cs->epos = pending;
	if (kind == 0)
		slot = PT_ENTER_S_SLOT(ret_lo);
	item = PT_ENTERS3_ITEM(f, kind != 2, kind == 2 ? 0 : slot);
	r = PT_ENTERS3_CANDS;		/* not codable from the candidates */
	for (q = 0; kind != 0 && q < PT_ENTERS3_CANDS; q++)
		if (cand[q] == item) {
			r = q;
			break;
		}
	for (rr = 0; rr < PT_ENTERS_RECENT && cs->recent[rr] != f; rr++)
		;
	if (r == 0 && cs->cand_adv[cctx] == adv + 1) {
		ebits_put(cs, 1, 1);
	} else {
		ebits_put(cs, 0, 1);
		ebits_put(cs, 0, r < PT_ENTERS3_CANDS ? r : PT_ENTERS3_CANDS);
		if (r < PT_ENTERS3_CANDS) {
			ebits_put(cs, 1, 1);
		} else {
			if (kind == 2) {
				ebits_put(cs, 1, 1);
			} else {
				ebits_put(cs, 0, 1);
				ebits_put(cs, kind == 4, 1);
			}
			ebits_put(cs, rr, 4);
			if (rr == PT_ENTERS_RECENT)
				ebits_gamma(cs, f);
			if (kind == 4)
				ebits_put(cs, slot, 6);
			else if (kind == 0)
				ebits_put(cs, ret_lo, 32);
		}
		/* the advance: r zeros and a one for the r-th of f's after (prev, last) */
		for (q = 0; q < PT_ENTERS4_ADVS && cs->adv[actx][q] != adv + 1; q++)
			ebits_put(cs, 0, 1);
		if (q < PT_ENTERS4_ADVS) {
			ebits_put(cs, 1, 1);
		} else {
			for (q = adv >> PT_ENTERS_RICE_K2; q; q--)
				ebits_put(cs, 1, 1);
			ebits_put(cs, 0, 1);
			ebits_put(cs, adv, PT_ENTERS_RICE_K2);
		}
	}
	/* the item to the front; when it was not among them the last drops out */
	for (q = 0; q < PT_ENTERS3_CANDS - 1 && cand[q] != item; q++)
		;
	memmove(&cand[1], &cand[0], q * sizeof(cand[0]));
	cand[0] = item;
	cs->cand_adv[cctx] = adv + 1;
	memmove(&cs->recent[1], &cs->recent[0],
		(rr < PT_ENTERS_RECENT ? rr : PT_ENTERS_RECENT - 1) * sizeof(cs->recent[0]));
	cs->recent[0] = f;
	for (q = 0; q < PT_ENTERS4_ADVS - 1 && cs->adv[actx][q] != adv + 1; q++)
		;
	memmove(&cs->adv[actx][1], &cs->adv[actx][0], q * sizeof(cs->adv[actx][0]));
	cs->adv[actx][0] = adv + 1;
	cs->pprev_func = cs->prev_func;
	cs->prev_func = cs->last_func;
	cs->last_func = f;
}

/*
 * An ENTER as the module writes it (kmod/stream.c): coded with the bits
 * pending at it (BITS_ENTERS), without a return address when the caller is
 * outside the traced code or this CPU's slot already holds it, else with
 * one, which fills the slot at once (a refused write empties them all). A
 * func_id of 2^20 or more: the pending ENTERs, then an ENTER_AT record.
 * With a framed plan installed, an ENTER from outside the traced code
 * names the innermost traced frame instead (kmod/frames.c), as the
 * address of a traced caller is named.
 */
static void add_enter(struct exec *x, uint32_t cpu, uint32_t func_id, uint64_t ret_addr,
		      uint64_t frame)
{
	struct cpu_state *cs = &x->cpu[cpu];
	/* as the handler: only a traced caller's return address is written */
	uint32_t lo = ret_addr >> 32 == 0xffffffffu && traced_code(x->p, ret_addr) ?
		      (uint32_t)ret_addr : 0;

	if (x->framed && !lo) {
		/* none: an untraced caller's ENTER, as before */
		lo = frame ? PT_ENTER_FRAME(frame) : 0;
		x->r->nested_enters += frame != 0;
	}
	uint32_t slot = PT_ENTER_S_SLOT(lo), pending = cs->nacc;
	uint64_t before = x->r->nrecs, body = (uint64_t)lo | (uint64_t)pending << 32;

	if (func_id < (1u << 20) - 1) {
		/*
		 * As the module: room for the code first. A refused flush
		 * empties the slots and predictions (the reader, at the LOSS
		 * before this code), so the kind and contexts come after it.
		 */
		if (cs->nebits + SIM_ENTER_CODE_MAX > SIM_EBITS)
			flush_recs(x, cpu, 1);
		if (!lo) {
			pend_enter(x, cpu, func_id, pending, 2, 0, 0);
		} else if (cs->rets[slot] == lo) {
			pend_enter(x, cpu, func_id, pending, 4, slot, 0);
		} else {
			pend_enter(x, cpu, func_id, pending, 0, 0, lo);
			cs->rets[slot] = lo;
		}
		swap_enter(x, cs);
		return;
	}
	flush_recs(x, cpu, 1);
	/* pt_rec_enter_at: ret_lo, then pending */
	add_rec(x, cpu, PT_REC_ENTER_AT, func_id, &body, 1);
	if (lo && x->r->nrecs > before && x->r->recs[x->r->nrecs - 1].len > sizeof(uint32_t)) {
		struct pt_rec h;

		memcpy(&h, x->r->recs[x->r->nrecs - 1].payload, sizeof(h));
		if (h.type == PT_REC_ENTER_AT)	/* written, not refused */
			cs->rets[slot] = lo;
	}
	if (x->r->nrecs > before) {
		struct pt_rec h;

		memcpy(&h, x->r->recs[x->r->nrecs - 1].payload, sizeof(h));
		if (h.type == PT_REC_ENTER_AT)
			swap_enter(x, cs);
	}
}

/*
 * An EMIT as the module runs it: the word of its code in the context row
 * when the context is this function's, else its own; the context moves to
 * the code's next row first (a write the bits cause that is refused
 * empties it).
 */
/*
 * Adapting words (pathtrace_abi.h PT_PLAN_CTX_SWAP): the code whose word
 * code takes in the context row, the row's last code and its top (fewest
 * bits, then lowest value) trading words; the row remembers code.
 */
static uint32_t swap_use(struct exec *x, uint32_t cpu, const struct sim_func *f, uint32_t row,
			 uint32_t code)
{
	const struct plan *pl = &f->plan;
	struct cpu_state *cs = &x->cpu[cpu];
	size_t fi = (size_t)(f - x->p->funcs);
	const struct pt_ctx_word *top = NULL;
	struct swap_row *sr;
	uint32_t i, nrows, use = code;

	if (!(pl->hdr.flags & PT_PLAN_CTX_SWAP))
		return code;
	nrows = pl->ctx_words[pl->hdr.nr_ctx_words - 1].row + 1;
	if (row >= nrows)
		return code;
	fi += (size_t)cpu * x->p->nfuncs;
	if (!x->swap[fi]) {
		x->swap[fi] = calloc(nrows, sizeof(struct swap_row));
		if (!x->swap[fi]) {
			x->r->nomem = 1;
			return code;
		}
	}
	for (i = 0; i < pl->hdr.nr_ctx_words; i++) {
		const struct pt_ctx_word *w = &pl->ctx_words[i];

		if (w->row == row && (!top || w->nbits < top->nbits ||
				      (w->nbits == top->nbits && w->value < top->value)))
			top = w;
	}
	sr = &x->swap[fi][row];
	if (top && sr->gen == cs->swap_gen && sr->code != top->code) {
		if (code == sr->code)
			use = top->code;
		else if (code == top->code)
			use = sr->code;
	}
	sr->gen = cs->swap_gen;
	sr->code = code;
	x->r->ctx_swapped += use != code;
	return use;
}

/* As the module: the CPU's context is f's own too (PT_PLAN_CTX_RESTORE). */
static void ctx_save(struct exec *x, uint32_t cpu, const struct sim_func *f)
{
	struct ctx_saved *sv = &x->saved[(size_t)cpu * x->p->nfuncs + (size_t)(f - x->p->funcs)];

	if (!(f->plan.hdr.flags & PT_PLAN_CTX_RESTORE))
		return;
	sv->row = x->cpu[cpu].ctx_row;
	sv->gen = x->cpu[cpu].ctx_gen;
}

/* The row of f's next word: the CPU's when it is f's, else (restoring) f's own. */
static uint32_t ctx_row_of(struct exec *x, uint32_t cpu, const struct sim_func *f)
{
	const struct cpu_state *cs = &x->cpu[cpu];
	const struct ctx_saved *sv = &x->saved[(size_t)cpu * x->p->nfuncs +
					       (size_t)(f - x->p->funcs)];

	if (cs->ctx_func == f->func_id)
		return cs->ctx_row;
	if (!(f->plan.hdr.flags & PT_PLAN_CTX_RESTORE) || sv->gen != cs->ctx_gen)
		return PT_CTX_NONE;
	x->r->ctx_restored += sv->row != PT_CTX_NONE;
	return sv->row;
}

static void emit_word(struct exec *x, uint32_t cpu, const struct sim_func *f,
		      const struct pt_action *a)
{
	const struct plan *pl = &f->plan;
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t nbits = a->nbits, i, func_id = f->func_id, use = a->arg;
	uint32_t row = a->arg ? ctx_row_of(x, cpu, f) : PT_CTX_NONE;
	uint64_t value = a->value;

	if (row != PT_CTX_NONE)
		use = swap_use(x, cpu, f, row, a->arg);
	if (row != PT_CTX_NONE)
		for (i = 0; i < pl->hdr.nr_ctx_words; i++)
			if (pl->ctx_words[i].row == row && pl->ctx_words[i].code == use) {
				nbits = pl->ctx_words[i].nbits;
				value = pl->ctx_words[i].value;
				x->r->ctx_words++;
				break;
			}
	if (a->arg) {
		cs->ctx_func = func_id;
		cs->ctx_row = pl->ctx_next[a->arg];
		ctx_save(x, cpu, f);
	}
	emit_bits(x, cpu, nbits, value);
}

/*
 * A PATH_EMIT of number id as the module writes it (kmod/stream.c): with
 * path codes (ABI 1.12) and a bit of the open segment before it, its word,
 * or its range's escape and then id; else id in nbits bits.
 */
static void emit_path(struct exec *x, uint32_t cpu, const struct plan *pl, uint32_t nbits,
		      uint64_t id)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t i, r = 0;

	if (nbits < 64)
		id &= (1ull << nbits) - 1;
	if (!pl->hdr.nr_path_ranges || !(cs->seg_bits || cs->nacc)) {
		emit_bits(x, cpu, nbits, id);
		return;
	}
	for (i = 0; i < pl->hdr.nr_path_codes; i++)
		if (pl->path_codes[i].path == id) {
			x->r->path_words++;
			emit_bits(x, cpu, pl->path_codes[i].nbits, pl->path_codes[i].value);
			return;
		}
	for (i = 1; i < pl->hdr.nr_path_ranges; i++)
		if (pl->path_ranges[i].lo <= id)
			r = i;
	x->r->path_escapes++;
	emit_bits(x, cpu, pl->path_ranges[r].esc_nbits, pl->path_ranges[r].esc_value);
	emit_bits(x, cpu, nbits, id);
}

/* Whether pl's implicit entries list the call site returning to ret. */
static int implicit_entry(const struct plan *pl, uint64_t ret)
{
	uint32_t i;

	for (i = 0; i < pl->hdr.nr_implicit; i++)
		if (pl->implicit[i].ret == ret)
			return 1;
	return 0;
}

/* Runs the site actions of insn i (taken: the edge leaving the block, for `when`). */
static void run_insn(struct exec *x, const struct sim_func *f, uint32_t i, uint32_t edge_out,
		     uint64_t ret_addr, uint64_t frame)
{
	const struct plan *pl = &f->plan;
	uint32_t s = f->site_of_insn[i], v = f->verify_of_insn[i], k, cpu;
	int taken = edge_out != UINT32_MAX && f->cfg.edges[edge_out].kind == CFG_E_TAKEN;

	if (!s && !v)
		return;
	cpu = handler_cpu(x);
	if (s) {
		const struct pt_site *site = &pl->sites[s - 1];

		x->r->site_hits++;

		for (k = 0; k < site->nr_actions; k++) {
			const struct pt_action *a = &pl->actions[site->first_action + k];
			struct cpu_state *cs = &x->cpu[cpu];

			if (a->when == PT_WHEN_TAKEN && !taken)
				continue;
			if (a->when == PT_WHEN_NOT_TAKEN && taken)
				continue;
			switch (a->op) {
			case PT_OP_ENTER:
				/*
				 * As the module (kmod/implicit.c): no ENTER for a
				 * call site the plan lists; every traced caller
				 * here is installed
				 */
				if (!implicit_entry(pl, ret_addr))
					add_enter(x, cpu, f->func_id, ret_addr, frame);
				else
					x->r->implicit_enters++;
				/*
				 * the entry's row, unless the segment has no bits
				 * before it; after the ENTER, as the module: a
				 * refused write there (the LOSS before it) empties
				 * the context
				 */
				cs->ctx_func = f->func_id;
				cs->ctx_row = pl->hdr.nr_ctx_codes && (cs->seg_bits || cs->nacc) ?
					      pl->ctx_next[0] : PT_CTX_NONE;
				ctx_save(x, cpu, f);
				break;
			case PT_OP_EMIT:
				emit_word(x, cpu, f, a);
				break;
			case PT_OP_PATH_ADD:
				cs->reg += a->value;
				break;
			case PT_OP_PATH_EMIT:
				emit_path(x, cpu, pl, a->nbits, cs->reg + a->value);
				cs->reg = 0;
				break;
			case PT_OP_PATH_SET:
				cs->reg = a->value;
				break;
			default:
				break;
			}
		}
	}
	if (v) {
		/* pt_rec_block: block, then the bits pending at it (after the ENTERs) */
		uint64_t body;

		flush_recs(x, cpu, 1);
		body = pl->verify[v - 1].block | (uint64_t)x->cpu[cpu].nacc << 32;
		add_rec(x, cpu, PT_REC_BLOCK, f->func_id, &body, 1);
	}
}


/* The executor's hook: the probes of block v's instructions, v left by edge e. */
static void kmod_vertex(void *ctx, const struct sim_func *f, uint32_t v, uint32_t e, uint64_t ret,
			uint64_t frame, uint64_t *state)
{
	struct exec *x = ctx;
	const struct cfg_block *bl = &f->cfg.blocks[v];
	uint32_t i;

	(void)state;
	for (i = 0; i < bl->ninsn; i++)
		run_insn(x, f, bl->first_insn + i, i + 1 == bl->ninsn ? e : UINT32_MAX, ret,
			 frame);
}

static uint64_t kmod_pos(void *ctx)
{
	const struct exec *x = ctx;

	return x->r->bits;
}

int sim_kmod_execute(const struct sim_program *p, const struct sim_kmod_opts *o, uint64_t *rng,
		     struct sim_kmod_run *r, struct sim_truth *t)
{
	struct exec x;
	const struct sim_backend be = { &x, NULL, kmod_vertex, NULL, kmod_pos };
	uint64_t a;
	uint32_t c;
	int err = 0;

	if (!p->lowered)
		return -PT_EINVAL;
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.o = o;
	x.rng = rng;
	x.r = r;
	for (c = 0; c < 8; c++) {
		x.cpu[c].owner = UINT64_MAX;
		x.cpu[c].ctx_row = PT_CTX_NONE;
		x.cpu[c].swap_gen = 1;	/* the rows' tables start at 0: nothing remembered */
		x.cpu[c].ctx_gen = 1;	/* so do the functions' own rows */
	}
	for (c = 0; c < p->nfuncs; c++)
		x.framed |= p->funcs[c].traced && (p->funcs[c].plan.hdr.flags & PT_PLAN_FRAMED);
	x.swap = calloc(8 * (size_t)p->nfuncs + 1, sizeof(*x.swap));
	x.saved = calloc(8 * (size_t)p->nfuncs + 1, sizeof(*x.saved));	/* gen 0: none */
	if (!x.swap || !x.saved) {
		free(x.swap);
		free(x.saved);
		return -PT_ENOMEM;
	}
	for (a = 0; a < o->activations && !r->nomem && !err; a++) {
		struct sim_run_opts ro = { .max_depth = o->max_depth ? o->max_depth : 6,
					   .max_steps = o->max_steps };

		x.owner = PT_OWNER(PT_OWNER_TASK, 100 + sim_below(rng, o->ntasks ? o->ntasks : 1));
		x.cur = sim_below(rng, o->nr_cpus ? o->nr_cpus : 1);
		ro.owner = x.owner;
		ro.root = sim_below(rng, p->nfuncs);
		/* The activation's caller is untraced code. */
		ro.ret_addr = 0xffffffff81000000ull + sim_below(rng, 4096);
		err = sim_exec(p, &ro, rng, &be, t);
		/* Another owner runs between activations: the task's segment is closed. */
		if (!o->keep_segments)
			switch_owner(&x, x.cur, PT_OWNER(PT_OWNER_SOFTIRQ, x.cur));
	}
	/*
	 * Stop: every CPU flushes (FLUSH IPI) its bits and path register, then
	 * the drop count still pending, the stop's own refused writes included
	 * (kmod/stream.c pt_flush_cpu; at the latest once the reader emptied
	 * the buffer, so this LOSS is never refused).
	 */
	for (c = 0; c < (o->nr_cpus ? o->nr_cpus : 1) && c < 8; c++) {
		x.cpu[c].dropping = 0;
		flush(&x, c);
		if (x.cpu[c].reg)
			add_rec(&x, c, PT_REC_BITS, PT_BITS_PARTIAL, &x.cpu[c].reg, 1);
		close_segment(&x, c);
		flush_pack(&x, c);
		if (x.cpu[c].dropped) {
			uint64_t loss[2] = { x.cpu[c].dropped, 0 };

			x.cpu[c].dropped = 0;
			add_rec(&x, c, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
			if (x.cpu[c].owner != UINT64_MAX) {
				/* reopened and closed: written with the LOSS, into an empty buffer */
				uint64_t seg[2] = { x.cpu[c].owner, x.cpu[c].owner_stamp };

				push_rec(&x, c, PT_REC_OWNER, c, seg, 2);
			}
		}
	}
	for (a = 0; a < 8 * (uint64_t)p->nfuncs; a++)
		free(x.swap[a]);
	free(x.swap);
	free(x.saved);
	return err ? err : r->nomem ? -PT_ENOMEM : 0;
}

void sim_kmod_run_free(struct sim_kmod_run *r)
{
	free(r->recs);
	memset(r, 0, sizeof(*r));
}
