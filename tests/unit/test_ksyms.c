// SPDX-License-Identifier: GPL-2.0
/*
 * The live-kernel source on fake files: a function is assembled, linked at
 * kernel addresses (vmlinux-style, then module-style), its image becomes a
 * fake /proc/kcore (an ELF core file with one PT_LOAD), `nm` of the image
 * becomes /proc/kallsyms, and for the module a fake /sys/module and
 * modules.dep point at the unlinked object as its .ko. The CFG recovered
 * from those must be the one worked out by hand from the assembly.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

#include "cfg_asm.h"
#include "fake_kcore.h"
#include "unit.h"

#define VBASE 0xffffffff81000000ull
#define MBASE 0xffffffffc0000000ull

/* f: every table kind, a cold part, padding; the offsets are in the comments. */
static const char body[] =
	"	.text\n"
	"	.globl f\n	.type f,@function\n"
	"f:	call __fentry__\n"		/* 0, 5 */
	"	test %edi,%edi\n"		/* 5, 2 */
	"	jne .Lcold\n"			/* 7, 6 */
	".Lkey:	.byte 0x0f,0x1f,0x44,0,0\n"	/* d: static key, nop5 */
	".Lfault: mov (%rsi),%eax\n"		/* 12, 2: fixup .Lfix */
	"	jmp __x86_return_thunk\n"	/* 14, 5 */
	".Lwarn: ud2\n"				/* 19: WARN */
	"	jmp __x86_return_thunk\n"	/* 1b */
	".Lfix:	mov $-14,%eax\n"		/* 20 */
	"	jmp __x86_return_thunk\n"	/* 25 */
	"	.size f, .-f\n"
	"	int3\n	int3\n"
	"	.globl g\n	.type g,@function\n"
	"g:	call __fentry__\n	jmp f\n	.size g, .-g\n"
	"	.section .text.unlikely,\"ax\"\n"
	"	.type f.cold,@function\n"
	"f.cold:\n"
	".Lcold: call panic\n"			/* cold 0 */
	"	.size f.cold, .-f.cold\n";

static const char tables[] =
	"	.section __ex_table,\"a\"\n%s"
	"	.long .Lfault - ., .Lfix - ., 1\n%s"
	"	.section __jump_table,\"aw\"\n%s"
	"	.long .Lkey - ., .Lwarn - .\n	.quad 0\n%s"
	"	.section __bug_table,\"aw\"\n%s"
	"	.long .Lwarn - ., 0\n	.word 7, 1\n%s";

static const char want[] = "0: F1 T7; d: k2 K4; 12: F3 X6; 14: E; 19: F5; 1b: E; 20: E; c0: E";

/* Keeps each section where the fake /sys/module says it is (ld would merge .text.unlikely). */
#define LDS(base) \
	"SECTIONS {\n" \
	" .text " base "0000 : { *(.text) }\n" \
	" .text.unlikely " base "1000 : { *(.text.unlikely) }\n" \
	" __ex_table " base "2000 : { *(__ex_table) }\n" \
	" __jump_table " base "3000 : { *(__jump_table) }\n" \
	" __bug_table " base "4000 : { *(__bug_table) }\n" \
	"}\n"

static int sh(const char *fmt, const char *a, const char *b, const char *c)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), fmt, a, b, c);
	return system(cmd);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void check_cfg(struct klive *k, const char *module)
{
	struct cfg_input in;
	struct cfg c;
	const char *tag;
	char detail[160], buf[512];

	int err = klive_input(k, "f", module, &in, &tag, detail, sizeof(detail));

	if (err)
		fprintf(stderr, "\n  klive_input: %s %s %s\n", pt_strerror(err), tag ? tag : "",
			detail);
	CU_ASSERT_EQUAL_FATAL(err, 0);
	CU_ASSERT_EQUAL(in.nfixups, 1);
	CU_ASSERT_EQUAL(in.nkeys, 1);
	CU_ASSERT_EQUAL(in.nbugs, 1);
	CU_ASSERT(in.cold_len > 0);
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	CU_ASSERT_STRING_EQUAL(cfg_asm_describe(&c, buf, sizeof(buf)), want);
	if (strcmp(buf, want))
		fprintf(stderr, "\n  got  %s\n  want %s\n", buf, want);
	cfg_free(&c);
}

