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
 * incq writes OF, SF, ZF, AF and PF: where one of them is live (liveness
 * on the CFG) the increment is `pushf; incq; popf`, with ORC entries that
 * say the CFA moved by 8 (an sp-based CFA only; otherwise refused).
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

#include "inline_refuse.h"

#define INC_LEN 8		/* 65 48 ff 05 disp32: incq %gs:disp32(%rip) */
#define SAVE_LEN 1		/* pushf, popf */
#define JMP_LEN 5
#define JCC_LEN 6
#define FLAGS_INC (ZYDIS_CPUFLAG_OF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_ZF | \
		   ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_PF)
#define FLAGS_ALL (FLAGS_INC | ZYDIS_CPUFLAG_CF)
#define ORC_REG_SP 5
#define ORC_REG_BP 4

#define refuse inline_refuse

/* One increment: where it runs and whether it saves the flags. */
struct incr {
	uint32_t counter;
	uint8_t save;
};

/* A stub: the taken side of the Jcc insn, or the landing pad of its fixup. */
struct stub {
	uint32_t insn;
	uint32_t counter;
	uint64_t target;	/* original address: inside, or outside the function */
	uint8_t fixup;
	uint8_t save;
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

/* Flags read and written by each instruction, then liveness to a fixed point. */
static int liveness(const struct cfg_input *in, const struct cfg *c, uint32_t *live)
{
	uint32_t *use = calloc(c->ninsns + 1, sizeof(*use)), *def = calloc(c->ninsns + 1, sizeof(*def));
	ZydisDecoder dec;
	uint32_t i, k;
	int changed = 1;

	if (!use || !def) {
		free(use);
		free(def);
		return -PT_ENOMEM;
	}
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (i = 0; i < c->ninsns; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		ZydisDecodedInstruction zi;

		switch (ci->kind) {
		case CFG_I_CALL:
		case CFG_I_CALL_INDIRECT:
		case CFG_I_FENTRY:
			def[i] = FLAGS_ALL;	/* a callee clobbers them (the ABI) */
			continue;
		case CFG_I_CALL_NORETURN:
		case CFG_I_RET:
		case CFG_I_TAIL_CALL:
		case CFG_I_BUG:
		case CFG_I_WARN:
			continue;
		}
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL,
								in->code + (ci->addr - in->addr),
								in->len - (ci->addr - in->addr), &zi))) {
			use[i] = FLAGS_ALL;	/* cfg_build decoded it; be safe anyway */
			continue;
		}
		if (zi.cpu_flags) {
			use[i] = zi.cpu_flags->tested & FLAGS_ALL;
			/* only flags surely written kill: modified, set or cleared */
			def[i] = (zi.cpu_flags->modified | zi.cpu_flags->set_0 |
				  zi.cpu_flags->set_1 | zi.cpu_flags->undefined) & FLAGS_ALL &
				 ~use[i];
		}
	}
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
				}
			}
			v = (out & ~def[k]) | use[k];
			if (v != live[k]) {
				live[k] = v;
				changed = 1;
			}
		}
	}
	free(use);
	free(def);
	return 0;
}

static int save_needed(const struct lay *l, uint32_t insn)
{
	return insn < l->n && (l->flags_live[insn] & FLAGS_INC);
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
		l->ft[d][l->nft[d]++] = (struct incr){ counter, (uint8_t)save_needed(l, d) };
		return 0;
	}
	if (((ed->kind == CFG_E_TAKEN || ed->kind == CFG_E_EXIT) && li->kind == CFG_I_JCC) ||
	    (ed->kind == CFG_E_KEY_JUMP && li->kind == CFG_I_KEY)) {
		struct stub *st = &l->stubs[l->nstubs++];

		if (li->flags & CFG_IF_STATIC_CALL)
			return refuse(cp, "inline-static-call", "%s+0x%" PRIx64 ": a counted "
				      "static-call Jcc: an update would bypass its stub", in->name,
				      li->addr - in->addr);

		*st = (struct stub){ .insn = last, .counter = counter, .target = li->target };
		st->save = ed->dst < c->nblocks && save_needed(l, c->blocks[ed->dst].first_insn);
		return 0;
	}
	if (ed->kind == CFG_E_FIXUP) {
		struct stub *st = &l->stubs[l->nstubs++];

		*st = (struct stub){ .insn = last, .counter = counter, .target = li->target,
				     .fixup = 1 };
		st->save = ed->dst < c->nblocks && save_needed(l, c->blocks[ed->dst].first_insn);
		return 0;
	}
	if (s->nsucc == 1 && !l->nall[last] && li->kind != CFG_I_JCC) {
		/* the only way out: every run of its last instruction takes it */
		l->all[last] = (struct incr){ counter, (uint8_t)save_needed(l, last) };
		l->nall[last] = 1;
		return 0;
	}
	return refuse(cp, "inline-edge", "%s: edge %u (%s) has no place for its counter",
		      in->name, e, cfg_edge_kind_name(ed->kind));
}

