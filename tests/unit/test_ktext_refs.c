// SPDX-License-Identifier: GPL-2.0
/*
 * Indirect jmps in vmlinux functions on a fake live kernel (the image as
 * /proc/kcore, `nm` of it as /proc/kallsyms): one whose function no data
 * word points into, or only at its entry, is an indirect tail call; one
 * whose function (or .cold part) a data word points inside is refused, and
 * the refusal names the word; without .rodata/.data bounds in kallsyms
 * nothing is proven. And the scan itself: which words it keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

#include "../../userspace/lib/source/ktext_refs.h"
#include "fake_kcore.h"
#include "unit.h"

#define VBASE 0xffffffff81000000ull

/*
 * plain: no word anywhere points to it. tailer: only at its entry (.rodata
 * and .data). gotoer: .rodata's table points at .Linside (a computed goto).
 * coldy: .data points at its .cold part. The other words must be dropped:
 * _etext and a small number are not in text, .Lodd is not 8-byte aligned.
 */
static const char text[] =
	"	.text\n	.globl _stext\n_stext:\n"
	"	.globl plain\n	.type plain,@function\nplain:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	mov 16(%rdi),%rax\n	jmp *%rax\n"
	"	.size plain, .-plain\n	int3\n"
	"	.globl tailer\n	.type tailer,@function\ntailer:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	mov 8(%rdi),%rax\n	jmp *%rax\n"
	"	.size tailer, .-tailer\n	int3\n"
	"	.globl gotoer\n	.type gotoer,@function\ngotoer:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	mov table(,%rdi,8),%rax\n	jmp *%rax\n"
	".Linside: mov $1,%eax\n	jmp __x86_return_thunk\n"
	"	.size gotoer, .-gotoer\n	int3\n"
	"	.globl coldy\n	.type coldy,@function\ncoldy:\n"
	"	.byte 0x0f,0x1f,0x44,0,0\n	test %edi,%edi\n	jne coldy.cold\n"
	"	mov 8(%rdi),%rax\n	jmp *%rax\n"
	"	.size coldy, .-coldy\n	int3\n"
	"	.type coldy.cold,@function\ncoldy.cold:\n"
	"	mov $2,%eax\n	jmp __x86_return_thunk\n"
	"	.size coldy.cold, .-coldy.cold\n	int3\n"
	"	.globl _etext\n_etext:\n"
	"	.section .rodata\n	.globl __start_rodata\n__start_rodata:\n"
	"table:	.quad .Linside\n	.quad tailer\n	.quad _etext\n	.quad 0x1234\n"
	"	.byte 1\n.Lodd:	.quad plain+1\n	.balign 8\n"
	"	.globl __end_rodata\n__end_rodata:\n"
	"	.globl __start___ex_table, __stop___ex_table, __start___jump_table\n"
	"	.globl __stop___jump_table, __start___bug_table, __stop___bug_table\n"
	"__start___ex_table: __stop___ex_table: __start___jump_table: __stop___jump_table:\n"
	"__start___bug_table: __stop___bug_table:\n"
	"	.data\n	.globl _sdata\n_sdata:\n	.quad gotoer\n	.quad tailer\n"
	"	.quad coldy.cold\n	.globl _edata\n_edata:\n";

/* The fake kernel, with the data bounds in kallsyms or without them. */
static void make_fake(int with_bounds, struct fake_kernel *fk)
{
	CU_ASSERT_FATAL(make_fake_kernel("t", text, 0xffffffff81003000ull,
					 with_bounds ? NULL : "-e rodata -e _sdata -e _edata", fk) >= 2);
}

/* CFG_I_TAIL_CALL if fn's CFG has an indirect tail call, else -1 with the refusal. */
static int kind_of_jmp(struct klive *k, const char *fn, const char **refusal, char *detail,
		       size_t n)
{
	struct cfg_input in;
	struct cfg c;
	const char *tag;
	uint32_t i;
	int kind = -1;

	*refusal = NULL;
	detail[0] = 0;
	CU_ASSERT_EQUAL_FATAL(klive_input(k, fn, NULL, &in, &tag, detail, n), 0);
	if (cfg_build(&in, &c)) {
		*refusal = c.refusal;
		snprintf(detail, n, "%s", c.detail);
		cfg_free(&c);
		return -1;
	}
	for (i = 0; i < c.ninsns; i++)
		if (c.insns[i].kind == CFG_I_TAIL_CALL && !c.insns[i].target)
			kind = CFG_I_TAIL_CALL;
	cfg_free(&c);
	return kind;
}

