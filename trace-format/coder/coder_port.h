/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coder_port.h - what the stream coder takes from its surroundings.
 *
 * The coder (coder.h) is freestanding C built twice: by Kbuild into
 * pathtrace.ko and by the Makefile into the test oracle. In the kernel the
 * kernel's own headers give the types and helpers; elsewhere this file
 * gives the same names from the compiler alone (no libc).
 */
#ifndef PATHTRACE_CODER_PORT_H
#define PATHTRACE_CODER_PORT_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define U32_MAX			0xffffffffu
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define ALIGN(x, a)		(((x) + (a) - 1) / (a) * (a))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define min(a, b)		((a) < (b) ? (a) : (b))
#define memset			__builtin_memset
#define memcpy			__builtin_memcpy
#define memmove			__builtin_memmove

/* The position of the top set bit, 1 for bit 0; 0 for none (as the kernel's). */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}
#endif

#endif
