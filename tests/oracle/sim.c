// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's generator and executor (sim.h): random programs, and
 * random executions of them with their truth, reported to a back end.
 *
 * CFGs are built from structured statements (sequence, if, if-else,
 * switch, while, do-while, break, continue, early return, calls) and then
 * get random gotos (irreducible loops, parallel edges, self-loops). Every
 * vertex is reachable from ENTRY and reaches EXIT, as the paper assumes.
 * Calls that might recurse (direct calls to a function with a lower or equal
 * index) are always bypassable, so "forced" executions (past the depth or
 * step limit) follow the path with the fewest of them and terminate. Tail
 * calls go to higher indices only, so chains of them end. Lowering
 * (sim_lower.c) keeps all of this: the recovered CFG has the same paths.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include "sim.h"

uint64_t sim_rand(uint64_t *rng)
{
	uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint32_t sim_below(uint64_t *rng, uint32_t n)
{
	return n ? (uint32_t)((sim_rand(rng) >> 32) % n) : 0;
}

/* ------------------------------------------------------------ generation */

struct gen {
	struct graph *g;
	uint64_t *rng;
	uint32_t budget;	/* statements left */
	uint32_t depth;
	uint32_t loop_head[16], loop_exit[16], nloops;
	uint32_t fi, nfuncs;
	uint32_t *callee;	/* grows with vertices: set in a second pass */
	int err;
};

static uint32_t new_vertex(struct gen *gn, uint32_t flags)
{
	int64_t v = graph_add_vertex(gn->g, flags);

	if (v < 0) {
		gn->err = -PT_ENOMEM;
		return 0;
	}
	return (uint32_t)v;
}

static void edge(struct gen *gn, uint32_t a, uint32_t b)
{
	if (graph_add_edge(gn->g, a, b) < 0)
		gn->err = -PT_ENOMEM;
}

static uint32_t gen_stmt(struct gen *gn, uint32_t in);

/* A sequence of statements starting at in; returns where control continues. */
static uint32_t gen_seq(struct gen *gn, uint32_t in, uint32_t n)
{
	while (n-- && gn->budget && !gn->err)
		in = gen_stmt(gn, in);
	return in;
}

static uint32_t gen_stmt(struct gen *gn, uint32_t in)
{
	uint32_t r = sim_below(gn->rng, gn->depth > 4 ? 5 : 14), a, b, j, k, n;

	gn->budget--;
	gn->depth++;
	switch (r) {
	case 0:
	case 1:		/* plain block */
		a = new_vertex(gn, 0);
		edge(gn, in, a);
		break;
	case 2:
	case 3:		/* call; it returns to the next block (gotos may join it) */
		a = new_vertex(gn, GRAPH_V_CALL);
		edge(gn, in, a);
		b = new_vertex(gn, 0);
		edge(gn, a, b);
		a = b;
		break;
	case 4:		/* if (c) return;  (an early exit) */
		a = new_vertex(gn, 0);
		edge(gn, in, gn->g->exit);
		edge(gn, in, a);
		break;
	case 5:		/* if-then */
		a = new_vertex(gn, 0);
		j = new_vertex(gn, 0);
		edge(gn, in, a);
		edge(gn, in, j);
		edge(gn, gen_seq(gn, a, 1 + sim_below(gn->rng, 3)), j);
		a = j;
		break;
	case 6:		/* if-then-else */
		a = new_vertex(gn, 0);
		b = new_vertex(gn, 0);
		j = new_vertex(gn, 0);
		edge(gn, in, a);
		edge(gn, in, b);
		edge(gn, gen_seq(gn, a, 1 + sim_below(gn->rng, 3)), j);
		edge(gn, gen_seq(gn, b, 1 + sim_below(gn->rng, 3)), j);
		a = j;
		break;
	case 7:		/* switch with 3..6 cases */
		n = 3 + sim_below(gn->rng, 4);
		j = new_vertex(gn, 0);
		for (k = 0; k < n; k++) {
			a = new_vertex(gn, 0);
			edge(gn, in, a);
			edge(gn, gen_seq(gn, a, sim_below(gn->rng, 2)), j);
		}
		a = j;
		break;
	case 8:
	case 9:		/* while loop */
		a = new_vertex(gn, 0);		/* header */
		b = new_vertex(gn, 0);		/* body */
		j = new_vertex(gn, 0);		/* exit */
		edge(gn, in, a);
		edge(gn, a, b);
		edge(gn, a, j);
		if (gn->nloops < 16) {
			gn->loop_head[gn->nloops] = a;
			gn->loop_exit[gn->nloops++] = j;
		}
		edge(gn, gen_seq(gn, b, 1 + sim_below(gn->rng, 4)), a);
		if (gn->nloops && gn->loop_head[gn->nloops - 1] == a)
			gn->nloops--;
		a = j;
		break;
	case 10:	/* do-while loop */
		b = new_vertex(gn, 0);
		j = new_vertex(gn, 0);
		edge(gn, in, b);
		if (gn->nloops < 16) {
			gn->loop_head[gn->nloops] = b;
			gn->loop_exit[gn->nloops++] = j;
		}
		a = gen_seq(gn, b, 1 + sim_below(gn->rng, 4));
		edge(gn, a, b);
		edge(gn, a, j);
		if (gn->nloops && gn->loop_head[gn->nloops - 1] == b)
			gn->nloops--;
		a = j;
		break;
	case 11:	/* if (c) break; or continue; (multi-exit loops) */
		a = new_vertex(gn, 0);
		edge(gn, in, a);
		if (gn->nloops) {
			k = sim_below(gn->rng, gn->nloops);	/* possibly an outer loop */
			edge(gn, in, sim_below(gn->rng, 2) ? gn->loop_exit[k] : gn->loop_head[k]);
		} else {
			edge(gn, in, gn->g->exit);
		}
		break;
	case 12:	/* a call that may recurse: bypassable */
		a = new_vertex(gn, GRAPH_V_CALL);
		j = new_vertex(gn, 0);
		edge(gn, in, a);
		edge(gn, in, j);
		edge(gn, a, j);
		gn->g->vflags[a] |= 1u << 30;	/* marker for the callee pass, cleared there */
		a = j;
		break;
	default:	/* nested sequence */
		a = gen_seq(gn, in, 1 + sim_below(gn->rng, 3));
		break;
	}
	gn->depth--;
	return a;
}

#define SIM_V_MAYRECURSE (1u << 30)

/* Forced-mode cost to EXIT: recursive calls weigh more than any path length. */
static void forced_costs(struct sim_func *f)
{
	const struct graph *g = &f->g;
	uint64_t big = (uint64_t)g->nv + 1;
	uint32_t v, k, changed = 1;

	for (v = 0; v < g->nv; v++)
		f->forced_cost[v] = v == g->exit ? 0 : UINT64_MAX;
	while (changed) {
		changed = 0;
		for (v = 0; v < g->nv; v++) {
			uint64_t here = f->recursive[v] ? big : 0;

			for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
				uint64_t c = f->forced_cost[g->edges[g->out_edges[k]].dst];

				if (c != UINT64_MAX && c + 1 + here < f->forced_cost[v]) {
					f->forced_cost[v] = c + 1 + here;
					changed = 1;
				}
			}
		}
	}
}