static void test_vmlinux(void)
{
	const char *d = cfg_asm_dir();
	char src[8192], path[512], ks[512], kc[512];
	struct klive *k;
	struct klive_paths p;

	snprintf(src, sizeof(src), "%s", body);
	snprintf(src + strlen(src), sizeof(src) - strlen(src), tables,
		 ".globl __start___ex_table\n__start___ex_table:\n",
		 ".globl __stop___ex_table\n__stop___ex_table:\n",
		 ".globl __start___jump_table\n__start___jump_table:\n",
		 ".globl __stop___jump_table\n__stop___jump_table:\n",
		 ".globl __start___bug_table\n__start___bug_table:\n",
		 ".globl __stop___bug_table\n__stop___bug_table:\n");
	snprintf(path, sizeof(path), "%s/v.s", d);
	write_file(path, src);
	snprintf(path, sizeof(path), "%s/v.lds", d);
	write_file(path, LDS("0xffffffff8100"));
	/* The helpers live elsewhere in the kernel, as in a real build (5-byte branches). */
	CU_ASSERT_EQUAL_FATAL(sh("cd %s && gcc -c -o v.o v.s && ld -o v.img -e 0 -T v.lds "
				 "--defsym=__fentry__=0xffffffff81010000 "
				 "--defsym=__x86_return_thunk=0xffffffff81010010 "
				 "--defsym=panic=0xffffffff81010020 v.o%s%s", d, "", ""), 0);
	CU_ASSERT_EQUAL_FATAL(sh("cd %s && nm v.img | grep -v ' A ' > kallsyms.v && "
				 "printf 'ffffffff81010000 T __fentry__\nffffffff81010010 T "
				 "__x86_return_thunk\nffffffff81010020 T panic\n' >> kallsyms.v%s%s",
				 d, "", ""), 0);
	snprintf(kc, sizeof(kc), "%s/kcore.v", d);
	snprintf(path, sizeof(path), "%s/v.img", d);
	CU_ASSERT_FATAL(make_kcore(path, kc, VBASE, 0x5000) >= 4);
	snprintf(ks, sizeof(ks), "%s/kallsyms.v", d);
	p = (struct klive_paths){ ks, kc, "/nonexistent", "/nonexistent" };
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	check_cfg(k, NULL);
	/* kallsyms sizes are upper bounds: f runs to g, past its int3 padding. */
	{
		int64_t i = ksyms_find(klive_ksyms(k), "f", NULL), j;

		CU_ASSERT_FATAL(i >= 0);
		j = ksyms_find(klive_ksyms(k), "g", NULL);
		CU_ASSERT_FATAL(j >= 0);
		CU_ASSERT_EQUAL(ksyms_get(klive_ksyms(k), i)->size,
				ksyms_get(klive_ksyms(k), j)->addr - ksyms_get(klive_ksyms(k), i)->addr);
		CU_ASSERT_EQUAL(ksyms_get(klive_ksyms(k), i)->size, 0x2c);
		CU_ASSERT_NOT_EQUAL(ksyms_get(klive_ksyms(k), i)->cold, KSYMS_NONE);
		CU_ASSERT_STRING_EQUAL(ksyms_name_at(klive_ksyms(k), VBASE), "f");
		CU_ASSERT_PTR_NULL(ksyms_name_at(klive_ksyms(k), VBASE + 1));
		CU_ASSERT_EQUAL(ksyms_addr(klive_ksyms(k), "__start___ex_table"), VBASE + 0x2000);
	}
	klive_close(k);
}

