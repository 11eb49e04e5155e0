// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's module back end (sim.h): the kernel module's handlers
 * (kmod/handlers.c) emulated on the executor's walk of a lowered program,
 * over the module's own stream coder (trace-format/coder/coder.h). At each
 * block of a traced activation the probes of its instructions run as the
 * module's would: their actions go to the coder of the CPU the task runs
 * on, with owner switches, task migration between CPUs and interrupts;
 * the coder writes into a simulated ring buffer that refuses writes at
 * random (the coder then counts drops and says them with LOSS). Its output
 * is records; the truth is the executor's.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "pathtrace_abi.h"
#include "coder/coder.h"
#include "sim.h"

/*
 * The coder's settings here: bits written every word and ENTER codes every
 * 512 bits, and pages of a sim_rec's payload, so records hold a few
 * segments and every boundary of the module's coder is crossed often.
 */
#define SIM_BITS_WORDS 1
#define SIM_EBITS_WORDS 8
#define SIM_PAGE_SIZE ((unsigned int)sizeof(((struct sim_rec *)0)->payload))
#define SIM_PAGE_HEAD 16	/* as a ring-buffer page's header */
#define SIM_MAX_CPUS 8

struct exec;

/* One CPU: the module's coder, and the ring buffer it writes to. */
struct sim_cpu {
	struct pt_coder coder;
	struct exec *x;
	uint32_t dropping;	/* reserves still to refuse */
	uint32_t page_used;	/* bytes of the current page taken */
};

struct exec {
	const struct sim_program *p;
	const struct sim_kmod_opts *o;
	uint64_t *rng;
	struct sim_kmod_run *r;
	struct sim_cpu *cpu;	/* SIM_MAX_CPUS */
	struct pt_coder_func *cf;	/* per function: what the coder reads of its plan */
	uint32_t **tops;	/* per function: its rows' top codes and words, or NULL */
	uint32_t **firsts;	/* per function: where its rows' words begin, or NULL */
	struct pt_coder_func_cpu *fc;	/* [cpu * nfuncs + function] */
	uint64_t clock;
	uint64_t owner;		/* the running task */
	uint32_t cur;		/* its cpu */
	uint64_t task_gen[SIM_MAX_TASKS];	/* migrations per task (se.nr_migrations) */
	int framed;		/* a plan has PT_PLAN_FRAMED: ENTERs name frames */
	int stopping;		/* the stop's flush: the reader made room */
};

/*
 * The coder's sink: a ring buffer that is full at random (1..8 reserves in
 * a row refused, never a LOSS: the module's stop writes it into an emptied
 * buffer), in pages of SIM_PAGE_SIZE.
 */
static void *sink_reserve(struct pt_coder *c, u16 type, unsigned int len)
{
	struct sim_cpu *sc = (struct sim_cpu *)((char *)c - offsetof(struct sim_cpu, coder));
	struct exec *x = sc->x;
	struct sim_kmod_run *r = x->r;
	unsigned int ev = len + (len > 112 ? 8 : 4);
	struct sim_rec *rec;

	if (type != PT_REC_LOSS && !x->stopping && !sc->dropping && x->o->drop_permille &&
	    sim_below(x->rng, 1000) < x->o->drop_permille)
		sc->dropping = 1 + sim_below(x->rng, 8);
	if (type != PT_REC_LOSS && sc->dropping) {
		sc->dropping--;
		return NULL;
	}
	if (len > SIM_PAGE_SIZE || r->nomem)
		return NULL;
	if (r->nrecs == r->cap) {
		uint64_t cap = r->cap ? r->cap * 2 : 1024;
		struct sim_rec *n = realloc(r->recs, cap * sizeof(*n));

		if (!n) {
			r->nomem = 1;
			return NULL;
		}
		r->recs = n;
		r->cap = cap;
	}
	if (sc->page_used + ev > SIM_PAGE_SIZE - SIM_PAGE_HEAD)
		sc->page_used = 0;
	sc->page_used += ev;
	c->page_left = SIM_PAGE_SIZE - SIM_PAGE_HEAD - sc->page_used;
	rec = &r->recs[r->nrecs];
	memset(rec, 0, sizeof(*rec));
	return rec->payload;
}

