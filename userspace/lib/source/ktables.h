/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktables - decoding the kernel's exception, jump-label and bug tables
 * (x86-64, Linux 6.1 layouts), wherever their bytes come from: an ELF
 * object (elfobj_tables.c) or the running kernel (ksyms_live.c).
 */
#ifndef PATHTRACE_KTABLES_H
#define PATHTRACE_KTABLES_H

#include <stdint.h>

#include <pathtrace/cfg.h>

#define KTABLE_EX_ENTRY 12	/* s32 insn, s32 fixup, s32 data */
#define KTABLE_JUMP_ENTRY 16	/* s32 code, s32 target, s64 key */
#define KTABLE_JUMP_BRANCH 1	/* the key field's bit 0 (bit 1: the site is init text) */
#define KTABLE_JUMP_KEY_TYPE 8	/* struct static_key: its type word (entries | JUMP_TYPE_*) */
#define KTABLE_JUMP_TYPE_TRUE 1
#define KTABLE_BUG_ENTRY 12	/* s32 bug_addr, s32 file, u16 line, u16 flags (DEBUG_BUGVERBOSE) */

/* What a field reader returns for a field whose target cannot be known. */
#define KTABLE_UNKNOWN 1

/* A table's bytes, where they are, and how its s32 self-relative fields resolve. */
struct ktable {
	const uint8_t *data;
	uint64_t size;
	uint64_t addr;		/* the address of data[0] */
	/*
	 * Resolves the s32 field at offset off into *target: 0, KTABLE_UNKNOWN,
	 * or a negative PT_E* code. NULL: the field holds the offset itself.
	 */
	int (*field)(const struct ktable *t, uint64_t off, uint64_t *target);
	const void *ctx;	/* for field */
};

/*
 * The address the s32 field at offset off points at, through t->field.
 * Returns 0, KTABLE_UNKNOWN, -PT_EFORMAT for a field outside the table, or
 * what t->field returns.
 */
int ktable_field(const struct ktable *t, uint64_t off, uint64_t *target);

/*
 * Decodes an __ex_table, __jump_table or __bug_table into a new array
 * (*out, free()d by the caller) of *n entries sorted by address. A jump
 * entry's key and branch bit are decoded only where t->field is NULL (a
 * live table; else key 0); init_jump is -1 (ktable_key_init_jump).
 * Returns 0, -PT_EFORMAT (size not a whole number of entries, a field
 * outside the table or not known, or what t->field refuses) or -PT_ENOMEM.
 */
int ktable_read_fixups(const struct ktable *t, struct cfg_fixup **out, uint32_t *n);
int ktable_read_keys(const struct ktable *t, struct cfg_key_site **out, uint32_t *n);
int ktable_read_bugs(const struct ktable *t, struct cfg_bug_site **out, uint32_t *n);

/*
 * The initial state of key site k (jump_label_init_type) from its key's
 * type word (the u64 at the key + KTABLE_JUMP_KEY_TYPE): 1 the jmp, 0 the nop.
 */
int ktable_key_init_jump(const struct cfg_key_site *k, uint64_t type_word);

/*
 * Appends to *dst (*n entries, room for *cap) the entries of a sorted
 * table (count entries of elem bytes, each starting with its u64 address)
 * whose address lies in [a, a + len): one function's share of a table.
 * Returns 0, or -PT_ENOMEM with *dst, *n and *cap unchanged.
 */
int ktable_append_range(void **dst, uint32_t *n, uint32_t *cap, const void *table,
			uint32_t count, size_t elem, uint64_t a, uint64_t len);

#endif
