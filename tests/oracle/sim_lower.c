// SPDX-License-Identifier: GPL-2.0
/*
 * Lowering (sim.h): a generated program as x86-64 machine code, recovered
 * by the real CFG builder and planned by the real planner, so that the
 * round trips and benchmarks check the library on the code it would see.
 *
 * Each abstract vertex becomes: 0..2 plain instructions, its call (direct
 * e8 to a program function or to SIM_EXTERN, or `call *%rax` for an
 * indirect one), then one branch per out-edge: a Jcc for all but the last,
 * and for the last a fall-through (its target is laid out next), a ret, a
 * jmp to a function (tail call) or a jmp. A Jcc into EXIT is a conditional
 * tail call, or a jump to one shared ret. So a multiway branch becomes a
 * chain of Jcc blocks and a call with several successors a call block and
 * a branch block: the recovered CFG refines the abstract graph, keeping
 * every path, and the executor walks the recovered one (what pathregen
 * models: block b is vertex b, cfg edge e is edge e).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/entry_witness.h>
#include <pathtrace/error.h>
#include <pathtrace/tracefile.h>

#include "sim.h"

static const uint8_t plain[][4] = {
	{ 3, 0x48, 0x89, 0xf8 },	/* mov %rdi,%rax */
	{ 3, 0x48, 0x85, 0xc0 },	/* test %rax,%rax */
	{ 1, 0x90 },			/* nop */
	{ 3, 0x48, 0x01, 0xf8 },	/* add %rdi,%rax */
};

/* A rel32 to resolve once every label is placed. */
struct fixup {
	uint32_t at;		/* offset of the rel32 */
	uint64_t to;		/* absolute target, or label of vertex `vertex` */
	uint32_t vertex;	/* GRAPH_NONE: `to` is absolute */
};

struct emit {
	uint8_t *code;
	uint32_t off, cap;
	struct fixup *fx;
	uint32_t nfx;
	int overflow;
};

static void put(struct emit *em, const void *bytes, uint32_t n)
{
	if (em->off + n + 16 > em->cap) {	/* room for the int3 padding */
		em->overflow = 1;
		return;
	}
	memcpy(em->code + em->off, bytes, n);
	em->off += n;
}

/* opcode bytes, then a rel32 to `to` (absolute) or to vertex's label. */
static void branch(struct emit *em, const uint8_t *op, uint32_t nop, uint64_t to, uint32_t vertex)
{
	static const uint8_t zero[4];

	put(em, op, nop);
	if (em->overflow)
		return;
	em->fx[em->nfx++] = (struct fixup){ em->off, to, vertex };
	put(em, zero, 4);
}

static uint64_t func_addr(uint32_t fi)
{
	return SIM_BASE + fi * SIM_STRIDE;
}