static void expect_refused(struct klive *k, const char *fn, const char *why)
{
	const char *tag;
	char detail[256];

	CU_ASSERT_EQUAL(kind_of_jmp(k, fn, &tag, detail, sizeof(detail)), -1);
	CU_ASSERT_PTR_NOT_NULL(tag);
	if (tag)
		CU_ASSERT_STRING_EQUAL(tag, "indirect-jump");
	if (!strstr(detail, why)) {
		fprintf(stderr, "%s: detail '%s' lacks '%s'\n", fn, detail, why);
		CU_FAIL("refusal detail");
	}
}

static struct klive *open_fake(int with_bounds)
{
	static struct fake_kernel fk;	/* klive keeps the paths */
	struct klive_paths p;
	struct klive *k;

	make_fake(with_bounds, &fk);
	p = (struct klive_paths){ fk.kallsyms, fk.kcore, "/nonexistent", "/nonexistent" };
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	return k;
}

static void expect_leaves(const char *fn)
{
	struct klive *k = open_fake(1);
	const char *why;
	char d[256];

	CU_ASSERT_EQUAL(kind_of_jmp(k, fn, &why, d, sizeof(d)), CFG_I_TAIL_CALL);
	klive_close(k);
}

static void test_no_word_leaves(void)
{
	expect_leaves("plain");	/* .Lodd's plain+1 is not aligned: no pointer the scan keeps */
}

static void test_word_at_entry_leaves(void)
{
	expect_leaves("tailer");
}

static void test_word_inside_refuses(void)
{
	struct klive *k = open_fake(1);

	/* 5-byte nop, 8-byte mov, 2-byte jmp: .Linside is gotoer+0xf. */
	expect_refused(k, "gotoer", ".rodata word at 0xffffffff");
	expect_refused(k, "gotoer", "points to gotoer+0xf");
	expect_refused(k, "coldy", "points to coldy.cold+0x0");
	expect_refused(k, "coldy", ".data word at");
	klive_close(k);
}

static void test_unproven_without_bounds(void)
{
	struct klive *k = open_fake(0);

	expect_refused(k, "plain", "kernel data not scanned");
	expect_refused(k, "tailer", "kernel data not scanned");
	klive_close(k);
}

/* The scan: aligned words into [_stext, _etext) only, sorted by target, each where it is. */
static void test_scan(void)
{
	struct fake_kernel fk;
	struct ksyms *ks;
	struct kcore *kc;
	struct ktext_refs r;
	const struct ktext_ref *w;
	uint64_t gotoer, tailer, rodata, data;
	size_t i;

	make_fake(1, &fk);
	CU_ASSERT_EQUAL_FATAL(ksyms_load(fk.kallsyms, &ks), 0);
	CU_ASSERT_EQUAL_FATAL(kcore_open(fk.kcore, &kc), 0);
	gotoer = ksyms_addr(ks, "gotoer");
	tailer = ksyms_addr(ks, "tailer");
	rodata = ksyms_addr(ks, "__start_rodata");
	data = ksyms_addr(ks, "_sdata");
	CU_ASSERT_EQUAL_FATAL(ktext_refs_load(&r, ks, kc), 0);
	/* .Linside, tailer twice, gotoer, coldy.cold: not _etext, 0x1234 or .Lodd's. */
	CU_ASSERT_EQUAL(r.n, 5);
	for (i = 1; i < r.n; i++)
		CU_ASSERT(r.refs[i - 1].target <= r.refs[i].target);
	w = ktext_refs_in(&r, tailer, tailer + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->at, rodata + 8);	/* the lower of its two places */
	CU_ASSERT_STRING_EQUAL(ktext_refs_section(&r, w->at), ".rodata");
	w = ktext_refs_in(&r, gotoer, gotoer + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->at, data);
	CU_ASSERT_STRING_EQUAL(ktext_refs_section(&r, w->at), ".data");
	w = ktext_refs_in(&r, gotoer + 1, gotoer + 0x20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->target, gotoer + 0xf);
	CU_ASSERT_EQUAL(w->at, rodata);
	CU_ASSERT_PTR_NULL(ktext_refs_in(&r, tailer + 1, gotoer));	/* hi excluded */
	CU_ASSERT_PTR_NULL(ktext_refs_in(&r, 0, VBASE));
	CU_ASSERT_STRING_EQUAL(ktext_refs_section(&r, VBASE), "?");
	ktext_refs_free(&r);
	CU_ASSERT_EQUAL(r.n, 0);
	kcore_close(kc);
	ksyms_free(ks);
}

UNIT_SUITE(ktext_refs,
	   { "indirect jmp: no data word points to the function: tail call", test_no_word_leaves },
	   { "indirect jmp: words only at the entry: tail call", test_word_at_entry_leaves },
	   { "indirect jmp: a word inside or into .cold: refused, naming it",
	     test_word_inside_refuses },
	   { "without data bounds in kallsyms nothing is proven", test_unproven_without_bounds },
	   { "the scan keeps aligned words into text, sorted", test_scan })
