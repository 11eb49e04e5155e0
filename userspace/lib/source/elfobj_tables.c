// SPDX-License-Identifier: GPL-2.0
/*
 * elfobj_tables - the kernel's exception, jump-label, bug and alternative
 * tables of an ELF object (x86-64, Linux 6.1 layouts).
 *
 * Every field is relative to its own address. In a relocatable object the
 * field holds 0 and a PC32 relocation says what it points at (S + A); in a
 * linked image the field holds the offset itself.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "elfobj_internal.h"
#include "ktables.h"

/*
 * struct alt_instr: s32 instr, s32 repl, then u16 cpuid (to 6.2: 12 bytes)
 * or u32 ft_flags (6.3 on: 14 bytes), then u8 instrlen, u8 replacementlen.
 */
#define ALT_ENTRY_OLD 12u
#define ALT_ENTRY_FT 14u

/* A table section of an object: the field reader's context. */
struct section_table {
	const struct elfobj *o;
	const struct elfobj_sec *s;
};

/*
 * Resolves the s32 field at offset off of the section: through its PC32
 * relocation in a relocatable object, else as the offset itself.
 * Returns 0, KTABLE_UNKNOWN (no relocation, an undefined symbol, or
 * address 0) or -PT_EFORMAT for a relocation of an unexpected type.
 */
static int section_field(const struct ktable *t, uint64_t off, uint64_t *addr)
{
	const struct section_table *st = t->ctx;
	const struct elfobj_rel *r;
	int32_t v;

	if (st->o->rel) {
		r = elfobj_rel_at(st->s, off);
		if (!r)
			return KTABLE_UNKNOWN;
		if (r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32)
			return -PT_EFORMAT;
		*addr = elfobj_rel_dest(st->o, r);
	} else {
		memcpy(&v, st->s->data + off, 4);
		*addr = st->s->addr + off + (int64_t)v;
	}
	return *addr ? 0 : KTABLE_UNKNOWN;
}

/* 1 with the section called name as a table read through section_field, or 0 if absent. */
static int open_table(const struct elfobj *o, const char *name, struct section_table *st,
		      struct ktable *t)
{
	size_t i;

	for (i = 0; i < o->nsecs; i++)
		if (o->secs[i].name && !strcmp(o->secs[i].name, name) && o->secs[i].data) {
			st->o = o;
			st->s = &o->secs[i];
			*t = (struct ktable){ st->s->data, st->s->size, st->s->addr,
					      section_field, st };
			return 1;
		}
	return 0;
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

/*
 * The size of .altinstructions' entries: in a module, where the second
 * entry's first relocation is; else the one of the two sizes that divides
 * the table (12 when both do). 0: neither.
 */
static uint32_t alt_entry(const struct section_table *st, const struct ktable *t)
{
	const struct elfobj_sec *s = st->s;

	if (st->o->rel && s->nrels >= 3 && s->rels[0].off == 0 && s->rels[1].off == 4 &&
	    (s->rels[2].off == ALT_ENTRY_OLD || s->rels[2].off == ALT_ENTRY_FT))
		return t->size % s->rels[2].off ? 0 : s->rels[2].off;
	if (t->size % ALT_ENTRY_OLD == 0)
		return ALT_ENTRY_OLD;
	return t->size % ALT_ENTRY_FT ? 0 : ALT_ENTRY_FT;
}

/* .altinstructions: the replacement may be unknown (then repl is NULL), the site may not. */
static int read_alts(struct elfobj *o, const struct section_table *st, const struct ktable *t)
{
	uint32_t n, entry = alt_entry(st, t);
	uint64_t off, a, r;
	int err;

	if (!entry)
		return -PT_EFORMAT;
	o->alts = calloc(t->size / entry + 1, sizeof(*o->alts));
	if (!o->alts)
		return -PT_ENOMEM;
	for (off = 0, n = 0; off < t->size; off += entry) {
		uint8_t ilen = t->data[off + entry - 2], rlen = t->data[off + entry - 1];

		err = ktable_field(t, off, &a);
		if (err)
			return err < 0 ? err : -PT_EFORMAT;
		err = ktable_field(t, off + 4, &r);
		if (err < 0)
			return err;
		if (err)
			r = 0;
		o->alts[n++] = (struct cfg_alt_site){ a, ilen, rlen, r,
						      r ? bytes_at(o, r, rlen) : NULL };
	}
	o->nalts = n;
	qsort(o->alts, n, sizeof(*o->alts), cmp_alt);
	return 0;
}

int elfobj_read_tables(struct elfobj *o)
{
	struct section_table st;
	struct ktable t;
	int err = 0;

	if (open_table(o, "__ex_table", &st, &t))
		err = ktable_read_fixups(&t, &o->fixups, &o->nfixups);
	if (!err && open_table(o, "__jump_table", &st, &t))
		err = ktable_read_keys(&t, &o->keys, &o->nkeys);
	if (!err && open_table(o, "__bug_table", &st, &t))
		err = ktable_read_bugs(&t, &o->bugs, &o->nbugs);
	if (!err && open_table(o, ".altinstructions", &st, &t))
		err = read_alts(o, &st, &t);
	return err;
}