/* The code of function fi (its abstract graph); 0 or -PT_EREFUSED (too large) / -PT_ENOMEM. */
static int gen_code(struct sim_program *p, uint32_t fi, uint64_t *rng)
{
	struct sim_func *f = &p->funcs[fi];
	const struct graph *g = &f->g;
	uint32_t *order = malloc((g->nv + 1) * sizeof(*order)), *label = NULL;
	uint32_t n = 0, i, k, v, ret_label = GRAPH_NONE;
	struct emit em = { 0 };
	int err = -PT_ENOMEM;

	em.cap = (uint32_t)(SIM_STRIDE - 0x100);
	em.code = calloc(1, em.cap);
	em.fx = malloc(((size_t)g->ne + g->nv + 1) * sizeof(*em.fx));
	label = malloc((g->nv + 1) * sizeof(*label));
	if (!order || !em.code || !em.fx || !label)
		goto out;
	for (v = 0; v < g->nv; v++)
		if (v != g->exit)
			order[n++] = v;
	/* The fentry site: a 5-byte nop; jumps to ENTRY land after it. */
	put(&em, "\x0f\x1f\x44\x00\x00", 5);
	for (i = 0; i < n && !em.overflow; i++) {
		uint32_t next = i + 1 < n ? order[i + 1] : GRAPH_NONE, last = GRAPH_NONE;
		uint32_t nplain = sim_below(rng, 3), first = g->out_start[v = order[i]];
		uint32_t deg = graph_out_degree(g, v);

		label[v] = em.off;
		for (k = 0; k < nplain; k++) {
			const uint8_t *pi = plain[sim_below(rng, 4)];

			put(&em, pi + 1, pi[0]);
		}
		if (g->vflags[v] & GRAPH_V_CALL) {
			uint32_t c = f->callee[v];

			if (c == SIM_CALL_INDIRECT)
				put(&em, "\xff\xd0", 2);	/* call *%rax */
			else
				branch(&em, (const uint8_t *)"\xe8", 1,
				       c == SIM_CALL_NONE ? SIM_EXTERN : func_addr(c), GRAPH_NONE);
		}
		/* the last branch: a fall-through if it can be, else a ret, a tail jmp, a jmp */
		for (k = 0; k < deg && last == GRAPH_NONE; k++)
			if (g->edges[g->out_edges[first + k]].dst == next)
				last = k;
		for (k = 0; k < deg && last == GRAPH_NONE; k++)
			if (g->edges[g->out_edges[first + k]].dst == g->exit &&
			    f->tail[g->out_edges[first + k]] == SIM_CALL_NONE)
				last = k;
		if (last == GRAPH_NONE)
			last = deg - 1;
		for (k = 0; k < deg; k++) {
			uint32_t e = g->out_edges[first + (k < last ? k : k + 1 < deg ? k + 1 : last)];
			uint32_t d = g->edges[e].dst;
			uint8_t jcc[2] = { 0x0f, (uint8_t)(0x80 + sim_below(rng, 16)) };

			if (k + 1 < deg) {	/* a Jcc */
				if (d != g->exit)
					branch(&em, jcc, 2, 0, d);
				else if (f->tail[e] != SIM_CALL_NONE)
					branch(&em, jcc, 2, func_addr(f->tail[e]), GRAPH_NONE);
				else	/* a conditional return: to the shared ret */
					branch(&em, jcc, 2, 0, ret_label = g->exit);
			} else if (d == next) {
				;	/* falls through */
			} else if (d != g->exit) {
				branch(&em, (const uint8_t *)"\xe9", 1, 0, d);
			} else if (f->tail[e] != SIM_CALL_NONE) {
				branch(&em, (const uint8_t *)"\xe9", 1, func_addr(f->tail[e]),
				       GRAPH_NONE);
			} else {
				put(&em, "\xc3", 1);
			}
		}
	}
	if (ret_label != GRAPH_NONE) {	/* the shared ret the conditional returns jump to */
		label[g->exit] = em.off;
		put(&em, "\xc3", 1);
	}
	if (em.overflow) {
		err = -PT_EREFUSED;
		goto out;
	}
	for (i = 0; i < em.nfx; i++) {
		uint64_t to = em.fx[i].vertex == GRAPH_NONE ? em.fx[i].to :
			      f->addr + label[em.fx[i].vertex];
		int32_t rel = (int32_t)(int64_t)(to - (f->addr + em.fx[i].at + 4));

		memcpy(em.code + em.fx[i].at, &rel, 4);
	}
	/* int3 padding, as after kernel functions */
	memset(em.code + em.off, 0xcc, 8);
	free(f->code);
	f->code = em.code;
	f->len = em.off;
	em.code = NULL;
	err = 0;
out:
	free(order);
	free(label);
	free(em.code);
	free(em.fx);
	return err;
}

static const char *name_at(void *ctx, uint64_t addr)
{
	const struct sim_program *p = ctx;
	uint64_t i;

	if (addr == SIM_EXTERN)
		return "sim_extern";
	if (addr < SIM_BASE || (addr - SIM_BASE) % SIM_STRIDE)
		return NULL;
	i = (addr - SIM_BASE) / SIM_STRIDE;
	return i < p->nfuncs ? p->funcs[i].name : NULL;
}

static int no_noreturn(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 0;
}

/* The program function at addr, or SIM_CALL_NONE. */
static uint32_t func_at(const struct sim_program *p, uint64_t addr)
{
	if (addr < SIM_BASE || (addr - SIM_BASE) % SIM_STRIDE ||
	    (addr - SIM_BASE) / SIM_STRIDE >= p->nfuncs)
		return SIM_CALL_NONE;
	return (uint32_t)((addr - SIM_BASE) / SIM_STRIDE);
}

