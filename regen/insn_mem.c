// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mem - recorded bytes, exact data addresses and thunk registers of
 * an instruction, for the instruction-level writers (insn_mem.h).
 */
#include <string.h>

#include "insn_mem.h"

const uint8_t *insn_bytes(const struct pr_func *f, const struct cfg_insn *in)
{
	if (!f->code)
		return NULL;
	if (in->addr >= f->addr && in->addr + in->len <= f->addr + f->len)
		return f->code + (in->addr - f->addr);
	if (f->cold_addr && in->addr >= f->cold_addr &&
	    in->addr + in->len <= f->cold_addr + f->cold_len)
		return f->code + f->len + (in->addr - f->cold_addr);
	return NULL;
}

static int decode(const ZydisDecoder *dec, const struct pr_func *f, const struct cfg_insn *in,
		  ZydisDecodedInstruction *zi, ZydisDecodedOperand *ops)
{
	const uint8_t *bytes = insn_bytes(f, in);

	return bytes && ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, bytes, in->len, zi, ops));
}

/* No data moves: address generation, hints. */
static int touches_no_data(const ZydisDecodedInstruction *zi)
{
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_LEA:
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_PREFETCH:
	case ZYDIS_MNEMONIC_PREFETCHNTA:
	case ZYDIS_MNEMONIC_PREFETCHT0:
	case ZYDIS_MNEMONIC_PREFETCHT1:
	case ZYDIS_MNEMONIC_PREFETCHT2:
	case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_CLFLUSH:
	case ZYDIS_MNEMONIC_CLFLUSHOPT:
	case ZYDIS_MNEMONIC_CLWB:
		return 1;
	default:
		return 0;
	}
}

unsigned int insn_mem_exact(const ZydisDecoder *dec, const struct pr_func *f,
			    const struct cfg_insn *in, struct insn_mem *out, unsigned int *unknown)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	unsigned int i, n = 0, unk = 0;

	if (unknown)
		*unknown = 0;
	if (!decode(dec, f, in, &zi, ops) || touches_no_data(&zi))
		return 0;
	for (i = 0; i < zi.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		const ZydisDecodedOperandMem *mem = &op->mem;
		ZyanU64 addr;
		int rd, wr;

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || mem->type != ZYDIS_MEMOP_TYPE_MEM)
			continue;
		rd = !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_READ);
		wr = !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE);
		if (!rd && !wr)
			continue;
		if (mem->segment == ZYDIS_REGISTER_FS || mem->segment == ZYDIS_REGISTER_GS ||
		    mem->index != ZYDIS_REGISTER_NONE ||
		    (mem->base != ZYDIS_REGISTER_NONE && mem->base != ZYDIS_REGISTER_RIP) ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, op, in->addr, &addr))) {
			unk++;
			continue;
		}
		if (rd && n < INSN_MEM_MAX)
			out[n++] = (struct insn_mem){ .addr = addr, .size = op->size / 8, .write = 0 };
		if (wr && n < INSN_MEM_MAX)
			out[n++] = (struct insn_mem){ .addr = addr, .size = op->size / 8, .write = 1 };
	}
	for (i = 0; i < n; i++)
		if (!out[i].size)
			out[i].size = 1;
	if (unknown)
		*unknown = unk;
	return n;
}

uint64_t insn_branch_target(const ZydisDecoder *dec, const struct pr_func *f,
			    const struct cfg_insn *in)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZyanU64 addr;

	if (!decode(dec, f, in, &zi, ops) || !zi.operand_count_visible ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !ops[0].imm.is_relative ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], in->addr, &addr)))
		return 0;
	return addr;
}

uint8_t insn_thunk_reg(const char *name)
{
	static const char *const prefixes[] = {
		"__x86_indirect_thunk_", "__x86_indirect_call_thunk_", "__x86_indirect_jump_thunk_",
	};
	static const char *const regs[] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	/* Pin's numbers for those registers (out_champsim.c) */
	static const uint8_t pin[] = { 10, 9, 8, 7, 6, 5, 4, 3, 11, 12, 13, 14, 15, 16, 17, 18 };
	unsigned int i, p;

	if (!name)
		return 0;
	for (p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		size_t n = strlen(prefixes[p]);

		if (strncmp(name, prefixes[p], n))
			continue;
		if (!strcmp(name + n, "array"))
			return pin[0];
		for (i = 0; i < 16; i++)
			if (!strcmp(name + n, regs[i]))
				return pin[i];
	}
	return 0;
}
