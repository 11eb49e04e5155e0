// SPDX-License-Identifier: GPL-2.0
/*
 * out_champsim - --format champsim: ChampSim's binary trace, one 64-byte
 * little-endian `struct input_instr` per executed instruction:
 *
 *   u64 ip; u8 is_branch; u8 branch_taken; u8 destination_registers[2];
 *   u8 source_registers[4]; u64 destination_memory[2]; u64 source_memory[4];
 *
 * ChampSim ignores is_branch for classification: it recomputes the branch
 * type from which registers an instruction reads and writes, looking for
 * its REG_STACK_POINTER (6), REG_FLAGS (25) and REG_INSTRUCTION_POINTER
 * (26) (inc/instruction.h). Register numbers follow Intel Pin's REG enum,
 * which ChampSim's tracer writes (rdi 3 ... rsp 6 ... r15 18, rflags 25,
 * rip 26). So branches get exactly the register sets ChampSim's rules
 * expect for their CFG kind (Jcc: reads rip+flags, writes rip; call:
 * reads+writes rsp and rip; return - also `jmp __x86_return_thunk` - reads
 * and writes rsp, writes rip; indirect call through a retpoline thunk
 * also reads the thunk's register). Other instructions get their register
 * operands from Zydis. Memory operands are zero: addresses are not traced.
 *
 * Records are built once per block at open; the hot loop copies them and
 * patches the outcome of a block-ending Jcc or static key, known when the
 * next block of the activation arrives. A branch whose outcome is lost in
 * a gap is dropped (counted), never guessed.
 */
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>

#include "out.h"

#define CS_REC 64
#define CS_RSP 6
#define CS_FLAGS 25
#define CS_RIP 26

enum cs_tail {
	CS_TAIL_NONE = 0,	/* the block's records are final */
	CS_TAIL_JCC,		/* last record: Jcc, outcome from the next edge */
	CS_TAIL_KEY,		/* last record: static key, jump or nop by the next edge */
};

struct cs_block {
	uint8_t *recs;		/* ninsn * CS_REC */
	uint32_t n;
	uint8_t tail;
	uint8_t key_nop[CS_REC];	/* CS_TAIL_KEY: the record when it is a nop */
};

struct champsim {
	struct cs_block **blocks;
	uint8_t pending[CS_REC];
	int has_pending;
	uint8_t pending_tail;
	uint64_t dropped;
	ZydisDecoder dec;
};

static uint8_t pin_reg(ZydisRegister r)
{
	static const struct { ZydisRegister z; uint8_t pin; } gpr[] = {
		{ ZYDIS_REGISTER_RDI, 3 }, { ZYDIS_REGISTER_RSI, 4 }, { ZYDIS_REGISTER_RBP, 5 },
		{ ZYDIS_REGISTER_RSP, 6 }, { ZYDIS_REGISTER_RBX, 7 }, { ZYDIS_REGISTER_RDX, 8 },
		{ ZYDIS_REGISTER_RCX, 9 }, { ZYDIS_REGISTER_RAX, 10 }, { ZYDIS_REGISTER_R8, 11 },
		{ ZYDIS_REGISTER_R9, 12 }, { ZYDIS_REGISTER_R10, 13 }, { ZYDIS_REGISTER_R11, 14 },
		{ ZYDIS_REGISTER_R12, 15 }, { ZYDIS_REGISTER_R13, 16 }, { ZYDIS_REGISTER_R14, 17 },
		{ ZYDIS_REGISTER_R15, 18 }, { ZYDIS_REGISTER_CS, 19 }, { ZYDIS_REGISTER_SS, 20 },
		{ ZYDIS_REGISTER_DS, 21 }, { ZYDIS_REGISTER_ES, 22 }, { ZYDIS_REGISTER_FS, 23 },
		{ ZYDIS_REGISTER_GS, 24 }, { ZYDIS_REGISTER_RFLAGS, 25 }, { ZYDIS_REGISTER_RIP, 26 },
	};
	ZydisRegister big;
	unsigned int i;

	if (r == ZYDIS_REGISTER_NONE)
		return 0;
	if (r == ZYDIS_REGISTER_FLAGS || r == ZYDIS_REGISTER_EFLAGS)
		return CS_FLAGS;
	if (r == ZYDIS_REGISTER_EIP || r == ZYDIS_REGISTER_IP)
		return CS_RIP;
	big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (big == ZYDIS_REGISTER_NONE)
		big = r;
	for (i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		if (gpr[i].z == big)
			return gpr[i].pin;
	if (big >= ZYDIS_REGISTER_ZMM0 && big <= ZYDIS_REGISTER_ZMM31)
		return (uint8_t)(32 + (big - ZYDIS_REGISTER_ZMM0));
	/* Anything else: a distinct id that is none of ChampSim's special ones. */
	return (uint8_t)(64 + (big % 190));
}

struct regset {
	uint8_t r[8];
	unsigned int n;
};

static void regset_add(struct regset *s, uint8_t r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < s->n; i++)
		if (s->r[i] == r)
			return;
	if (s->n < sizeof(s->r))
		s->r[s->n++] = r;
}

