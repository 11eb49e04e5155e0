// SPDX-License-Identifier: GPL-2.0
/* synth - synthetic traced programs and recorded runs (see synth.h). */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "synth.h"

uint64_t synth_rand(uint64_t *rng)
{
	uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint64_t *rng, uint32_t n)
{
	return n ? (uint32_t)(synth_rand(rng) % n) : 0;
}

/* ------------------------------------------------------------ code */

/* T_TAIL: jmp to a later function; T_JCC_TAIL: a Jcc to one (a conditional tail call). */
enum term { T_FALL, T_JCC, T_JMP, T_CALL, T_RET, T_TAIL, T_JCC_TAIL };

struct label {
	uint32_t off;
	uint8_t term;
	uint8_t cc;
	uint32_t target;	/* label (JCC, JMP) or function index (CALL, TAIL, JCC_TAIL) */
	uint32_t patch;		/* offset of the rel32 */
};

static const uint8_t plain[][4] = {
	{ 3, 0x48, 0x89, 0xf8 },	/* mov %rdi,%rax */
	{ 3, 0x48, 0x85, 0xc0 },	/* test %rax,%rax */
	{ 1, 0x90 },			/* nop */
	{ 3, 0x48, 0x01, 0xf8 },	/* add %rdi,%rax */
};

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

/* Random code for function fi of nfuncs; returns its length. */
static uint32_t gen_code(uint8_t *code, uint32_t fi, uint32_t nfuncs, uint32_t nlabels,
			 uint64_t *rng)
{
	struct label lab[64];
	uint32_t off = 0, k, i;

	if (nlabels > 64)
		nlabels = 64;
	/* The fentry site: a 5-byte nop; nothing jumps back to it. */
	memcpy(code, "\x0f\x1f\x44\x00\x00", 5);
	off = 5;
	for (k = 0; k < nlabels; k++) {
		uint32_t r = below(rng, 100), n = below(rng, 3);

		lab[k].off = off;
		for (i = 0; i < n; i++) {
			const uint8_t *pi = plain[below(rng, 4)];

			memcpy(code + off, pi + 1, pi[0]);
			off += pi[0];
		}
		if (k == nlabels - 1)
			lab[k].term = T_RET;
		else if (r < 20)
			lab[k].term = T_FALL;
		else if (r < 60)
			lab[k].term = T_JCC;
		else if (r < 68)
			lab[k].term = T_JMP;
		else if (r < 85)
			lab[k].term = fi + 1 < nfuncs ? T_CALL : T_FALL;
		else if (r < 89)
			lab[k].term = fi + 1 < nfuncs ? T_TAIL : T_RET;
		else if (r < 92)
			lab[k].term = fi + 1 < nfuncs ? T_JCC_TAIL : T_FALL;
		else
			lab[k].term = T_RET;
		switch (lab[k].term) {
		case T_JCC:
			lab[k].cc = (uint8_t)below(rng, 16);
			lab[k].target = below(rng, nlabels);
			code[off] = 0x0f;
			code[off + 1] = (uint8_t)(0x80 + lab[k].cc);
			lab[k].patch = off + 2;
			off += 6;
			break;
		case T_JMP:
			lab[k].target = below(rng, nlabels);
			code[off] = 0xe9;
			lab[k].patch = off + 1;
			off += 5;
			break;
		case T_CALL:
		case T_TAIL:
			lab[k].target = fi + 1 + below(rng, nfuncs - fi - 1);
			code[off] = lab[k].term == T_CALL ? 0xe8 : 0xe9;
			lab[k].patch = off + 1;
			off += 5;
			break;
		case T_JCC_TAIL:
			lab[k].cc = (uint8_t)below(rng, 16);
			lab[k].target = fi + 1 + below(rng, nfuncs - fi - 1);
			code[off] = 0x0f;
			code[off + 1] = (uint8_t)(0x80 + lab[k].cc);
			lab[k].patch = off + 2;
			off += 6;
			break;
		case T_RET:
			code[off++] = 0xc3;
			break;
		default:
			break;
		}
	}
	for (k = 0; k < nlabels; k++) {
		int64_t from = (int64_t)lab[k].patch + 4, to;

		if (lab[k].term == T_JCC || lab[k].term == T_JMP) {
			to = lab[lab[k].target].off;
			put32(code + lab[k].patch, (int32_t)(to - from));
		} else if (lab[k].term == T_CALL || lab[k].term == T_TAIL ||
			   lab[k].term == T_JCC_TAIL) {
			to = (int64_t)(lab[k].target * SYNTH_STRIDE) - (int64_t)(fi * SYNTH_STRIDE);
			put32(code + lab[k].patch, (int32_t)(to - from));
		}
	}
	/* int3 padding, as after kernel functions. */
	memset(code + off, 0xcc, 8);
	return off;
}

