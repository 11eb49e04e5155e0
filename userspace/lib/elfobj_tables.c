// SPDX-License-Identifier: GPL-2.0
/*
 * elfobj_tables - the kernel's exception, jump-label and bug tables of an
 * ELF object (x86-64, Linux 6.1 layouts).
 *
 * Every field is relative to its own address. In a relocatable object the
 * field holds 0 and a PC32 relocation says what it points at (S + A); in a
 * linked image the field holds the offset itself.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "elfobj_internal.h"

#define EX_ENTRY 12	/* s32 insn, s32 fixup, s32 data */
#define JUMP_ENTRY 16	/* s32 code, s32 target, s64 key */
#define BUG_ENTRY 12	/* s32 bug_addr, s32 file, u16 line, u16 flags (DEBUG_BUGVERBOSE) */
#define BUGFLAG_WARNING (1u << 0)
#define ALT_ENTRY 12	/* s32 instr, s32 repl, u16 cpuid, u8 instrlen, u8 replacementlen (6.1) */

/*
 * The address the s32 field at offset off of section s points at; 0 when
 * it cannot be known (the relocation names an undefined symbol).
 * Returns -PT_EFORMAT for a field outside the section or a relocation of
 * an unexpected type.
 */
static int field(const struct elfobj *o, const struct elfobj_sec *s, uint64_t off,
		 uint64_t *addr)
{
	const struct elfobj_rel *r;
	int32_t v;

	if (off + 4 > s->size)
		return -PT_EFORMAT;
	if (o->rel) {
		r = elfobj_rel_at(s, off);
		if (!r) {
			*addr = 0;
			return 0;
		}
		if (r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32)
			return -PT_EFORMAT;
		*addr = elfobj_rel_dest(o, r);
		return 0;
	}
	memcpy(&v, s->data + off, 4);
	*addr = s->addr + off + (int64_t)v;
	return 0;
}

static const struct elfobj_sec *find(const struct elfobj *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->nsecs; i++)
		if (o->secs[i].name && !strcmp(o->secs[i].name, name) && o->secs[i].data)
			return &o->secs[i];
	return NULL;
}

static int cmp_fixup(const void *x, const void *y)
{
	const struct cfg_fixup *a = x, *b = y;

	return a->insn < b->insn ? -1 : a->insn > b->insn;
}

static int cmp_key(const void *x, const void *y)
{
	const struct cfg_key_site *a = x, *b = y;

	return a->code < b->code ? -1 : a->code > b->code;
}

static int cmp_alt(const void *x, const void *y)
{
	const struct cfg_alt_site *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The bytes at addr if a section holds len of them there, else NULL. */
static const uint8_t *bytes_at(const struct elfobj *o, uint64_t addr, uint32_t len)
{
	size_t i;

	for (i = 0; i < o->nsecs; i++) {
		const struct elfobj_sec *s = &o->secs[i];

		if (s->data && addr >= s->addr && addr - s->addr <= s->size &&
		    len <= s->size - (addr - s->addr))
			return s->data + (addr - s->addr);
	}
	return NULL;
}

static int cmp_bug(const void *x, const void *y)
{
	const struct cfg_bug_site *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int elfobj_read_tables(struct elfobj *o)
{
	const struct elfobj_sec *s;
	uint64_t off, a, t;
	uint32_t n;
	int err;

	s = find(o, "__ex_table");
	if (s) {
		if (s->size % EX_ENTRY)
			return -PT_EFORMAT;
		o->fixups = calloc(s->size / EX_ENTRY + 1, sizeof(*o->fixups));
		if (!o->fixups)
			return -PT_ENOMEM;
		for (off = 0, n = 0; off < s->size; off += EX_ENTRY) {
			err = field(o, s, off, &a);
			if (!err)
				err = field(o, s, off + 4, &t);
			if (err)
				return err;
			if (!a || !t)
				return -PT_EFORMAT;
			o->fixups[n++] = (struct cfg_fixup){ a, t };
		}
		o->nfixups = n;
		qsort(o->fixups, n, sizeof(*o->fixups), cmp_fixup);
	}
	s = find(o, "__jump_table");
	if (s) {
		if (s->size % JUMP_ENTRY)
			return -PT_EFORMAT;
		o->keys = calloc(s->size / JUMP_ENTRY + 1, sizeof(*o->keys));
		if (!o->keys)
			return -PT_ENOMEM;
		for (off = 0, n = 0; off < s->size; off += JUMP_ENTRY) {
			err = field(o, s, off, &a);
			if (!err)
				err = field(o, s, off + 4, &t);
			if (err)
				return err;
			if (!a || !t)
				return -PT_EFORMAT;
			o->keys[n++] = (struct cfg_key_site){ a, t };
		}
		o->nkeys = n;
		qsort(o->keys, n, sizeof(*o->keys), cmp_key);
	}
	s = find(o, "__bug_table");
	if (s) {
		if (s->size % BUG_ENTRY)
			return -PT_EFORMAT;
		o->bugs = calloc(s->size / BUG_ENTRY + 1, sizeof(*o->bugs));
		if (!o->bugs)
			return -PT_ENOMEM;
		for (off = 0, n = 0; off < s->size; off += BUG_ENTRY) {
			uint16_t flags;

			err = field(o, s, off, &a);
			if (err)
				return err;
			if (!a)
				return -PT_EFORMAT;
			memcpy(&flags, s->data + off + 10, 2);
			o->bugs[n++] = (struct cfg_bug_site){ a, !!(flags & BUGFLAG_WARNING) };
		}
		o->nbugs = n;
		qsort(o->bugs, n, sizeof(*o->bugs), cmp_bug);
	}
	s = find(o, ".altinstructions");
	if (s) {
		if (s->size % ALT_ENTRY)
			return -PT_EFORMAT;
		o->alts = calloc(s->size / ALT_ENTRY + 1, sizeof(*o->alts));
		if (!o->alts)
			return -PT_ENOMEM;
		for (off = 0, n = 0; off < s->size; off += ALT_ENTRY) {
			uint8_t ilen = s->data[off + 10], rlen = s->data[off + 11];

			err = field(o, s, off, &a);
			if (!err)
				err = field(o, s, off + 4, &t);
			if (err)
				return err;
			if (!a)
				return -PT_EFORMAT;
			o->alts[n++] = (struct cfg_alt_site){ a, ilen, rlen, t,
							      t ? bytes_at(o, t, rlen) : NULL };
		}
		o->nalts = n;
		qsort(o->alts, n, sizeof(*o->alts), cmp_alt);
	}
	return 0;
}