static int gen_func(struct sim_program *p, uint32_t fi, uint64_t *rng)
{
	uint32_t max_stmts = p->gen.max_stmts ? p->gen.max_stmts : 1;
	struct sim_func *f = &p->funcs[fi];
	struct gen gn;
	uint32_t out, v, ngoto, i;

	memset(&gn, 0, sizeof(gn));
	graph_init(&f->g);
	gn.g = &f->g;
	gn.rng = rng;
	gn.fi = fi;
	gn.nfuncs = p->nfuncs;
	gn.budget = 1 + sim_below(rng, max_stmts);
	new_vertex(&gn, 0);	/* ENTRY = 0 */
	new_vertex(&gn, 0);	/* EXIT = 1 */
	if (gn.err)
		return gn.err;
	f->g.exit = 1;
	/* ENTRY as a call vertex now and then */
	if (!sim_below(rng, 8))
		f->g.vflags[0] |= GRAPH_V_CALL;
	out = gen_seq(&gn, 0, gn.budget);
	edge(&gn, out, 1);
	/* gotos: irreducible loops, parallel edges and self-loops */
	ngoto = sim_below(rng, 4) ? 0 : 1 + sim_below(rng, 3);
	for (i = 0; i < ngoto && !gn.err; i++) {
		uint32_t a = sim_below(rng, f->g.nv), b = sim_below(rng, f->g.nv);

		if (a == 1)
			a = 0;
		edge(&gn, a, b == 0 && sim_below(rng, 2) ? 1 : b);
	}
	if (gn.err)
		return gn.err;
	if (graph_finish(&f->g, 0, 1))
		return -PT_ENOMEM;
	f->callee = malloc(((size_t)f->g.nv + 1) * sizeof(*f->callee));
	f->callee_id = malloc(((size_t)f->g.nv + 1) * sizeof(*f->callee_id));
	f->ret_addr = calloc(f->g.nv + 1, sizeof(*f->ret_addr));
	f->recursive = calloc(f->g.nv + 1, 1);
	f->forced_cost = malloc(((size_t)f->g.nv + 1) * sizeof(*f->forced_cost));
	f->tail = malloc(((size_t)f->g.ne + 1) * sizeof(*f->tail));
	f->tail_id = malloc(((size_t)f->g.ne + 1) * sizeof(*f->tail_id));
	if (!f->callee || !f->callee_id || !f->ret_addr || !f->recursive || !f->forced_cost ||
	    !f->tail || !f->tail_id)
		return -PT_ENOMEM;
	/* About a third of the edges into EXIT are tail calls to a later function. */
	for (i = 0; i < f->g.ne; i++) {
		f->tail[i] = SIM_CALL_NONE;
		if (f->g.edges[i].dst == f->g.exit && fi + 1 < p->nfuncs && !sim_below(rng, 3))
			f->tail[i] = fi + 1 + sim_below(rng, p->nfuncs - fi - 1);
	}
	for (v = 0; v < f->g.nv; v++) {
		f->callee[v] = SIM_CALL_NONE;
		if (!(f->g.vflags[v] & GRAPH_V_CALL))
			continue;
		f->ret_addr[v] = ((uint64_t)(fi + 1) << 32) | ((uint64_t)v << 4) | 5;
		if (f->g.vflags[v] & SIM_V_MAYRECURSE) {
			/* direct call to any function at or below fi (recursion) */
			f->callee[v] = sim_below(rng, fi + 1);
			f->recursive[v] = 1;
		} else {
			uint32_t r = sim_below(rng, 4);

			if (p->gen.closed && fi + 1 >= p->nfuncs) {
				f->g.vflags[v] &= ~GRAPH_V_CALL;	/* nothing closed to call */
				f->ret_addr[v] = 0;
			} else if (p->gen.closed) {
				f->callee[v] = fi + 1 + sim_below(rng, p->nfuncs - fi - 1);
			} else if (r == 0 || fi + 1 >= p->nfuncs) {
				f->callee[v] = r == 1 ? SIM_CALL_INDIRECT : SIM_CALL_NONE;
			} else if (r == 1) {
				f->callee[v] = SIM_CALL_INDIRECT;
			} else {
				f->callee[v] = fi + 1 + sim_below(rng, p->nfuncs - fi - 1);
			}
		}
		f->g.vflags[v] &= ~SIM_V_MAYRECURSE;
	}
	forced_costs(f);
	return 0;
}

