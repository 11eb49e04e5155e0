/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim - the simulator the property tests use as their oracle: random
 * programs (several functions with random CFGs: nested and multi-exit
 * loops, irreducible gotos, early returns, multiway branches, calls
 * between functions including recursion, indirect calls, untraced
 * functions that call traced ones, and tail calls: an edge into EXIT that
 * jumps to another function, traced or not, which then runs with the
 * caller's return address) and random executions of them.
 *
 * An execution produces both the truth (the block sequence of every traced
 * activation, nested in execution order; per-function edge counts) and the
 * stream the kernel would emit for it under docs/runtime.md: one owner's
 * bitstring plus ENTER markers at bit positions. What each edge emits is
 * up to an emitter; sim_emit_encoding emits a struct encoding (witness or
 * bits), other modes (path numbers) plug in their own.
 */
#ifndef PATHTRACE_SIM_H
#define PATHTRACE_SIM_H

#include <stdint.h>

#include <pathtrace/encoding.h>
#include <pathtrace/graph.h>

#include "regen.h"

#define SIM_CALL_NONE UINT32_MAX		/* callee outside the program: nothing traced runs */
#define SIM_CALL_INDIRECT (UINT32_MAX - 1)	/* chosen at run time among all functions or none */

struct sim_func {
	struct graph g;		/* entry 0, exit 1 */
	uint32_t func_id;	/* 100 + index, so ids and indices differ */
	int traced;		/* untraced: emits nothing, no ENTER, but its calls run */
	uint32_t *callee;	/* nv: call vertices: function index, SIM_CALL_NONE or _INDIRECT */
	uint32_t *callee_id;	/* nv: func_id of a direct traced callee, else UINT32_MAX */
	uint64_t *ret_addr;	/* nv: address after the call instruction; 0 for other vertices */
	uint8_t *recursive;	/* nv: call that may recurse (always bypassable) */
	uint64_t *forced_cost;	/* nv: cost to EXIT when forced (recursive calls first, then steps) */
	uint32_t *tail;		/* ne: for an edge into EXIT, the function index it tail-calls
				 * (always a higher index), or SIM_CALL_NONE (a return) */
	uint32_t *tail_id;	/* ne: regen_func.tail_callee (REGEN_TAIL_NONE, _OTHER or a func_id) */
	struct encoding enc;	/* traced functions, for sim_emit_encoding (set by the caller) */
};

struct sim_program {
	uint32_t nfuncs;
	struct sim_func *funcs;
};

/* xorshift64*: the simulator's only randomness; a seed replays everything. */
uint64_t sim_rand(uint64_t *rng);
uint32_t sim_below(uint64_t *rng, uint32_t n);

/*
 * A random program of nfuncs functions with at most max_stmts structured
 * statements each (plus random gotos). About one function in four is
 * untraced (never function 0 when nfuncs == 1). Returns 0 or -PT_ENOMEM.
 */
int sim_generate(struct sim_program *p, uint64_t *rng, uint32_t nfuncs, uint32_t max_stmts);

/* Frees the program and each function's enc. */
void sim_free(struct sim_program *p);

/* A stream under construction (bits LSB first, markers in emission order). */
struct sim_stream {
	uint64_t *bits;
	uint64_t nbits;
	uint64_t cap_words;
	struct regen_marker *markers;
	uint32_t nmarkers, cap_markers;
	int nomem;		/* an append failed: the stream is unusable */
};

void sim_stream_emit(struct sim_stream *s, unsigned int nbits, uint64_t value);
void sim_stream_marker(struct sim_stream *s, uint32_t type, uint32_t func, uint32_t arg,
		       uint64_t value);
/* The regen_stream view of s (valid while s is). */
void sim_stream_view(const struct sim_stream *s, uint64_t owner, struct regen_stream *out);
void sim_stream_free(struct sim_stream *s);

/*
 * What an execution emits besides ENTER markers. edge: edge e of traced
 * function f was traversed; vertex: a traced activation arrived at vertex v
 * (before v's call, if any). state: REGEN_STATE_WORDS per activation,
 * zeroed at entry. Either callback may be NULL.
 */
struct sim_emitter {
	void *ctx;
	void (*vertex)(void *ctx, const struct sim_func *f, uint32_t v, uint64_t *state,
		       struct sim_stream *s);
	void (*edge)(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state,
		     struct sim_stream *s);
};

/*
 * The 1994 encodings: edge e appends f->enc's edge_nbits[e] bits of
 * edge_value[e], then the vertex emission of its target, if any.
 */
void sim_emit_encoding(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state,
		       struct sim_stream *s);

/* One event of the truth: type is REGEN_EV_ENTER, _BLOCK or _EXIT. */
struct sim_event {
	uint32_t type;
	uint32_t func;		/* func_id */
	uint32_t block;
	uint32_t edge;		/* BLOCK: edge that led here, GRAPH_NONE at entry */
	uint32_t depth;		/* traced depth, 0 = outermost traced */
	uint64_t pos;		/* bits in the stream when it happened (events before
				 * the last emission have pos < the stream's nbits) */
};

struct sim_truth {
	struct sim_event *ev;
	uint32_t nev, cap;
	uint64_t **edge_count;	/* [func index][edge]: traversals, traced or not */
	uint64_t **early_exit;	/* [func index][vertex]: activations stopped there */
	uint64_t *activations;	/* [func index] */
	uint64_t steps;		/* vertices visited in all functions */
	int stopped;		/* the run stopped early (stop_after) */
	int nomem;
};

int sim_truth_init(struct sim_truth *t, const struct sim_program *p);
void sim_truth_free(struct sim_truth *t, const struct sim_program *p);

struct sim_run_opts {
	uint32_t root;		/* function index the execution starts in */
	uint32_t max_depth;	/* past it, calls that may recurse are avoided */
	uint64_t max_steps;	/* past it, every activation heads to EXIT */
	uint64_t stop_after;	/* 0, or stop the whole run after this many steps (Fig. 7) */
};

/*
 * Runs one execution from opts->root to its EXIT (or until stop_after),
 * appending to s and t. Returns 0; -PT_ENOMEM.
 */
int sim_run(const struct sim_program *p, const struct sim_run_opts *opts, uint64_t *rng,
	    const struct sim_emitter *em, struct sim_stream *s, struct sim_truth *t);

#endif
