// SPDX-License-Identifier: GPL-2.0
/* The k most likely suffixes of every DAG vertex; see path_likely_internal.h. */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "path_likely_internal.h"

int path_likely_topo(const struct graph *d, uint32_t *order)
{
	uint32_t *indeg = malloc(((size_t)d->nv + 1) * sizeof(*indeg));
	uint32_t h = 0, t = 0, v, k;

	if (!indeg)
		return -PT_ENOMEM;
	for (v = 0; v < d->nv; v++)
		if (!(indeg[v] = graph_in_degree(d, v)))
			order[t++] = v;
	while (h < t) {
		v = order[h++];
		for (k = d->out_start[v]; k < d->out_start[v + 1]; k++)
			if (!--indeg[d->edges[d->out_edges[k]].dst])
				order[t++] = d->edges[d->out_edges[k]].dst;
	}
	free(indeg);
	return t == d->nv ? 0 : -PT_EINVAL;
}

/* Most likely first; ties by edge, then rank, so that plans are deterministic. */
static int by_score(const void *a, const void *b)
{
	const struct path_suffix *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->edge != y->edge)
		return x->edge < y->edge ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

void path_likely_dag_weights(const struct pathnum *pn, const uint64_t *cfg_weight, double *w)
{
	const struct graph *g = pn->g, *d = &pn->dag;
	uint32_t e, v, i;

	for (e = 0; e < g->ne; e++) {
		const struct pathnum_cfg_edge *ce = &pn->cfg[e];
		double x = (double)cfg_weight[e];

		if (ce->role != PATHNUM_ROLE_CALL && ce->dag != GRAPH_NONE)
			w[ce->dag] += x;	/* the edge itself, or a back edge's end */
		if (ce->role != PATHNUM_ROLE_REAL && ce->start != GRAPH_NONE)
			w[ce->start] += x;	/* paths that start after it */
	}
	for (v = 0; v < g->nv; v++) {
		uint32_t end = pn->call_end[v];

		if (end == GRAPH_NONE || pn->kind[end] != PATHNUM_CALL_END)
			continue;
		for (i = g->out_start[v]; i < g->out_start[v + 1]; i++)
			w[end] += (double)cfg_weight[g->out_edges[i]];
	}
	for (e = 0; e < d->ne; e++)
		w[e] += 1e-9;	/* an unweighted edge still ranks its paths */
}

int path_likely_build(struct path_likely *pl, const struct pathnum *pn, const double *w,
		      uint32_t k)
{
	const struct graph *d = &pn->dag;
	struct path_suffix *cand = NULL;
	uint32_t *order, i, o, nc;
	int err;

	memset(pl, 0, sizeof(*pl));
	if (!k)
		return -PT_EINVAL;
	pl->k = k;
	order = malloc(((size_t)d->nv + 1) * sizeof(*order));
	pl->len = calloc((size_t)d->nv + 1, sizeof(*pl->len));
	pl->best = calloc(((size_t)d->nv + 1) * k, sizeof(*pl->best));
	if (!order || !pl->len || !pl->best) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = path_likely_topo(d, order);
	if (err)
		goto out;
	/* Reverse topological order: a vertex's k most likely ways to EXIT. */
	for (i = d->nv; i-- > 0;) {
		uint32_t v = order[i], deg = graph_out_degree(d, v);
		double total = 0;

		if (v == d->exit) {
			pl->best[(size_t)v * k] = (struct path_suffix){ 1.0, GRAPH_NONE, 0 };
			pl->len[v] = 1;
			continue;
		}
		if (!deg)
			continue;
		free(cand);
		cand = malloc((size_t)deg * k * sizeof(*cand));
		if (!cand) {
			err = -PT_ENOMEM;
			goto out;
		}
		for (o = d->out_start[v]; o < d->out_start[v + 1]; o++)
			total += w[d->out_edges[o]];
		nc = 0;
		for (o = d->out_start[v]; o < d->out_start[v + 1]; o++) {
			uint32_t e = d->out_edges[o], u = d->edges[e].dst, r;

			/* ENTRY: how often a path starts so, else a branch probability */
			double p = v == d->entry ? w[e] : w[e] / total;

			for (r = 0; r < pl->len[u]; r++)
				cand[nc++] = (struct path_suffix){ p * pl->best[(size_t)u * k + r].score,
								   e, r };
		}
		qsort(cand, nc, sizeof(*cand), by_score);
		pl->len[v] = nc < k ? nc : k;
		memcpy(pl->best + (size_t)v * k, cand, pl->len[v] * sizeof(*cand));
	}
out:
	free(order);
	free(cand);
	if (err)
		path_likely_free(pl);
	return err;
}

uint64_t path_likely_val(const struct path_likely *pl, const struct pathnum *pn, uint32_t v,
			 uint32_t r)
{
	uint64_t id = 0;

	while (v != pn->dag.exit) {
		const struct path_suffix *s = &pl->best[(size_t)v * pl->k + r];

		id += pn->val[s->edge];
		v = pn->dag.edges[s->edge].dst;
		r = s->rank;
	}
	return id;
}

void path_likely_free(struct path_likely *pl)
{
	free(pl->best);
	free(pl->len);
	pl->best = NULL;
	pl->len = NULL;
}
