/* SPDX-License-Identifier: GPL-2.0 */
/* ktext_refs - vmlinux data words that point into its text (ktext_refs.c). */
#ifndef PATHTRACE_KTEXT_REFS_H
#define PATHTRACE_KTEXT_REFS_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/ksyms.h>

struct ktext_refs {
	uint64_t *words;	/* sorted, each once */
	size_t n, cap;
	int loaded;
};

/*
 * Reads .rodata and .data (kallsyms __start_rodata/__end_rodata,
 * _sdata/_edata) through kcore and keeps the 8-byte-aligned words inside
 * [_stext, _etext). Returns 0; -PT_ENOENT if a bound is not in kallsyms;
 * what kcore_read returns; -PT_ENOMEM.
 */
int ktext_refs_load(struct ktext_refs *r, const struct ksyms *ks, const struct kcore *kc);
void ktext_refs_free(struct ktext_refs *r);

/* The lowest word in [lo, hi), or 0 if none. */
uint64_t ktext_refs_in(const struct ktext_refs *r, uint64_t lo, uint64_t hi);

#endif
