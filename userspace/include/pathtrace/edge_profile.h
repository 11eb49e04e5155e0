/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edge_profile - a measured edge profile (the text `pathregen --edges`
 * writes) as exact weights for planning: profile-guided placement, the
 * 1994 paper's exact weighting (Section 5) instead of its heuristic.
 *
 * The format read, one function after another:
 *   NAME (func ID): N activations[ note]
 *   COUNT  NAME+0xOFF -> NAME+0xOFF|EXIT (KIND)     (NAME.cold+0xOFF for cold blocks)
 * Lines starting with '#' and blank lines are skipped. A function whose
 * heading note says it was not counted contributes no edges.
 */
#ifndef PATHTRACE_EDGE_PROFILE_H
#define PATHTRACE_EDGE_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include <pathtrace/cfg.h>

struct edge_profile_edge {
	uint64_t count;
	uint64_t src_off, dst_off;	/* from the function's (or .cold part's) start */
	uint8_t src_cold, dst_cold, dst_exit;
	uint8_t kind;			/* enum cfg_edge_kind */
};

struct edge_profile_func {
	char *name;
	struct edge_profile_edge *edges;
	uint32_t nedges;
};

struct edge_profile {
	struct edge_profile_func *funcs;
	uint32_t nfuncs;
};

/*
 * Reads a profile from fp. Returns 0; -PT_EFORMAT with *line set to the
 * first line it cannot read; -PT_ENOMEM. Free p with edge_profile_free
 * either way.
 */
int edge_profile_read(FILE *fp, struct edge_profile *p, uint32_t *line);

/*
 * Exact weights (weight.h units) for c's edges from the profile of the
 * function named c->name whose edges are exactly c's (same blocks, same
 * kinds; of several functions of that name, the first that matches).
 * Returns 0 with weight[c->nedges] filled; -PT_ENOENT when no function of
 * the profile matches c (not profiled, or its code changed).
 */
int edge_profile_weights(const struct edge_profile *p, const struct cfg *c, uint64_t *weight);

void edge_profile_free(struct edge_profile *p);

#endif