/* callee_id and tail_id of function fi, from the callees' traced flags */
static void link_ids(struct sim_program *p, uint32_t fi)
{
	struct sim_func *f = &p->funcs[fi];
	uint32_t v, e;

	for (v = 0; v < f->g.nv; v++) {
		uint32_t c = f->callee[v];

		f->callee_id[v] = c < p->nfuncs && p->funcs[c].traced ? p->funcs[c].func_id :
									UINT32_MAX;
	}
	for (e = 0; e < f->g.ne; e++) {
		uint32_t c = f->tail[e];

		f->tail_id[e] = c == SIM_CALL_NONE ? REGEN_TAIL_NONE :
				p->funcs[c].traced ? p->funcs[c].func_id : REGEN_TAIL_OTHER;
	}
}

void sim_func_free_tables(struct sim_func *f)
{
	graph_free(&f->g);
	free(f->callee);
	free(f->callee_id);
	free(f->ret_addr);
	free(f->implicit);
	f->implicit = NULL;
	free(f->recursive);
	free(f->forced_cost);
	free(f->tail);
	free(f->tail_id);
	f->callee = f->callee_id = f->tail = f->tail_id = NULL;
	f->ret_addr = f->forced_cost = NULL;
	f->recursive = NULL;
}

int sim_generate_opts(struct sim_program *p, uint64_t *rng, const struct sim_gen_opts *o)
{
	uint32_t i, nfuncs = o->nfuncs;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->funcs = calloc(nfuncs + 1, sizeof(*p->funcs));
	if (!p->funcs)
		return -PT_ENOMEM;
	p->nfuncs = nfuncs;
	p->gen = *o;
	for (i = 0; i < nfuncs; i++) {
		p->funcs[i].func_id = 100 + i;
		p->funcs[i].traced = o->closed || (nfuncs == 1 && i == 0) || sim_below(rng, 4) != 0;
	}
	for (i = 0; i < nfuncs && !err; i++)
		err = gen_func(p, i, rng);
	for (i = 0; i < nfuncs && !err; i++)
		link_ids(p, i);
	if (err)
		sim_free(p);
	return err;
}

