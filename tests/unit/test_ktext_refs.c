// SPDX-License-Identifier: GPL-2.0
/*
 * Indirect jmps in vmlinux functions on a fake live kernel (the image as
 * /proc/kcore, `nm` of it as /proc/kallsyms): one whose function no data
 * points into is an indirect tail call; one whose function a .rodata table
 * points into (a computed goto) is refused; without .rodata/.data bounds
 * in kallsyms nothing is proven and both are refused.
 */
#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

#include "fake_kcore.h"
#include "unit.h"

static const char text[] =
	"	.text\n	.globl _stext\n_stext:\n"
	"	.globl tailer\n	.type tailer,@function\ntailer:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	mov 8(%rdi),%rax\n	jmp *%rax\n"
	"	.size tailer, .-tailer\n	int3\n"
	"	.globl gotoer\n	.type gotoer,@function\ngotoer:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	mov table(,%rdi,8),%rax\n	jmp *%rax\n"
	".Linside: mov $1,%eax\n	jmp __x86_return_thunk\n"
	"	.size gotoer, .-gotoer\n	int3\n"
	"	.globl _etext\n_etext:\n"
	"	.section .rodata\n	.globl __start_rodata\n__start_rodata:\n"
	"table:	.quad .Linside\n	.quad tailer\n"
	"	.globl __end_rodata\n__end_rodata:\n"
	"	.globl __start___ex_table, __stop___ex_table, __start___jump_table\n"
	"	.globl __stop___jump_table, __start___bug_table, __stop___bug_table\n"
	"__start___ex_table: __stop___ex_table: __start___jump_table: __stop___jump_table:\n"
	"__start___bug_table: __stop___bug_table:\n"
	"	.data\n	.globl _sdata\n_sdata:\n	.quad gotoer\n	.globl _edata\n_edata:\n";

static int kind_of_jmp(struct klive *k, const char *fn, const char **refusal)
{
	struct cfg_input in;
	struct cfg c;
	const char *tag;
	char detail[160];
	uint32_t i;
	int kind = -1;

	*refusal = NULL;
	CU_ASSERT_EQUAL_FATAL(klive_input(k, fn, NULL, &in, &tag, detail, sizeof(detail)), 0);
	if (cfg_build(&in, &c)) {
		*refusal = c.refusal;
		cfg_free(&c);
		return -1;
	}
	for (i = 0; i < c.ninsns; i++)
		if (c.insns[i].kind == CFG_I_TAIL_CALL)
			kind = CFG_I_TAIL_CALL;
	cfg_free(&c);
	return kind;
}

static void run(int with_bounds)
{
	struct klive *k = fake_kernel_open("t", text,
					   with_bounds ? NULL : "rodata -e _sdata -e _edata");
	const char *why;

	CU_ASSERT_PTR_NOT_NULL_FATAL(k);
	if (with_bounds) {
		CU_ASSERT_EQUAL(kind_of_jmp(k, "tailer", &why), CFG_I_TAIL_CALL);
	} else {
		CU_ASSERT_EQUAL(kind_of_jmp(k, "tailer", &why), -1);
		CU_ASSERT_PTR_NOT_NULL(why);
		if (why)
			CU_ASSERT_STRING_EQUAL(why, "indirect-jump");
	}
	/* .rodata's table points at .Linside: a computed goto, never a tail call. */
	CU_ASSERT_EQUAL(kind_of_jmp(k, "gotoer", &why), -1);
	CU_ASSERT_PTR_NOT_NULL(why);
	if (why)
		CU_ASSERT_STRING_EQUAL(why, "indirect-jump");
	klive_close(k);
}

static void test_proven(void)
{
	run(1);
}

static void test_unproven(void)
{
	run(0);
}

UNIT_SUITE(ktext_refs,
	   { "indirect jmp: tail call unless data points inside", test_proven },
	   { "without data bounds in kallsyms nothing is proven", test_unproven })
