/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kprobe_boost - whether the kernel copies an instruction into a
 * jump-optimized probe's window (Linux 6.1 can_boost()).
 */
#ifndef PATHTRACE_KPROBE_BOOST_H
#define PATHTRACE_KPROBE_BOOST_H

#include <stddef.h>
#include <stdint.h>

#include <pathtrace/cfg.h>

/*
 * Whether the instruction at code (len bytes available) is one that
 * can_boost() accepts: not a branch, call, x87, Grp2-Grp4 (shifts, test,
 * not, neg, mul, div, inc/dec byte), Grp5 other than jmp *r/m, a
 * three-byte opcode, VEX/EVEX, or with a CS or address-size prefix; two
 * byte opcodes by the kernel's table. The exception-table check that
 * can_boost() also makes is the caller's (CFG_IF_FAULT_FIXUP). Returns 1
 * or 0; 0 for bytes that do not decode.
 */
int kprobe_boostable(const uint8_t *code, size_t len);

/*
 * Whether CFG instruction in (its bytes at code) may not sit in an
 * optprobe's window, the CFG_IF_OPTPROBE_UNSAFE rule: anything but a plain
 * instruction or a ret (which can end a window), an instruction with an
 * exception-table fixup, or one kprobe_boostable refuses. Returns 1 or 0.
 */
int kprobe_window_unsafe(const struct cfg_insn *in, const uint8_t *code, size_t len);

#endif
