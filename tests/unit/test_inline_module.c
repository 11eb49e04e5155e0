// SPDX-License-Identifier: GPL-2.0
/*
 * inline_module: the module written from a template is read back with
 * libelf: the copies' bytes at their offsets, their symbols (local, with
 * the original's name and length), absolute targets as SHN_ABS symbols,
 * relocations of the code, the livepatch table, __ex_table, __bug_table,
 * __jump_table, .static_call_sites and ORC entries; the template's own relocations still name the symbols
 * they named (the new locals moved the globals up).
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include <pathtrace_abi.h>

#include "cfg_asm.h"
#include "unit.h"

/* What the template needs: .pt_inline, the counter area, ORC tables, code with a global reference. */
static const char tmpl[] =
	"\t.section .pt_inline,\"a\"\n\t.balign 8\npt_inline_table:\n\t.zero 32\n"
	"\t.section .pt_inline_pieces,\"aw\"\n\t.balign 8\npt_inline_pieces:\n\t.quad 0\n"
	"\t.section .pt_inline_counters,\"a\"\n\t.balign 8\npt_inline_counter_bytes:\n\t.quad 0\n"
	"\t.text\n\t.globl init_module\n\t.type init_module,@function\ninit_module:\n"
	"\tcall klp_enable_patch\n\tret\n\t.size init_module,.-init_module\n"
	"\t.section .orc_unwind_ip,\"a\"\n\t.long init_module - .\n"
	"\t.section .orc_unwind,\"a\"\n\t.byte 8,0,0,0,5,0\n";

struct rd {
	Elf *e;
	int fd;
	size_t shstrndx;
};

static Elf_Scn *sec(struct rd *r, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *s = NULL;

	while ((s = elf_nextscn(r->e, s))) {
		gelf_getshdr(s, sh);
		if (!strcmp(elf_strptr(r->e, r->shstrndx, sh->sh_name), name))
			return s;
	}
	return NULL;
}

/* The relocations of section name: count, and the i-th's symbol name, type, addend. */
static int rela(struct rd *r, const char *name, int i, const char **sym, GElf_Sym *gs,
		uint32_t *type, int64_t *addend, uint64_t *off)
{
	char rn[64];
	GElf_Shdr sh, ssh;
	GElf_Rela ra;
	Elf_Scn *s, *st;

	snprintf(rn, sizeof(rn), ".rela%s", name);
	s = sec(r, rn, &sh);
	if (!s)
		return -1;
	if (i < 0)
		return (int)(sh.sh_size / sizeof(Elf64_Rela));
	gelf_getrela(elf_getdata(s, NULL), i, &ra);
	st = elf_getscn(r->e, sh.sh_link);
	gelf_getshdr(st, &ssh);
	gelf_getsym(elf_getdata(st, NULL), (int)GELF_R_SYM(ra.r_info), gs);
	*sym = gs->st_name ? elf_strptr(r->e, ssh.sh_link, gs->st_name) :
	       elf_strptr(r->e, r->shstrndx, (gelf_getshdr(elf_getscn(r->e, gs->st_shndx), &sh),
					     sh.sh_name));
	*type = (uint32_t)GELF_R_TYPE(ra.r_info);
	*addend = ra.r_addend;
	*off = ra.r_offset;
	return 0;
}

/* Opens the module written at path for reading. Returns 0 or -1. */
static int rd_open(struct rd *r, const char *path)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	r->fd = open(path, O_RDONLY);
	if (r->fd < 0)
		return -1;
	r->e = elf_begin(r->fd, ELF_C_READ, NULL);
	if (!r->e || elf_getshdrstrndx(r->e, &r->shstrndx)) {
		if (r->e)
			elf_end(r->e);
		close(r->fd);
		return -1;
	}
	return 0;
}

