// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mem: the data addresses the code alone fixes (RIP-relative and
 * absolute operands outside fs/gs), read-modify-write as a load and a
 * store, everything register- or stack-addressed counted as unknown, LEA
 * and NOP touching nothing; relative branch targets from the bytes; the
 * register of every retpoline thunk name (the _array symbol is rax's).
 */
#include <string.h>

#include "insn_mem.h"
#include "unit.h"

#define BASE 0xffffffff81000000ull

struct one {
	const char *what;
	uint8_t bytes[15];
	uint8_t len;
	unsigned int n, unknown;
	uint64_t addr[2];	/* relative to the instruction's end when rel, else absolute */
	uint8_t write[2];
	uint16_t size[2];
	int rel;
};

static const struct one cases[] = {
	{ "mov 0x10(%rip),%rax", { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 }, 7, 1, 0, { 0x10 }, { 0 }, { 8 }, 1 },
	{ "mov %eax,0x1000 (absolute)", { 0x89, 0x04, 0x25, 0x00, 0x10, 0, 0 }, 7, 1, 0, { 0x1000 }, { 1 },
	  { 4 }, 0 },
	{ "add %eax,0x20(%rip)", { 0x01, 0x05, 0x20, 0, 0, 0 }, 6, 2, 0, { 0x20, 0x20 }, { 0, 1 },
	  { 4, 4 }, 1 },
	{ "mov %gs:0x28,%rax", { 0x65, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 0, 1, { 0 }, { 0 },
	  { 0 }, 0 },
	{ "lea 0x10(%rip),%rax", { 0x48, 0x8d, 0x05, 0x10, 0, 0, 0 }, 7, 0, 0, { 0 }, { 0 }, { 0 }, 0 },
	{ "nopw 0x0(%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x44, 0, 0 }, 6, 0, 0, { 0 }, { 0 }, { 0 }, 0 },
	{ "mov (%rdi),%rax", { 0x48, 0x8b, 0x07 }, 3, 0, 1, { 0 }, { 0 }, { 0 }, 0 },
	{ "push %rbx", { 0x53 }, 1, 0, 1, { 0 }, { 0 }, { 0 }, 0 },
	{ "call *0x10(%rip)", { 0xff, 0x15, 0x10, 0, 0, 0 }, 6, 1, 1, { 0x10 }, { 0 }, { 8 }, 1 },
};

static void test_exact_addresses(void)
{
	ZydisDecoder dec;
	unsigned int i, k;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct one *c = &cases[i];
		struct pr_func f;
		struct cfg_insn in = { .addr = BASE + 0x40, .len = c->len };
		uint8_t code[0x80] = { 0 };
		struct insn_mem m[INSN_MEM_MAX];
		unsigned int n, unk = 99;
		int ok;

		memset(&f, 0, sizeof(f));
		memcpy(code + 0x40, c->bytes, c->len);
		f.addr = BASE;
		f.len = sizeof(code);
		f.code = code;
		n = insn_mem_exact(&dec, &f, &in, m, &unk);
		ok = n == c->n && unk == c->unknown;
		for (k = 0; ok && k < n; k++)
			ok = m[k].addr == (c->rel ? in.addr + in.len + c->addr[k] : c->addr[k]) &&
			     m[k].write == c->write[k] && m[k].size == c->size[k];
		if (!ok)
			fprintf(stderr, "insn_mem: %s: %u exact, %u unknown\n", c->what, n, unk);
		CU_ASSERT(ok);
	}
}

static void test_unrecorded(void)
{
	ZydisDecoder dec;
	struct pr_func f;
	struct cfg_insn in = { .addr = BASE + 0x100, .len = 7 };
	uint8_t code[16] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 };
	struct insn_mem m[INSN_MEM_MAX];
	unsigned int unk = 99;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	memset(&f, 0, sizeof(f));
	f.addr = BASE;
	f.len = sizeof(code);
	f.code = code;
	/* outside the recorded bytes: nothing known, nothing guessed */
	CU_ASSERT_EQUAL(insn_mem_exact(&dec, &f, &in, m, &unk), 0);
	CU_ASSERT_EQUAL(unk, 0);
	CU_ASSERT_PTR_NULL(insn_bytes(&f, &in));
	in.addr = BASE;
	CU_ASSERT_PTR_EQUAL(insn_bytes(&f, &in), code);
	f.code = NULL;
	CU_ASSERT_PTR_NULL(insn_bytes(&f, &in));
}

static void test_branch_targets(void)
{
	ZydisDecoder dec;
	struct pr_func f;
	uint8_t code[32] = {
		0xe8, 0x10, 0x00, 0x00, 0x00,		/* call +0x10 */
		0xe9, 0xf0, 0xff, 0xff, 0xff,		/* jmp -0x10 */
		0x74, 0x05,				/* je +5 */
		0xff, 0xd0,				/* call *%rax */
	};
	struct cfg_insn call = { .addr = BASE, .len = 5 }, jmp = { .addr = BASE + 5, .len = 5 },
			je = { .addr = BASE + 10, .len = 2 }, ind = { .addr = BASE + 12, .len = 2 };

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	memset(&f, 0, sizeof(f));
	f.addr = BASE;
	f.len = sizeof(code);
	f.code = code;
	CU_ASSERT_EQUAL(insn_branch_target(&dec, &f, &call), BASE + 5 + 0x10);
	CU_ASSERT_EQUAL(insn_branch_target(&dec, &f, &jmp), BASE + 10 - 0x10);
	CU_ASSERT_EQUAL(insn_branch_target(&dec, &f, &je), BASE + 12 + 5);
	CU_ASSERT_EQUAL(insn_branch_target(&dec, &f, &ind), 0);
}

static void test_thunk_registers(void)
{
	/* Pin's numbers: rdi 3, rsi 4, rbp 5, rsp 6, rbx 7, rdx 8, rcx 9, rax 10, r8 11 .. r15 18 */
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_array"), 10);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_rax"), 10);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_rcx"), 9);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_rdi"), 3);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_r11"), 14);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_r15"), 18);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_call_thunk_r8"), 11);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_jump_thunk_rbx"), 7);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_indirect_thunk_r16"), 0);
	CU_ASSERT_EQUAL(insn_thunk_reg("__x86_return_thunk"), 0);
	CU_ASSERT_EQUAL(insn_thunk_reg("kmalloc"), 0);
	CU_ASSERT_EQUAL(insn_thunk_reg(NULL), 0);
}

UNIT_SUITE(insn_mem,
	   { "exact data addresses: RIP-relative and absolute only", test_exact_addresses },
	   { "bytes outside the recorded code give nothing", test_unrecorded },
	   { "relative branch targets from the bytes", test_branch_targets },
	   { "retpoline thunks map to their register", test_thunk_registers })
