/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probesite - where a kprobe observes a CFG edge, what that costs, and
 * which probes the kernel can jump-optimize (DESIGN.md, "Observing an edge
 * with a kprobe").
 *
 * Edge p->q is observed
 *  - DST:    at q's first instruction when q has one predecessor (the
 *            function's entry block counts its caller as one);
 *  - SRC:    anywhere in p when p has one successor (the fentry site of
 *            block 0 is preferred, it is probed for ENTER anyway, then an
 *            instruction whose probe can be jump-optimized);
 *  - BRANCH: at p's conditional jump otherwise (a critical edge), with the
 *            condition decoded now and `when` = taken / not taken.
 * Otherwise (a critical edge out of a static-key site or a fault fixup) it
 * cannot be observed: PROBESITE_NONE, and its cost is PROBESITE_COST_NONE
 * so that the maximum spanning tree takes it before anything else.
 *
 * Never a site: what register_kprobe refuses with -EINVAL (6.1,
 * check_kprobe_address_safe): static-key sites (jump_label_text_reserved,
 * CFG_I_KEY), ud2 sites in the bug table (find_bug: CFG_I_BUG, CFG_I_WARN),
 * static-call sites (static_call_text_reserved: CFG_IF_STATIC_CALL, set
 * by static_calls_mark), and the fentry site other than the function's
 * own first instruction. DST then falls back to BRANCH at p, SRC to
 * another instruction of p; with none, the edge is PROBESITE_NONE.
 *
 * Cost of an edge = the frequency of its site (DST: the edge's weight; SRC:
 * the edge's weight; BRANCH: all of p's out-edges' weight) times 1 for a
 * site that can be jump-optimized or PROBESITE_INT3_FACTOR for an int3
 * probe (an optimized probe costs tens of ns, an int3 one ten times more).
 *
 * Jump-optimization, as arch/x86/kernel/kprobes/opt.c (6.1) decides it:
 *  - no post_handler (the module never sets one);
 *  - the function (kallsyms symbol: main or .cold part) has no exception
 *    table entry and no indirect jump (an indirect tail call: jmp *r/m or
 *    into the retpoline thunks) at all (can_optimize refuses the whole
 *    symbol);
 *  - the probed instruction and those following it up to >= 5 bytes are
 *    boostable (can_boost): here plain instructions, or a plain ret that
 *    ends the window, that the CFG recovery did not flag
 *    CFG_IF_OPTPROBE_UNSAFE (kprobe_boost.h: no shift, test imm, not, neg,
 *    mul, div, inc/dec through Grp3-5, three-byte opcode, ...); no other
 *    branch, no call, ud2, static key, static-call or fentry site; inside
 *    the symbol;
 *  - not in the first 5 bytes of the main part when it starts with its
 *    fentry site (an ftrace-based probe); a function without one can be
 *    optimized at +0;
 *  - no jump target in [addr + 1, addr + 5] (insn_jump_into_range is
 *    inclusive of addr + 5);
 *  - no other probe inside the copied window, and windows do not overlap.
 */
#ifndef PATHTRACE_PROBESITE_H
#define PATHTRACE_PROBESITE_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/graph.h>

enum probesite_how {
	PROBESITE_NONE = 0,	/* cannot be observed */
	PROBESITE_DST,
	PROBESITE_SRC,
	PROBESITE_BRANCH,
};

#define PROBESITE_INT3_FACTOR 10
#define PROBESITE_FTRACE_FACTOR 3	/* the fentry site: an ftrace-based probe */
#define PROBESITE_COST_NONE (UINT64_MAX / 4)
#define PROBESITE_NO_INSN UINT32_MAX

struct probesite {
	uint32_t insn;		/* cfg insn index, or PROBESITE_NO_INSN */
	uint8_t how;		/* enum probesite_how */
	uint8_t when;		/* PT_WHEN_* (BRANCH: TAKEN or NOT_TAKEN) */
	uint8_t cond;		/* BRANCH: x86 cc; else PT_COND_NONE */
	uint8_t window_ok;	/* the instruction's own window qualifies for optimization */
	uint64_t cost;		/* see above */
};

/*
 * Chooses a site for every CFG edge (c->nedges entries in out). weight[e]
 * is the edge's frequency (weight.h units); NULL means 1 each. Returns 0;
 * -PT_EINVAL for an empty cfg.
 */
int probesite_edges(const struct cfg *c, const uint64_t *weight, struct probesite *out);

/*
 * A site anywhere in block b (for actions of a block, e.g. the path end of
 * a call vertex, which must fire before its call). Returns 0 or -PT_ENOENT
 * when no instruction of b can be probed.
 */
int probesite_in_block(const struct cfg *c, uint32_t b, const uint64_t *weight,
		       struct probesite *out);

/*
 * Whether kprobes can sit on insn i at all (not ud2, not a static-key or
 * static-call site, fentry only at 0, not the instruction after an ENDBR
 * entry: kprobes moves the entry's probe there).
 */
int probesite_probeable(const struct cfg *c, uint32_t i);
/*
 * Whether a probe at instruction i is ftrace-based: the __fentry__ site at
 * the entry, or an ENDBR entry kprobes moves onto the __fentry__ site after it.
 */
int probesite_ftrace(const struct cfg *c, uint32_t i);

/*
 * Length of insn i's jump-optimization window (>= 5) if it qualifies on
 * its own (all rules above but the spacing one), else 0.
 */
uint32_t probesite_window(const struct cfg *c, uint32_t i);

/* Why insn i's window does not qualify (probesite_window_why). */
enum probesite_why {
	PROBESITE_OPTIMIZABLE = 0,	/* it does */
	PROBESITE_WHY_FENTRY,		/* the fentry site: an ftrace-based probe */
	PROBESITE_WHY_SYMBOL,		/* a fixup or an indirect jump in the symbol */
	PROBESITE_WHY_CALL,		/* a call in the window: not boostable */
	PROBESITE_WHY_JUMP,		/* a jmp, Jcc, static key or tail call in it */
	PROBESITE_WHY_INSN,		/* an insn kprobes will not copy (kprobe_boost.h) */
	PROBESITE_WHY_TARGET,		/* a jump target in or right after it */
	PROBESITE_WHY_SHORT,		/* the function (or its part) ends first */
	PROBESITE_WHY_NR
};

/* As probesite_window, and why it is 0 in *why (may be NULL). */
uint32_t probesite_window_why(const struct cfg *c, uint32_t i, enum probesite_why *why);

/* A phrase for why ("?" for a value out of range). */
const char *probesite_why_name(enum probesite_why why);

/*
 * Given every probed instruction (insns[], ascending, no duplicates; the
 * ENTER site and verify sites included), sets opt[k] for the probes the
 * kernel will jump-optimize, applying the spacing rule in address order.
 * Returns how many.
 */
uint32_t probesite_mark_optimizable(const struct cfg *c, const uint32_t *insns, uint32_t n,
				    uint8_t *opt);

/* The frequency of block b: the weight of its out-edges (at least 1). */
uint64_t probesite_block_freq(const struct cfg *c, const uint64_t *weight, uint32_t b);

#endif
