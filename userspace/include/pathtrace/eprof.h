/* SPDX-License-Identifier: GPL-2.0 */
/*
 * eprof - edge profiling with edge counters, Eprof(Ecnt) (1994 paper,
 * Section 3.2), and vertex profiling with edge counters, Vprof(Ecnt)
 * (Section 3.3).
 *
 * A counter placement is a set of edges with counters. eprof_place puts
 * counters on the chords of a maximum spanning tree (seeded with
 * EXIT->ENTRY); eprof_counts recovers every edge's count from the
 * counters (Fig. 6 propagation) with the early-exit correction (Fig. 7).
 * vprof_place removes counters by the Fig. 11 heuristic; vprof_counts
 * recovers every vertex's count (Fig. 8).
 */
#ifndef PATHTRACE_EPROF_H
#define PATHTRACE_EPROF_H

#include <stdint.h>

#include <pathtrace/graph.h>

struct counters {
	uint32_t ne;
	uint32_t ncounters;
	uint32_t *counter;	/* ne: counter index of the edge, or GRAPH_NONE */
	uint32_t *edge;		/* ncounters: the edge of each counter */
	uint8_t *in_tree;	/* ne: spanning-tree edge */
	uint8_t *removed;	/* ne: Vprof(Ecnt): a chord whose counter Fig. 11 removed */
	uint64_t cost;		/* sum of the counted edges' weights (saturating) */
};

/*
 * Eprof(Ecnt) placement for weights weight[g->ne]. Returns 0; -PT_EINVAL
 * when g has no adjacency; -PT_ENOMEM. Free with counters_free.
 */
int eprof_place(const struct graph *g, const uint64_t *weight, struct counters *c);

/*
 * Vprof(Ecnt) placement: eprof_place, then the Fig. 11 heuristic removes
 * the counter of a chord (heaviest first) when its tree cycle is pipeless
 * and shares no vertex with a cycle already freed. Returns as eprof_place.
 */
int vprof_place(const struct graph *g, const uint64_t *weight, struct counters *c);

/*
 * Every edge's count from the counters' values count[c->ncounters] (Fig. 6,
 * leaves of the tree first) for a placement from eprof_place. early_exit
 * (nv entries, or NULL) counts activations that ended at a vertex without
 * reaching EXIT (Fig. 7: an edge v->EXIT with that count). Writes
 * edge_count[g->ne] and *activations (the EXIT->ENTRY count; may be NULL).
 * Returns 0; -PT_EINVAL when the counts contradict the flow law (negative
 * or overflowing results: nothing is guessed) or c is a Vprof placement;
 * -PT_ENOMEM.
 */
int eprof_counts(const struct graph *g, const struct counters *c, const uint64_t *count,
		 const uint64_t *early_exit, uint64_t *edge_count, uint64_t *activations);

/*
 * Every vertex's count from a vprof_place placement (Fig. 8: the removed
 * counters' edges get 0, the tree edges follow by propagation, possibly
 * with values that differ from the execution's but with the same vertex
 * sums). vertex_count[v] counts executions of v (EXIT: returns). Returns 0;
 * -PT_EINVAL when the counts contradict the flow law; -PT_ENOMEM.
 */
int vprof_counts(const struct graph *g, const struct counters *c, const uint64_t *count,
		 const uint64_t *early_exit, uint64_t *vertex_count);

void counters_free(struct counters *c);

#endif
