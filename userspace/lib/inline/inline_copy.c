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
int inline_is_endbr(const uint8_t *p, uint32_t len)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sealed[2][4] = {
		{ 0x0f, 0x1f, 0x40, 0xd6 },	/* 6.1: nopl -42(%rax) */
		{ 0x66, 0x0f, 0x1f, 0x00 },	/* 6.2 on: osp nopl (%rax) */
	};

	return len >= 4 && (!memcmp(p, endbr, 4) || !memcmp(p, sealed[0], 4) ||
			    !memcmp(p, sealed[1], 4));
}

int inline_fentry_site(const struct cfg_input *in)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint32_t at = inline_is_endbr(in->code, in->len) ? 4 : 0;

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
	uint32_t at = inline_is_endbr(in->code, in->len) ? 4 : 0;
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

void inline_key_bytes(uint8_t *p, uint8_t len, int jump, uint64_t code, uint64_t target)
{
	static const uint8_t nop2[2] = { 0x66, 0x90 };			/* x86_nops[2] */
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };	/* x86_nops[5] */
	int32_t d = (int32_t)(target - (code + len));

	if (!jump) {
		memcpy(p, len == 2 ? nop2 : nop5, len);
		return;
	}
	p[0] = len == 2 ? 0xeb : 0xe9;
	if (len == 2)
		p[1] = (uint8_t)(int8_t)d;
	else
		memcpy(p + 1, &d, 4);
}

/* The CFG's instruction at addr, or NULL. */
static const struct cfg_insn *insn_of(const struct cfg *c, uint64_t addr)
{
	uint32_t lo = 0, hi = c->ninsns;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ninsns && c->insns[lo].addr == addr ? &c->insns[lo] : NULL;
}

/*
 * Each static-key site the CFG runs: a __jump_table entry of the copy, its
 * bytes in the state the module loader assumes (jump_label_init_type), so
 * that it patches the site to the key's current state as for any module.
 */
static int keys(const struct cfg_input *in, const struct cfg *c, const struct inline_env *env,
		struct inline_copy *cp)
{
	uint32_t i;

	cp->keys = calloc(in->nkeys + 1, sizeof(*cp->keys));
	if (!cp->keys)
		return -PT_ENOMEM;
	for (i = 0; i < in->nkeys; i++) {
		const struct cfg_key_site *k = &in->keys[i];
		const struct cfg_insn *ci = insn_of(c, k->code);
		struct inline_key *o;
		int64_t d;

		if (k->code - in->addr >= cp->len || !ci)
			continue;	/* another function's, or code nothing runs */
		if (ci->kind != CFG_I_KEY || (ci->len != 2 && ci->len != 5))
			return refuse(cp, "inline-static-key", "%s+0x%" PRIx64 ": the key site "
				      "is not a 2- or 5-byte jmp or nop", in->name, k->code - in->addr);
		if (!env || !k->key || k->init_jump < 0)
			return refuse(cp, "inline-static-key", "%s+0x%" PRIx64 ": its key or its "
				      "initial state is unknown", in->name, k->code - in->addr);
		if (k->key < env->keys_lo || k->key >= env->keys_hi)
			return refuse(cp, "inline-static-key", "%s+0x%" PRIx64 ": its key 0x%"
				      PRIx64 " is not vmlinux's (a module's key could go with "
				      "its module)", in->name, k->code - in->addr, k->key);
		d = (int64_t)(k->target - (k->code + ci->len));
		if (k->target - in->addr >= cp->len || (ci->len == 2 && (d < -128 || d > 127)))
			return refuse(cp, "inline-static-key", "%s+0x%" PRIx64 ": its jmp cannot "
				      "reach 0x%" PRIx64 " in the copy", in->name,
				      k->code - in->addr, k->target);
		o = &cp->keys[cp->nkeys++];
		*o = (struct inline_key){ .code = k->code, .target = k->target, .key = k->key,
					  .branch = k->branch, .init_jump = (uint8_t)k->init_jump,
					  .live_jump = ci->cc == CFG_KEY_ON, .len = ci->len };
		inline_key_bytes(cp->code + (k->code - in->addr), o->len, o->init_jump, k->code,
				 k->target);
	}
	return 0;
}