/* The recovered CFG replaces f's abstract graph and tables. 0 or -PT_ENOMEM. */
static int adopt_cfg(struct sim_program *p, uint32_t fi)
{
	struct sim_func *f = &p->funcs[fi];
	const struct cfg *c = &f->cfg;
	struct graph g;
	uint32_t b, e;

	if (cfg_to_graph(c, &g))
		return -PT_ENOMEM;
	sim_func_free_tables(f);
	f->g = g;
	f->callee = malloc(((size_t)g.nv + 1) * sizeof(*f->callee));
	f->callee_id = malloc(((size_t)g.nv + 1) * sizeof(*f->callee_id));
	f->ret_addr = calloc(g.nv + 1, sizeof(*f->ret_addr));
	f->recursive = calloc(g.nv + 1, 1);
	f->forced_cost = malloc(((size_t)g.nv + 1) * sizeof(*f->forced_cost));
	f->tail = malloc(((size_t)g.ne + 1) * sizeof(*f->tail));
	f->tail_id = malloc(((size_t)g.ne + 1) * sizeof(*f->tail_id));
	if (!f->callee || !f->callee_id || !f->ret_addr || !f->recursive || !f->forced_cost ||
	    !f->tail || !f->tail_id)
		return -PT_ENOMEM;
	for (b = 0; b < g.nv; b++) {
		const struct cfg_insn *last;

		f->callee[b] = SIM_CALL_NONE;
		if (b >= c->nblocks || !(c->blocks[b].flags & CFG_BF_CALL))
			continue;
		last = &c->insns[c->blocks[b].first_insn + c->blocks[b].ninsn - 1];
		f->ret_addr[b] = last->addr + last->len;
		if (last->kind == CFG_I_CALL_INDIRECT) {
			f->callee[b] = SIM_CALL_INDIRECT;
		} else {
			f->callee[b] = func_at(p, last->target);
			/* the generator's only calls to lower or equal indices are bypassable */
			f->recursive[b] = f->callee[b] <= fi;
		}
	}
	for (e = 0; e < g.ne; e++) {
		uint64_t target = 0;

		f->tail[e] = cfg_tail_call(c, e, &target) ? func_at(p, target) : SIM_CALL_NONE;
	}
	sim_func_finish(p, fi);
	return 0;
}

/* f's plan, its blob and site maps. */
static void drop_plan(struct sim_func *f)
{
	plan_free(&f->plan);
	free(f->plan_blob);
	free(f->site_of_insn);
	free(f->verify_of_insn);
	memset(&f->plan, 0, sizeof(f->plan));
	f->plan_blob = NULL;
	f->site_of_insn = f->verify_of_insn = NULL;
}

static void lowered_free(struct sim_func *f)
{
	cfg_free(&f->cfg);
	drop_plan(f);
	free(f->cfg_blob);
	memset(&f->cfg, 0, sizeof(f->cfg));
	f->cfg_blob = NULL;
}

/*
 * f's plan (function fi of the program; entry witnesses and entered calls
 * ewit, may be NULL; implicit entries implicit[0..nimplicit)), its blob
 * and site maps: 0, -PT_EREFUSED, -PT_ENOMEM.
 */
static int plan_func(struct sim_func *f, uint32_t fi, const struct sim_lower_opts *o,
		     const uint8_t *ewit, const struct pt_implicit *implicit, uint32_t nimplicit)
{
	struct plan_opts po;
	uint32_t i;
	int err;

	memset(&po, 0, sizeof(po));
	po.mode = o->mode;
	po.trace.encoding = o->encoding;
	po.func_id = f->func_id;
	po.flags = o->plan_flags;
	if (o->unverified && o->unverified[fi])
		po.flags &= ~(uint32_t)PT_PLAN_VERIFY;
	po.trace.enter_witnessed = ewit;
	po.implicit = implicit;
	po.nimplicit = nimplicit;
	err = plan_build(&f->cfg, &po, &f->plan);
	if (err)
		return err == -PT_ENOMEM ? err : -PT_EREFUSED;
	if (plan_serialize(&f->plan, &f->plan_blob, &f->plan_len))
		return -PT_ENOMEM;
	f->site_of_insn = calloc(f->cfg.ninsns + 1, sizeof(uint32_t));
	f->verify_of_insn = calloc(f->cfg.ninsns + 1, sizeof(uint32_t));
	if (!f->site_of_insn || !f->verify_of_insn)
		return -PT_ENOMEM;
	for (i = 0; i < f->plan.hdr.nr_sites; i++)
		f->site_of_insn[f->plan.site_insn[i]] = i + 1;
	for (i = 0; i < f->plan.hdr.nr_verify; i++)
		f->verify_of_insn[f->plan.verify_insn[i]] = i + 1;
	return 0;
}