static const char *name_at(void *ctx, uint64_t addr)
{
	const struct synth_program *p = ctx;
	uint64_t i;

	if (addr < SYNTH_BASE || (addr - SYNTH_BASE) % SYNTH_STRIDE)
		return NULL;
	i = (addr - SYNTH_BASE) / SYNTH_STRIDE;
	return i < p->nfuncs ? p->funcs[i].name : NULL;
}

static int no_noreturn(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 0;
}

/* Fewest edges from each block to EXIT; 0 when every block reaches EXIT. */
static int distances(struct synth_func *f)
{
	const struct cfg *c = &f->cfg;
	uint32_t b, e, changed = 1;

	f->dist = malloc((c->nblocks + 1) * sizeof(*f->dist));
	if (!f->dist)
		return -PT_ENOMEM;
	for (b = 0; b < c->nblocks; b++)
		f->dist[b] = UINT32_MAX;
	while (changed) {	/* Bellman-Ford on unit weights: graphs are small */
		changed = 0;
		for (e = 0; e < c->nedges; e++) {
			uint32_t s = c->edges[e].src, d = c->edges[e].dst;
			uint32_t dd = d >= c->nblocks ? 0 : f->dist[d];

			if (dd != UINT32_MAX && dd + 1 < f->dist[s]) {
				f->dist[s] = dd + 1;
				changed = 1;
			}
		}
	}
	for (b = 0; b < c->nblocks; b++)
		if (f->dist[b] == UINT32_MAX)
			return -PT_EREFUSED;
	return 0;
}

static void func_free(struct synth_func *f)
{
	cfg_free(&f->cfg);
	plan_free(&f->plan);
	free(f->code);
	free(f->plan_blob);
	free(f->cfg_blob);
	free(f->site_of_insn);
	free(f->verify_of_insn);
	free(f->callee);
	free(f->dist);
	f->code = NULL;
	f->plan_blob = NULL;
	f->cfg_blob = NULL;
	f->site_of_insn = f->verify_of_insn = f->callee = f->dist = NULL;
	memset(&f->cfg, 0, sizeof(f->cfg));
	memset(&f->plan, 0, sizeof(f->plan));
}

