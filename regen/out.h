/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out - what pathregen's writers see: the traced functions (model.h) and
 * the regenerated execution as steps (out_walk.c), one owner's stream
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

#include "model.h"
#include "regen.h"

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
	/*
	 * Optional (NULL: the writer runs on one thread). Streams walked in
	 * parallel (pr_trace_walk's jobs): each stream goes to a part, a copy
	 * of the writer opened with open() on a file of its own in memory;
	 * after the part's file is written to the writer's, in stream order,
	 * merge folds what the part counted into w, as if w had walked that
	 * stream itself, and frees the part's priv (no summary). Returns 0 or
	 * a negative PT_E*.
	 */
	int (*merge)(struct out_writer *w, struct out_writer *part);
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
	/* --inline-sites: sites as inline copies run them, costs PLAN_COSTS_EDGES */
	int hits_inline_sites;
	int perfetto_blocks;	/* --format perfetto --blocks: every block an instant event */
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
extern const struct out_writer_ops out_perfetto_ops;
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

/* As out_walk_stream, the engine over fs (m's functions: pr_model_engine_copy). */
int out_walk_stream_fs(const struct pr_model *m, const struct regen_funcs *fs,
		       const struct out_stream *st, struct out_writer *const *ws, unsigned int n);

/*
 * As out_walk_stream, for events that did not come from the engine (tests
 * feed a known execution to the writers). Returns as out_walk_stream.
 */
int out_walk_events(const struct pr_model *m, const struct out_stream *st,
		    const struct regen_event *ev, uint64_t n, struct out_writer *const *ws,
		    unsigned int nws);

/* Writes s as a JSON string (quoted, '"', '\\' and control characters escaped). */
void out_json_str(FILE *fp, const char *s);

/* Calls every writer's open; on failure, closes those opened. Returns 0 or the error. */
int out_open_all(struct out_writer *const *ws, unsigned int n);
/* Calls every writer's close; returns 0 or the first error. */
int out_close_all(struct out_writer *const *ws, unsigned int n);

#endif