int sim_generate(struct sim_program *p, uint64_t *rng, uint32_t nfuncs, uint32_t max_stmts)
{
	struct sim_gen_opts o = { .nfuncs = nfuncs, .max_stmts = max_stmts };

	return sim_generate_opts(p, rng, &o);
}

void sim_func_finish(struct sim_program *p, uint32_t fi)
{
	forced_costs(&p->funcs[fi]);
	link_ids(p, fi);
}

int sim_regenerate_func(struct sim_program *p, uint32_t fi, uint64_t *rng)
{
	int err;

	sim_func_free_tables(&p->funcs[fi]);
	err = gen_func(p, fi, rng);
	if (!err)
		link_ids(p, fi);
	return err;
}

void sim_free(struct sim_program *p)
{
	uint32_t i;

	for (i = 0; p->funcs && i < p->nfuncs; i++) {
		struct sim_func *f = &p->funcs[i];

		sim_func_free_tables(f);
		encoding_free(&f->enc);
		cfg_free(&f->cfg);
		plan_free(&f->plan);
		free(f->code);
		free(f->plan_blob);
		free(f->cfg_blob);
		free(f->site_of_insn);
		free(f->verify_of_insn);
	}
	free(p->funcs);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------- executions */

int sim_truth_init(struct sim_truth *t, const struct sim_program *p)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->edge_count = calloc(p->nfuncs + 1, sizeof(*t->edge_count));
	t->early_exit = calloc(p->nfuncs + 1, sizeof(*t->early_exit));
	t->activations = calloc(p->nfuncs + 1, sizeof(*t->activations));
	if (!t->edge_count || !t->early_exit || !t->activations)
		goto nomem;
	for (i = 0; i < p->nfuncs; i++) {
		t->edge_count[i] = calloc(p->funcs[i].g.ne + 1, sizeof(uint64_t));
		t->early_exit[i] = calloc(p->funcs[i].g.nv + 1, sizeof(uint64_t));
		if (!t->edge_count[i] || !t->early_exit[i])
			goto nomem;
	}
	return 0;
nomem:
	sim_truth_free(t, p);
	return -PT_ENOMEM;
}

void sim_truth_free(struct sim_truth *t, const struct sim_program *p)
{
	uint32_t i;

	for (i = 0; i < p->nfuncs; i++) {
		if (t->edge_count)
			free(t->edge_count[i]);
		if (t->early_exit)
			free(t->early_exit[i]);
	}
	free(t->edge_count);
	free(t->early_exit);
	free(t->activations);
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

struct run {
	const struct sim_program *p;
	const struct sim_run_opts *o;
	uint64_t *rng;
	const struct sim_backend *be;
	struct sim_truth *t;
	uint64_t start_steps;	/* the truth's steps when this execution began */
};

static void truth_add(struct run *r, uint32_t type, uint32_t func, uint32_t block,
		      uint32_t edge, uint32_t depth)
{
	struct sim_truth *t = r->t;

	t->blocks += type == REGEN_EV_BLOCK;
	if (t->nomem || t->no_events)
		return;
	if (t->nev == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 64;
		struct sim_event *ne = realloc(t->ev, ncap * sizeof(*ne));

		if (!ne) {
			t->nomem = 1;
			return;
		}
		t->ev = ne;
		t->cap = ncap;
	}
	t->ev[t->nev++] = (struct sim_event){ type, func, block, edge, depth,
					      r->be && r->be->pos ? r->be->pos(r->be->ctx) : 0,
					      r->o->owner, 0 };
}

/* Out-edge of v: at random, or towards EXIT when forced. */
static uint32_t choose_edge(struct run *r, const struct sim_func *f, uint32_t v, int forced)
{
	const struct graph *g = &f->g;
	uint32_t k, best = GRAPH_NONE;

	if (!forced)
		return g->out_edges[g->out_start[v] + sim_below(r->rng, graph_out_degree(g, v))];
	for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
		uint32_t ce = g->out_edges[k];

		if (best == GRAPH_NONE ||
		    f->forced_cost[g->edges[ce].dst] < f->forced_cost[g->edges[best].dst])
			best = ce;
	}
	return best;
}

