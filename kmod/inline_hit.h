/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inline_hit.h - what inline_hit.S shares with C, checked at build time:
 * the struct pt_regs pt_inline_hit builds on its stack (x86-64's layout;
 * inline_sites.c) and the per-CPU stage pt_inline_stage appends to
 * (stage.c).
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

/* struct pt_stage: where the next entry goes, and where the stage ends (NULL: closed). */
#define PT_STAGE_NEXT	0
#define PT_STAGE_END	8
#define PT_STAGE_ENTRY_BYTES	16
#define PT_STAGE_ENTRIES	128
/* Preempt count bits of a context that is not a task's: NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET. */
#define PT_STAGE_NOT_TASK	0x00ff0100

#endif
