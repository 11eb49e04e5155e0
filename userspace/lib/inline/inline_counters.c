// SPDX-License-Identifier: GPL-2.0
/*
 * inline_counters - an edges plan as code inside a copy (docs/inline.md,
 * "Counters (edges mode)"): a per-CPU `incq %gs:counter(%rip)` on each
 * counted edge, so that no probe is needed. Inserting code moves the
 * instructions after it: every branch inside the function is re-encoded
 * as rel32 to its instruction's new place, and the relocations, exception
 * and bug entries and ORC entries are mapped through the old-to-new
 * offsets. Where an edge's increment goes:
 *
 *   fall-through (after a Jcc not taken, a call's return, a WARN):
 *       between the two instructions, reached only by falling through
 *       (branches to the next instruction land after it);
 *   a Jcc's taken side: a stub after the code, `jcc stub ... stub: incq;
 *       jmp target`;
 *   an exception fixup: a stub the exception-table entry lands on;
 *   the only edge out of a block (jmp, ret, tail call, noreturn call,
 *       BUG): before the block's last instruction;
 *   activations: after the __fentry__ site, on the entry's fall-through.
 *
 * The counters are per-CPU memory the inline module allocates (pieces of
 * PT_INLINE_PIECE_BYTES); the increment loads its piece's base into a
 * scratch register and increments the counter through it:
 *
 *   mov piece(%rip), %r; incq %gs:counter(%r)
 *
 * The register is one dead at the site (liveness on the CFG: Ball and
 * Larus's register scavenging) that the function writes anyway, or saved
 * around the sequence (push/pop) where none is. incq writes OF, SF, ZF,
 * AF and PF: where one of them is live the sequence saves them
 * (pushf/popf). Pushes come with ORC entries that say the CFA moved by 8
 * each (an sp-based CFA; a bp-based one does not move; otherwise refused).
 */
#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include "pathtrace_abi.h"

#include "inline_refuse.h"

#define MOV_LEN 7		/* REX.W 8b /r, RIP-relative disp32: mov piece(%rip), %r */
#define INC_LEN 8		/* 65 REX.W ff /0, disp32(%r): incq %gs:counter(%r) (+1: SIB) */
#define SAVE_LEN 1		/* pushf, popf */
#define JMP_LEN 5
#define CALL_LEN 5		/* e8 rel32: call pt_inline_hit */
#define KEEP_LEN 8		/* 65 REX.W 89 /r, RIP-relative: mov %rsp, %gs:pt_inline_frame(%rip) */
#define CLEAR_LEN 12		/* 65 REX.W c7 /0, RIP-relative, imm32: movq $0, %gs:pt_inline_frame(%rip) */
#define DEPTH_LEN 7		/* 65 ff /0 or /1, RIP-relative: incl or decl %gs:pt_inline_depth(%rip) */
#define KNOWN_LEN 10		/* jns +8; 65 c6 /0, RIP-relative, imm8: movb $0, %gs:pt_inline_depth_known(%rip) */
/* movl %gs:pt_inline_depth(%rip), %r32; cmpl $N - 1, %r32; ja (+1 each for REX with r8-r15) */
#define SLOT_INDEX_LEN 12
#define SLOT_SAVE_LEN 15	/* push %gs:pt_inline_frame(%rip); pop %gs:saved(,%r,8) (+1: REX.X) */
#define SLOT_PUT_LEN 17		/* movq %gs:saved(,%r,8), %r; movq %r, %gs:pt_inline_frame(%rip) */
#define DEPTH_INC 1
#define DEPTH_DEC 2
#define JCC_LEN 6
#define FLAGS_INC (ZYDIS_CPUFLAG_OF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_ZF | \
		   ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_PF)
#define FLAGS_ALL (FLAGS_INC | ZYDIS_CPUFLAG_CF)
#define ORC_REG_SP 5
#define ORC_REG_BP 4

/* General registers by encoding (rax 0 .. r15 15), as bits. */
#define R(x) (1u << (x))
#define REG_RAX 0
#define REG_RSP 4
#define REG_RBP 5
#define GPRS_ALL 0xffffu
#define GPRS_CALLER_SAVED (R(0) | R(1) | R(2) | R(6) | R(7) | R(8) | R(9) | R(10) | R(11))
#define GPRS_RET (R(0) | R(2) | R(3) | R(4) | R(5) | R(12) | R(13) | R(14) | R(15))
#define GPRS_CALLEE_SAVED (R(3) | R(12) | R(13) | R(14) | R(15))

#define refuse inline_refuse

/* One increment: its counter, whether it saves the flags, its register and whether it saves it. */
struct incr {
	uint32_t counter;
	uint8_t save;
	uint8_t reg;
	uint8_t push;
	uint8_t call;		/* not an increment: `call pt_inline_hit` (a plan's site) */
	uint8_t staged;		/* the call is `call pt_inline_stage` */
	uint8_t depth;		/* not an increment: DEPTH_INC or DEPTH_DEC of pt_inline_depth */
	uint64_t site;		/* the call's: the site's address in the plan */
};

/* A stub: the taken side of the Jcc insn, or the landing pad of its fixup. */
struct stub {
	uint32_t insn;
	uint64_t target;	/* original address: inside, or outside the function */
	uint8_t fixup;
	uint8_t has_x;		/* x is there (a leaving Jcc's stub may hold only its dec) */
	struct incr x;
	struct incr dec;	/* depth DEPTH_DEC after x: the Jcc's taken side leaves */
	uint32_t pos;		/* in the new code */
};

struct lay {
	const struct cfg *c;
	uint32_t n;			/* instructions */
	struct incr (*ft)[2];		/* per instruction: on its fall-through entry */
	struct incr *all;		/* per instruction: before it, one at most */
	uint32_t *nft, *nall;		/* how many are there */
	uint32_t *ft_start, *tgt, *pos;	/* new offsets */
	uint32_t *nlen;			/* new length of each instruction */
	uint32_t *flags_live;		/* live status flags before each instruction */
	uint32_t *regs_live;		/* live general registers before each instruction */
	uint32_t scratch_ok;		/* registers a sequence may use unsaved where dead */
	uint8_t *keep;			/* per instruction: a call that keeps its frame */
	struct incr inc;		/* the activation's count up (depth 0: none)... */
	uint32_t inc_at;		/* ...on the fall-through into this instruction */
	struct incr *dec;		/* per instruction: the count down before it (depth 0: none) */
	struct stub *stubs;
	uint32_t nstubs;
	uint32_t len;
};