static uint32_t seq_len(const struct incr *x)
{
	return INC_LEN + (x->save ? 2 * SAVE_LEN : 0);
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

/* An sp-based CFA moves by 8 under pushf; a bp-based one does not. 0, or -1 refused. */
static int orc_pushed(const uint8_t *o, uint8_t *out)
{
	int16_t sp;

	if (!o || (o[5] & 3) != 0)	/* no entry, or not ORC_TYPE_CALL */
		return -1;
	memcpy(out, o, KORC_ENTRY);
	if ((o[4] & 0xf) == ORC_REG_BP)
		return 0;
	if ((o[4] & 0xf) != ORC_REG_SP)
		return -1;
	memcpy(&sp, o, 2);
	sp = (int16_t)(sp + 8);
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

/* One increment at o->at, the CFA state at orig address a (for pushf's ORC entries). */
static int emit_inc(struct out *o, const struct inline_copy *cp, const struct incr *x, uint64_t a)
{
	static const uint8_t inc[4] = { 0x65, 0x48, 0xff, 0x05 };
	const uint8_t *st = orc_at(cp, a);
	uint8_t pushed[KORC_ENTRY];

	if (x->save) {
		o->code[o->at++] = 0x9c;	/* pushf */
		if (orc_pushed(st, pushed) || out_orc(o, cp->addr + o->at, pushed))
			return -PT_ENOMEM;	/* checked by the caller before */
	}
	memcpy(o->code + o->at, inc, 4);
	if (out_reloc(o, o->at + 4, R_X86_64_PC32, 0, (int64_t)x->counter * 8 - 4, INLINE_PERCPU))
		return -PT_ENOMEM;
	o->at += INC_LEN;
	if (x->save) {
		o->code[o->at++] = 0x9d;	/* popf */
		if (out_orc(o, cp->addr + o->at, st))
			return -PT_ENOMEM;
	}
	return 0;
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

/* Checks every site's flags and ORC before anything is written. */
static int check_saves(const struct lay *l, struct inline_copy *cp, const struct cfg_input *in)
{
	uint8_t tmp[KORC_ENTRY];
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		if ((l->nft[i] && (l->ft[i][0].save || l->ft[i][l->nft[i] - 1].save)) ||
		    (l->nall[i] && l->all[i].save))
			if (orc_pushed(orc_at(cp, l->c->insns[i].addr), tmp))
				return refuse(cp, "inline-flags-live", "%s+0x%" PRIx64 ": the flags "
					      "are live and its CFA is not sp- or bp-based: pushf "
					      "would mislead the unwinder", in->name,
					      l->c->insns[i].addr - in->addr);
	}
	for (i = 0; i < l->nstubs; i++)
		if (l->stubs[i].save &&
		    orc_pushed(orc_at(cp, l->stubs[i].target), tmp))
			return refuse(cp, "inline-flags-live", "%s: a stub to 0x%" PRIx64 ": the "
				      "flags are live and its CFA is not sp- or bp-based",
				      in->name, l->stubs[i].target);
	return 0;
}

static int layout(struct lay *l, const struct inline_copy *cp)
{
	const struct cfg *c = l->c;
	uint32_t i, k, at = 0;

	for (i = 0; i < l->n; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		int inside = ci->target && ci->target - cp->addr < cp->len;

		l->ft_start[i] = at;
		for (k = 0; k < l->nft[i]; k++)
			at += seq_len(&l->ft[i][k]);
		l->tgt[i] = at;
		if (l->nall[i])
			at += seq_len(&l->all[i]);
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
		at += seq_len(&(struct incr){ st->counter, st->save }) + JMP_LEN;
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

int inline_counters_insert(const struct cfg_input *in, const struct cfg *c, struct inline_copy *cp,
			   const uint32_t *edge_counter, uint32_t entry_counter, uint32_t ncounters)
{
	struct lay l = { .c = c, .n = c->ninsns };
	struct out o = { 0 };
	ZydisDecoder dec;
	uint32_t i, e, k, nseq = 0, nsave = 0;
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
	l.stubs = calloc(c->nedges + 1, sizeof(*l.stubs));
	if (!l.ft || !l.all || !l.nft || !l.nall || !l.ft_start || !l.tgt || !l.pos || !l.nlen ||
	    !l.flags_live || !l.stubs)
		goto out;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	err = liveness(in, c, l.flags_live);
	if (err)
		goto out;
	for (e = 0; e < c->nedges; e++) {
		if (edge_counter[e] == INLINE_NONE)
			continue;
		err = -PT_EINVAL;
		if (edge_counter[e] >= ncounters)
			goto out;
		err = place(&l, cp, in, e, edge_counter[e]);
		if (err)
			goto out;
	}
	if (entry_counter != INLINE_NONE) {
		/* after the endbr and __fentry__ site, on the entry's fall-through */
		for (i = 0; i < l.n && (c->insns[i].kind == CFG_I_FENTRY ||
				       (c->insns[i].len == 4 && c->insns[i].addr == c->addr &&
					c->insns[i].kind == CFG_I_PLAIN &&
					(!memcmp(in->code, "\xf3\x0f\x1e\xfa", 4) ||
					 !memcmp(in->code, "\x0f\x1f\x40\xd6", 4)))); i++)
			;
		err = -PT_EINVAL;
		if (i == l.n || entry_counter >= ncounters)
			goto out;
		if (l.nft[i] == 2 || !i) {
			err = refuse(cp, "inline-edge", "%s: no place for its activation counter",
				     in->name);
			goto out;
		}
		l.ft[i][l.nft[i]++] = (struct incr){ entry_counter,
						     (uint8_t)save_needed(&l, i) };
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
		for (k = 0; !err && k < l.nft[i]; k++) {
			err = emit_inc(&o, cp, &l.ft[i][k], c->insns[i].addr);
			nseq++;
			nsave += l.ft[i][k].save;
		}
		if (!err && l.nall[i]) {
			err = emit_inc(&o, cp, &l.all[i], c->insns[i].addr);
			nseq++;
			nsave += l.all[i].save;
		}
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
		if (!err)
			err = emit_inc(&o, cp, &(struct incr){ st->counter, st->save },
				       st->target - cp->addr < cp->len ? st->target :
				       c->insns[st->insn].addr);
		nseq++;
		nsave += st->save;
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
