/* SPDX-License-Identifier: GPL-2.0 */
/* inline_refuse - a copy's refusal: its tag, and where and why (inline_copy.c). */
#ifndef PATHTRACE_INLINE_REFUSE_H
#define PATHTRACE_INLINE_REFUSE_H

#include <pathtrace/inline.h>

/* Sets cp->refusal to tag and cp->detail from fmt. Returns -PT_EREFUSED. */
int inline_refuse(struct inline_copy *cp, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