/* The first instruction at or after a (c->ninsns if none). */
static uint32_t insn_from(const struct cfg *c, uint64_t a)
{
	uint32_t lo = 0, hi = c->ninsns;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (c->insns[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The instruction starting at address a, or UINT32_MAX. */
static uint32_t insn_at(const struct cfg *c, uint64_t a)
{
	uint32_t i = insn_from(c, a);

	return i < c->ninsns && c->insns[i].addr == a ? i : UINT32_MAX;
}

/*
 * Backward liveness to a fixed point from per-instruction use and def;
 * exit_live where a branch leaves the function (a ret says what it reads
 * in its use).
 */
static void solve(const struct cfg *c, const uint32_t *use, const uint32_t *def, uint32_t exit_live,
		  uint32_t *live)
{
	int changed = 1;
	uint32_t k;

	memset(live, 0, (c->ninsns + 1) * sizeof(*live));
	while (changed) {
		changed = 0;
		for (k = c->ninsns; k-- > 0;) {
			const struct cfg_insn *ci = &c->insns[k];
			const struct cfg_block *b = &c->blocks[ci->block];
			uint32_t out = 0, v, e;

			if (k + 1 < b->first_insn + b->ninsn) {
				out = live[k + 1];
			} else {
				for (e = b->first_succ; e < b->first_succ + b->nsucc; e++) {
					uint32_t d = c->edges[e].dst;

					if (d < c->nblocks)
						out |= live[c->blocks[d].first_insn];
					else if (ci->kind != CFG_I_RET)
						out |= exit_live;
				}
			}
			v = (out & ~def[k]) | use[k];
			if (v != live[k]) {
				live[k] = v;
				changed = 1;
			}
		}
	}
}

/* The general register (encoding 0-15) reg is, or lies in; -1 for any other register. */
static int gpr(ZydisRegister reg)
{
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);

	if (ZydisRegisterGetClass(big) != ZYDIS_REGCLASS_GPR64)
		return -1;
	return ZydisRegisterGetId(big);
}

/* General registers instruction zi reads (use) and surely writes in full (def). */
static void regs_used(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops,
		      uint32_t *use, uint32_t *def)
{
	uint32_t u = 0, d = 0, k;
	int r;

	for (k = 0; k < zi->operand_count; k++) {
		const ZydisDecodedOperand *op = &ops[k];

		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			if ((r = gpr(op->mem.base)) >= 0)
				u |= R(r);
			if ((r = gpr(op->mem.index)) >= 0)
				u |= R(r);
			continue;
		}
		if (op->type != ZYDIS_OPERAND_TYPE_REGISTER || (r = gpr(op->reg.value)) < 0)
			continue;
		if (op->actions & (ZYDIS_OPERAND_ACTION_READ | ZYDIS_OPERAND_ACTION_CONDREAD))
			u |= R(r);
		/* a 32- or 64-bit write replaces the register; 8 and 16 bits keep the rest */
		if ((op->actions & ZYDIS_OPERAND_ACTION_WRITE) && op->size >= 32)
			d |= R(r);
	}
	*use = u;
	*def = d & ~u;
}

/*
 * Liveness of the status flags and of the general registers before each
 * instruction, and the registers the function writes anywhere (*written).
 * A call reads every caller-saved register and writes none (helpers with
 * their own conventions, __get_user_N and thunks, keep registers); ret
 * reads the return and callee-saved registers; a tail call, a noreturn
 * call and EXIT read all; an instruction that may fault into its fixup
 * writes nothing (the fixup runs without its writes).
 */
static int liveness(const struct cfg_input *in, const struct cfg *c, uint32_t *flags_live,
		    uint32_t *regs_live, uint32_t *written)
{
	uint32_t n = c->ninsns + 1;
	uint32_t *use = calloc(n, sizeof(*use)), *def = calloc(n, sizeof(*def));
	uint32_t *ruse = calloc(n, sizeof(*ruse)), *rdef = calloc(n, sizeof(*rdef));
	ZydisDecoder dec;
	uint32_t i, e;

	if (!use || !def || !ruse || !rdef) {
		free(use);
		free(def);
		free(ruse);
		free(rdef);
		return -PT_ENOMEM;
	}
	*written = 0;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (i = 0; i < c->ninsns; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		const struct cfg_block *b = &c->blocks[ci->block];
		ZydisDecodedInstruction zi;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, in->code + (ci->addr - in->addr),
							 in->len - (ci->addr - in->addr), &zi,
							 ops))) {
			use[i] = FLAGS_ALL;	/* cfg_build decoded it; be safe anyway */
			ruse[i] = GPRS_ALL;
			continue;
		}
		regs_used(&zi, ops, &ruse[i], &rdef[i]);
		*written |= rdef[i];
		switch (ci->kind) {
		case CFG_I_CALL:
		case CFG_I_CALL_INDIRECT:
		case CFG_I_FENTRY:
			def[i] = FLAGS_ALL;	/* a callee clobbers them (the ABI) */
			ruse[i] |= GPRS_CALLER_SAVED | R(REG_RSP);
			rdef[i] = 0;
			continue;
		case CFG_I_RET:
			ruse[i] |= GPRS_RET;
			rdef[i] = 0;
			continue;
		case CFG_I_CALL_NORETURN:
		case CFG_I_TAIL_CALL:
			ruse[i] = GPRS_ALL;
			continue;
		case CFG_I_BUG:
		case CFG_I_WARN:
			continue;
		}
		if (zi.cpu_flags) {
			use[i] = zi.cpu_flags->tested & FLAGS_ALL;
			/* only flags surely written kill: modified, set or cleared */
			def[i] = (zi.cpu_flags->modified | zi.cpu_flags->set_0 |
				  zi.cpu_flags->set_1 | zi.cpu_flags->undefined) & FLAGS_ALL &
				 ~use[i];
		}
		if (i + 1 == b->first_insn + b->ninsn)
			for (e = b->first_succ; e < b->first_succ + b->nsucc; e++)
				if (c->edges[e].kind == CFG_E_FIXUP)
					rdef[i] = def[i] = 0;
	}
	solve(c, use, def, 0, flags_live);
	solve(c, ruse, rdef, GPRS_ALL, regs_live);
	free(use);
	free(def);
	free(ruse);
	free(rdef);
	return 0;
}

/*
 * The increment of counter run before instruction insn (l->n: on the way
 * out of the function, where everything is live): the flags saved if one
 * incq writes is live there, a dead register it may use, else one saved.
 */
static struct incr incr_at(const struct lay *l, uint32_t counter, uint32_t insn)
{
	/* rather caller-saved (no save in the prologue), r11 and r10 first: the least used */
	static const uint8_t pref[] = { 11, 10, 9, 8, 0, 1, 2, 6, 7, 3, 12, 13, 14, 15 };
	uint32_t live = insn < l->n ? l->regs_live[insn] : GPRS_ALL, k;
	struct incr x = { .counter = counter, .reg = REG_RAX, .push = 1 };

	x.save = insn < l->n && (l->flags_live[insn] & FLAGS_INC);
	for (k = 0; k < sizeof(pref); k++)
		if (!(live & R(pref[k])) && (l->scratch_ok & R(pref[k]))) {
			x.reg = pref[k];
			x.push = 0;
			break;
		}
	return x;
}

/* Where edge e goes, as an instruction index: l->n for EXIT. */
static uint32_t dst_insn(const struct lay *l, uint32_t e)
{
	uint32_t d = l->c->edges[e].dst;

	return d < l->c->nblocks ? l->c->blocks[d].first_insn : l->n;
}

static int place(struct lay *l, struct inline_copy *cp, const struct cfg_input *in, uint32_t e,
		 uint32_t counter)
{
	const struct cfg *c = l->c;
	const struct cfg_edge *ed = &c->edges[e];
	const struct cfg_block *s = &c->blocks[ed->src];
	uint32_t last = s->first_insn + s->ninsn - 1, d;
	const struct cfg_insn *li = &c->insns[last];

	if (ed->kind == CFG_E_FALL || ed->kind == CFG_E_CALL_RETURN || ed->kind == CFG_E_KEY_FALL) {
		d = ed->dst < c->nblocks ? c->blocks[ed->dst].first_insn : UINT32_MAX;
		if (d != last + 1 || l->nft[d] == 2)
			return refuse(cp, "inline-edge", "%s: edge %u (fall-through) has no place",
				      in->name, e);
		l->ft[d][l->nft[d]++] = incr_at(l, counter, d);
		return 0;
	}
	if (((ed->kind == CFG_E_TAKEN || ed->kind == CFG_E_EXIT) && li->kind == CFG_I_JCC) ||
	    (ed->kind == CFG_E_KEY_JUMP && li->kind == CFG_I_KEY)) {
		struct stub *st = &l->stubs[l->nstubs++];

		if (li->flags & CFG_IF_STATIC_CALL)
			return refuse(cp, "inline-static-call", "%s+0x%" PRIx64 ": a counted "
				      "static-call Jcc: an update would bypass its stub", in->name,
				      li->addr - in->addr);

		*st = (struct stub){ .insn = last, .target = li->target, .has_x = 1,
				     .x = incr_at(l, counter, dst_insn(l, e)) };
		return 0;
	}
	if (ed->kind == CFG_E_FIXUP) {
		struct stub *st = &l->stubs[l->nstubs++];

		*st = (struct stub){ .insn = last, .target = li->target, .fixup = 1, .has_x = 1,
				     .x = incr_at(l, counter, dst_insn(l, e)) };
		return 0;
	}
	if (s->nsucc == 1 && !l->nall[last] && li->kind != CFG_I_JCC) {
		/* the only way out: every run of its last instruction takes it */
		l->all[last] = incr_at(l, counter, last);
		l->nall[last] = 1;
		return 0;
	}
	return refuse(cp, "inline-edge", "%s: edge %u (%s) has no place for its counter",
		      in->name, e, cfg_edge_kind_name(ed->kind));
}

