/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inline - copies of live kernel functions that run in their place
 * (docs/inline.md): the copy of one function with the references that
 * leave it as relocations (inline_copy_build), and the livepatch module
 * that carries the copies, written from the template module with libelf
 * (inline_module_write).
 *
 * A copy keeps the original's layout: same bytes, same offsets. Branches
 * and RIP-relative operands inside the function need no change; those
 * that leave it become PC32/PLT32 relocations (their 4-byte field zeroed)
 * against the absolute target, or against another copy's start when the
 * target is a function copied into the same module (inline_link).
 */
#ifndef PATHTRACE_INLINE_H
#define PATHTRACE_INLINE_H

#include <stdint.h>

#include <pathtrace/cfg.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/static_calls.h>

#define INLINE_NONE UINT32_MAX
/*
 * inline_reloc.copy for the counters (docs/inline.md, "The increment"):
 * INLINE_COUNTER_PIECE, a PC32 against the module's slot holding the base
 * of the per-CPU piece with this copy's counters (addend -4: the module
 * writer adds the slot); INLINE_COUNTER_DISP, no relocation: the 4-byte
 * field holds the counter's bytes (addend too), to which the module
 * writer adds where the copy's counters start in their piece.
 */
#define INLINE_COUNTER_PIECE (UINT32_MAX - 1)
#define INLINE_COUNTER_DISP (UINT32_MAX - 2)
/* inline_reloc.copy: a PLT32 against pathtrace.ko's pt_inline_hit (a site's call) */
#define INLINE_HIT (UINT32_MAX - 3)
/*
 * inline_reloc.copy: a PLT32 against pathtrace.ko's pt_inline_stage (the
 * call of a site whose actions read no register but the flags)
 */
#define INLINE_STAGE (UINT32_MAX - 8)
/*
 * inline_reloc.copy: a PC32 against pathtrace.ko's per-CPU pt_inline_frame
 * (a %gs:-relative operand of a kept call's store or clear)
 */
#define INLINE_FRAME (UINT32_MAX - 4)
/*
 * inline_reloc.copy: a PC32 against pathtrace.ko's per-CPU pt_inline_depth
 * (the activations' count), or pt_inline_depth_known (cleared where the
 * count goes below 0)
 */
#define INLINE_DEPTH (UINT32_MAX - 5)
#define INLINE_DEPTH_KNOWN (UINT32_MAX - 6)
/*
 * inline_reloc.copy: a 32S against pathtrace.ko's per-CPU
 * pt_inline_frames_saved (the disp32 of a %gs:-relative operand indexed by
 * the activation's depth: a per-CPU symbol is an offset into the per-CPU
 * area, within 2 GB of 0)
 */
#define INLINE_FRAMES_SAVED (UINT32_MAX - 7)

/* The module's name: the template's (kmod/inline/pathtrace_inline.c), and its livepatch's. */
#define INLINE_MODULE "pathtrace_inline"

/* A reference from the copy to outside the function. */
struct inline_reloc {
	uint32_t off;		/* of its 4-byte field, from the function's start */
	uint32_t type;		/* R_X86_64_PC32, R_X86_64_PLT32 or R_X86_64_32S */
	uint64_t target;	/* the absolute address it points at */
	int64_t addend;		/* S + A - P: minus the bytes from the field to the insn's end */
	uint32_t copy;		/* INLINE_NONE, or the copy whose start target is (inline_link) */
};

/*
 * A static-key site of the copy: an entry of the module's __jump_table
 * (docs/inline.md, "Static keys and static calls"). Addresses as the
 * fixups': the original's address + the offset in the copy.
 */
struct inline_key {
	uint64_t code;		/* the site: a 2- or 5-byte jmp or nop */
	uint64_t target;	/* its jump target */
	uint64_t key;		/* the live struct static_key */
	uint8_t branch;		/* the original entry's branch bit */
	uint8_t init_jump;	/* the copy's bytes: 1 the jmp, 0 the nop (jump_label_init_type) */
	uint8_t live_jump;	/* the original's live state when copied (CFG_KEY_ON) */
	uint8_t len;		/* the site's bytes in the copy: 2 or 5 */
};

