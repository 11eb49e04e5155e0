/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plan - everything to patch into one function: probe sites and their
 * actions (trace-format/pathtrace_abi.h: struct pt_plan, pt_site[],
 * pt_action[], pt_verify_site[]), built from a recovered CFG, and the
 * static figures `pathtracectl plan` reports.
 *
 * Modes:
 *  - PT_MODE_TRACE: the 1994 encodings of encoding.h (witness codes or
 *    predicate bits): every emitting edge gets PT_OP_EMIT at its site;
 *    edges no probe can observe never emit (encoding_opts.unobservable);
 *    a vertex emission (ENC_F_VERTEX_EMIT: a call straight into a call
 *    vertex t with other predecessors) is an unconditional PT_OP_EMIT at
 *    t's first probeable instruction, before t's call, after the actions
 *    of an edge into t at the same site;
 *  - PT_MODE_PATHS: pathnum.h: PT_OP_PATH_ADD on chords with an
 *    increment, PT_OP_PATH_EMIT at path ends (exits, back edges, call
 *    vertices before their call) or at the last chord;
 *  - PT_MODE_EDGES: PT_OP_COUNT on the chords of a maximum spanning tree
 *    of the CFG; counter index = CFG edge id, so a profile reader needs
 *    nothing but the CFG to propagate counts; counter nedges counts the
 *    activations (nr_counters = nedges + 1).
 * Every plan has PT_OP_ENTER at the function's first instruction (the
 * fentry site), except edges plans: PT_OP_COUNT of their activation
 * counter is there instead, so that a profile records nothing per event. With PT_PLAN_VERIFY, one pt_verify_site per block that
 * has a probeable instruction (a block that is only a ud2 has none; the
 * sites name their blocks).
 * Actions at one site run in this order: ENTER, actions of the edge into
 * the site's block, of the edge out of it, of the block itself (a call
 * vertex's path end or vertex emission), then the conditional actions of
 * its branch.
 */
#ifndef PATHTRACE_PLAN_H
#define PATHTRACE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace_abi.h>
#include <pathtrace/cfg.h>
#include <pathtrace/encoding.h>
#include <pathtrace/graph.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/probesite.h>

/*
 * Options, grouped per mode as libbpf groups its opts: what every plan
 * takes in struct plan_opts, what one mode takes in its own struct inside
 * it (the other modes ignore it). Every field's zero value is the default.
 */

/* Which words a witness code is written with. */
enum plan_words {
	PLAN_WORDS_BY_CONTEXT = 0,	/* words by context (docs/runtime.md, "Witness words by context") */
	PLAN_WORDS_BY_ROW,		/* only the row-wide words */
};

/*
 * Whether witness words by context adapt within a segment
 * (PT_PLAN_CTX_SWAP; needs rows below PT_CTX_SWAP_ROWS_MAX).
 */
enum plan_adapting_words {
	/*
	 * when the words are guesses (no weight): a profile's words are
	 * already shaped by the counts, and adapting them costs a little
	 */
	PLAN_ADAPTING_WHEN_GUESSED = 0,
	PLAN_ADAPTING_ALWAYS,
	PLAN_ADAPTING_NEVER,
};

/* How a paths trace writes its path numbers. */
enum plan_path_numbers {
	PLAN_PATH_NUMBERS_CODED = 0,	/* coded by where each path starts (path_codes.h) */
	PLAN_PATH_NUMBERS_FULL_WIDTH,	/* every number in its full width */
};

/*
 * What a site costs the placement (plan_opts.costs). Sites sit where
 * probesite.h puts them either way; the spanning tree keeps the dearest
 * edges by these costs.
 */
enum plan_costs {
	/*
	 * kprobes: a probe fires whenever its instruction runs (a branch
	 * site with either edge), an int3 weighs PROBESITE_INT3_FACTOR
	 * jump-optimized probes
	 */
	PLAN_COSTS_KPROBES = 0,
	/*
	 * Code in an inline copy (docs/inline.md, "Placement for copies"):
	 * a site runs only on the edges its actions apply to, every
	 * instruction alike, so an edge's site costs the edge's weight
	 */
	PLAN_COSTS_EDGES,
};

