// SPDX-License-Identifier: GPL-2.0
/*
 * inline_copy: a function's copy on synthetic live code (bytes with real
 * displacements at a kernel address). Every kind of reference leaving the
 * function becomes a relocation with the field zeroed and the addend that
 * puts the same target back; references inside stay; what cannot be
 * copied exactly is refused with its tag. The oracle: the copy, relocated
 * by hand as the module loader would at another address, recovers to the
 * original's CFG shifted (inline_check), and a changed byte does not.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include <pathtrace/static_calls.h>

#include "unit.h"

#define A 0xffffffff81000000ull		/* the original */
#define B 0xffffffffc0001000ull		/* where the copy lands */
#define DATA 0xffffffff82000000ull
#define CALLEE 0xffffffff81100000ull
#define TAIL 0xffffffff81200000ull
#define CTAIL 0xffffffff81300000ull

struct code {
	uint8_t b[256];
	uint32_t n;
};

static void put(struct code *c, const uint8_t *p, uint32_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

/* rel32 field at the current end, for an instruction that ends `after` bytes later */
static void rel32(struct code *c, uint64_t target, uint32_t after)
{
	int32_t d = (int32_t)(target - (A + c->n + 4 + after));

	put(c, (uint8_t *)&d, 4);
}

/* Every reference kind, in offset order; *off gets each relocated field's offset. */
static void build_sample(struct code *c, uint32_t off[6])
{
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa }, nop5[] = { 0x0f, 0x1f, 0x44, 0, 0 };

	memset(c, 0, sizeof(*c));
	put(c, endbr, 4);
	put(c, nop5, 5);				/* the idle __fentry__ site */
	put(c, (uint8_t[]){ 0x48, 0x8b, 0x05 }, 3);	/* mov DATA(%rip), %rax */
	off[0] = c->n;
	rel32(c, DATA, 0);
	put(c, (uint8_t[]){ 0x83, 0x3d }, 2);		/* cmpl $1, DATA+8(%rip): an imm8 after */
	off[1] = c->n;
	rel32(c, DATA + 8, 1);
	put(c, (uint8_t[]){ 0x01 }, 1);
	put(c, (uint8_t[]){ 0x48, 0x8d, 0x0d }, 3);	/* lea inside(%rip), %rcx: stays */
	rel32(c, A + 0x40, 0);
	put(c, (uint8_t[]){ 0xe8 }, 1);			/* call CALLEE */
	off[2] = c->n;
	rel32(c, CALLEE, 0);
	put(c, (uint8_t[]){ 0x85, 0xc0 }, 2);		/* test %eax, %eax */
	put(c, (uint8_t[]){ 0x0f, 0x84 }, 2);		/* je CTAIL: a conditional tail call */
	off[3] = c->n;
	rel32(c, CTAIL, 0);
	put(c, (uint8_t[]){ 0x74, 0x02 }, 2);		/* je +2: inside, rel8 */
	put(c, (uint8_t[]){ 0xeb, 0x05 }, 2);		/* jmp +5: inside */
	put(c, (uint8_t[]){ 0xe9 }, 1);			/* jmp TAIL: a tail call */
	off[4] = c->n;
	rel32(c, TAIL, 0);
	while (c->n < 0x40)
		put(c, (uint8_t[]){ 0x90 }, 1);
	put(c, (uint8_t[]){ 0xc3 }, 1);			/* ret (A + 0x40) */
	off[5] = 0;
}

/* Function starts outside, as kallsyms names them. */
static const char *sample_names(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == CALLEE ? "callee" : addr == TAIL ? "tail" : addr == CTAIL ? "ctail" :
	       addr == A + 0x22 ? "near" : NULL;
}

static void input(struct cfg_input *in, const struct code *c)
{
	memset(in, 0, sizeof(*in));
	in->name = "sample";
	in->addr = A;
	in->code = c->b;
	in->len = c->n + 16;	/* an upper bound, as kallsyms gives: int3 padding after */
	in->names.name_at = sample_names;
}

