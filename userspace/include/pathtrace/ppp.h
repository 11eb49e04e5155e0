/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ppp - preferential path profiling (Vaswani, Nori, Chilimbi, POPL 2007):
 * compact numbers for a set of interesting paths of a numbered DAG.
 *
 * ppp_build runs the paper's computePPPIncrements (its Figure 10) on the
 * DAG of a struct pathnum: nodes in reverse topological order, for every
 * out-edge e with interesting paths and every prefix q reaching it, the
 * weight cis(q) - min pid over (e, q), joined by maximum; a prefix is
 * represented, as in the paper's implementation, by its Ball-Larus partial
 * sum (unique among the prefixes that reach a node). Interesting paths get
 * distinct PPP ids in [min_id, max_id]; the compactness measure is
 * gamma = (max_id - min_id + 1) / |I| (1 is perfect).
 *
 * Other paths may alias an interesting id. The second register resolves
 * it: the Ball-Larus number runs alongside (pathnum.h), and an id counts
 * as interesting only when the slot's stored Ball-Larus number matches.
 * Both registers update on the same edges: the PPP weights are moved to
 * the pathnum's chords with the same spanning tree (ppp.inc).
 */
#ifndef PATHTRACE_PPP_H
#define PATHTRACE_PPP_H

#include <stdint.h>

#include <pathtrace/pathnum.h>

struct ppp {
	const struct pathnum *pn;	/* not owned */
	uint32_t n;			/* interesting paths */
	uint64_t *bl;			/* n: their Ball-Larus numbers, as given */
	int64_t *id;			/* n: their PPP ids */
	int64_t *w;			/* per DAG edge: PPP weight W(e) */
	int64_t *inc;			/* per DAG edge: W moved onto the pathnum's chords */
	int64_t min_id, max_id;
	double gamma;			/* compactness */
	uint64_t *slot_bl;		/* max_id - min_id + 1: BL number per id, or UINT64_MAX */
};

/*
 * Numbers the interesting paths bl[0..n-1] (Ball-Larus numbers of pn, no
 * duplicates). Returns 0; -PT_EINVAL for an empty set, a number >= NumPaths
 * or a duplicate; -PT_EOVERFLOW when an id leaves int64; -PT_ENOMEM.
 */
int ppp_build(struct ppp *pp, const struct pathnum *pn, const uint64_t *bl, uint32_t n);

void ppp_free(struct ppp *pp);

/* The PPP id of a DAG path (edges as pathnum_decode gives): the sum of W. */
int64_t ppp_path_id(const struct ppp *pp, const uint32_t *edges, uint32_t n);

/*
 * Classifies a path from its two registers: the index of the interesting
 * path (0..n-1 in the order given) when the PPP id is in range and the
 * slot's Ball-Larus number matches, else -1 (an alias or an id outside).
 */
int64_t ppp_classify(const struct ppp *pp, int64_t ppp_id, uint64_t bl);

/*
 * The interesting paths by heuristic: the k (at most PPP_HOTTEST_MAX) most likely
 * paths of pn under the edge weights cfg_weight (per CFG edge, weight.h
 * units: a static estimate or a measured profile), a path's likelihood
 * being how often it starts (the weight of ENTRY's edge, of the back edge
 * or call it starts after) times its branch probabilities (weight of the
 * edge over the weight of its source's out-edges). Writes their Ball-Larus
 * numbers, most likely first, to bl (room for k) and their count (at most
 * min(k, NumPaths)) to *n. Returns 0; -PT_EINVAL for k == 0; -PT_ENOMEM.
 */
#define PPP_HOTTEST_MAX 1024

int ppp_hottest(const struct pathnum *pn, const uint64_t *cfg_weight, uint32_t k, uint64_t *bl,
		uint32_t *n);

#endif
