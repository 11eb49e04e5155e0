// SPDX-License-Identifier: GPL-2.0
/*
 * ktext_refs - the 8-byte words of vmlinux's data that point into its text.
 *
 * An indirect jmp in a vmlinux function is an indirect tail call unless it
 * can land inside the function. Debian's kernel is built with retpolines,
 * so with -fno-jump-tables, and is not position independent: code can land
 * inside a function through a jmp only at an address that some data holds
 * as an absolute 8-byte pointer (a computed-goto table such as the BPF
 * interpreter's, in .rodata) or that code takes itself (cfg_build's
 * taken_at). This reads .rodata and .data once and keeps the pointers into
 * text, so klive can prove, function by function, what a .ko's relocations
 * prove for a module (elfobj taken_inside). Relative tables (exception,
 * jump, bug, ORC) hold 32-bit offsets, not pointers: an exception fixup is
 * reached by the fault handler, not by an indirect jmp.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "ktext_refs.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int add_range(struct ktext_refs *r, const struct kcore *kc, uint64_t lo, uint64_t hi,
		     uint64_t text_lo, uint64_t text_hi)
{
	enum { CHUNK = 1 << 20 };
	uint64_t *buf = malloc(CHUNK);
	uint64_t a;
	int err = 0;

	if (!buf)
		return -PT_ENOMEM;
	lo = (lo + 7) & ~7ull;
	for (a = lo; a < hi && !err; a += CHUNK) {
		size_t n = hi - a < CHUNK ? (size_t)(hi - a) & ~(size_t)7 : CHUNK, i;

		err = kcore_read(kc, a, buf, n);
		for (i = 0; !err && i < n / 8; i++) {
			if (buf[i] < text_lo || buf[i] >= text_hi)
				continue;
			if (r->n == r->cap) {
				size_t cap = r->cap ? r->cap * 2 : 4096;
				uint64_t *g = realloc(r->words, cap * sizeof(*g));

				if (!g) {
					err = -PT_ENOMEM;
					break;
				}
				r->words = g;
				r->cap = cap;
			}
			r->words[r->n++] = buf[i];
		}
	}
	free(buf);
	return err;
}

int ktext_refs_load(struct ktext_refs *r, const struct ksyms *ks, const struct kcore *kc)
{
	static const char *const range[][2] = {
		{ "__start_rodata", "__end_rodata" },
		{ "_sdata", "_edata" },
	};
	uint64_t text_lo = ksyms_addr(ks, "_stext"), text_hi = ksyms_addr(ks, "_etext");
	size_t i, k = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!text_lo || text_hi <= text_lo)
		return -PT_ENOENT;
	for (i = 0; i < sizeof(range) / sizeof(range[0]) && !err; i++) {
		uint64_t lo = ksyms_addr(ks, range[i][0]), hi = ksyms_addr(ks, range[i][1]);

		if (!lo || hi <= lo)
			err = -PT_ENOENT;
		else
			err = add_range(r, kc, lo, hi, text_lo, text_hi);
	}
	if (err) {
		ktext_refs_free(r);
		return err;
	}
	qsort(r->words, r->n, sizeof(*r->words), cmp_u64);
	for (i = 0; i < r->n; i++)
		if (!k || r->words[k - 1] != r->words[i])
			r->words[k++] = r->words[i];
	r->n = k;
	r->loaded = 1;
	return 0;
}

void ktext_refs_free(struct ktext_refs *r)
{
	free(r->words);
	memset(r, 0, sizeof(*r));
}

uint64_t ktext_refs_in(const struct ktext_refs *r, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (r->words[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < r->n && r->words[a] < hi ? r->words[a] : 0;
}