static uint32_t push_len(const struct incr *x)
{
	return x->reg >= 8 ? 2 : 1;
}

/* The slot's part of a count's sequence: its index, then the save or the put back. */
static uint32_t slot_len(const struct incr *x)
{
	uint32_t rex = x->reg >= 8;

	return SLOT_INDEX_LEN + 2 * rex +
	       (x->depth == DEPTH_INC ? SLOT_SAVE_LEN + rex : SLOT_PUT_LEN);
}

static uint32_t seq_len(const struct incr *x)
{
	uint32_t saves = (x->save ? 2 * SAVE_LEN : 0) + (x->push ? 2 * push_len(x) : 0);

	if (x->call)
		return CALL_LEN;
	if (x->depth)
		return DEPTH_LEN + (x->depth == DEPTH_DEC ? KNOWN_LEN : 0) + slot_len(x) + saves;
	return MOV_LEN + INC_LEN + ((x->reg & 7) == REG_RSP) + saves;
}

/* What a sequence pushes at most: the flags, the register, the word a count's saves. */
static uint32_t seq_depth(const struct incr *x)
{
	return x->save + x->push + (x->depth == DEPTH_INC);
}

/* A stub's sequences: its x (if any), then its dec (if any). */
static uint32_t stub_len(const struct stub *st)
{
	return (st->has_x ? seq_len(&st->x) : 0) + (st->dec.depth ? seq_len(&st->dec) : 0);
}

/* The ORC entry in effect at original address a (NULL: none). */
static const uint8_t *orc_at(const struct inline_copy *cp, uint64_t a)
{
	const uint8_t *o = NULL;
	uint32_t k;

	for (k = 0; k < cp->norc && cp->orc[k].ip <= a; k++)
		o = cp->orc[k].orc;
	return o;
}

/*
 * The type bits of a call frame's ORC entry in cp's kernel: those of the
 * entry in effect at the function's first instruction, a call frame in
 * every layout: 6.1's (type:2, signal:1, end:1; ORC_TYPE_CALL 0) and
 * 6.4's on (type:3, signal:1; ORC_TYPE_CALL 2). The signal bit is among
 * them in 6.1's, and clear there. -1: that entry's CFA is neither sp- nor
 * bp-based, so it is no call frame (nothing is pushed then).
 */
static int orc_call_type(const struct inline_copy *cp)
{
	const uint8_t *o = orc_at(cp, cp->addr);

	if (!o || ((o[4] & 0xf) != ORC_REG_SP && (o[4] & 0xf) != ORC_REG_BP))
		return -1;
	return o[5] & 7;
}

/*
 * The entry o of cp with depth pushes: an sp-based CFA moves by 8 a push;
 * a bp-based one does not. 0, or -1 refused (no entry, or not a call
 * frame's).
 */
static int orc_pushed(const struct inline_copy *cp, const uint8_t *o, uint32_t depth,
		      uint8_t *out)
{
	int type = orc_call_type(cp);
	int16_t sp;

	if (!o || type < 0 || (o[5] & 7) != type)
		return -1;
	memcpy(out, o, KORC_ENTRY);
	if ((o[4] & 0xf) == ORC_REG_BP)
		return 0;
	if ((o[4] & 0xf) != ORC_REG_SP)
		return -1;
	memcpy(&sp, o, 2);
	sp = (int16_t)(sp + 8 * depth);
	memcpy(out, &sp, 2);
	return 0;
}

struct out {
	uint8_t *code;
	uint32_t at;
	struct inline_reloc *relocs;
	uint32_t nrelocs, cap;
	struct korc_entry *orc;
	uint32_t norc, orc_cap;
};

static int out_reloc(struct out *o, uint32_t off, uint32_t type, uint64_t target, int64_t addend,
		     uint32_t copy)
{
	if (o->nrelocs == o->cap) {
		uint32_t ncap = o->cap ? 2 * o->cap : 16;
		struct inline_reloc *r = realloc(o->relocs, ncap * sizeof(*r));

		if (!r)
			return -PT_ENOMEM;
		o->relocs = r;
		o->cap = ncap;
	}
	o->relocs[o->nrelocs++] = (struct inline_reloc){ .off = off, .type = type,
		.target = target, .addend = addend, .copy = copy };
	return 0;
}

static int out_orc(struct out *o, uint64_t ip, const uint8_t *e)
{
	if (o->norc == o->orc_cap) {
		uint32_t ncap = o->orc_cap ? 2 * o->orc_cap : 32;
		struct korc_entry *r = realloc(o->orc, ncap * sizeof(*r));

		if (!r)
			return -PT_ENOMEM;
		o->orc = r;
		o->orc_cap = ncap;
	}
	o->orc[o->norc].ip = ip;
	memcpy(o->orc[o->norc].orc, e, KORC_ENTRY);
	o->norc++;
	return 0;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;

	memcpy(p, &x, 4);
}

/* A push or pop of x's register at o->at (0x50 push, 0x58 pop). */
static void push_pop(struct out *o, const struct incr *x, uint8_t op)
{
	if (x->reg >= 8)
		o->code[o->at++] = 0x41;	/* REX.B */
	o->code[o->at++] = (uint8_t)(op + (x->reg & 7));
}

/* After a push or pop: the ORC entry of the CFA state st with depth pushes. */
static int orc_depth(struct out *o, const struct inline_copy *cp, const uint8_t *st, uint32_t depth)
{
	uint8_t e[KORC_ENTRY];

	if (orc_pushed(cp, st, depth, e))
		return -PT_EINVAL;	/* checked by the caller before */
	return out_orc(o, cp->addr + o->at, depth ? e : st);
}

/* mov piece(%rip), %r; incq %gs:counter(%r) at o->at. Returns 0 or -PT_ENOMEM. */
static int emit_counter(struct out *o, const struct incr *x)
{
	/* mov piece(%rip), %r: REX.W (+R), 8b, ModRM 00 r 101 */
	o->code[o->at] = (uint8_t)(0x48 | (x->reg >= 8 ? 4 : 0));
	o->code[o->at + 1] = 0x8b;
	o->code[o->at + 2] = (uint8_t)(((x->reg & 7) << 3) | 5);
	if (out_reloc(o, o->at + 3, R_X86_64_PC32, 0, -4, INLINE_COUNTER_PIECE))
		return -PT_ENOMEM;
	o->at += MOV_LEN;
	/* incq %gs:disp32(%r): 65, REX.W (+B), ff, ModRM 10 000 r [SIB 00 100 100] */
	o->code[o->at++] = 0x65;
	o->code[o->at++] = (uint8_t)(0x48 | (x->reg >= 8 ? 1 : 0));
	o->code[o->at++] = 0xff;
	o->code[o->at++] = (uint8_t)(0x80 | (x->reg & 7));
	if ((x->reg & 7) == REG_RSP)
		o->code[o->at++] = 0x24;
	put32(o->code + o->at, (int64_t)x->counter * 8);
	if (out_reloc(o, o->at, 0, 0, (int64_t)x->counter * 8, INLINE_COUNTER_DISP))
		return -PT_ENOMEM;
	o->at += 4;
	return 0;
}

/*
 * The slot of the activation's depth in %r (x->reg): movl
 * %gs:pt_inline_depth(%rip), %r32, the count without this activation; cmpl
 * $PT_INLINE_FRAMES_SAVED - 1, %r32; ja past the slot's move (skip bytes):
 * a count outside 0..N - 1 (below 0 after a switch) has no slot. Returns
 * 0 or -PT_ENOMEM.
 */