/* The loader's S + A - P, with the copy at B (absolute targets, as SHN_ABS symbols give). */
static void relocate(const struct inline_copy *cp, uint8_t *code, uint64_t at)
{
	uint32_t k;

	memcpy(code, cp->code, cp->len);
	for (k = 0; k < cp->nrelocs; k++) {
		int32_t v = (int32_t)(cp->relocs[k].target + cp->relocs[k].addend -
				      (at + cp->relocs[k].off));

		memcpy(code + cp->relocs[k].off, &v, 4);
	}
}

static void test_relocations(void)
{
	struct code c;
	struct cfg_input in, cin;
	struct cfg orig, copy;
	struct inline_copy cp;
	uint32_t off[6], k;
	uint8_t moved[256];
	char why[200];
	static const uint64_t want_target[5] = { DATA, DATA + 8, CALLEE, CTAIL, TAIL };
	static const int64_t want_addend[5] = { -4, -5, -4, -4, -4 };
	static const uint32_t want_type[5] = { R_X86_64_PC32, R_X86_64_PC32, R_X86_64_PLT32,
					       R_X86_64_PC32, R_X86_64_PC32 };

	build_sample(&c, off);
	memset(c.b + c.n, 0xcc, 16);
	input(&in, &c);
	if (cfg_build(&in, &orig))
		fprintf(stderr, "inline_copy: the sample: %s (%s)\n", orig.refusal, orig.detail);
	CU_ASSERT_PTR_NULL_FATAL(orig.refusal);
	CU_ASSERT_EQUAL_FATAL(inline_copy_build(&in, &orig, NULL, &cp), 0);
	CU_ASSERT_EQUAL(cp.len, c.n);		/* the exact end, not the padding */
	CU_ASSERT_EQUAL_FATAL(cp.nrelocs, 5);
	for (k = 0; k < 5; k++) {
		CU_ASSERT_EQUAL(cp.relocs[k].off, off[k]);
		CU_ASSERT_EQUAL(cp.relocs[k].target, want_target[k]);
		CU_ASSERT_EQUAL(cp.relocs[k].addend, want_addend[k]);
		CU_ASSERT_EQUAL(cp.relocs[k].type, want_type[k]);
		CU_ASSERT_EQUAL(cp.relocs[k].copy, INLINE_NONE);
		CU_ASSERT(!memcmp(cp.code + off[k], "\0\0\0\0", 4));	/* zeroed for the loader */
	}
	/* every byte but the relocated fields is the original's */
	for (k = 0; k < cp.len; k++) {
		uint32_t j;
		int in_field = 0;

		for (j = 0; j < 5; j++)
			in_field |= k >= off[j] && k < off[j] + 4;
		if (!in_field && cp.code[k] != c.b[k])
			CU_FAIL("a byte outside the relocated fields changed");
	}
	/* loaded at B, the copy is the original shifted: same CFG, same outside targets */
	relocate(&cp, moved, B);
	memset(&cin, 0, sizeof(cin));
	cin.name = "sample";
	cin.addr = B;
	cin.code = moved;
	cin.len = cp.len;
	cin.names.name_at = sample_names;
	CU_ASSERT_EQUAL_FATAL(cfg_build(&cin, &copy), 0);
	CU_ASSERT_EQUAL(inline_check(&orig, &copy, &cp, 1, (uint64_t[]){ B }, why, sizeof(why)), 0);
	cfg_free(&copy);
	/* the oracle sees a change: the inside je turned into jne */
	moved[off[3] + 4] = 0x75;
	CU_ASSERT_EQUAL_FATAL(cfg_build(&cin, &copy), 0);
	CU_ASSERT_EQUAL(inline_check(&orig, &copy, &cp, 1, (uint64_t[]){ B }, why, sizeof(why)),
			-PT_EMISMATCH);
	cfg_free(&copy);
	/* relocated at a wrong address, an outside target moves: a mismatch too */
	relocate(&cp, moved, B + 0x10);
	CU_ASSERT(cfg_build(&cin, &copy) == -PT_EREFUSED ||	/* no function there */
		  inline_check(&orig, &copy, &cp, 1, (uint64_t[]){ B }, why, sizeof(why)) ==
		  -PT_EMISMATCH);
	cfg_free(&copy);
	inline_copy_free(&cp);
	cfg_free(&orig);
}

