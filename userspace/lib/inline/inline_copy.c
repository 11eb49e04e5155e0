// SPDX-License-Identifier: GPL-2.0
/*
 * inline_copy - one function's copy: its live bytes, instruction for
 * instruction at the same offsets, with every reference that leaves the
 * function turned into a relocation (docs/inline.md, "The copy keeps the
 * original's layout"). The instructions are cfg_build's (what the CFG
 * models is what is copied); Zydis gives each one's operand fields.
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

#define refuse inline_refuse

int inline_refuse(struct inline_copy *cp, const char *tag, const char *fmt, ...)
{
	va_list ap;

	cp->refusal = tag;
	va_start(ap, fmt);
	vsnprintf(cp->detail, sizeof(cp->detail), fmt, ap);
	va_end(ap);
	return -PT_EREFUSED;
}

static int add_reloc(struct inline_copy *cp, uint32_t *cap, uint32_t off, uint32_t type,
		     uint64_t target, int64_t addend)
{
	if (cp->nrelocs == *cap) {
		uint32_t ncap = *cap ? 2 * *cap : 16;
		struct inline_reloc *r = realloc(cp->relocs, ncap * sizeof(*r));

		if (!r)
			return -PT_ENOMEM;
		cp->relocs = r;
		*cap = ncap;
	}
	cp->relocs[cp->nrelocs++] = (struct inline_reloc){ .off = off, .type = type,
		.target = target, .addend = addend, .copy = INLINE_NONE };
	memset(cp->code + off, 0, 4);	/* the module loader wants relocated fields zero */
	return 0;
}

/* endbr64, or the 4-byte nop IBT sealing leaves in its place (apply_ibt_endbr). */
static int is_endbr(const uint8_t *p, uint32_t len)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sealed[4] = { 0x0f, 0x1f, 0x40, 0xd6 };

	return len >= 4 && (!memcmp(p, endbr, 4) || !memcmp(p, sealed, 4));
}

int inline_fentry_site(const struct cfg_input *in)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint32_t at = is_endbr(in->code, in->len) ? 4 : 0;

	if (at + 5 > in->len || (memcmp(in->code + at, nop5, 5) && in->code[at] != 0xe8))
		return -1;
	return (int)at;
}

/*
 * The __fentry__ site (first instruction, after an endbr) must not call
 * anything but __fentry__: a call to an ftrace trampoline means ftrace is
 * on the original, and the copy would carry that call.
 */
static int check_fentry(const struct cfg_input *in, struct inline_copy *cp)
{
	uint32_t at = is_endbr(in->code, in->len) ? 4 : 0;
	const char *name;
	int32_t d;
	uint64_t t;

	if (at + 5 > in->len || in->code[at] != 0xe8)
		return 0;
	memcpy(&d, in->code + at + 1, 4);
	t = in->addr + at + 5 + (int64_t)d;
	name = in->names.name_at ? in->names.name_at(in->names.ctx, t) : NULL;
	if (name && strcmp(name, "__fentry__") && strncmp(name, "ftrace_", 7) &&
	    !strstr(name, "ftrace_trampoline"))
		return 0;	/* a real call as the first instruction (a notrace function) */
	return refuse(cp, "inline-ftraced", "%s+0x%x calls %s: ftrace is on the function",
		      in->name, at, name ? name : "an unnamed trampoline");
}

static uint64_t imm_value(const ZydisDecodedInstruction *zi, int i)
{
	return zi->raw.imm[i].is_signed ? (uint64_t)zi->raw.imm[i].value.s : zi->raw.imm[i].value.u;
}

