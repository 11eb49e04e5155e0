/* SPDX-License-Identifier: GPL-2.0 */
/*
 * conds.h - a probe site's branch condition: whether the branch at the
 * site goes taken under the probed flags, and which of the site's actions
 * run then. Every handler that runs a site's actions (handlers.c,
 * profile.c) decides them here.
 */
#ifndef PATHTRACE_CONDS_H
#define PATHTRACE_CONDS_H

#include <linux/compiler.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <asm/processor-flags.h>

#include "pathtrace_abi.h"

/*
 * x86 condition codes: cc >> 1 picks a predicate on the flags, cc & 1
 * negates it (O/NO, B/AE, E/NE, BE/A, S/NS, P/NP, L/GE, LE/G).
 */
static __always_inline bool pt_cc_holds(u8 cc, unsigned long fl)
{
	bool cf = fl & X86_EFLAGS_CF;
	bool pf = fl & X86_EFLAGS_PF;
	bool zf = fl & X86_EFLAGS_ZF;
	bool sf = fl & X86_EFLAGS_SF;
	bool of = fl & X86_EFLAGS_OF;
	const bool base[8] = {
		of, cf, zf, cf || zf, sf, pf, sf != of, zf || sf != of,
	};

	return base[(cc >> 1) & 7] != (cc & 1);
}

/* Whether site s's branch goes taken (false at a site without one). */
static __always_inline bool pt_site_taken(const struct pt_site *s, unsigned long rflags)
{
	return s->cond != PT_COND_NONE && pt_cc_holds(s->cond, rflags);
}

/* Whether action a runs when its site's branch goes taken (or not). */
static __always_inline bool pt_applies(const struct pt_action *a, bool taken)
{
	switch (a->when) {
	case PT_WHEN_TAKEN:
		return taken;
	case PT_WHEN_NOT_TAKEN:
		return !taken;
	default:
		return true;
	}
}

#endif