static void test_written_module(void)
{
	static uint8_t a_code[8] = { 0xe8, 0, 0, 0, 0, 0x8b, 0x07, 0xc3 };
	static uint8_t b_code[3] = { 0xe9, 0, 0 };
	struct inline_reloc ra = { 1, R_X86_64_PLT32, 0xffffffff81100000ull, -4, INLINE_NONE };
	struct inline_reloc rb = { 1, R_X86_64_PLT32, 0xffffffff81000000ull, -4, 0 };
	struct cfg_fixup fx = { 0xffffffff81000005ull, 0xffffffff81000007ull, 0x33 };
	struct cfg_bug_site bug = { .addr = 0xffffffff81000007ull, .line = 42, .flags = 1,
				    .file = 0xffffffff82000000ull };
	struct korc_entry orc[2] = { { 0xffffffff81000000ull, { 8, 0, 0, 0, 5, 0 } },
				     { 0xffffffff81000005ull, { 16, 0, 0, 0, 5, 0 } } };
	struct inline_key key = { .code = 0xffffffff81000005ull, .target = 0xffffffff81000007ull,
				  .key = 0xffffffff82000100ull, .branch = 1, .len = 2 };
	struct inline_static_call call = { .addr = 0xffffffff81000000ull,
					   .key = 0xffffffff82000200ull, .tail = 1 };
	struct inline_copy cps[2];
	char tpath[512], out[512], err[200];
	struct rd r;
	GElf_Shdr sh;
	GElf_Sym gs;
	Elf_Data *d;
	const char *name;
	uint32_t type;
	int64_t addend;
	uint64_t off;
	int i, n, seen_abs = 0, seen_copy = 0, init_ok = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("inline_tmpl", tmpl));
	snprintf(tpath, sizeof(tpath), "%s/inline_tmpl.o", cfg_asm_dir());
	snprintf(out, sizeof(out), "%s/inline_out.ko", cfg_asm_dir());
	memset(cps, 0, sizeof(cps));
	cps[0] = (struct inline_copy){ .name = "fa", .addr = 0xffffffff81000000ull, .len = 8,
		.code = a_code, .relocs = &ra, .nrelocs = 1, .fixups = &fx, .nfixups = 1,
		.bugs = &bug, .nbugs = 1, .orc = orc, .norc = 2, .keys = &key, .nkeys = 1,
		.calls = &call, .ncalls = 1 };
	cps[1] = (struct inline_copy){ .name = "fb", .objname = "some_mod", .sympos = 2,
		.addr = 0xffffffff81100000ull, .len = 3, .code = b_code, .relocs = &rb,
		.nrelocs = 1 };
	CU_ASSERT_EQUAL(inline_module_write(tpath, out, cps, 0, err, sizeof(err)), -PT_EINVAL);
	CU_ASSERT_EQUAL(inline_module_write("/nonexistent.ko", out, cps, 2, err, sizeof(err)),
			-PT_EIO);
	CU_ASSERT_EQUAL_FATAL(inline_module_write(tpath, out, cps, 2, err, sizeof(err)), 0);

	CU_ASSERT_EQUAL_FATAL(rd_open(&r, out), 0);
	/* the code: fa at 0, fb at 16 (an int3 at least after each) */
	CU_ASSERT_PTR_NOT_NULL_FATAL(sec(&r, ".text.pt_inline", &sh));
	CU_ASSERT_EQUAL(sh.sh_flags, SHF_ALLOC | SHF_EXECINSTR);
	d = elf_getdata(sec(&r, ".text.pt_inline", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 32);
	CU_ASSERT(!memcmp(d->d_buf, a_code, 8));
	CU_ASSERT_EQUAL(((uint8_t *)d->d_buf)[8], 0xcc);
	CU_ASSERT(!memcmp((uint8_t *)d->d_buf + 16, b_code, 3));
	CU_ASSERT_EQUAL(inline_module_offset(cps, 1), 16);
	/* its relocations: fa's call through an absolute symbol, fb's jump to fa's copy */
	CU_ASSERT_EQUAL_FATAL(rela(&r, ".text.pt_inline", -1, &name, &gs, &type, &addend, &off), 2);
	rela(&r, ".text.pt_inline", 0, &name, &gs, &type, &addend, &off);
	CU_ASSERT_EQUAL(gs.st_shndx, SHN_ABS);
	CU_ASSERT_EQUAL(gs.st_value, 0xffffffff81100000ull);
	CU_ASSERT_EQUAL(GELF_ST_BIND(gs.st_info), STB_LOCAL);
	CU_ASSERT_EQUAL(type, R_X86_64_PLT32);
	CU_ASSERT_EQUAL(addend, -4);
	CU_ASSERT_EQUAL(off, 1);
	rela(&r, ".text.pt_inline", 1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT_EQUAL(GELF_ST_TYPE(gs.st_info), STT_FUNC);
	CU_ASSERT_EQUAL(gs.st_size, 8);
	CU_ASSERT_EQUAL(off, 17);
	/* the livepatch table: two entries and the end; names, objname, copies */
	d = elf_getdata(sec(&r, ".pt_inline", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 3 * 32);
	CU_ASSERT_EQUAL(((uint64_t *)d->d_buf)[7], 2);	/* fb's sympos */
	n = rela(&r, ".pt_inline", -1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_EQUAL(n, 5);
	for (i = 0; i < n; i++) {
		rela(&r, ".pt_inline", i, &name, &gs, &type, &addend, &off);
		CU_ASSERT_EQUAL(type, R_X86_64_64);
		if (off == 16 || off == 48) {
			CU_ASSERT_STRING_EQUAL(name, off == 16 ? "fa" : "fb");
			seen_copy++;
		} else {
			CU_ASSERT_STRING_EQUAL(name, ".rodata.pt_inline");
		}
	}
	CU_ASSERT_EQUAL(seen_copy, 2);
	d = elf_getdata(sec(&r, ".rodata.pt_inline", &sh), NULL);
	CU_ASSERT(!memcmp(d->d_buf, "fa\0fb\0some_mod\0", 15));
	/* __ex_table: insn and landing pad in fa's copy, the data word kept */
	d = elf_getdata(sec(&r, "__ex_table", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 12);
	CU_ASSERT_EQUAL(((uint32_t *)d->d_buf)[2], 0x33);
	rela(&r, "__ex_table", 1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT_EQUAL(addend, 7);
	CU_ASSERT_EQUAL(type, R_X86_64_PC32);
	/* __bug_table: the address in the copy, the file absolute, line and flags */
	d = elf_getdata(sec(&r, "__bug_table", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 12);
	CU_ASSERT_EQUAL(((uint16_t *)d->d_buf)[4], 42);
	CU_ASSERT_EQUAL(((uint16_t *)d->d_buf)[5], 1);
	rela(&r, "__bug_table", 1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_EQUAL(gs.st_shndx, SHN_ABS);
	CU_ASSERT_EQUAL(gs.st_value, 0xffffffff82000000ull);
	/* __jump_table: code and target in fa's copy, the key absolute + the branch bit */
	CU_ASSERT_PTR_NOT_NULL_FATAL(sec(&r, "__jump_table", &sh));
	CU_ASSERT_EQUAL(sh.sh_flags, SHF_ALLOC | SHF_WRITE);
	d = elf_getdata(sec(&r, "__jump_table", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 16);
	CU_ASSERT_EQUAL(((uint64_t *)d->d_buf)[0] | ((uint64_t *)d->d_buf)[1], 0);
	CU_ASSERT_EQUAL_FATAL(rela(&r, "__jump_table", -1, &name, &gs, &type, &addend, &off), 3);
	rela(&r, "__jump_table", 0, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT(type == R_X86_64_PC32 && addend == 5 && off == 0);
	rela(&r, "__jump_table", 1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT(type == R_X86_64_PC32 && addend == 7 && off == 4);
	rela(&r, "__jump_table", 2, &name, &gs, &type, &addend, &off);
	CU_ASSERT_EQUAL(gs.st_shndx, SHN_ABS);
	CU_ASSERT_EQUAL(gs.st_value, 0xffffffff82000100ull);
	CU_ASSERT(type == R_X86_64_PC64 && addend == 1 && off == 8);
	/* .static_call_sites: the site in fa's copy, the key absolute + the tail bit */
	d = elf_getdata(sec(&r, ".static_call_sites", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 8);
	CU_ASSERT_EQUAL_FATAL(rela(&r, ".static_call_sites", -1, &name, &gs, &type, &addend, &off),
			      2);
	rela(&r, ".static_call_sites", 0, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT(type == R_X86_64_PC32 && addend == 0 && off == 0);
	rela(&r, ".static_call_sites", 1, &name, &gs, &type, &addend, &off);
	CU_ASSERT_EQUAL(gs.st_shndx, SHN_ABS);
	CU_ASSERT_EQUAL(gs.st_value, 0xffffffff82000200ull);
	CU_ASSERT(type == R_X86_64_PC32 && addend == 1 && off == 4);
	/* ORC: the template's entry, fa's two and its end, fb's end (it has none) */
	d = elf_getdata(sec(&r, ".orc_unwind", &sh), NULL);
	CU_ASSERT_EQUAL_FATAL(d->d_size, 5 * 6);
	CU_ASSERT_EQUAL(((uint8_t *)d->d_buf)[12], 16);
	CU_ASSERT_EQUAL(((uint8_t *)d->d_buf)[18], 0);	/* undefined: the end of fa */
	CU_ASSERT_EQUAL(rela(&r, ".orc_unwind_ip", -1, &name, &gs, &type, &addend, &off), 5);
	rela(&r, ".orc_unwind_ip", 3, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "fa");
	CU_ASSERT_EQUAL(addend, 8);
	CU_ASSERT_EQUAL(off, 12);
	/* the template's own relocations name what they named */
	n = rela(&r, ".text", -1, &name, &gs, &type, &addend, &off);
	for (i = 0; i < n; i++) {
		rela(&r, ".text", i, &name, &gs, &type, &addend, &off);
		init_ok |= !strcmp(name, "klp_enable_patch") && gs.st_shndx == SHN_UNDEF;
	}
	CU_ASSERT(init_ok);
	rela(&r, ".orc_unwind_ip", 0, &name, &gs, &type, &addend, &off);
	CU_ASSERT_STRING_EQUAL(name, "init_module");
	/* locals first: sh_info is the first global */
	sec(&r, ".symtab", &sh);
	d = elf_getdata(sec(&r, ".symtab", &sh), NULL);
	for (i = 0; i < (int)(sh.sh_size / sizeof(Elf64_Sym)); i++) {
		gelf_getsym(d, i, &gs);
		CU_ASSERT_EQUAL(GELF_ST_BIND(gs.st_info) == STB_LOCAL, (uint32_t)i < sh.sh_info);
		seen_abs += gs.st_shndx == SHN_ABS && GELF_ST_TYPE(gs.st_info) == STT_NOTYPE;
	}
	CU_ASSERT_EQUAL(seen_abs, 4);	/* the call's target, the bug's file, two keys */
	elf_end(r.e);
	close(r.fd);
	/* a file that is not the template */
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("inline_not", "\t.text\nf:\n\tret\n"));
	snprintf(tpath, sizeof(tpath), "%s/inline_not.o", cfg_asm_dir());
	CU_ASSERT_EQUAL(inline_module_write(tpath, out, cps, 2, err, sizeof(err)), -PT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not the inline template"));
}

/*
 * The references into pathtrace.ko: a site's call (INLINE_HIT, INLINE_STAGE), a kept
 * call's store (INLINE_FRAME), the activations' count (INLINE_DEPTH,
 * INLINE_DEPTH_KNOWN) and the words they save (INLINE_FRAMES_SAVED, an
 * absolute 32S) become relocations against the template's undefined
 * symbols of those names, type and addend kept; a template that does not
 * import one a copy needs is refused, saying which.
 */
static void test_imports(void)
{
	static const char *const want[6] = {
		"pt_inline_hit", "pt_inline_frame", "pt_inline_depth", "pt_inline_depth_known",
		"pt_inline_frames_saved", "pt_inline_stage"
	};
	static uint8_t code[48];
	struct inline_reloc rs[6] = {
		{ 1, R_X86_64_PLT32, 0, -4, INLINE_HIT },
		{ 9, R_X86_64_PC32, 0, -4, INLINE_FRAME },
		{ 17, R_X86_64_PC32, 0, -4, INLINE_DEPTH },
		{ 25, R_X86_64_PC32, 0, -5, INLINE_DEPTH_KNOWN },
		{ 33, R_X86_64_32S, 0, 0, INLINE_FRAMES_SAVED },
		{ 41, R_X86_64_PLT32, 0, -4, INLINE_STAGE },
	};
	struct inline_copy cp = { .name = "fa", .addr = 0xffffffff81000000ull, .len = sizeof(code),
				  .code = code, .relocs = rs, .nrelocs = 6 };
	char src[2048], tpath[512], out[512], err[200];
	const char *name;
	struct rd r;
	GElf_Sym gs;
	uint32_t type;
	int64_t addend;
	uint64_t off;
	int i;

	memset(code, 0x90, sizeof(code));
	/* the template without pt_inline_frames_saved: refused, named */
	snprintf(src, sizeof(src), "%s\t.data\n\t.quad %s, %s, %s, %s, %s\n", tmpl, want[0],
		 want[1], want[2], want[3], want[5]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("inline_imp4", src));
	snprintf(tpath, sizeof(tpath), "%s/inline_imp4.o", cfg_asm_dir());
	snprintf(out, sizeof(out), "%s/inline_imp.ko", cfg_asm_dir());
	CU_ASSERT_EQUAL(inline_module_write(tpath, out, &cp, 1, err, sizeof(err)), -PT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not import pt_inline_frames_saved"));
	/* with all six */
	snprintf(src, sizeof(src), "%s\t.data\n\t.quad %s, %s, %s, %s, %s, %s\n", tmpl, want[0],
		 want[1], want[2], want[3], want[4], want[5]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg_asm_object("inline_imp5", src));
	snprintf(tpath, sizeof(tpath), "%s/inline_imp5.o", cfg_asm_dir());
	CU_ASSERT_EQUAL_FATAL(inline_module_write(tpath, out, &cp, 1, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(rd_open(&r, out), 0);
	CU_ASSERT_EQUAL_FATAL(rela(&r, ".text.pt_inline", -1, &name, &gs, &type, &addend, &off), 6);
	for (i = 0; i < 6; i++) {
		rela(&r, ".text.pt_inline", i, &name, &gs, &type, &addend, &off);
		CU_ASSERT_STRING_EQUAL(name, want[i]);
		CU_ASSERT_EQUAL(gs.st_shndx, SHN_UNDEF);
		CU_ASSERT_EQUAL(type, rs[i].type);
		CU_ASSERT_EQUAL(addend, rs[i].addend);
		CU_ASSERT_EQUAL(off, rs[i].off);
	}
	elf_end(r.e);
	close(r.fd);
}

/*
 * The counter space: copies in order, each copy's counters inside one
 * piece (the next piece when the rest of this one is too small), the span
 * what the pieces before the last hold whole.
 */
static void test_counter_pieces(void)
{
	struct inline_copy cps[4] = { { .ncounters = 3 }, { .ncounters = 2047 },
				      { .ncounters = 0 }, { .ncounters = 1 } };

	CU_ASSERT_EQUAL(inline_module_counter_offset(cps, 0), 0);
	/* 24 + 16376 bytes overflow the first piece */
	CU_ASSERT_EQUAL(inline_module_counter_offset(cps, 1), PT_INLINE_PIECE_BYTES);
	CU_ASSERT_EQUAL(inline_module_counter_offset(cps, 2), PT_INLINE_PIECE_BYTES + 16376);
	/* 16376 + 8 fill the second piece exactly */
	CU_ASSERT_EQUAL(inline_module_counter_offset(cps, 3), PT_INLINE_PIECE_BYTES + 16376);
	CU_ASSERT_EQUAL(inline_module_counter_bytes(cps, 4), 2 * PT_INLINE_PIECE_BYTES);
	CU_ASSERT_EQUAL(inline_module_counter_bytes(cps, 1), 24);
	CU_ASSERT_EQUAL(inline_module_counter_bytes(cps, 0), 0);
}

UNIT_SUITE(inline_module,
	   { "the written module read back: code, symbols, relocations, tables, ORC",
	     test_written_module },
	   { "the counter space: each copy's counters in one piece", test_counter_pieces },
	   { "imports from pathtrace.ko: relocations against the template's undefined symbols",
	     test_imports })
