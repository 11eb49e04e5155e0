/* SPDX-License-Identifier: GPL-2.0 */
/*
 * insn_mem - what the instruction-level writers (ChampSim, Dinero) know of
 * an instruction besides its address: its recorded bytes, and the data
 * addresses it touches when the code alone fixes them.
 *
 * The trace records control flow, not registers, so only two kinds of
 * memory operand have an exact address: RIP-relative ones (the address is
 * the instruction's end plus the displacement) and absolute ones (a
 * displacement with no base or index register), both outside the fs/gs
 * segments, whose bases (per-CPU data, the stack protector) are not
 * traced. Stack pushes and pops, and every operand addressed through a
 * register, are counted as left out.
 */
#ifndef PATHTRACE_REGEN_INSN_MEM_H
#define PATHTRACE_REGEN_INSN_MEM_H

#include <stdint.h>

#include <Zydis/Zydis.h>

#include "model.h"

/* At most this many exact accesses are reported per instruction. */
#define INSN_MEM_MAX 4

struct insn_mem {
	uint64_t addr;
	uint16_t size;		/* bytes */
	uint8_t write;		/* 1: a store, 0: a load */
};

/* The recorded bytes of in (in f's main or cold part), or NULL if f did not record them. */
const uint8_t *insn_bytes(const struct pr_func *f, const struct cfg_insn *in);

/*
 * The exact data accesses of in, into out[0..INSN_MEM_MAX): a
 * read-modify-write operand gives a load and a store. Returns how many;
 * *unknown (if not NULL) gets the number of memory operands whose address
 * depends on registers or segment bases. Returns 0 with *unknown = 0 when
 * the bytes are not recorded or do not decode. LEA, NOP and prefetches
 * touch no data.
 */
unsigned int insn_mem_exact(const ZydisDecoder *dec, const struct pr_func *f,
			    const struct cfg_insn *in, struct insn_mem *out, unsigned int *unknown);

/*
 * The absolute target of a relative jmp, Jcc or call in, from its recorded
 * bytes (cfg insns keep no target for calls and jumps through a retpoline
 * thunk); 0 when the branch is indirect or its bytes are not recorded.
 */
uint64_t insn_branch_target(const ZydisDecoder *dec, const struct pr_func *f,
			    const struct cfg_insn *in);

/*
 * Pin's register number (as ChampSim reads it) of the register a retpoline
 * thunk named name jumps through: __x86_indirect_thunk_REG (also the
 * __x86_indirect_call_thunk_ / _jump_thunk_ names of later kernels), and
 * __x86_indirect_thunk_array, whose first thunk (offset 0, where a symbol
 * lookup by address may name the array instead of the thunk) is rax's.
 * Returns 0 for any other name.
 */
uint8_t insn_thunk_reg(const char *name);

#endif
