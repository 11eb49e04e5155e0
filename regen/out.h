/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out - what pathregen's writers see: the traced functions (func_model.c)
 * and the regenerated execution as steps (out_walk.c), one owner's stream
 * after another.
 *
 * The engine (regen.h) reports blocks; a writer also wants the CFG edge
 * that led to each block (branch outcomes, edge profiles) and a function's
 * recorded code (instruction-level outputs). out_walk keeps each stream's
 * call stack and hands every writer the engine's event plus that edge.
 */
#ifndef PATHTRACE_REGEN_OUT_H
#define PATHTRACE_REGEN_OUT_H

#include <stdint.h>
#include <stdio.h>

#include <pathtrace/cfg.h>
#include <pathtrace/graph.h>

#include "regen.h"

/* One traced function: what the engine and the writers need. */
struct pr_func {
	uint32_t func_id;
	char *name;
	uint64_t addr, cold_addr;
	uint32_t len, cold_len;
	const uint8_t *code;		/* len + cold_len bytes as traced (owned copy) */
	uint16_t mode, encoding;	/* the plan's (pathtrace_abi.h) */
	uint32_t plan_flags;
	/*
	 * Verify plans: per block, 1 when the plan has a verify site in it.
	 * A block with no instruction kprobes accept (a lone static-call
	 * site, a ud2) has none, so it records no BLOCK. NULL: not known.
	 */
	uint8_t *verify_block;
	struct cfg cfg;			/* owned */
	int cfg_from_blob;		/* free with cfg_blob_free, else cfg_free */
	struct graph g;			/* cfg_to_graph(cfg) */
	uint64_t *call_ret_addr;	/* g.nv */
	uint32_t *call_callee;		/* g.nv */
	uint8_t *call_implicit;		/* g.nv: regen_func.call_implicit */
	/*
	 * cfg.nblocks + 1: enum enc_call of each call block (entry witness,
	 * entered call) over the functions the trace holds; what the
	 * decoder was bound with. NULL until pr_model_load gets there.
	 */
	uint8_t *call_kind;
	struct pt_implicit *implicit;	/* its plan's implicit entries (pathtrace_abi.h) */
	uint32_t nimplicit;
	uint32_t *tail_callee;		/* g.ne: regen_func.tail_callee; NULL if no tail call */
	uint32_t *exit_edge;		/* per block: its edge to EXIT, or UINT32_MAX */
	const struct regen_decoder_ops *ops;	/* the decoder, bound by the caller */
	void *model;			/* the decoder's tables (owned, freed by model_free) */
	void (*model_free)(void *model);
	uint32_t index;			/* in pr_model.funcs */
	struct regen_word_reads *word_reads;	/* --words: out_words.c's (owned), or NULL */
	struct regen_ctx_swap *ctx_swap;	/* PT_PLAN_CTX_SWAP: the decoder's state (owned) */
	struct regen_ctx_saved *ctx_saved;	/* PT_PLAN_CTX_RESTORE: its context (owned) */
	char refusal[160];		/* why pr_bind_decoder refused, for a human */
};

struct pr_model {
	struct pr_func *funcs;
	uint32_t nfuncs;
	struct regen_func *rfuncs;	/* nfuncs, for the engine */
	struct regen_funcs fs;
	uint32_t *by_id;		/* func_id -> index + 1 (0: none), when ids are small */
	uint32_t by_id_len;
};

struct tf_function;

/* Sets func_id and name (copied); everything else zero. Returns 0 or -PT_ENOMEM. */
int pr_func_init(struct pr_func *f, uint32_t func_id, const char *name, size_t name_len);

/*
 * Builds what follows from f->cfg (set by the caller, or by pr_func_from_tf):
 * graph, exit edges, call return addresses. Returns 0;
 * -PT_EFORMAT when the CFG has no blocks or its graph does not match it;
 * -PT_ENOMEM.
 */
int pr_func_derive(struct pr_func *f);