static void sink_commit(struct pt_coder *c, void *data)
{
	struct sim_cpu *sc = (struct sim_cpu *)((char *)c - offsetof(struct sim_cpu, coder));
	struct sim_rec *rec = &sc->x->r->recs[sc->x->r->nrecs++];
	struct pt_rec h;

	memcpy(&h, data, sizeof(h));
	rec->ts = ++sc->x->clock;
	rec->cpu = c->cpu;
	rec->len = h.len;
}

static const struct pt_coder_sink sim_sink = { sink_reserve, sink_commit };

static struct pt_coder *coder(struct exec *x, uint32_t cpu)
{
	return &x->cpu[cpu].coder;
}

static size_t func_index(const struct exec *x, const struct sim_func *f)
{
	return (size_t)(f - x->p->funcs);
}

static struct pt_coder_func_cpu *func_cpu(struct exec *x, uint32_t cpu, const struct sim_func *f)
{
	return &x->fc[(size_t)cpu * x->p->nfuncs + func_index(x, f)];
}

static uint64_t owner_gen(const struct exec *x, uint64_t owner)
{
	uint32_t t = PT_OWNER_ID(owner) - 100;

	return PT_OWNER_KIND(owner) == PT_OWNER_TASK && t < SIM_MAX_TASKS ? x->task_gen[t] : 0;
}

/*
 * What every handler does first: a new owner on this CPU, or a task that
 * migrated since it opened its segment here, closes the old segment.
 */
