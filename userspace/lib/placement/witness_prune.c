// SPDX-License-Identifier: GPL-2.0
/*
 * Witnesses the spanning tree did not need (1994 paper, Section 4.1).
 *
 * Ewit solves Trace(Ewit) iff E - Ewit holds no diamond and no directed
 * cycle; the chords of a spanning tree break every undirected cycle, more
 * than that asks (the paper: optimal only on CFGs whose every cycle is a
 * diamond or a directed cycle; kernel code, with its gotos to shared
 * exits, breaks loops and early returns, has many other cycles). Finding
 * the cheapest Trace set is NP-complete, so this takes the tree's and
 * drops witnesses greedily, the costliest first (as the paper's Fig. 11
 * drops counters for Vprof(Ecnt), vprof.c), while the set stays a trace
 * set with the blocking property:
 *
 *  - no predicate has two out-edges whose emission-free paths meet (a
 *    diamond, or two ways to one witness: enc_finish_witness's next[]
 *    would refuse the plan), and none returns to itself emission-free (a
 *    directed cycle). Only predicates with an emission-free path to the
 *    dropped witness can gain one, so only those are walked; a cycle
 *    with no predicate on it (an endless loop) is the reader's check,
 *    enc_silent_cycle;
 *  - the blocking check (encoding_check_blocking_ve) still holds.
 *
 * Emission-free paths are the decoder's: they pass silent edges and enter
 * loud vertices (vertex witnesses, entry witnesses) but do not go through
 * them, as in encoding.c's witness_tables.
 */
#include <stdlib.h>

#include <pathtrace/error.h>

#include "encoding_internal.h"

/*
 * Work above this many vertex visits per function stops the pruning, in the
 * middle of a check too (the witness is kept: the plan stays valid).
 */
#define PRUNE_BUDGET (1u << 26)

struct prune {
	const struct graph *g;
	uint8_t *emit;		/* ne: the edge is a witness */
	uint8_t *loud;		/* nv: entering the vertex emits */
	uint8_t *vemit;		/* nv: the vertex is a vertex witness */
	uint8_t *ew;		/* nv: enum enc_call (entry witness, entered call) */
	uint32_t *label;	/* nv: the out-edge of the predicate walked whose paths reach it */
	uint32_t *mark;		/* nv: stamp of the backward walk that reached it */
	uint32_t *stack;	/* ne + nv + 1: pred_ok's walk */
	uint32_t *bstack;	/* nv + 1: trace_ok_from's walk */
	uint32_t *seen;		/* nv + 1 */
	uint32_t stamp;
	uint64_t work;
};

/*
 * Whether the emission-free paths from predicate p's out-edges stay apart
 * and none returns to p: 1 if so, 0 if not.
 */
static int pred_ok(struct prune *s, uint32_t p)
{
	const struct graph *g = s->g;
	uint32_t nseen = 0, k, i;
	int ok = 1;

	for (k = g->out_start[p]; k < g->out_start[p + 1] && ok; k++) {
		uint32_t e = g->out_edges[k], sp = 0;

		if (s->emit[e])
			continue;
		s->stack[sp++] = g->edges[e].dst;
		while (sp && ok) {
			uint32_t v = s->stack[--sp], j;

			if (++s->work > PRUNE_BUDGET) {
				ok = 0;	/* out of budget: keep the witness */
				break;
			}
			if (s->label[v] == e)
				continue;
			if (s->label[v] != GRAPH_NONE || (v == p && !s->loud[p])) {
				ok = 0;	/* two ways to v, or a silent way round to p */
				break;
			}
			s->label[v] = e;
			s->seen[nseen++] = v;
			if (s->loud[v])
				continue;
			for (j = g->out_start[v]; j < g->out_start[v + 1]; j++) {
				uint32_t d = g->out_edges[j];

				if (!s->emit[d])
					s->stack[sp++] = g->edges[d].dst;
			}
		}
	}
	for (i = 0; i < nseen; i++)
		s->label[s->seen[i]] = GRAPH_NONE;
	return ok;
}

/*
 * Trace(Ewit) still holds after the witness at u (an edge u->x, or the
 * vertex u itself) went silent: every predicate with an emission-free
 * path into u (u itself included) checked. 1 if it holds, 0 if not.
 */