/* One instruction at offset off: its outside references as relocations, or a refusal. */
static int copy_insn(const struct cfg_input *in, struct inline_copy *cp, uint32_t *cap,
		     const ZydisDecoder *dec, const struct cfg_insn *ci)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t off = (uint32_t)(ci->addr - in->addr);
	uint64_t end = ci->addr + ci->len, t;
	int i;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, in->code + off, in->len - off, &zi, ops)) ||
	    zi.length != ci->len)
		return refuse(cp, "inline-decode", "%s+0x%x: not decoded as the CFG has it",
			      in->name, off);
	for (i = 0; i < 2; i++) {
		if (!zi.raw.imm[i].size)
			continue;
		if (zi.raw.imm[i].is_relative) {
			t = end + (uint64_t)zi.raw.imm[i].value.s;
			if (t - in->addr < cp->len)
				continue;	/* inside: moves with the code */
			if (zi.raw.imm[i].size != 32)
				return refuse(cp, "inline-rel8-out",
					      "%s+0x%x: %s with a %u-bit displacement leaves the "
					      "function (to 0x%" PRIx64 ")", in->name, off,
					      ZydisMnemonicGetString(zi.mnemonic),
					      zi.raw.imm[i].size, t);
			if (add_reloc(cp, cap, off + zi.raw.imm[i].offset,
				      zi.mnemonic == ZYDIS_MNEMONIC_CALL ? R_X86_64_PLT32 :
				      R_X86_64_PC32, t, -(int64_t)(zi.length - zi.raw.imm[i].offset)))
				return -PT_ENOMEM;
			continue;
		}
		t = imm_value(&zi, i);
		if (zi.raw.imm[i].size >= 32 && t - in->addr < cp->len)
			return refuse(cp, "inline-abs-inside",
				      "%s+0x%x: an immediate holds 0x%" PRIx64 ", inside the function",
				      in->name, off, t);
	}
	for (i = 0; i < zi.operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || !zi.raw.disp.size)
			continue;
		if (op->mem.base == ZYDIS_REGISTER_RIP) {
			t = end + (uint64_t)zi.raw.disp.value;
			if (t - in->addr < cp->len)
				continue;
			if (zi.raw.disp.size != 32)
				return refuse(cp, "inline-decode", "%s+0x%x: RIP-relative without a "
					      "32-bit displacement", in->name, off);
			if (add_reloc(cp, cap, off + zi.raw.disp.offset, R_X86_64_PC32, t,
				      -(int64_t)(zi.length - zi.raw.disp.offset)))
				return -PT_ENOMEM;
			break;	/* one memory operand has the displacement */
		}
		if (op->mem.base == ZYDIS_REGISTER_NONE && op->mem.index == ZYDIS_REGISTER_NONE &&
		    (uint64_t)zi.raw.disp.value - in->addr < cp->len)
			return refuse(cp, "inline-abs-inside",
				      "%s+0x%x: an absolute operand points inside the function",
				      in->name, off);
	}
	return 0;
}

static int tables(const struct cfg_input *in, struct inline_copy *cp)
{
	uint32_t i;

	for (i = 0; i < in->nkeys; i++)
		if (in->keys[i].code - in->addr < cp->len)
			return refuse(cp, "inline-static-key", "%s+0x%" PRIx64 ": a static-key "
				      "site (a key flip would not patch the copy)", in->name,
				      in->keys[i].code - in->addr);
	cp->fixups = calloc(in->nfixups + 1, sizeof(*cp->fixups));
	cp->bugs = calloc(in->nbugs + 1, sizeof(*cp->bugs));
	if (!cp->fixups || !cp->bugs)
		return -PT_ENOMEM;
	for (i = 0; i < in->nfixups; i++) {
		const struct cfg_fixup *f = &in->fixups[i];

		if (f->insn - in->addr >= cp->len)
			continue;
		if (f->fixup - in->addr >= cp->len)
			return refuse(cp, "inline-fixup-out", "%s+0x%" PRIx64 ": its exception "
				      "landing pad 0x%" PRIx64 " is outside the function", in->name,
				      f->insn - in->addr, f->fixup);
		cp->fixups[cp->nfixups++] = *f;
	}
	for (i = 0; i < in->nbugs; i++)
		if (in->bugs[i].addr - in->addr < cp->len)
			cp->bugs[cp->nbugs++] = in->bugs[i];
	return 0;
}

