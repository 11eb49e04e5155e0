/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inline_hit.S - where a site of an inline copy calls (docs/inline.md,
 * "Sites as calls"): `call pt_inline_hit` before the site's instruction,
 * or `call pt_inline_stage` (below) for a site that needs only the flags.
 *
 * While nothing is traced (pt_armed clear, between enable and record) it
 * returns at once, its test made without changing the flags (jrcxz), so
 * with no pushfq and popfq (under QEMU's TCG a popfq ends the translation
 * block). Else it saves the flags and the registers a C call may change,
 * and calls pt_inline_fast(return address, flags, the site's sp): a site
 * whose actions read no register but the flags (most of a witness plan's)
 * runs there, and so is an ENTER site staged whose frame needs no
 * walk (it reads the stack at sp, not the registers); it returns NULL. For
 * one that needs them all (an ENTER whose frame is walked, a profile's
 * path register) it returns the site's probe, found once, with
 * interrupts still off; pt_inline_hit then saves every register as a
 * struct pt_regs whose ip is its return address (the site's instruction in
 * the copy) and whose sp is the site's, and calls pt_inline_site_hit(probe,
 * regs). Both return with interrupts off; the popfq that restores the
 * site's flags turns them back on. Every register and the flags are
 * restored: to the copy, the call changed nothing. The kernel keeps an
 * 8-byte aligned stack, so no realignment is needed.
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/nospec-branch.h>
#include <asm/percpu.h>
#include <asm/segment.h>

#include "inline_hit.h"

/* Where pt_inline_hit's pushes leave the site's registers, from %rsp after them. */
#define SAVED_R11	0
#define SAVED_R10	8
#define SAVED_R9	16
#define SAVED_R8	24
#define SAVED_AX	32
#define SAVED_CX	40
#define SAVED_DX	48
#define SAVED_SI	56
#define SAVED_DI	64
#define SAVED_FLAGS	72
#define SAVED_RET	80	/* the call's return address: the site's instruction */
#define SAVED_SP	88	/* the site's sp */

/* A saved register into the struct pt_regs below them (%rax free: saved above). */
.macro SAVED_TO_REGS from, to
	movq	PT_HIT_REGS+\from(%rsp), %rax
	movq	%rax, \to(%rsp)
.endm

	.text
SYM_FUNC_START(pt_inline_hit)
	/* not tracing: out without touching the flags (mov and jrcxz keep them) */
	pushq	%rcx
	movzbl	pt_armed(%rip), %ecx
	jrcxz	.Lidle_fast
	popq	%rcx
	jmp	.Larmed
.Lidle_fast:
	movq	$0, PER_CPU_VAR(pt_inline_frame)	/* as .Lidle below */
	popq	%rcx
	RET
.Larmed:
	pushfq
	cmpb	$0, pt_armed(%rip)		/* stopped since */
	je	.Lidle
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	movq	SAVED_RET(%rsp), %rdi		/* the return address: the site's instruction */
	movq	SAVED_FLAGS(%rsp), %rsi		/* the site's flags */
	leaq	SAVED_SP(%rsp), %rdx		/* the site's sp: above the return address */
	call	pt_inline_fast
	testq	%rax, %rax
	jnz	.Lregs
.Lout:
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	popfq
	RET
.Lregs:
	/* %rax: the site's probe; the site's own registers are saved above */
	subq	$PT_HIT_REGS, %rsp
	movq	%rax, %rdi
	SAVED_TO_REGS SAVED_DI, PT_HIT_DI
	SAVED_TO_REGS SAVED_SI, PT_HIT_SI
	SAVED_TO_REGS SAVED_DX, PT_HIT_DX
	SAVED_TO_REGS SAVED_CX, PT_HIT_CX
	SAVED_TO_REGS SAVED_AX, PT_HIT_AX
	SAVED_TO_REGS SAVED_R8, PT_HIT_R8
	SAVED_TO_REGS SAVED_R9, PT_HIT_R9
	SAVED_TO_REGS SAVED_R10, PT_HIT_R10
	SAVED_TO_REGS SAVED_R11, PT_HIT_R11
	SAVED_TO_REGS SAVED_FLAGS, PT_HIT_FLAGS
	SAVED_TO_REGS SAVED_RET, PT_HIT_IP
	movq	%rbx, PT_HIT_BX(%rsp)
	movq	%rbp, PT_HIT_BP(%rsp)
	movq	%r12, PT_HIT_R12(%rsp)
	movq	%r13, PT_HIT_R13(%rsp)
	movq	%r14, PT_HIT_R14(%rsp)
	movq	%r15, PT_HIT_R15(%rsp)
	leaq	PT_HIT_REGS+SAVED_SP(%rsp), %rax	/* the site's sp: above the return address */
	movq	%rax, PT_HIT_SP(%rsp)
	movq	$__KERNEL_CS, PT_HIT_CS(%rsp)
	movq	$__KERNEL_DS, PT_HIT_SS(%rsp)
	movq	$-1, PT_HIT_ORIG_AX(%rsp)
	movq	%rsp, %rsi
	call	pt_inline_site_hit
	movq	PT_HIT_R15(%rsp), %r15
	movq	PT_HIT_R14(%rsp), %r14
	movq	PT_HIT_R13(%rsp), %r13
	movq	PT_HIT_R12(%rsp), %r12
	movq	PT_HIT_BP(%rsp), %rbp
	movq	PT_HIT_BX(%rsp), %rbx
	/* the others come back from above */
	addq	$PT_HIT_REGS, %rsp
	jmp	.Lout
.Lidle:
	/*
	 * Not tracing: the site would do nothing. The frame a copy keeps is
	 * cleared as an ENTER's would be: a cleared one only makes an ENTER
	 * walk once tracing starts (frames.c).
	 */
	movq	$0, PER_CPU_VAR(pt_inline_frame)
	popfq
	RET
SYM_FUNC_END(pt_inline_hit)
_ASM_NOKPROBE(pt_inline_hit)

/*
 * pt_inline_stage - where a copy calls at a site whose actions read no
 * register but the flags (docs/inline.md, "The stage"): while tracing, in a
 * task's context (no NMI, hardirq or softirq bit in the preempt count) with
 * this CPU's stage open and not full, the call's return address and the
 * site's flags become the stage's next entry (stage.c runs them); otherwise
 * it goes on as pt_inline_hit, which runs the site and opens the stage, or
 * once tracing has stopped returns (the stop's drain runs what was staged
 * before; an entry staged after would follow an ENTER that was not written).
 * Interrupts are off from the test to the popfq, so no handler on this CPU
 * runs the stage between the read of its next entry and the store of the
 * one after; an NMI never runs it. Every register and the flags are kept.
 */
SYM_FUNC_START(pt_inline_stage)
	/* not tracing: as pt_inline_hit, out without touching the flags */
	pushq	%rcx
	movzbl	pt_armed(%rip), %ecx
	jrcxz	.Lstage_idle
	popq	%rcx
	pushfq
	pushq	%rax
	pushq	%rcx
	cli
	cmpb	$0, pt_armed(%rip)
	je	.Lhit				/* stopped: the stage waits for its drain */
	movq	pt_stage_preempt_count(%rip), %rax
	testl	$PT_STAGE_NOT_TASK, %gs:(%rax)
	jnz	.Lhit
	movq	PER_CPU_VAR(pt_stage + PT_STAGE_NEXT), %rcx
	cmpq	PER_CPU_VAR(pt_stage + PT_STAGE_END), %rcx
	jae	.Lhit				/* full, or closed (both NULL) */
	movq	24(%rsp), %rax			/* the return address: names the site */
	movq	%rax, (%rcx)
	movq	16(%rsp), %rax			/* the site's flags */
	movq	%rax, 8(%rcx)
	addq	$PT_STAGE_ENTRY_BYTES, %rcx
	movq	%rcx, PER_CPU_VAR(pt_stage + PT_STAGE_NEXT)
	popq	%rcx
	popq	%rax
	popfq
	RET
.Lhit:
	popq	%rcx
	popq	%rax
	popfq
	jmp	pt_inline_hit
.Lstage_idle:
	movq	$0, PER_CPU_VAR(pt_inline_frame)	/* as pt_inline_hit's */
	popq	%rcx
	RET
SYM_FUNC_END(pt_inline_stage)
_ASM_NOKPROBE(pt_inline_stage)
