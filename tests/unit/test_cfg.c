// SPDX-License-Identifier: GPL-2.0
/*
 * CFG recovery on small functions assembled at test time. Each expected
 * CFG is worked out by hand from the assembly (offsets from the encodings
 * noted in the comments), so the test does not mirror the implementation.
 */
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/graph.h>

#include "cfg_asm.h"
#include "unit.h"

#define HDR(f) "\t.text\n\t.globl " f "\n\t.type " f ",@function\n" f ":\n"
#define END(f) "\t.size " f ", .-" f "\n"

static char buf[1024];

/* Builds func from text and compares its canonical form with want. */
static void expect_cfg(const char *text, const char *func, const char *want, struct cfg *c)
{
	int err = cfg_asm_build(text, func, c);

	CU_ASSERT_EQUAL_FATAL(err, 0);
	CU_ASSERT_STRING_EQUAL(cfg_asm_describe(c, buf, sizeof(buf)), want);
	if (strcmp(buf, want))
		fprintf(stderr, "\n%s: got  %s\n%s: want %s\n", func, buf, func, want);
}

static const struct cfg_insn *insn_at(const struct cfg *c, uint64_t off)
{
	for (uint32_t i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr == c->addr + off)
			return &c->insns[i];
	return NULL;
}

static void expect_refusal(const char *text, const char *func, const char *tag)
{
	struct cfg c;
	int err = cfg_asm_build(text, func, &c);

	if (!c.refusal || strcmp(c.refusal, tag))
		fprintf(stderr, "\n%s: err %d refusal %s (%s), want %s\n", func, err,
			c.refusal ? c.refusal : "none", c.detail, tag);
	CU_ASSERT_EQUAL(err, -PT_EREFUSED);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c.refusal);
	CU_ASSERT_STRING_EQUAL(c.refusal, tag);
	CU_ASSERT(strlen(c.detail) > 0);
	cfg_free(&c);
}

static const char diamond[] =
	HDR("diamond")
	"	call __fentry__\n"		/* 0, 5 bytes */
	"	test %edi,%edi\n"		/* 5, 2 */
	"	je 1f\n"			/* 7, 2 */
	"	mov $1,%eax\n"			/* 9, 5 */
	"	jmp 2f\n"			/* e, 2 */
	"1:	mov $2,%eax\n"			/* 10, 5 */
	"2:	jmp __x86_return_thunk\n"	/* 15, 5: a return */
	END("diamond");

static void test_diamond(void)
{
	struct cfg c;
	const struct cfg_insn *i;
	struct graph g;

	expect_cfg(diamond, "diamond", "0: F1 T2; 9: J3; 10: F3; 15: E", &c);
	i = insn_at(&c, 0);
	CU_ASSERT(i && i->kind == CFG_I_FENTRY);
	i = insn_at(&c, 7);
	CU_ASSERT(i && i->kind == CFG_I_JCC && i->cc == 0x4 && i->target == c.addr + 0x10);
	i = insn_at(&c, 0x15);
	CU_ASSERT(i && i->kind == CFG_I_RET);
	CU_ASSERT(insn_at(&c, 0x10) && (insn_at(&c, 0x10)->flags & CFG_IF_BRANCH_TARGET));
	CU_ASSERT_EQUAL(c.ninsns, 7);
	CU_ASSERT_EQUAL(c.blocks[0].flags & CFG_BF_ENTRY, CFG_BF_ENTRY);
	CU_ASSERT_EQUAL(cfg_block_at(&c, c.addr + 0x12), 2);
	CU_ASSERT_EQUAL(cfg_block_at(&c, c.addr + 0x7), 0);
	CU_ASSERT_EQUAL(cfg_block_at(&c, c.addr + 0x1a), UINT32_MAX);
	CU_ASSERT_EQUAL_FATAL(cfg_to_graph(&c, &g), 0);
	CU_ASSERT_EQUAL(g.nv, 5);
	CU_ASSERT_EQUAL(g.ne, 5);
	CU_ASSERT_EQUAL(g.exit, 4);
	CU_ASSERT_EQUAL(graph_in_degree(&g, 3), 2);
	graph_free(&g);
	cfg_free(&c);
}