static int emit_slot_index(struct out *o, const struct incr *x, uint8_t skip)
{
	uint8_t r = x->reg & 7;

	o->code[o->at++] = 0x65;
	if (x->reg >= 8)
		o->code[o->at++] = 0x44;	/* REX.R */
	o->code[o->at++] = 0x8b;		/* mov r/m32 to r32, ModRM 00 r 101 */
	o->code[o->at++] = (uint8_t)(0x05 | r << 3);
	if (out_reloc(o, o->at, R_X86_64_PC32, 0, -4, INLINE_DEPTH))
		return -PT_ENOMEM;
	o->at += 4;
	if (x->reg >= 8)
		o->code[o->at++] = 0x41;	/* REX.B */
	o->code[o->at++] = 0x83;		/* cmp imm8, ModRM 11 111 r */
	o->code[o->at++] = (uint8_t)(0xf8 | r);
	o->code[o->at++] = PT_INLINE_FRAMES_SAVED - 1;
	o->code[o->at++] = 0x77;		/* ja rel8 */
	o->code[o->at++] = skip;
	return 0;
}

/*
 * The activations' count at o->at (docs/inline.md, "Frames the copies
 * keep"), the CFA state st with depth pushes before it. Up: the word
 * saved in the activation's slot (push %gs:pt_inline_frame(%rip); pop
 * %gs:pt_inline_frames_saved(,%r,8), with the push's ORC entry), then incl
 * %gs:pt_inline_depth(%rip). Down: decl %gs:pt_inline_depth(%rip); jns 1f;
 * movb $0, %gs:pt_inline_depth_known(%rip); 1: and the word put back from
 * the slot (movq %gs:pt_inline_frames_saved(,%r,8), %r; movq %r,
 * %gs:pt_inline_frame(%rip)). Returns 0, -PT_ENOMEM or -PT_EINVAL.
 */
static int emit_depth(struct out *o, const struct inline_copy *cp, const struct incr *x,
		      const uint8_t *st, uint32_t depth)
{
	uint8_t r = x->reg & 7, rex = x->reg >= 8;
	int err;

	if (x->depth == DEPTH_INC) {
		if (emit_slot_index(o, x, (uint8_t)(SLOT_SAVE_LEN + rex)))
			return -PT_ENOMEM;
		o->code[o->at++] = 0x65;	/* push r/m64: ff /6, ModRM 00 110 101 */
		o->code[o->at++] = 0xff;
		o->code[o->at++] = 0x35;
		if (out_reloc(o, o->at, R_X86_64_PC32, 0, -4, INLINE_FRAME))
			return -PT_ENOMEM;
		o->at += 4;
		err = orc_depth(o, cp, st, depth + 1);
		if (err)
			return err;
		o->code[o->at++] = 0x65;	/* pop r/m64: 8f /0, ModRM 00 000 100, SIB 11 r 101 */
		if (rex)
			o->code[o->at++] = 0x42;	/* REX.X */
		o->code[o->at++] = 0x8f;
		o->code[o->at++] = 0x04;
		o->code[o->at++] = (uint8_t)(0xc5 | r << 3);
		if (out_reloc(o, o->at, R_X86_64_32S, 0, 0, INLINE_FRAMES_SAVED))
			return -PT_ENOMEM;
		o->at += 4;
		err = orc_depth(o, cp, st, depth);
		if (err)
			return err;
	}
	/* 65, ff, ModRM 00 /0 (inc) or /1 (dec) 101 */
	o->code[o->at] = 0x65;
	o->code[o->at + 1] = 0xff;
	o->code[o->at + 2] = x->depth == DEPTH_INC ? 0x05 : 0x0d;
	if (out_reloc(o, o->at + 3, R_X86_64_PC32, 0, -4, INLINE_DEPTH))
		return -PT_ENOMEM;
	o->at += DEPTH_LEN;
	if (x->depth == DEPTH_INC)
		return 0;
	/* below 0: one that was not counted has ended, the count holds no longer */
	o->code[o->at] = 0x79;			/* jns past the movb */
	o->code[o->at + 1] = KNOWN_LEN - 2;
	o->code[o->at + 2] = 0x65;		/* movb $0, %gs:known(%rip): 65, c6, ModRM 00 /0 101 */
	o->code[o->at + 3] = 0xc6;
	o->code[o->at + 4] = 0x05;
	/* the field, then the immediate 0: the end is 5 bytes past the field */
	if (out_reloc(o, o->at + 5, R_X86_64_PC32, 0, -5, INLINE_DEPTH_KNOWN))
		return -PT_ENOMEM;
	o->at += KNOWN_LEN;
	if (emit_slot_index(o, x, SLOT_PUT_LEN))
		return -PT_ENOMEM;
	o->code[o->at++] = 0x65;		/* mov r/m64 to r64: REX.W (+R +X), 8b, ModRM 00 r 100 */
	o->code[o->at++] = (uint8_t)(0x48 | (rex ? 0x06 : 0));
	o->code[o->at++] = 0x8b;
	o->code[o->at++] = (uint8_t)(0x04 | r << 3);
	o->code[o->at++] = (uint8_t)(0xc5 | r << 3);	/* SIB 11 r 101: disp32 + 8 r */
	if (out_reloc(o, o->at, R_X86_64_32S, 0, 0, INLINE_FRAMES_SAVED))
		return -PT_ENOMEM;
	o->at += 4;
	o->code[o->at++] = 0x65;		/* mov r64 to r/m64: REX.W (+R), 89, ModRM 00 r 101 */
	o->code[o->at++] = (uint8_t)(0x48 | (rex ? 0x04 : 0));
	o->code[o->at++] = 0x89;
	o->code[o->at++] = (uint8_t)(0x05 | r << 3);
	if (out_reloc(o, o->at, R_X86_64_PC32, 0, -4, INLINE_FRAME))
		return -PT_ENOMEM;
	o->at += 4;
	return 0;
}

/*
 * One increment at o->at, the CFA state at orig address a (for the pushes'
 * ORC entries): [pushf] [push %r] mov piece(%rip), %r; incq
 * %gs:counter(%r) [pop %r] [popf]. The piece's address and the counter's
 * place in it are the module's to fill (INLINE_COUNTER_PIECE and _DISP).
 * A site's call instead: call pt_inline_hit. The activations' count
 * instead, up or down with its slot (emit_depth), inside the same saves.
 */
static int emit_inc(struct out *o, const struct inline_copy *cp, const struct incr *x, uint64_t a)
{
	const uint8_t *st = orc_at(cp, a);
	uint32_t depth = 0;
	int err = 0;

	if (x->call) {	/* both thunks keep every register and the flags */
		o->code[o->at] = 0xe8;
		if (out_reloc(o, o->at + 1, R_X86_64_PLT32, 0, -4,
			      x->staged ? INLINE_STAGE : INLINE_HIT))
			return -PT_ENOMEM;
		o->at += CALL_LEN;
		return 0;
	}
	if (x->save) {
		o->code[o->at++] = 0x9c;	/* pushf */
		err = orc_depth(o, cp, st, ++depth);
	}
	if (!err && x->push) {
		push_pop(o, x, 0x50);
		err = orc_depth(o, cp, st, ++depth);
	}
	if (err)
		return err;
	if (x->depth)
		err = emit_depth(o, cp, x, st, depth);
	else if (emit_counter(o, x))
		err = -PT_ENOMEM;
	if (err)
		return err;
	if (x->push) {
		push_pop(o, x, 0x58);
		err = orc_depth(o, cp, st, --depth);
	}
	if (!err && x->save) {
		o->code[o->at++] = 0x9d;	/* popf */
		err = orc_depth(o, cp, st, --depth);
	}
	return err;
}

/*
 * A kept call's frame at o->at (docs/inline.md, "Frames the copies keep"):
 * before the call, mov %rsp, %gs:pt_inline_frame(%rip); where it returns,
 * movq $0, %gs:pt_inline_frame(%rip). Neither moves the stack pointer or
 * writes the flags or a register.
 */
