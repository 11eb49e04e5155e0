/* SPDX-License-Identifier: GPL-2.0 */
/* ktext_refs - vmlinux data words that point into its text (ktext_refs.c). */
#ifndef PATHTRACE_KTEXT_REFS_H
#define PATHTRACE_KTEXT_REFS_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/ksyms.h>

/* One 8-byte data word whose value is an address in [_stext, _etext). */
struct ktext_ref {
	uint64_t target;	/* the word's value */
	uint64_t at;		/* where the word is */
};

/* The data ranges scanned, by kallsyms bounds. */
enum { KTEXT_RODATA, KTEXT_DATA, KTEXT_NRANGES };

struct ktext_refs {
	struct ktext_ref *refs;	/* sorted by target, then at */
	size_t n, cap;
	uint64_t lo[KTEXT_NRANGES], hi[KTEXT_NRANGES];
};

/*
 * Reads .rodata (__start_rodata..__end_rodata, which on x86-64 holds
 * ro_after_init too) and .data (_sdata.._edata) through kcore, one read per
 * MiB, and keeps the 8-byte-aligned words inside [_stext, _etext). Returns
 * 0; -PT_ENOENT if kallsyms lacks a bound (or a range is empty); what
 * kcore_read returns (-PT_ENOENT for an address no segment maps, -PT_EIO);
 * -PT_ENOMEM. On error r holds no words (ktext_refs_free is still fine).
 */
int ktext_refs_load(struct ktext_refs *r, const struct ksyms *ks, const struct kcore *kc);
void ktext_refs_free(struct ktext_refs *r);

/* The word with the lowest target in [lo, hi) (binary search), or NULL. */
const struct ktext_ref *ktext_refs_in(const struct ktext_refs *r, uint64_t lo, uint64_t hi);

/* ".rodata" or ".data": the scanned range that holds address at ("?" if none). */
const char *ktext_refs_section(const struct ktext_refs *r, uint64_t at);

#endif
