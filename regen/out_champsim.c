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
 * (26) (inc/instruction.h), and takes a branch's target from the next
 * record's ip. Register numbers follow Intel Pin's REG enum, which
 * ChampSim's tracer writes (rdi 3 ... rsp 6 ... r15 18, rflags 25, rip 26).
 * Branches get exactly the register sets ChampSim's rules expect for their
 * kind (Jcc: reads rip+flags, writes rip; call: reads+writes rsp and rip,
 * plus the target register of an indirect call; return: reads and writes
 * rsp, writes rip; a jmp through a retpoline thunk reads the thunk's
 * register). Other instructions get their register operands from Zydis.
 *
 * Only traced code is in the output, so what ran outside it is modelled so
 * that ChampSim's return-address stack stays balanced (docs/pathregen.md):
 *  - a call into untraced code is kept as a call, followed by one
 *    synthetic return at the callee's entry address (its body is left
 *    out); a call whose target the code does not name (call *%rax) is
 *    written as a non-branch;
 *  - an activation entered from untraced code (the stream's outermost
 *    ones, or traced code an untraced callee called) has no call in the
 *    output, so its return is written as a non-branch;
 *  - a tail call out of traced code is the jump followed by a synthetic
 *    return at its target (the untraced callee returns for the
 *    activation); through a register, the jump itself is written as that
 *    return. A conditional return (jcc __x86_return_thunk) is the Jcc
 *    followed by the thunk's ret.
 * Memory operands: the exact ones only (insn_mem.h: RIP-relative and
 * absolute addresses); stack and register-addressed operands are zero.
 *
 * Records are built once per block at open; the hot loop copies them. The
 * block's last instruction, when it transfers control, is held until the
 * next event shows where control went: a Jcc's outcome, a static key's
 * shape, whether a call entered traced code, that a jump's target came
 * next. A branch whose outcome is lost in a gap is dropped (counted), never
 * guessed, and so is a jump a gap follows (its target is not what the
 * stream shows next: ChampSim takes the next record's ip for where it went).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/error.h>

#include "insn_mem.h"
#include "out.h"

#define CS_REC 64
#define CS_RSP 6
#define CS_FLAGS 25
#define CS_RIP 26

/* What the last instruction of a block is, when the next event decides how it is written. */
enum cs_tail {
	CS_TAIL_NONE = 0,	/* the block's records are final */
	CS_TAIL_JCC,		/* outcome from the next edge; leaving: a tail call or return */
	CS_TAIL_KEY,		/* static key: jump or nop by the next edge */
	CS_TAIL_CALL,		/* a call that returns: into traced code or not */
	CS_TAIL_NORETURN,	/* a call that does not return */
	CS_TAIL_RET,		/* ret, jmp __x86_return_thunk */
	CS_TAIL_JMP,		/* tail call: jmp to another function */
	CS_TAIL_GOTO,		/* jmp inside the function: written once its target follows */
};

/* How a record is shaped. */
enum cs_shape {
	CS_AS_IS = 0,		/* the branch it is */
	CS_PLAIN,		/* a non-branch (no rip written) */
	CS_AS_RET,		/* a return (reads and writes rsp, writes rip) */
};

struct cs_block {
	uint8_t *recs;		/* records written whenever the block runs, tail excluded */
	uint32_t n;
	uint8_t tail;		/* enum cs_tail */
	const struct cfg_insn *tail_insn;
	uint64_t tail_target;	/* call or jump target, thunks included; 0 if unknown */
	uint8_t tail_rec[CS_REC];	/* the tail as the branch it is */
	uint8_t tail_alt[CS_REC];	/* KEY: as a nop; CALL, RET, JMP: as a non-branch */
	uint8_t tail_ret[CS_REC];	/* JMP: as a return */
	uint32_t mem_exact, mem_unknown;	/* memory operands of one run of the block */
};

/* What stands open at a traced activation's current call vertex. */
enum cs_call_state {
	CS_CALL_NONE = 0,
	/*
	 * Untraced code runs for it: a call into untraced code, or a tail call
	 * out of its callee. The untraced code's return (a synthetic record)
	 * is owed when the activation resumes.
	 */
	CS_CALL_OWED,
	CS_CALL_CONSUMED,	/* its call's push belongs to the traced activation it led to */
};

struct cs_frame {
	uint8_t call_written;	/* this activation's own call is in the output */
	uint8_t state;		/* enum cs_call_state */
	uint8_t owed_pops;	/* OWED: the untraced code returns for a call in the output */
	uint8_t owed_shown;	/* OWED: a record at the untraced code's entry is written */
	uint64_t call_ret;	/* its current call's return address */
	uint64_t owed_at;	/* OWED: the untraced code's entry; 0: the jump in owed_blk */
	const struct cs_block *owed_blk;	/* OWED, owed_at 0: a tail call through a register */
};

struct cs_stats {
	uint64_t records;
	uint64_t synth_ret, synth_plain, synth_jump;	/* records standing for untraced code */
	uint64_t untraced_calls;	/* calls into untraced code kept as calls */
	uint64_t calls_plain;		/* calls without a known target, written as non-branches */
	uint64_t rets_plain;		/* returns whose call is not in the output */
	uint64_t tails_out;		/* tail calls out of traced code */
	uint64_t noreturn;		/* calls that never return */
	uint64_t dropped;		/* branches a gap cut off */
	uint64_t mem_exact, mem_unknown;
};

struct champsim {
	struct cs_block **blocks;
	/* the held tail record */
	const struct cs_block *pend;
	const struct pr_func *pend_f;
	/*
	 * Records decided while holding (the block they lead to holds nothing
	 * but its own last branch): written before the next record that is,
	 * dropped with that branch, so no branch is followed by a gap.
	 */
	uint8_t *held;
	uint32_t nheld, cap_held;
	int holding;
	struct cs_frame *stack;
	uint32_t depth, cap;
	struct cs_stats st;
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

/*
 * The exact memory operands of in, into rec's destination (stores) and
 * source (loads) slots; adds to *exact those written, to *unknown the rest.
 */
static void put_memory(struct champsim *cs, const struct pr_func *f, const struct cfg_insn *in,
		       uint8_t *rec, uint32_t *exact, uint32_t *unknown)
{
	struct insn_mem mem[INSN_MEM_MAX];
	unsigned int i, n, unk, nd = 0, ns = 0;

	n = insn_mem_exact(&cs->dec, f, in, mem, &unk);
	for (i = 0; i < n; i++) {
		if (mem[i].write && nd < 2)
			put_u64(rec + 16 + 8 * nd++, mem[i].addr);
		else if (!mem[i].write && ns < 4)
			put_u64(rec + 32 + 8 * ns++, mem[i].addr);
	}
	*exact += nd + ns;
	*unknown += unk + (n - nd - ns);
}

static void make_record(struct champsim *cs, const struct pr_func *f, const struct cfg_insn *in,
			uint8_t *rec, enum cs_shape shape, int key_as_jump)
{
	struct regset src = { .n = 0 }, dst = { .n = 0 }, s, d = { .n = 0 };
	uint8_t is_branch = 1, taken = 1, treg = insn_thunk_reg(in->target_name);
	uint32_t counted = 0;	/* counted per block by build_block */
	unsigned int i;

	memset(rec, 0, CS_REC);
	put_u64(rec, in->addr);
	decode_regs(cs, f, in, &src, &dst);
	s = others(&src);
	if (shape == CS_AS_RET) {		/* stands for the return it leads to */
		s.n = 0;
		regset_add(&s, CS_RSP);
		regset_add(&d, CS_RSP);
		regset_add(&d, CS_RIP);
		goto out;
	}
	switch (in->kind) {
	case CFG_I_JCC:			/* conditional: reads rip and flags, writes rip */
		s.n = 0;
		regset_add(&s, CS_RIP);
		regset_add(&s, CS_FLAGS);
		regset_add(&d, CS_RIP);
		taken = 0;		/* patched from the edge */
		break;
	case CFG_I_JMP:
	case CFG_I_TAIL_CALL:		/* direct jump: writes rip; indirect: reads its register */
		regset_add(&s, treg);
		if (shape == CS_PLAIN)
			is_branch = taken = 0;
		else
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
	case CFG_I_FENTRY:		/* (a nop __fentry__ site is plain: below) */
		if (in->kind == CFG_I_FENTRY && !dst.n) {
			is_branch = taken = 0;
			s = src;
			break;
		}
		if (in->kind != CFG_I_CALL_INDIRECT)
			s.n = 0;
		regset_add(&s, treg);
		regset_add(&s, CS_RSP);
		regset_add(&d, CS_RSP);
		if (shape == CS_PLAIN) {
			is_branch = taken = 0;
			break;
		}
		regset_add(&s, CS_RIP);
		regset_add(&d, CS_RIP);
		break;
	case CFG_I_RET:			/* return: rsp both ways, writes rip, never reads it */
		s.n = 0;
		regset_add(&s, CS_RSP);
		regset_add(&d, CS_RSP);
		if (shape == CS_PLAIN)
			is_branch = taken = 0;
		else
			regset_add(&d, CS_RIP);
		break;
	default:			/* plain, WARN, BUG: no branch, never writes rip */
		is_branch = taken = 0;
		s = src;
		d = others(&dst);
		for (i = 0; i < dst.n; i++)
			if (dst.r[i] == CS_RSP || dst.r[i] == CS_FLAGS)
				regset_add(&d, dst.r[i]);
		break;
	}
out:
	rec[8] = is_branch;
	rec[9] = taken;
	regset_put(&d, rec + 10, 2);
	regset_put(&s, rec + 12, 4);
	put_memory(cs, f, in, rec, &counted, &counted);
}

/* How a synthetic record (for untraced code) is shaped. */
enum cs_synth {
	CS_SYNTH_PLAIN = 0,	/* a non-branch: its entry, or a return that pops nothing */
	CS_SYNTH_RET,		/* its return */
	CS_SYNTH_JUMP,		/* its jump to the traced function it tail-called */
};

static void make_synthetic(uint8_t *rec, uint64_t ip, enum cs_synth shape)
{
	memset(rec, 0, CS_REC);
	put_u64(rec, ip);
	if (shape == CS_SYNTH_PLAIN)
		return;
	rec[8] = rec[9] = 1;
	if (shape == CS_SYNTH_JUMP) {
		rec[10] = CS_RIP;
		return;
	}
	rec[10] = CS_RSP;
	rec[11] = CS_RIP;
	rec[12] = CS_RSP;
}

/*
 * Where a call or jump goes, when the code names it: the CFG's target, or
 * for one through a retpoline thunk (whose CFG target is 0: the callee is
 * unknown) or a live __fentry__ call, the address its bytes name. Other
 * targets of 0 are unknown (an indirect branch, or an ELF object's
 * unresolved relocation, whose bytes name nothing).
 */
static uint64_t known_target(struct champsim *cs, const struct pr_func *f,
			     const struct cfg_insn *in)
{
	if (in->target)
		return in->target;
	if (in->kind == CFG_I_FENTRY || insn_thunk_reg(in->target_name))
		return insn_branch_target(&cs->dec, f, in);
	return 0;
}

static int build_block(struct champsim *cs, const struct pr_func *f, uint32_t b)
{
	const struct cfg_block *bl = &f->cfg.blocks[b];
	struct cs_block *cb = &cs->blocks[f->index][b];
	uint8_t scratch[CS_REC];
	uint32_t i;

	/* one record per instruction, and a synthetic return after a live __fentry__ call */
	cb->recs = malloc((size_t)(bl->ninsn + 1) * CS_REC);
	if (!cb->recs)
		return -PT_ENOMEM;
	for (i = 0; i < bl->ninsn; i++) {
		const struct cfg_insn *in = &f->cfg.insns[bl->first_insn + i];
		uint8_t *rec = cb->recs + (size_t)cb->n * CS_REC;
		uint64_t target;

		put_memory(cs, f, in, scratch, &cb->mem_exact, &cb->mem_unknown);
		if (i + 1 < bl->ninsn || in->kind == CFG_I_PLAIN || in->kind == CFG_I_BUG ||
		    in->kind == CFG_I_WARN || in->kind == CFG_I_FENTRY) {
			make_record(cs, f, in, rec, CS_AS_IS, 1);
			cb->n++;
			if (in->kind == CFG_I_FENTRY && rec[8]) {
				/* ftrace's trampoline: its body left out, its return kept */
				target = known_target(cs, f, in);
				make_synthetic(rec + CS_REC, target ? target : in->addr + in->len,
					       CS_SYNTH_RET);
				cb->n++;
			}
			continue;
		}
		cb->tail_insn = in;
		target = known_target(cs, f, in);
		cb->tail_target = target;
		make_record(cs, f, in, cb->tail_rec, CS_AS_IS, 1);
		switch (in->kind) {
		case CFG_I_JCC:
			cb->tail = CS_TAIL_JCC;
			break;
		case CFG_I_KEY:
			cb->tail = CS_TAIL_KEY;
			make_record(cs, f, in, cb->tail_alt, CS_AS_IS, 0);
			break;
		case CFG_I_CALL:
		case CFG_I_CALL_INDIRECT:
			cb->tail = CS_TAIL_CALL;
			make_record(cs, f, in, cb->tail_alt, CS_PLAIN, 1);
			break;
		case CFG_I_CALL_NORETURN:
			cb->tail = CS_TAIL_NORETURN;
			break;
		case CFG_I_RET:
			cb->tail = CS_TAIL_RET;
			make_record(cs, f, in, cb->tail_alt, CS_PLAIN, 1);
			break;
		case CFG_I_JMP:
			/* a gap after it: the next record is not its target */
			cb->tail = CS_TAIL_GOTO;
			break;
		case CFG_I_TAIL_CALL:
			cb->tail = CS_TAIL_JMP;
			make_record(cs, f, in, cb->tail_alt, CS_PLAIN, 1);
			make_record(cs, f, in, cb->tail_ret, CS_AS_RET, 1);
			break;
		default:
			make_record(cs, f, in, rec, CS_AS_IS, 1);
			cb->n++;
			cb->tail_insn = NULL;
			break;
		}
	}
	return 0;
}

static int build_function(struct champsim *cs, const struct pr_func *f)
{
	uint32_t b;
	int err;

	cs->blocks[f->index] = calloc(f->cfg.nblocks + 1, sizeof(struct cs_block));
	if (!cs->blocks[f->index])
		return -PT_ENOMEM;
	for (b = 0; b < f->cfg.nblocks; b++) {
		err = build_block(cs, f, b);
		if (err)
			return err;
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
	free(cs->stack);
	free(cs->held);
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

static int write_recs(struct out_writer *w, struct champsim *cs, const uint8_t *rec, uint32_t n)
{
	cs->st.records += n;
	return !n || fwrite(rec, CS_REC, n, w->fp) == n ? 0 : -PT_EIO;
}

/* Writes the held records (what comes next is written, or nothing does). */
static int flush_held(struct out_writer *w, struct champsim *cs)
{
	uint32_t n = cs->nheld;

	cs->nheld = 0;
	return write_recs(w, cs, cs->held, n);
}

static int put(struct out_writer *w, struct champsim *cs, const uint8_t *rec, uint32_t n)
{
	int err;

	if (!n)
		return 0;
	if (cs->holding) {
		if (cs->nheld + n > cs->cap_held) {
			uint32_t cap = (cs->nheld + n) * 2;
			uint8_t *h = realloc(cs->held, (size_t)cap * CS_REC);

			if (!h)
				return -PT_ENOMEM;
			cs->held = h;
			cs->cap_held = cap;
		}
		memcpy(cs->held + (size_t)cs->nheld * CS_REC, rec, (size_t)n * CS_REC);
		cs->nheld += n;
		return 0;
	}
	err = flush_held(w, cs);
	return err ?: write_recs(w, cs, rec, n);
}

static int put_synthetic(struct out_writer *w, struct champsim *cs, uint64_t ip,
			 enum cs_synth shape)
{
	uint8_t rec[CS_REC];

	make_synthetic(rec, ip, shape);
	cs->st.synth_ret += shape == CS_SYNTH_RET;
	cs->st.synth_plain += shape == CS_SYNTH_PLAIN;
	cs->st.synth_jump += shape == CS_SYNTH_JUMP;
	return put(w, cs, rec, 1);
}

static struct cs_frame *top(struct champsim *cs)
{
	return cs->depth ? &cs->stack[cs->depth - 1] : NULL;
}

/* The held tail is lost, and the held records that led to it (counted as branches). */
static void drop_tail(struct champsim *cs)
{
	uint32_t i;

	cs->st.dropped++;
	for (i = 0; i < cs->nheld; i++)
		cs->st.dropped += cs->held[(size_t)i * CS_REC + 8] != 0;	/* is_branch */
	cs->nheld = 0;
}

/* The held record is lost with what followed it (a gap). */
static void drop_pending(struct champsim *cs)
{
	if (cs->pend)
		drop_tail(cs);
	cs->pend = NULL;
}

/*
 * The stream ends after the held record's block: a call, return or jump
 * there ran, so it is written (a call's push stays open, as the
 * activations do); a Jcc or key whose outcome nothing shows is left out.
 */
static int end_pending(struct out_writer *w, struct champsim *cs)
{
	const struct cs_block *cb = cs->pend;
	const struct cs_frame *fr = top(cs);

	cs->pend = NULL;
	if (!cb)
		return 0;
	switch (cb->tail) {
	case CS_TAIL_CALL:
		return put(w, cs, cb->tail_target ? cb->tail_rec : cb->tail_alt, 1);
	case CS_TAIL_RET:
		return put(w, cs, fr && fr->call_written ? cb->tail_rec : cb->tail_alt, 1);
	case CS_TAIL_JMP:
	case CS_TAIL_GOTO:
	case CS_TAIL_NORETURN:
		return put(w, cs, cb->tail_rec, 1);
	default:
		cs->st.dropped++;
		return 0;
	}
}

/* Untraced code starts running for fr: it owes its return when fr resumes. */
static void owe(struct cs_frame *fr, uint64_t at, const struct cs_block *blk, int pops)
{
	fr->state = CS_CALL_OWED;
	fr->owed_at = at;
	fr->owed_blk = blk;
	fr->owed_pops = (uint8_t)pops;
	fr->owed_shown = 0;
}

/*
 * The untraced code fr waits for calls traced code: first its entry, once
 * (so that the call or jump into it lands where it went).
 */
static int show_owed_entry(struct out_writer *w, struct champsim *cs, struct cs_frame *fr)
{
	if (fr->owed_shown)
		return 0;
	fr->owed_shown = 1;
	if (fr->owed_at)
		return put_synthetic(w, cs, fr->owed_at, CS_SYNTH_PLAIN);
	return put(w, cs, fr->owed_blk->tail_alt, 1);	/* the jump, pointing nowhere known */
}

/* fr resumes: the untraced code it waited for returns. */
static int pay_owed(struct out_writer *w, struct champsim *cs, struct cs_frame *fr)
{
	enum cs_synth shape = fr->owed_pops ? CS_SYNTH_RET : CS_SYNTH_PLAIN;

	fr->state = CS_CALL_NONE;
	if (fr->owed_at)
		return put_synthetic(w, cs, fr->owed_at, shape);
	if (!fr->owed_shown)	/* the jump through a register stands for the return */
		return put(w, cs, fr->owed_pops ? fr->owed_blk->tail_ret : fr->owed_blk->tail_alt, 1);
	return put_synthetic(w, cs, fr->owed_blk->tail_insn->addr, shape);
}

/*
 * The activation goes on in the same function along edge (a block of its
 * own follows): the held Jcc or key takes that edge's outcome; a held call
 * returned without entering traced code.
 */
static int resolve_onward(struct out_writer *w, struct champsim *cs, const struct out_step *sp)
{
	const struct cs_block *cb = cs->pend;
	uint8_t rec[CS_REC];
	uint8_t kind;
	int err;

	cs->pend = NULL;
	if (!cb)
		return 0;
	if (cb->tail == CS_TAIL_CALL) {
		if (!cb->tail_target) {
			cs->st.calls_plain++;
			return put(w, cs, cb->tail_alt, 1);
		}
		cs->st.untraced_calls++;
		err = put(w, cs, cb->tail_rec, 1);
		return err ?: put_synthetic(w, cs, cb->tail_target, CS_SYNTH_RET);
	}
	if (cb->tail == CS_TAIL_GOTO && sp->f == cs->pend_f)
		return put(w, cs, cb->tail_rec, 1);
	if (sp->edge == UINT32_MAX || sp->f != cs->pend_f ||
	    (cb->tail != CS_TAIL_JCC && cb->tail != CS_TAIL_KEY)) {
		drop_tail(cs);
		return 0;
	}
	kind = sp->f->cfg.edges[sp->edge].kind;
	if (cb->tail == CS_TAIL_KEY)
		return put(w, cs, kind == CFG_E_KEY_JUMP ? cb->tail_rec : cb->tail_alt, 1);
	memcpy(rec, cb->tail_rec, CS_REC);
	rec[9] = kind == CFG_E_TAKEN;
	return put(w, cs, rec, 1);
}

/*
 * fr tail-calls untraced code at at (0: through a register, the jump in
 * blk not yet written): that code returns for fr. When fr's call is in the
 * output its return pops it, once the caller resumes (the untraced code
 * may call traced functions first); otherwise a plain record stands for
 * it now.
 */
static int tail_out(struct out_writer *w, struct champsim *cs, struct cs_frame *fr,
		    struct cs_frame *up, uint64_t at, const struct cs_block *blk)
{
	cs->st.tails_out++;
	if (fr->call_written && up) {
		owe(up, at, blk, 1);
		return 0;
	}
	cs->st.rets_plain++;
	if (at)
		return put_synthetic(w, cs, at, CS_SYNTH_PLAIN);
	return put(w, cs, blk->tail_alt, 1);
}

/* fr ends along edge: writes its held last instruction. *popped: it returned for its call. */
static int resolve_exit(struct out_writer *w, struct champsim *cs, const struct out_step *sp,
			struct cs_frame *fr, struct cs_frame *up, int *popped)
{
	const struct cs_block *cb = cs->pend;
	const struct pr_func *f = cs->pend_f;
	uint32_t tail = REGEN_TAIL_NONE;
	uint8_t rec[CS_REC];
	int err;

	cs->pend = NULL;
	*popped = 0;
	if (!cb)
		return 0;
	if (f && f->tail_callee && sp->edge != UINT32_MAX && sp->f == f)
		tail = f->tail_callee[sp->edge];
	switch (cb->tail) {
	case CS_TAIL_RET:
		*popped = fr->call_written;
		cs->st.rets_plain += !fr->call_written;
		return put(w, cs, fr->call_written ? cb->tail_rec : cb->tail_alt, 1);
	case CS_TAIL_JCC:		/* taken out of the function */
		memcpy(rec, cb->tail_rec, CS_REC);
		rec[9] = 1;
		err = put(w, cs, rec, 1);
		if (err)
			return err;
		if (cfg_is_return_thunk(cb->tail_insn->target_name)) {
			/* a conditional return: the thunk's ret */
			*popped = fr->call_written;
			cs->st.rets_plain += !fr->call_written;
			return put_synthetic(w, cs, cb->tail_target,
					     fr->call_written ? CS_SYNTH_RET : CS_SYNTH_PLAIN);
		}
		if (tail != REGEN_TAIL_OTHER)
			return 0;	/* a traced callee takes over the activation's call */
		return tail_out(w, cs, fr, up, cb->tail_target, NULL);
	case CS_TAIL_JMP:
		if (tail != REGEN_TAIL_OTHER)
			return put(w, cs, cb->tail_rec, 1);
		if (!cb->tail_target)
			return tail_out(w, cs, fr, up, 0, cb);
		err = put(w, cs, cb->tail_rec, 1);
		return err ?: tail_out(w, cs, fr, up, cb->tail_target, NULL);
	case CS_TAIL_NORETURN:
		cs->st.noreturn++;
		return put(w, cs, cb->tail_rec, 1);
	default:
		drop_tail(cs);
		return 0;
	}
}

static int push_frame(struct champsim *cs, int call_written)
{
	if (cs->depth == cs->cap) {
		uint32_t cap = cs->cap ? cs->cap * 2 : 64;
		struct cs_frame *s = realloc(cs->stack, cap * sizeof(*s));

		if (!s)
			return -PT_ENOMEM;
		cs->stack = s;
		cs->cap = cap;
	}
	cs->stack[cs->depth++] = (struct cs_frame){ .call_written = (uint8_t)call_written };
	return 0;
}

/*
 * A traced activation of f starts, returning to ret (0: not known, as in
 * events fed from a known execution): is its call in the output? Writes
 * what leads to it: the held call, the untraced code's entry.
 */
static int on_enter(struct out_writer *w, struct champsim *cs, const struct pr_func *f,
		    uint64_t ret)
{
	struct cs_frame *p = top(cs);
	const struct cs_block *cb = cs->pend;
	uint64_t at = f ? f->addr : 0;
	int written = 0, err = 0;

	cs->pend = NULL;
	if (cb && p && cb->tail == CS_TAIL_CALL) {
		p->call_ret = cb->tail_insn->addr + cb->tail_insn->len;
		p->state = CS_CALL_NONE;
		if (ret == p->call_ret || (at && cb->tail_target == at)) {
			/* the call entered f: directly, or the untraced callee jumped to it */
			err = put(w, cs, cb->tail_rec, 1);
			if (!err && cb->tail_insn->kind == CFG_I_CALL && cb->tail_target &&
			    cb->tail_target != at)
				err = put_synthetic(w, cs, cb->tail_target, CS_SYNTH_JUMP);
			p->state = CS_CALL_CONSUMED;
			written = 1;
		} else if (cb->tail_target) {
			/* f is called by the untraced callee, whose return comes later */
			cs->st.untraced_calls++;
			err = put(w, cs, cb->tail_rec, 1);
			owe(p, cb->tail_target, NULL, 1);
			/* through a thunk: the call's target is f's entry, not the thunk */
			p->owed_shown = cb->tail_insn->kind != CFG_I_CALL;
		} else {
			cs->st.calls_plain++;
			err = put(w, cs, cb->tail_alt, 1);
		}
	} else if (cb) {
		drop_tail(cs);
	} else if (p && p->state == CS_CALL_CONSUMED && (!ret || ret == p->call_ret)) {
		written = 1;	/* a traced tail call took over the activation that held the call */
	} else if (p && p->state == CS_CALL_OWED && p->owed_pops && ret == p->call_ret) {
		/* the untraced code jumped to f, which returns for the call */
		if (!p->owed_shown && p->owed_at)
			err = put_synthetic(w, cs, p->owed_at, CS_SYNTH_JUMP);
		else if (!p->owed_shown)
			err = put(w, cs, p->owed_blk->tail_rec, 1);
		p->state = CS_CALL_CONSUMED;
		written = 1;
	}
	if (!err && p && p->state == CS_CALL_OWED)
		err = show_owed_entry(w, cs, p);	/* untraced code calls f */
	return err ?: push_frame(cs, written);
}

static int champsim_step(struct out_writer *w, const struct out_stream *st, const struct out_step *sp)
{
	struct champsim *cs = w->priv;
	const struct cs_block *cb;
	struct cs_frame *fr;
	int err = 0, popped;

	(void)st;
	switch (sp->ev->type) {
	case REGEN_EV_BLOCK:
		fr = top(cs);
		cb = sp->f && sp->ev->block < sp->f->cfg.nblocks ?
		     &cs->blocks[sp->f->index][sp->ev->block] : NULL;
		/* a block of nothing but a held branch: what leads to it waits with it */
		cs->holding = cb && !cb->n && cb->tail_insn;
		if (sp->prev_block != UINT32_MAX) {
			err = resolve_onward(w, cs, sp);
			if (!err && fr && fr->state == CS_CALL_OWED)
				err = pay_owed(w, cs, fr);
			if (fr)
				fr->state = CS_CALL_NONE;
		} else {
			drop_pending(cs);
		}
		cs->holding = 0;
		if (err || !cb)
			return err;
		cs->st.mem_exact += cb->mem_exact;
		cs->st.mem_unknown += cb->mem_unknown;
		err = put(w, cs, cb->recs, cb->n);
		if (cb->tail_insn) {
			cs->pend = cb;
			cs->pend_f = sp->f;
		}
		return err;
	case REGEN_EV_ENTER:
		/* a frame is no return address: the caller is untraced */
		return on_enter(w, cs, sp->f, sp->ev->marker &&
				sp->ev->marker->type == REGEN_M_ENTER &&
				sp->ev->marker->arg == REGEN_ENTER_RET ? sp->ev->marker->value : 0);
	case REGEN_EV_EXIT:
		fr = top(cs);
		if (!fr) {
			drop_pending(cs);
			return 0;
		}
		err = resolve_exit(w, cs, sp, fr, cs->depth > 1 ? fr - 1 : NULL, &popped);
		cs->depth--;
		fr = top(cs);
		if (fr && popped && fr->state == CS_CALL_CONSUMED)
			fr->state = CS_CALL_NONE;
		return err;
	case REGEN_EV_FORK:	/* the parent goes on */
	case REGEN_EV_EXEC:	/* the task goes on under the execve's kernel activations */
		return 0;
	case REGEN_EV_TRUNCATED:	/* the stream ends here */
		err = end_pending(w, cs);
		cs->depth = 0;
		return err ?: flush_held(w, cs);
	default:		/* gap, resync: what was open is gone */
		drop_pending(cs);
		cs->depth = 0;
		return 0;
	}
}

static int champsim_stream_begin(struct out_writer *w, const struct out_stream *st)
{
	struct champsim *cs = w->priv;

	(void)st;
	cs->pend = NULL;
	cs->nheld = 0;
	cs->depth = 0;
	return 0;
}

static int champsim_stream_end(struct out_writer *w, const struct out_stream *st)
{
	struct champsim *cs = w->priv;
	int err;

	(void)st;
	err = end_pending(w, cs);
	cs->depth = 0;
	return err ?: flush_held(w, cs);
}

static int champsim_close(struct out_writer *w)
{
	struct champsim *cs = w->priv;

	if (cs && cs->st.records) {
		const struct cs_stats *s = &cs->st;

		fprintf(stderr, "pathregen: champsim: %" PRIu64 " records, %" PRIu64
			" of them synthetic for untraced code (%" PRIu64 " returns, %" PRIu64
			" entries, %" PRIu64 " jumps); %" PRIu64 " calls into untraced code kept, %"
			PRIu64 " without a known target written as non-branches; %" PRIu64
			" tail calls out; %" PRIu64 " returns whose call was not traced written as"
			" non-branches; %" PRIu64 " calls that never return\n",
			s->records, s->synth_ret + s->synth_plain + s->synth_jump, s->synth_ret,
			s->synth_plain, s->synth_jump, s->untraced_calls, s->calls_plain,
			s->tails_out, s->rets_plain, s->noreturn);
		fprintf(stderr, "pathregen: champsim: memory operands: %" PRIu64
			" with an exact address written (RIP-relative, absolute), %" PRIu64
			" addressed through registers, the stack or fs/gs left out (zero)\n",
			s->mem_exact, s->mem_unknown);
		if (s->dropped)
			fprintf(stderr, "pathregen: champsim: %" PRIu64
				" branches whose outcome (or, for a jump, whose target) a gap or the stream's end hid were left out\n",
				s->dropped);
	}
	if (cs)
		champsim_free(w->m, cs);
	w->priv = NULL;
	return fflush(w->fp) ? -PT_EIO : 0;
}

const struct out_writer_ops out_champsim_ops = {
	.name = "champsim",
	.open = champsim_open,
	.stream_begin = champsim_stream_begin,
	.step = champsim_step,
	.stream_end = champsim_stream_end,
	.close = champsim_close,
};
