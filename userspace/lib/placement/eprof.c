// SPDX-License-Identifier: GPL-2.0
/*
 * Eprof(Ecnt): counters on the chords of a maximum spanning tree, and the
 * Fig. 6 propagation with the Fig. 7 early-exit edges (eprof.h).
 *
 * The propagation peels leaves off the tree instead of recursing (kernel
 * CFGs can be deep): at a vertex with one unknown tree edge the flow law
 * gives that edge. Every vertex's flow law is checked afterwards, so
 * counts that no execution can produce are refused, not "corrected".
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/eprof.h>
#include <pathtrace/error.h>
#include <pathtrace/spantree.h>

#include "counters_internal.h"

void counters_free(struct counters *c)
{
	free(c->counter);
	free(c->edge);
	free(c->in_tree);
	free(c->removed);
	memset(c, 0, sizeof(*c));
}

int eprof_place(const struct graph *g, const uint64_t *weight, struct counters *c)
{
	uint32_t e;
	int err;

	if (!g || !g->out_start || !weight || !c)
		return -PT_EINVAL;
	memset(c, 0, sizeof(*c));
	c->ne = g->ne;
	c->counter = malloc(((size_t)g->ne + 1) * sizeof(*c->counter));
	c->edge = malloc(((size_t)g->ne + 1) * sizeof(*c->edge));
	c->in_tree = calloc(g->ne + 1, 1);
	c->removed = calloc(g->ne + 1, 1);
	if (!c->counter || !c->edge || !c->in_tree || !c->removed) {
		counters_free(c);
		return -PT_ENOMEM;
	}
	err = spantree_max(g, weight, NULL, c->in_tree);
	if (err) {
		counters_free(c);
		return err;
	}
	for (e = 0; e < g->ne; e++) {
		c->counter[e] = GRAPH_NONE;
		if (c->in_tree[e])
			continue;
		c->counter[e] = c->ncounters;
		c->edge[c->ncounters++] = e;
		c->cost = c->cost + weight[e] < c->cost ? UINT64_MAX : c->cost + weight[e];
	}
	return 0;
}

/* Known part of v's flow: sum(in) - sum(out) over edges whose value is known. */
static __int128 balance(const struct graph *g, uint32_t v, const __int128 *val,
			const uint8_t *known, const uint64_t *early_exit, uint32_t *unknown)
{
	__int128 b = 0;
	uint32_t k, e;

	*unknown = GRAPH_NONE;
	for (k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
		e = g->in_edges[k];
		if (known[e])
			b += val[e];
		else
			*unknown = e;
	}
	for (k = g->out_start[v]; k < g->out_start[v + 1]; k++) {
		e = g->out_edges[k];
		if (known[e])
			b -= val[e];
		else
			*unknown = e;
	}
	if (early_exit)
		b -= early_exit[v];
	if (v == g->exit) {
		uint32_t u;

		for (u = 0; early_exit && u < g->nv; u++)
			b += early_exit[u];
		if (known[g->ne])
			b -= val[g->ne];
		else
			*unknown = g->ne;
	}
	if (v == g->entry) {
		if (known[g->ne])
			b += val[g->ne];
		else
			*unknown = g->ne;
	}
	return b;
}

int counters_propagate(const struct graph *g, const struct counters *c, const uint64_t *count,
		       const uint64_t *early_exit, __int128 *val)
{
	uint8_t *known = calloc(g->ne + 1, 1);
	uint32_t *deg = calloc(g->nv + 1, sizeof(*deg));
	uint32_t *queue = malloc(((size_t)g->nv + 1) * sizeof(*queue));
	uint32_t qh = 0, qt = 0, v, e, u;
	int err = 0;

	if (!known || !deg || !queue) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (e = 0; e < g->ne; e++) {
		val[e] = 0;
		if (c->in_tree[e]) {
			deg[g->edges[e].src]++;
			deg[g->edges[e].dst]++;
			continue;
		}
		known[e] = 1;
		if (c->counter[e] != GRAPH_NONE)
			val[e] = count[c->counter[e]];
	}
	val[g->ne] = 0;		/* EXIT->ENTRY: always a tree edge */
	deg[g->exit]++;
	deg[g->entry]++;
	for (v = 0; v < g->nv; v++)
		if (deg[v] == 1)
			queue[qt++] = v;
	while (qh < qt) {
		__int128 b;
		uint32_t src, dst;

		v = queue[qh++];
		if (deg[v] != 1)
			continue;
		b = balance(g, v, val, known, early_exit, &u);
		src = u == g->ne ? g->exit : g->edges[u].src;
		dst = u == g->ne ? g->entry : g->edges[u].dst;
		/* in + x = out (u enters v) or in = out + x (u leaves v) */
		val[u] = dst == v ? -b : b;
		known[u] = 1;
		deg[src]--;
		deg[dst]--;
		u = src == v ? dst : src;
		if (deg[u] == 1)
			queue[qt++] = u;
	}
	for (v = 0; v < g->nv && !err; v++)
		if (balance(g, v, val, known, early_exit, &u) != 0 || u != GRAPH_NONE)
			err = -PT_EINVAL;
out:
	free(known);
	free(deg);
	free(queue);
	return err;
}

int eprof_counts(const struct graph *g, const struct counters *c, const uint64_t *count,
		 const uint64_t *early_exit, uint64_t *edge_count, uint64_t *activations)
{
	__int128 *val;
	uint32_t e;
	int err;

	if (!g || !c || c->ne != g->ne || (!count && c->ncounters) || !edge_count)
		return -PT_EINVAL;
	for (e = 0; e < g->ne; e++)
		if (c->removed[e])
			return -PT_EINVAL;	/* a Vprof placement cannot give edges */
	val = malloc(((size_t)g->ne + 1) * sizeof(*val));
	if (!val)
		return -PT_ENOMEM;
	err = counters_propagate(g, c, count, early_exit, val);
	for (e = 0; e <= g->ne && !err; e++)
		if (val[e] < 0 || val[e] > (__int128)UINT64_MAX)
			err = -PT_EINVAL;
	for (e = 0; e < g->ne && !err; e++)
		edge_count[e] = (uint64_t)val[e];
	if (!err && activations)
		*activations = (uint64_t)val[g->ne];
	free(val);
	return err;
}
