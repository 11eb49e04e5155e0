/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathnum - Ball-Larus path numbering (Efficient Path Profiling, 1996) on a
 * struct graph, with the cuts docs/runtime.md needs for tracing.
 *
 * The CFG becomes a DAG on the same vertices:
 *  - back edges (a DFS from ENTRY; irreducible graphs too: the DFS back-edge
 *    set always leaves a DAG) u->h become the pseudo edges u->EXIT (the path
 *    ends) and ENTRY->h (the next path starts at h);
 *  - the out-edges v->s of a call vertex v are cut the same way: one pseudo
 *    edge v->EXIT (the path ends at the call, its number is emitted before
 *    the call instruction) and ENTRY->s (the next path starts after it);
 *    a call vertex whose only successor is EXIT keeps its real edge v->EXIT
 *    as its path end. ENTRY's own call is not cut: the engine handles a
 *    call vertex's ENTER markers before it asks the decoder for an edge,
 *    so a path number cannot be read at a path's first vertex before its
 *    call; the first path instead runs through ENTRY's call (its out-edges
 *    are forced into the tree, so no increment runs before the call) and
 *    is emitted later. Between the caller's call and ENTRY's call the
 *    function's own ENTER marker separates them; every later call of the
 *    activation follows at least one emitted path number. When ENTRY's
 *    successor is also a loop header, its START edge cannot be forced too
 *    (two parallel tree edges): it may get an increment, which every back
 *    edge into it sets with PT_OP_PATH_SET right after its EMIT (runtime.md
 *    allows the SET; nothing runs between the two). A START edge after a
 *    call has no such probe and always stays at 0.
 * The decoder reads the next path number as soon as a path ends at a
 * back edge or call (after the callee's markers), never at a path's first
 * vertex, for the same reason.
 * NumPaths(v) and Val(e) follow the paper (reverse topological order, out
 * edges in the order the CFG lists them). Chord increments come from a
 * maximum spanning tree (spantree_max) of the DAG plus EXIT->ENTRY, with
 * every ENTRY->w pseudo edge forced into the tree: its increment is 0, so a
 * path that starts at w starts with the register at 0, as the register
 * rules of docs/runtime.md require.
 *
 * Optimizations of the paper and how they meet "register 0 at path start":
 *  - Initialization (r = Inc at a path's first chord instead of r = 0 at
 *    ENTRY then r += Inc) needs no probe at all here: every path end resets
 *    the register (PT_OP_PATH_EMIT), an owner switch resets it, and a
 *    callee leaves it at 0, so the register is already 0 at every path
 *    start. First chords keep r += Inc, which equals r = Inc on 0, and stays
 *    exact when a PARTIAL sum moved part of the value elsewhere.
 *  - Count at the last chord: the EMIT of a path end is moved up onto the
 *    chords entering v when v's only DAG out-edge leads to the end and every
 *    DAG edge into v is a real chord (or a real tree edge whose source
 *    qualifies in turn). Every path through v then passes exactly one of
 *    those chords, no increment follows it, and the chord emits
 *    r + Inc(chord) + Inc(rest) and resets r: one probe fewer, still one
 *    emission per path and still before the call or exit that ends it.
 *    Priced (cost, call_cost): a real tree edge into that in-tree may take
 *    the EMIT itself, with a probe of its own, when that and the rest of
 *    the cut cost less than the end's own probe (as the witness planner's
 *    blockers are a minimum cut); the emission is the same, r + Inc(rest).
 *    The spanning tree also prices it: an in-edge of v (or of the chain
 *    into v) is cheaper as a chord by its share of the end's probe.
 */
#ifndef PATHTRACE_PATHNUM_H
#define PATHTRACE_PATHNUM_H

#include <stdint.h>

#include <pathtrace/graph.h>

/* What a DAG edge stands for. */
enum pathnum_edge_kind {
	PATHNUM_REAL = 0,	/* a CFG edge kept as is */
	PATHNUM_BACK_END,	/* u->EXIT for back edge u->h (orig = the back edge) */
	PATHNUM_CALL_END,	/* v->EXIT for call vertex v (orig = GRAPH_NONE) */
	PATHNUM_START,		/* ENTRY->w: a path starts at w (orig = GRAPH_NONE) */
};

/* What a CFG edge became. */
enum pathnum_cfg_role {
	PATHNUM_ROLE_REAL = 0,	/* dag[] is its DAG edge */
	PATHNUM_ROLE_BACK,	/* a back edge: end = its BACK_END edge, start = ENTRY->h */
	PATHNUM_ROLE_CALL,	/* out-edge of a call vertex, cut: start = ENTRY->s */
};

/* The actions a DAG edge carries at run time. */
#define PATHNUM_ACT_ADD		(1u << 0)	/* register += add */
#define PATHNUM_ACT_EMIT	(1u << 1)	/* emit register + emit, register = 0 */
#define PATHNUM_ACT_SET		(1u << 2)	/* then register = set (a back edge whose
						 * START edge has an increment) */

struct pathnum_cfg_edge {
	uint8_t role;		/* enum pathnum_cfg_role */
	uint32_t dag;		/* ROLE_REAL: the DAG edge; ROLE_BACK: the BACK_END edge */
	uint32_t start;		/* ROLE_BACK, ROLE_CALL: the START edge, or GRAPH_NONE
				 * when the target is ENTRY itself */
};

