/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms - the live kernel as a CFG source: /proc/kallsyms names code,
 * /proc/kcore holds its bytes as they run, and the kernel's tables
 * (__ex_table, __jump_table, __bug_table) are read back from kcore.
 *
 * Every path is a parameter so the code can be tested on fake files.
 *
 * Limits (say them, do not hide them):
 *  - kallsyms has no sizes. A function ends where the next symbol starts,
 *    which includes the padding after it: an upper bound. For a module
 *    function whose .ko is found, the exact size comes from its symbol.
 *  - vmlinux tables are found by __start_/__stop_ symbols; a module's by
 *    /sys/module/<mod>/sections/<sec> (address) and the .ko's section
 *    header (size). A module whose .ko cannot be read (missing or
 *    compressed) has unknown static keys and fixups: its functions are
 *    refused ("unknown-static-key").
 *  - vmlinux __init and built-in __exit functions (between __init_begin
 *    and __init_end) were freed after boot: refused ("init-freed").
 *  - An indirect jmp is a tail call only where the module's .ko proves no
 *    address inside the function is taken (elfobj); in vmlinux it is
 *    refused.
 */
#ifndef PATHTRACE_KSYMS_H
#define PATHTRACE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/cfg.h>

#define KSYMS_NONE UINT32_MAX

struct ksym {
	uint64_t addr;
	uint64_t size;		/* to the next symbol: an upper bound (see above) */
	const char *name;
	const char *module;	/* NULL for vmlinux */
	char type;		/* kallsyms type letter */
	uint32_t cold;		/* the f.cold symbol of f (same module), or KSYMS_NONE;
				 * repeated names pair k-th with k-th in address order,
				 * or all share a single f.cold (see ksyms_load) */
};

struct ksyms;

/*
 * Parses a kallsyms file. Returns 0; -PT_EIO if it cannot be read;
 * -PT_EFORMAT for a malformed line; -PT_ENOENT if every address is 0
 * (kptr_restrict hides them: run as root); -PT_ENOMEM.
 */
int ksyms_load(const char *path, struct ksyms **out);
void ksyms_free(struct ksyms *ks);

/*
 * Adds n symbols of module (address, type and name of each; the strings
 * are copied), as kallsyms lists a module loaded since ksyms_load: the
 * indices of ksyms_get may change. Returns 0, or -PT_ENOMEM: then ks can
 * only be freed.
 */
int ksyms_add(struct ksyms *ks, const char *module, const struct ksym *syms, uint32_t n);

/* Text symbols (t/T, and W/w: weak functions), sorted by address. */
uint32_t ksyms_count(const struct ksyms *ks);
const struct ksym *ksyms_get(const struct ksyms *ks, uint32_t i);

/*
 * Index of text symbol name in module (NULL: vmlinux), -PT_ENOENT if
 * none, -PT_EINVAL if several (static functions can share a name).
 */
int64_t ksyms_find(const struct ksyms *ks, const char *name, const char *module);

/*
 * Text symbol i's position among the text symbols of its name in its
 * object (vmlinux or one module), from 1 in address order, and in *same
 * how many there are (1: the name is unique there).
 */
uint32_t ksyms_name_pos(const struct ksyms *ks, uint32_t i, uint32_t *same);

/* Address of any vmlinux symbol (data too), or 0. */
uint64_t ksyms_addr(const struct ksyms *ks, const char *name);

/* The text symbol starting exactly at addr, or NULL. */
const char *ksyms_name_at(const struct ksyms *ks, uint64_t addr);

/* /proc/kcore: an ELF core file whose PT_LOAD segments map kernel addresses. */
struct kcore;

/* Returns 0; -PT_EIO (errno kept); -PT_EFORMAT if not an ELF core; -PT_ENOMEM. */
int kcore_open(const char *path, struct kcore **out);
void kcore_close(struct kcore *k);

/*
 * Copies len bytes at kernel address addr. Returns 0; -PT_ENOENT if part
 * of the range is in no segment; -PT_EIO if the read fails or is short.
 */
int kcore_read(const struct kcore *k, uint64_t addr, void *buf, size_t len);

struct klive_paths {
	const char *kallsyms;	/* /proc/kallsyms */
	const char *kcore;	/* /proc/kcore */
	const char *sysmodule;	/* /sys/module */
	const char *moddir;	/* /lib/modules/$(uname -r) (has modules.dep) */
};

struct klive;

/* Opens the sources. Returns 0 or what ksyms_load / kcore_open return. */
int klive_open(const struct klive_paths *p, struct klive **out);
void klive_close(struct klive *k);

/* The symbol table klive uses. */
const struct ksyms *klive_ksyms(const struct klive *k);

/*
 * Builds the CFG input of function name (in module, or vmlinux if NULL)
 * from live bytes. Valid until the next call or klive_close. Returns 0;
 * -PT_ENOENT (no such function); -PT_EINVAL (ambiguous name);
 * -PT_EREFUSED with *tag and detail set when its tables cannot be known;
 * -PT_EIO / -PT_EFORMAT reading kcore or the module's files; -PT_ENOMEM.
 */
int klive_input(struct klive *k, const char *name, const char *module, struct cfg_input *in,
		const char **tag, char *detail, size_t n);

/* The same for text symbol i of klive_ksyms(k) (names need not be unique). */
int klive_input_sym(struct klive *k, uint32_t i, struct cfg_input *in, const char **tag,
		    char *detail, size_t n);

/*
 * Makes path the file of module (instead of the one modules.dep names):
 * its sizes and tables then come from that .ko and the loaded module's
 * sections. Returns 0; -PT_EIO if path cannot be read as an ELF object;
 * -PT_ENOENT if a table section of it is not among the loaded module's;
 * what reading the tables returns.
 */
int klive_module_file(struct klive *k, const char *module, const char *path);

/*
 * Module was loaded from path since klive_open: makes path its file (as
 * klive_module_file) and adds its functions to klive_ksyms(k) where
 * /sys/module/<module>/sections puts them, as kallsyms would list them,
 * without reading kallsyms again (ksyms_add: text indices may change).
 * Returns 0; -PT_EINVAL if klive_ksyms(k) has the module's symbols
 * already; -PT_ENOENT if a function's section is not among the loaded
 * module's; what klive_module_file and ksyms_add return.
 */
int klive_module_loaded(struct klive *k, const char *module, const char *path);

/* One ORC unwind entry (arch/x86/include/asm/orc_types.h), its bytes as the kernel holds them. */
#define KORC_ENTRY 6
struct korc_entry {
	uint64_t ip;
	uint8_t orc[KORC_ENTRY];
};

/*
 * The live ORC entries for code [addr, addr + len) of module (NULL:
 * vmlinux): first the entry in effect at addr (the last at or below it;
 * its ip given as addr), then every entry whose ip lies inside, in table
 * order. *out is malloc()ed. Returns 0; -PT_ENOENT if the object has no
 * ORC tables kallsyms or /sys/module names, or none at or below addr;
 * -PT_EIO / -PT_EFORMAT reading them; -PT_ENOMEM.
 */
int klive_orc(struct klive *k, const char *module, uint64_t addr, uint64_t len,
	      struct korc_entry **out, uint32_t *n);

#endif
