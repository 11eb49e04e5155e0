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
 * negates it (O/NO, B/AE, E/NE, BE/A, S/NS, P/NP, L/GE, LE/G). The five
 * flags they read make an index of 5 bits (CF, ZF, SF, OF, PF from bit 0);
 * PT_CC_TRUE(p) is the set of indices where predicate p holds.
 */
#define PT_CC_IX(i, b)	(((i) >> (b)) & 1)
#define PT_CC_PRED(p, i)						\
	((p) == 0 ? PT_CC_IX(i, 3) :					\
	 (p) == 1 ? PT_CC_IX(i, 0) :					\
	 (p) == 2 ? PT_CC_IX(i, 1) :					\
	 (p) == 3 ? PT_CC_IX(i, 0) | PT_CC_IX(i, 1) :			\
	 (p) == 4 ? PT_CC_IX(i, 2) :					\
	 (p) == 5 ? PT_CC_IX(i, 4) :					\
	 (p) == 6 ? PT_CC_IX(i, 2) ^ PT_CC_IX(i, 3) :			\
	 PT_CC_IX(i, 1) | (PT_CC_IX(i, 2) ^ PT_CC_IX(i, 3)))
#define PT_CC_TRUE4(p, i)						\
	(PT_CC_PRED(p, (i)) << (i) | PT_CC_PRED(p, (i) + 1) << ((i) + 1) |	\
	 PT_CC_PRED(p, (i) + 2) << ((i) + 2) | PT_CC_PRED(p, (i) + 3) << ((i) + 3))
#define PT_CC_TRUE16(p, i)						\
	(PT_CC_TRUE4(p, i) | PT_CC_TRUE4(p, (i) + 4) |			\
	 PT_CC_TRUE4(p, (i) + 8) | PT_CC_TRUE4(p, (i) + 12))
#define PT_CC_TRUE(p)	((u32)(PT_CC_TRUE16(p, 0u) | PT_CC_TRUE16(p, 16u)))

static __always_inline bool pt_cc_holds(u8 cc, unsigned long fl)
{
	static const u32 holds[8] = {
		PT_CC_TRUE(0), PT_CC_TRUE(1), PT_CC_TRUE(2), PT_CC_TRUE(3),
		PT_CC_TRUE(4), PT_CC_TRUE(5), PT_CC_TRUE(6), PT_CC_TRUE(7),
	};
	unsigned int i = (fl & X86_EFLAGS_CF) |			/* bit 0 -> 0 */
			 ((fl >> 5) & 6) |			/* ZF 6, SF 7 -> 1, 2 */
			 ((fl >> 8) & 8) |			/* OF 11 -> 3 */
			 ((fl << 2) & 16);			/* PF 2 -> 4 */

	return ((holds[(cc >> 1) & 7] >> i) & 1) != (cc & 1);
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