/* PT_MODE_TRACE: the witness or bits encoding. */
struct plan_trace_opts {
	uint16_t encoding;	/* PT_ENC_WITNESS (0: the default) or PT_ENC_BITS */
	/*
	 * Witness encoding: per CFG block, enum enc_call (encoding.h): its
	 * call is direct to a traced, closed function (entry_witness.h)
	 * whose ENTER witnesses it (ENC_CALL_WITNESS) or that is entered
	 * without an ENTER (ENC_CALL_ENTERED: the callee's implicit
	 * entries list the call); or NULL: none. The regenerator must see
	 * the same callees traced.
	 */
	const uint8_t *enter_witnessed;
	enum plan_words words;			/* witness encoding */
	enum plan_adapting_words adapting_words;	/* witness words by context */
};

/* PT_MODE_PATHS: a paths trace, or with PT_PLAN_PROFILE a path profile. */
struct plan_paths_opts {
	/*
	 * PT_PLAN_PPP (with PT_PLAN_PROFILE): the interesting paths, by
	 * Ball-Larus number (those beyond the function's paths are ignored,
	 * e.g. from a profile of other code), or with ppp_paths NULL the
	 * ppp_hottest most likely by the plan's weights (0:
	 * PLAN_PPP_DEFAULT).
	 */
	const uint64_t *ppp_paths;
	uint32_t nppp_paths;
	uint32_t ppp_hottest;
	/*
	 * Paths traces (without PT_PLAN_PROFILE): coded numbers list the
	 * codes_k (0: PLAN_PATH_CODES_K) likeliest paths of each start by
	 * the plan's weights.
	 */
	enum plan_path_numbers numbers;
	uint32_t codes_k;
};

struct plan_opts {
	uint16_t mode;		/* enum pt_mode */
	uint32_t func_id;
	uint32_t flags;		/* PT_PLAN_VERIFY, _PROFILE, _PPP, _FRAMED */
	const uint64_t *weight;	/* per CFG edge (weight.h units); NULL: Section 5 heuristic */
	/*
	 * Implicit entries (pathtrace_abi.h struct pt_implicit): direct call
	 * sites in other traced functions whose calls need no ENTER record,
	 * any order (plan_build sorts them; one per return address). Not in
	 * edges mode, whose counts come from ENTER records.
	 */
	const struct pt_implicit *implicit;
	uint32_t nimplicit;
	struct plan_trace_opts trace;	/* PT_MODE_TRACE */
	struct plan_paths_opts paths;	/* PT_MODE_PATHS */
	enum plan_costs costs;
};

#define PLAN_PATH_CODES_K 64

#define PLAN_PPP_DEFAULT 16

struct plan {
	struct pt_plan hdr;
	struct pt_site *sites;
	struct pt_action *actions;
	struct pt_verify_site *verify;
	struct pt_implicit *implicit;	/* hdr.nr_implicit, sorted by ret */
	struct pt_ppp_slot *ppp_slots;	/* hdr.nr_ppp (PT_PLAN_PPP) */
	uint32_t *ctx_next;		/* hdr.nr_ctx_codes (witness words by context) */
	struct pt_ctx_word *ctx_words;	/* hdr.nr_ctx_words, sorted by (row, code) */
	struct pt_path_code *path_codes;	/* hdr.nr_path_codes, sorted by path */
	struct pt_path_range *path_ranges;	/* hdr.nr_path_ranges, sorted by lo */
	uint32_t ppp_interesting;	/* interesting paths among the slots */
	uint32_t *site_insn;	/* per site: its cfg insn index */
	uint32_t *verify_insn;	/* per verify site: its cfg insn index */

	/* What it was made from, for reports (`pathtracectl plan`). */
	struct graph g;		/* cfg_to_graph */
	uint64_t *weight;	/* per CFG edge */
	struct probesite *edge_site;	/* per CFG edge */
	uint8_t *edge_probed;	/* per CFG edge: it has actions */
	uint8_t *in_tree;	/* EDGES: per CFG edge */
	struct pathnum pn;	/* PATHS */
	struct encoding enc;	/* TRACE */
	int have_pn, have_enc;

