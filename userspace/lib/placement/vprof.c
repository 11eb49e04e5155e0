// SPDX-License-Identifier: GPL-2.0
/*
 * Vprof(Ecnt): the Fig. 11 heuristic removes counters whose tree cycle is
 * pipeless, and the Fig. 8 propagation recovers vertex counts (eprof.h).
 *
 * Theorem (Section 3.3.1): edges Ecnt solve Vprof(Ecnt) iff every simple
 * cycle of uncounted edges is pipeless. Removing the counter of chord e
 * adds the cycle C_e (e plus its tree path) to the uncounted edges; marking
 * C_e's vertices keeps two pipeless cycles from combining into a simple
 * piped one.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/eprof.h>
#include <pathtrace/error.h>

#include "counters_internal.h"
#include "edge_order.h"

/* The spanning tree rooted: parent edge (GRAPH_NONE at a root) and depth. */
struct rooted {
	uint32_t *parent_edge;	/* g->ne means EXIT->ENTRY */
	uint32_t *depth;
};

static uint32_t esrc(const struct graph *g, uint32_t e)
{
	return e == g->ne ? g->exit : g->edges[e].src;
}

static uint32_t edst(const struct graph *g, uint32_t e)
{
	return e == g->ne ? g->entry : g->edges[e].dst;
}

static uint32_t other_end(const struct graph *g, uint32_t e, uint32_t v)
{
	return esrc(g, e) == v ? edst(g, e) : esrc(g, e);
}

static int root_tree(const struct graph *g, const uint8_t *in_tree, struct rooted *r)
{
	uint32_t *queue = malloc(((size_t)g->nv + 1) * sizeof(*queue));
	uint8_t *seen = calloc(g->nv + 1, 1);
	uint32_t qh, qt, root, k, v;

	r->parent_edge = malloc(((size_t)g->nv + 1) * sizeof(*r->parent_edge));
	r->depth = malloc(((size_t)g->nv + 1) * sizeof(*r->depth));
	if (!queue || !seen || !r->parent_edge || !r->depth) {
		free(queue);
		free(seen);
		return -PT_ENOMEM;
	}
	for (root = 0; root < g->nv; root++) {
		if (seen[root])
			continue;
		seen[root] = 1;
		r->parent_edge[root] = GRAPH_NONE;
		r->depth[root] = 0;
		qh = qt = 0;
		queue[qt++] = root;
		while (qh < qt) {
			v = queue[qh++];
			/* tree edges around v: real ones, then EXIT->ENTRY */
			for (k = 0; k < graph_out_degree(g, v) + graph_in_degree(g, v) + 1; k++) {
				uint32_t e, w;

				if (k < graph_out_degree(g, v))
					e = g->out_edges[g->out_start[v] + k];
				else if (k < graph_out_degree(g, v) + graph_in_degree(g, v))
					e = g->in_edges[g->in_start[v] + k - graph_out_degree(g, v)];
				else if (v == g->entry || v == g->exit)
					e = g->ne;
				else
					break;
				if (e != g->ne && !in_tree[e])
					continue;
				w = other_end(g, e, v);
				if (seen[w])
					continue;
				seen[w] = 1;
				r->parent_edge[w] = e;
				r->depth[w] = r->depth[v] + 1;
				queue[qt++] = w;
			}
		}
	}
	free(queue);
	free(seen);
	return 0;
}

/*
 * Builds C_e for chord e = a->b into cyc_v/cyc_e: the chord, then the tree
 * path from b up to the meeting vertex and down to a. Vertex i lies between
 * edges i-1 and i (cyclically). Returns the cycle's length.
 */