static void test_module(void)
{
	const char *d = cfg_asm_dir();
	char src[8192], path[512], ks[512], kc[512], sm[512], md[512];
	struct cfg_input in;
	const char *tag;
	char detail[160];
	struct klive *k;
	struct klive_paths p;
	static const char *const secs[][2] = {
		{ ".text", "0xffffffffc0000000" }, { ".text.unlikely", "0xffffffffc0001000" },
		{ "__ex_table", "0xffffffffc0002000" }, { "__jump_table", "0xffffffffc0003000" },
		{ "__bug_table", "0xffffffffc0004000" },
	};
	unsigned int i;

	snprintf(src, sizeof(src), "%s", body);
	snprintf(src + strlen(src), sizeof(src) - strlen(src), tables, "", "", "", "", "", "");
	snprintf(path, sizeof(path), "%s/m.s", d);
	write_file(path, src);
	snprintf(path, sizeof(path), "%s/m.lds", d);
	write_file(path, LDS("0xffffffffc000"));
	CU_ASSERT_EQUAL_FATAL(sh("cd %s && gcc -c -o m.o m.s && mkdir -p lib/kernel sys/fake_mod/sections && "
				 "cp m.o lib/kernel/fake-mod.ko && "
				 "echo 'kernel/fake-mod.ko:' > lib/modules.dep && "
				 "ld -o m.img -e 0 -T m.lds "
				 "--defsym=__fentry__=0xffffffff81000f00 "
				 "--defsym=__x86_return_thunk=0xffffffff81000f10 "
				 "--defsym=panic=0xffffffff81000f20 m.o%s%s", d, "", ""), 0);
	/* Module symbols carry [module]; the kernel's are plain lines. */
	CU_ASSERT_EQUAL_FATAL(sh("cd %s && nm m.img | grep -i ' t ' | grep -v ' __' | "
				 "sed 's/$/\\t[fake_mod]/' > kallsyms.m && "
				 "printf 'ffffffff81000f00 T __fentry__\\nffffffff81000f10 T __x86_return_thunk\\n"
				 "ffffffff81000f20 T panic\\nffffffff81000f30 T other\\n' >> kallsyms.m%s%s",
				 d, "", ""), 0);
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		snprintf(path, sizeof(path), "%s/sys/fake_mod/sections/%s", d, secs[i][0]);
		write_file(path, secs[i][1]);
	}
	snprintf(kc, sizeof(kc), "%s/kcore.m", d);
	snprintf(path, sizeof(path), "%s/m.img", d);
	CU_ASSERT_FATAL(make_kcore(path, kc, MBASE, 0x5000) >= 4);
	snprintf(ks, sizeof(ks), "%s/kallsyms.m", d);
	snprintf(sm, sizeof(sm), "%s/sys", d);
	snprintf(md, sizeof(md), "%s/lib", d);
	p = (struct klive_paths){ ks, kc, sm, md };
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	check_cfg(k, "fake_mod");
	CU_ASSERT_EQUAL(klive_input(k, "f", NULL, &in, &tag, detail, sizeof(detail)), -PT_ENOENT);
	CU_ASSERT_EQUAL(klive_input(k, "nosuch", "fake_mod", &in, &tag, detail, sizeof(detail)),
			-PT_ENOENT);

	/*
	 * Loaded after klive_open (as enable's copies are): its functions come
	 * from its .ko and /sys/module's section addresses, where kallsyms
	 * names them, and its CFGs are the same.
	 */
	CU_ASSERT_EQUAL_FATAL(sh("cd %s && grep -v fake_mod kallsyms.m > kallsyms.m0%s%s", d, "",
				 ""), 0);
	{
		struct klive *k0;
		struct klive_paths p0 = p;
		char ko[600], ks0[600];
		uint32_t j, named = 0;

		snprintf(ks0, sizeof(ks0), "%s/kallsyms.m0", d);
		snprintf(ko, sizeof(ko), "%s/lib/kernel/fake-mod.ko", d);
		p0.kallsyms = ks0;
		CU_ASSERT_EQUAL_FATAL(klive_open(&p0, &k0), 0);
		CU_ASSERT_EQUAL(ksyms_find(klive_ksyms(k0), "f", "fake_mod"), -PT_ENOENT);
		CU_ASSERT_EQUAL_FATAL(klive_module_loaded(k0, "fake_mod", ko), 0);
		for (j = 0; j < ksyms_count(klive_ksyms(k)); j++) {
			const struct ksym *s = ksyms_get(klive_ksyms(k), j);
			int64_t at = ksyms_find(klive_ksyms(k0), s->name, s->module);

			if (!s->module)
				continue;
			CU_ASSERT_FATAL(at >= 0);
			CU_ASSERT_EQUAL(ksyms_get(klive_ksyms(k0), at)->addr, s->addr);
			named++;
		}
		CU_ASSERT(named >= 3);	/* f, f.cold, g */
		check_cfg(k0, "fake_mod");
		CU_ASSERT_EQUAL(klive_module_loaded(k0, "fake_mod", ko), -PT_EINVAL);
		klive_close(k0);
	}
	klive_close(k);

	/* Without modules.dep the module's tables are unknown: refused, with a reason. */
	p.moddir = "/nonexistent";
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	CU_ASSERT_EQUAL(klive_input(k, "f", "fake_mod", &in, &tag, detail, sizeof(detail)),
			-PT_EREFUSED);
	CU_ASSERT(tag && !strcmp(tag, "unknown-static-key"));
	CU_ASSERT(strlen(detail) > 0);
	klive_close(k);
}

