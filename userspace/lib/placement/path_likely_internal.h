/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The k most likely ways from each vertex of a path-numbering DAG to EXIT,
 * under edge weights: shared by ppp_hottest (ppp.c) and path_codes.c; not
 * a public API.
 */
#ifndef PATHTRACE_PATH_LIKELY_INTERNAL_H
#define PATHTRACE_PATH_LIKELY_INTERNAL_H

#include <pathtrace/pathnum.h>

/* One of a vertex's best suffixes: its first DAG edge, then rank of dst's. */
struct path_suffix {
	double score;
	uint32_t edge;
	uint32_t rank;
};

struct path_likely {
	uint32_t k;
	struct path_suffix *best;	/* vertex v's suffixes at best[v * k], most likely first */
	uint32_t *len;			/* per vertex: how many (at most k) */
};

/*
 * Per DAG edge of pn, the CFG weight of what it stands for (the edge, a
 * back edge's end, the paths that start after a back edge or call, a
 * call's end), plus 1e-9 so that an unweighted edge still ranks its paths.
 * w has room for pn->dag.ne and is zeroed by the caller.
 */
void path_likely_dag_weights(const struct pathnum *pn, const uint64_t *cfg_weight, double *w);

/*
 * Fills pl for every vertex: a suffix's score is the product of its branch
 * probabilities (an edge's weight w[] over its source's out-edges'), except
 * that at ENTRY an edge's weight itself counts (how often a path starts so).
 * Returns 0; -PT_EINVAL for k == 0 or a graph that is no DAG; -PT_ENOMEM.
 */
int path_likely_build(struct path_likely *pl, const struct pathnum *pn, const double *w,
		      uint32_t k);

/* The sum of Val along vertex v's suffix of rank r. */
uint64_t path_likely_val(const struct path_likely *pl, const struct pathnum *pn, uint32_t v,
			 uint32_t r);

/* Frees what path_likely_build allocated (safe on a zeroed struct). */
void path_likely_free(struct path_likely *pl);

/* A topological (Kahn) order of DAG d into order (room for d->nv). Returns 0; -PT_EINVAL for a cycle; -PT_ENOMEM. */
int path_likely_topo(const struct graph *d, uint32_t *order);

#endif
