/* SPDX-License-Identifier: GPL-2.0 */
/*
 * names - what a function operand of cfg and plan names: itself, or, as a
 * shell glob (with *, ? or [), every function of the source it matches
 * (enable matches the same way over the running kernel's text symbols).
 */
#ifndef PATHTRACECTL_NAMES_H
#define PATHTRACECTL_NAMES_H

#include <stdint.h>

#include <pathtrace/elfobj.h>
#include <pathtrace/ksyms.h>

struct ctl_names {
	const char **v;		/* names, sorted, each once (pointing into the source) */
	uint32_t n, cap;
};

/* Whether name is the .cold part of a function (f.cold, f.cold.N). */
int ctl_is_cold(const char *name);

/* Whether pattern is a glob. */
int ctl_is_glob(const char *pattern);

/*
 * The functions of o (no .cold parts) that pattern names. Returns 0 (n may
 * be 0: nothing matches) or -PT_ENOMEM.
 */
int ctl_names_elf(const struct elfobj *o, const char *pattern, struct ctl_names *out);

/* The same over the text symbols of ks in module (NULL: vmlinux). */
int ctl_names_live(const struct ksyms *ks, const char *pattern, const char *module,
		   struct ctl_names *out);

void ctl_names_free(struct ctl_names *names);

#endif
