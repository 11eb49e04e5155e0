// SPDX-License-Identifier: GPL-2.0
/*
 * quiet_calls on a fake live kernel: functions assembled and linked at
 * vmlinux addresses, their image as /proc/kcore and `nm` of it as
 * /proc/kallsyms (as test_ksyms does). Each callee's verdict is worked out
 * by hand from the rules in quiet_calls.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>
#include <pathtrace/quiet_calls.h>

#include "fake_kcore.h"
#include "unit.h"

/* Each function starts at its __fentry__ site, patched to a nop5 as when untraced. */
#define FN(name, code) \
	"	.globl " name "\n	.type " name ",@function\n" name ":\n" \
	"	.byte 0x0f,0x1f,0x44,0,0\n" code "	.size " name ", .-" name "\n	int3\n"

static const char text[] =
	"	.text\n"
	FN("leaf", "	mov %edi,%eax\n	jmp __x86_return_thunk\n")
	FN("mid", "	call leaf\n	test %eax,%eax\n	jne 1f\n	call leaf\n"
	   "1:	jmp __x86_return_thunk\n")
	FN("tail", "	jmp mid\n")
	FN("indirect", "	call *%rax\n	jmp __x86_return_thunk\n")
	FN("traced", "	jmp __x86_return_thunk\n")
	FN("reaches_traced", "	call leaf\n	call traced\n	jmp __x86_return_thunk\n")
	FN("rec_a", "	test %edi,%edi\n	je 1f\n	call rec_b\n1:	jmp __x86_return_thunk\n")
	FN("rec_b", "	call rec_a\n	jmp __x86_return_thunk\n")
	FN("outside", "	call 0xffffffff81003000\n	jmp __x86_return_thunk\n")
	FN("caller", "	call leaf\n	call mid\n	call indirect\n	call reaches_traced\n"
	   "	call tail\n	call traced\n	jmp __x86_return_thunk\n")
	/* The kernel's tables, empty: klive needs to know there are none. */
	"	.section .rodata\n"
	"	.globl __start___ex_table, __stop___ex_table, __start___jump_table\n"
	"	.globl __stop___jump_table, __start___bug_table, __stop___bug_table\n"
	"__start___ex_table: __stop___ex_table: __start___jump_table: __stop___jump_table:\n"
	"__start___bug_table: __stop___bug_table:\n"
	"	.quad 0\n";

static uint64_t addr_of(struct klive *k, const char *name)
{
	int64_t i = ksyms_find(klive_ksyms(k), name, NULL);

	CU_ASSERT_FATAL(i >= 0);
	return ksyms_get(klive_ksyms(k), (uint32_t)i)->addr;
}

static void test_quiet_calls(void)
{
	struct fake_kernel fk;
	struct klive_paths p;
	struct quiet_calls *q;
	struct klive *k;
	struct cfg_input in;
	struct cfg c;
	const char *tag;
	char detail[160];
	uint64_t traced;
	uint32_t b, quiet = 0, calls = 0;

	CU_ASSERT_FATAL(make_fake_kernel("q", text, 0xffffffff81002000ull, NULL, &fk) >= 1);
	p = (struct klive_paths){ fk.kallsyms, fk.kcore, "/nonexistent", "/nonexistent" };
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	traced = addr_of(k, "traced");
	CU_ASSERT_EQUAL_FATAL(quiet_calls_open(k, &traced, 1, &q), 0);

	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "leaf")), 1);
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "mid")), 1);		/* calls only leaf */
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "tail")), 1);		/* tail call to mid */
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "indirect")), 0);
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "traced")), 0);
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "reaches_traced")), 0);
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "rec_a")), 0);	/* recursion: unproven */
	CU_ASSERT_EQUAL(quiet_call(q, addr_of(k, "outside")), 0);	/* into no function */
	CU_ASSERT_EQUAL(quiet_call(q, 0), 0);

	/* Why, for a human: the chain of loud callees and where it ends. */
	{
		char why[256];

		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "mid"), why, sizeof(why)), 1);
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "indirect"), why, sizeof(why)), 0);
		CU_ASSERT_STRING_EQUAL(why, "indirect+0x0: an indirect call at indirect+0x5");
		CU_ASSERT_EQUAL(quiet_call_why(q, traced, why, sizeof(why)), 0);
		CU_ASSERT_STRING_EQUAL(why, "traced+0x0: traced");
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "reaches_traced"), why, sizeof(why)), 0);
		CU_ASSERT_STRING_EQUAL(why, "reaches_traced+0x0 -> traced+0x0: traced");
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "rec_a"), why, sizeof(why)), 0);
		CU_ASSERT_STRING_EQUAL(why, "rec_a+0x0 -> rec_b+0x0: recursion at rec_a+0x0");
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "outside"), why, sizeof(why)), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, "outside+0x0 -> "));
		CU_ASSERT_PTR_NOT_NULL(strstr(why, ": its code is unknown or refused"));
		/* truncated, terminated */
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "reaches_traced"), why, 8), 0);
		CU_ASSERT_STRING_EQUAL(why, "reaches");
		CU_ASSERT_EQUAL(quiet_call_why(q, addr_of(k, "caller"), why, sizeof(why)),
				-PT_ENOENT);	/* never asked about */
		CU_ASSERT_EQUAL(quiet_call_why(q, 0, why, sizeof(why)), -PT_ENOENT);
		CU_ASSERT_EQUAL(quiet_call_why(q, traced, why, 0), -PT_EINVAL);
	}

	/* What tracing a function would break. */
	CU_ASSERT_EQUAL(quiet_call_reaches(q, addr_of(k, "tail"), addr_of(k, "leaf")), 1);
	CU_ASSERT_EQUAL(quiet_call_reaches(q, addr_of(k, "mid"), addr_of(k, "leaf")), 1);
	CU_ASSERT_EQUAL(quiet_call_reaches(q, addr_of(k, "mid"), traced), 0);
	CU_ASSERT_EQUAL(quiet_call_reaches(q, addr_of(k, "reaches_traced"), traced), 1);

	/* caller: leaf, mid and tail are quiet; indirect, reaches_traced and traced are not. */
	CU_ASSERT_EQUAL_FATAL(klive_input(k, "caller", NULL, &in, &tag, detail, sizeof(detail)),
			      0);
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	CU_ASSERT_EQUAL(quiet_calls_mark(q, &c), 3);
	for (b = 0; b < c.nblocks; b++) {
		calls += !!(c.blocks[b].flags & CFG_BF_CALL);
		quiet += !!(c.blocks[b].flags & CFG_BF_QUIET_CALL);
		CU_ASSERT_FALSE((c.blocks[b].flags & CFG_BF_CALL) &&
				(c.blocks[b].flags & CFG_BF_QUIET_CALL));
	}
	CU_ASSERT_EQUAL(quiet, 3);
	CU_ASSERT_EQUAL(calls, 3);
	cfg_free(&c);
	quiet_calls_close(q);
	klive_close(k);
}

UNIT_SUITE(quiet_calls, { "direct callees proven quiet on a fake live kernel", test_quiet_calls })
