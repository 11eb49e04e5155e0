// SPDX-License-Identifier: GPL-2.0
/*
 * ktext_refs - the 8-byte words of vmlinux's data that point into its text.
 *
 * An indirect jmp in a vmlinux function is an indirect tail call unless it
 * can land inside the function. Debian's kernel is built with retpolines,
 * hence -fno-jump-tables (and objtool rejects unannotated indirect jumps in
 * its assembly), and is not position independent (mcmodel=kernel): code can
 * land inside a function through a jmp only at an address that some data
 * holds as an absolute 8-byte pointer (a computed-goto table such as the
 * BPF interpreter's, in .rodata) or that code materialises itself (a
 * rip-relative lea, a sign-extended imm32 or an absolute displacement:
 * cfg_build's taken_at). This reads .rodata and .data once and keeps the
 * words pointing into text, so klive can prove, function by function, what
 * a .ko's relocations prove for a module (elfobj taken_inside).
 *
 * What is not scanned, and why it cannot hide an inner jmp target:
 * - 4-byte relative tables (exception, jump-label, static-call, alternative,
 *   bug, ORC): their offsets are read by the fault handler, the patcher or
 *   the unwinder, never loaded into a register for a jmp. An exception
 *   fixup is reached by the fault handler rewriting regs->ip, which
 *   cfg_build models from the exception table itself (fixup edges).
 * - .bss, the heap, stacks and per-CPU areas: written at run time only, so
 *   whatever they hold came from code (taken_at) or from the data scanned
 *   here; return addresses there are reached by ret, not jmp. Per-CPU
 *   initial values are file-scope initialisers, where no label can be taken.
 * - __init data: freed after boot.
 * - words that are not 8-byte aligned: the compiler aligns pointers; only a
 *   packed structure could hold one unaligned, and no label goes there.
 * A word is a snapshot of data at this read; one written later must again
 * come from code or from data scanned here.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "ktext_refs.h"

static const char *const range_sym[KTEXT_NRANGES][3] = {
	[KTEXT_RODATA] = { "__start_rodata", "__end_rodata", ".rodata" },
	[KTEXT_DATA] = { "_sdata", "_edata", ".data" },
};

static int by_target(const void *a, const void *b)
{
	const struct ktext_ref *x = a, *y = b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int push(struct ktext_refs *r, uint64_t target, uint64_t at)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		struct ktext_ref *g = realloc(r->refs, cap * sizeof(*g));

		if (!g)
			return -PT_ENOMEM;
		r->refs = g;
		r->cap = cap;
	}
	r->refs[r->n++] = (struct ktext_ref){ target, at };
	return 0;
}

/* Keeps the words of [lo, hi) that point into [text_lo, text_hi). */
static int scan_range(struct ktext_refs *r, const struct kcore *kc, uint64_t lo, uint64_t hi,
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
		for (i = 0; !err && i < n / 8; i++)
			if (buf[i] >= text_lo && buf[i] < text_hi)
				err = push(r, buf[i], a + 8 * i);
	}
	free(buf);
	return err;
}

int ktext_refs_load(struct ktext_refs *r, const struct ksyms *ks, const struct kcore *kc)
{
	uint64_t text_lo = ksyms_addr(ks, "_stext"), text_hi = ksyms_addr(ks, "_etext");
	int i, err = 0;

	memset(r, 0, sizeof(*r));
	if (!text_lo || text_hi <= text_lo)
		return -PT_ENOENT;
	for (i = 0; i < KTEXT_NRANGES && !err; i++) {
		r->lo[i] = ksyms_addr(ks, range_sym[i][0]);
		r->hi[i] = ksyms_addr(ks, range_sym[i][1]);
		if (!r->lo[i] || r->hi[i] <= r->lo[i])
			err = -PT_ENOENT;
		else
			err = scan_range(r, kc, r->lo[i], r->hi[i], text_lo, text_hi);
	}
	if (err) {
		ktext_refs_free(r);
		return err;
	}
	qsort(r->refs, r->n, sizeof(*r->refs), by_target);
	return 0;
}

void ktext_refs_free(struct ktext_refs *r)
{
	free(r->refs);
	memset(r, 0, sizeof(*r));
}

const struct ktext_ref *ktext_refs_in(const struct ktext_refs *r, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (r->refs[mid].target < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < r->n && r->refs[a].target < hi ? &r->refs[a] : NULL;
}

const char *ktext_refs_section(const struct ktext_refs *r, uint64_t at)
{
	int i;

	for (i = 0; i < KTEXT_NRANGES; i++)
		if (at >= r->lo[i] && at < r->hi[i])
			return range_sym[i][2];
	return "?";
}
