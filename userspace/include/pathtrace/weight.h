/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weight - edge weightings that steer the maximum spanning tree (1994
 * paper, Section 5): instrumentation goes where the weight is low.
 *
 * A weighting gives every edge of a graph a uint64 weight in units of
 * WEIGHT_ONE = one execution of the function (the EXIT->ENTRY edge has
 * weight WEIGHT_ONE in the heuristic). Weights saturate at WEIGHT_MAX.
 */
#ifndef PATHTRACE_WEIGHT_H
#define PATHTRACE_WEIGHT_H

#include <stdint.h>

#include <pathtrace/graph.h>

#define WEIGHT_ONE (1ull << 16)
#define WEIGHT_MAX (1ull << 62)
#define LOOP_MULTIPLIER 10

/*
 * The Section 5 heuristic: loops (natural loops of back edges x->y where y
 * dominates x) iterate LOOP_MULTIPLIER times, each branch of a predicate is
 * equally likely, loop-exit edges share the loop entry's weight. Retreating
 * edges of irreducible cycles are weighted like other edges but do not feed
 * their target (the traversal needs an acyclic graph). Fills weight[g->ne].
 * Returns 0; -PT_EINVAL when g has no adjacency; -PT_ENOMEM.
 */
int weight_heuristic(const struct graph *g, uint64_t *weight);

/*
 * The same with branch priors: rule (3) splits what a vertex leaves among
 * its out-edges in proportion to prior[e] (> 0, g->ne of them) instead of
 * equally, so that a guess about which way a branch goes (a static key's
 * live state, an out-of-line error path) steers the spanning tree as a
 * profile would. prior NULL: weight_heuristic. Returns as weight_heuristic.
 */
int weight_heuristic_prior(const struct graph *g, const double *prior, uint64_t *weight);

/*
 * Exact weighting from measured edge counts (a previous profile):
 * weight[e] = count[e] * WEIGHT_ONE, saturating. Returns 0 or -PT_EINVAL
 * for NULL arrays.
 */
int weight_exact(const struct graph *g, const uint64_t *count, uint64_t *weight);

/*
 * Loop structure the heuristic found (exposed for tests and `plan`): for
 * every edge, whether it is a back edge (target dominates source) and
 * whether it leaves some natural loop. Either array may be NULL.
 * Returns 0; -PT_EINVAL; -PT_ENOMEM.
 */
int weight_loops(const struct graph *g, uint8_t *is_backedge, uint8_t *is_loop_exit);

#endif
