// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_boost - whether an instruction may sit in a jump-optimized probe's
 * window, as Linux 6.1 decides it (arch/x86/kernel/kprobes/core.c
 * can_boost(), called by opt.c copy_optimized_instructions() for every
 * instruction the 5-byte jump covers). The kernel's tables are restated
 * here from its source; Zydis decodes.
 */
#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

#include <pathtrace/kprobe_boost.h>

#define ROW(b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, ba, bb, bc, bd, be, bf)		\
	((b0 << 0x0) | (b1 << 0x1) | (b2 << 0x2) | (b3 << 0x3) | (b4 << 0x4) |	\
	 (b5 << 0x5) | (b6 << 0x6) | (b7 << 0x7) | (b8 << 0x8) | (b9 << 0x9) |	\
	 (ba << 0xa) | (bb << 0xb) | (bc << 0xc) | (bd << 0xd) | (be << 0xe) |	\
	 (bf << 0xf))

/* twobyte_is_boostable (6.1): bit n of row r is opcode 0x0f, r * 16 + n. */
static const uint16_t twobyte_boostable[16] = {
	/*    0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f */
	ROW(0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0),	/* 00 */
	ROW(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1),	/* 10 */
	ROW(1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),	/* 20 */
	ROW(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),	/* 30 */
	ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),	/* 40 */
	ROW(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),	/* 50 */
	ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1),	/* 60 */
	ROW(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1),	/* 70 */
	ROW(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),	/* 80 */
	ROW(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),	/* 90 */
	ROW(1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1),	/* a0 */
	ROW(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1),	/* b0 */
	ROW(1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),	/* c0 */
	ROW(0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1),	/* d0 */
	ROW(0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1),	/* e0 */
	ROW(0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0),	/* f0 */
};

int kprobe_boostable(const uint8_t *code, size_t len)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	uint8_t op, reg;
	unsigned int i;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, len, &zi)))
		return 0;
	/* VEX, EVEX and the rest: the kernel's decoder sees other opcode bytes */
	if (zi.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY)
		return 0;
	for (i = 0; i < zi.raw.prefix_count; i++)
		if (zi.raw.prefixes[i].value == 0x2e || zi.raw.prefixes[i].value == 0x67)
			return 0;	/* CS override, address-size override */
	op = zi.opcode;
	reg = zi.raw.modrm.reg;
	switch (zi.opcode_map) {
	case ZYDIS_OPCODE_MAP_DEFAULT:
		break;
	case ZYDIS_OPCODE_MAP_0F:
		return (twobyte_boostable[op >> 4] >> (op & 15)) & 1;
	default:
		return 0;	/* three opcode bytes (0f 38, 0f 3a), 3DNow! */
	}
	switch (op) {
	case 0x62:			/* bound */
	case 0x70 ... 0x7f:		/* jcc */
	case 0x9a:			/* call far */
	case 0xc0 ... 0xc1:		/* Grp2 */
	case 0xcc ... 0xce:		/* int3, int, into */
	case 0xd0 ... 0xd3:		/* Grp2 */
	case 0xd6:			/* (UD) */
	case 0xd8 ... 0xdf:		/* x87 */
	case 0xe0 ... 0xe3:		/* loop*, jcxz */
	case 0xe8 ... 0xe9:		/* call, jmp */
	case 0xeb:			/* jmp short */
	case 0xf0 ... 0xf4:		/* lock, rep (as opcodes), hlt */
	case 0xf6 ... 0xf7:		/* Grp3: test, not, neg, mul, div */
	case 0xfe:			/* Grp4 */
		return 0;
	case 0xff:			/* Grp5: only jmp *r/m */
		return reg == 4;
	default:
		return 1;
	}
}

int kprobe_window_unsafe(const struct cfg_insn *in, const uint8_t *code, size_t len)
{
	return (in->kind != CFG_I_PLAIN && in->kind != CFG_I_RET) ||
	       (in->flags & CFG_IF_FAULT_FIXUP) || !kprobe_boostable(code, len);
}
