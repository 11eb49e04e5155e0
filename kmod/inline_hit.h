/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inline_hit.h - the struct pt_regs pt_inline_hit (inline_hit.S) builds on
 * its stack: x86-64's layout, which inline_sites.c checks at build time.
 */
#ifndef PT_INLINE_HIT_H
#define PT_INLINE_HIT_H

#define PT_HIT_R15	0
#define PT_HIT_R14	8
#define PT_HIT_R13	16
#define PT_HIT_R12	24
#define PT_HIT_BP	32
#define PT_HIT_BX	40
#define PT_HIT_R11	48
#define PT_HIT_R10	56
#define PT_HIT_R9	64
#define PT_HIT_R8	72
#define PT_HIT_AX	80
#define PT_HIT_CX	88
#define PT_HIT_DX	96
#define PT_HIT_SI	104
#define PT_HIT_DI	112
#define PT_HIT_ORIG_AX	120
#define PT_HIT_IP	128
#define PT_HIT_CS	136
#define PT_HIT_FLAGS	144
#define PT_HIT_SP	152
#define PT_HIT_SS	160
#define PT_HIT_REGS	168

#endif