/* One attempt at function fi: 0, -PT_EREFUSED (try again), -PT_ENOMEM. */
static int try_func(struct synth_program *p, uint32_t fi, const struct synth_opts *o, uint64_t *rng)
{
	struct synth_func *f = &p->funcs[fi];
	struct cfg_input in;
	struct plan_opts po;
	uint32_t i, b;
	int err;

	f->code = calloc(1, SYNTH_MAX_CODE);
	if (!f->code)
		return -PT_ENOMEM;
	f->len = gen_code(f->code, fi, p->nfuncs, 2 + below(rng, o->max_labels - 1), rng);
	memset(&in, 0, sizeof(in));
	in.name = f->name;
	in.addr = f->addr;
	in.code = f->code;
	in.len = f->len;
	in.names.ctx = p;
	in.names.name_at = name_at;
	in.names.is_noreturn = no_noreturn;
	err = cfg_build(&in, &f->cfg);
	if (err)
		return err == -PT_ENOMEM ? err : -PT_EREFUSED;
	err = distances(f);
	if (err)
		return err;
	memset(&po, 0, sizeof(po));
	po.mode = o->mode;
	po.encoding = o->encoding;
	po.func_id = f->func_id;
	po.flags = o->plan_flags;
	err = plan_build(&f->cfg, &po, &f->plan);
	if (err)
		return err == -PT_ENOMEM ? err : -PT_EREFUSED;
	if (plan_serialize(&f->plan, &f->plan_blob, &f->plan_len) ||
	    cfg_blob_encode(&f->cfg, &f->cfg_blob, &f->cfg_len))
		return -PT_ENOMEM;
	f->site_of_insn = calloc(f->cfg.ninsns + 1, sizeof(uint32_t));
	f->verify_of_insn = calloc(f->cfg.ninsns + 1, sizeof(uint32_t));
	f->callee = malloc((f->cfg.nblocks + 1) * sizeof(uint32_t));
	if (!f->site_of_insn || !f->verify_of_insn || !f->callee)
		return -PT_ENOMEM;
	for (i = 0; i < f->plan.hdr.nr_sites; i++)
		f->site_of_insn[f->plan.site_insn[i]] = i + 1;
	for (i = 0; i < f->plan.hdr.nr_verify; i++)
		f->verify_of_insn[f->plan.verify_insn[i]] = i + 1;
	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		const struct cfg_insn *last = &f->cfg.insns[bl->first_insn + bl->ninsn - 1];

		f->callee[b] = UINT32_MAX;
		if ((bl->flags & CFG_BF_CALL) && last->kind == CFG_I_CALL && last->target >= SYNTH_BASE &&
		    (last->target - SYNTH_BASE) % SYNTH_STRIDE == 0 &&
		    (last->target - SYNTH_BASE) / SYNTH_STRIDE < p->nfuncs)
			f->callee[b] = (uint32_t)((last->target - SYNTH_BASE) / SYNTH_STRIDE);
	}
	return 0;
}

int synth_generate(struct synth_program *p, const struct synth_opts *o, uint64_t *rng)
{
	uint32_t i, tries;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->funcs = calloc(o->nfuncs, sizeof(*p->funcs));
	if (!p->funcs)
		return -PT_ENOMEM;
	p->nfuncs = o->nfuncs;
	p->mode = o->mode;
	p->encoding = o->encoding;
	p->plan_flags = o->plan_flags;
	for (i = 0; i < o->nfuncs; i++) {
		p->funcs[i].func_id = 100 + 3 * i;
		p->funcs[i].addr = SYNTH_BASE + i * SYNTH_STRIDE;
		snprintf(p->funcs[i].name, sizeof(p->funcs[i].name), "synth_fn%u", i);
	}
	/* Last first: callers' CFGs need their callees' names only, not CFGs. */
	for (i = o->nfuncs; i-- > 0;) {
		for (tries = 0; tries < 1000; tries++) {
			err = try_func(p, i, o, rng);
			if (err != -PT_EREFUSED)
				break;
			func_free(&p->funcs[i]);
		}
		if (err) {
			synth_free(p);
			return err;
		}
	}
	return 0;
}

void synth_free(struct synth_program *p)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++)
		func_free(&p->funcs[i]);
	free(p->funcs);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------- runs */

/* ENTER code bits a CPU keeps for its next BITS_ENTERS (the module keeps 1024). */
#define SYNTH_EBITS 256
#define SYNTH_ENTER_CODE_MAX 128	/* as the module's PT_ENTER_CODE_MAX */

struct cpu_state {
	uint32_t dropping;	/* records still to refuse */
	uint64_t dropped;	/* refused since the last write */
	uint64_t owner;		/* UINT64_MAX: none yet */
	uint64_t owner_gen;	/* a task owner's migration count when it opened */
	uint64_t acc;
	uint32_t nacc;
	uint64_t reg;
	uint32_t rets[PT_ENTER_S_SLOTS];	/* as the module: ENTER_AT returns, for ENTER_S */
	uint64_t ebits[SYNTH_EBITS / 64];	/* pending ENTER codes (BITS_ENTERS) */
	uint32_t nebits;
	uint32_t epos;			/* the last pending ENTER's position */
	uint32_t pred[PT_ENTERS_PRED];	/* as the module: the function that followed each */
	uint32_t last_func;
};