static void test_kallsyms_and_kcore(void)
{
	const char *d = cfg_asm_dir();
	char path[512], kc[512];
	struct ksyms *ks;
	struct kcore *k;
	uint8_t b[4];

	snprintf(path, sizeof(path), "%s/kallsyms.dup", d);
	write_file(path, "ffffffff81000000 t dup\nffffffff81000010 t dup\n"
			 "ffffffff81000020 T dup\t[m1]\nffffffff81000030 D data\n"
			 "ffffffff81000040 W weakfn\n"
			 "ffffffff81000110 t dup.cold\nffffffff81000100 t dup.cold\n");
	CU_ASSERT_EQUAL_FATAL(ksyms_load(path, &ks), 0);
	CU_ASSERT_EQUAL(ksyms_count(ks), 6);
	CU_ASSERT(ksyms_find(ks, "weakfn", NULL) >= 0);	/* weak functions are text */
	/* Two static dups with two cold parts: paired in address (link) order. */
	CU_ASSERT_EQUAL(ksyms_get(ks, ksyms_get(ks, 0)->cold)->addr, 0xffffffff81000100ull);
	CU_ASSERT_EQUAL(ksyms_get(ks, ksyms_get(ks, 1)->cold)->addr, 0xffffffff81000110ull);
	CU_ASSERT_EQUAL(ksyms_get(ks, 2)->cold, KSYMS_NONE);	/* [m1]'s dup has none */

	CU_ASSERT_EQUAL(ksyms_find(ks, "dup", NULL), -PT_EINVAL);	/* two static dups */
	CU_ASSERT(ksyms_find(ks, "dup", "m1") >= 0);
	CU_ASSERT_EQUAL(ksyms_find(ks, "data", NULL), -PT_ENOENT);	/* not text */
	CU_ASSERT_EQUAL(ksyms_addr(ks, "data"), 0xffffffff81000030ull);
	ksyms_free(ks);
	/* One cold part, two candidates: both get it (only its owner can reach it). */
	write_file(path, "ffffffff81000000 t two\nffffffff81000010 t two\n"
			 "ffffffff81000100 t two.cold\n");
	CU_ASSERT_EQUAL_FATAL(ksyms_load(path, &ks), 0);
	CU_ASSERT_EQUAL(ksyms_get(ks, 0)->cold, 2);
	CU_ASSERT_EQUAL(ksyms_get(ks, 1)->cold, 2);
	/* livepatch's positions: address order among the name's symbols */
	{
		uint32_t same = 0;

		CU_ASSERT_EQUAL(ksyms_name_pos(ks, 0, &same), 1);
		CU_ASSERT_EQUAL(same, 2);
		CU_ASSERT_EQUAL(ksyms_name_pos(ks, 1, &same), 2);
		CU_ASSERT_EQUAL(same, 2);
		CU_ASSERT_EQUAL(ksyms_name_pos(ks, 2, &same), 1);	/* two.cold */
		CU_ASSERT_EQUAL(same, 1);
	}
	ksyms_free(ks);
	write_file(path, "0000000000000000 T a\n0000000000000000 T b\n");
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_ENOENT);	/* kptr_restrict */
	write_file(path, "garbage\n");
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_EFORMAT);
	write_file(path, "ffffffff81000000 t a\nffffffff81000010 t\n");	/* no name */
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_EFORMAT);
	write_file(path, "ffffffff81000000 tt a\n");	/* a type is one letter */
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_EFORMAT);
	write_file(path, "1ffffffff81000000 t a\n");	/* 17 digits */
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_EFORMAT);
	write_file(path, "ffffffff81000000 t a\n\nffffffff81000010 t b\n");	/* an empty line */
	CU_ASSERT_EQUAL(ksyms_load(path, &ks), -PT_EFORMAT);
	/* Tabs or spaces between fields, a module, and a last line without its newline. */
	write_file(path, "ffffffff81000000\tT\tfirst\n"
			 "FFFFFFFFC0001000 t  in_mod\t[some_mod]\n"
			 "ffffffffc0001040 t last\t[some_mod]");
	CU_ASSERT_EQUAL_FATAL(ksyms_load(path, &ks), 0);
	CU_ASSERT_EQUAL(ksyms_count(ks), 3);
	CU_ASSERT_EQUAL(ksyms_find(ks, "first", NULL), 0);
	CU_ASSERT_EQUAL(ksyms_get(ks, 0)->type, 'T');
	CU_ASSERT_EQUAL(ksyms_find(ks, "in_mod", "some_mod"), 1);
	CU_ASSERT_EQUAL(ksyms_get(ks, 1)->addr, 0xffffffffc0001000ull);
	CU_ASSERT_EQUAL(ksyms_get(ks, 1)->size, 0x40);
	CU_ASSERT_EQUAL(ksyms_find(ks, "in_mod", NULL), -PT_ENOENT);	/* not vmlinux's */
	CU_ASSERT_EQUAL(ksyms_find(ks, "last", "some_mod"), 2);
	CU_ASSERT_STRING_EQUAL(ksyms_get(ks, 2)->module, "some_mod");
	CU_ASSERT_EQUAL(ksyms_addr(ks, "last"), 0);	/* ksyms_addr: vmlinux only */
	ksyms_free(ks);
	CU_ASSERT_EQUAL(ksyms_load("/nonexistent/kallsyms", &ks), -PT_EIO);

	snprintf(kc, sizeof(kc), "%s/kcore.m", d);
	if (access(kc, R_OK))
		return;	/* made by test_module */
	CU_ASSERT_EQUAL_FATAL(kcore_open(kc, &k), 0);
	CU_ASSERT_EQUAL(kcore_read(k, MBASE, b, 4), 0);
	CU_ASSERT_EQUAL(b[0], 0xe8);	/* call __fentry__, relocated */
	CU_ASSERT_EQUAL(kcore_read(k, MBASE + 0x4ffe, b, 4), -PT_ENOENT);
	CU_ASSERT_EQUAL(kcore_read(k, VBASE, b, 1), -PT_ENOENT);
	kcore_close(k);
	CU_ASSERT_EQUAL(kcore_open(path, &k), -PT_EFORMAT);
}

