/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cfg - one function's control-flow graph, recovered from its machine code.
 *
 * A function is its main part plus an optional .cold part; both halves are
 * one CFG. Blocks are numbered in address order (main part first), block 0
 * starts at the function's address. Calls end blocks, so every call vertex
 * of the 1994 paper is a block whose last instruction is the call. Exits are
 * edges to the virtual EXIT vertex, numbered nblocks.
 *
 * A function that cannot be modelled exactly is refused: cfg_build returns
 * -PT_EREFUSED and cfg->refusal says why (a short, stable reason tag for
 * statistics) and cfg->detail says where.
 *
 * Only code reachable from the entry (along edges, including exception
 * fixups) is in the CFG: padding after the function, int3 after a return
 * and dead code are not instructions of any block.
 *
 * Edge order per block: Jcc [FALL, TAKEN]; static key [KEY_FALL, KEY_JUMP];
 * faulting instruction [FALL, FIXUP]; call [CALL_RETURN]; exits [EXIT].
 * A Jcc (or key site) whose target is its own fall-through has two
 * parallel edges to the same block; both are kept (exact, and the kinds
 * differ).
 *
 * Refusal tags: "indirect-jump", "runs-off-end", "undecodable",
 * "mid-insn-target", "jump-outside", "loop-insn" (jrcxz/loop*),
 * "special-control" (iret, sysret, int n, syscall, vmlaunch, xbegin, far
 * branches), "int3-reached" (a breakpoint, or a call we do not know is
 * noreturn), "kprobe-present" (live code patched by an optimized kprobe),
 * "bad-static-key", "bad-fixup", "bad-reloc", "too-large", "alternative". Sources add
 * their own (ksyms.h: "unknown-static-key", "module-mismatch").
 */
#ifndef PATHTRACE_CFG_H
#define PATHTRACE_CFG_H

#include <stdint.h>

#include <pathtrace/graph.h>

/* How an instruction transfers control. */
enum cfg_insn_kind {
	CFG_I_PLAIN = 0,	/* falls through */
	CFG_I_JCC,		/* conditional branch (cc holds the condition) */
	CFG_I_JMP,		/* direct jump inside the function */
	CFG_I_KEY,		/* static-key site (jmp or nop): two-way, flips at run time */
	CFG_I_CALL,		/* direct call (target set) */
	CFG_I_CALL_INDIRECT,	/* call through a retpoline thunk or a register/memory */
	CFG_I_CALL_NORETURN,	/* call to a noreturn function: ends a path */
	CFG_I_RET,		/* ret, or jmp __x86_return_thunk */
	CFG_I_TAIL_CALL,	/* jmp to another function */
	CFG_I_BUG,		/* ud2 of BUG(): does not continue */
	CFG_I_WARN,		/* ud2 of WARN(): continues at the next instruction */
	CFG_I_FENTRY,		/* the 5-byte __fentry__ site (call or nop) */
};

/* Instruction flags. */
#define CFG_IF_FAULT_FIXUP	(1u << 0)	/* has an exception-table fixup edge */
#define CFG_IF_BRANCH_TARGET	(1u << 1)	/* some jump lands here */
#define CFG_IF_RIP_RELATIVE	(1u << 2)	/* has a RIP-relative operand */
#define CFG_IF_OPTPROBE_UNSAFE	(1u << 3)	/* cannot sit in a jump-optimized probe window */
/*
 * The branch leaves the function: a Jcc whose taken side is a conditional
 * tail call or return (`jcc __x86_return_thunk`): its TAKEN edge goes to
 * EXIT and target_name names where it goes.
 */
#define CFG_IF_LEAVES		(1u << 4)
/*
 * CFG_I_CALL_NORETURN inferred from the code, not from a list: the call is
 * the last instruction of its part, so the compiler knew it never returns.
 */
#define CFG_IF_NORETURN_INFERRED (1u << 5)
/*
 * A static-call site (.static_call_sites) covers the instruction: kprobes
 * refuse it (static_call_text_reserved). Set by static_calls_mark, not by
 * cfg_build.
 */
#define CFG_IF_STATIC_CALL	(1u << 6)
/*
 * The function's first instruction is the ENDBR of CONFIG_X86_KERNEL_IBT
 * (endbr64/endbr32, or the nop the kernel seals an unused one with: Debian's
 * 6.12 starts vfs_read with 66 0f 1f 00, then its __fentry__ site). kprobes
 * moves a probe asked for here to the next instruction, the __fentry__
 * site (arch_adjust_kprobe_addr): it is no probe site of its own.
 */
#define CFG_IF_ENTRY_ENDBR	(1u << 7)

/*
 * A static-key site whose live code is the jmp (the key is on): until it
 * flips, only its CFG_E_KEY_JUMP edge runs. Read by the weighting only.
 */