/*
 * CONFIG_X86_KERNEL_IBT (Debian's 6.12): an ENDBR first, the __fentry__
 * site after it; in live code the site is a nop5 and an unused ENDBR is
 * sealed with a 4-byte nop (66 0f 1f 00, as 6.12's vfs_read starts).
 */
static void test_ibt_entry(void)
{
	static const char *const entries[] = {
		"	endbr64\n	call __fentry__\n",
		"	endbr64\n	.byte 0x0f,0x1f,0x44,0,0\n",
		"	.byte 0x66,0x0f,0x1f,0x00\n	.byte 0x0f,0x1f,0x44,0,0\n",
		"	.byte 0x0f,0x1f,0x40,0xd6\n	.byte 0x0f,0x1f,0x44,0,0\n",
	};
	char text[512];
	const struct cfg_insn *i;
	struct cfg c;
	unsigned int k;

	for (k = 0; k < sizeof(entries) / sizeof(entries[0]); k++) {
		snprintf(text, sizeof(text), "%s%s%s", HDR("ibt"), entries[k],
			 "	test %edi,%edi\n"	/* 9 */
			 "	je 1f\n"		/* b */
			 "	mov $1,%eax\n"		/* d */
			 "1:	jmp __x86_return_thunk\n"	/* 12 */
			 END("ibt"));
		expect_cfg(text, "ibt", "0: F1 T2; d: F2; 12: E", &c);
		i = insn_at(&c, 0);
		CU_ASSERT(i && i->kind == CFG_I_PLAIN && (i->flags & CFG_IF_ENTRY_ENDBR));
		i = insn_at(&c, 4);
		CU_ASSERT(i && i->kind == CFG_I_FENTRY && !(i->flags & CFG_IF_ENTRY_ENDBR));
		cfg_free(&c);
	}
	/* a nop5 that is not right after the entry's ENDBR is no fentry site */
	expect_cfg(HDR("late") "	endbr64\n	nop\n	.byte 0x0f,0x1f,0x44,0,0\n"
		   "	jmp __x86_return_thunk\n" END("late"), "late", "0: E", &c);
	i = insn_at(&c, 5);
	CU_ASSERT(i && i->kind == CFG_I_PLAIN);
	cfg_free(&c);
	/* a call or jmp into a callee's padding (call-depth tracking) is refused */
	expect_refusal(HDR("cdt") "	call __fentry__\n	call __pfx_callee\n"
		       "	jmp __x86_return_thunk\n" END("cdt")
		       "	.section .text.callee\n	.globl __pfx_callee\n__pfx_callee:\n"
		       "	.fill 16,1,0x90\n"
		       "	.globl callee\ncallee:\n	ret\n", "cdt", "call-depth");
	expect_refusal(HDR("cdtj") "	call __fentry__\n	jmp __pfx_callee\n" END("cdtj")
		       "	.section .text.callee\n	.globl __pfx_callee\n__pfx_callee:\n"
		       "	.fill 16,1,0x90\n"
		       "	.globl callee\ncallee:\n	ret\n", "cdtj", "call-depth");
	/* and an ENDBR that is not the entry is an instruction like others */
	expect_cfg(HDR("inner") "	call __fentry__\n	endbr64\n"
		   "	jmp __x86_return_thunk\n" END("inner"), "inner", "0: E", &c);
	i = insn_at(&c, 5);
	CU_ASSERT(i && !(i->flags & CFG_IF_ENTRY_ENDBR));
	CU_ASSERT(insn_at(&c, 0) && insn_at(&c, 0)->kind == CFG_I_FENTRY);
	cfg_free(&c);
}

