/* SPDX-License-Identifier: GPL-2.0 */
/*
 * path_codes - prefix codes for Ball-Larus path numbers by where each path
 * starts: the preferential path profiling view (Vaswani, Nori & Chilimbi
 * 2007) applied to the trace's bits. A paths trace writes every path
 * number in the function's full width (pathnum.h), although the reader
 * knows where the next path starts (at ENTRY, after a call, at a loop
 * header) and, there, most of the time which few paths follow. So the
 * paths are split into classes by their first DAG edge out of ENTRY: one
 * class for the paths that start at ENTRY itself (its real out-edges), one
 * per START edge ENTRY->w (the paths that start at w after a back edge or
 * a call). Each class gets a Huffman code over its k likeliest paths
 * (path_likely: branch probabilities from edge weights, a heuristic guess
 * or a measured profile) plus an escape word when the class has more
 * paths; an escaped path is its escape word followed by its number in the
 * full width. Every word has at least one bit, a class of one path too:
 * in a paths trace a path end before a call is what separates two calls'
 * positions, so that an ENTER marker names its call (pathnum.h).
 *
 * Words are LSB first, like every emission; a class's words are
 * prefix-free among themselves, not across classes: the reader decodes a
 * word with the class it knows. The writer needs no class: a listed path's
 * word is found by its number (the codes are sorted by path), an unlisted
 * one's escape by the range of numbers its class owns.
 */
#ifndef PATHTRACE_PATH_CODES_H
#define PATHTRACE_PATH_CODES_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/pathnum.h>
#include <pathtrace_abi.h>

/* At most this many listed paths per class (path_codes_build clamps k). */
#define PATH_CODES_K_MAX 1024

struct path_code {
	uint64_t path;		/* Ball-Larus number */
	uint64_t value;		/* its word, LSB first */
	uint8_t nbits;		/* 1..32 */
	uint32_t cls;
};

struct path_codes {
	unsigned int width;	/* the numbering's width: an escaped number's bits */
	uint32_t ncodes;
	struct path_code *code;	/* listed paths, sorted by path */
	uint32_t nclass;
	uint32_t *class_edge;	/* per class: its START edge, GRAPH_NONE for ENTRY's class 0 */
	uint8_t *esc_nbits;	/* per class: its escape word's bits; 0: every path listed */
	uint64_t *esc_value;
	uint32_t *by_class;	/* code indices grouped by class, each group by (nbits, value) */
	uint32_t *class_start;	/* nclass + 1: class c's group is by_class[class_start[c]..] */
	uint32_t nrange;	/* ENTRY's DAG out-edges: the path numbers each owns */
	uint64_t *range_lo;	/* sorted; range i is [range_lo[i], range_lo[i + 1]) (last: npaths) */
	uint32_t *range_class;
	uint64_t npaths;
};

/*
 * 1 when pn's numbers can be coded by start: numbers of a bit or more, and
 * one successor after every cut call (else a reader would not know where
 * the path after it starts, so not which class's words to read); else 0.
 */
int path_codes_fit(const struct pathnum *pn);

/*
 * Codes for pn's paths under per-DAG-edge weights dag_w (path_likely's
 * units: any non-negative scale; see path_codes_dag_weights for CFG edge
 * weights), listing at most k paths a class. Returns 0; -PT_EINVAL for k
 * == 0, a numbering without paths or weights, or a DAG that is none;
 * -PT_ENOMEM.
 */
int path_codes_build(struct path_codes *pc, const struct pathnum *pn, const double *dag_w,
		     uint32_t k);

/*
 * The same, but a class some of whose paths a measured path profile counts
 * (paths[i] ran counts[i] times, n of them; numbers beyond pn's and
 * repeats are ignored) lists its counted paths by their counts, the
 * likeliest k, and the paths never seen share an escape weighing one
 * run: a path's likelihood measured, not guessed from branch
 * probabilities. Classes the profile does not reach rank by dag_w.
 * Returns as path_codes_build.
 */
int path_codes_build_counted(struct path_codes *pc, const struct pathnum *pn, const double *dag_w,
			     uint32_t k, const uint64_t *paths, const uint64_t *counts, uint32_t n);

/*
 * dag_w (room for pn->dag.ne, zeroed by the caller) from per-CFG-edge
 * weights (weight.h units: a heuristic's or a profile's), as the paths'
 * likelihoods need them.
 */
void path_codes_dag_weights(const struct pathnum *pn, const uint64_t *cfg_weight, double *dag_w);

/* The class of path id; -PT_EINVAL when id >= npaths. */
int64_t path_codes_class(const struct path_codes *pc, uint64_t id);

/*
 * The class of the paths that start at vertex v of pn (ENTRY, or a vertex
 * with a START edge); -PT_EINVAL for any other vertex.
 */
int64_t path_codes_class_at(const struct path_codes *pc, const struct pathnum *pn, uint32_t v);

/*
 * The word for path id: its code (*raw 0: *nbits bits of *value), or its
 * class's escape word (*raw 1: *nbits, *value) that the id then follows in
 * width bits. Returns 0; -PT_EINVAL when id >= npaths.
 */
int path_codes_word(const struct path_codes *pc, uint64_t id, uint64_t *value, unsigned int *nbits,
		    int *raw);

/* Bits path id costs in all (its word, or escape and width). 0 for id >= npaths. */
unsigned int path_codes_nbits(const struct path_codes *pc, uint64_t id);

/*
 * Reads one word of class cls: next(ctx, n) returns the next n (1..64)
 * bits, LSB first. Returns 0 with the path in *id; -PT_EFORMAT when no
 * word of the class matches within 32 bits, or an escaped number lies
 * outside the class; -PT_EINVAL for a class that does not exist. Reading
 * past the end is the caller's to detect (next returns zeros then).
 */
int path_codes_read(const struct path_codes *pc, uint32_t cls,
		    uint64_t (*next)(void *ctx, unsigned int n), void *ctx, uint64_t *id);

/* pc as a plan carries it (pathtrace_abi.h): codes room for ncodes, ranges for nrange. */
void path_codes_to_plan(const struct path_codes *pc, struct pt_path_code *codes,
			struct pt_path_range *ranges);

/*
 * The codes a plan carries (pathtrace_abi.h), checked against
 * pn, the numbering the reader made from the CFG: one path_codes_fit
 * allows, npaths and the ranges
 * its ENTRY's out-edges own, one escape per class (0 bits: the class lists
 * every path), codes of 1..32 bits sorted by path, and each class's words
 * with its escape prefix-free. Returns 0; -PT_EFORMAT when any of it does
 * not hold (why, if not NULL, says what; whylen bytes); -PT_ENOMEM.
 */
int path_codes_load(struct path_codes *pc, const struct pathnum *pn,
		    const struct pt_path_code *codes, uint32_t ncodes,
		    const struct pt_path_range *ranges, uint32_t nranges, uint64_t npaths,
		    char *why, size_t whylen);

/* Frees what path_codes_build allocated (safe on a zeroed struct). */
void path_codes_free(struct path_codes *pc);

#endif
