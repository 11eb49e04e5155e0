// SPDX-License-Identifier: GPL-2.0
/* elfobj on objects assembled at test time: functions, .cold pairs, tables, names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>

#include "cfg_asm.h"
#include "unit.h"

#define FN(sec, f, body)                                                  \
	"	.section " sec ",\"ax\"\n	.type " f ",@function\n" f ":\n" body \
	"	.size " f ", .-" f "\n"

/* Two files' worth of static functions with the same names, linked as one. */
static const char dup_a[] =
	FN(".text", "h", "	call __fentry__\n	test %edi,%edi\n	jne .Lc\n.Lb: ret\n")
	FN(".text.unlikely", "h.cold", ".Lc:	call helper\n	jmp .Lb\n")
	FN(".noinstr.text", "quiet", "	ret\n");
static const char dup_b[] =
	FN(".text", "h", "	call __fentry__\n	xor %eax,%eax\n	test %esi,%esi\n	je .Ld\n.Le: ret\n")
	FN(".text.unlikely", "h.cold", ".Ld:	ud2\n	jmp .Le\n")
	"	.section __bug_table,\"aw\"\n	.long .Ld - ., 0\n	.word 1, 1\n";

static void test_functions_and_cold_pairs(void)
{
	char cmd[1024], out[300];
	struct elfobj *o;
	const struct elfobj_func *f;
	uint32_t i, nh = 0, ncold = 0, fx, ks, bs;
	int seen_noinstr = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("dup_a", dup_a));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("dup_b", dup_b));
	snprintf(cmd, sizeof(cmd), "cd %s && ld -r -o dup.o dup_a.o dup_b.o", cfg_asm_dir());
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	snprintf(out, sizeof(out), "%s/dup.o", cfg_asm_dir());
	CU_ASSERT_EQUAL_FATAL(elfobj_open(out, &o), 0);
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		f = elfobj_func(o, i);
		if (!strcmp(f->name, "h")) {
			nh++;
			CU_ASSERT_STRING_EQUAL(f->section, ".text");
			CU_ASSERT_NOT_EQUAL_FATAL(f->cold, ELFOBJ_NONE);
			CU_ASSERT_EQUAL(elfobj_func(o, f->cold)->parent, i);
		}
		if (!strcmp(f->name, "h.cold")) {
			ncold++;
			CU_ASSERT_STRING_EQUAL(f->section, ".text.unlikely");
		}
		if (!strcmp(f->name, "quiet")) {
			seen_noinstr = 1;
			CU_ASSERT_STRING_EQUAL(f->section, ".noinstr.text");
			CU_ASSERT_EQUAL(f->size, 1);
		}
	}
	CU_ASSERT_EQUAL(nh, 2);
	CU_ASSERT_EQUAL(ncold, 2);
	CU_ASSERT(seen_noinstr);
	/* Each h got its own cold part: build both and check the cold halves differ. */
	for (i = 0; i < elfobj_nfuncs(o); i++) {
		struct cfg_input in;
		struct cfg c;

		f = elfobj_func(o, i);
		if (f->parent != ELFOBJ_NONE) {
			CU_ASSERT_EQUAL(elfobj_input(o, i, &in), -PT_EINVAL);
			continue;
		}
		if (strcmp(f->name, "h"))
			continue;
		CU_ASSERT_EQUAL_FATAL(elfobj_input(o, i, &in), 0);
		CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
		CU_ASSERT(c.cold_len > 0);
		/* h of dup_a (14 bytes) has a cold call; h of dup_b (16 bytes) a cold WARN. */
		CU_ASSERT_EQUAL(c.insns[c.ninsns - 2].kind,
				in.len == 14 ? CFG_I_CALL : CFG_I_WARN);
		cfg_free(&c);
	}
	elfobj_table_counts(o, &fx, &ks, &bs);
	CU_ASSERT_EQUAL(fx, 0);
	CU_ASSERT_EQUAL(ks, 0);
	CU_ASSERT_EQUAL(bs, 1);
	CU_ASSERT(elfobj_find(o, "quiet") >= 0);
	CU_ASSERT_EQUAL(elfobj_find(o, "nosuch"), -PT_ENOENT);
	f = elfobj_func(o, elfobj_find(o, "quiet"));
	CU_ASSERT_STRING_EQUAL(elfobj_symbolize(o, f->addr, out, sizeof(out)), "quiet+0x0");
	elfobj_close(o);
}

/* A jump table in .rodata points into the function: its indirect jmp may stay inside. */
static void test_jump_table_blocks_tail_call(void)
{
	struct cfg c;
	int err;

	err = cfg_asm_build(FN(".text", "jt",
			       "	call __fentry__\n"
			       "	mov .Ltab(,%rdi,8),%rax\n"
			       "	jmp *%rax\n"
			       ".La:	ret\n")
			    "	.section .rodata\n.Ltab: .quad .La\n", "jt", &c);
	CU_ASSERT_EQUAL(err, -PT_EREFUSED);
	CU_ASSERT(c.refusal && !strcmp(c.refusal, "indirect-jump"));
	cfg_free(&c);
}

static void test_open_errors(void)
{
	struct elfobj *o;
	char path[300];
	FILE *f;

	CU_ASSERT_EQUAL(elfobj_open("/nonexistent.ko", &o), -PT_EIO);
	snprintf(path, sizeof(path), "%s/not-elf", cfg_asm_dir());
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("hello\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(elfobj_open(path, &o), -PT_EFORMAT);
}

UNIT_SUITE(elfobj,
	   { "functions, sections, duplicate-name .cold pairs, tables", test_functions_and_cold_pairs },
	   { "jump table blocks the indirect tail call", test_jump_table_blocks_tail_call },
	   { "open errors", test_open_errors })