/*
 * One trace.bin function: decodes its CFG blob and reads its plan's header
 * (mode, encoding, flags), then pr_func_derive. The decoder is bound later.
 * Returns 0; -PT_EFORMAT (bad CFG blob, CFG or plan of another function);
 * -PT_ETRUNC (plan too short); -PT_ENOMEM. Free with pr_func_free either way.
 */
int pr_func_from_tf(struct pr_func *f, const struct tf_function *fn);

void pr_func_free(struct pr_func *f);

/*
 * Binds f's decoder (ops, model, model_free) from its mode and encoding
 * and the plan blob; ewit (g.nv entries, or NULL): f's entry witnesses in
 * this trace (entry_witness.h), for witness plans, as enum enc_call (NULL
 * for a framed plan: every call framed). Returns 0; -PT_ENOTSUP when no decoder handles that
 * mode/encoding (edge-counter mode has no stream); -PT_EFORMAT,
 * -PT_ETRUNC for a malformed plan or one that disagrees with the CFG;
 * -PT_EREFUSED when the plan's emissions cannot be decoded exactly (two
 * codes on one edge, the blocking rule broken); -PT_ENOMEM.
 */
int pr_bind_decoder(struct pr_func *f, const uint8_t *plan, uint32_t plan_len,
		    const uint8_t *ewit);

/*
 * After every function is in m->funcs (malloc'd array, nfuncs set) and its
 * decoder bound: sorts by func_id, builds the lookup, resolves direct
 * traced callees (call target == a traced function's address) and the
 * engine's regen_func array. Returns 0; -PT_EFORMAT for a duplicate
 * func_id; -PT_ENOMEM.
 */
int pr_model_finish(struct pr_model *m);

struct tracefile;

/* Told why function fn is not regenerated: f is NULL when its CFG or plan is unusable. */
typedef void (*pr_report_fn)(void *ctx, const struct tf_function *fn, const struct pr_func *f,
			     int err);

/*
 * Every function of tf: CFG, plan, decoder, then pr_model_finish. A
 * function that cannot be used is reported and left out (bad CFG or plan)
 * or kept without a decoder (its ENTERs become gaps). Returns the number
 * of such functions (edge-mode functions, which have no stream, are not
 * counted); -PT_EFORMAT for a duplicate func_id; -PT_ENOMEM. Free m with
 * pr_model_free either way.
 */
int pr_model_load(const struct tracefile *tf, struct pr_model *m, pr_report_fn report, void *ctx);

/* Frees every function and the tables; m is zeroed. */
void pr_model_free(struct pr_model *m);

/* The function with func_id, or NULL. */
const struct pr_func *pr_model_func(const struct pr_model *m, uint32_t func_id);

/* "name+0xoff" (or "name.cold+0xoff") of a block, into buf; returns buf. */
const char *pr_block_name(const struct pr_func *f, uint32_t block, char *buf, size_t len);

/* Owner as text: task/PID, idle/CPU, softirq/CPU, hardirq/CPU, nmi/CPU. */
const char *pr_owner_name(uint64_t owner, char *buf, size_t len);

/* A stream as the writers see it. */
struct out_stream {
	const struct regen_stream *s;
	uint32_t index;			/* 0-based, in output order */
	uint32_t cpu;			/* of its first marker, or UINT32_MAX */
	uint64_t stamp;			/* of its first marker, or 0 */
};

/* One engine event with what the walk knows about it. */
struct out_step {
	const struct regen_event *ev;
	const struct pr_func *f;	/* ev->func's function, NULL if unknown */
	/*
	 * REGEN_EV_BLOCK: the edge from the activation's previous block, or
	 * UINT32_MAX for its first block (or the first after a resync).
	 * REGEN_EV_EXIT: the last block's edge to EXIT, or UINT32_MAX.
	 */
	uint32_t edge;
	uint32_t prev_block;		/* UINT32_MAX if none */
	/* Non-zero when more than one edge joins prev_block to this block, so edge is a guess. */
	int edge_ambiguous;
};

struct out_writer;

