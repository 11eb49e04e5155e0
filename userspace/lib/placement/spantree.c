// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include <pathtrace/error.h>
#include <pathtrace/spantree.h>

#include "edge_order.h"

struct dsu {
	uint32_t *parent;
};

static uint32_t dsu_find(struct dsu *d, uint32_t v)
{
	while (d->parent[v] != v) {
		d->parent[v] = d->parent[d->parent[v]];
		v = d->parent[v];
	}
	return v;
}

/* Joins the sets of a and b; returns 0 if they were already one set. */
static int dsu_union(struct dsu *d, uint32_t a, uint32_t b)
{
	a = dsu_find(d, a);
	b = dsu_find(d, b);
	if (a == b)
		return 0;
	d->parent[a] = b;
	return 1;
}

int spantree_max(const struct graph *g, const uint64_t *weight, const uint8_t *forced,
		 uint8_t *in_tree)
{
	struct dsu d;
	uint32_t *order, v, e, n = 0;
	int err = 0;

	d.parent = malloc(((size_t)g->nv + 1) * sizeof(*d.parent));
	order = malloc(((size_t)g->ne + 1) * sizeof(*order));
	if (!d.parent || !order) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (v = 0; v < g->nv; v++)
		d.parent[v] = v;
	dsu_union(&d, g->exit, g->entry);
	for (e = 0; e < g->ne; e++) {
		in_tree[e] = 0;
		if (forced && forced[e]) {
			if (g->edges[e].src == g->edges[e].dst ||
			    !dsu_union(&d, g->edges[e].src, g->edges[e].dst)) {
				err = -PT_EINVAL;
				goto out;
			}
			in_tree[e] = 1;
		} else {
			order[n++] = e;
		}
	}
	edges_by_weight_desc(order, n, weight);
	for (v = 0; v < n; v++) {
		e = order[v];
		if (dsu_union(&d, g->edges[e].src, g->edges[e].dst))
			in_tree[e] = 1;
	}
out:
	free(d.parent);
	free(order);
	return err;
}