#define CFG_KEY_ON 1

struct cfg_insn {
	uint64_t addr;
	uint8_t len;
	uint8_t kind;		/* enum cfg_insn_kind */
	uint8_t cc;		/* CFG_I_JCC: x86 condition code 0..15 (low nibble of Jcc);
				 * CFG_I_KEY: CFG_KEY_ON while the live code jumps */
	uint8_t flags;		/* CFG_IF_* */
	uint32_t block;		/* the block it belongs to */
	uint64_t target;	/* branch, call or fixup target; 0 if none or indirect */
	const char *target_name; /* callee or tail-call target name, or NULL */
};

/* How control leaves a block along an edge. */
enum cfg_edge_kind {
	CFG_E_FALL = 0,		/* fall-through (after a not-taken Jcc, a plain insn, or a WARN) */
	CFG_E_TAKEN,		/* Jcc taken */
	CFG_E_JUMP,		/* unconditional jmp */
	CFG_E_KEY_JUMP,		/* static-key site as a jump */
	CFG_E_KEY_FALL,		/* static-key site as a nop */
	CFG_E_CALL_RETURN,	/* after a call returns */
	CFG_E_FIXUP,		/* exception-table fixup of a faulting instruction */
	CFG_E_EXIT,		/* to the virtual EXIT (ret, tail call, noreturn call, BUG) */
};

struct cfg_edge {
	uint32_t src;
	uint32_t dst;		/* block id, or cfg->nblocks for EXIT */
	uint8_t kind;		/* enum cfg_edge_kind */
	uint8_t reserved[3];
};

/* Block flags. */
#define CFG_BF_CALL	(1u << 0)	/* ends in a call that returns (a call vertex) */
#define CFG_BF_COLD	(1u << 1)	/* in the .cold part */
#define CFG_BF_ENTRY	(1u << 2)	/* block 0 */
/*
 * Ends in a call proven quiet (quiet_calls.h): not a call vertex, the call
 * is a plain instruction to the encoding. Set at enable, kept in the blob.
 */
#define CFG_BF_QUIET_CALL (1u << 3)

struct cfg_block {
	uint64_t addr;
	uint32_t size;		/* bytes */
	uint32_t first_insn;	/* index into cfg->insns */
	uint32_t ninsn;
	uint32_t flags;		/* CFG_BF_* */
	uint32_t first_succ;	/* index into cfg->edges: successors are contiguous */
	uint32_t nsucc;
};

struct cfg {
	char *name;
	uint64_t addr;		/* main part */
	uint32_t len;
	uint64_t cold_addr;	/* .cold part, 0 if none */
	uint32_t cold_len;
	uint32_t nblocks;
	uint32_t ninsns;
	uint32_t nedges;
	struct cfg_block *blocks;
	struct cfg_insn *insns;	/* in address order, main part then cold part */
	struct cfg_edge *edges;	/* grouped by source block */
	const char *refusal;	/* NULL, or a stable reason tag (see cfg_build) */
	char detail[160];	/* where and what, for a human */
};

/* Exception-table entry: a faulting instruction and where it continues. */
struct cfg_fixup {
	uint64_t insn;
	uint64_t fixup;
	uint32_t data;		/* the entry's data word as the table holds it (type, register, imm) */
};

/*
 * Static-key site (__jump_table entry): its code address and jump target,
 * and, where the source can tell (a live table), its key and initial state.
 */
struct cfg_key_site {
	uint64_t code;
	uint64_t target;
	uint64_t key;		/* the struct static_key's address; 0 where the source cannot tell */
	uint8_t branch;		/* the entry's branch bit (jump_entry_is_branch) */
	/*
	 * The site's state the module loader assumes (jump_label_init_type:
	 * the key's static_key_type ^ branch): 1 the jmp, 0 the nop, -1 unknown.
	 */
	int8_t init_jump;
};

/* ud2 site with its bug-table flags (BUGFLAG_WARNING: it continues). */
struct cfg_bug_site {
	uint64_t addr;
	int warning;
	uint16_t line;		/* the entry's line and flags as the table holds them */
	uint16_t flags;
	uint64_t file;		/* the file name's address, 0 where the source cannot resolve it */
};

/*
 * An alternative-instruction site (.altinstructions) of code not yet
 * patched (an ELF object; live code is already patched): len bytes at
 * addr may be replaced at boot by repl (repl_len bytes). When the choice
 * can change control flow (a jump, return or trap on either side) the
 * function is refused as "alternative"; calls and plain instructions on
 * either side keep every path through the blocks the same.
 */
struct cfg_alt_site {
	uint64_t addr;
	uint32_t len;
	uint32_t repl_len;
	uint64_t repl_addr;
	const uint8_t *repl;	/* NULL if the replacement bytes are unknown */
};