struct exec {
	const struct synth_program *p;
	const struct synth_run_opts *o;
	uint64_t *rng;
	struct synth_run *r;
	struct cpu_state cpu[8];
	uint64_t clock;
	uint64_t owner;		/* the running task */
	uint32_t cur;		/* its cpu */
	uint64_t task_gen[SYNTH_MAX_TASKS];	/* migrations per task (se.nr_migrations) */
	uint64_t steps;
};

static void add_rec(struct exec *x, uint32_t cpu, uint16_t type, uint32_t arg, const uint64_t *body,
		    uint32_t nwords)
{
	struct synth_run *r = x->r;
	struct synth_rec *rec;
	struct pt_rec h = { .type = type, .len = (uint16_t)(8 + 8 * nwords), .arg = arg };
	struct cpu_state *cs = &x->cpu[cpu];

	/* A full ring buffer: the write fails and is counted (the LOSS goes with the next write). */
	if (type != PT_REC_LOSS && !cs->dropping && x->o->drop_permille &&
	    below(x->rng, 1000) < x->o->drop_permille)
		cs->dropping = 1 + below(x->rng, 8);
	if (type != PT_REC_LOSS && cs->dropping) {
		cs->dropping--;
		cs->dropped++;
		r->dropped++;
		/* as the module at a refused write: slots, predictions and pending ENTERs go */
		memset(cs->rets, 0, sizeof(cs->rets));
		memset(cs->pred, 0, sizeof(cs->pred));
		cs->last_func = 0;
		if (cs->nebits) {
			memset(cs->ebits, 0, sizeof(cs->ebits));
			cs->nebits = 0;
			cs->epos = 0;
			cs->dropped++;
			r->dropped++;
		}
		return;
	}
	if (cs->dropped && type != PT_REC_LOSS) {
		uint64_t loss[2] = { cs->dropped, 0 };

		cs->dropped = 0;
		add_rec(x, cpu, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
		if (r->nomem)
			return;
		/* As the module: reopen the current owner's segment after a loss. */
		if (cs->owner != UINT64_MAX) {
			uint64_t body[2] = { cs->owner, ++x->clock };

			add_rec(x, cpu, PT_REC_OWNER, cpu, body, 2);
			if (r->nomem)
				return;
			if (cs->dropped) {	/* that OWNER was refused: so is this record */
				cs->dropped++;
				r->dropped++;
				return;
			}
		}
	}

	if (r->nrecs == r->cap) {
		uint64_t cap = r->cap ? r->cap * 2 : 1024;
		struct synth_rec *n = realloc(r->recs, cap * sizeof(*n));

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
	if (nwords)
		memcpy(rec->payload + 8, body, 8 * nwords);
}

/*
 * The pending bits, with the pending ENTERs as one BITS_ENTERS (as
 * kmod/stream.c pt_flush_bits); enters_only: the ENTERs alone, the bits
 * stay pending (pt_flush_enters).
 */
static void flush_recs(struct exec *x, uint32_t cpu, int enters_only)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint64_t body[1 + SYNTH_EBITS / 64] = { 0 };
	uint32_t nbits = enters_only ? 0 : cs->nacc, w = 0, nebits = cs->nebits;

	if (!nebits && !nbits)
		return;
	if (nbits)
		body[w++] = cs->acc;
	/* taken before the write: its refusal does not count them twice */
	cs->nebits = 0;
	cs->epos = 0;
	if (!nebits) {
		add_rec(x, cpu, PT_REC_BITS, nbits, body, w);
	} else {
		memcpy(body + w, cs->ebits, (nebits + 63) / 64 * 8);
		memset(cs->ebits, 0, sizeof(cs->ebits));
		add_rec(x, cpu, PT_REC_BITS_ENTERS, PT_BITS_ENTERS_ARG(nbits, nebits), body,
			w + (nebits + 63) / 64);
	}
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

	return PT_OWNER_KIND(owner) == PT_OWNER_TASK && t < SYNTH_MAX_TASKS ? x->task_gen[t] : 0;
}

/*
 * What every handler does first: a new owner on this CPU, or a task that
 * migrated since it opened its segment here, closes the old segment.
 */
static void switch_owner(struct exec *x, uint32_t cpu, uint64_t owner)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint64_t body[2], gen = owner_gen(x, owner);

	if (cs->owner == owner && cs->owner_gen == gen)
		return;
	flush(x, cpu);
	if (cs->reg) {
		add_rec(x, cpu, PT_REC_BITS, PT_BITS_PARTIAL, &cs->reg, 1);
		cs->reg = 0;
	}
	body[0] = owner;
	body[1] = ++x->clock;
	add_rec(x, cpu, PT_REC_OWNER, cpu, body, 2);
	cs->owner = owner;
	cs->owner_gen = gen;
}