	/* Static figures. */
	uint32_t bits;		/* bits per witness code / path number (bits: widest edge) */
	uint32_t noptimizable;	/* sites the kernel should jump-optimize */
	uint32_t every_block_probes;	/* one probe per block */
	uint32_t every_block_optimizable;
	uint64_t cost;		/* sum over sites: block frequency x probe factor */
	uint64_t every_block_cost;
	char reason[200];	/* why plan_build refused */
};

/*
 * Builds c's plan. Returns 0; -PT_EREFUSED (pl->reason says why: an edge
 * that must be instrumented but no probe can observe, an encoding that
 * cannot avoid such edges (encoding_opts.why), a jump back to the fentry
 * site);
 * -PT_EOVERFLOW (too many paths; pathnum); -PT_ENOTSUP (pathnum's
 * refusals); -PT_EINVAL (bad options or empty cfg); -PT_ENOMEM. Free pl
 * with plan_free either way.
 */
int plan_build(const struct cfg *c, const struct plan_opts *o, struct plan *pl);

void plan_free(struct plan *pl);

/*
 * The edge weights plan_build guesses when it has no profile (per CFG edge
 * of c, weight.h units): the Section 5 heuristic with the code's own hints
 * (static keys, WARN/BUG, fixups, the .cold part). g is cfg_to_graph(c).
 * Returns 0; -PT_EINVAL for NULL arguments; -PT_ENOMEM.
 */
int plan_weights_heuristic(const struct cfg *c, const struct graph *g, uint64_t *weight);

/*
 * The weights a plan with no profile shapes its witness words by
 * (last_witness_words.c): plan_weights_heuristic's with the layout's guess added
 * (the words move no site). Returns as plan_weights_heuristic.
 */
int plan_weights_words(const struct cfg *c, const struct graph *g, uint64_t *weight);

/* The blob (malloc'ed into *blob, *len bytes). Returns 0 or -PT_ENOMEM. */
int plan_serialize(const struct plan *pl, void **blob, size_t *len);

/* A parsed, validated blob: copies in the structs this build knows. */
struct plan_view {
	struct pt_plan hdr;
	struct pt_site *sites;
	struct pt_action *actions;
	struct pt_verify_site *verify;
	struct pt_implicit *implicit;	/* hdr.nr_implicit, sorted by ret */
	struct pt_ppp_slot *ppp_slots;	/* hdr.nr_ppp */
	uint32_t *ctx_next;		/* hdr.nr_ctx_codes */
	struct pt_ctx_word *ctx_words;	/* hdr.nr_ctx_words */
	struct pt_path_code *path_codes;	/* hdr.nr_path_codes */
	struct pt_path_range *path_ranges;	/* hdr.nr_path_ranges */
};

/*
 * The one edge of its conditional jump that every action of site s
 * (actions: the plan's) applies on, PT_WHEN_TAKEN or PT_WHEN_NOT_TAKEN,
 * else PT_WHEN_ALWAYS: where inline code runs the site (docs/inline.md,
 * "Sites as calls"), and how often.
 */
uint8_t plan_site_edge(const struct pt_site *s, const struct pt_action *actions);

/* 1 if m[0..n) (sorted by ret) has the implicit entry (ret, caller_id), else 0. */
int plan_implicit_has(const struct pt_implicit *m, uint32_t n, uint64_t ret, uint32_t caller_id);

/*
 * Validates blob and copies it into v. Returns 0; -PT_ETRUNC when the blob
 * is shorter than it says; -PT_EVERSION for another ABI major; -PT_EFORMAT
 * for anything else malformed; -PT_ENOMEM. why (may be NULL) gets the
 * precise reason. Free v with plan_view_free either way.
 */
int plan_parse(const void *blob, size_t len, struct plan_view *v, char *why, size_t whylen);

void plan_view_free(struct plan_view *v);

/* The PATH_EMIT width of a parsed paths plan, or -1 if it has none. */
int plan_view_path_nbits(const struct plan_view *v);

#endif
