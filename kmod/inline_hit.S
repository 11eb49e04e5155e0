/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inline_hit.S - where a site of an inline copy calls (docs/inline.md,
 * "Sites as calls"): `call pt_inline_hit` before the site's instruction.
 *
 * First it saves the flags and the registers a C call may change, and
 * calls pt_inline_fast(return address, flags): a site whose actions read
 * no register but the flags (most of a witness plan's) runs there. For one
 * that needs them all (an ENTER reads the stack, a profile's path
 * register) pt_inline_fast returns false, and pt_inline_hit saves every
 * register as a struct pt_regs whose ip is its return address (the site's
 * instruction in the copy) and whose sp is the site's, and calls
 * pt_inline_site_hit(return address, regs). Both return with interrupts
 * off; the popfq that restores the site's flags turns them back on. Every
 * register and the flags are restored: to the copy, the call changed
 * nothing. The kernel keeps an 8-byte aligned stack, so no realignment is
 * needed.
 */
#include <linux/linkage.h>
#include <asm/nospec-branch.h>
#include <asm/segment.h>

#include "inline_hit.h"

	.text
SYM_FUNC_START(pt_inline_hit)
	pushfq
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%rax
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	movq	80(%rsp), %rdi		/* the return address: the site's instruction */
	movq	72(%rsp), %rsi		/* the site's flags */
	call	pt_inline_fast
	testb	%al, %al
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	jz	.Lregs
	popfq
	RET
.Lregs:
	subq	$PT_HIT_REGS, %rsp
	movq	%rdi, PT_HIT_DI(%rsp)
	movq	%rsi, PT_HIT_SI(%rsp)
	movq	%rdx, PT_HIT_DX(%rsp)
	movq	%rcx, PT_HIT_CX(%rsp)
	movq	%rax, PT_HIT_AX(%rsp)
	movq	%r8, PT_HIT_R8(%rsp)
	movq	%r9, PT_HIT_R9(%rsp)
	movq	%r10, PT_HIT_R10(%rsp)
	movq	%r11, PT_HIT_R11(%rsp)
	movq	%rbx, PT_HIT_BX(%rsp)
	movq	%rbp, PT_HIT_BP(%rsp)
	movq	%r12, PT_HIT_R12(%rsp)
	movq	%r13, PT_HIT_R13(%rsp)
	movq	%r14, PT_HIT_R14(%rsp)
	movq	%r15, PT_HIT_R15(%rsp)
	movq	PT_HIT_REGS(%rsp), %rax		/* the flags pushfq saved */
	movq	%rax, PT_HIT_FLAGS(%rsp)
	leaq	PT_HIT_REGS+16(%rsp), %rax	/* the site's sp: above the return address */
	movq	%rax, PT_HIT_SP(%rsp)
	movq	PT_HIT_REGS+8(%rsp), %rdi	/* the return address: the site's instruction */
	movq	%rdi, PT_HIT_IP(%rsp)
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
	movq	PT_HIT_R11(%rsp), %r11
	movq	PT_HIT_R10(%rsp), %r10
	movq	PT_HIT_R9(%rsp), %r9
	movq	PT_HIT_R8(%rsp), %r8
	movq	PT_HIT_AX(%rsp), %rax
	movq	PT_HIT_CX(%rsp), %rcx
	movq	PT_HIT_DX(%rsp), %rdx
	movq	PT_HIT_SI(%rsp), %rsi
	movq	PT_HIT_DI(%rsp), %rdi
	addq	$PT_HIT_REGS, %rsp
	popfq
	RET
SYM_FUNC_END(pt_inline_hit)
