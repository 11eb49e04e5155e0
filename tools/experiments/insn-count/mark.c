// SPDX-License-Identifier: GPL-2.0
/*
 * mark.c - executes insn_count.c's marker instruction once and exits: a
 * static program without libc, built on the host for the guest (which has
 * no compiler).
 *
 *   gcc -static -nostdlib -O2 -o ptmark mark.c
 */
void _start(void)
{
	/* nopl 0x50544d4b(%rax), then exit(0) */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x4b, 0x4d, 0x54, 0x50\n\t"
			 "movl $60, %eax\n\t"
			 "xorl %edi, %edi\n\t"
			 "syscall");
	__builtin_unreachable();
}
