// SPDX-License-Identifier: GPL-2.0
/*
 * ktables - decoding the kernel's exception, jump-label and bug tables.
 * Every address field is an s32 relative to its own address; how it
 * resolves (bytes alone, or a relocation) is the caller's field reader.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "ktables.h"

#define BUGFLAG_WARNING (1u << 0)

int ktable_field(const struct ktable *t, uint64_t off, uint64_t *target)
{
	int32_t v;

	if (off + 4 > t->size)
		return -PT_EFORMAT;
	if (t->field)
		return t->field(t, off, target);
	memcpy(&v, t->data + off, 4);
	*target = t->addr + off + (int64_t)v;
	return 0;
}

/* The s32 field at off, which must be known. Returns 0 or -PT_EFORMAT (or t->field's error). */
static int known_field(const struct ktable *t, uint64_t off, uint64_t *target)
{
	int err = ktable_field(t, off, target);

	return err == KTABLE_UNKNOWN ? -PT_EFORMAT : err;
}

static int decode_fixup(const struct ktable *t, uint64_t off, void *entry)
{
	struct cfg_fixup *f = entry;
	int err = known_field(t, off, &f->insn);

	if (!err)
		memcpy(&f->data, t->data + off + 8, 4);
	return err ? err : known_field(t, off + 4, &f->fixup);
}

static int decode_key(const struct ktable *t, uint64_t off, void *entry)
{
	struct cfg_key_site *k = entry;
	int err = known_field(t, off, &k->code);
	int64_t v;

	if (!err)
		err = known_field(t, off + 4, &k->target);
	k->init_jump = -1;
	if (err || t->field)
		return err;	/* a relocated key field is not read: key 0 */
	/* live: the s64 key field holds the offset with the flag bits (jump_entry_key) */
	memcpy(&v, t->data + off + 8, 8);
	k->key = t->addr + off + 8 + (uint64_t)(v & ~(int64_t)3);
	k->branch = (uint8_t)(v & KTABLE_JUMP_BRANCH);
	return 0;
}

int ktable_key_init_jump(const struct cfg_key_site *k, uint64_t type_word)
{
	return (int)((type_word & KTABLE_JUMP_TYPE_TRUE) ^ k->branch);
}

static int decode_bug(const struct ktable *t, uint64_t off, void *entry)
{
	struct cfg_bug_site *b = entry;
	int err = known_field(t, off, &b->addr);
	uint16_t flags;

	if (err)
		return err;
	/* the file name may be a string an object's reader cannot resolve: 0 */
	err = ktable_field(t, off + 4, &b->file);
	if (err < 0)
		return err;
	if (err == KTABLE_UNKNOWN)
		b->file = 0;
	memcpy(&b->line, t->data + off + 8, 2);
	memcpy(&flags, t->data + off + 10, 2);
	b->flags = flags;
	b->warning = !!(flags & BUGFLAG_WARNING);
	return 0;
}

/* Orders decoded entries by the u64 address each starts with (insn, code, addr). */
static int cmp_addr(const void *x, const void *y)
{
	uint64_t a, b;

	memcpy(&a, x, sizeof(a));
	memcpy(&b, y, sizeof(b));
	return a < b ? -1 : a > b;
}

/*
 * Decodes every entry (entry bytes in the table, elem bytes decoded) into
 * a new array sorted by address. Returns as ktable_read_fixups.
 */
static int read_table(const struct ktable *t, uint32_t entry, size_t elem,
		      int (*decode)(const struct ktable *t, uint64_t off, void *entry),
		      void **out, uint32_t *n)
{
	uint32_t i, count;
	uint8_t *e;
	int err;

	if (t->size % entry)
		return -PT_EFORMAT;
	count = t->size / entry;
	e = calloc((size_t)count + 1, elem);	/* + 1: an empty table is no failure */
	if (!e)
		return -PT_ENOMEM;
	for (i = 0; i < count; i++) {
		err = decode(t, (uint64_t)i * entry, e + (size_t)i * elem);
		if (err) {
			free(e);
			return err;
		}
	}
	qsort(e, count, elem, cmp_addr);
	*out = e;
	*n = count;
	return 0;
}

int ktable_read_fixups(const struct ktable *t, struct cfg_fixup **out, uint32_t *n)
{
	return read_table(t, KTABLE_EX_ENTRY, sizeof(**out), decode_fixup, (void **)out, n);
}

int ktable_read_keys(const struct ktable *t, struct cfg_key_site **out, uint32_t *n)
{
	return read_table(t, KTABLE_JUMP_ENTRY, sizeof(**out), decode_key, (void **)out, n);
}

int ktable_read_bugs(const struct ktable *t, struct cfg_bug_site **out, uint32_t *n)
{
	return read_table(t, KTABLE_BUG_ENTRY, sizeof(**out), decode_bug, (void **)out, n);
}

/* The address an entry starts with (insn, code or addr: each entry's first field). */
static uint64_t entry_addr(const uint8_t *table, size_t elem, uint32_t i)
{
	uint64_t a;

	memcpy(&a, table + (size_t)i * elem, sizeof(a));
	return a;
}

int ktable_append_range(void **dst, uint32_t *n, uint32_t *cap, const void *table,
			uint32_t count, size_t elem, uint64_t a, uint64_t len)
{
	uint32_t lo = 0, hi = count, end, ncap;
	void *p;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (entry_addr(table, elem, mid) < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < count && entry_addr(table, elem, end) - a < len; end++)
		;
	if (*n + (end - lo) > *cap) {
		ncap = *cap ? *cap : 16;
		while (ncap < *n + (end - lo))
			ncap *= 2;
		p = realloc(*dst, (size_t)ncap * elem);
		if (!p)
			return -PT_ENOMEM;
		*dst = p;
		*cap = ncap;
	}
	memcpy((uint8_t *)*dst + (size_t)*n * elem, (const uint8_t *)table + (size_t)lo * elem,
	       (size_t)(end - lo) * elem);
	*n += end - lo;
	return 0;
}