/*
 * One activation of function fi, called from the call site with return
 * address ret; frame: the return address of the innermost traced call on
 * the stack (ret when the caller is traced), or 0; tdepth is the traced
 * depth it would have. Returns 1 when the
 * whole run stopped inside it (stop_after), else 0.
 */
static int activation(struct run *r, uint32_t fi, uint64_t ret, uint64_t frame, uint32_t tdepth,
		      uint32_t depth, int implicit)
{
	const struct sim_func *f = &r->p->funcs[fi];
	const struct graph *g = &f->g;
	const struct sim_backend *be = f->traced ? r->be : NULL;
	uint64_t state[REGEN_STATE_WORDS] = { 0 };
	uint32_t v = g->entry, steps = 0, e = GRAPH_NONE;

	r->t->activations[fi]++;
	if (be && be->enter && !implicit)
		be->enter(be->ctx, f, ret, frame);
	if (f->traced) {
		uint32_t n = r->t->nev;

		truth_add(r, REGEN_EV_ENTER, f->func_id, 0, GRAPH_NONE, tdepth);
		if (r->t->nev > n)
			r->t->ev[n].implicit = implicit;
		truth_add(r, REGEN_EV_BLOCK, f->func_id, v, GRAPH_NONE, tdepth);
	}
	for (;;) {
		int forced;

		if (r->o->stop_after && r->t->steps >= r->o->stop_after) {
			r->t->early_exit[fi][v]++;
			r->t->stopped = 1;
			return 1;
		}
		r->t->steps++;
		steps++;
		if (v == g->exit)
			break;
		forced = depth >= r->o->max_depth || r->t->steps - r->start_steps >= r->o->max_steps ||
			 steps > 4 * g->nv + 8;
		/* chosen before the call: the module's handler at v's last insn needs it */
		e = choose_edge(r, f, v, forced);
		if (be && be->vertex)
			be->vertex(be->ctx, f, v, e, ret, frame, state);
		if (g->vflags[v] & GRAPH_V_CALL) {
			uint32_t c = f->callee[v];

			if (c == SIM_CALL_INDIRECT)
				c = forced || sim_below(r->rng, 3) == 0 ? SIM_CALL_NONE :
					sim_below(r->rng, r->p->nfuncs);
			int implicit = f->traced && f->implicit && f->implicit[v] &&
				       c == f->callee[v];

			if (c != SIM_CALL_NONE &&
			    activation(r, c, f->ret_addr[v], f->traced ? f->ret_addr[v] : frame,
				       tdepth + (f->traced ? 1 : 0), depth + 1, implicit)) {
				r->t->early_exit[fi][v]++;
				return 1;
			}
		}
		r->t->edge_count[fi][e]++;
		if (be && be->edge)
			be->edge(be->ctx, f, e, state);
		v = g->edges[e].dst;
		if (f->traced && v != g->exit)
			truth_add(r, REGEN_EV_BLOCK, f->func_id, v, e, tdepth);
	}
	if (f->traced)
		truth_add(r, REGEN_EV_EXIT, f->func_id, 0, GRAPH_NONE, tdepth);
	/*
	 * A tail call: the target runs in place of this activation, with the
	 * same return address and at the same traced depth.
	 */
	if (e != GRAPH_NONE && f->tail[e] != SIM_CALL_NONE)
		return activation(r, f->tail[e], ret, frame, tdepth, depth + 1, 0);
	return 0;
}

int sim_exec(const struct sim_program *p, const struct sim_run_opts *opts, uint64_t *rng,
	     const struct sim_backend *be, struct sim_truth *t)
{
	struct run r = { p, opts, rng, be, t, t->steps };

	if (opts->root >= p->nfuncs)
		return -PT_EINVAL;
	activation(&r, opts->root, opts->ret_addr ? opts->ret_addr : 0xffffffff00000000ull, 0, 0, 0,
		   0);
	return t->nomem ? -PT_ENOMEM : 0;
}
