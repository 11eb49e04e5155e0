/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elfobj - functions of an ELF object (a kernel module .ko, a .o, or an
 * executable) as CFG inputs, read with libelf.
 *
 * Addresses: in a relocatable object every section starts at 0, so a
 * section's code lives at (section index << 32) + offset; in an executable
 * addresses are the section addresses. Branches whose displacement is
 * relocated are named by their relocation (cfg_names.branch_reloc), and
 * the kernel's tables (__ex_table, __jump_table, __bug_table, x86-64 6.1
 * layouts) give fixups, static-key sites and WARN/BUG flags.
 */
#ifndef PATHTRACE_ELFOBJ_H
#define PATHTRACE_ELFOBJ_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/cfg.h>

#define ELFOBJ_NONE UINT32_MAX

struct elfobj_func {
	const char *name;
	uint64_t addr;
	uint32_t size;
	uint32_t shndx;		/* section index */
	const char *section;	/* its name, e.g. ".text.unlikely" */
	uint32_t cold;		/* index of its f.cold part, or ELFOBJ_NONE */
	uint32_t parent;	/* for an f.cold part: index of f, or ELFOBJ_NONE */
};

struct elfobj;

/*
 * Opens and indexes path: an ELF file, or a module compressed as installed
 * (.ko.xz, .ko.zst, .ko.gz; source/elf_file.h). Returns 0 with *out set;
 * -PT_EIO if it cannot be read (errno kept); -PT_EFORMAT if it is not a
 * 64-bit x86-64 ELF with a symbol table (or does not decompress) or a
 * kernel table is malformed; -PT_ENOMEM.
 */
int elfobj_open(const char *path, struct elfobj **out);

void elfobj_close(struct elfobj *o);

/* Functions (STT_FUNC with a size, in executable sections), .cold parts included. */
uint32_t elfobj_nfuncs(const struct elfobj *o);
const struct elfobj_func *elfobj_func(const struct elfobj *o, uint32_t i);

/* Index of the first function named name; -PT_ENOENT if none. */
int64_t elfobj_find(const struct elfobj *o, const char *name);

/*
 * Fills in for function i (its .cold part attached, the table entries that
 * fall in either part, names resolved through o). The pointers stay valid
 * until the next elfobj_input call or elfobj_close. Returns 0; -PT_EINVAL
 * for a bad index or a .cold part (it belongs to its parent's CFG);
 * -PT_ENOMEM.
 */
int elfobj_input(struct elfobj *o, uint32_t i, struct cfg_input *in);

/*
 * Size of the section named name: 0 with *size set, or -PT_ENOENT.
 * (A relocatable object's function at addr is at offset addr & 0xffffffff
 * of its section.)
 */
int elfobj_section_size(const struct elfobj *o, const char *name, uint64_t *size);

/*
 * Whether o is a user-space file: a shared object or position-independent
 * executable (ET_DYN), or an executable whose entry lies in the lower half
 * (docs/user.md). Its functions come from .symtab, or .dynsym when it is
 * stripped, and an indirect jump in them is refused (jump tables).
 */
int elfobj_is_user(const struct elfobj *o);

/*
 * The file offset of [addr, addr+len) of a user-space file: 0 with *off
 * set when one executable PT_LOAD segment holds all of it (a uprobe's
 * offset), else -PT_ENOENT (also for a kernel object).
 */
int elfobj_file_offset(const struct elfobj *o, uint64_t addr, uint32_t len, uint64_t *off);

/* Writes "func+0xoff" (or a hex address) for addr into buf; returns buf. */
const char *elfobj_symbolize(const struct elfobj *o, uint64_t addr, char *buf, size_t n);

/*
 * Table entries found in the object, for statistics and tests: returns
 * the counts of __ex_table, __jump_table and __bug_table entries.
 */
void elfobj_table_counts(const struct elfobj *o, uint32_t *fixups, uint32_t *keys,
			 uint32_t *bugs);

#endif