/* Writes up to max registers, ChampSim's special ones first so they are never cut. */
static void regset_put(const struct regset *s, uint8_t *out, unsigned int max)
{
	static const uint8_t special[] = { CS_RSP, CS_FLAGS, CS_RIP };
	unsigned int i, j, k = 0;

	for (j = 0; j < sizeof(special); j++)
		for (i = 0; i < s->n; i++)
			if (s->r[i] == special[j] && k < max)
				out[k++] = s->r[i];
	for (i = 0; i < s->n && k < max; i++)
		if (s->r[i] != CS_RSP && s->r[i] != CS_FLAGS && s->r[i] != CS_RIP)
			out[k++] = s->r[i];
}

static void put_u64(uint8_t *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The recorded bytes of insn in, or NULL if outside the recorded code. */
static const uint8_t *insn_bytes(const struct pr_func *f, const struct cfg_insn *in)
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

/* The register a retpoline thunk's name says it jumps through. */
static uint8_t thunk_reg(const char *name)
{
	static const char *const regs[] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	static const uint8_t pin[] = { 10, 9, 8, 7, 6, 5, 4, 3, 11, 12, 13, 14, 15, 16, 17, 18 };
	static const char prefix[] = "__x86_indirect_thunk_";
	unsigned int i;

	if (!name || strncmp(name, prefix, sizeof(prefix) - 1))
		return 0;
	for (i = 0; i < 16; i++)
		if (!strcmp(name + sizeof(prefix) - 1, regs[i]))
			return pin[i];
	return 0;
}

/* Registers from Zydis: *src and *dst; flags from the accessed-flags masks. */
static void decode_regs(const struct champsim *cs, const struct pr_func *f,
			const struct cfg_insn *in, struct regset *src, struct regset *dst)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const uint8_t *bytes = insn_bytes(f, in);
	unsigned int i;

	if (!bytes || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&cs->dec, bytes, in->len, &zi, ops)))
		return;
	for (i = 0; i < zi.operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				regset_add(src, pin_reg(op->reg.value));
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				regset_add(dst, pin_reg(op->reg.value));
		} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			if (op->mem.base != ZYDIS_REGISTER_RIP)
				regset_add(src, pin_reg(op->mem.base));
			regset_add(src, pin_reg(op->mem.index));
		}
	}
	if (zi.cpu_flags && zi.cpu_flags->tested)
		regset_add(src, CS_FLAGS);
	if (zi.cpu_flags && (zi.cpu_flags->modified | zi.cpu_flags->set_0 | zi.cpu_flags->set_1 |
			     zi.cpu_flags->undefined))
		regset_add(dst, CS_FLAGS);
}

/* Drops rsp/flags/rip from a set (branches get them by rule instead). */
static struct regset others(const struct regset *s)
{
	struct regset o = { .n = 0 };
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->r[i] != CS_RSP && s->r[i] != CS_FLAGS && s->r[i] != CS_RIP)
			regset_add(&o, s->r[i]);
	return o;
}