/*
 * vmlinux's ORC tables as klive_orc reads them: ips relative to their own
 * slots, 6-byte entries (each's first byte names it here). ORDER lists the
 * table's entries by ip offset from f: 0, 4, 8 in order (the kernel's
 * sorted table) or out of it.
 */
static struct klive *orc_kernel(const char *name, const int order[3])
{
	char text[2048];
	struct fake_kernel fk;
	struct klive_paths p;
	struct klive *k;
	int i, n;

	n = snprintf(text, sizeof(text), ".text\n.globl f\nf:\n.fill 16, 1, 0x90\n"
		     ".globl g\ng:\nret\n.globl __start_orc_unwind_ip\n__start_orc_unwind_ip:\n");
	for (i = 0; i < 3; i++)
		n += snprintf(text + n, sizeof(text) - n, ".long f + %d - .\n", order[i]);
	n += snprintf(text + n, sizeof(text) - n, ".long g - .\n.globl __stop_orc_unwind_ip\n"
		      "__stop_orc_unwind_ip:\n.globl __start_orc_unwind\n__start_orc_unwind:\n");
	for (i = 0; i < 3; i++)
		n += snprintf(text + n, sizeof(text) - n, ".byte %d, 0, 0, 0, 0, 0\n",
			      order[i] / 4 + 1);
	snprintf(text + n, sizeof(text) - n, ".byte 9, 0, 0, 0, 0, 0\n");
	CU_ASSERT_FATAL(make_fake_kernel(name, text, 0xffffffff81003000ull, NULL, &fk) >= 1);
	p = (struct klive_paths){ fk.kallsyms, fk.kcore, "/nonexistent", "/nonexistent" };
	CU_ASSERT_EQUAL_FATAL(klive_open(&p, &k), 0);
	return k;
}