struct out_writer_ops {
	const char *name;
	/* Each returns 0 or a negative PT_E* (stops pathregen). Any may be NULL. */
	int (*open)(struct out_writer *w);
	int (*stream_begin)(struct out_writer *w, const struct out_stream *st);
	int (*step)(struct out_writer *w, const struct out_stream *st, const struct out_step *sp);
	int (*stream_end)(struct out_writer *w, const struct out_stream *st);
	int (*close)(struct out_writer *w);	/* summaries; frees priv */
};

struct edge_counts;

struct out_writer {
	const struct out_writer_ops *ops;
	FILE *fp;
	const struct pr_model *m;
	void *priv;
	/* Options some writers read. */
	uint32_t top;			/* --paths: paths per function */
	uint32_t line;			/* --format din: cache line size (power of two), 0: 64 */
	const char *trace_name;
	uint64_t total_bits;		/* --stats: filled by the driver before close */
	uint64_t loss_dropped, loss_missed;	/* from trace.bin's LOSS section */
	uint64_t located_dropped, located_missed;	/* the LOSS records' counts */
	const struct tr_records *records;	/* --stats: page fill and framing */
	int have_loss_section;
	/* --edges / --blocks / --dot / --hits: edges-mode functions' counts (edge_counts.h), or NULL */
	const struct edge_counts *counts;
	const char *func;		/* --dot: only this function (by name), or NULL */
	const struct tracefile *tf;	/* --dot, --hits: the plans (probe sites), or NULL */
	/* --subpaths: exact counts (the oracle), hot-list size, longest length, sampling seed */
	int sp_exact;
	uint32_t sp_memory, sp_max_len;
	uint64_t sp_seed;
	/* --paths --path-seqs: also the exact counts of what in-kernel OSP samples */
	int path_seqs;
	/* --paths --path-codes: what the numbers cost coded by start (OUT_REPLAN_*: codes by) */
	int path_codes;
	uint32_t path_codes_k;	/* listed paths a start (path_codes.h) */
	/*
	 * --hits --replan: plans made now from the recorded CFGs (OUT_REPLAN_*), not the trace's;
	 * --words --replan: words made now
	 */
	int hits_replan;
	int hits_calls_quiet;	/* --calls-quiet: every call planned as a quiet one */
	int hits_calls_framed;	/* --calls-framed: witness plans' calls framed (PT_PLAN_FRAMED) */
};

enum { OUT_REPLAN_NONE, OUT_REPLAN_HEURISTIC, OUT_REPLAN_PROFILE,
       OUT_REPLAN_PATHS };	/* --path-codes only: ranked by the path counts themselves */

extern const struct out_writer_ops out_text_ops;
extern const struct out_writer_ops out_paths_ops;
extern const struct out_writer_ops out_edges_ops;
extern const struct out_writer_ops out_blocks_ops;
extern const struct out_writer_ops out_stats_ops;
extern const struct out_writer_ops out_din_ops;
extern const struct out_writer_ops out_champsim_ops;
extern const struct out_writer_ops out_json_ops;
extern const struct out_writer_ops out_dot_ops;
extern const struct out_writer_ops out_subpaths_ops;
extern const struct out_writer_ops out_hits_ops;
extern const struct out_writer_ops out_words_ops;

/* --subpaths: one of the hottest subpaths. */
struct out_subpath {
	uint64_t id;			/* the subpath's hash (its blocks and length) */
	uint32_t len;			/* blocks */
	uint64_t sampled;		/* its count in the hot list (exact: its count) */
	double estimate;		/* its estimated count in the execution */
	double stderr_est;		/* the estimate's standard error (0 when exact) */
	uint32_t first_func, first_block;
};

/*
 * --subpaths, while the writer is open: its k hottest subpaths into
 * out[0..k), hottest first. Returns how many; -PT_ENOMEM.
 */
int out_subpaths_top(const struct out_writer *w, struct out_subpath *out, unsigned int k);
/* The count of subpath id in the hot list (exact: in the execution), 0 if absent. */
uint64_t out_subpaths_count(const struct out_writer *w, uint64_t id);
/* Subpaths the writer holds now (OSP: never more than its memory). */
uint64_t out_subpaths_entries(const struct out_writer *w);
extern const struct out_writer_ops verify_ops;

