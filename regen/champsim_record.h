/* SPDX-License-Identifier: GPL-2.0 */
/*
 * champsim_record - a ChampSim input_instr read back as ChampSim reads it
 * (inc/trace_instruction.h, inc/instruction.h): the 64-byte little-endian
 * record's fields, and the branch type ChampSim derives from the registers
 * a record reads and writes (REG_STACK_POINTER 6, REG_FLAGS 25,
 * REG_INSTRUCTION_POINTER 26), restated. The writer is out_champsim.c;
 * this is for what checks it (tests, tools/champsim-check).
 */
#ifndef PATHTRACE_REGEN_CHAMPSIM_RECORD_H
#define PATHTRACE_REGEN_CHAMPSIM_RECORD_H

#include <stdint.h>
#include <string.h>

#define CS_RECORD_SIZE 64

struct cs_record {
	uint64_t ip;
	uint8_t is_branch, branch_taken;
	uint8_t dst[2], src[4];
	uint64_t dmem[2], smem[4];
};

/* ChampSim's branch types, in its order. */
enum cs_branch {
	CS_DIRECT_JUMP, CS_INDIRECT, CS_CONDITIONAL, CS_DIRECT_CALL, CS_INDIRECT_CALL, CS_RETURN,
	CS_OTHER, CS_NOT_BRANCH, CS_NBRANCH_TYPES
};

static inline uint64_t cs_get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void cs_record_decode(const uint8_t *p, struct cs_record *r)
{
	int i;

	r->ip = cs_get64(p);
	r->is_branch = p[8];
	r->branch_taken = p[9];
	memcpy(r->dst, p + 10, 2);
	memcpy(r->src, p + 12, 4);
	for (i = 0; i < 2; i++)
		r->dmem[i] = cs_get64(p + 16 + 8 * i);
	for (i = 0; i < 4; i++)
		r->smem[i] = cs_get64(p + 32 + 8 * i);
}

/* ChampSim's classification (the ooo_model_instr constructor), restated. */
static inline enum cs_branch cs_record_branch(const struct cs_record *r)
{
	int wsp = 0, wip = 0, rsp = 0, rfl = 0, rip = 0, roth = 0, i;

	for (i = 0; i < 2; i++) {
		wsp |= r->dst[i] == 6;
		wip |= r->dst[i] == 26;
	}
	for (i = 0; i < 4; i++) {
		rsp |= r->src[i] == 6;
		rfl |= r->src[i] == 25;
		rip |= r->src[i] == 26;
		roth |= r->src[i] && r->src[i] != 6 && r->src[i] != 25 && r->src[i] != 26;
	}
	if (!rsp && !rfl && wip && !roth)
		return CS_DIRECT_JUMP;
	if (!rsp && !rip && !rfl && wip && roth)
		return CS_INDIRECT;
	if (!rsp && rip && !wsp && wip && (rfl || roth))
		return CS_CONDITIONAL;
	if (rsp && rip && wsp && wip && !rfl && !roth)
		return CS_DIRECT_CALL;
	if (rsp && rip && wsp && wip && !rfl && roth)
		return CS_INDIRECT_CALL;
	if (rsp && !rip && wsp && wip)
		return CS_RETURN;
	return wip ? CS_OTHER : CS_NOT_BRANCH;
}

#endif