static int emit_frame(struct out *o, int store)
{
	uint8_t *p = o->code + o->at;

	p[0] = 0x65;				/* %gs: */
	p[1] = 0x48;				/* REX.W */
	p[2] = store ? 0x89 : 0xc7;		/* mov r64 to r/m64; mov imm32 to r/m64 */
	p[3] = store ? 0x25 : 0x05;		/* ModRM 00 reg 101: RIP + disp32; reg rsp or /0 */
	/* the field (zero) before the end of the instruction: 4 bytes, or 8 with the immediate 0 */
	if (out_reloc(o, o->at + 4, R_X86_64_PC32, 0, store ? -4 : -8, INLINE_FRAME))
		return -PT_ENOMEM;
	o->at += store ? KEEP_LEN : CLEAR_LEN;
	return 0;
}

/*
 * The calls that keep their frame: every call that returns (to the next
 * instruction), but a static-call site, whose live bytes may be a nop or
 * a jmp that never clears what the store before it kept.
 */
static uint32_t keep_calls(struct lay *l)
{
	const struct cfg *c = l->c;
	uint32_t i, n = 0;

	for (i = 0; i + 1 < l->n; i++) {
		const struct cfg_insn *ci = &c->insns[i];

		l->keep[i] = (ci->kind == CFG_I_CALL || ci->kind == CFG_I_CALL_INDIRECT) &&
			     !(ci->flags & CFG_IF_STATIC_CALL) &&
			     c->insns[i + 1].addr == ci->addr + ci->len;
		n += l->keep[i];
	}
	return n;
}

/* Sorts by ip, the later written first among equal ips (insertion sort: nearly sorted). */
static void orc_sort(struct korc_entry *v, uint32_t n)
{
	uint32_t i, j;

	for (i = 1; i < n; i++) {
		struct korc_entry x = v[i];

		for (j = i; j > 0 && v[j - 1].ip >= x.ip; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Where a branch to original address t goes in the new code; UINT32_MAX if nowhere. */
static uint32_t new_target(const struct lay *l, const struct inline_copy *cp, uint64_t t)
{
	uint32_t j = insn_at(l->c, t);

	if (t == cp->addr + cp->len)
		return l->len;
	return j == UINT32_MAX ? UINT32_MAX : l->tgt[j];
}

/* Refuses a sequence that pushes where the CFA is neither sp- nor bp-based. */
static int check_push(struct inline_copy *cp, const struct cfg_input *in, const struct incr *x,
		      uint64_t a)
{
	uint8_t tmp[KORC_ENTRY];

	if (!seq_depth(x) || !orc_pushed(cp, orc_at(cp, a), seq_depth(x), tmp))
		return 0;
	if (x->save)
		return refuse(cp, "inline-flags-live", "%s+0x%" PRIx64 ": the flags are live "
			      "and its CFA is not sp- or bp-based: pushf would mislead the "
			      "unwinder", in->name, a - in->addr);
	return refuse(cp, "inline-no-register", "%s+0x%" PRIx64 ": no register is dead and "
		      "its CFA is not sp- or bp-based: a push would mislead the unwinder",
		      in->name, a - in->addr);
}

/* Checks every sequence's pushes against the ORC before anything is written. */
static int check_saves(const struct lay *l, struct inline_copy *cp, const struct cfg_input *in)
{
	uint32_t i, k;
	int err = 0;

	for (i = 0; !err && i < l->n; i++) {
		uint64_t a = l->c->insns[i].addr;

		for (k = 0; !err && k < l->nft[i]; k++)
			err = check_push(cp, in, &l->ft[i][k], a);
		if (!err && l->nall[i])
			err = check_push(cp, in, &l->all[i], a);
		if (!err && l->dec[i].depth)
			err = check_push(cp, in, &l->dec[i], a);
		if (!err && i == l->inc_at)
			err = check_push(cp, in, &l->inc, a);
	}
	for (i = 0; !err && i < l->nstubs; i++) {
		const struct stub *st = &l->stubs[i];
		uint64_t a = st->target - cp->addr < cp->len ? st->target :
			     l->c->insns[st->insn].addr;

		if (st->has_x)
			err = check_push(cp, in, &st->x, a);
		if (!err && st->dec.depth)
			err = check_push(cp, in, &st->dec, a);
	}
	return err;
}

static int layout(struct lay *l, const struct inline_copy *cp)
{
	const struct cfg *c = l->c;
	uint32_t i, k, at = 0;

	for (i = 0; i < l->n; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		int inside = ci->target && ci->target - cp->addr < cp->len;

		l->ft_start[i] = at;
		if (i && l->keep[i - 1])
			at += CLEAR_LEN;	/* where the kept call returns */
		if (i == l->inc_at)
			at += seq_len(&l->inc);
		for (k = 0; k < l->nft[i]; k++)
			at += seq_len(&l->ft[i][k]);
		l->tgt[i] = at;
		if (l->nall[i])
			at += seq_len(&l->all[i]);
		if (l->dec[i].depth)
			at += seq_len(&l->dec[i]);
		if (l->keep[i])
			at += KEEP_LEN;
		l->pos[i] = at;
		l->nlen[i] = ci->len;
		if (ci->kind == CFG_I_JCC)
			l->nlen[i] = inside || (ci->flags & CFG_IF_LEAVES) ? JCC_LEN : ci->len;
		else if (ci->kind == CFG_I_JMP || ci->kind == CFG_I_KEY)
			l->nlen[i] = JMP_LEN;	/* a key site as nop5 or jmp rel32: the kernel decodes either */
		at += l->nlen[i];
	}
	for (i = 0; i < l->nstubs; i++) {
		struct stub *st = &l->stubs[i];

		st->pos = at;
		at += stub_len(st) + JMP_LEN;
	}
	l->len = at;
	return 0;
}

static void lay_free(struct lay *l)
{
	free(l->ft);
	free(l->all);
	free(l->nft);
	free(l->nall);
	free(l->ft_start);
	free(l->tgt);
	free(l->pos);
	free(l->nlen);
	free(l->flags_live);
	free(l->regs_live);
	free(l->keep);
	free(l->dec);
	free(l->stubs);
}

/* The stub of the Jcc (or fixup) at instruction i, or NULL. */
static const struct stub *stub_of(const struct lay *l, uint32_t i, int fixup)
{
	uint32_t k;

	for (k = 0; k < l->nstubs; k++)
		if (l->stubs[k].insn == i && l->stubs[k].fixup == fixup)
			return &l->stubs[k];
	return NULL;
}

/* The copy's relocation on instruction i's field, if any. */
static const struct inline_reloc *reloc_in(const struct inline_copy *cp, uint64_t a, uint32_t len)
{
	uint32_t k;

	for (k = 0; k < cp->nrelocs; k++)
		if (cp->relocs[k].off >= a - cp->addr && cp->relocs[k].off < a - cp->addr + len)
			return &cp->relocs[k];
	return NULL;
}

/* 1 when the 4-byte field at off (from the function's start) is a relocation's. */
static int field_relocated(const struct inline_copy *cp, uint32_t off)
{
	uint32_t k;

	for (k = 0; k < cp->nrelocs; k++)
		if (cp->relocs[k].off == off)
			return 1;
	return 0;
}

/* The copy's static-key entry for the site at original address a, or NULL. */
static struct inline_key *key_of(const struct inline_copy *cp, uint64_t a)
{
	uint32_t k;

	for (k = 0; k < cp->nkeys; k++)
		if (cp->keys[k].code == a)
			return &cp->keys[k];
	return NULL;
}

/* Where the key site at instruction i jumps in the new code: its stub, or its target. */
static uint32_t key_target(const struct lay *l, const struct inline_copy *cp, uint32_t i)
{
	const struct stub *st = stub_of(l, i, 0);

	return st ? st->pos : new_target(l, cp, l->c->insns[i].target);
}

/* Instruction i into the new code: re-encoded branches, remapped fields and relocations. */
static int emit_insn(struct out *o, const struct lay *l, const struct inline_copy *cp,
		     const ZydisDecoder *dec, uint32_t i)
{
	const struct cfg_insn *ci = &l->c->insns[i];
	uint32_t off = (uint32_t)(ci->addr - cp->addr), nt;
	const struct inline_reloc *r = reloc_in(cp, ci->addr, ci->len);
	const struct stub *st;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t end = ci->addr + ci->len, t;
	int k;

	if (ci->kind == CFG_I_KEY) {
		/* in its initial state, 5 bytes, to its stub or target (remap_tables: its entry) */
		const struct inline_key *ky = key_of(cp, ci->addr);

		nt = key_target(l, cp, i);
		if (!ky || nt == UINT32_MAX)
			return -PT_EINVAL;
		inline_key_bytes(o->code + o->at, JMP_LEN, ky->init_jump, o->at, nt);
		o->at += JMP_LEN;
		return 0;
	}
	if (ci->kind == CFG_I_JCC || ci->kind == CFG_I_JMP) {
		int jcc = ci->kind == CFG_I_JCC;

		st = jcc ? stub_of(l, i, 0) : NULL;
		if (l->nlen[i] == ci->len && !st && r) {
			/* a Jcc leaving the function, not counted: as it is */
			memcpy(o->code + o->at, cp->code + off, ci->len);
			o->at += ci->len;
			return out_reloc(o, l->pos[i] + (r->off - off), r->type, r->target,
					 r->addend, r->copy);
		}
		if (jcc) {
			o->code[o->at] = 0x0f;
			o->code[o->at + 1] = (uint8_t)(0x80 | ci->cc);
		} else {
			o->code[o->at + 0] = 0xe9;
		}
		o->at += jcc ? 2 : 1;
		if (st)
			nt = st->pos;
		else if (r) {	/* leaves: the original relocation, on the rel32 field */
			o->at += 4;
			return out_reloc(o, o->at - 4, r->type, r->target, -4, r->copy);
		} else
			nt = new_target(l, cp, ci->target);
		if (nt == UINT32_MAX)
			return -PT_EINVAL;
		put32(o->code + o->at, (int64_t)nt - (int64_t)(o->at + 4));
		o->at += 4;
		return 0;
	}
	memcpy(o->code + o->at, cp->code + off, ci->len);
	for (; r && r < cp->relocs + cp->nrelocs && r->off < off + ci->len; r++)
		if (out_reloc(o, l->pos[i] + (r->off - off), r->type, r->target, r->addend,
			      r->copy))
			return -PT_ENOMEM;
	/* fields that point inside the function: to their instruction's new place */
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, cp->code + off, ci->len, &zi, ops)))
		return -PT_EINVAL;
	for (k = 0; k < 2; k++) {
		if (!zi.raw.imm[k].size || !zi.raw.imm[k].is_relative ||
		    field_relocated(cp, off + zi.raw.imm[k].offset))
			continue;
		t = end + (uint64_t)zi.raw.imm[k].value.s;
		if (t - cp->addr >= cp->len)
			continue;
		if (zi.raw.imm[k].size != 32 || (t != cp->addr || ci->kind != CFG_I_CALL))
			return -PT_EINVAL;	/* refused by the caller's check */
		put32(o->code + o->at + zi.raw.imm[k].offset,
		      -(int64_t)(l->pos[i] + ci->len));	/* a call to the function's start */
	}
	for (k = 0; k < zi.operand_count_visible; k++) {
		if (ops[k].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[k].mem.base != ZYDIS_REGISTER_RIP ||
		    zi.raw.disp.size != 32)
			continue;
		if (field_relocated(cp, off + zi.raw.disp.offset))
			break;
		t = end + (uint64_t)zi.raw.disp.value;
		if (t - cp->addr >= cp->len)
			break;
		nt = new_target(l, cp, t);
		if (nt == UINT32_MAX)
			return -PT_EINVAL;
		put32(o->code + o->at + zi.raw.disp.offset,
		      (int64_t)nt - (int64_t)(l->pos[i] + ci->len));
		break;
	}
	o->at += ci->len;
	return 0;
}