/* One attempt at function fi: 0, -PT_EREFUSED (generate it anew), -PT_ENOMEM. */
static int try_func(struct sim_program *p, uint32_t fi, const struct sim_lower_opts *o,
		    uint64_t *rng)
{
	struct sim_func *f = &p->funcs[fi];
	struct cfg_input in;
	int err = gen_code(p, fi, rng);

	if (err)
		return err;
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
	if (!f->traced)
		return 0;
	err = plan_func(f, fi, o, NULL, NULL, 0);
	if (err)
		return err;
	return cfg_blob_encode(&f->cfg, &f->cfg_blob, &f->cfg_len) ? -PT_ENOMEM : 0;
}

/*
 * Implicit entries of f (as enable's implicit_entries): the direct call
 * sites of every traced function that calls f (plan_build sorts them).
 * *m is NULL when there are none. Returns 0 or -PT_ENOMEM.
 */
static int implicit_of(const struct sim_program *p, uint32_t fi, struct pt_implicit **m,
		       uint32_t *n)
{
	uint32_t i, b, cap = 0;

	*m = NULL;
	*n = 0;
	for (i = 0; i < p->nfuncs; i++) {
		const struct sim_func *g = &p->funcs[i];

		for (b = 0; g->traced && b < g->cfg.nblocks; b++) {
			struct pt_implicit x = { .ret = g->ret_addr[b], .caller_id = g->func_id };

			if (g->callee[b] != fi)
				continue;
			if (*n == cap) {
				struct pt_implicit *q;

				cap = cap ? 2 * cap : 8;
				q = realloc(*m, cap * sizeof(*q));
				if (!q) {
					free(*m);
					*m = NULL;
					return -PT_ENOMEM;
				}
				*m = q;
			}
			(*m)[(*n)++] = x;
		}
	}
	return 0;
}

/*
 * sim_func.implicit of every traced caller, from its callees' plans: the
 * calls whose ENTER sim_kmod leaves out, as the module does (the truth
 * marks those ENTERs, which no record proves). Returns 0 or -PT_ENOMEM.
 */
static int mark_implicit(struct sim_program *p)
{
	uint32_t i, b, c;

	for (i = 0; i < p->nfuncs; i++) {
		struct sim_func *f = &p->funcs[i];

		free(f->implicit);
		f->implicit = NULL;
		if (!f->traced)
			continue;
		f->implicit = calloc(f->g.nv + 1, 1);
		if (!f->implicit)
			return -PT_ENOMEM;
		for (b = 0; b < f->cfg.nblocks; b++) {
			c = f->callee[b];
			if (c < p->nfuncs && p->funcs[c].traced)
				f->implicit[b] = plan_implicit_has(p->funcs[c].plan.implicit,
								   p->funcs[c].plan.hdr.nr_implicit,
								   f->ret_addr[b], f->func_id);
		}
	}
	return 0;
}

/*
 * sim_lower_opts.entry_witnesses or .implicit_entries: the traced
 * functions planned again with the calls to traced, closed callees
 * (entry_witness.h, the closure over every traced function, as enable and
 * pathregen compute it) as entry witnesses (--explicit-entries) or as
 * entered calls, with implicit entries (the default). A function the
 * planner refuses so keeps its plan without them (exact: the reader may
 * find more than a plan assumed; its callees then write its ENTERs).
 */
