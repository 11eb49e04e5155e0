/* SPDX-License-Identifier: GPL-2.0 */
/*
 * model - the traced functions as regeneration needs them (func_model.c,
 * pr_bind.c): each function's CFG and graph, its call-vertex tables and
 * its decoder, and the set of them the engine (regen.h) runs over. Below
 * the writers (out.h), which read it; the pipeline (pipeline.h) loads it.
 */
#ifndef PATHTRACE_REGEN_MODEL_H
#define PATHTRACE_REGEN_MODEL_H

#include <stddef.h>
#include <stdint.h>

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
	struct regen_word_lookup *lookup;	/* witness: its words' lookup (owned), or NULL */
	uint32_t *free_edge;		/* g.nv: regen_func.free_edge (owned), or NULL */
	char refusal[160];		/* why pr_bind_decoder refused, for a human */
};

struct pr_model {
	struct pr_func *funcs;
	uint32_t nfuncs;
	struct regen_func *rfuncs;	/* nfuncs, for the engine */
	struct regen_funcs fs;		/* fs.index owned */
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

/*
 * The state of a function that the engine writes as it walks (regen.h:
 * adapting words' rows of nrows, a saved context), zeroed, each on cache
 * lines of its own: threads walking with copies of their own
 * (pr_model_engine_copy) must not write a line that another thread reads
 * (docs/pathregen.md, "Each thread's writes on lines of its own"). NULL
 * without memory; pr_func_free and pr_model_engine_free free them.
 */
struct regen_ctx_swap *pr_ctx_swap_alloc(uint32_t nrows);
struct regen_ctx_saved *pr_ctx_saved_alloc(void);

/*
 * A function set for one more engine walking m's streams at the same time
 * as others (a thread of its own): m's tables, read-only, with state of its
 * own where the engine writes (adapting words, saved contexts; regen.h).
 * --words' counts are m's walk's only: the copy counts none. Returns 0 or
 * -PT_ENOMEM; free with pr_model_engine_free either way.
 */
int pr_model_engine_copy(const struct pr_model *m, struct regen_funcs *fs);
void pr_model_engine_free(struct regen_funcs *fs);

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

#endif
