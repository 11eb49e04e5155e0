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

/* Links NAME.o (assembled from text) as a user file with ld's flags; returns elfobj_open's. */
static int link_user(const char *name, const char *text, const char *ldflags, struct elfobj **o)
{
	char cmd[1024], out[300];

	elfobj_close(cfg_asm_object(name, text));
	snprintf(cmd, sizeof(cmd), "cd %s && ld %s -o %s.user %s.o", cfg_asm_dir(), ldflags, name,
		 name);
	if (system(cmd))
		return -1;
	snprintf(out, sizeof(out), "%s/%s.user", cfg_asm_dir(), name);
	return elfobj_open(out, o);
}

static const char user_text[] =
	"	.globl _start\n"
	FN(".text", "_start", "	call loop\n	call jt\n	hlt\n")
	FN(".text", "loop", "	mov $3,%ecx\n.Ll:	dec %ecx\n	jne .Ll\n	ret\n")
	FN(".text", "jt", "	mov .Ltab(,%rdi,8),%rax\n	jmp *%rax\n.La:	ret\n")
	"	.section .rodata\n.Ltab: .quad .La\n";

/* An executable: symbol addresses, file offsets, jump tables refused. */
static void test_user_executable(void)
{
	struct elfobj *o;
	const struct elfobj_func *f;
	struct cfg_input in;
	struct cfg c;
	uint64_t off;
	int64_t i;

	CU_ASSERT_EQUAL_FATAL(link_user("user_exe", user_text, "-e _start", &o), 0);
	CU_ASSERT(elfobj_is_user(o));
	i = elfobj_find(o, "loop");
	CU_ASSERT_FATAL(i >= 0);
	f = elfobj_func(o, (uint32_t)i);
	CU_ASSERT(f->addr >= 0x400000 && f->addr < 0x800000);
	CU_ASSERT_EQUAL(f->size, 10);
	/* ld puts the code segment at 0x401000, file offset 0x1000 */
	CU_ASSERT_EQUAL_FATAL(elfobj_file_offset(o, f->addr, f->size, &off), 0);
	CU_ASSERT_EQUAL(off, f->addr - 0x400000);
	CU_ASSERT_EQUAL(elfobj_file_offset(o, 0x10, 1, &off), -PT_ENOENT);
	CU_ASSERT_EQUAL_FATAL(elfobj_input(o, (uint32_t)i, &in), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	CU_ASSERT_EQUAL(c.nblocks, 3);
	cfg_free(&c);
	/* no relocations tell a tail call from a jump table: refused */
	i = elfobj_find(o, "jt");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_EQUAL_FATAL(elfobj_input(o, (uint32_t)i, &in), 0);
	CU_ASSERT_EQUAL(cfg_build(&in, &c), -PT_EREFUSED);
	CU_ASSERT(c.refusal && !strcmp(c.refusal, "indirect-jump"));
	cfg_free(&c);
	elfobj_close(o);
}

/* A stripped shared object: its exported functions come from .dynsym. */
static void test_user_stripped_library(void)
{
	struct elfobj *o;
	uint64_t off;
	int64_t i;

	CU_ASSERT_EQUAL_FATAL(link_user("user_lib", "	.globl loop\n" FN(".text", "loop",
					"	mov $3,%ecx\n.Lm:	dec %ecx\n	jne .Lm\n	ret\n"),
					"-shared -s", &o), 0);
	CU_ASSERT(elfobj_is_user(o));
	i = elfobj_find(o, "loop");
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_EQUAL(elfobj_func(o, (uint32_t)i)->size, 10);
	CU_ASSERT_EQUAL(elfobj_file_offset(o, elfobj_func(o, (uint32_t)i)->addr, 10, &off), 0);
	elfobj_close(o);
}

UNIT_SUITE(elfobj,
	   { "user executable: addresses, file offsets, jump tables", test_user_executable },
	   { "user library stripped: .dynsym", test_user_stripped_library },
	   { "functions, sections, duplicate-name .cold pairs, tables", test_functions_and_cold_pairs },
	   { "jump table blocks the indirect tail call", test_jump_table_blocks_tail_call },
	   { "open errors", test_open_errors })
