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

/* Both s32 fields at off and off + 4, each known. Returns 0 or -PT_EFORMAT (or t->field's error). */
static int field_pair(const struct ktable *t, uint64_t off, uint64_t *a, uint64_t *b)
{
	int err = ktable_field(t, off, a);

	if (!err)
		err = ktable_field(t, off + 4, b);
	if (err == KTABLE_UNKNOWN)
		return -PT_EFORMAT;
	return err;
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

static int cmp_bug(const void *x, const void *y)
{
	const struct cfg_bug_site *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int ktable_read_fixups(const struct ktable *t, struct cfg_fixup **out, uint32_t *n)
{
	struct cfg_fixup *e;
	uint32_t i, count;
	int err;

	if (t->size % KTABLE_EX_ENTRY)
		return -PT_EFORMAT;
	count = t->size / KTABLE_EX_ENTRY;
	e = calloc((size_t)count + 1, sizeof(*e));	/* + 1: an empty table is no failure */
	if (!e)
		return -PT_ENOMEM;
	for (i = 0; i < count; i++) {
		err = field_pair(t, (uint64_t)i * KTABLE_EX_ENTRY, &e[i].insn, &e[i].fixup);
		if (err) {
			free(e);
			return err;
		}
	}
	qsort(e, count, sizeof(*e), cmp_fixup);
	*out = e;
	*n = count;
	return 0;
}

int ktable_read_keys(const struct ktable *t, struct cfg_key_site **out, uint32_t *n)
{
	struct cfg_key_site *e;
	uint32_t i, count;
	int err;

	if (t->size % KTABLE_JUMP_ENTRY)
		return -PT_EFORMAT;
	count = t->size / KTABLE_JUMP_ENTRY;
	e = calloc((size_t)count + 1, sizeof(*e));
	if (!e)
		return -PT_ENOMEM;
	for (i = 0; i < count; i++) {
		err = field_pair(t, (uint64_t)i * KTABLE_JUMP_ENTRY, &e[i].code, &e[i].target);
		if (err) {
			free(e);
			return err;
		}
	}
	qsort(e, count, sizeof(*e), cmp_key);
	*out = e;
	*n = count;
	return 0;
}

int ktable_read_bugs(const struct ktable *t, struct cfg_bug_site **out, uint32_t *n)
{
	struct cfg_bug_site *e;
	uint32_t i, count;
	uint16_t flags;
	uint64_t off;
	int err;

	if (t->size % KTABLE_BUG_ENTRY)
		return -PT_EFORMAT;
	count = t->size / KTABLE_BUG_ENTRY;
	e = calloc((size_t)count + 1, sizeof(*e));
	if (!e)
		return -PT_ENOMEM;
	for (i = 0; i < count; i++) {
		off = (uint64_t)i * KTABLE_BUG_ENTRY;
		err = ktable_field(t, off, &e[i].addr);
		if (err == KTABLE_UNKNOWN)
			err = -PT_EFORMAT;
		if (err) {
			free(e);
			return err;
		}
		memcpy(&flags, t->data + off + 10, 2);
		e[i].warning = !!(flags & BUGFLAG_WARNING);
	}
	qsort(e, count, sizeof(*e), cmp_bug);
	*out = e;
	*n = count;
	return 0;
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