struct pathnum {
	const struct graph *g;	/* the CFG it numbers (not owned) */
	struct graph dag;	/* same vertices, DAG edges */
	uint8_t *kind;		/* per DAG edge: enum pathnum_edge_kind */
	uint32_t *orig;		/* per DAG edge: CFG edge, or GRAPH_NONE */
	struct pathnum_cfg_edge *cfg;	/* per CFG edge */
	uint32_t *call_end;	/* per vertex: its CALL_END (or real end) DAG edge, or GRAPH_NONE */
	uint32_t *start_of;	/* per vertex: its START DAG edge, or GRAPH_NONE */
	uint64_t *numpaths;	/* per vertex: NumPaths(v), paths from v to EXIT */
	uint64_t *val;		/* per DAG edge: Val(e) */
	uint8_t *chord;		/* per DAG edge: not in the spanning tree */
	uint64_t *inc;		/* per DAG edge: chord increment mod 2^64 (0 on tree edges) */
	uint8_t *act;		/* per DAG edge: PATHNUM_ACT_* after the optimizations */
	uint64_t *add;		/* per DAG edge: the ADD value */
	uint64_t *emit;		/* per DAG edge: the EMIT value */
	uint64_t *set;		/* per DAG edge: the SET value (BACK_END edges) */
	uint64_t *ecost;	/* per DAG edge: what a probe for it costs (0: START) */
	/* A second register beside (pathnum_second), or NULL: the same shape. */
	uint64_t *inc2;		/* per DAG edge: its chord increment (0 on tree edges) */
	uint64_t *add2;		/* per DAG edge: its ADD value */
	uint64_t *emit2;	/* per DAG edge: what it adds before the EMIT counts */
	uint64_t *set2;		/* per DAG edge: its SET value */
	uint8_t *call_start;	/* per vertex: a path starts there after a call */
	uint64_t npaths;	/* NumPaths(ENTRY) */
	unsigned int width;	/* bits per emitted path number */
	int has_calls;
	char reason[160];	/* why pathnum_build refused, for a human */
};

/*
 * Numbers g's paths. cost[e] (per CFG edge, may be NULL = all equal) is what
 * a probe on CFG edge e costs; a call vertex's end costs call_cost[v] (may
 * be NULL). Expensive edges go into the spanning tree, cheap ones become
 * chords. The DAG edges that end paths cost 0: they carry an EMIT anyway.
 * Returns 0; -PT_EOVERFLOW when NumPaths does not fit 64 bits; -PT_ENOTSUP
 * for a call vertex that may continue or return to EXIT (not observable
 * before its call), or with two out-edges to one vertex, or EXIT with out
 * edges; -PT_EINVAL for an unfinished graph; -PT_ENOMEM. p->reason says why.
 */
int pathnum_build(struct pathnum *p, const struct graph *g, const uint64_t *cost,
		  const uint64_t *call_cost);

/*
 * Moves the EMIT of end edge d (a DAG edge into EXIT) onto every DAG edge
 * into its source v, for when d itself cannot be observed (e.g. the edge
 * out of a ud2 block): each in-edge f then emits r + add(f) + emit(d)
 * instead of adding. Exact when d is v's only DAG out-edge: every path
 * through v crosses exactly one in-edge and nothing runs in between.
 * Returns 0; -PT_EINVAL when d carries no EMIT, v is ENTRY, has other out
 * edges or an in-edge that is not a real CFG edge.
 */
int pathnum_emit_earlier(struct pathnum *p, uint32_t d);

/*
 * Adds a second register that runs beside the path register on the same
 * probes (preferential path profiling's PPP id, ppp.h): inc2[e] per DAG
 * edge, nonzero only on chords (a numbering moved onto p's spanning tree),
 * summing along each path to that path's second number. Re-derives the
 * actions of both registers with one shape: an edge adds when either
 * register has an increment there, so the path register may gain ADD
 * actions of 0 (a planner writes no action for a 0). Call it before
 * pathnum_emit_earlier. Returns 0; -PT_EINVAL when p has no numbering, has
 * a second register already, or inc2 has an increment on a tree edge;
 * -PT_ENOMEM.
 */
int pathnum_second(struct pathnum *p, const uint64_t *inc2);

/* Frees what pathnum_build allocated (safe on a zeroed or refused struct). */
void pathnum_free(struct pathnum *p);

/*
 * The DAG edges of path number id, from ENTRY to EXIT, into edges[] (room
 * for max); returns the count; -PT_EINVAL if id >= NumPaths; -PT_EOVERFLOW
 * if more than max edges.
 */
int pathnum_decode(const struct pathnum *p, uint64_t id, uint32_t *edges, uint32_t max);

/*
 * The block sequence of path id: vertices from its first block to its last
 * (ENTRY and EXIT excluded unless they are real blocks on the path: ENTRY
 * is a block when the path starts there). Returns the count or as
 * pathnum_decode.
 */
int pathnum_blocks(const struct pathnum *p, uint64_t id, uint32_t *blocks, uint32_t max);

/* The number of a DAG path (sum of Val); edges[] as pathnum_decode gives. */
uint64_t pathnum_value(const struct pathnum *p, const uint32_t *edges, uint32_t n);

/* ceil(log2(n)) for n >= 1. */
unsigned int pathnum_log2_ceil(uint64_t n);

#endif