/* A probe hit of the running task: maybe migrate first, then the owner check. */
static uint32_t handler_cpu(struct exec *x)
{
	if (x->o->nr_cpus > 1 && below(x->rng, 100) < x->o->migrate_pct) {
		uint32_t old = x->cur, t = PT_OWNER_ID(x->owner) - 100;

		x->cur = (x->cur + 1 + below(x->rng, x->o->nr_cpus - 1)) % x->o->nr_cpus;
		if (t < SYNTH_MAX_TASKS)
			x->task_gen[t]++;
		if (below(x->rng, 100) < x->o->irq_pct)
			switch_owner(x, old, PT_OWNER(PT_OWNER_HARDIRQ, old));
	}
	switch_owner(x, x->cur, x->owner);
	return x->cur;
}

static void truth(struct exec *x, uint32_t type, uint32_t func, uint32_t block, uint32_t edge)
{
	struct synth_run *r = x->r;

	if (x->o->no_truth) {
		r->blocks += type == REGEN_EV_BLOCK;
		return;
	}
	if (r->ntruth == r->cap_truth) {
		uint64_t cap = r->cap_truth ? r->cap_truth * 2 : 1024;
		struct synth_truth_ev *n = realloc(r->truth, cap * sizeof(*n));
		uint64_t *no = realloc(r->truth_owner, cap * sizeof(*no));

		if (no)
			r->truth_owner = no;
		if (!n || !no) {
			if (n)
				r->truth = n;
			r->nomem = 1;
			return;
		}
		r->truth = n;
		r->cap_truth = cap;
	}
	r->truth_owner[r->ntruth] = x->owner;
	r->truth[r->ntruth++] = (struct synth_truth_ev){ type, func, block, edge };
	if (type == REGEN_EV_BLOCK)
		r->blocks++;
}

/* Whether addr lies in one of the program's (traced) functions, as kmod/ranges.c tells. */
static int traced_code(const struct synth_program *p, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (addr >= p->funcs[i].addr && addr <= p->funcs[i].addr + p->funcs[i].len)
			return 1;
	return 0;
}

static void ebits_put(struct cpu_state *cs, uint64_t v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++, cs->nebits++)	/* bit by bit: it is the oracle */
		cs->ebits[cs->nebits / 64] |= ((v >> i) & 1) << (cs->nebits % 64);
}

/*
 * Appends an ENTER's code to cpu's pending ones, as kmod/stream.c
 * pt_add_enter (pathtrace_abi.h PT_REC_BITS_ENTERS): kind 2 untraced
 * caller (1 when predicted), 4 slot, 0 return address given.
 */
static void pend_enter(struct exec *x, uint32_t cpu, uint32_t func_id, uint32_t pending,
		       uint32_t kind, uint32_t slot, uint32_t ret_lo)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t adv, q, k = 0, id = func_id + 1;

	if (cs->nebits + SYNTH_ENTER_CODE_MAX > SYNTH_EBITS)
		flush_recs(x, cpu, 1);
	adv = pending - cs->epos;
	cs->epos = pending;
	if (kind == 2 && cs->last_func && cs->pred[cs->last_func % PT_ENTERS_PRED] == func_id)
		kind = 1;
	ebits_put(cs, kind, kind == 1 ? 1 : kind == 2 ? 2 : 3);
	for (q = adv >> PT_ENTERS_RICE_K; q; q--)
		ebits_put(cs, 1, 1);
	ebits_put(cs, 0, 1);
	ebits_put(cs, adv, PT_ENTERS_RICE_K);
	if (kind != 1) {
		while (id >> (k + 1))
			k++;
		ebits_put(cs, 0, k);
		ebits_put(cs, 1, 1);
		ebits_put(cs, id, k);
	}
	if (kind == 4)
		ebits_put(cs, slot, 6);
	else if (kind == 0)
		ebits_put(cs, ret_lo, 32);
	cs->pred[cs->last_func % PT_ENTERS_PRED] = func_id;
	cs->last_func = func_id;
}