/* What emit_insn cannot move: refused before anything is written. */
static int check_movable(const struct lay *l, struct inline_copy *cp, const struct cfg_input *in,
			 const ZydisDecoder *dec)
{
	uint32_t i;
	int k;

	for (i = 0; i < l->n; i++) {
		const struct cfg_insn *ci = &l->c->insns[i];
		ZydisDecodedInstruction zi;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		uint64_t end = ci->addr + ci->len, t;

		if (ci->kind == CFG_I_JCC || ci->kind == CFG_I_JMP || ci->kind == CFG_I_KEY)
			continue;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, cp->code + (ci->addr - cp->addr),
							 ci->len, &zi, ops)))
			return refuse(cp, "inline-decode", "%s+0x%" PRIx64 ": not decoded",
				      in->name, ci->addr - cp->addr);
		for (k = 0; k < 2; k++) {
			if (!zi.raw.imm[k].size || !zi.raw.imm[k].is_relative ||
			    field_relocated(cp, (uint32_t)(ci->addr - cp->addr) + zi.raw.imm[k].offset))
				continue;
			t = end + (uint64_t)zi.raw.imm[k].value.s;
			if (t - cp->addr < cp->len &&
			    (zi.raw.imm[k].size != 32 || t != cp->addr || ci->kind != CFG_I_CALL))
				return refuse(cp, "inline-branch", "%s+0x%" PRIx64 ": %s inside the "
					      "function cannot be re-encoded", in->name,
					      ci->addr - cp->addr,
					      ZydisMnemonicGetString(zi.mnemonic));
		}
		for (k = 0; k < zi.operand_count_visible; k++) {
			if (ops[k].type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    ops[k].mem.base != ZYDIS_REGISTER_RIP || zi.raw.disp.size != 32)
				continue;
			if (field_relocated(cp, (uint32_t)(ci->addr - cp->addr) + zi.raw.disp.offset))
				break;
			t = end + (uint64_t)zi.raw.disp.value;
			if (t - cp->addr < cp->len && new_target(l, cp, t) == UINT32_MAX)
				return refuse(cp, "inline-rip-inside", "%s+0x%" PRIx64 ": a RIP-"
					      "relative operand points inside an instruction",
					      in->name, ci->addr - cp->addr);
			break;
		}
	}
	return 0;
}

/* The exception-table, bug and ORC entries in the new layout (addresses as cp->addr + offset). */
static int remap_tables(const struct lay *l, struct inline_copy *cp, struct out *o)
{
	uint32_t k, n = 0, j;

	for (k = 0; k < cp->nfixups; k++) {
		struct cfg_fixup *f = &cp->fixups[k];
		uint32_t i = insn_at(l->c, f->insn), nt;
		const struct stub *st;

		if (i == UINT32_MAX)
			continue;	/* unreachable code: not in the copy any more */
		st = stub_of(l, i, 1);
		nt = st ? st->pos : new_target(l, cp, f->fixup);
		if (nt == UINT32_MAX)
			return -PT_EINVAL;
		f->insn = cp->addr + l->pos[i];
		f->fixup = cp->addr + nt;
		cp->fixups[n++] = *f;
	}
	cp->nfixups = n;
	for (k = n = 0; k < cp->nbugs; k++) {
		uint32_t i = insn_at(l->c, cp->bugs[k].addr);

		if (i == UINT32_MAX)
			continue;
		cp->bugs[k].addr = cp->addr + l->pos[i];
		cp->bugs[n++] = cp->bugs[k];
	}
	cp->nbugs = n;
	/* ORC: each entry from the start of what now precedes its instruction */
	for (k = 0; k < cp->norc; k++) {
		uint64_t ip = cp->orc[k].ip;

		if (ip - cp->addr >= cp->len)
			continue;
		j = insn_from(l->c, ip);
		if (out_orc(o, cp->addr + (j < l->n ? l->ft_start[j] : l->len), cp->orc[k].orc))
			return -PT_ENOMEM;
	}
	return 0;
}

/* The static-key and static-call entries in the new layout, once the code is emitted. */
static int remap_sites(const struct lay *l, struct inline_copy *cp)
{
	uint32_t k;

	for (k = 0; k < cp->nkeys; k++) {
		struct inline_key *ky = &cp->keys[k];
		uint32_t i = insn_at(l->c, ky->code), nt;

		if (i == UINT32_MAX || (nt = key_target(l, cp, i)) == UINT32_MAX)
			return -PT_EINVAL;	/* keys() took only the CFG's key sites */
		ky->code = cp->addr + l->pos[i];
		ky->target = cp->addr + nt;
		ky->len = JMP_LEN;
	}
	for (k = 0; k < cp->ncalls; k++) {
		uint32_t i = insn_at(l->c, cp->calls[k].addr);

		if (i == UINT32_MAX)
			return -PT_EINVAL;
		cp->calls[k].addr = cp->addr + l->pos[i];
	}
	return 0;
}

