// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_boostable against Linux 6.1's can_boost(): instructions the
 * kernel copies into an optprobe's window and those it refuses, with the
 * encodings kernel code is full of (test, shifts, percpu inc).
 */
#include <stdint.h>
#include <stdio.h>

#include <pathtrace/cfg.h>
#include <pathtrace/kprobe_boost.h>

#include "unit.h"

struct insn_case {
	uint8_t len;
	uint8_t code[8];
	int boostable;
	const char *what;
};

static const struct insn_case cases[] = {
	{ 3, { 0x48, 0x89, 0xdf }, 1, "mov %rbx,%rdi" },
	{ 2, { 0xa8, 0x01 }, 1, "test $1,%al (a8: no group)" },
	{ 3, { 0x48, 0x85, 0xc0 }, 1, "test %rax,%rax" },
	{ 4, { 0xf6, 0x47, 0x10, 0x04 }, 0, "testb $4,0x10(%rdi) (Grp3)" },
	{ 3, { 0x48, 0xf7, 0xd8 }, 0, "neg %rax (Grp3)" },
	{ 4, { 0x48, 0xc1, 0xe0, 0x03 }, 0, "shl $3,%rax (Grp2)" },
	{ 3, { 0x48, 0xd1, 0xe8 }, 0, "shr %rax (Grp2)" },
	{ 2, { 0xfe, 0xc0 }, 0, "inc %al (Grp4)" },
	{ 7, { 0x65, 0xff, 0x05, 0x10, 0x20, 0x30, 0x40 }, 0, "incl %gs:x (Grp5 /0)" },
	{ 2, { 0xff, 0xe0 }, 1, "jmp *%rax (Grp5 /4)" },
	{ 2, { 0xff, 0xd0 }, 0, "call *%rax (Grp5 /2)" },
	{ 5, { 0xe8, 0, 0, 0, 0 }, 0, "call rel32" },
	{ 2, { 0x74, 0x05 }, 0, "je rel8" },
	{ 3, { 0x0f, 0xb6, 0x07 }, 1, "movzbl (%rdi),%eax" },
	{ 5, { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 1, "nopl 0(%rax,%rax)" },
	{ 3, { 0x0f, 0x18, 0x0f }, 0, "prefetcht0 (%rdi) (0f 18)" },
	{ 4, { 0x0f, 0xba, 0xe0, 0x03 }, 0, "bt $3,%eax (Grp8)" },
	{ 3, { 0x0f, 0xa3, 0xc8 }, 1, "bt %ecx,%eax" },
	{ 4, { 0x0f, 0x45, 0xc1, 0x90 }, 1, "cmovne %ecx,%eax" },
	{ 3, { 0x0f, 0x94, 0xc0 }, 1, "sete %al" },
	{ 4, { 0xf0, 0x0f, 0xb1, 0x17 }, 1, "lock cmpxchg %edx,(%rdi)" },
	{ 3, { 0xf0, 0xff, 0x07 }, 0, "lock incl (%rdi) (Grp5 /0)" },
	{ 2, { 0x0f, 0x0b }, 0, "ud2" },
	{ 5, { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 0, "pshufb (three opcode bytes)" },
	{ 4, { 0xc5, 0xf9, 0x6f, 0xc1 }, 0, "vmovdqa (VEX)" },
	{ 4, { 0x2e, 0x48, 0x8b, 0x07 }, 0, "cs mov (%rdi),%rax" },
	{ 3, { 0x67, 0x8b, 0x07 }, 0, "addr32 mov (%edi),%eax" },
	{ 1, { 0xc3 }, 1, "ret (0xc3: the kernel lets it through; a ret is never plain here)" },
	{ 1, { 0x48 }, 0, "a lone REX prefix: does not decode" },
};

static void test_table(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = kprobe_boostable(cases[i].code, cases[i].len);

		if (got != cases[i].boostable)
			fprintf(stderr, "kprobe_boostable(%s) = %d\n", cases[i].what, got);
		CU_ASSERT_EQUAL(got, cases[i].boostable);
	}
}

/* cfg_build flags what the kernel will not copy; a plain mov stays free. */
static void test_cfg_flags(void)
{
	/* mov %rdi,%rax; testb $4,0x10(%rdi); shl $3,%rax; ret */
	static const uint8_t code[] = { 0x48, 0x89, 0xf8, 0xf6, 0x47, 0x10, 0x04,
					0x48, 0xc1, 0xe0, 0x03, 0xc3 };
	struct cfg_input in = { .name = "f", .addr = 0x1000, .code = code, .len = sizeof(code) };
	struct cfg c = { 0 };

	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.ninsns, 4);
	CU_ASSERT(!(c.insns[0].flags & CFG_IF_OPTPROBE_UNSAFE));
	CU_ASSERT(c.insns[1].flags & CFG_IF_OPTPROBE_UNSAFE);
	CU_ASSERT(c.insns[2].flags & CFG_IF_OPTPROBE_UNSAFE);
	CU_ASSERT(!(c.insns[3].flags & CFG_IF_OPTPROBE_UNSAFE));	/* ret ends a window */
	cfg_free(&c);
}

/* The window rule on CFG instructions: kinds, fixups, bytes. */
static void test_window_unsafe(void)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xdf }, ret[] = { 0xc3 },
			     thunk[] = { 0xe9, 0, 0, 0, 0 }, jne[] = { 0x75, 0x05 };
	struct cfg_insn in = { .kind = CFG_I_PLAIN };

	CU_ASSERT(!kprobe_window_unsafe(&in, mov, sizeof(mov)));
	in.flags = CFG_IF_FAULT_FIXUP;
	CU_ASSERT(kprobe_window_unsafe(&in, mov, sizeof(mov)));
	in.flags = 0;
	in.kind = CFG_I_RET;
	CU_ASSERT(!kprobe_window_unsafe(&in, ret, sizeof(ret)));
	CU_ASSERT(kprobe_window_unsafe(&in, thunk, sizeof(thunk)));	/* jmp __x86_return_thunk */
	in.kind = CFG_I_JCC;
	CU_ASSERT(kprobe_window_unsafe(&in, jne, sizeof(jne)));
	in.kind = CFG_I_CALL;
	CU_ASSERT(kprobe_window_unsafe(&in, thunk, sizeof(thunk)));
}

UNIT_SUITE(kprobe_boost,
	   { "6.1 can_boost: boostable and refused encodings", test_table },
	   { "cfg_build flags unboostable instructions", test_cfg_flags },
	   { "the window rule on CFG instructions", test_window_unsafe })
