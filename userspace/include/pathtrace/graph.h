/* SPDX-License-Identifier: GPL-2.0 */
/*
 * graph - the directed graph the profiling and tracing algorithms run on.
 *
 * It is the 1994 paper's CFG: vertices with a unique ENTRY and a unique
 * EXIT, edges between them, and call vertices. It knows nothing of x86:
 * the CFG recovery (cfg.h) produces one per function and the simulator
 * generates random ones. The EXIT->ENTRY edge the algorithms need is not
 * stored; each algorithm adds it where the paper does.
 *
 * Build: graph_init, graph_add_vertex / graph_add_edge, graph_finish (which
 * builds the adjacency arrays); then read-only until graph_free.
 */
#ifndef PATHTRACE_GRAPH_H
#define PATHTRACE_GRAPH_H

#include <stdint.h>
#include <stddef.h>

#define GRAPH_NONE UINT32_MAX

/* Vertex flags. */
#define GRAPH_V_CALL	(1u << 0)	/* the vertex ends in a call (cuts paths, needs blocking) */
#define GRAPH_V_EXIT	(1u << 1)	/* the unique EXIT vertex */
#define GRAPH_V_ENTRY	(1u << 2)	/* the unique ENTRY vertex */

struct graph_edge {
	uint32_t src;
	uint32_t dst;
};

struct graph {
	uint32_t nv;			/* vertices 0 .. nv-1 */
	uint32_t ne;			/* edges 0 .. ne-1 */
	uint32_t entry;
	uint32_t exit;
	struct graph_edge *edges;
	uint32_t *vflags;		/* GRAPH_V_* per vertex */
	uint32_t cap_v, cap_e;
	/* Built by graph_finish: CSR adjacency, edge ids in insertion order. */
	uint32_t *out_start;		/* nv + 1 */
	uint32_t *out_edges;		/* ne */
	uint32_t *in_start;		/* nv + 1 */
	uint32_t *in_edges;		/* ne */
};

/* Initializes an empty graph. */
void graph_init(struct graph *g);

/* Adds a vertex; returns its id, or -PT_ENOMEM. */
int64_t graph_add_vertex(struct graph *g, uint32_t flags);

/* Adds edge src->dst; returns its id, -PT_EINVAL for an unknown vertex, or -PT_ENOMEM. */
int64_t graph_add_edge(struct graph *g, uint32_t src, uint32_t dst);

/*
 * Sets entry and exit and builds adjacency. Returns 0, -PT_EINVAL if
 * entry/exit are unknown or equal, or -PT_ENOMEM.
 */
int graph_finish(struct graph *g, uint32_t entry, uint32_t exit);

/* Frees everything; the graph is empty afterwards. */
void graph_free(struct graph *g);

static inline uint32_t graph_out_degree(const struct graph *g, uint32_t v)
{
	return g->out_start[v + 1] - g->out_start[v];
}

static inline uint32_t graph_in_degree(const struct graph *g, uint32_t v)
{
	return g->in_start[v + 1] - g->in_start[v];
}

#endif
