/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chord_bound - the probe hits that witnesses on spanning-tree chords
 * alone would take on a measured execution: a yardstick for placement.
 *
 * A witness plan starts from a probe on every chord of a spanning tree (1994
 * paper; the EXIT->ENTRY edge in the tree, so a path to EXIT is blocked
 * too) and on the blockers that calls add. On measured edge counts the
 * tree that minimizes the chords' hits is the optimum of the first part,
 * with each chord at the site probesite.h would give it: at its target's
 * entry or in its source block it fires as often as the edge runs, at a
 * conditional jump (a critical edge) as often as the jump runs, in either
 * direction. Chords observed at one instruction share its hits. What a plan
 * takes above this (plus its ENTER probes) is the price of blocking at
 * calls and of choosing sites by cost (an int3 weighs ten optimized
 * probes) rather than by hits. It is the floor of a tree's chords, not of
 * every trace set: witness_prune.c drops chords Trace(Ewit) does not need
 * (a tree breaks every undirected cycle, tracing needs only diamonds and
 * directed cycles broken), and a plan can go below it.
 *
 * With PLAN_COSTS_EDGES (code in an inline copy, plan.h) a chord's site
 * runs only with its edge, so each chord costs its edge's count wherever
 * probesite.h places it: the floor that edge instrumentation reaches.
 */
#ifndef PATHTRACE_CHORD_BOUND_H
#define PATHTRACE_CHORD_BOUND_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/graph.h>
#include <pathtrace/plan.h>

struct chord_bound {
	uint64_t hits;		/* hits of the chords' sites (kprobes: each site once) */
	uint64_t branch_hits;	/* of them at conditional jumps (int3 probes) */
	uint64_t optimizable_hits;	/* of them at sites whose window qualifies for a jump */
	uint32_t chords;	/* chords of the tree */
	uint32_t sites;		/* distinct instructions they are observed at */
	uint32_t unobservable;	/* chords no probe can observe (edges forced out of the tree) */
};

/*
 * The bound for one function: c its CFG, g = cfg_to_graph(c), edge_count
 * (c->nedges) and block_count (c->nblocks) a measured execution's counts,
 * costs what a site costs. Returns 0; -PT_EINVAL for a NULL argument or a
 * graph that is not c's; -PT_ENOMEM.
 */
int chord_bound(const struct cfg *c, const struct graph *g, const uint64_t *edge_count,
		const uint64_t *block_count, enum plan_costs costs, struct chord_bound *out);

#endif