static void test_orc(void)
{
	static const int sorted[3] = { 0, 4, 8 }, unsorted[3] = { 8, 0, 4 };
	const uint64_t f = 0xffffffff81000000ull;
	struct korc_entry *o;
	uint32_t n, i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		struct klive *k = orc_kernel(pass ? "orcu" : "orcs", pass ? unsorted : sorted);
		uint8_t inside[2];

		/* twice: the second from the tables read the first time */
		for (i = 0; i < 2; i++) {
			CU_ASSERT_EQUAL_FATAL(klive_orc(k, NULL, f + 2, 8, &o, &n), 0);
			CU_ASSERT_EQUAL_FATAL(n, 3);
			CU_ASSERT_EQUAL(o[0].ip, f + 2);	/* in effect at f + 2: f's */
			CU_ASSERT_EQUAL(o[0].orc[0], 1);
			/* f + 4 and f + 8, in table order */
			inside[0] = pass ? 3 : 2;
			inside[1] = pass ? 2 : 3;
			CU_ASSERT_EQUAL(o[1].orc[0], inside[0]);
			CU_ASSERT_EQUAL(o[2].orc[0], inside[1]);
			CU_ASSERT_EQUAL(o[1].ip, f + (inside[0] - 1) * 4);
			free(o);
		}
		/* f + 4 itself is not inside [f, f + 4) */
		CU_ASSERT_EQUAL_FATAL(klive_orc(k, NULL, f, 4, &o, &n), 0);
		CU_ASSERT_EQUAL(n, 1);
		CU_ASSERT_EQUAL(o[0].orc[0], 1);
		free(o);
		/* g's entry, the last */
		CU_ASSERT_EQUAL_FATAL(klive_orc(k, NULL, f + 16, 1, &o, &n), 0);
		CU_ASSERT_EQUAL(n, 1);
		CU_ASSERT_EQUAL(o[0].orc[0], 9);
		free(o);
		CU_ASSERT_EQUAL(klive_orc(k, NULL, f - 1, 4, &o, &n), -PT_ENOENT);
		klive_close(k);
	}
}

UNIT_SUITE(ksyms,
	   { "vmlinux function from fake kallsyms + kcore", test_vmlinux },
	   { "module function with /sys/module sections and its .ko", test_module },
	   { "kallsyms parsing and kcore reads", test_kallsyms_and_kcore },
	   { "vmlinux ORC entries of a range, sorted table or not", test_orc })
