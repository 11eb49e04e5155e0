/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spantree - maximum-weight spanning tree of a graph's undirected edges plus
 * the EXIT->ENTRY edge (1994 paper, Section 3): edges in the tree get no
 * instrumentation, the chords do, so heavy edges should be in the tree.
 */
#ifndef PATHTRACE_SPANTREE_H
#define PATHTRACE_SPANTREE_H

#include <stdint.h>

#include <pathtrace/graph.h>

/*
 * Fills in_tree[e] (1 or 0) for every edge e < g->ne. The EXIT->ENTRY edge
 * is always in the tree (it is not an edge of g). Edges with forced[e] set
 * (forced may be NULL) go in before any other; then the rest by decreasing
 * weight[e], ties broken by lower edge id, so the result is deterministic.
 * Self-loops are never in the tree. Returns 0; -PT_EINVAL when the forced
 * edges form a cycle; -PT_ENOMEM.
 */
int spantree_max(const struct graph *g, const uint64_t *weight, const uint8_t *forced,
		 uint8_t *in_tree);

#endif
