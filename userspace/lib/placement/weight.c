// SPDX-License-Identifier: GPL-2.0
/*
 * Section 5 heuristic weighting and exact weighting (weight.h).
 *
 * Steps, as in the paper: a depth-first search orders the vertices
 * (reverse postorder is a topological order of the graph without its
 * retreating edges); dominators tell which retreating edges are loop back
 * edges; natural loops give the loop exits; one pass in topological order
 * applies rules (1)-(3).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/weight.h>

struct loops {
	uint32_t nrpo;
	uint32_t *rpo;		/* reachable vertices in reverse postorder */
	uint32_t *rpo_num;	/* vertex -> index in rpo, GRAPH_NONE if unreachable */
	uint8_t *retreating;	/* ne: DFS retreating edge (target not after source) */
	uint8_t *backedge;	/* ne: retreating and target dominates source */
	uint32_t *idom;		/* by rpo index */
};

static void loops_free(struct loops *l)
{
	free(l->rpo);
	free(l->rpo_num);
	free(l->retreating);
	free(l->backedge);
	free(l->idom);
}

/* Iterative DFS from entry: postorder, then reversed. */
static int dfs_order(const struct graph *g, struct loops *l)
{
	uint32_t *stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	uint32_t *it = malloc(((size_t)g->nv + 1) * sizeof(*it));
	uint8_t *seen = calloc(g->nv + 1, 1);
	uint32_t sp = 0, n = 0, v, i;

	if (!stack || !it || !seen) {
		free(stack);
		free(it);
		free(seen);
		return -PT_ENOMEM;
	}
	stack[sp++] = g->entry;
	it[g->entry] = g->out_start[g->entry];
	seen[g->entry] = 1;
	while (sp) {
		v = stack[sp - 1];
		if (it[v] < g->out_start[v + 1]) {
			uint32_t w = g->edges[g->out_edges[it[v]++]].dst;

			if (!seen[w]) {
				seen[w] = 1;
				it[w] = g->out_start[w];
				stack[sp++] = w;
			}
		} else {
			l->rpo[n++] = v;	/* postorder for now */
			sp--;
		}
	}
	for (i = 0; i < n / 2; i++) {
		v = l->rpo[i];
		l->rpo[i] = l->rpo[n - 1 - i];
		l->rpo[n - 1 - i] = v;
	}
	l->nrpo = n;
	for (v = 0; v < g->nv; v++)
		l->rpo_num[v] = GRAPH_NONE;
	for (i = 0; i < n; i++)
		l->rpo_num[l->rpo[i]] = i;
	free(stack);
	free(it);
	free(seen);
	return 0;
}

/* Cooper, Harvey and Kennedy's iterative dominators over rpo indices. */
static void dominators(const struct graph *g, struct loops *l)
{
	uint32_t i, k, changed = 1;

	for (i = 0; i < l->nrpo; i++)
		l->idom[i] = GRAPH_NONE;
	l->idom[0] = 0;
	while (changed) {
		changed = 0;
		for (i = 1; i < l->nrpo; i++) {
			uint32_t v = l->rpo[i], nd = GRAPH_NONE;

			for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
				uint32_t p = l->rpo_num[g->edges[g->in_edges[k]].src];

				if (p == GRAPH_NONE || l->idom[p] == GRAPH_NONE)
					continue;
				if (nd == GRAPH_NONE) {
					nd = p;
					continue;
				}
				while (nd != p) {
					while (nd > p)
						nd = l->idom[nd];
					while (p > nd)
						p = l->idom[p];
				}
			}
			if (nd != l->idom[i]) {
				l->idom[i] = nd;
				changed = 1;
			}
		}
	}
}

/* Whether rpo index a dominates rpo index b. */
static int dominates(const struct loops *l, uint32_t a, uint32_t b)
{
	while (b > a)
		b = l->idom[b];
	return a == b;
}

static int loops_find(const struct graph *g, struct loops *l)
{
	uint32_t e;
	int err;

	memset(l, 0, sizeof(*l));
	l->rpo = malloc(((size_t)g->nv + 1) * sizeof(*l->rpo));
	l->rpo_num = malloc(((size_t)g->nv + 1) * sizeof(*l->rpo_num));
	l->idom = malloc(((size_t)g->nv + 1) * sizeof(*l->idom));
	l->retreating = calloc(g->ne + 1, 1);
	l->backedge = calloc(g->ne + 1, 1);
	if (!l->rpo || !l->rpo_num || !l->idom || !l->retreating || !l->backedge) {
		loops_free(l);
		return -PT_ENOMEM;
	}
	err = dfs_order(g, l);
	if (err) {
		loops_free(l);
		return err;
	}
	dominators(g, l);
	for (e = 0; e < g->ne; e++) {
		uint32_t s = l->rpo_num[g->edges[e].src], d = l->rpo_num[g->edges[e].dst];

		if (s == GRAPH_NONE || d == GRAPH_NONE || d > s)
			continue;
		l->retreating[e] = 1;
		l->backedge[e] = dominates(l, d, s);
	}
	return 0;
}

/*
 * Marks in_loop[] with the natural loop of loop entry y: y and every vertex
 * that reaches the source of a back edge into y without passing y.
 */