static int trace_ok_from(struct prune *s, uint32_t u)
{
	const struct graph *g = s->g;
	uint32_t sp = 0, k;

	if (++s->stamp == 0) {	/* wrapped: clear the old marks */
		for (k = 0; k < g->nv; k++)
			s->mark[k] = 0;
		s->stamp = 1;
	}
	s->mark[u] = s->stamp;
	s->bstack[sp++] = u;
	while (sp) {
		uint32_t v = s->bstack[--sp];

		if (graph_out_degree(g, v) >= 2 && !pred_ok(s, v))
			return 0;
		if (s->loud[v])
			continue;	/* paths into v emit on entering it */
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			uint32_t e = g->in_edges[k], w = g->edges[e].src;

			/* a loud w is checked (its out-edges start paths), not walked past */
			if (s->emit[e] || s->mark[w] == s->stamp)
				continue;
			s->mark[w] = s->stamp;
			s->bstack[sp++] = w;
		}
	}
	return 1;
}

struct cand {
	uint64_t cost;
	uint32_t id;	/* edge, or ne + vertex */
};

static int by_cost_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * What u is to the checks (enum enc_call): an entry witness that emits
 * itself is a call like any (enc_finish_witness gives it no entry code).
 */
static uint8_t call_kind(const struct graph *g, const uint8_t *ewit, uint32_t u, int vemit)
{
	if (!ewit || !(g->vflags[u] & GRAPH_V_CALL))
		return ENC_CALL_LOUD;
	return ewit[u] == ENC_CALL_WITNESS && vemit ? ENC_CALL_LOUD : ewit[u];
}

int witness_prune(const struct graph *g, const uint64_t *weight, const uint64_t *vcost,
		  const uint8_t *ewit, uint8_t *role, uint8_t *vwit)
{
	struct prune s = { .g = g };
	struct cand *c = NULL;
	uint32_t n = 0, i, v, e;
	int err = 0;

	s.emit = calloc((size_t)g->ne + 1, 1);
	s.loud = calloc((size_t)g->nv + 1, 1);
	s.vemit = calloc((size_t)g->nv + 1, 1);
	s.ew = calloc((size_t)g->nv + 1, 1);
	s.label = malloc(((size_t)g->nv + 1) * sizeof(*s.label));
	s.mark = calloc((size_t)g->nv + 1, sizeof(*s.mark));
	s.stack = malloc(((size_t)g->nv + g->ne + 1) * sizeof(*s.stack));
	s.bstack = malloc(((size_t)g->nv + 1) * sizeof(*s.bstack));
	s.seen = malloc(((size_t)g->nv + 1) * sizeof(*s.seen));
	c = malloc(((size_t)g->ne + g->nv + 1) * sizeof(*c));
	if (!s.emit || !s.loud || !s.vemit || !s.ew || !s.label || !s.mark || !s.stack ||
	    !s.bstack || !s.seen || !c) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (v = 0; v < g->nv; v++) {
		s.label[v] = GRAPH_NONE;
		s.vemit[v] = vwit && vwit[v];
		s.ew[v] = call_kind(g, ewit, v, s.vemit[v]);
		s.loud[v] = s.vemit[v] || s.ew[v] == ENC_CALL_WITNESS;
		if (s.vemit[v])
			c[n++] = (struct cand){ vcost ? vcost[v] : 1, g->ne + v };
	}
	for (e = 0; e < g->ne; e++) {
		s.emit[e] = role[e] != ENC_ROLE_NONE;
		if (s.emit[e])
			c[n++] = (struct cand){ weight ? weight[e] : 1, e };
	}
	qsort(c, n, sizeof(*c), by_cost_desc);
	for (i = 0; i < n && s.work < PRUNE_BUDGET; i++) {
		uint32_t id = c[i].id, u = id < g->ne ? g->edges[id].src : id - g->ne;
		int ok;

		if (id < g->ne) {
			s.emit[id] = 0;
		} else {
			s.vemit[u] = 0;
			s.ew[u] = call_kind(g, ewit, u, 0);
			s.loud[u] = s.ew[u] == ENC_CALL_WITNESS;
		}
		ok = trace_ok_from(&s, u) && enc_silent_cycle(g, s.emit, s.loud) == 0 &&
		     encoding_check_blocking_ve(g, s.emit, s.vemit, s.ew, NULL) == 0;
		s.work += g->nv + g->ne;
		if (ok) {
			if (id < g->ne)
				role[id] = ENC_ROLE_NONE;
			else
				vwit[u] = 0;
		} else if (id < g->ne) {
			s.emit[id] = 1;
		} else {
			s.vemit[u] = 1;
			s.ew[u] = call_kind(g, ewit, u, 1);
			s.loud[u] = 1;
		}
	}
out:
	free(s.emit);
	free(s.loud);
	free(s.vemit);
	free(s.ew);
	free(s.label);
	free(s.mark);
	free(s.stack);
	free(s.bstack);
	free(s.seen);
	free(c);
	return err;
}
