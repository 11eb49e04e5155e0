/* SPDX-License-Identifier: GPL-2.0 */
/* elfobj internals shared by elfobj.c (symbols, relocations) and elfobj_tables.c. */
#ifndef PATHTRACE_ELFOBJ_INTERNAL_H
#define PATHTRACE_ELFOBJ_INTERNAL_H

#include <gelf.h>
#include <libelf.h>

#include <pathtrace/elfobj.h>

#include "elf_file.h"

struct elfobj_rel {
	uint64_t off;		/* offset in the section it applies to */
	uint32_t type;
	uint32_t sym;
	int64_t addend;
};

struct elfobj_sec {
	const char *name;
	uint64_t addr;		/* base in the object's address space */
	uint64_t size;
	uint32_t type, flags;
	const uint8_t *data;	/* NULL for NOBITS */
	struct elfobj_rel *rels;	/* sorted by off */
	uint32_t nrels;
};

struct elfobj_sym {
	const char *name;
	uint64_t value;
	uint64_t size;
	uint32_t shndx;
	uint8_t type;
};

/* A function's share of the tables, as a cfg_input points at it. */
struct elfobj_scratch {
	struct cfg_fixup *fx;
	struct cfg_key_site *ks;
	struct cfg_bug_site *bs;
	struct cfg_alt_site *as;
	uint32_t capf, capk, capb, capa;
};

struct elfobj {
	struct elf_file file;	/* the file, or the module decompressed */
	Elf *elf;		/* file.elf */
	int rel;		/* ET_REL: sections at index << 32 */
	int user;		/* a user-space executable or shared object (docs/user.md) */
	struct elfobj_sec *secs;
	size_t nsecs;
	struct elfobj_sym *syms;
	size_t nsyms;
	struct elfobj_func *funcs;
	uint32_t nfuncs;
	uint32_t *by_addr;	/* function indices sorted by addr */
	uint32_t *by_name;	/* function indices sorted by name */
	int8_t *noreturn;
	int noreturn_depth;	/* nesting of the dead-end analysis */
	uint8_t *taken_inside;	/* per function: a code pointer leads into its body */	/* per function: -1 unknown, 0 returns, 1 never, 2 in progress */
	struct cfg_fixup *fixups;	/* sorted by insn */
	uint32_t nfixups;
	struct cfg_key_site *keys;	/* sorted by code */
	uint32_t nkeys;
	struct cfg_bug_site *bugs;	/* sorted by addr */
	uint32_t nbugs;
	struct cfg_alt_site *alts;	/* sorted by addr */
	uint32_t nalts;
	struct elfobj_scratch in;	/* elfobj_input's */
};

/* The relocation of section s at exactly off, or NULL. */
const struct elfobj_rel *elfobj_rel_at(const struct elfobj_sec *s, uint64_t off);

/* The address a PC-relative relocation resolves to (S + A), or 0 if S is undefined. */
uint64_t elfobj_rel_dest(const struct elfobj *o, const struct elfobj_rel *r);

/* Reads the kernel tables (elfobj_tables.c). Returns 0, -PT_EFORMAT or -PT_ENOMEM. */
int elfobj_read_tables(struct elfobj *o);

#endif