/*
 * Names the world outside the function. Every callback may be NULL.
 *  - name_at: the symbol that starts exactly at addr, or NULL.
 *  - reloc_at: for ELF objects, the symbol a relocation in [addr, addr+len)
 *    names (an unresolved call/jmp displacement); NULL if none.
 *  - is_noreturn: whether calling that symbol never returns.
 */
struct cfg_names {
	void *ctx;
	const char *(*name_at)(void *ctx, uint64_t addr);
	const char *(*reloc_at)(void *ctx, uint64_t addr, uint32_t len);
	int (*is_noreturn)(void *ctx, const char *name);
	/*
	 * For ELF objects: the relocation on the branch displacement of the
	 * instruction at [addr, addr+len). Returns 0 if there is none; 1 with
	 * *target (the resolved address, 0 if it is outside the object) and
	 * *name (the symbol, or NULL for a section symbol + addend); -1 when a
	 * relocation is there but cannot be resolved (the function is refused).
	 */
	int (*branch_reloc)(void *ctx, uint64_t addr, uint32_t len, uint64_t *target,
			    const char **name);
};

struct cfg_input {
	const char *name;
	uint64_t addr;
	const uint8_t *code;
	uint32_t len;
	uint64_t cold_addr;	/* 0 if none */
	const uint8_t *cold_code;
	uint32_t cold_len;
	const struct cfg_fixup *fixups;
	uint32_t nfixups;
	const struct cfg_key_site *keys;
	uint32_t nkeys;
	const struct cfg_bug_site *bugs;
	uint32_t nbugs;
	struct cfg_names names;
	/*
	 * Set only by a source that proved no code address inside the
	 * function is taken (no jump table, no computed goto: for a .ko, no
	 * relocation outside the CFG's own tables points into its body; for
	 * vmlinux, no .rodata/.data word does, ktext_refs.c). Then an
	 * indirect jmp (through a register, memory or an
	 * __x86_indirect_thunk_*) can only leave the function: it is an
	 * indirect tail call (CFG_I_TAIL_CALL, target 0). Otherwise such a
	 * jmp is refused as "indirect-jump".
	 */
	int indirect_jumps_leave;
	/*
	 * Without that proof: what the source found against it (e.g. a data
	 * word pointing inside), for the refusal's detail; NULL says only that
	 * the source cannot prove it.
	 */
	const char *ijmp_unproven;
	const struct cfg_alt_site *alts;
	uint32_t nalts;
};

/*
 * Recovers in's CFG into c (which the caller then frees with cfg_free).
 * Returns 0; -PT_EREFUSED with c->refusal and c->detail set when the
 * function cannot be modelled exactly; -PT_EINVAL for a NULL or empty
 * input; -PT_ENOMEM.
 */
int cfg_build(const struct cfg_input *in, struct cfg *c);

/* Frees what cfg_build allocated. */
void cfg_free(struct cfg *c);

/* The block containing addr, or UINT32_MAX. */
uint32_t cfg_block_at(const struct cfg *c, uint64_t addr);

/*
 * A block of function name (at addr, its .cold part at cold_addr, 0 if
 * none) for a human, into buf: "name+0xoff", "name.cold+0xoff", or
 * "name#block" for a block c does not have. Returns buf.
 */
const char *cfg_block_name(const struct cfg *c, const char *name, uint64_t addr,
			   uint64_t cold_addr, uint32_t block, char *buf, size_t len);

/*
 * The algorithms' view: vertex i is block i, vertex nblocks is EXIT, edge i
 * is cfg edge i; call vertices flagged GRAPH_V_CALL. Returns 0 or -PT_ENOMEM.
 */
int cfg_to_graph(const struct cfg *c, struct graph *g);

/*
 * Whether edge ei (into EXIT) is a tail call: the block ends in a jmp to
 * another function (CFG_I_TAIL_CALL), or in a Jcc whose taken edge leaves
 * the function for anything but a return thunk (that Jcc is a conditional
 * return). *target: where it goes, 0 when indirect or unknown. Returns 1
 * or 0.
 */
int cfg_tail_call(const struct cfg *c, uint32_t ei, uint64_t *target);

/* An edge kind's name ("fall", "taken", ... "exit"), "?" for an unknown kind. */
const char *cfg_edge_kind_name(uint32_t kind);

/*
 * 1 when name (NULL: no) is a return thunk: __x86_return_thunk, or what
 * live code patched it to (retbleed_return_thunk, srso_return_thunk,
 * its_return_thunk, ...): all end "return_thunk". A jmp to one is a ret.
 */
int cfg_is_return_thunk(const char *name);

#endif