/* Builds code (n bytes + ret), its CFG and copy; returns inline_copy_build's result. */
static int try_copy(const uint8_t *p, uint32_t n, struct cfg_input *in_over, struct inline_copy *cp)
{
	static struct code c;
	struct cfg_input in;
	struct cfg g;
	int err;

	memset(cp, 0, sizeof(*cp));
	memset(&c, 0, sizeof(c));
	put(&c, p, n);
	memset(c.b + c.n, 0xcc, 16);
	if (in_over)
		in = *in_over;
	else
		input(&in, &c);
	in.code = c.b;
	in.addr = A;
	in.len = c.n + 16;
	if (cfg_build(&in, &g))
		return -1000;
	err = inline_copy_build(&in, &g, NULL, cp);
	cfg_free(&g);
	return err;
}

static const char *ftrace_name(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == CALLEE ? "ftrace_caller" : NULL;
}

static void test_refusals(void)
{
	struct inline_copy cp;
	struct cfg_input in;
	struct cfg_fixup fx;
	struct cfg_key_site key;
	uint8_t b[32];
	int32_t d;

	/* je rel8 leaving the function: a conditional tail call to a function nearby */
	CU_ASSERT_EQUAL(try_copy((uint8_t[]){ 0x74, 0x20, 0xc3 }, 3, NULL, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-rel8-out"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cp.detail, "sample+0x0"));
	inline_copy_free(&cp);
	/* mov $A+2 (sign-extended imm32), %rax: an absolute address inside */
	d = (int32_t)(A + 2);
	memcpy(b, (uint8_t[]){ 0x48, 0xc7, 0xc0 }, 3);
	memcpy(b + 3, &d, 4);
	b[7] = 0xc3;
	CU_ASSERT_EQUAL(try_copy(b, 8, NULL, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-abs-inside"));
	inline_copy_free(&cp);
	/* ... while an address outside is only a number */
	d = (int32_t)DATA;
	memcpy(b + 3, &d, 4);
	CU_ASSERT_EQUAL(try_copy(b, 8, NULL, &cp), 0);
	CU_ASSERT_EQUAL(cp.nrelocs, 0);
	inline_copy_free(&cp);
	/* an exception fixup landing outside the function */
	memset(&in, 0, sizeof(in));
	in.name = "sample";
	in.names.name_at = sample_names;
	fx = (struct cfg_fixup){ .insn = A, .fixup = TAIL, .data = 3 };
	in.fixups = &fx;
	in.nfixups = 1;
	/* (cfg_build refuses it first; the copy refuses it on its own too) */
	CU_ASSERT_EQUAL(try_copy((uint8_t[]){ 0x8b, 0x07, 0xc3 }, 3, &in, &cp), -1000);
	{
		static const uint8_t ld[] = { 0x8b, 0x07, 0xc3, 0xcc };
		struct cfg_input bare;
		struct cfg g;

		in.addr = A;
		in.code = ld;
		in.len = 4;
		bare = in;
		bare.nfixups = 0;
		CU_ASSERT_EQUAL_FATAL(cfg_build(&bare, &g), 0);
		CU_ASSERT_EQUAL(inline_copy_build(&in, &g, NULL, &cp), -PT_EREFUSED);
		CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-fixup-out"));
		cfg_free(&g);
	}
	inline_copy_free(&cp);
	/* ... inside: kept, data word and all */
	fx.fixup = A + 2;
	CU_ASSERT_EQUAL(try_copy((uint8_t[]){ 0x8b, 0x07, 0xc3 }, 3, &in, &cp), 0);
	CU_ASSERT_EQUAL_FATAL(cp.nfixups, 1);
	CU_ASSERT_EQUAL(cp.fixups[0].data, 3);
	inline_copy_free(&cp);
	/* a static-key site */
	memset(&in, 0, sizeof(in));
	in.name = "sample";
	in.names.name_at = sample_names;
	key = (struct cfg_key_site){ .code = A, .target = A + 5 };
	in.keys = &key;
	in.nkeys = 1;
	CU_ASSERT_EQUAL(try_copy((uint8_t[]){ 0x0f, 0x1f, 0x44, 0, 0, 0xc3 }, 6, &in, &cp),
			-PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-key"));
	inline_copy_free(&cp);
	/* ftrace on the original: its fentry site calls a trampoline */
	memset(&in, 0, sizeof(in));
	in.name = "sample";
	in.names.name_at = ftrace_name;
	d = (int32_t)(CALLEE - (A + 5));
	b[0] = 0xe8;
	memcpy(b + 1, &d, 4);
	b[5] = 0xc3;
	CU_ASSERT_EQUAL(try_copy(b, 6, &in, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-ftraced"));
	inline_copy_free(&cp);
}

#define KEY1 (DATA + 0x100)
#define KEY2 (DATA + 0x200)
#define SCKEY (DATA + 0x300)
#define VMLINUX_LO 0xffffffff80000000ull
#define VMLINUX_HI 0xffffffffc0000000ull

/*
 * Two key sites and a static call: key1 a live jmp8 whose key is false by
 * type (its initial state the nop), key2 a live nop5 whose key is true by
 * type (initial state the jmp), a call through a static call, a ret.
 */
static const uint8_t keys_code[] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00,		/* 0: __fentry__ */
	0xeb, 0x0a,				/* 5: key1, jmp8 to 0x11 (live: on) */
	0x0f, 0x1f, 0x44, 0x00, 0x00,		/* 7: key2, nop5, target 0x11 (live: off) */
	0xe8, 0x00, 0x00, 0x00, 0x00,		/* c: call CALLEE: a static-call site */
	0xc3,					/* 11: ret */
	0xcc, 0xcc };

static void keys_input(struct cfg_input *in, uint8_t *code, struct cfg_key_site *ks)
{
	int32_t d = (int32_t)(CALLEE - (A + 0x11));

	memcpy(code, keys_code, sizeof(keys_code));
	memcpy(code + 0xd, &d, 4);
	memset(in, 0, sizeof(*in));
	in->name = "sample";
	in->addr = A;
	in->code = code;
	in->len = sizeof(keys_code);
	in->names.name_at = sample_names;
	ks[0] = (struct cfg_key_site){ .code = A + 5, .target = A + 0x11, .key = KEY1,
				       .branch = 0, .init_jump = 0 };
	ks[1] = (struct cfg_key_site){ .code = A + 7, .target = A + 0x11, .key = KEY2,
				       .branch = 0, .init_jump = 1 };
	in->keys = ks;
	in->nkeys = 2;
}

/*
 * The module loader on the relocated copy (jump_label_add_module,
 * __jump_label_patch): a site whose key's current state is not its initial
 * one must hold the initial bytes, else the kernel BUG()s; it then gets
 * the current state's. Returns 0, or -1 where the kernel would BUG.
 */
static int load_keys(const struct inline_copy *cp, uint8_t *code)
{
	uint8_t want[5];
	uint32_t k;

	for (k = 0; k < cp->nkeys; k++) {
		const struct inline_key *ky = &cp->keys[k];
		uint32_t off = (uint32_t)(ky->code - cp->addr);

		if (ky->live_jump == ky->init_jump)
			continue;
		inline_key_bytes(want, ky->len, ky->init_jump, ky->code, ky->target);
		if (memcmp(code + off, want, ky->len))
			return -1;
		inline_key_bytes(code + off, ky->len, ky->live_jump, ky->code, ky->target);
	}
	return 0;
}

/* load_keys on the copy loaded at B (its two key entries moved there). */
static int load_keys_at_b(const struct inline_copy *cp, uint8_t *code)
{
	struct inline_copy at_b = *cp;
	struct inline_key kb[2] = { cp->keys[0], cp->keys[1] };
	int k;

	for (k = 0; k < 2; k++) {
		kb[k].code += B - A;
		kb[k].target += B - A;
	}
	at_b.keys = kb;
	at_b.addr = B;
	return load_keys(&at_b, code);
}

static void test_keys_calls(void)
{
	uint64_t site = A + 0xc, sckey = SCKEY;
	struct static_calls sc = { &site, 1, &sckey };
	struct inline_env env = { &sc, VMLINUX_LO, VMLINUX_HI };
	struct cfg_key_site ks[2], moved[2];
	struct cfg_input in, cin;
	struct cfg orig, copy;
	struct inline_copy cp;
	uint8_t code[sizeof(keys_code)], loaded[64];
	char why[200];

	keys_input(&in, code, ks);
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &orig), 0);
	CU_ASSERT_EQUAL(static_calls_mark(&sc, &orig), 1);
	CU_ASSERT_EQUAL_FATAL(inline_copy_build(&in, &orig, &env, &cp), 0);
	/* the entries: sites, targets, keys, branch bits, states */
	CU_ASSERT_EQUAL_FATAL(cp.nkeys, 2);
	CU_ASSERT_EQUAL(cp.keys[0].code, A + 5);
	CU_ASSERT_EQUAL(cp.keys[0].target, A + 0x11);
	CU_ASSERT_EQUAL(cp.keys[0].key, KEY1);
	CU_ASSERT_EQUAL(cp.keys[0].len, 2);
	CU_ASSERT_EQUAL(cp.keys[0].live_jump, 1);
	CU_ASSERT_EQUAL(cp.keys[0].init_jump, 0);
	CU_ASSERT_EQUAL(cp.keys[1].key, KEY2);
	CU_ASSERT_EQUAL(cp.keys[1].len, 5);
	CU_ASSERT_EQUAL(cp.keys[1].live_jump, 0);
	CU_ASSERT_EQUAL(cp.keys[1].init_jump, 1);
	/* the copy's bytes are the initial states: the nop2 and the jmp32 to 0x11 */
	CU_ASSERT(!memcmp(cp.code + 5, "\x66\x90", 2));
	CU_ASSERT(!memcmp(cp.code + 7, "\xe9\x05\x00\x00\x00", 5));
	CU_ASSERT_EQUAL_FATAL(cp.ncalls, 1);
	CU_ASSERT_EQUAL(cp.calls[0].addr, A + 0xc);
	CU_ASSERT_EQUAL(cp.calls[0].key, SCKEY);
	CU_ASSERT_EQUAL(cp.calls[0].tail, 0);
	CU_ASSERT_EQUAL_FATAL(cp.nrelocs, 1);	/* the call, to the current target */
	CU_ASSERT_EQUAL(cp.relocs[0].off, 0xd);
	CU_ASSERT_EQUAL(cp.relocs[0].target, CALLEE);
	/* loaded at B and patched as the kernel would: the original's CFG, states and all */
	relocate(&cp, loaded, B);
	CU_ASSERT_EQUAL_FATAL(load_keys_at_b(&cp, loaded), 0);
	CU_ASSERT_EQUAL(loaded[5], 0xeb);	/* key1 on again */
	CU_ASSERT(!memcmp(loaded + 7, keys_code + 7, 5));	/* key2 off again */
	cin = in;
	cin.addr = B;
	cin.code = loaded;
	cin.len = cp.len;
	moved[0] = ks[0];
	moved[1] = ks[1];
	moved[0].code += B - A;
	moved[0].target += B - A;
	moved[1].code += B - A;
	moved[1].target += B - A;
	cin.keys = moved;
	CU_ASSERT_EQUAL_FATAL(cfg_build(&cin, &copy), 0);
	CU_ASSERT_EQUAL(inline_check(&orig, &copy, &cp, 1, (uint64_t[]){ B }, why, sizeof(why)), 0);
	cfg_free(&copy);
	/* the live bytes as they were, not the initial state: the kernel would BUG */
	relocate(&cp, loaded, B);
	memcpy(loaded + 5, keys_code + 5, 7);
	CU_ASSERT_EQUAL(load_keys_at_b(&cp, loaded), -1);
	inline_copy_free(&cp);

	/* refused: no env; a key unknown; a state unknown; a module's key; a call's key */
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, NULL, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-call"));
	inline_copy_free(&cp);
	ks[0].key = 0;
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, &env, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-key"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cp.detail, "sample+0x5"));
	inline_copy_free(&cp);
	ks[0].key = KEY1;
	ks[1].init_jump = -1;
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, &env, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-key"));
	inline_copy_free(&cp);
	ks[1].init_jump = 1;
	ks[1].key = 0xffffffffc0100000ull;	/* in a module */
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, &env, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-key"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cp.detail, "not vmlinux's"));
	inline_copy_free(&cp);
	ks[1].key = KEY2;
	sckey = 0xffffffffc0100000ull;
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, &env, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-call"));
	inline_copy_free(&cp);
	/* a tail-call site's flag; and a tail site that is a ret (NULL): refused */
	sckey = SCKEY | STATIC_CALL_SITE_TAIL;
	CU_ASSERT_EQUAL(inline_copy_build(&in, &orig, &env, &cp), -PT_EREFUSED);
	CU_ASSERT(cp.refusal && !strcmp(cp.refusal, "inline-static-call"));
	inline_copy_free(&cp);
	cfg_free(&orig);
}

static void test_link(void)
{
	struct inline_copy cps[2];
	uint8_t b[16];
	int32_t d;

	/* 0: call the start of 1 */
	d = (int32_t)(CALLEE - (A + 5));
	b[0] = 0xe8;
	memcpy(b + 1, &d, 4);
	b[5] = 0xc3;
	CU_ASSERT_EQUAL_FATAL(try_copy(b, 6, NULL, &cps[0]), 0);
	memset(&cps[1], 0, sizeof(cps[1]));
	cps[1].name = "callee";
	cps[1].addr = CALLEE;
	cps[1].len = cps[1].orig_len = 8;
	CU_ASSERT_EQUAL(inline_link(cps, 2), 0);
	CU_ASSERT_EQUAL(cps[0].relocs[0].copy, 1);
	/* into its middle: refused, the call would run the original untraced */
	cps[1].addr = CALLEE - 4;
	cps[0].relocs[0].copy = INLINE_NONE;
	CU_ASSERT_EQUAL(inline_link(cps, 2), 1);
	CU_ASSERT(cps[0].refusal && !strcmp(cps[0].refusal, "inline-into-copy"));
	inline_copy_free(&cps[0]);
}

/* The __fentry__ site livepatch needs: a NOP5 or a call first, after an endbr or its seal. */
static void test_fentry_site(void)
{
	static const struct {
		uint8_t b[12];
		uint32_t n;
		int want;
	} cases[] = {
		{ { 0x0f, 0x1f, 0x44, 0, 0, 0xc3 }, 6, 0 },
		{ { 0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0, 0, 0xc3 }, 10, 4 },
		{ { 0x0f, 0x1f, 0x40, 0xd6, 0xe8, 1, 2, 3, 4, 0xc3 }, 10, 4 },	/* sealed, ftraced */
		{ { 0x66, 0x0f, 0x1f, 0x00, 0x0f, 0x1f, 0x44, 0, 0, 0xc3 }, 10, 4 },	/* 6.2+ seal */
		{ { 0x66, 0x0f, 0x1f, 0x40, 0x0f, 0x1f, 0x44, 0, 0, 0xc3 }, 10, -1 },	/* not one */
		{ { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0xc3 }, 9, -1 },	/* notrace */
		{ { 0x0f, 0x1f, 0x40, 0, 0, 0xc3 }, 6, -1 },	/* another NOP */
		{ { 0x0f, 0x1f, 0x44, 0 }, 4, -1 },		/* too short */
	};
	struct cfg_input in;
	uint32_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		memset(&in, 0, sizeof(in));
		in.addr = A;
		in.code = cases[k].b;
		in.len = cases[k].n;
		CU_ASSERT_EQUAL(inline_fentry_site(&in), cases[k].want);
	}
}

UNIT_SUITE(inline_copy,
	   { "the __fentry__ site: a NOP5 or call first, after an endbr; else none",
	     test_fentry_site },
	   { "outside references become relocations; the loaded copy is the original shifted",
	     test_relocations },
	   { "rel8 exits, absolute self-references, outside fixups, static keys, ftrace: refused",
	     test_refusals },
	   { "calls between copies stay in the copies; into another's middle: refused", test_link },
	   { "key sites in their initial state, static calls with their keys; loaded, the "
	     "original's CFG", test_keys_calls })