/* The function's first instruction after its endbr (or IBT seal) and __fentry__ site. */
static uint32_t first_body_insn(const struct cfg_input *in, const struct cfg *c)
{
	uint32_t i;

	for (i = 0; i < c->ninsns && (c->insns[i].kind == CFG_I_FENTRY ||
				      (c->insns[i].len == 4 && c->insns[i].addr == c->addr &&
				       c->insns[i].kind == CFG_I_PLAIN &&
				       inline_is_endbr(in->code, in->len))); i++)
		;
	return i;
}

/*
 * A call to pt_inline_hit or pt_inline_stage for each site: before its instruction (one at
 * most), or on the one edge of its Jcc its actions apply on: a stub on the
 * taken side, before the next instruction on the fall-through.
 */
static int place_sites(struct lay *l, struct inline_copy *cp, const struct cfg_input *in,
		       const struct inline_site *sites, uint32_t nsites)
{
	uint32_t k, i, body = first_body_insn(in, l->c);

	for (k = 0; k < nsites; k++) {
		struct incr x = { .call = 1, .staged = !!sites[k].staged, .site = sites[k].addr };
		const struct cfg_insn *ci;

		i = insn_at(l->c, sites[k].addr);
		if (i == UINT32_MAX)
			return refuse(cp, "inline-site", "%s+0x%" PRIx64 ": a site not at an "
				      "instruction of the CFG", in->name, sites[k].addr - in->addr);
		ci = &l->c->insns[i];
		if (sites[k].edge != INLINE_AT &&
		    (ci->kind != CFG_I_JCC || (ci->flags & CFG_IF_STATIC_CALL) || i + 1 >= l->n ||
		     ci->block == l->c->insns[i + 1].block))
			return refuse(cp, "inline-site", "%s+0x%" PRIx64 ": a site on an edge "
				      "of what is not a Jcc", in->name, sites[k].addr - in->addr);
		if (sites[k].edge == INLINE_TAKEN) {
			l->stubs[l->nstubs++] = (struct stub){ .insn = i, .target = ci->target,
							       .has_x = 1, .x = x };
			continue;
		}
		if (sites[k].edge == INLINE_FALL) {
			if (l->nft[i + 1] == 2)
				return refuse(cp, "inline-site", "%s+0x%" PRIx64 ": no place on "
					      "its fall-through", in->name, sites[k].addr - in->addr);
			l->ft[i + 1][l->nft[i + 1]++] = x;
			continue;
		}
		if (i < body)	/* at the endbr or __fentry__ site: after them, as it runs */
			i = body;
		if (i == l->n || l->nall[i])
			return refuse(cp, "inline-site", "%s+0x%" PRIx64 ": two sites at one "
				      "instruction", in->name, sites[k].addr - in->addr);
		l->all[i] = x;
		l->nall[i] = 1;
	}
	return 0;
}

/*
 * The count's sequence (DEPTH_INC or DEPTH_DEC) before instruction insn
 * (l->n: on the way out): a register as an increment's, the flags saved
 * where any it writes is live (the cmpl writes the carry too).
 */
static struct incr depth_at(const struct lay *l, uint8_t depth, uint32_t insn)
{
	struct incr x = incr_at(l, 0, insn);

	x.depth = depth;
	x.save = insn < l->n && (l->flags_live[insn] & FLAGS_ALL);
	return x;
}

/*
 * The activations' count (docs/inline.md, "Frames the copies keep"): up
 * after the __fentry__ site, on the entry's fall-through (a branch back to
 * the first instruction lands after it); down before every way out, a ret
 * or a tail call, and on the taken side of a Jcc that leaves the function
 * (its stub, after a site's call there). The flags are saved where live.
 * Returns 0 or refuses ("inline-edge": no place).
 */
static int place_depth(struct lay *l, struct inline_copy *cp, const struct cfg_input *in)
{
	const struct cfg *c = l->c;
	uint32_t i, body = first_body_insn(in, c);

	if (!body || body == l->n)
		return refuse(cp, "inline-edge", "%s: no place for its activation count", in->name);
	l->inc = depth_at(l, DEPTH_INC, body);
	l->inc_at = body;
	for (i = 0; i < l->n; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		const struct stub *found;
		struct stub *st;

		if (ci->kind == CFG_I_RET || ci->kind == CFG_I_TAIL_CALL) {
			l->dec[i] = depth_at(l, DEPTH_DEC, i);
			continue;
		}
		if (ci->kind != CFG_I_JCC || !(ci->flags & CFG_IF_LEAVES))
			continue;
		found = stub_of(l, i, 0);	/* a site's on the taken side, or a stub of its own */
		if (found) {
			st = &l->stubs[found - l->stubs];
		} else {
			st = &l->stubs[l->nstubs++];
			*st = (struct stub){ .insn = i, .target = ci->target };
		}
		/* on the way out: every register live, the flags dead (a function begins there) */
		st->dec = depth_at(l, DEPTH_DEC, l->n);
	}
	return 0;
}

/* One entry of cp->addrs. */
static void add_addr(struct inline_copy *cp, uint32_t copy, uint64_t orig, int site)
{
	if (!site && cp->naddrs && cp->addrs[cp->naddrs - 1].copy == copy &&
	    !cp->addrs[cp->naddrs - 1].site)
		return;
	cp->addrs[cp->naddrs++] = (struct inline_addr){ copy, site, orig };
}

/*
 * What the module needs to translate copy addresses (docs/inline.md,
 * "Sites as calls"): for each instruction every place in the copy that
 * stands for it (before its sequences, at a branch's landing, at itself),
 * and where each site's call returns.
 */
static int addr_cmp(const void *a, const void *b)
{
	const struct inline_addr *x = a, *y = b;

	if (x->copy != y->copy)
		return x->copy < y->copy ? -1 : 1;
	return (int)x->site - (int)y->site;
}

static int fill_addrs(const struct lay *l, struct inline_copy *cp)
{
	uint32_t i, k, at;

	free(cp->addrs);
	cp->naddrs = 0;
	cp->addrs = calloc(7 * (size_t)l->n + l->nstubs + 2, sizeof(*cp->addrs));
	if (!cp->addrs)
		return -PT_ENOMEM;
	for (i = 0; i < l->n; i++) {
		uint64_t a = l->c->insns[i].addr;

		add_addr(cp, l->ft_start[i], a, 0);	/* also where a kept call returns */
		at = l->ft_start[i] + (i && l->keep[i - 1] ? CLEAR_LEN : 0) +
		     (i == l->inc_at ? seq_len(&l->inc) : 0);
		for (k = 0; k < l->nft[i]; k++) {
			at += seq_len(&l->ft[i][k]);
			if (l->ft[i][k].call)	/* a site on the fall-through into i */
				add_addr(cp, at, l->ft[i][k].site, 1);
		}
		add_addr(cp, l->tgt[i], a, 0);
		if (l->keep[i])	/* the kept call's store */
			add_addr(cp, l->pos[i] - KEEP_LEN, a, 0);
		add_addr(cp, l->pos[i], a, 0);
		if (l->nall[i] && l->all[i].call)	/* before a dec or a kept call's store */
			add_addr(cp, l->tgt[i] + seq_len(&l->all[i]), l->all[i].site, 1);
	}
	for (k = 0; k < l->nstubs; k++)	/* a site on a Jcc's taken side */
		if (l->stubs[k].has_x && l->stubs[k].x.call)
			add_addr(cp, l->stubs[k].pos + CALL_LEN, l->stubs[k].x.site, 1);
	add_addr(cp, l->len, cp->addr + cp->orig_len, 0);	/* after a last call */
	qsort(cp->addrs, cp->naddrs, sizeof(*cp->addrs), addr_cmp);
	return 0;
}