int inline_copy_build(const struct cfg_input *in, const struct cfg *c, struct inline_copy *out)
{
	ZydisDecoder dec;
	uint32_t i, cap = 0;
	uint64_t end = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!in || !in->code || !in->len || !c)
		return -PT_EINVAL;
	out->name = in->name;
	out->addr = in->addr;
	if (in->cold_len || c->cold_addr)
		return refuse(out, "inline-cold", "%s has a .cold part", in->name);
	for (i = 0; i < c->ninsns; i++) {
		if (c->insns[i].flags & CFG_IF_STATIC_CALL)
			return refuse(out, "inline-static-call", "%s+0x%" PRIx64 ": a static-call "
				      "site (an update would not patch the copy)", in->name,
				      c->insns[i].addr - in->addr);
		if (c->insns[i].addr + c->insns[i].len > end)
			end = c->insns[i].addr + c->insns[i].len;
	}
	if (end <= in->addr || end - in->addr > in->len)
		return refuse(out, "inline-decode", "%s: no instructions in its bytes", in->name);
	out->len = (uint32_t)(end - in->addr);
	out->orig_len = out->len;
	err = check_fentry(in, out);
	if (err)
		return err;
	out->code = malloc(out->len);
	if (!out->code)
		return -PT_ENOMEM;
	memcpy(out->code, in->code, out->len);
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -PT_EINVAL;
	for (i = 0; i < c->ninsns; i++) {
		err = copy_insn(in, out, &cap, &dec, &c->insns[i]);
		if (err)
			return err;
	}
	return tables(in, out);
}

void inline_copy_free(struct inline_copy *cp)
{
	if (!cp)
		return;
	free(cp->code);
	free(cp->relocs);
	free(cp->fixups);
	free(cp->bugs);
	free(cp->orc);
	memset(cp, 0, sizeof(*cp));
}

uint32_t inline_link(struct inline_copy *cps, uint32_t n)
{
	uint32_t i, k, j;

	for (i = 0; i < n; i++) {
		for (k = 0; k < cps[i].nrelocs; k++) {
			struct inline_reloc *r = &cps[i].relocs[k];

			for (j = 0; j < n; j++) {
				if (r->target - cps[j].addr >= cps[j].orig_len)
					continue;
				if (r->target != cps[j].addr) {
					refuse(&cps[i], "inline-into-copy", "%s+0x%x: jumps to %s+0x%"
					       PRIx64 ", inside another copied function", cps[i].name,
					       r->off, cps[j].name, r->target - cps[j].addr);
					return i + 1;
				}
				r->copy = j;
			}
		}
	}
	return 0;
}

/* Where the copy maps an original address: inside a copy, shifted; else as it is. */
static uint64_t mapped(const struct inline_copy *cps, uint32_t n, const uint64_t *at, uint64_t a)
{
	uint32_t j;

	for (j = 0; a && j < n; j++)
		if (a - cps[j].addr < cps[j].len)
			return at[j] + (a - cps[j].addr);
	return a;
}

int inline_check(const struct cfg *orig, const struct cfg *copy, const struct inline_copy *cps,
		 uint32_t n, const uint64_t *at, char *why, size_t len)
{
	uint32_t i;

	if (orig->nblocks != copy->nblocks || orig->ninsns != copy->ninsns ||
	    orig->nedges != copy->nedges) {
		snprintf(why, len, "%u blocks, %u instructions, %u edges in the copy; %u, %u, %u in "
			 "the original", copy->nblocks, copy->ninsns, copy->nedges, orig->nblocks,
			 orig->ninsns, orig->nedges);
		return -PT_EMISMATCH;
	}
	for (i = 0; i < orig->ninsns; i++) {
		const struct cfg_insn *a = &orig->insns[i], *b = &copy->insns[i];

		if (b->addr != mapped(cps, n, at, a->addr) || a->len != b->len ||
		    a->kind != b->kind || a->cc != b->cc || b->target != mapped(cps, n, at, a->target)) {
			snprintf(why, len, "+0x%" PRIx64 ": the copy's instruction differs",
				 a->addr - orig->addr);
			return -PT_EMISMATCH;
		}
	}
	for (i = 0; i < orig->nblocks; i++)
		if (orig->blocks[i].size != copy->blocks[i].size ||
		    orig->blocks[i].flags != copy->blocks[i].flags) {
			snprintf(why, len, "block %u differs", i);
			return -PT_EMISMATCH;
		}
	for (i = 0; i < orig->nedges; i++)
		if (orig->edges[i].src != copy->edges[i].src || orig->edges[i].dst != copy->edges[i].dst ||
		    orig->edges[i].kind != copy->edges[i].kind) {
			snprintf(why, len, "edge %u differs", i);
			return -PT_EMISMATCH;
		}
	return 0;
}