/* A static-call site of the copy: an entry of the module's .static_call_sites. */
struct inline_static_call {
	uint64_t addr;		/* the call, jmp or Jcc (as inline_key.code) */
	uint64_t key;		/* the live struct static_call_key */
	uint8_t tail;		/* STATIC_CALL_SITE_TAIL: a tail call */
};

/*
 * What inline_copy_build needs to carry static keys and static calls: the
 * live static-call sites with their keys, and where keys may lie (vmlinux:
 * a key in a module could go away with it while the copy's entries point
 * at it). NULL: every key or static-call site is refused.
 */
struct inline_env {
	const struct static_calls *sc;
	uint64_t keys_lo, keys_hi;	/* [lo, hi): vmlinux's image */
};

/* An offset in the copy and the original's address it stands for (docs/inline.md, "Sites as calls"). */
struct inline_addr {
	uint32_t copy;		/* from the copy's start */
	uint32_t site;		/* 1: where a site's call returns; orig is the site's address */
	uint64_t orig;
};

struct inline_copy {
	const char *name;	/* the original's (in's), not owned */
	const char *objname;	/* its module, NULL for vmlinux; not owned */
	uint64_t sympos;	/* livepatch's old_sympos: 0 if the name is unique in its object */
	uint64_t addr;		/* the original's address */
	uint32_t len;		/* exact: the end of its last instruction (in the copy) */
	uint32_t orig_len;	/* the original's: len until inline_counters_insert */
	uint8_t *code;		/* len bytes; relocated fields are zero */
	struct inline_reloc *relocs;
	uint32_t nrelocs;
	struct cfg_fixup *fixups;	/* the original's, insn and landing pad inside */
	uint32_t nfixups;
	struct cfg_bug_site *bugs;	/* the original's */
	uint32_t nbugs;
	struct inline_key *keys;	/* its static-key sites, in address order */
	uint32_t nkeys;
	struct inline_static_call *calls;	/* its static-call sites, in address order */
	uint32_t ncalls;
	struct korc_entry *orc;	/* given by the caller (klive_orc): the first at addr */
	uint32_t norc;
	uint32_t ncounters;	/* u64 per-CPU counters its code increments (0: none) */
	uint32_t nsequences;	/* increments inserted (inline_counters_insert) */
	uint32_t nflags_saved;	/* of those, inside pushf/popf */
	uint32_t nregs_saved;	/* of those, with their register pushed (none dead) */
	uint32_t nkept_calls;	/* calls that keep pt_inline_frame (inline_sites_insert) */
	struct inline_addr *addrs;	/* after inserting code: sorted by copy (sites after
					 * the other entry at the same offset) */
	uint32_t naddrs;
	const char *refusal;	/* a stable tag when refused */
	char detail[200];	/* where and why, for a human */
};

/*
 * Builds the copy of the function in (whose CFG c was recovered from it,
 * static-call sites marked): its bytes, relocations and table entries.
 * Its static-key sites are written in their initial state (the module
 * loader patches those whose key is not in it) and become __jump_table
 * entries; its static-call sites keep their live bytes and become
 * .static_call_sites entries (env says their keys). Refuses (-PT_EREFUSED,
 * out->refusal and out->detail set) what cannot be copied exactly:
 * "inline-cold" (a .cold part), "inline-rel8-out" (a rel8 branch leaving
 * the function), "inline-abs-inside" (an immediate or absolute
 * displacement holding an address inside it), "inline-fixup-out" (an
 * exception landing pad outside it), "inline-static-key" (a key site
 * whose key or initial state is unknown, or whose key is outside
 * env's range), "inline-static-call" (a site whose key is unknown or
 * outside the range, or whose bytes are not a 5-byte call, nop, jmp or
 * xor, or a Jcc), "inline-ftraced" (its __fentry__ site calls something:
 * ftrace is on it), "inline-decode" (an instruction Zydis does not decode
 * as cfg_build did). Returns 0, -PT_EREFUSED, -PT_EINVAL (no code) or
 * -PT_ENOMEM; out is freed with inline_copy_free either way.
 */