static void switch_owner(struct exec *x, uint32_t cpu, uint64_t owner)
{
	uint64_t gen = owner_gen(x, owner);

	if (!pt_coder_owns(coder(x, cpu), owner, gen))
		pt_coder_open(coder(x, cpu), owner, gen, ++x->clock);
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

/* Whether pl's implicit entries list the call site returning to ret. */
static int implicit_entry(const struct plan *pl, uint64_t ret)
{
	uint32_t i;

	for (i = 0; i < pl->hdr.nr_implicit; i++)
		if (pl->implicit[i].ret == ret)
			return 1;
	return 0;
}

/*
 * An ENTER action as kmod/handlers.c runs it: none for a call site the plan
 * lists as an implicit entry (every traced caller here is installed); else
 * the coder's, naming a traced caller by its return address or, with a
 * framed plan installed, an untraced caller by the innermost traced frame
 * (kmod/frames.c). Then, for both, the context of f's first word.
 */
static void run_enter(struct exec *x, uint32_t cpu, const struct sim_func *f,
		      uint64_t ret_addr, uint64_t frame)
{
	struct pt_coder_func_cpu *fc = func_cpu(x, cpu, f);
	const struct pt_coder_func *cf = &x->cf[func_index(x, f)];

	if (!implicit_entry(&f->plan, ret_addr)) {
		uint32_t lo = ret_addr >> 32 == 0xffffffffu && traced_code(x->p, ret_addr) ?
			      (uint32_t)ret_addr : 0;

		if (!lo && x->framed && frame) {
			lo = PT_ENTER_FRAME(frame);
			x->r->nested_enters++;
		}
		pt_coder_enter(coder(x, cpu), cf, fc, lo);
	} else {
		x->r->implicit_enters++;
	}
	pt_coder_ctx_enter(coder(x, cpu), cf, fc);
}

static void run_action(struct exec *x, uint32_t cpu, const struct sim_func *f,
		       const struct pt_action *a)
{
	struct pt_coder_func_cpu *fc = func_cpu(x, cpu, f);
	const struct pt_coder_func *cf = &x->cf[func_index(x, f)];
	struct pt_coder *c = coder(x, cpu);

	switch (a->op) {
	case PT_OP_EMIT:
		pt_coder_word(c, cf, fc, a->arg, a->value, a->nbits);
		break;
	case PT_OP_PATH_ADD:
		pt_coder_path_add(c, a->value);
		break;
	case PT_OP_PATH_EMIT:
		pt_coder_path_emit(c, cf, fc, a->value, a->nbits);
		break;
	case PT_OP_PATH_SET:
		pt_coder_path_set(c, a->value);
		break;
	default:
		break;
	}
}

/*
 * Runs the probe of insn i as kmod/handlers.c does: its site's ENTER, the
 * verify BLOCK, then its site's other actions (taken: the edge leaving the
 * block, for `when`).
 */
static void run_insn(struct exec *x, const struct sim_func *f, uint32_t i, uint32_t edge_out,
		     uint64_t ret_addr, uint64_t frame)
{
	const struct plan *pl = &f->plan;
	uint32_t s = f->site_of_insn[i], v = f->verify_of_insn[i], k = 0, cpu;
	int taken = edge_out != UINT32_MAX && f->cfg.edges[edge_out].kind == CFG_E_TAKEN;
	const struct pt_site *site = s ? &pl->sites[s - 1] : NULL;

	if (!s && !v)
		return;
	cpu = handler_cpu(x);
	if (site) {
		uint8_t on = plan_site_edge(site, pl->actions);

		x->r->site_hits++;
		x->r->inline_site_hits += on == PT_WHEN_ALWAYS || (on == PT_WHEN_TAKEN) == taken;
		/* plan.c lets ENTER only lead its site */
		if (pl->actions[site->first_action].op == PT_OP_ENTER) {
			run_enter(x, cpu, f, ret_addr, frame);
			k = 1;
		}
	}
	if (v)
		pt_coder_block(coder(x, cpu), &x->cf[func_index(x, f)], func_cpu(x, cpu, f),
			       pl->verify[v - 1].block);
	for (; site && k < site->nr_actions; k++) {
		const struct pt_action *a = &pl->actions[site->first_action + k];

		if ((a->when == PT_WHEN_TAKEN && !taken) || (a->when == PT_WHEN_NOT_TAKEN && taken))
			continue;
		run_action(x, cpu, f, a);
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
	uint64_t bits = 0;
	uint32_t c;

	for (c = 0; c < SIM_MAX_CPUS; c++)
		bits += x->cpu[c].coder.counts.bits;
	return bits;
}

/* What the coder reads of traced function i's plan, as kmod/plan.c gives it. */
static int setup_func(struct exec *x, uint32_t i)
{
	const struct plan *pl = &x->p->funcs[i].plan;
	struct pt_coder_func *cf = &x->cf[i];
	uint32_t c;

	cf->func_id = x->p->funcs[i].func_id;
	cf->flags = pl->hdr.flags;
	cf->ctx_next = pl->ctx_next;
	cf->ctx_words = pl->ctx_words;
	cf->nr_ctx_codes = pl->hdr.nr_ctx_codes;
	cf->nr_ctx_words = pl->hdr.nr_ctx_words;
	cf->ctx_word_size = sizeof(struct pt_ctx_word);
	cf->path_codes = pl->path_codes;
	cf->path_ranges = pl->path_ranges;
	cf->nr_path_codes = pl->hdr.nr_path_codes;
	cf->path_code_size = sizeof(struct pt_path_code);
	cf->nr_path_ranges = pl->hdr.nr_path_ranges;
	cf->path_range_size = sizeof(struct pt_path_range);
	if (!pl->hdr.nr_ctx_words)
		return 0;
	cf->nr_ctx_rows = pt_coder_ctx_rows(cf);
	/* the module indexes the rows (kmod/plan.c) up to a bound: both ways here, by function */
	if (!(i & 1)) {
		x->firsts[i] = calloc(cf->nr_ctx_rows + 1, sizeof(uint32_t));
		if (!x->firsts[i])
			return -PT_ENOMEM;
		pt_coder_ctx_first(cf, x->firsts[i]);
		cf->ctx_first = x->firsts[i];
	}
	if (!(pl->hdr.flags & PT_PLAN_CTX_SWAP))
		return 0;
	/* per row its top code, then its word's index (the module's way: kmod/plan.c) */
	x->tops[i] = calloc(2 * (size_t)cf->nr_ctx_rows, sizeof(uint32_t));
	if (!x->tops[i])
		return -PT_ENOMEM;
	pt_coder_ctx_tops(cf, x->tops[i], x->tops[i] + cf->nr_ctx_rows);
	cf->ctx_top = x->tops[i];
	/* the coder finds a top word with a search too: both ways here, by function */
	if (!(i & 2))
		cf->ctx_top_word = x->tops[i] + cf->nr_ctx_rows;
	for (c = 0; c < SIM_MAX_CPUS; c++) {
		struct pt_coder_func_cpu *fc = &x->fc[(size_t)c * x->p->nfuncs + i];

		fc->ctx_last = calloc(cf->nr_ctx_rows, sizeof(struct pt_ctx_last));
		if (!fc->ctx_last)
			return -PT_ENOMEM;
	}
	return 0;
}

static int setup(struct exec *x)
{
	const struct sim_program *p = x->p;
	uint32_t c;
	int err = 0;

	x->cpu = calloc(SIM_MAX_CPUS, sizeof(*x->cpu));
	x->cf = calloc(p->nfuncs + 1, sizeof(*x->cf));
	x->tops = calloc(p->nfuncs + 1, sizeof(*x->tops));
	x->firsts = calloc(p->nfuncs + 1, sizeof(*x->firsts));
	x->fc = calloc((size_t)SIM_MAX_CPUS * p->nfuncs + 1, sizeof(*x->fc));
	if (!x->cpu || !x->cf || !x->tops || !x->firsts || !x->fc)
		return -PT_ENOMEM;
	for (c = 0; c < SIM_MAX_CPUS; c++) {
		struct pt_coder *k = &x->cpu[c].coder;

		x->cpu[c].x = x;
		k->sink = &sim_sink;
		k->cpu = c;
		k->bits_words = SIM_BITS_WORDS;
		k->ebits_words = SIM_EBITS_WORDS;
		k->page_size = SIM_PAGE_SIZE;
		k->pack_max_bits = PT_CODER_PACK_MAX_BITS;
		pt_coder_reset(k);
	}
	for (c = 0; c < p->nfuncs && !err; c++) {
		x->framed |= p->funcs[c].traced && (p->funcs[c].plan.hdr.flags & PT_PLAN_FRAMED);
		if (p->funcs[c].traced)
			err = setup_func(x, c);
	}
	return err;
}

static void teardown(struct exec *x)
{
	uint64_t i;

	for (i = 0; x->fc && i < (uint64_t)SIM_MAX_CPUS * x->p->nfuncs; i++)
		free(x->fc[i].ctx_last);
	for (i = 0; x->tops && i < x->p->nfuncs; i++)
		free(x->tops[i]);
	for (i = 0; x->firsts && i < x->p->nfuncs; i++)
		free(x->firsts[i]);
	free(x->fc);
	free(x->tops);
	free(x->firsts);
	free(x->cf);
	free(x->cpu);
}

/* The coders' counts, into the run's (summed over CPUs). */
static void add_counts(struct sim_kmod_run *r, const struct pt_coder_counts *k)
{
	r->bits += k->bits;
	r->dropped += k->dropped;
	r->packs_multi += k->packs_multi;
	r->packed_dropped += k->packed_dropped;
	r->ctx_words += k->ctx_words;
	r->ctx_swapped += k->ctx_swapped;
	r->ctx_restored += k->ctx_restored;
	r->enter_resets += k->enter_resets;
	r->path_words += k->path_words;
	r->path_escapes += k->path_escapes;
}

int sim_kmod_execute(const struct sim_program *p, const struct sim_kmod_opts *o, uint64_t *rng,
		     struct sim_kmod_run *r, struct sim_truth *t)
{
	struct exec x;
	const struct sim_backend be = { &x, NULL, kmod_vertex, NULL, kmod_pos };
	uint32_t c, ncpus = o->nr_cpus ? o->nr_cpus : 1;
	uint64_t a;
	int err;

	if (!p->lowered || ncpus > SIM_MAX_CPUS)
		return -PT_EINVAL;
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.o = o;
	x.rng = rng;
	x.r = r;
	x.clock = o->clock_start;
	err = setup(&x);
	for (a = 0; a < o->activations && !r->nomem && !err; a++) {
		struct sim_run_opts ro = { .max_depth = o->max_depth ? o->max_depth : 6,
					   .max_steps = o->max_steps };

		x.owner = PT_OWNER(PT_OWNER_TASK, 100 + sim_below(rng, o->ntasks ? o->ntasks : 1));
		x.cur = sim_below(rng, ncpus);
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
	 * Stop: every CPU flushes (the FLUSH IPI, kmod/stream.c) what its
	 * coder keeps back and the drops still pending, into a buffer with
	 * room (at the latest once the reader emptied it, so nothing of this
	 * is refused).
	 */
	for (c = 0; c < ncpus && !err; c++) {
		x.cpu[c].dropping = 0;
		x.stopping = 1;
		pt_coder_flush(coder(&x, c));
	}
	for (c = 0; x.cpu && c < SIM_MAX_CPUS; c++)
		add_counts(r, &x.cpu[c].coder.counts);
	r->clock = x.clock;
	teardown(&x);
	return err ? err : r->nomem ? -PT_ENOMEM : 0;
}

void sim_kmod_run_free(struct sim_kmod_run *r)
{
	free(r->recs);
	memset(r, 0, sizeof(*r));
}
