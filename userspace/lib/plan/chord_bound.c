// SPDX-License-Identifier: GPL-2.0
/* chord_bound: the chords' hits of the spanning tree best for measured counts (chord_bound.h). */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/chord_bound.h>
#include <pathtrace/error.h>
#include <pathtrace/probesite.h>
#include <pathtrace/spantree.h>

int chord_bound(const struct cfg *c, const struct graph *g, const uint64_t *edge_count,
		const uint64_t *block_count, enum plan_costs costs, struct chord_bound *out)
{
	struct probesite *site;
	uint64_t *hits;
	uint8_t *in_tree, *seen;
	uint32_t e;
	int err;

	if (!c || !g || !edge_count || !block_count || !out || g->ne != c->nedges ||
	    g->nv < c->nblocks)
		return -PT_EINVAL;
	memset(out, 0, sizeof(*out));
	site = malloc(((size_t)c->nedges + 1) * sizeof(*site));
	hits = malloc(((size_t)c->nedges + 1) * sizeof(*hits));
	in_tree = malloc((size_t)c->nedges + 1);
	seen = calloc((size_t)c->ninsns + 1, 1);
	if (!site || !hits || !in_tree || !seen) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = probesite_edges(c, edge_count, site);
	if (err)
		goto out;
	/* What the edge would cost as a chord; the tree keeps the dearest. */
	for (e = 0; e < c->nedges; e++) {
		const struct cfg_edge *ce = &c->edges[e];

		if (site[e].how == PROBESITE_NONE)
			hits[e] = PROBESITE_COST_NONE;
		else if (costs == PLAN_COSTS_EDGES)
			hits[e] = edge_count[e];
		else if (site[e].how == PROBESITE_BRANCH && ce->src < c->nblocks)
			hits[e] = block_count[ce->src];
		else
			hits[e] = edge_count[e];
	}
	err = spantree_max(g, hits, NULL, in_tree);
	if (err)
		goto out;
	for (e = 0; e < c->nedges; e++) {
		uint32_t i = site[e].insn;
		uint64_t n;

		if (in_tree[e])
			continue;
		out->chords++;
		if (site[e].how == PROBESITE_NONE || i >= c->ninsns) {
			out->unobservable++;
			continue;
		}
		if (costs == PLAN_COSTS_EDGES) {
			/* its own site, run with its edge */
			out->sites++;
			out->hits += edge_count[e];
			if (site[e].how == PROBESITE_BRANCH)
				out->branch_hits += edge_count[e];
			continue;
		}
		if (seen[i])
			continue;	/* one probe observes both edges of a branch */
		seen[i] = 1;
		out->sites++;
		n = c->insns[i].block < c->nblocks ? block_count[c->insns[i].block] : 0;
		out->hits += n;
		if (site[e].how == PROBESITE_BRANCH)
			out->branch_hits += n;
		else if (site[e].window_ok)
			out->optimizable_hits += n;
	}
out:
	free(site);
	free(hits);
	free(in_tree);
	free(seen);
	return err;
}