int inline_copy_build(const struct cfg_input *in, const struct cfg *c,
		      const struct inline_env *env, struct inline_copy *out);

/* The bytes of a key site of len 2 or 5 at code: the jmp to target when jump, else the nop. */
void inline_key_bytes(uint8_t *p, uint8_t len, int jump, uint64_t code, uint64_t target);

void inline_copy_free(struct inline_copy *cp);

/*
 * 1 when p (len bytes) starts with an endbr64 or the 4-byte NOP the kernel
 * seals one with when nothing calls the function indirectly (its IBT
 * poison: 6.1's nopl -42(%rax), osp nopl (%rax) from 6.2 on).
 */
int inline_is_endbr(const uint8_t *p, uint32_t len);

/*
 * Where the function in's __fentry__ site is: the offset of its first
 * instruction (after an endbr or its IBT seal) when that is the 5-byte NOP
 * or a call, else -1 (a notrace function: `inline` ones emitted out of
 * line, for one). Livepatch redirects a function through that site
 * (ftrace_location), so a function without one cannot run as a copy.
 */
int inline_fentry_site(const struct cfg_input *in);

/*
 * Puts an edges plan into the copy cp (built by inline_copy_build from in
 * and c): a per-CPU increment (`mov piece(%rip), %r; incq
 * %gs:counter(%r)`, a dead register or one saved) on each edge e whose
 * edge_counter[e] is not INLINE_NONE and, unless entry_counter is
 * INLINE_NONE, one counting activations after the __fentry__ site; the
 * counters are ncounters u64 of the copy's own (INLINE_COUNTER_PIECE and
 * INLINE_COUNTER_DISP fields). Branches inside the function become rel32 and the
 * relocations, exception, bug and ORC entries move with their
 * instructions (docs/inline.md, "Counters (edges mode)"). Refuses
 * (-PT_EREFUSED, cp->refusal set): "inline-edge" (an edge with no place
 * for its increment), "inline-flags-live" (flags live where the CFA is
 * neither sp- nor bp-based), "inline-branch" (a branch inside the function
 * that cannot be re-encoded), "inline-no-register" (no dead register where
 * the CFA is neither sp- nor bp-based), "inline-rip-inside",
 * "inline-decode".
 * Returns 0, -PT_EREFUSED, -PT_EINVAL (bad input) or -PT_ENOMEM; cp is
 * unchanged unless 0.
 */
int inline_counters_insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
			   const uint32_t *edge_counter, uint32_t entry_counter, uint32_t ncounters);

/* Where a site's call goes (struct inline_site). */
enum inline_edge {
	INLINE_AT,		/* before its instruction, on every way into it */
	INLINE_TAKEN,		/* its Jcc's taken side only: all its actions apply there */
	INLINE_FALL,		/* its Jcc's fall-through only */
};

/*
 * A probe plan's site: its address, where its call goes, and whether its
 * actions read no register but the flags (no ENTER, no profile): then it
 * calls pt_inline_stage, which stages it (docs/inline.md, "The stage").
 */
struct inline_site {
	uint64_t addr;
	enum inline_edge edge;
	int staged;
};

