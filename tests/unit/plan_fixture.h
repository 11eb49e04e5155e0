/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-built CFGs for the probe-site and plan tests (the layout a cfg_build
 * of real code would give), and an instruction-level executor that fires
 * a plan's sites the way the kernel's probes would.
 */
#ifndef PT_PLAN_FIXTURE_H
#define PT_PLAN_FIXTURE_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace_abi.h>

struct fx_insn {
	uint64_t addr;
	uint8_t len, kind, cc, flags;
	uint32_t block;
};

struct fx_edge {
	uint32_t src, dst;
	uint8_t kind;
};

/* Fills c from tables (blocks derived from insn.block; CFG_BF_CALL via call_mask). */
void fx_cfg(struct cfg *c, const char *name, uint64_t addr, uint32_t len, uint64_t cold_addr,
	    uint32_t cold_len, const struct fx_insn *in, uint32_t nin, const struct fx_edge *e,
	    uint32_t ne, uint32_t call_mask);
void fx_cfg_free(struct cfg *c);

/* Diamond with a call: B0 jcc -> {B1 (call) -> B2, B2}; B2 ret. */
void fx_call_diamond(struct cfg *c);
/*
 * The call diamond whose call block is nothing but a static call (no probe
 * can sit in it): B0 jcc -> {B1 (static call) -> B2, B2}; B2 ret.
 */
void fx_static_call_block(struct cfg *c);
/* Loop with a .cold part: B0 -> B1 <-> B2 -> B3 ret; B1 -> cold B4 -> B3. */
void fx_loop_cold(struct cfg *c);

/* A BUG path: B0 jcc -> {B1 ret, B2 ud2}; B2's exit edge has no probe site. */
void fx_bug_exit(struct cfg *c);

/*
 * A call straight into a shared call vertex: B0 jcc -> {B1 (call) -> B2,
 * B2}; B2 (call) -> B3 ret. B2 needs a vertex emission.
 */
void fx_call_chain(struct cfg *c);

/*
 * A static key with an unobservable critical edge: B0 key -> {B1, B2},
 * B1 -> B2 -> B3 (call) -> B4 ret. B0 -> B2 cannot be observed.
 */
void fx_key_critical(struct cfg *c);

/*
 * A call whose return runs straight into a BUG: B0 jcc -> {B1 (call) ->
 * B2 ud2, B3 ret}. Nothing can observe B1 -> B2 after the call.
 */
void fx_call_bug(struct cfg *c);

/* What executing a plan along an edge sequence produced. */
struct fx_run {
	uint64_t bits[64];
	uint64_t nbits;
	uint32_t enters;
	uint64_t enter_pos[16];
	uint64_t counters[64];
	uint64_t reg;		/* path register at the end */
	uint64_t reg2;		/* PPP register at the end */
	uint32_t nends;		/* PATH_EMITs */
	uint64_t end_path[16];	/* the first ones' path number (register + value) */
	uint64_t end_ppp[16];	/* and PPP register */
	int bad;		/* an action the executor cannot perform */
};

/*
 * Executes edges[] (a walk from block 0 to EXIT) instruction by instruction,
 * running the actions of every site it passes as a kprobe would (before the
 * instruction; a conditional action when its branch goes that way).
 * sites/actions as in a plan blob; verify sites ignored. With context
 * words (h->nr_ctx_codes; ctx_next and ctx_words as in the blob) an EMIT
 * writes its word of the current context row as the module does; ENTER
 * sets the entry's row (one stream, no owner switch: nothing empties it).
 */
void fx_execute(const struct cfg *c, const struct pt_plan *h, const struct pt_site *sites,
		const struct pt_action *actions, const uint32_t *ctx_next,
		const struct pt_ctx_word *ctx_words, const uint32_t *edges, uint32_t n,
		struct fx_run *run);

/* A random walk from block 0 to EXIT of at most max edges; returns its length. */
uint32_t fx_random_walk(const struct cfg *c, uint32_t *edges, uint32_t max, unsigned int *seed);

#endif