static int plan_entry_witnesses(struct sim_program *p, const struct sim_lower_opts *o)
{
	const struct cfg **cfgs = calloc(p->nfuncs + 1, sizeof(*cfgs));
	uint64_t *addr = calloc(p->nfuncs + 1, sizeof(*addr));
	uint8_t *closed = calloc(p->nfuncs + 1, 1);
	uint8_t kind = o->implicit_entries ? ENC_CALL_ENTERED : ENC_CALL_WITNESS;
	/* entry witnesses: witness encoding only; entered calls: either */
	int witness = o->mode == PT_MODE_TRACE &&
		      (o->encoding == PT_ENC_WITNESS || o->implicit_entries);
	uint32_t n = 0, i, b;
	int err = 0;

	if (!cfgs || !addr || !closed) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nfuncs; i++) {
		if (!p->funcs[i].traced)
			continue;
		cfgs[n] = &p->funcs[i].cfg;
		addr[n++] = p->funcs[i].addr;
	}
	err = entry_closed_cfgs(n, cfgs, addr, closed);
	for (i = 0; i < p->nfuncs && !err; i++) {
		struct sim_func *f = &p->funcs[i];
		struct pt_implicit *m = NULL;
		uint32_t nw = 0, nm = 0, nblocked = 0;
		uint8_t *ewit;

		if (!f->traced)
			continue;
		ewit = calloc(f->cfg.nblocks + 1, 1);
		if (!ewit || (o->implicit_entries && implicit_of(p, i, &m, &nm))) {
			free(ewit);
			err = -PT_ENOMEM;
			break;
		}
		entry_witnessed_calls(&f->cfg, n, addr, closed, ewit);
		for (b = 0; b < f->cfg.nblocks; b++) {
			ewit[b] = ewit[b] && witness ? kind : ENC_CALL_LOUD;
			/*
			 * framed: a call its traced callee lists (implicit_of:
			 * every direct call from a traced function) is named by
			 * no ENTER: blocked unless entered (as enable plans it)
			 */
			if ((o->plan_flags & PT_PLAN_FRAMED) && o->implicit_entries &&
			    ewit[b] == ENC_CALL_LOUD && (f->cfg.blocks[b].flags & CFG_BF_CALL) &&
			    f->callee[b] < p->nfuncs && p->funcs[f->callee[b]].traced)
				ewit[b] = ENC_CALL_BLOCKED;
			nw += ewit[b] != 0;
			nblocked += ewit[b] == ENC_CALL_BLOCKED;
		}
		if (nw || nm) {
			struct sim_func nf = *f;	/* the same function, planned anew */

			memset(&nf.plan, 0, sizeof(nf.plan));
			nf.plan_blob = NULL;
			nf.site_of_insn = nf.verify_of_insn = NULL;
			err = plan_func(&nf, i, o, ewit, m, nm);
			if (err == -PT_EREFUSED && nm) {
				/*
				 * without the entered calls, keeping the implicit
				 * entries (framed: their calls blocked, as no ENTER
				 * names them)
				 */
				for (b = 0; b < f->cfg.nblocks; b++)
					ewit[b] = (o->plan_flags & PT_PLAN_FRAMED) &&
						  (ewit[b] == ENC_CALL_ENTERED ||
						   ewit[b] == ENC_CALL_BLOCKED) ?
						  ENC_CALL_BLOCKED : ENC_CALL_LOUD;
				drop_plan(&nf);
				err = plan_func(&nf, i, o, ewit, m, nm);
				nw = nblocked = 0;
			}
			drop_plan(err ? &nf : f);
			if (!err) {
				nf.implicit = NULL;	/* mark_implicit sets it */
				*f = nf;
				if (o->implicit_entries)
					p->entered_calls += nw - nblocked;
				else
					p->entry_witnesses += nw;
			}
			if (err == -PT_EREFUSED)
				err = 0;
		}
		free(m);
		free(ewit);
	}
out:
	free(cfgs);
	free(addr);
	free(closed);
	return err ? err : mark_implicit(p);
}

int sim_lower(struct sim_program *p, const struct sim_lower_opts *o, uint64_t *rng)
{
	uint32_t i, tries;
	int err = 0;

	p->mode = o->mode;
	p->encoding = o->encoding;
	p->plan_flags = o->plan_flags;
	/* ENTERs name frames while a framed plan is installed (the module's rule) */
	p->frames = (o->plan_flags & PT_PLAN_FRAMED) != 0;
	for (i = 0; i < p->nfuncs; i++) {
		p->funcs[i].addr = func_addr(i);
		snprintf(p->funcs[i].name, sizeof(p->funcs[i].name), "sim_fn%u", i);
	}
	/* Callers' CFGs need their callees' names only, so any order does. */
	for (i = 0; i < p->nfuncs && !err; i++) {
		for (tries = 0; tries < 1000; tries++) {
			err = try_func(p, i, o, rng);
			if (err != -PT_EREFUSED)
				break;
			lowered_free(&p->funcs[i]);
			err = sim_regenerate_func(p, i, rng);
			if (err)
				break;
			err = -PT_EREFUSED;
		}
		if (!err)
			err = adopt_cfg(p, i);
	}
	if (!err && ((o->entry_witnesses && o->mode == PT_MODE_TRACE) ||
		     (o->implicit_entries && o->mode != PT_MODE_EDGES)))
		err = plan_entry_witnesses(p, o);
	p->lowered = !err;
	return err;
}

int sim_generate_lowered(struct sim_program *p, uint64_t *rng, const struct sim_gen_opts *g,
			 const struct sim_lower_opts *o)
{
	int err = sim_generate_opts(p, rng, g);

	if (!err)
		err = sim_lower(p, o, rng);
	if (err && p->funcs)
		sim_free(p);
	return err;
}
