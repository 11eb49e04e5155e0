/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim - the one simulator the tests and benchmarks check against (not part
 * of what users link): one random-program generator, one executor, and two
 * back ends the executor reports to.
 *
 *  generator (sim.c)  random programs: several functions with random CFGs
 *      (nested and multi-exit loops, irreducible gotos, early returns,
 *      multiway branches, calls between functions including recursion,
 *      indirect calls, untraced functions that call traced ones, and tail
 *      calls: an edge into EXIT that jumps to another function, traced or
 *      not, which then runs with the caller's return address).
 *  lowering (sim_lower.c)  turns a generated program into x86-64 machine
 *      code; the real CFG builder (cfg_build) recovers it and the real
 *      planner (plan_build) plans it. The recovered CFG then replaces the
 *      abstract graph, so the executor walks exactly what the regenerator
 *      models (a multiway branch becomes a chain of Jcc blocks: cfg_build
 *      refuses jump tables).
 *  executor (sim.c)  one random execution: which edges run, which
 *      functions are called, the truth (the block sequence of every traced
 *      activation, nested in execution order; per-function edge counts).
 *      At every step of a traced activation it calls a back end.
 *  back end 1 (sim_stream.c)  the abstract stream the property tests use:
 *      one owner's bitstring plus ENTER markers (docs/runtime.md); what
 *      each edge emits is up to an emitter (sim_emit_encoding for a struct
 *      encoding, the path test plugs in its own).
 *  back end 2 (sim_kmod.c)  the kernel module's handlers, for lowered
 *      programs: the plans' actions on per-CPU accumulators and path
 *      registers, ENTER/BITS/BITS_ENTERS/BLOCK records, owner switches,
 *      task migration, interrupts, ring-buffer drops with LOSS records.
 *
 * Why one executor walking a graph with back ends rather than a machine
 * code interpreter: the truth must come from the walk, never from a
 * decoder, and the property tests need abstract graphs (emissions on
 * edges, no code). Lowering keeps the generator's shapes for the round
 * trips, and the executor stays the same for both.
 */
#ifndef PATHTRACE_SIM_H
#define PATHTRACE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/encoding.h>
#include <pathtrace/graph.h>
#include <pathtrace/plan.h>

#include "regen.h"

#define SIM_CALL_NONE UINT32_MAX		/* callee outside the program: nothing traced runs */
#define SIM_CALL_INDIRECT (UINT32_MAX - 1)	/* chosen at run time among all functions or none */

/* Lowered programs: function i at SIM_BASE + i * SIM_STRIDE. */
#define SIM_BASE 0xffffffffc0100000ull
#define SIM_STRIDE 0x10000ull
#define SIM_EXTERN 0xffffffff81200000ull	/* where calls outside the program go */

struct sim_func {
	struct graph g;		/* abstract: entry 0, exit 1; lowered: the recovered CFG */
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
	/*
	 * nv, or NULL: the traced callee of this direct call writes no ENTER
	 * (implicit entries, kmod/implicit.c; the call is an entered call of
	 * encoding.h), freed by sim_free. Abstract programs: set by the
	 * caller; lowered ones: by sim_lower from the callees' plans, whose
	 * implicit entries sim_kmod goes by. The truth marks such ENTERs.
	 */
	uint8_t *implicit;
	/*
	 * Its calls are framed (PT_PLAN_FRAMED, encoding.h): the engine and
	 * the decoder attribute ENTERs by the frames they name
	 * (regen_func.framed). Abstract programs: set by the caller, with
	 * sim_program.frames; lowered ones: by sim_lower from the plan.
	 */
	int framed;

	/* Lowered programs only (sim_lower); vertex v is cfg block v, edge e cfg edge e. */
	char name[32];
	uint64_t addr;
	uint8_t *code;
	uint32_t len;
	struct cfg cfg;
	struct plan plan;	/* traced functions */
	void *plan_blob;
	size_t plan_len;
	uint8_t *cfg_blob;
	uint32_t cfg_len;
	uint32_t *site_of_insn;		/* per insn: site index + 1, 0 none */
	uint32_t *verify_of_insn;	/* per insn: verify site index + 1, 0 none */
};

struct sim_gen_opts {
	uint32_t nfuncs;
	uint32_t max_stmts;	/* structured statements per function at most (plus gotos) */
	/*
	 * Every function traced and every call to one of them: no indirect
	 * calls, no calls outside the program (an output check that counts
	 * instructions, e.g. ChampSim's, then needs no untraced code). Call
	 * vertices of the last function, which has no later one to call, are
	 * plain vertices then (its recursive calls stay).
	 */
	int closed;
};

struct sim_program {
	uint32_t nfuncs;
	struct sim_func *funcs;
	struct sim_gen_opts gen;	/* what it was generated with (lowering regenerates) */
	int lowered;
	uint16_t mode, encoding;	/* lowered: what the plans are */
	uint32_t plan_flags;
	uint32_t entry_witnesses;	/* lowered: call blocks the plans took as entry witnesses */
	uint32_t entered_calls;		/* lowered: ... as entered calls (implicit entries) */
	/*
	 * Abstract programs: the stream's ENTER markers name frames (as the
	 * module does while a PT_PLAN_FRAMED plan is installed): an ENTER
	 * whose caller is untraced carries the innermost traced frame
	 * (REGEN_ENTER_NESTED) or none (REGEN_ENTER_RET, value 0). Lowered programs
	 * go by their plans' flags.
	 */
	int frames;
};

/* xorshift64*: the simulator's only randomness; a seed replays everything. */
uint64_t sim_rand(uint64_t *rng);
uint32_t sim_below(uint64_t *rng, uint32_t n);

/*
 * A random program. About one function in four is untraced (never
 * function 0 when nfuncs == 1, none when closed). Returns 0 or -PT_ENOMEM.
 */
int sim_generate_opts(struct sim_program *p, uint64_t *rng, const struct sim_gen_opts *o);

/* sim_generate_opts with nfuncs and max_stmts, not closed. */
int sim_generate(struct sim_program *p, uint64_t *rng, uint32_t nfuncs, uint32_t max_stmts);

/* Generates function fi of p anew (its old graph and tables freed). 0 or -PT_ENOMEM. */
int sim_regenerate_func(struct sim_program *p, uint32_t fi, uint64_t *rng);

/*
 * After f's graph, callee, recursive and tail tables changed (sim_lower):
 * its forced costs, callee_id and tail_id anew.
 */
void sim_func_finish(struct sim_program *p, uint32_t fi);

/* Frees the program: each function's enc and, when lowered, its code, CFG and plan. */
void sim_free(struct sim_program *p);

/* Frees f's abstract tables (graph, callees, return addresses...), not its code, CFG or plan. */
void sim_func_free_tables(struct sim_func *f);

/* ---------------------------------------------------------------- lowering */

struct sim_lower_opts {
	uint16_t mode;		/* PT_MODE_TRACE, PT_MODE_PATHS or PT_MODE_EDGES */
	uint16_t encoding;	/* PT_ENC_WITNESS, PT_ENC_BITS or PT_ENC_PATH */
	uint32_t plan_flags;	/* PT_PLAN_VERIFY */
	/*
	 * NULL, or per function index: 1 where that function is planned
	 * without PT_PLAN_VERIFY (enabled without --verify beside others
	 * enabled with it): it writes no BLOCK records.
	 */
	const uint8_t *unverified;
	int entry_witnesses;	/* trace mode: plan with entry witnesses (--explicit-entries) */
	/*
	 * trace mode: plans with implicit entries (enable's default: a call
	 * from a traced function writes no ENTER) and, in witness encoding,
	 * entered calls
	 */
	int implicit_entries;
};

/*
 * Lowers p (sim_lower.c): machine code per function, cfg_build, and
 * plan_build of every traced function; a function the CFG builder or
 * planner refuses is generated anew (sim_regenerate_func) and tried again.
 * The recovered CFGs replace the abstract graphs. Returns 0; -PT_ENOMEM;
 * -PT_EREFUSED after too many refusals.
 */
int sim_lower(struct sim_program *p, const struct sim_lower_opts *o, uint64_t *rng);

/* Generates and lowers: sim_generate_opts then sim_lower. */
int sim_generate_lowered(struct sim_program *p, uint64_t *rng, const struct sim_gen_opts *g,
			 const struct sim_lower_opts *o);

/* ---------------------------------------------------------------- executor */

/* One event of the truth: type is REGEN_EV_ENTER, _BLOCK or _EXIT. */
struct sim_event {
	uint32_t type;
	uint32_t func;		/* func_id */
	uint32_t block;
	uint32_t edge;		/* BLOCK: edge that led here, GRAPH_NONE at entry */
	uint32_t depth;		/* traced depth, 0 = outermost traced */
	uint64_t pos;		/* the back end's position (stream: bits when it happened;
				 * events before the last emission have pos < nbits) */
	uint64_t owner;		/* sim_run_opts.owner of the execution */
	int implicit;		/* ENTER: no marker says so (sim_func.implicit) */
};

struct sim_truth {
	struct sim_event *ev;
	uint32_t nev, cap;
	int no_events;		/* set after init: count only (benchmarks: runs too big to keep) */
	uint64_t blocks;	/* BLOCK events (traced blocks executed), kept or not */
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
	uint64_t max_steps;	/* past this many steps of this execution, every activation
				 * heads to EXIT */
	uint64_t stop_after;	/* 0, or stop the whole run after this many steps of the
				 * truth (Fig. 7) */
	uint64_t ret_addr;	/* the root's return address; 0: 0xffffffff00000000 */
	uint64_t owner;		/* copied into the truth's events */
};

/*
 * What the executor reports, for traced activations only; any hook may be
 * NULL. state: REGEN_STATE_WORDS per activation, zeroed at entry.
 *  enter   the activation starts (ret: its return address; frame: the
 *          return address of the innermost traced call on the stack, ret
 *          itself when its caller is traced, 0 when there is none);
 *  vertex  it is at vertex v (not EXIT) and will leave by edge e, before
 *          v's call, if any;
 *  edge    it traversed e (after v's call);
 *  pos     the position recorded in the truth's events.
 */
struct sim_backend {
	void *ctx;
	void (*enter)(void *ctx, const struct sim_func *f, uint64_t ret, uint64_t frame);
	void (*vertex)(void *ctx, const struct sim_func *f, uint32_t v, uint32_t e, uint64_t ret,
		       uint64_t frame, uint64_t *state);
	void (*edge)(void *ctx, const struct sim_func *f, uint32_t e, uint64_t *state);
	uint64_t (*pos)(void *ctx);
};

/*
 * Runs one execution from opts->root to its EXIT (or until stop_after),
 * appending to t and reporting to be (may be NULL). Returns 0; -PT_EINVAL;
 * -PT_ENOMEM.
 */
int sim_exec(const struct sim_program *p, const struct sim_run_opts *opts, uint64_t *rng,
	     const struct sim_backend *be, struct sim_truth *t);

/* ------------------------------------------------- back end 1: the stream */

/* A stream under construction (bits LSB first, markers in emission order). */
struct sim_stream {
	uint64_t *bits;
	uint64_t nbits;
	uint64_t cap_words;
	struct regen_marker *markers;
	uint32_t nmarkers, cap_markers;
	uint64_t *seg_starts;	/* owner segments' first bit positions, if any are marked */
	uint32_t nseg_starts, cap_seg_starts;
	int nomem;		/* an append failed: the stream is unusable */
};

void sim_stream_emit(struct sim_stream *s, unsigned int nbits, uint64_t value);
void sim_stream_marker(struct sim_stream *s, uint32_t type, uint32_t func, uint32_t arg,
		       uint64_t value);
/* A segment of the stream's owner starts here (the module's owner switch). */
void sim_stream_segment(struct sim_stream *s);
/* The regen_stream view of s (valid while s is). */
void sim_stream_view(const struct sim_stream *s, uint64_t owner, struct regen_stream *out);
void sim_stream_free(struct sim_stream *s);

/*
 * What an execution emits besides ENTER markers. edge: edge e of traced
 * function f was traversed; vertex: a traced activation arrived at vertex v
 * (before v's call, if any). Either callback may be NULL.
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

/*
 * sim_exec with the stream back end: ENTER markers (value: the return
 * address) and em's emissions appended to s. Returns 0; -PT_ENOMEM.
 */
int sim_run(const struct sim_program *p, const struct sim_run_opts *opts, uint64_t *rng,
	    const struct sim_emitter *em, struct sim_stream *s, struct sim_truth *t);

/* ------------------------------------------- back end 2: the kernel module */

#define SIM_MAX_TASKS 64	/* tasks whose migrations are counted (ntasks beyond share none) */

/* One recorded ring-buffer record. */
struct sim_rec {
	uint64_t ts;
	uint32_t cpu;
	uint16_t len;			/* payload bytes (pt_rec header included) */
	uint8_t payload[160];		/* a record; sim_kmod.c's ring-buffer pages are this size */
};

struct sim_kmod_run {
	struct sim_rec *recs;		/* every CPU's, in recording order */
	uint64_t nrecs, cap;
	uint64_t bits;			/* trace bits emitted */
	uint64_t dropped;		/* records the full ring buffer refused */
	uint64_t packs_multi;		/* SEGMENTS records of more than one segment */
	uint64_t packed_dropped;	/* segments refused with the record that had to follow them */
	uint64_t ctx_words;		/* words written by context */
	uint64_t ctx_swapped;		/* ... as another code's word (adapting words) */
	uint64_t ctx_restored;		/* ... in the row its function had before a callee ran */
	uint64_t enter_resets;		/* ENTERs of a segment PT_CTX_SWAP_ENTERS after its first */
	uint64_t path_words;		/* path numbers written as their word */
	uint64_t path_escapes;		/* ... as their range's escape and the number */
	uint64_t site_hits;		/* handler runs at plan sites: the module's probe hits */
	/*
	 * the calls an inline copy's sites would make: a site whose actions
	 * all apply on one edge of its Jcc (plan_site_edge) only with it
	 */
	uint64_t inline_site_hits;
	uint64_t implicit_enters;	/* ENTER actions that wrote none (implicit entries) */
	uint64_t nested_enters;		/* ENTERs that named a traced frame (PT_PLAN_FRAMED) */
	uint64_t clock;			/* the clock after the last record */
	int nomem;
};

struct sim_kmod_opts {
	uint32_t nr_cpus;		/* 1..8 */
	uint32_t ntasks;		/* owners TASK/100.. run activations in turn */
	uint64_t activations;		/* top-level activations in all */
	uint64_t max_steps;		/* per activation: then head to EXIT */
	uint32_t max_depth;		/* 0: 6 */
	uint32_t migrate_pct;		/* chance per handler that the task moves CPU */
	uint32_t irq_pct;		/* chance that an interrupt owner then runs on the old CPU */
	uint32_t drop_permille;		/* chance per record that the ring buffer is full: 1..8
					 * records are dropped, then LOSS(OVERRUN, n) precedes the
					 * next record written on that CPU (docs/runtime.md) */
	int keep_segments;		/* no other owner between activations: a task's segment
					 * goes on until a migration, an interrupt or a drop */
	uint64_t clock_start;		/* the clock (stamps, record times) before the first
					 * record: a run that continues another starts at its
					 * sim_kmod_run.clock */
};

/*
 * Runs activations of random functions of the lowered program p (each a
 * sim_exec whose truth events carry the task's owner) the way the module's
 * handlers run the plans, appending records to r and the truth to t
 * (sim_truth_init'ed by the caller). Returns 0 or -PT_ENOMEM.
 */
int sim_kmod_execute(const struct sim_program *p, const struct sim_kmod_opts *o, uint64_t *rng,
		     struct sim_kmod_run *r, struct sim_truth *t);

void sim_kmod_run_free(struct sim_kmod_run *r);

#endif