static int insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
		  const uint32_t *edge_counter, uint32_t entry_counter, uint32_t ncounters,
		  const struct inline_site *sites, uint32_t nsites, int keep_frames)
{
	struct lay l = { .c = c, .n = c->ninsns };
	struct out o = { 0 };
	ZydisDecoder dec;
	uint32_t i, e, k, nseq = 0, nsave = 0, npush = 0, nkept = 0, written;
	int err = -PT_ENOMEM;

	if (!cp->code || cp->refusal || c->cold_addr)
		return -PT_EINVAL;
	l.ft = calloc(l.n + 1, sizeof(*l.ft));
	l.all = calloc(l.n + 1, sizeof(*l.all));
	l.nft = calloc(l.n + 1, sizeof(*l.nft));
	l.nall = calloc(l.n + 1, sizeof(*l.nall));
	l.ft_start = calloc(l.n + 1, sizeof(*l.ft_start));
	l.tgt = calloc(l.n + 1, sizeof(*l.tgt));
	l.pos = calloc(l.n + 1, sizeof(*l.pos));
	l.nlen = calloc(l.n + 1, sizeof(*l.nlen));
	l.flags_live = calloc(l.n + 1, sizeof(*l.flags_live));
	l.regs_live = calloc(l.n + 1, sizeof(*l.regs_live));
	l.keep = calloc(l.n + 1, sizeof(*l.keep));
	l.dec = calloc(l.n + 1, sizeof(*l.dec));
	l.inc_at = UINT32_MAX;
	l.stubs = calloc(c->nedges + 1, sizeof(*l.stubs));
	if (!l.ft || !l.all || !l.nft || !l.nall || !l.ft_start || !l.tgt || !l.pos || !l.nlen ||
	    !l.flags_live || !l.regs_live || !l.keep || !l.dec || !l.stubs)
		goto out;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	err = liveness(in, c, l.flags_live, l.regs_live, &written);
	if (err)
		goto out;
	/*
	 * Unsaved, a sequence uses a callee-saved register (dead: its caller's
	 * value is on the stack) or a caller-saved one the function writes
	 * anyway: a caller in its unit may keep a value in any other across the
	 * call (gcc's -fipa-ra), and the copy must clobber no more than it.
	 */
	l.scratch_ok = GPRS_CALLEE_SAVED | (written & GPRS_CALLER_SAVED);
	for (e = 0; edge_counter && e < c->nedges; e++) {
		if (edge_counter[e] == INLINE_NONE)
			continue;
		err = -PT_EINVAL;
		if (edge_counter[e] >= ncounters)
			goto out;
		err = place(&l, cp, in, e, edge_counter[e]);
		if (err)
			goto out;
	}
	err = place_sites(&l, cp, in, sites, nsites);
	if (err)
		goto out;
	if (entry_counter != INLINE_NONE) {
		/* after the endbr and __fentry__ site, on the entry's fall-through */
		i = first_body_insn(in, c);
		err = -PT_EINVAL;
		if (i == l.n || entry_counter >= ncounters)
			goto out;
		if (l.nft[i] == 2 || !i) {
			err = refuse(cp, "inline-edge", "%s: no place for its activation counter",
				     in->name);
			goto out;
		}
		l.ft[i][l.nft[i]++] = incr_at(&l, entry_counter, i);
	}
	if (keep_frames) {
		nkept = keep_calls(&l);
		err = place_depth(&l, cp, in);
		if (err)
			goto out;
	}
	err = check_saves(&l, cp, in);
	if (!err)
		err = check_movable(&l, cp, in, &dec);
	if (err)
		goto out;
	layout(&l, cp);
	err = -PT_ENOMEM;
	o.code = calloc(l.len + 1, 1);
	if (!o.code)
		goto out;
	err = remap_tables(&l, cp, &o);
	for (i = 0; !err && i < l.n; i++) {
		if (i && l.keep[i - 1])
			err = emit_frame(&o, 0);
		if (!err && i == l.inc_at)
			err = emit_inc(&o, cp, &l.inc, c->insns[i].addr);
		for (k = 0; !err && k < l.nft[i]; k++) {
			err = emit_inc(&o, cp, &l.ft[i][k], c->insns[i].addr);
			nseq += !l.ft[i][k].call;
			nsave += l.ft[i][k].save;
			npush += l.ft[i][k].push;
		}
		if (!err && l.nall[i]) {
			err = emit_inc(&o, cp, &l.all[i], c->insns[i].addr);
			nseq += !l.all[i].call;
			nsave += l.all[i].save;
			npush += l.all[i].push;
		}
		if (!err && l.dec[i].depth)
			err = emit_inc(&o, cp, &l.dec[i], c->insns[i].addr);
		if (!err && l.keep[i])
			err = emit_frame(&o, 1);
		if (!err)
			err = emit_insn(&o, &l, cp, &dec, i);
		if (!err && o.at != l.pos[i] + l.nlen[i])
			err = -PT_EINVAL;
	}
	for (k = 0; !err && k < l.nstubs; k++) {
		const struct stub *st = &l.stubs[k];
		uint32_t t = st->target - cp->addr < cp->len ? new_target(&l, cp, st->target) :
			     UINT32_MAX;
		const uint8_t *state = orc_at(cp, st->target - cp->addr < cp->len ? st->target :
					      c->insns[st->insn].addr);
		const struct inline_reloc *r;

		if (state)
			err = out_orc(&o, cp->addr + o.at, state);
		if (!err && st->has_x) {
			err = emit_inc(&o, cp, &st->x,
				       st->target - cp->addr < cp->len ? st->target :
				       c->insns[st->insn].addr);
			nseq += !st->x.call;
			nsave += st->x.save;
			npush += st->x.push;
		}
		if (!err && st->dec.depth)
			err = emit_inc(&o, cp, &st->dec, c->insns[st->insn].addr);
		if (err)
			break;
		o.code[o.at++] = 0xe9;
		if (t != UINT32_MAX) {
			put32(o.code + o.at, (int64_t)t - (int64_t)(o.at + 4));
		} else {
			/* leaves: the Jcc's relocation moves to the stub's jmp */
			r = reloc_in(cp, c->insns[st->insn].addr, c->insns[st->insn].len);
			err = r ? out_reloc(&o, o.at, r->type, r->target, -4, r->copy) : -PT_EINVAL;
		}
		o.at += 4;
	}
	if (!err && o.at != l.len)
		err = -PT_EINVAL;
	if (!err)
		err = remap_sites(&l, cp);
	if (err)
		goto out;
	orc_sort(o.orc, o.norc);
	/* one entry per ip: the last one written (sorted first among its equals) */
	for (i = k = 0; i < o.norc; i++)
		if (!k || o.orc[k - 1].ip != o.orc[i].ip)
			o.orc[k++] = o.orc[i];
	o.norc = k;
	err = fill_addrs(&l, cp);
	if (err)
		goto out;
	free(cp->code);
	free(cp->relocs);
	free(cp->orc);
	cp->code = o.code;
	cp->len = l.len;
	cp->relocs = o.relocs;
	cp->nrelocs = o.nrelocs;
	cp->orc = o.orc;
	cp->norc = o.norc;
	cp->ncounters = ncounters;
	cp->nsequences = nseq;
	cp->nflags_saved = nsave;
	cp->nregs_saved = npush;
	cp->nkept_calls = nkept;
	o.code = NULL;
	o.relocs = NULL;
	o.orc = NULL;
	err = 0;
out:
	free(o.code);
	free(o.relocs);
	free(o.orc);
	lay_free(&l);
	return err;
}

int inline_counters_insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
			   const uint32_t *edge_counter, uint32_t entry_counter, uint32_t ncounters)
{
	return insert(in, c, cp, edge_counter, entry_counter, ncounters, NULL, 0, 0);
}

int inline_sites_insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
			const struct inline_site *sites, uint32_t nsites)
{
	return insert(in, c, cp, NULL, INLINE_NONE, 0, sites, nsites, 1);
}