static void make_record(const struct champsim *cs, const struct pr_func *f,
			const struct cfg_insn *in, uint8_t *rec, int key_as_jump)
{
	struct regset src = { .n = 0 }, dst = { .n = 0 }, s, d = { .n = 0 };
	uint8_t is_branch = 1, taken = 1;

	memset(rec, 0, CS_REC);
	put_u64(rec, in->addr);
	decode_regs(cs, f, in, &src, &dst);
	s = others(&src);
	switch (in->kind) {
	case CFG_I_JCC:			/* conditional: reads rip and flags, writes rip */
		s.n = 0;
		regset_add(&s, CS_RIP);
		regset_add(&s, CS_FLAGS);
		regset_add(&d, CS_RIP);
		taken = 0;		/* patched from the edge */
		break;
	case CFG_I_JMP:
	case CFG_I_TAIL_CALL:		/* direct jump: writes rip only */
		s.n = 0;
		regset_add(&d, CS_RIP);
		break;
	case CFG_I_KEY:
		s.n = 0;
		if (key_as_jump)
			regset_add(&d, CS_RIP);
		else
			is_branch = taken = 0;
		break;
	case CFG_I_CALL:
	case CFG_I_CALL_NORETURN:
	case CFG_I_CALL_INDIRECT:	/* calls: rsp and rip both ways, + target register */
		if (in->kind != CFG_I_CALL_INDIRECT)
			s.n = 0;
		regset_add(&s, thunk_reg(in->target_name));
		regset_add(&s, CS_RSP);
		regset_add(&s, CS_RIP);
		regset_add(&d, CS_RSP);
		regset_add(&d, CS_RIP);
		break;
	case CFG_I_RET:			/* return: rsp both ways, writes rip, never reads it */
		s.n = 0;
		regset_add(&s, CS_RSP);
		regset_add(&d, CS_RSP);
		regset_add(&d, CS_RIP);
		break;
	case CFG_I_FENTRY:		/* as recorded: a call (ftrace on) or a nop */
		if (!dst.n) {
			is_branch = taken = 0;
			s = src;
			break;
		}
		s.n = 0;
		regset_add(&s, CS_RSP);
		regset_add(&s, CS_RIP);
		regset_add(&d, CS_RSP);
		regset_add(&d, CS_RIP);
		break;
	default:			/* plain, WARN, BUG: no branch, never writes rip */
		is_branch = taken = 0;
		s = src;
		d = others(&dst);
		for (unsigned int i = 0; i < dst.n; i++)
			if (dst.r[i] == CS_RSP || dst.r[i] == CS_FLAGS)
				regset_add(&d, dst.r[i]);
		break;
	}
	rec[8] = is_branch;
	rec[9] = taken;
	regset_put(&d, rec + 10, 2);
	regset_put(&s, rec + 12, 4);
}

static int build_function(struct champsim *cs, const struct pr_func *f)
{
	uint32_t b, i;

	cs->blocks[f->index] = calloc(f->cfg.nblocks + 1, sizeof(struct cs_block));
	if (!cs->blocks[f->index])
		return -PT_ENOMEM;
	for (b = 0; b < f->cfg.nblocks; b++) {
		const struct cfg_block *bl = &f->cfg.blocks[b];
		struct cs_block *cb = &cs->blocks[f->index][b];

		cb->n = bl->ninsn;
		cb->recs = malloc((size_t)bl->ninsn * CS_REC + 1);
		if (!cb->recs)
			return -PT_ENOMEM;
		for (i = 0; i < bl->ninsn; i++) {
			const struct cfg_insn *in = &f->cfg.insns[bl->first_insn + i];

			make_record(cs, f, in, cb->recs + (size_t)i * CS_REC, 1);
			if (i + 1 < bl->ninsn)
				continue;
			if (in->kind == CFG_I_JCC) {
				cb->tail = CS_TAIL_JCC;
			} else if (in->kind == CFG_I_KEY) {
				cb->tail = CS_TAIL_KEY;
				make_record(cs, f, in, cb->key_nop, 0);
			}
		}
	}
	return 0;
}