/*
 * An ENTER as the module writes it (kmod/stream.c): coded with the bits
 * pending at it (BITS_ENTERS), without a return address when the caller is
 * outside the traced code or this CPU's slot already holds it, else with
 * one, which fills the slot at once (a refused write empties them all). A
 * func_id of 2^20 or more: the pending ENTERs, then an ENTER_AT record.
 */
static void add_enter(struct exec *x, uint32_t cpu, uint32_t func_id, uint64_t ret_addr)
{
	struct cpu_state *cs = &x->cpu[cpu];
	uint32_t lo = ret_addr >> 32 == 0xffffffffu ? (uint32_t)ret_addr : 0;
	uint32_t slot = PT_ENTER_S_SLOT(lo), pending = cs->nacc;
	uint64_t before = x->r->nrecs, body = (uint64_t)lo | (uint64_t)pending << 32;

	if (func_id < (1u << 20)) {
		if (!lo || !traced_code(x->p, ret_addr)) {
			pend_enter(x, cpu, func_id, pending, 2, 0, 0);
		} else if (cs->rets[slot] == lo) {
			pend_enter(x, cpu, func_id, pending, 4, slot, 0);
		} else {
			pend_enter(x, cpu, func_id, pending, 0, 0, lo);
			cs->rets[slot] = lo;
		}
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
}

/* Runs the site actions of insn i (taken: the edge leaving the block, for `when`). */
static void run_insn(struct exec *x, const struct synth_func *f, uint32_t i, uint32_t edge_out,
		     uint64_t ret_addr)
{
	const struct plan *pl = &f->plan;
	uint32_t s = f->site_of_insn[i], v = f->verify_of_insn[i], k, cpu;
	int taken = edge_out != UINT32_MAX && f->cfg.edges[edge_out].kind == CFG_E_TAKEN;

	if (!s && !v)
		return;
	cpu = handler_cpu(x);
	if (s) {
		const struct pt_site *site = &pl->sites[s - 1];

		for (k = 0; k < site->nr_actions; k++) {
			const struct pt_action *a = &pl->actions[site->first_action + k];
			struct cpu_state *cs = &x->cpu[cpu];

			if (a->when == PT_WHEN_TAKEN && !taken)
				continue;
			if (a->when == PT_WHEN_NOT_TAKEN && taken)
				continue;
			switch (a->op) {
			case PT_OP_ENTER:
				add_enter(x, cpu, f->func_id, ret_addr);
				break;
			case PT_OP_EMIT:
				emit_bits(x, cpu, a->nbits, a->value);
				break;
			case PT_OP_PATH_ADD:
				cs->reg += a->value;
				break;
			case PT_OP_PATH_EMIT:
				emit_bits(x, cpu, a->nbits, cs->reg + a->value);
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

static uint32_t choose_edge(struct exec *x, const struct synth_func *f, uint32_t b)
{
	const struct cfg_block *bl = &f->cfg.blocks[b];
	uint32_t i, best = bl->first_succ;

	if (x->steps < x->o->max_steps)
		return bl->first_succ + below(x->rng, bl->nsucc);
	for (i = 0; i < bl->nsucc; i++) {	/* over budget: head for EXIT */
		uint32_t d = f->cfg.edges[bl->first_succ + i].dst;
		uint32_t bd = f->cfg.edges[best].dst;
		uint32_t dd = d >= f->cfg.nblocks ? 0 : f->dist[d] + 1;
		uint32_t db = bd >= f->cfg.nblocks ? 0 : f->dist[bd] + 1;

		if (dd < db)
			best = bl->first_succ + i;
	}
	return best;
}

/* The function edge e (into EXIT) tail-calls, or UINT32_MAX for a return. */
static uint32_t tail_target(const struct synth_program *p, const struct synth_func *f,
			    uint32_t e)
{
	const struct cfg_block *bl = &f->cfg.blocks[f->cfg.edges[e].src];
	const struct cfg_insn *last = &f->cfg.insns[bl->first_insn + bl->ninsn - 1];

	if (!(last->kind == CFG_I_TAIL_CALL ||
	      (last->kind == CFG_I_JCC && (last->flags & CFG_IF_LEAVES) &&
	       f->cfg.edges[e].kind == CFG_E_TAKEN)))
		return UINT32_MAX;
	if (last->target < SYNTH_BASE || (last->target - SYNTH_BASE) % SYNTH_STRIDE ||
	    (last->target - SYNTH_BASE) / SYNTH_STRIDE >= p->nfuncs)
		return UINT32_MAX;
	return (uint32_t)((last->target - SYNTH_BASE) / SYNTH_STRIDE);
}

static void run_func(struct exec *x, uint32_t fi, uint64_t ret_addr)
{
	const struct synth_func *f = &x->p->funcs[fi];
	uint32_t b = 0, in_edge = UINT32_MAX, out, tail;

	truth(x, REGEN_EV_ENTER, f->func_id, 0, UINT32_MAX);
	for (;;) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		uint32_t i;

		out = choose_edge(x, f, b);
		truth(x, REGEN_EV_BLOCK, f->func_id, b, in_edge);
		x->steps++;
		for (i = 0; i < bl->ninsn; i++) {
			uint32_t ii = bl->first_insn + i;

			run_insn(x, f, ii, i + 1 == bl->ninsn ? out : UINT32_MAX, ret_addr);
			if (i + 1 == bl->ninsn && f->callee[b] != UINT32_MAX)
				run_func(x, f->callee[b], f->cfg.insns[ii].addr + f->cfg.insns[ii].len);
		}
		if (f->cfg.edges[out].dst >= f->cfg.nblocks)
			break;
		in_edge = out;
		b = f->cfg.edges[out].dst;
	}
	truth(x, REGEN_EV_EXIT, f->func_id, 0, UINT32_MAX);
	tail = tail_target(x->p, f, out);
	if (tail != UINT32_MAX)		/* runs in its place, returning where it would have */
		run_func(x, tail, ret_addr);
}

int synth_execute(const struct synth_program *p, const struct synth_run_opts *o, uint64_t *rng,
		  struct synth_run *r)
{
	struct exec x;
	uint64_t a;
	uint32_t c;

	memset(&x, 0, sizeof(x));
	x.p = p;
	x.o = o;
	x.rng = rng;
	x.r = r;
	for (c = 0; c < 8; c++)
		x.cpu[c].owner = UINT64_MAX;
	for (a = 0; a < o->activations && !r->nomem; a++) {
		x.owner = PT_OWNER(PT_OWNER_TASK, 100 + below(rng, o->ntasks ? o->ntasks : 1));
		x.cur = below(rng, o->nr_cpus ? o->nr_cpus : 1);
		x.steps = 0;
		/* The activation's caller is untraced code. */
		run_func(&x, below(rng, p->nfuncs), 0xffffffff81000000ull + below(rng, 4096));
		/* Another owner runs between activations: the task's segment is closed. */
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
		if (x.cpu[c].dropped) {
			uint64_t loss[2] = { x.cpu[c].dropped, 0 };

			x.cpu[c].dropped = 0;
			add_rec(&x, c, PT_REC_LOSS, PT_LOSS_OVERRUN, loss, 2);
		}
	}
	return r->nomem ? -PT_ENOMEM : 0;
}

void synth_run_free(struct synth_run *r)
{
	free(r->recs);
	free(r->truth);
	free(r->truth_owner);
	memset(r, 0, sizeof(*r));
}