/*
 * Puts a probe plan's sites into the copy cp as calls (docs/inline.md,
 * "Sites as calls"): `call pt_inline_hit` (`call pt_inline_stage` for a
 * staged one) where each of the nsites sites
 * says (before its instruction, after the endbr and __fentry__ site for
 * one at them; or on one edge of its Jcc), so pathtrace.ko runs the site's
 * actions where a kprobe would have, or only where they apply. cp->addrs gets what the module translates
 * copy addresses with. Each call that returns (not a static-call site) keeps
 * its frame (docs/inline.md, "Frames the copies keep"): `mov %rsp,
 * %gs:pt_inline_frame(%rip)` right before it and `movq $0,
 * %gs:pt_inline_frame(%rip)` where it returns (INLINE_FRAME relocations;
 * cp->nkept_calls counts them), and the activation counts itself: `incl
 * %gs:pt_inline_depth(%rip)` after the __fentry__ site, `decl` before each
 * way out, clearing pt_inline_depth_known where it goes below 0
 * (INLINE_DEPTH and INLINE_DEPTH_KNOWN relocations), saving
 * pt_inline_frame in its depth's slot of pt_inline_frames_saved before the
 * incl and putting it back after each decl (INLINE_FRAMES_SAVED; a dead
 * register, else one pushed; pushf/popf where the flags are live).
 * Branches, relocations and table entries move as for inline_counters_insert. Refuses (-PT_EREFUSED, cp->refusal set)
 * "inline-site" (a site not at an instruction, two at one, one on an edge
 * of what is not a Jcc) and what
 * inline_counters_insert refuses for moving code. Returns 0,
 * -PT_EREFUSED, -PT_EINVAL or -PT_ENOMEM; cp is unchanged unless 0.
 */
int inline_sites_insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
			const struct inline_site *sites, uint32_t nsites);

/*
 * Points the relocations of every copy whose target is another copy's
 * start at that copy (calls between copied functions stay in the copies).
 * Refuses (-PT_EREFUSED, the copy's refusal "inline-into-copy") a copy
 * that jumps into the middle of another: that code would run as the
 * original's, untraced. Returns 0, or the index + 1 of a refused copy.
 */
uint32_t inline_link(struct inline_copy *cps, uint32_t n);

/*
 * Whether copy (the CFG recovered from a loaded copy) is orig's with every
 * address inside one of the n copies moved to that copy (at[j]: where copy
 * j runs) and every other address kept: the same blocks, instructions
 * (length, kind, condition, target) and edges. Returns 0, or
 * -PT_EMISMATCH with why saying where they differ.
 */
int inline_check(const struct cfg *orig, const struct cfg *copy, const struct inline_copy *cps,
		 uint32_t n, const uint64_t *at, char *why, size_t len);

/*
 * Writes the module carrying the n copies to out_path from the template
 * .ko (kmod/inline/pathtrace_inline.ko): the copies in .text.pt_inline
 * (16-byte aligned, a local function symbol each, with the original's
 * name and len), their relocations (absolute targets through SHN_ABS
 * symbols), the livepatch table, __ex_table, __bug_table, __jump_table
 * (key: R_X86_64_PC64 with the branch bit as addend), .static_call_sites
 * (key: PC32 with the tail bit) and ORC entries (docs/inline.md, "The
 * generated module"). err (n bytes) says what went
 * wrong. Returns 0; -PT_EIO (errno kept) reading or writing; -PT_EFORMAT
 * when the template is not the template (no .pt_inline, no symbol table);
 * -PT_EINVAL for no copies or a refused one; -PT_ENOMEM.
 */
int inline_module_write(const char *template_path, const char *out_path,
			const struct inline_copy *cps, uint32_t n, char *err, size_t errlen);

/*
 * Where copy i's counters lie in the module's counter space (what
 * pathtrace.ko is told, PT_ADD_INLINE): bytes, copies in order, each
 * copy's in one piece of PT_INLINE_PIECE_BYTES (pathtrace_abi.h).
 */
uint64_t inline_module_counter_offset(const struct inline_copy *cps, uint32_t i);

/* The bytes the counters of copies 0..n-1 span (pieces before the last whole). */
uint64_t inline_module_counter_bytes(const struct inline_copy *cps, uint32_t n);

/* Where a copy lands in .text.pt_inline: its offset (copies in order, 16-byte aligned). */
uint64_t inline_module_offset(const struct inline_copy *cps, uint32_t i);

#endif