static void champsim_free(const struct pr_model *m, struct champsim *cs)
{
	uint32_t i, b;

	if (!cs)
		return;
	for (i = 0; i < m->nfuncs && cs->blocks; i++) {
		if (!cs->blocks[i])
			continue;
		for (b = 0; b < m->funcs[i].cfg.nblocks; b++)
			free(cs->blocks[i][b].recs);
		free(cs->blocks[i]);
	}
	free(cs->blocks);
	free(cs);
}

static int champsim_open(struct out_writer *w)
{
	struct champsim *cs = calloc(1, sizeof(*cs));
	uint32_t i;
	int err;

	if (!cs)
		return -PT_ENOMEM;
	ZydisDecoderInit(&cs->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	cs->blocks = calloc(w->m->nfuncs + 1, sizeof(*cs->blocks));
	if (!cs->blocks) {
		champsim_free(w->m, cs);
		return -PT_ENOMEM;
	}
	for (i = 0; i < w->m->nfuncs; i++) {
		err = build_function(cs, &w->m->funcs[i]);
		if (err) {
			champsim_free(w->m, cs);
			return err;
		}
	}
	w->priv = cs;
	return 0;
}

/* Writes the pending conditional record with the outcome the edge shows. */
static int resolve(struct out_writer *w, struct champsim *cs, const struct out_step *sp)
{
	const uint8_t *rec = cs->pending;
	uint8_t kind;

	if (!cs->has_pending)
		return 0;
	cs->has_pending = 0;
	if (!sp || sp->edge == UINT32_MAX || !sp->f) {
		cs->dropped++;
		return 0;
	}
	kind = sp->f->cfg.edges[sp->edge].kind;
	if (cs->pending_tail == CS_TAIL_JCC) {
		cs->pending[9] = kind == CFG_E_TAKEN;
	} else if (kind != CFG_E_KEY_JUMP) {
		const struct cs_block *cb = &cs->blocks[sp->f->index][sp->f->cfg.edges[sp->edge].src];

		rec = cb->key_nop;
	}
	return fwrite(rec, CS_REC, 1, w->fp) == 1 ? 0 : -PT_EIO;
}

static int champsim_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct champsim *cs = w->priv;
	const struct cs_block *cb;
	uint32_t n;
	int err;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_BLOCK:
		err = resolve(w, cs, sp);
		if (err)
			return err;
		if (!sp->f || sp->ev->block >= sp->f->cfg.nblocks)
			return 0;
		cb = &cs->blocks[sp->f->index][sp->ev->block];
		n = cb->tail ? cb->n - 1 : cb->n;
		if (n && fwrite(cb->recs, CS_REC, n, w->fp) != n)
			return -PT_EIO;
		if (cb->tail) {
			memcpy(cs->pending, cb->recs + (size_t)n * CS_REC, CS_REC);
			cs->pending_tail = cb->tail;
			cs->has_pending = 1;
		}
		return 0;
	case REGEN_EV_EXIT:
		return resolve(w, cs, sp);
	case REGEN_EV_ENTER:
		return 0;
	default:		/* gap, resync, truncation: an unresolved outcome is lost */
		return resolve(w, cs, NULL);
	}
}

static int champsim_stream_end(struct out_writer *w, const struct out_stream *st)
{
	(void)st;
	return resolve(w, w->priv, NULL);
}

static int champsim_close(struct out_writer *w)
{
	struct champsim *cs = w->priv;

	if (cs && cs->dropped)
		fprintf(stderr, "pathregen: champsim: %llu branches whose outcome a gap hid were left out\n",
			(unsigned long long)cs->dropped);
	champsim_free(w->m, cs);
	w->priv = NULL;
	return fflush(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_champsim_ops = {
	.name = "champsim",
	.open = champsim_open,
	.step = champsim_step,
	.stream_end = champsim_stream_end,
	.close = champsim_close,
};