static void natural_loop(const struct graph *g, const struct loops *l, uint32_t y,
			 uint8_t *in_loop, uint32_t *stack)
{
	uint32_t k, sp = 0;

	memset(in_loop, 0, g->nv);
	in_loop[y] = 1;
	for (k = g->in_start[y]; k < g->in_start[y + 1]; k++) {
		uint32_t e = g->in_edges[k], x = g->edges[e].src;

		if (l->backedge[e] && !in_loop[x]) {
			in_loop[x] = 1;
			stack[sp++] = x;
		}
	}
	while (sp) {
		uint32_t w = stack[--sp];

		for (k = g->in_start[w]; k < g->in_start[w + 1]; k++) {
			uint32_t p = g->edges[g->in_edges[k]].src;

			if (!in_loop[p] && l->rpo_num[p] != GRAPH_NONE) {
				in_loop[p] = 1;
				stack[sp++] = p;
			}
		}
	}
}

static int is_loop_entry(const struct graph *g, const struct loops *l, uint32_t v)
{
	uint32_t k;

	for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
		if (l->backedge[g->in_edges[k]])
			return 1;
	return 0;
}

int weight_loops(const struct graph *g, uint8_t *is_backedge, uint8_t *is_loop_exit)
{
	struct loops l;
	uint8_t *in_loop;
	uint32_t *stack, v, e;
	int err;

	if (!g || !g->out_start)
		return -PT_EINVAL;
	err = loops_find(g, &l);
	if (err)
		return err;
	in_loop = malloc(g->nv + 1);
	stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	if (!in_loop || !stack) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (e = 0; e < g->ne; e++) {
		if (is_backedge)
			is_backedge[e] = l.backedge[e];
		if (is_loop_exit)
			is_loop_exit[e] = 0;
	}
	for (v = 0; is_loop_exit && v < g->nv; v++) {
		if (!is_loop_entry(g, &l, v))
			continue;
		natural_loop(g, &l, v, in_loop, stack);
		for (e = 0; e < g->ne; e++)
			if (in_loop[g->edges[e].src] && !in_loop[g->edges[e].dst])
				is_loop_exit[e] = 1;
	}
out:
	free(in_loop);
	free(stack);
	loops_free(&l);
	return err;
}

int weight_heuristic(const struct graph *g, uint64_t *weight)
{
	return weight_heuristic_prior(g, NULL, weight);
}

int weight_heuristic_prior(const struct graph *g, const double *prior, uint64_t *weight)
{
	struct loops l;
	double *w = NULL;
	uint8_t *assigned = NULL, *in_loop = NULL;
	uint32_t *stack = NULL, i, k, e;
	int err;

	if (!g || !g->out_start || !weight)
		return -PT_EINVAL;
	err = loops_find(g, &l);
	if (err)
		return err;
	w = calloc(g->ne + 1, sizeof(*w));
	assigned = calloc(g->ne + 1, 1);
	in_loop = malloc(g->nv + 1);
	stack = malloc(((size_t)g->nv + 1) * sizeof(*stack));
	if (!w || !assigned || !in_loop || !stack) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < l.nrpo; i++) {
		uint32_t v = l.rpo[i], nfree = 0;
		/* Rule (1); the EXIT->root edge brings weight 1 to the root. */
		double W = v == g->entry ? 1.0 : 0.0, WE = 0.0, share, nfree_p = 0.0;
		int entry_of_loop = is_loop_entry(g, &l, v);

		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
			e = g->in_edges[k];
			if (!l.retreating[e] && l.rpo_num[g->edges[e].src] != GRAPH_NONE)
				W += w[e];
		}
		/* Rule (2): the loop's exits share the entry's weight. */
		if (entry_of_loop) {
			uint32_t nexit = 0;

			natural_loop(g, &l, v, in_loop, stack);
			for (e = 0; e < g->ne; e++)
				if (in_loop[g->edges[e].src] && !in_loop[g->edges[e].dst])
					nexit++;
			for (e = 0; e < g->ne; e++) {
				if (!in_loop[g->edges[e].src] || in_loop[g->edges[e].dst] ||
				    assigned[e])
					continue;
				w[e] = W / nexit;
				assigned[e] = 1;
			}
			W *= LOOP_MULTIPLIER;
		}
		/* Rule (3): what the loop exits leave, shared equally. */
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			e = g->out_edges[k];
			if (assigned[e]) {
				WE += w[e];
			} else {
				nfree++;
				nfree_p += prior ? prior[e] : 1.0;
			}
		}
		share = nfree && W > WE && nfree_p > 0.0 ? (W - WE) / nfree_p : 0.0;
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
			e = g->out_edges[k];
			if (!assigned[e]) {
				w[e] = share * (prior ? prior[e] : 1.0);
				assigned[e] = 1;
			}
		}
	}
	for (e = 0; e < g->ne; e++) {
		double x = w[e] * (double)WEIGHT_ONE;

		weight[e] = x >= (double)WEIGHT_MAX ? WEIGHT_MAX : (uint64_t)llround(x);
	}
out:
	free(w);
	free(assigned);
	free(in_loop);
	free(stack);
	loops_free(&l);
	return err;
}

int weight_exact(const struct graph *g, const uint64_t *count, uint64_t *weight)
{
	uint32_t e;

	if (!g || !count || !weight)
		return -PT_EINVAL;
	for (e = 0; e < g->ne; e++)
		weight[e] = count[e] >= WEIGHT_MAX / WEIGHT_ONE ? WEIGHT_MAX : count[e] * WEIGHT_ONE;
	return 0;
}