static void test_loop(void)
{
	struct cfg c;

	expect_cfg(HDR("loop")
		   "	call __fentry__\n"	/* 0 */
		   "	xor %eax,%eax\n"	/* 5, 2 */
		   "1:	add %edi,%eax\n"	/* 7, 2 */
		   "	dec %edi\n"		/* 9, 2 */
		   "	jnz 1b\n"		/* b, 2 */
		   "	ret\n"			/* d */
		   END("loop"), "loop", "0: F1; 7: F2 T1; d: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 0xb)->cc, 0x5);
	cfg_free(&c);
}

static void test_multi_exit_loop(void)
{
	struct cfg c;

	expect_cfg(HDR("mexit")
		   "	call __fentry__\n"	/* 0 */
		   "1:	test %edi,%edi\n"	/* 5, 2 */
		   "	js 2f\n"		/* 7, 2 */
		   "	cmp $5,%edi\n"		/* 9, 3 */
		   "	je 3f\n"		/* c, 2 */
		   "	dec %edi\n"		/* e, 2 */
		   "	jmp 1b\n"		/* 10, 2 */
		   "2:	mov $1,%eax\n"		/* 12, 5 */
		   "	ret\n"			/* 17 */
		   "3:	xor %eax,%eax\n"	/* 18, 2 */
		   "	ret\n"			/* 1a */
		   END("mexit"), "mexit", "0: F1; 5: F2 T4; 9: F3 T5; e: J1; 12: E; 18: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 7)->cc, 0x8);
	cfg_free(&c);
}

static void test_irreducible(void)
{
	struct cfg c;

	/* Two entries into the cycle {9, d}: from 0 to either. */
	expect_cfg(HDR("irred")
		   "	call __fentry__\n"	/* 0 */
		   "	test %edi,%edi\n"	/* 5 */
		   "	je 2f\n"		/* 7 */
		   "1:	dec %esi\n"		/* 9 */
		   "	jz 3f\n"		/* b */
		   "2:	dec %edx\n"		/* d */
		   "	jnz 1b\n"		/* f */
		   "3:	ret\n"			/* 11 */
		   END("irred"), "irred", "0: F1 T2; 9: F2 T3; d: F3 T1; 11: E", &c);
	cfg_free(&c);
}

static void test_tail_call(void)
{
	struct cfg c;

	expect_cfg(HDR("tail")
		   "	call __fentry__\n"	/* 0 */
		   "	test %edi,%edi\n"	/* 5 */
		   "	jne other_func\n"	/* 7, 6: conditional tail call */
		   "	jmp another_func\n"	/* d, 5: tail call */
		   END("tail"), "tail", "0: F1 TE; d: E", &c);
	CU_ASSERT(insn_at(&c, 7)->flags & CFG_IF_LEAVES);
	CU_ASSERT_EQUAL(insn_at(&c, 7)->cc, 0x5);
	CU_ASSERT_EQUAL(insn_at(&c, 0xd)->kind, CFG_I_TAIL_CALL);
	CU_ASSERT_PTR_NOT_NULL(insn_at(&c, 0xd)->target_name);
	cfg_free(&c);
}

static void test_return_thunk_and_int3(void)
{
	struct cfg c;

	/* ret + int3 (straight-line speculation) and padding inside the symbol. */
	expect_cfg(HDR("rthunk")
		   "	call __fentry__\n"		/* 0 */
		   "	test %edi,%edi\n"		/* 5 */
		   "	jne 1f\n"			/* 7 */
		   "	jmp __x86_return_thunk\n"	/* 9, 5 */
		   "	int3\n"				/* e */
		   "1:	ret\n"				/* f */
		   "	int3\n	int3\n	int3\n"		/* 10..12 padding */
		   END("rthunk"), "rthunk", "0: F1 T2; 9: E; f: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 9)->kind, CFG_I_RET);
	CU_ASSERT_STRING_EQUAL(insn_at(&c, 9)->target_name, "__x86_return_thunk");
	CU_ASSERT_EQUAL(c.ninsns, 5);	/* int3s are not instructions of the CFG */
	CU_ASSERT_PTR_NULL(insn_at(&c, 0xe));
	cfg_free(&c);
}

static void test_noreturn(void)
{
	struct cfg c;
	static const char text[] =
		HDR("die_local")
		"	call __fentry__\n"
		"	call panic\n"
		END("die_local")
		HDR("nor")
		"	call __fentry__\n"	/* 0 */
		"	test %edi,%edi\n"	/* 5 */
		"	jne 1f\n"		/* 7, 2 */
		"	call panic\n"		/* 9, 5: built-in noreturn */
		"1:	cmp $1,%esi\n"		/* e, 3 */
		"	jne 2f\n"		/* 11, 2 */
		"	call die_local\n"	/* 13, 5: local dead end */
		"2:	call helper\n"		/* 18, 5: returns */
		"	test %eax,%eax\n"	/* 1d, 2 */
		"	je 3f\n"		/* 1f, 2 */
		"	ret\n"			/* 21 */
		"3:	call mystery\n"		/* 22, 5: last: inferred noreturn */
		END("nor");

	expect_cfg(text, "nor", "0: F1 T2; 9: E; e: F3 T4; 13: E; 18: C5; 1d: F6 T7; 21: E; 22: E",
		   &c);
	CU_ASSERT_EQUAL(insn_at(&c, 9)->kind, CFG_I_CALL_NORETURN);
	CU_ASSERT_EQUAL(insn_at(&c, 0x13)->kind, CFG_I_CALL_NORETURN);
	CU_ASSERT_FALSE(insn_at(&c, 0x13)->flags & CFG_IF_NORETURN_INFERRED);
	CU_ASSERT_EQUAL(insn_at(&c, 0x18)->kind, CFG_I_CALL);
	CU_ASSERT(c.blocks[4].flags & CFG_BF_CALL);
	CU_ASSERT_FALSE(c.blocks[1].flags & CFG_BF_CALL);
	CU_ASSERT_EQUAL(insn_at(&c, 0x22)->kind, CFG_I_CALL_NORETURN);
	CU_ASSERT(insn_at(&c, 0x22)->flags & CFG_IF_NORETURN_INFERRED);
	cfg_free(&c);
}

static void test_static_key(void)
{
	struct cfg c;
	static const char text[] =
		HDR("key")
		"	call __fentry__\n"		/* 0 */
		"1:	.byte 0x0f,0x1f,0x44,0,0\n"	/* 5: nop5 key site */
		"	mov $1,%eax\n"			/* a, 5 */
		"	ret\n"				/* f */
		"2:	mov $2,%eax\n"			/* 10, 5 */
		"3:	jmp 4f\n"			/* 15, 2: jmp key site */
		"	ret\n"				/* 17: only reached as the nop */
		"4:	xor %eax,%eax\n"		/* 18, 2 */
		"	ret\n"				/* 1a */
		END("key")
		"	.pushsection __jump_table,\"aw\"\n"
		"	.balign 8\n"
		"	.long 1b - ., 2b - .\n	.quad some_key - .\n"
		"	.long 3b - ., 4b - .\n	.quad some_key + 1 - .\n"
		"	.popsection\n";

	expect_cfg(text, "key", "0: k1 K2; a: E; 10: k3 K4; 17: E; 18: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 5)->kind, CFG_I_KEY);
	CU_ASSERT_EQUAL(insn_at(&c, 0x15)->kind, CFG_I_KEY);
	/* the live state, for the weighting: off at the nop, on at the jmp */
	CU_ASSERT_EQUAL(insn_at(&c, 5)->cc, 0);
	CU_ASSERT_EQUAL(insn_at(&c, 0x15)->cc, CFG_KEY_ON);
	cfg_free(&c);
}

static void test_cold_split(void)
{
	struct cfg c;
	static const char text[] =
		"	.section .text.unlikely,\"ax\"\n"
		"	nop\n	nop\n"			/* something before f.cold */
		HDR("f")
		"	call __fentry__\n"	/* 0 */
		"	test %edi,%edi\n"	/* 5 */
		"	jne .Lcold\n"		/* 7, 6: into .text.unlikely */
		".Lback: xor %eax,%eax\n"	/* d */
		"	ret\n"			/* f */
		END("f")
		"	.section .text.unlikely,\"ax\"\n"
		"	.type f.cold,@function\n"
		"f.cold:\n"
		".Lcold: mov $1,%eax\n"		/* c0, 5 */
		"	jmp .Lback\n"		/* c5, 5: back into f */
		"	.size f.cold, .-f.cold\n";

	expect_cfg(text, "f", "0: F1 T2; d: E; c0: J1", &c);
	CU_ASSERT_EQUAL(c.cold_len, 10);
	CU_ASSERT(c.blocks[2].flags & CFG_BF_COLD);
	CU_ASSERT_FALSE(c.blocks[1].flags & CFG_BF_COLD);
	CU_ASSERT_EQUAL(cfg_block_at(&c, c.cold_addr + 6), 2);
	cfg_free(&c);
}

static void test_fixup(void)
{
	struct cfg c;
	static const char text[] =
		HDR("fx")
		"	call __fentry__\n"	/* 0 */
		"1:	mov (%rdi),%eax\n"	/* 5, 2: may fault */
		"	add $1,%eax\n"		/* 7, 3 */
		"	ret\n"			/* a */
		"2:	mov $-14,%eax\n"	/* b, 5: fixup, only reached by the fault */
		"	ret\n"			/* 10 */
		END("fx")
		"	.pushsection __ex_table,\"a\"\n"
		"	.balign 4\n"
		"	.long 1b - ., 2b - ., 1\n"
		"	.popsection\n";

	expect_cfg(text, "fx", "0: F1 X2; 7: E; b: E", &c);
	CU_ASSERT(insn_at(&c, 5)->flags & CFG_IF_FAULT_FIXUP);
	CU_ASSERT_EQUAL(insn_at(&c, 5)->target, c.addr + 0xb);
	cfg_free(&c);
}

static void test_warn_bug(void)
{
	struct cfg c;
	static const char text[] =
		HDR("wb")
		"	call __fentry__\n"	/* 0 */
		"	test %edi,%edi\n"	/* 5 */
		"	je 1f\n"		/* 7 */
		"2:	ud2\n"			/* 9: WARN */
		"	ret\n"			/* b */
		"1:	ud2\n"			/* c: BUG */
		END("wb")
		HDR("bare")
		"	call __fentry__\n"
		"	ud2\n"			/* no bug-table entry */
		"	ret\n"
		END("bare")
		"	.pushsection __bug_table,\"aw\"\n"
		"	.long 2b - ., 0\n	.word 10, 1\n"	/* BUGFLAG_WARNING */
		"	.long 1b - ., 0\n	.word 20, 0\n"
		"	.popsection\n";

	expect_cfg(text, "wb", "0: F1 T3; 9: F2; b: E; c: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 9)->kind, CFG_I_WARN);
	CU_ASSERT_EQUAL(insn_at(&c, 0xc)->kind, CFG_I_BUG);
	cfg_free(&c);
	/* A ud2 without an entry dies in handle_bug: the path ends there. */
	expect_cfg(text, "bare", "0: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 5)->kind, CFG_I_BUG);
	CU_ASSERT_EQUAL(c.ninsns, 2);
	cfg_free(&c);
}

static void test_padding_after_call(void)
{
	struct cfg c;

	/* A live size reaches the next symbol: padding after the last call. */
	expect_cfg(HDR("padcall")
		   "	call __fentry__\n"
		   "	test %edi,%edi\n"		/* 5 */
		   "	je 1f\n"			/* 7 */
		   "	ret\n"				/* 9 */
		   "1:	call mystery\n"		/* a: never returns */
		   "	int3\n	int3\n	.byte 0x66,0x90\n	nopl (%rax)\n"
		   END("padcall"), "padcall", "0: F1 T2; 9: E; a: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 0xa)->kind, CFG_I_CALL_NORETURN);
	CU_ASSERT(insn_at(&c, 0xa)->flags & CFG_IF_NORETURN_INFERRED);
	cfg_free(&c);
	/* An int3 followed by code is a breakpoint on a live instruction: refused. */
	expect_refusal(HDR("bpcall")
		       "	call __fentry__\n"
		       "	call helper\n"
		       "	int3\n	.byte 0x89, 0xc0\n"	/* int3 over "mov %eax,%eax"'s first byte */
		       "	ret\n"
		       END("bpcall"), "bpcall", "int3-reached");
}

static void test_mitigation_return_thunk(void)
{
	struct cfg c;

	/* Live code may jump to the mitigation's thunk instead: still a return. */
	expect_cfg(HDR("srso")
		   "	call __fentry__\n"
		   "	jmp srso_alias_return_thunk\n"
		   END("srso"), "srso", "0: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 5)->kind, CFG_I_RET);
	cfg_free(&c);
}

static void test_indirect_tail_call(void)
{
	struct cfg c;

	/* No address inside is taken: the register jump can only leave. */
	expect_cfg(HDR("itail")
		   "	call __fentry__\n"
		   "	mov (%rdi),%rax\n"
		   "	jmp __x86_indirect_thunk_rax\n"
		   END("itail"), "itail", "0: E", &c);
	CU_ASSERT_EQUAL(insn_at(&c, 8)->kind, CFG_I_TAIL_CALL);
	cfg_free(&c);
}

static void test_refusals(void)
{
	/* A computed goto: the label's address is taken, so the jump may stay inside. */
	expect_refusal(HDR("ijmp")
		       "	call __fentry__\n"
		       "	lea 1f(%rip),%rax\n"
		       "	jmp *%rax\n"
		       "1:	ret\n"
		       END("ijmp"), "ijmp", "indirect-jump");
	expect_refusal(HDR("ijmp2")
		       "	call __fentry__\n"
		       "	lea 1f(%rip),%rax\n"
		       "	jmp __x86_indirect_thunk_rax\n"
		       "1:	ret\n"
		       END("ijmp2"), "ijmp2", "indirect-jump");
	expect_refusal(HDR("offend")
		       "	call __fentry__\n"
		       "	mov $1,%eax\n"
		       END("offend"), "offend", "runs-off-end");
	expect_refusal(HDR("offend2")
		       "	call __fentry__\n"
		       "	.byte 0xb8, 1, 0\n"	/* mov $imm32 cut short */
		       END("offend2"), "offend2", "runs-off-end");
	expect_refusal(HDR("undec")
		       "	call __fentry__\n"
		       "	.byte 0x06\n"		/* push %es: invalid in 64-bit mode */
		       "	ret\n"
		       END("undec"), "undec", "undecodable");
	expect_refusal(HDR("mid")
		       "	call __fentry__\n"
		       "	test %edi,%edi\n"
		       "	je 1f+1\n"
		       "1:	mov $0xc3c3c3c3,%eax\n"
		       "	ret\n"
		       END("mid"), "mid", "mid-insn-target");
	expect_refusal(HDR("lp")
		       "	call __fentry__\n"
		       "1:	loop 1b\n"
		       "	ret\n"
		       END("lp"), "lp", "loop-insn");
	expect_refusal(HDR("int3r")
		       "	call __fentry__\n"
		       "	int3\n"
		       "	ret\n"
		       END("int3r"), "int3r", "int3-reached");
	expect_refusal(HDR("kp")
		       "	call __fentry__\n"
		       "	jmp kprobe_optinsn_page\n"	/* an optimized kprobe's detour */
		       END("kp"), "kp", "kprobe-present");
	expect_refusal(HDR("far")
		       "	call __fentry__\n"
		       "	jmp somewhere_else+5\n"	/* not a function start: unknown */
		       END("far"), "far", "bad-reloc");
}

/* Live code at 0xffffffff81000000 whose source proved its indirect jmps leave. */
static void live_input(struct cfg_input *in, const uint8_t *code, uint32_t len)
{
	memset(in, 0, sizeof(*in));
	in->name = "live";
	in->addr = 0xffffffff81000000ull;
	in->code = code;
	in->len = len;
	in->indirect_jumps_leave = 1;
}

/* Live code has no relocations: an absolute label address as an immediate still counts. */
static void test_live_taken_address(void)
{
	static uint8_t code[] = {
		0x48, 0xc7, 0xc0, 0x0c, 0x00, 0x00, 0x81,	/* mov $0xffffffff8100000c,%rax */
		0xff, 0xe0,					/* jmp *%rax */
		0x90, 0x90, 0x90,
		0xc3,						/* c: ret */
	};
	struct cfg_input in;
	struct cfg c;

	live_input(&in, code, sizeof(code));
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EREFUSED);
	CU_ASSERT(c.refusal && !strcmp(c.refusal, "indirect-jump"));
	cfg_free(&c);
	memset(code, 0x90, 7);	/* no address taken: the jmp is an indirect tail call */
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	CU_ASSERT_EQUAL(c.nblocks, 1);
	CU_ASSERT_EQUAL(c.insns[c.ninsns - 1].kind, CFG_I_TAIL_CALL);
	cfg_free(&c);
	in.indirect_jumps_leave = 0;	/* no proof from the source: refused */
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EREFUSED);
	cfg_free(&c);
}

/*
 * What counts as taking an address inside, and what a refusal says: the
 * entry is no inner address (a jmp there calls the function); an absolute
 * displacement is one; the source's reason appears in the detail.
 */
static void test_live_taken_detail(void)
{
	static uint8_t entry[] = {
		0x48, 0xc7, 0xc0, 0x00, 0x00, 0x00, 0x81,	/* mov $0xffffffff81000000,%rax */
		0xff, 0xe0,					/* jmp *%rax */
	};
	static uint8_t disp[] = {
		0x48, 0x8b, 0x04, 0xfd, 0x0e, 0x00, 0x00, 0x81,	/* mov 0xffffffff8100000e(,%rdi,8),%rax */
		0xff, 0xe0,					/* jmp *%rax */
		0x90, 0x90, 0x90, 0x90,
		0xc3,						/* e: ret */
	};
	struct cfg_input in;
	struct cfg c;

	live_input(&in, entry, sizeof(entry));
	CU_ASSERT_EQUAL(cfg_build(&in, &c), 0);
	cfg_free(&c);
	live_input(&in, disp, sizeof(disp));
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EREFUSED);
	CU_ASSERT_STRING_EQUAL(c.detail, "live+0x8: indirect jmp, and the code at live+0x0 "
			       "takes the address live+0xe");
	cfg_free(&c);
	live_input(&in, entry, sizeof(entry));
	in.indirect_jumps_leave = 0;
	in.ijmp_unproven = ".rodata word at 0x1000 points to live+0x2";
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EREFUSED);
	CU_ASSERT_STRING_EQUAL(c.detail, "live+0x7: jmp through a register [ff e0] (.rodata "
			       "word at 0x1000 points to live+0x2)");
	cfg_free(&c);
}

static void test_bad_input(void)
{
	struct cfg_input in;
	struct cfg c;

	memset(&in, 0, sizeof(in));
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EINVAL);
	CU_ASSERT_EQUAL(cfg_build(NULL, &c), -PT_EINVAL);
	cfg_free(&c);
}

UNIT_SUITE(cfg,
	   { "diamond, return thunk, block lookup, graph", test_diamond },
	   { "ENDBR entry: fentry site after it", test_ibt_entry },
	   { "loop", test_loop },
	   { "multi-exit loop", test_multi_exit_loop },
	   { "irreducible loop", test_irreducible },
	   { "tail call and conditional tail call", test_tail_call },
	   { "return thunk, int3 after ret, padding", test_return_thunk_and_int3 },
	   { "noreturn: built-in, local dead end, inferred", test_noreturn },
	   { "static-key sites (nop5 and jmp8)", test_static_key },
	   { ".cold split", test_cold_split },
	   { "exception-table fixup", test_fixup },
	   { "WARN vs BUG ud2", test_warn_bug },
	   { "indirect tail call", test_indirect_tail_call },
	   { "mitigation return thunk is a return", test_mitigation_return_thunk },
	   { "padding after a last call; a breakpoint is not padding", test_padding_after_call },
	   { "refusals", test_refusals },
	   { "live code: immediate label address blocks the tail call", test_live_taken_address },
	   { "live code: entry not inner, displacement inner, refusal detail",
	     test_live_taken_detail },
	   { "bad input", test_bad_input })