static uint32_t tree_cycle(const struct graph *g, const struct rooted *r, uint32_t chord,
			   uint32_t *cyc_v, uint32_t *cyc_e, uint32_t *tmp_v, uint32_t *tmp_e)
{
	uint32_t a = esrc(g, chord), b = edst(g, chord), x = a, y = b, n = 0, m = 0, i;

	while (x != y) {
		if (r->depth[x] >= r->depth[y])
			x = other_end(g, r->parent_edge[x], x);
		else
			y = other_end(g, r->parent_edge[y], y);
	}
	cyc_v[n] = a;
	cyc_e[n++] = chord;
	for (y = b; y != x; y = other_end(g, r->parent_edge[y], y)) {
		cyc_v[n] = y;
		cyc_e[n++] = r->parent_edge[y];
	}
	for (y = a; y != x; y = other_end(g, r->parent_edge[y], y)) {
		tmp_v[m] = y;
		tmp_e[m++] = r->parent_edge[y];
	}
	if (m) {
		cyc_v[n] = x;
		cyc_e[n++] = tmp_e[m - 1];
		for (i = m - 1; i >= 1; i--) {
			cyc_v[n] = tmp_v[i];
			cyc_e[n++] = tmp_e[i - 1];
		}
	}
	return n;
}

static int enters(const struct graph *g, uint32_t e, uint32_t v)
{
	return edst(g, e) == v;
}

int vprof_place(const struct graph *g, const uint64_t *weight, struct counters *c)
{
	struct rooted r = { NULL, NULL };
	uint32_t *order = NULL, *cv = NULL, *ce = NULL, *tv = NULL, *te = NULL;
	uint8_t *marked = NULL;
	uint32_t n, i, j, e;
	int err;

	err = eprof_place(g, weight, c);
	if (err)
		return err;
	order = malloc(((size_t)c->ncounters + 1) * sizeof(*order));
	cv = malloc(((size_t)g->nv + 2) * sizeof(*cv));
	ce = malloc(((size_t)g->nv + 2) * sizeof(*ce));
	tv = malloc(((size_t)g->nv + 2) * sizeof(*tv));
	te = malloc(((size_t)g->nv + 2) * sizeof(*te));
	marked = calloc(g->nv + 1, 1);
	if (!order || !cv || !ce || !tv || !te || !marked) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = root_tree(g, c->in_tree, &r);
	if (err)
		goto out;
	memcpy(order, c->edge, c->ncounters * sizeof(*order));
	edges_by_weight_desc(order, c->ncounters, weight);
	for (i = 0; i < c->ncounters; i++) {
		int ok = 1;

		e = order[i];
		if (g->edges[e].src == g->edges[e].dst)
			continue;	/* a self-loop is a directed cycle */
		n = tree_cycle(g, &r, e, cv, ce, tv, te);
		for (j = 0; j < n && ok; j++) {
			uint32_t prev = ce[(j + n - 1) % n];

			if (marked[cv[j]] || enters(g, prev, cv[j]) != enters(g, ce[j], cv[j]))
				ok = 0;
		}
		if (!ok)
			continue;
		for (j = 0; j < n; j++)
			marked[cv[j]] = 1;
		c->removed[e] = 1;
	}
	/* Renumber the counters that stay. */
	c->ncounters = 0;
	c->cost = 0;
	for (e = 0; e < g->ne; e++) {
		c->counter[e] = GRAPH_NONE;
		if (c->in_tree[e] || c->removed[e])
			continue;
		c->counter[e] = c->ncounters;
		c->edge[c->ncounters++] = e;
		c->cost = c->cost + weight[e] < c->cost ? UINT64_MAX : c->cost + weight[e];
	}
out:
	free(r.parent_edge);
	free(r.depth);
	free(order);
	free(cv);
	free(ce);
	free(tv);
	free(te);
	free(marked);
	if (err)
		counters_free(c);
	return err;
}

int vprof_counts(const struct graph *g, const struct counters *c, const uint64_t *count,
		 const uint64_t *early_exit, uint64_t *vertex_count)
{
	__int128 *val, sum;
	uint32_t v, k;
	int err;

	if (!g || !c || c->ne != g->ne || (!count && c->ncounters) || !vertex_count)
		return -PT_EINVAL;
	val = malloc(((size_t)g->ne + 1) * sizeof(*val));
	if (!val)
		return -PT_ENOMEM;
	err = counters_propagate(g, c, count, early_exit, val);
	for (v = 0; v < g->nv && !err; v++) {
		sum = v == g->entry ? val[g->ne] : 0;
		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			sum += val[g->in_edges[k]];
		if (sum < 0 || sum > (__int128)UINT64_MAX)
			err = -PT_EINVAL;
		else
			vertex_count[v] = (uint64_t)sum;
	}
	free(val);
	return err;
}