/* 1 when the live bytes at p are what __static_call_validate accepts for a site. */
static int static_call_bytes_valid(const uint8_t *p, uint32_t len, int tail)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t xor5rax[5] = { 0x2e, 0x2e, 0x2e, 0x31, 0xc0 };

	if (tail)
		return (len == 5 && p[0] == 0xe9) || (len == 6 && p[0] == 0x0f &&
						      (p[1] & 0xf0) == 0x80);
	return len == 5 && (p[0] == 0xe8 || !memcmp(p, nop5, 5) || !memcmp(p, xor5rax, 5));
}

/*
 * Each static-call site: a .static_call_sites entry of the copy with its
 * live key, so that static_call_update patches the copy's site too. The
 * live bytes (the call to the current target, relocated) are what
 * static_call_add_module validates and then rewrites to the key's target.
 */
static int static_calls(const struct cfg_input *in, const struct cfg *c,
			const struct inline_env *env, struct inline_copy *cp)
{
	uint32_t i, n = 0;

	for (i = 0; i < c->ninsns; i++)
		n += !!(c->insns[i].flags & CFG_IF_STATIC_CALL);
	cp->calls = calloc(n + 1, sizeof(*cp->calls));
	if (!cp->calls)
		return -PT_ENOMEM;
	for (i = 0; i < c->ninsns; i++) {
		const struct cfg_insn *ci = &c->insns[i];
		uint64_t off = ci->addr - in->addr, key;
		int64_t at;
		int tail;

		if (!(ci->flags & CFG_IF_STATIC_CALL))
			continue;
		at = env && env->sc && env->sc->key ? static_calls_find(env->sc, ci->addr) : -1;
		if (at < 0)
			return refuse(cp, "inline-static-call", "%s+0x%" PRIx64 ": a static-call "
				      "site whose key is unknown", in->name, off);
		key = env->sc->key[at] & ~(uint64_t)STATIC_CALL_SITE_FLAGS;
		tail = !!(env->sc->key[at] & STATIC_CALL_SITE_TAIL);
		if (key < env->keys_lo || key >= env->keys_hi)
			return refuse(cp, "inline-static-call", "%s+0x%" PRIx64 ": its key 0x%"
				      PRIx64 " is not vmlinux's", in->name, off, key);
		if (!static_call_bytes_valid(cp->code + off, ci->len, tail))
			return refuse(cp, "inline-static-call", "%s+0x%" PRIx64 ": the site is not "
				      "a 5-byte %s (a NULL tail call's ret: the kernel would write "
				      "past it)", in->name, off, tail ? "jmp or a Jcc" :
				      "call, nop or xor");
		cp->calls[cp->ncalls++] = (struct inline_static_call){ .addr = ci->addr,
			.key = key, .tail = (uint8_t)tail };
	}
	return 0;
}

static int tables(const struct cfg_input *in, struct inline_copy *cp)
{
	uint32_t i;

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

int inline_copy_build(const struct cfg_input *in, const struct cfg *c,
		      const struct inline_env *env, struct inline_copy *out)
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
	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr + c->insns[i].len > end)
			end = c->insns[i].addr + c->insns[i].len;
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
	err = static_calls(in, c, env, out);
	if (!err)
		err = keys(in, c, env, out);
	return err ? err : tables(in, out);
}

void inline_copy_free(struct inline_copy *cp)
{
	if (!cp)
		return;
	free(cp->code);
	free(cp->relocs);
	free(cp->fixups);
	free(cp->bugs);
	free(cp->keys);
	free(cp->calls);
	free(cp->orc);
	free(cp->addrs);
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