/* --edges / --blocks counts of function index i while the writer is open, or NULL. */
const uint64_t *out_profile_edges(const struct out_writer *w, uint32_t func_index);
const uint64_t *out_profile_blocks(const struct out_writer *w, uint32_t func_index);

/*
 * Counts kept beside another writer (--hits, --words): an edges writer of
 * w's model (and w's edges-mode counts) that prints nothing; its counts
 * are out_profile_edges/blocks(&c->prof, ...). Each returns 0 or what the
 * edges writer returns; open also -PT_EIO when /dev/null does not open.
 */
struct out_counts {
	struct out_writer prof;
	FILE *null;
};

int out_counts_open(struct out_counts *c, const struct out_writer *w);
int out_counts_step(struct out_counts *c, const struct out_stream *st, const struct out_step *sp);
int out_counts_stream_end(struct out_counts *c, const struct out_stream *st);
int out_counts_close(struct out_counts *c);

/* --paths: how often path id of function index fi ran, while the writer is open. */
uint64_t out_paths_count(const struct out_writer *w, uint32_t fi, uint64_t id);
/* For tests, while open: completed paths in all; with --path-seqs, the counts of runs of len summed. */
uint64_t out_paths_completed(const struct out_writer *w);
uint64_t out_paths_seq_total(const struct out_writer *w, uint32_t len);

/*
 * --paths, while the writer is open: the hottest path of function index
 * fi (the lowest id among the hottest), its blocks in order into
 * blocks[0..max) and its count into *count. Returns the number of blocks;
 * 0 when the function ran no complete path or its paths are not numbered;
 * a negative PT_E* when the path cannot be decoded (pathnum_blocks).
 */
int out_paths_hottest(const struct out_writer *w, uint32_t fi, uint32_t *blocks, uint32_t max,
		      uint64_t *count);

/* How many differences verify_result keeps the details of (the first ones). */
#define VERIFY_SHOWN 10

/*
 * Verify's outcome (verify_ops' priv is one; read after close). Each
 * regenerated block is counted once: in compared, no_plan, no_site,
 * skipped (in a gap), after_difference, or as a difference; skipped and
 * unverified also count BLOCK records no regenerated block met (in gaps,
 * after a stream's truncation).
 */
struct verify_result {
	uint64_t compared;		/* blocks equal to their BLOCK markers */
	uint64_t unverified;		/* markers after a stream's truncation */
	uint64_t skipped;		/* markers inside gaps */
	uint64_t no_site;		/* regenerated blocks without a verify site (nothing to compare) */
	uint64_t no_plan;		/* regenerated blocks of functions whose plans do not verify */
	uint64_t differences;		/* all of them, in every stream */
	uint64_t after_difference;	/* regenerated blocks after a difference, up to the next ENTER */
	uint32_t shown;			/* details kept: the first min(differences, VERIFY_SHOWN) */
	char detail[VERIFY_SHOWN][256];	/* stream, block index, function+offset, position, cpu */
};

/* verify_ops reads its result here if w->priv points to one at open. */

/*
 * Runs the engine over one stream and feeds every writer in ws[0..n) the
 * steps. Returns 0; the first writer's negative PT_E* (writers that ran
 * earlier in the stream still saw the step); -PT_ENOMEM.
 */
int out_walk_stream(const struct pr_model *m, const struct out_stream *st,
		    struct out_writer *const *ws, unsigned int n);

/*
 * As out_walk_stream, for events that did not come from the engine (tests
 * feed a known execution to the writers). Returns as out_walk_stream.
 */
int out_walk_events(const struct pr_model *m, const struct out_stream *st,
		    const struct regen_event *ev, uint64_t n, struct out_writer *const *ws,
		    unsigned int nws);

/* Calls every writer's open; on failure, closes those opened. Returns 0 or the error. */
int out_open_all(struct out_writer *const *ws, unsigned int n);
/* Calls every writer's close; returns 0 or the first error. */
int out_close_all(struct out_writer *const *ws, unsigned int n);

#endif
