// SPDX-License-Identifier: GPL-2.0
/*
 * inline_counters: an edges plan as code in a copy (docs/inline.md,
 * "Counters (edges mode)"), on synthetic functions assembled by gcc
 * (cfg_asm.c). The oracle knows nothing of the layout:
 * - the stream: the copy decoded linearly (Zydis) is the original's
 *   instructions in order, each byte for byte or, for a branch, the same
 *   kind and condition whose target, past any inserted increments (and
 *   through a stub's jmp), is the original target's instruction; what is
 *   left is increment sequences (`[pushf] [push %r] mov piece(%rip), %r;
 *   incq %gs:counter(%r) [pop %r] [popf]`, the piece a relocation, the
 *   counter a field the module fills) and stubs (sequences, then a jmp);
 * - the increments: every path of the original CFG from the entry to EXIT
 *   (each edge at most twice) walked through the copy executes exactly one
 *   increment of each counted edge's counter per traversal, the
 *   activation counter once, and nothing else;
 * - registers: along every such path, a register a sequence uses without
 *   saving it is written by the original's instructions before any reads
 *   it (a call reads the caller-saved ones, ret the return and
 *   callee-saved ones), and is callee-saved or written by the function;
 * - flags and ORC: where the flags are live the increment saves them, and
 *   every ORC entry in effect inside a sequence's pushes moves an sp-based
 *   CFA by 8 a push and nowhere else; a CFA on another register there is
 *   refused (inline-flags-live, inline-no-register).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/cfg.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/inline.h>
#include <pathtrace/static_calls.h>

#include "pathtrace_abi.h"

#include "cfg_asm.h"
#include "unit.h"

#define ORC_SP 5
#define ORC_BP 4
#define ORC_R10 6
#define MAX_PATH 40

/* A loop with a diamond inside; no flag is live across any edge. */
static const char loop_src[] =
	"	.text\n	.globl loop\n	.type loop, @function\nloop:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* the __fentry__ NOP */
	"	xor %eax, %eax\n"
	"1:	test %edi, %edi\n"
	"	je 3f\n"
	"	add $1, %eax\n"
	"	cmp $5, %eax\n"
	"	jne 2f\n"
	"	add $2, %eax\n"
	"2:	dec %edi\n"
	"	jmp 1b\n"
	"3:	ret\n"
	"	.size loop, .-loop\n";

/* je's fall-through and taken sides both read the flags of one cmp. */
static const char flags_src[] =
	"	.text\n	.globl flags\n	.type flags, @function\nflags:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	cmp $5, %edi\n"
	"	je 1f\n"
	"	jl 2f\n"
	"	mov $1, %eax\n"
	"	ret\n"
	"1:	setg %al\n"
	"	ret\n"
	"2:	mov $3, %eax\n"
	"	ret\n"
	"	.size flags, .-flags\n";

/* A register is dead on every edge: each increment needs no push. */
static const char dead_src[] =
	"	.text\n	.globl dead\n	.type dead, @function\ndead:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	mov $0, %ecx\n"
	"	mov %edi, %eax\n"
	"	cmp $5, %edi\n"
	"	je 1f\n"
	"	mov $1, %ecx\n"
	"	add %ecx, %eax\n"
	"	ret\n"
	"1:	mov $2, %ecx\n"
	"	add %ecx, %eax\n"
	"	ret\n"
	"	.size dead, .-dead\n";

/*
 * Calls that return (direct, indirect), one of them a site's instruction,
 * and a branch to the instruction after a call.
 */
static const char calls_src[] =
	"	.text\n	.globl calls\n	.type calls, @function\ncalls:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	push %rbx\n"
	"	mov %rdi, %rbx\n"
	"	test %edi, %edi\n"
	"	je 1f\n"
	"	.byte 0xe8\n	.long 0x1000\n"	/* call to outside the function */
	"1:	call *%rbx\n"
	"	pop %rbx\n"
	"	ret\n"
	"	.size calls, .-calls\n";

/* A conditional tail call: the jne's taken side leaves the function. */
static const char tail_src[] =
	"	.text\n	.globl tail\n	.type tail, @function\ntail:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	test %edi, %edi\n"
	"	{disp32} jne other\n"	/* rel32, as the kernel's are */
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.size tail, .-tail\n"
	"	.globl other\n	.type other, @function\nother:\n"
	"	ret\n"
	"	.size other, .-other\n";

struct fixture {
	struct elfobj *o;
	struct cfg_input in;
	struct cfg c;
	struct inline_copy cp;
	uint32_t *edge_counter;
	uint32_t entry_counter, ncounters;
};

/* What the copy's linear decode found. */
struct decoded {
	uint32_t *opos;		/* per original instruction: its place in the copy */
	uint8_t *ilen;		/* per original instruction: its length there */
	uint32_t *idx_at;	/* per copy byte: original instruction + 1 starting there */
	int32_t *seq_ctr;	/* per copy byte: counter + 1 of a sequence starting there */
	uint8_t *seq_len, *seq_save;
	uint8_t *seq_reg;	/* per copy byte: a sequence's register; + 16 when pushed */
	uint8_t *depth;		/* per copy byte: pushes in effect (a sequence's) */
	uint8_t *stub_jmp;	/* per copy byte: a stub's jmp starts there */
	uint32_t nseq, nsave, npush, stubs_at;
};

static void orc_set(uint8_t *o, int16_t sp_offset, uint8_t sp_reg)
{
	memset(o, 0, KORC_ENTRY);
	memcpy(o, &sp_offset, 2);
	o[4] = sp_reg;		/* bp_reg 0: undefined; type 0: ORC_TYPE_CALL */
}

/* Assembles src, builds the CFG and the copy with one ORC entry (CFA: sp_reg + 8). */
static void setup(struct fixture *f, const char *src, const char *func, uint8_t sp_reg)
{
	int64_t i;

	memset(f, 0, sizeof(*f));
	f->o = cfg_asm_object(func, src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->o);
	i = elfobj_find(f->o, func);
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_EQUAL_FATAL(elfobj_input(f->o, (uint32_t)i, &f->in), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_build(&f->in, &f->c), 0);
	CU_ASSERT_EQUAL_FATAL(inline_copy_build(&f->in, &f->c, NULL, &f->cp), 0);
	f->cp.orc = calloc(1, sizeof(*f->cp.orc));
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->cp.orc);
	f->cp.orc[0].ip = f->in.addr;
	orc_set(f->cp.orc[0].orc, 8, sp_reg);
	f->cp.norc = 1;
	f->edge_counter = calloc(f->c.nedges + 1, sizeof(*f->edge_counter));
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->edge_counter);
}

static void teardown(struct fixture *f)
{
	free(f->edge_counter);
	inline_copy_free(&f->cp);
	cfg_free(&f->c);
	elfobj_close(f->o);
}

/* Counters: every edge its own (all), or every other edge (!all); activations last. */
static int instrument(struct fixture *f, int all)
{
	uint32_t e, n = 0;

	for (e = 0; e < f->c.nedges; e++)
		f->edge_counter[e] = all || e % 2 ? n++ : INLINE_NONE;
	f->entry_counter = n++;
	f->ncounters = n;
	return inline_counters_insert(&f->in, &f->c, &f->cp, f->edge_counter, f->entry_counter,
				      f->ncounters);
}

/* The relocation of cp at off with copy kind, or NULL. */
static const struct inline_reloc *reloc_at(const struct inline_copy *cp, uint32_t off, uint32_t kind)
{
	uint32_t k;

	for (k = 0; k < cp->nrelocs; k++)
		if (cp->relocs[k].off == off && cp->relocs[k].copy == kind)
			return &cp->relocs[k];
	return NULL;
}

/* A push (0x50) or pop (0x58) of a register at p: its number, or -1; *n its bytes. */
static int push_pop_at(const struct inline_copy *cp, uint32_t p, uint8_t op, uint32_t *n)
{
	uint32_t rex = p < cp->len && cp->code[p] == 0x41;

	*n = 1 + rex;
	if (p + rex >= cp->len || (cp->code[p + rex] & 0xf8) != op)
		return -1;
	return (int)(8 * rex + (cp->code[p + rex] & 7));
}

/*
 * The counter of the increment sequence at p, or -1; *len its bytes, *save
 * whether it saves the flags, *reg its register (+ 16 when pushed); depth[]
 * from p gets the pushes in effect at each of its bytes.
 */
static int32_t seq_at(const struct inline_copy *cp, uint32_t p, uint8_t *len, uint8_t *save,
		      uint8_t *reg, uint8_t *depth)
{
	const struct inline_reloc *piece, *disp;
	uint32_t at = p, n, d = 0, k;
	int pushed = -1, r, ctr;
	int32_t field;

	*save = cp->code[at] == 0x9c;
	if (*save)
		depth[at++] = (uint8_t)d++;
	pushed = push_pop_at(cp, at, 0x50, &n);
	if (pushed >= 0) {
		for (k = 0; k < n; k++)
			depth[at++] = (uint8_t)d;
		d++;
	}
	/* mov piece(%rip), %r */
	if (at + 7 > cp->len || (cp->code[at] & 0xfb) != 0x48 || cp->code[at + 1] != 0x8b ||
	    (cp->code[at + 2] & 0xc7) != 0x05)
		return -1;
	r = ((cp->code[at] & 4) ? 8 : 0) | ((cp->code[at + 2] >> 3) & 7);
	piece = reloc_at(cp, at + 3, INLINE_COUNTER_PIECE);
	if ((pushed >= 0 && pushed != r) || !piece || piece->addend != -4 ||
	    piece->type != R_X86_64_PC32)
		return -1;
	for (k = 0; k < 7; k++)
		depth[at++] = (uint8_t)d;
	/* incq %gs:counter(%r) */
	if (at + 8 + ((r & 7) == 4) > cp->len || cp->code[at] != 0x65 ||
	    cp->code[at + 1] != (0x48 | (r >= 8)) || cp->code[at + 2] != 0xff ||
	    cp->code[at + 3] != (0x80 | (r & 7)) || ((r & 7) == 4 && cp->code[at + 4] != 0x24))
		return -1;
	n = 4 + ((r & 7) == 4);
	disp = reloc_at(cp, at + n, INLINE_COUNTER_DISP);
	memcpy(&field, cp->code + at + n, 4);
	if (!disp || disp->addend != field || field % 8 || field < 0 ||
	    (uint32_t)field / 8 >= cp->ncounters)
		return -1;
	ctr = field / 8;
	for (k = 0; k < n + 4; k++)
		depth[at++] = (uint8_t)d;
	if (pushed >= 0) {
		if (push_pop_at(cp, at, 0x58, &n) != r)
			return -1;	/* a push without its pop */
		for (k = 0; k < n; k++)
			depth[at++] = (uint8_t)d;
		d--;
	}
	if (*save) {
		if (at >= cp->len || cp->code[at] != 0x9d)
			return -1;	/* a pushf without its popf */
		depth[at++] = (uint8_t)d;
	}
	*len = (uint8_t)(at - p);
	*reg = (uint8_t)(r + (pushed >= 0 ? 16 : 0));
	return ctr;
}

/* Past the increments at p: the instruction (index + 1) it reaches, or 0. */
static uint32_t past_seqs(const struct decoded *d, const struct inline_copy *cp, uint32_t p)
{
	while (p < cp->len && d->seq_ctr[p])
		p += d->seq_len[p];
	return p < cp->len ? d->idx_at[p] : 0;
}

/* The rel32 branch at p's target in the copy (its end + disp). */
static uint32_t rel_target(const struct inline_copy *cp, uint32_t p, uint32_t len)
{
	int32_t d;

	memcpy(&d, cp->code + p + len - 4, 4);
	return p + len + (uint32_t)d;
}

/* Whether operand op is %gs:-relative and RIP-relative with a PC32 of kind at its disp. */
static int gs_rip(const struct inline_copy *cp, uint32_t at, const ZydisDecodedInstruction *zi,
		  const ZydisDecodedOperand *op, uint32_t kind)
{
	const struct inline_reloc *r = reloc_at(cp, at + zi->raw.disp.offset, kind);

	return op->type == ZYDIS_OPERAND_TYPE_MEMORY && op->mem.segment == ZYDIS_REGISTER_GS &&
	       op->mem.base == ZYDIS_REGISTER_RIP && r && r->type == R_X86_64_PC32 &&
	       r->addend == -(int64_t)(zi->length - zi->raw.disp.offset);
}

/*
 * Whether operand op is %gs:pt_inline_frames_saved(,%reg,8): no base, a
 * 32S with addend 0 (INLINE_FRAMES_SAVED) at its disp.
 */
static int gs_saved(const struct inline_copy *cp, uint32_t at, const ZydisDecodedInstruction *zi,
		    const ZydisDecodedOperand *op, ZydisRegister reg)
{
	const struct inline_reloc *r = reloc_at(cp, at + zi->raw.disp.offset, INLINE_FRAMES_SAVED);

	return op->type == ZYDIS_OPERAND_TYPE_MEMORY && op->mem.segment == ZYDIS_REGISTER_GS &&
	       op->mem.base == ZYDIS_REGISTER_NONE && op->mem.index == reg &&
	       op->mem.scale == 8 && r && r->type == R_X86_64_32S && r->addend == 0;
}

/* The activation's count's sequence, decoded (count_at). */
struct count_seq {
	int dir;		/* +1 up, -1 down */
	uint32_t len;		/* its bytes, saves included */
	int save;		/* pushf/popf around it */
	int pushed;		/* the register pushed and popped around it, or -1 */
	ZydisRegister reg;	/* the slot's index register (64-bit) */
	uint32_t push_end;	/* up: where the word's push ends (the CFA 8 further) */
	uint32_t pop_end;	/* up: where its pop ends */
};

/*
 * The activations' count at p (docs/inline.md, "Frames the copies keep"),
 * or 0: [pushf] [push %r]; up: the slot's index (movl
 * %gs:pt_inline_depth(%rip), %r32, INLINE_DEPTH; cmpl $N - 1, %r32; ja
 * past the save), push %gs:pt_inline_frame(%rip) (INLINE_FRAME), pop
 * %gs:pt_inline_frames_saved(,%r,8), incl %gs:pt_inline_depth(%rip); down:
 * decl %gs:pt_inline_depth(%rip), jns over movb $0 to
 * pt_inline_depth_known(%rip) (INLINE_DEPTH_KNOWN), the index, movq
 * saved(,%r,8), %r, movq %r, %gs:pt_inline_frame(%rip); [pop %r] [popf].
 */
static int count_at(const struct inline_copy *cp, uint32_t p, struct count_seq *q)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t at = p, n, skip_to = 0;
	int step;

#define NEXT() (at < cp->len && ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, cp->code + at, \
							  cp->len - at, &zi, ops)))
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	memset(q, 0, sizeof(*q));
	q->save = at < cp->len && cp->code[at] == 0x9c;
	at += q->save;
	q->pushed = push_pop_at(cp, at, 0x50, &n);
	if (q->pushed >= 0)
		at += n;
	if (!NEXT())
		return 0;
	q->dir = zi.mnemonic == ZYDIS_MNEMONIC_DEC ? -1 : 1;
	for (step = q->dir > 0 ? 0 : -3; step < 6; step++) {
		if (!NEXT())
			return 0;
		switch (step) {
		case -3:	/* decl %gs:pt_inline_depth(%rip) */
			if (zi.mnemonic != ZYDIS_MNEMONIC_DEC || !gs_rip(cp, at, &zi, &ops[0], INLINE_DEPTH))
				return 0;
			break;
		case -2:	/* jns over the movb */
			if (zi.mnemonic != ZYDIS_MNEMONIC_JNS || zi.length != 2 || cp->code[at + 1] != 8)
				return 0;
			break;
		case -1:	/* movb $0, %gs:pt_inline_depth_known(%rip) */
			if (zi.mnemonic != ZYDIS_MNEMONIC_MOV || zi.length != 8 || ops[1].imm.value.u ||
			    !gs_rip(cp, at, &zi, &ops[0], INLINE_DEPTH_KNOWN))
				return 0;
			break;
		case 0:		/* movl %gs:pt_inline_depth(%rip), %r32 */
			if (zi.mnemonic != ZYDIS_MNEMONIC_MOV || ops[0].size != 32 ||
			    ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
			    !gs_rip(cp, at, &zi, &ops[1], INLINE_DEPTH))
				return 0;
			q->reg = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
								  ops[0].reg.value);
			break;
		case 1:		/* cmpl $N - 1, %r32 */
			if (zi.mnemonic != ZYDIS_MNEMONIC_CMP || ops[1].imm.value.u !=
			    PT_INLINE_FRAMES_SAVED - 1 || ZydisRegisterGetLargestEnclosing(
				    ZYDIS_MACHINE_MODE_LONG_64, ops[0].reg.value) != q->reg)
				return 0;
			break;
		case 2:		/* ja past the slot's move */
			if (zi.mnemonic != ZYDIS_MNEMONIC_JNBE || zi.length != 2)
				return 0;
			skip_to = at + 2 + cp->code[at + 1];
			break;
		case 3:		/* up: push the word; down: movq saved(,%r,8), %r */
			if (q->dir > 0 ? zi.mnemonic != ZYDIS_MNEMONIC_PUSH ||
					 !gs_rip(cp, at, &zi, &ops[0], INLINE_FRAME) :
					 zi.mnemonic != ZYDIS_MNEMONIC_MOV ||
					 ops[0].reg.value != q->reg ||
					 !gs_saved(cp, at, &zi, &ops[1], q->reg))
				return 0;
			q->push_end = at + zi.length;
			break;
		case 4:		/* up: pop it into the slot; down: movq %r, the word */
			if (q->dir > 0 ? zi.mnemonic != ZYDIS_MNEMONIC_POP ||
					 !gs_saved(cp, at, &zi, &ops[0], q->reg) :
					 zi.mnemonic != ZYDIS_MNEMONIC_MOV ||
					 ops[1].reg.value != q->reg ||
					 !gs_rip(cp, at, &zi, &ops[0], INLINE_FRAME))
				return 0;
			q->pop_end = at + zi.length;
			if (skip_to != q->pop_end)
				return 0;
			if (q->dir < 0)
				step = 6;	/* done */
			break;
		case 5:		/* up: incl %gs:pt_inline_depth(%rip) */
			if (zi.mnemonic != ZYDIS_MNEMONIC_INC || !gs_rip(cp, at, &zi, &ops[0], INLINE_DEPTH))
				return 0;
			break;
		}
		at += zi.length;
	}
#undef NEXT
	if (q->pushed >= 0) {
		if (push_pop_at(cp, at, 0x58, &n) != q->pushed ||
		    q->pushed != (int)(q->reg - ZYDIS_REGISTER_RAX))
			return 0;
		at += n;
	}
	if (q->save) {
		if (at >= cp->len || cp->code[at] != 0x9d)
			return 0;
		at++;
	}
	q->len = at - p;
	return q->dir;
}

/* The activations' count at p: +1 up, -1 down, 0 none. */
static int depth_at(const struct inline_copy *cp, uint32_t p)
{
	struct count_seq q;

	return count_at(cp, p, &q);
}

/* The bytes of the count's sequence at p (depth_at not 0). */
static uint32_t depth_len(const struct inline_copy *cp, uint32_t p)
{
	struct count_seq q;

	count_at(cp, p, &q);
	return q.len;
}

/* The length of the count's sequence (dir) that ends right at p, else 0. */
static uint32_t count_before(const struct inline_copy *cp, uint32_t p, int dir)
{
	struct count_seq q;
	uint32_t n;

	for (n = 1; n <= p && n < 96; n++)
		if (count_at(cp, p - n, &q) == dir && q.len == n)
			return n;
	return 0;
}

/* The bytes of the count going down right before p (a way out), else 0. */
static uint32_t dec_before(const struct inline_copy *cp, uint32_t p)
{
	return count_before(cp, p, -1);
}

/* Linear decode of the copy and the stream check. Returns 0 when it is the original's. */
static int decode_copy(const struct fixture *f, struct decoded *d)
{
	const struct inline_copy *cp = &f->cp;
	ZydisDecoder dec;
	uint32_t p = 0, i = 0, k;

	memset(d, 0, sizeof(*d));
	d->opos = calloc(f->c.ninsns + 1, sizeof(*d->opos));
	d->ilen = calloc(f->c.ninsns + 1, 1);
	d->idx_at = calloc(cp->len + 1, sizeof(*d->idx_at));
	d->seq_ctr = calloc(cp->len + 1, sizeof(*d->seq_ctr));
	d->seq_len = calloc(cp->len + 1, 1);
	d->seq_save = calloc(cp->len + 1, 1);
	d->seq_reg = calloc(cp->len + 1, 1);
	d->depth = calloc(cp->len + 1, 1);
	d->stub_jmp = calloc(cp->len + 1, 1);
	CU_ASSERT_FATAL(d->opos && d->ilen && d->idx_at && d->seq_ctr && d->seq_len && d->seq_save &&
			d->seq_reg && d->depth && d->stub_jmp);
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (p < cp->len) {
		uint8_t len, save, reg;
		int32_t ctr = seq_at(cp, p, &len, &save, &reg, d->depth);
		ZydisDecodedInstruction zn;

		if (ctr >= 0) {
			d->seq_ctr[p] = ctr + 1;
			d->seq_len[p] = len;
			d->seq_save[p] = save;
			d->seq_reg[p] = reg;
			d->nseq++;
			d->nsave += save;
			d->npush += reg >= 16;
			p += len;
			continue;
		}
		if (i == f->c.ninsns) {	/* the stubs: sequences, then a jmp */
			if (cp->code[p] != 0xe9 || p + 5 > cp->len)
				return -1;
			d->stub_jmp[p] = 1;
			p += 5;
			continue;
		}
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, cp->code + p,
								 cp->len - p, &zn)))
			return -1;
		d->opos[i] = p;
		d->ilen[i] = zn.length;
		d->idx_at[p] = i + 1;
		p += zn.length;
		i++;
	}
	if (!i || i != f->c.ninsns)
		return -1;
	d->stubs_at = d->opos[i - 1] + d->ilen[i - 1];
	for (i = 0; i < f->c.ninsns; i++) {
		const struct cfg_insn *ci = &f->c.insns[i];
		const uint8_t *ob = f->in.code + (ci->addr - f->in.addr);
		ZydisDecodedInstruction zo, zn;
		uint32_t t, j;

		p = d->opos[i];
		ZydisDecoderDecodeInstruction(&dec, NULL, ob, ci->len, &zo);
		ZydisDecoderDecodeInstruction(&dec, NULL, cp->code + p, cp->len - p, &zn);
		if (ci->kind != CFG_I_JCC && ci->kind != CFG_I_JMP) {
			if (zn.length != ci->len || memcmp(cp->code + p, ob, ci->len))
				return -1;
			continue;
		}
		if (zn.mnemonic != zo.mnemonic || zn.raw.imm[0].size != 32)
			return -1;	/* the same condition, as rel32 */
		t = rel_target(cp, p, zn.length);
		if (t >= cp->len)
			return -1;
		if (t >= d->stubs_at) {	/* through the stub's jmp */
			for (k = t; k < cp->len && d->seq_ctr[k]; k += d->seq_len[k])
				;
			if (k >= cp->len || !d->stub_jmp[k])
				return -1;
			t = rel_target(cp, k, 5);
		}
		j = past_seqs(d, cp, t);
		if (!j || f->c.insns[j - 1].addr != ci->target)
			return -1;
	}
	return 0;
}

static void decoded_free(struct decoded *d)
{
	free(d->opos);
	free(d->ilen);
	free(d->idx_at);
	free(d->seq_ctr);
	free(d->seq_len);
	free(d->seq_save);
	free(d->seq_reg);
	free(d->depth);
	free(d->stub_jmp);
}

/* Increments from p on; returns where they end. *pending gets the registers used unsaved. */
static uint32_t run_seqs(const struct decoded *d, const struct inline_copy *cp, uint32_t p,
			 uint64_t *counts, uint32_t *pending)
{
	while (p < cp->len && d->seq_ctr[p]) {
		counts[d->seq_ctr[p] - 1]++;
		if (d->seq_reg[p] < 16)
			*pending |= 1u << d->seq_reg[p];
		p += d->seq_len[p];
	}
	return p;
}

#define CALLER_SAVED 0x0fc7u	/* rax rcx rdx rsi rdi r8-r11 */
#define RET_READS 0xf02du	/* rax rdx rbx rbp r12-r15 */

/* The general registers original instruction i reads and writes whole (32 or 64 bits). */
static void insn_regs(const struct fixture *f, uint32_t i, uint32_t *rd, uint32_t *wr)
{
	const struct cfg_insn *ci = &f->c.insns[i];
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t k;

	*rd = *wr = 0;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	CU_ASSERT_FATAL(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, f->in.code + (ci->addr - f->in.addr),
							     ci->len, &zi, ops)));
	for (k = 0; k < zi.operand_count; k++) {
		ZydisRegister regs[3] = { ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE,
					  ZYDIS_REGISTER_NONE };
		int j;

		if (ops[k].type == ZYDIS_OPERAND_TYPE_MEMORY) {
			regs[1] = ops[k].mem.base;
			regs[2] = ops[k].mem.index;
		} else if (ops[k].type == ZYDIS_OPERAND_TYPE_REGISTER) {
			regs[0] = ops[k].reg.value;
		}
		for (j = 0; j < 3; j++) {
			ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
									     regs[j]);
			uint32_t bit;

			if (ZydisRegisterGetClass(big) != ZYDIS_REGCLASS_GPR64)
				continue;
			bit = 1u << ZydisRegisterGetId(big);
			if (j || (ops[k].actions & (ZYDIS_OPERAND_ACTION_READ |
						    ZYDIS_OPERAND_ACTION_CONDREAD)))
				*rd |= bit;
			else if ((ops[k].actions & ZYDIS_OPERAND_ACTION_WRITE) && ops[k].size >= 32)
				*wr |= bit;
		}
	}
	if (ci->kind == CFG_I_CALL || ci->kind == CFG_I_CALL_INDIRECT)
		*rd |= CALLER_SAVED;
	if (ci->kind == CFG_I_RET)
		*rd |= RET_READS;
}

/* Instruction i runs: -1 if it reads a register a sequence used unsaved and none rewrote. */
static int run_insn(const struct fixture *f, uint32_t i, uint32_t *pending)
{
	uint32_t rd, wr;

	insn_regs(f, i, &rd, &wr);
	if (rd & *pending)
		return -1;
	*pending &= ~wr;
	return 0;
}

/*
 * Walks the copy along path (edges of the original CFG, the last to EXIT);
 * counts[] gets the increments executed. Returns 0, or -1 where the copy
 * does not go where the original goes.
 */
static int walk(const struct fixture *f, const struct decoded *d, const uint32_t *path,
		uint32_t n, uint64_t *counts)
{
	const struct cfg *c = &f->c;
	const struct inline_copy *cp = &f->cp;
	uint32_t p = 0, b = 0, k, i, pending = 0;

	for (k = 0; k < n; k++) {
		const struct cfg_block *bl = &c->blocks[b];
		const struct cfg_edge *e = &c->edges[path[k]];
		uint32_t last = bl->first_insn + bl->ninsn - 1;

		for (i = bl->first_insn; i <= last; i++) {
			p = run_seqs(d, cp, p, counts, &pending);
			if (p != d->opos[i] || run_insn(f, i, &pending))
				return -1;
			if (i < last)
				p += d->ilen[i];	/* plain instructions run through */
		}
		switch (e->kind) {
		case CFG_E_FALL:
		case CFG_E_CALL_RETURN:
			p += d->ilen[last];
			break;
		case CFG_E_TAKEN:
		case CFG_E_JUMP:
			p = rel_target(cp, p, d->ilen[last]);
			if (p >= d->stubs_at && p < cp->len) {
				p = run_seqs(d, cp, p, counts, &pending);
				if (p >= cp->len || !d->stub_jmp[p])
					return -1;
				p = rel_target(cp, p, 5);
			}
			break;
		case CFG_E_EXIT:
			break;
		default:
			return -1;	/* no other kind in these functions */
		}
		if (e->dst >= c->nblocks)	/* out of the function: every register read */
			return k + 1 == n && (!pending || c->insns[last].kind == CFG_I_RET) ? 0 : -1;
		b = e->dst;
	}
	return -1;
}

struct paths {
	const struct fixture *f;
	const struct decoded *d;
	uint32_t path[MAX_PATH];
	uint8_t *used;
	uint64_t *counts, *want;
	uint32_t walked, wrong;
};

/* Every path from block b on (each edge at most twice), walked and checked. */
static void each_path(struct paths *ps, uint32_t b, uint32_t depth)
{
	const struct cfg *c = &ps->f->c;
	uint32_t e, k;

	if (depth == MAX_PATH)
		return;
	for (e = c->blocks[b].first_succ; e < c->blocks[b].first_succ + c->blocks[b].nsucc; e++) {
		if (ps->used[e] == 2)
			continue;
		ps->used[e]++;
		ps->path[depth] = e;
		if (c->edges[e].dst >= c->nblocks) {
			memset(ps->counts, 0, ps->f->ncounters * sizeof(*ps->counts));
			memset(ps->want, 0, ps->f->ncounters * sizeof(*ps->want));
			ps->want[ps->f->entry_counter] = 1;
			for (k = 0; k <= depth; k++)
				if (ps->f->edge_counter[ps->path[k]] != INLINE_NONE)
					ps->want[ps->f->edge_counter[ps->path[k]]]++;
			ps->walked++;
			if (walk(ps->f, ps->d, ps->path, depth + 1, ps->counts) ||
			    memcmp(ps->counts, ps->want, ps->f->ncounters * sizeof(*ps->want)))
				ps->wrong++;
		} else {
			each_path(ps, c->edges[e].dst, depth + 1);
		}
		ps->used[e]--;
	}
}

/* The stream and every path of an instrumented copy; returns the paths walked. */
static uint32_t check_copy(const struct fixture *f)
{
	struct decoded d;
	struct paths ps = { .f = f, .d = &d };

	uint32_t i, rd, wr, written = 0;

	CU_ASSERT_EQUAL_FATAL(decode_copy(f, &d), 0);
	CU_ASSERT_EQUAL(d.nseq, f->cp.nsequences);
	CU_ASSERT_EQUAL(d.nsave, f->cp.nflags_saved);
	CU_ASSERT_EQUAL(d.npush, f->cp.nregs_saved);
	/* unsaved: callee-saved, or caller-saved and written by the function anyway */
	for (i = 0; i < f->c.ninsns; i++) {
		insn_regs(f, i, &rd, &wr);
		written |= wr;
	}
	for (i = 0; i < f->cp.len; i++)
		if (d.seq_ctr[i] && d.seq_reg[i] < 16)
			CU_ASSERT((1u << d.seq_reg[i]) & (~CALLER_SAVED | written));
	ps.used = calloc(f->c.nedges + 1, 1);
	ps.counts = calloc(f->ncounters, sizeof(*ps.counts));
	ps.want = calloc(f->ncounters, sizeof(*ps.want));
	CU_ASSERT_FATAL(ps.used && ps.counts && ps.want);
	each_path(&ps, 0, 0);
	CU_ASSERT(ps.walked > 0);
	CU_ASSERT_EQUAL(ps.wrong, 0);
	free(ps.used);
	free(ps.counts);
	free(ps.want);
	decoded_free(&d);
	return ps.walked;
}

static void test_stream_and_paths(void)
{
	struct fixture f;
	int all;

	for (all = 0; all < 2; all++) {
		setup(&f, loop_src, "loop", ORC_SP);
		CU_ASSERT_EQUAL_FATAL(instrument(&f, all), 0);
		CU_ASSERT(f.cp.len > f.cp.orig_len);
		check_copy(&f);
		CU_ASSERT_EQUAL(f.cp.nflags_saved, 0);	/* no flag live on any edge */
		teardown(&f);
		setup(&f, flags_src, "flags", ORC_SP);
		CU_ASSERT_EQUAL_FATAL(instrument(&f, all), 0);
		check_copy(&f);
		teardown(&f);
		setup(&f, dead_src, "dead", ORC_SP);
		CU_ASSERT_EQUAL_FATAL(instrument(&f, all), 0);
		check_copy(&f);
		CU_ASSERT_EQUAL(f.cp.nregs_saved, 0);
		teardown(&f);
	}
}

/* The sp offset of the ORC entry in effect at copy offset p. */
static int16_t orc_sp_at(const struct inline_copy *cp, uint32_t p, uint8_t *reg)
{
	int16_t sp = 0;
	uint32_t k;

	*reg = 0;
	for (k = 0; k < cp->norc && cp->orc[k].ip <= cp->addr + p; k++) {
		memcpy(&sp, cp->orc[k].orc, 2);
		*reg = cp->orc[k].orc[4] & 0xf;
	}
	return sp;
}

/*
 * In flags_src the flags are live on both edges out of the je (jl reads
 * SF/OF, setg SF/OF/ZF) and dead everywhere else: the increments of those
 * two edges save them, and no other does.
 */
static void check_saved_sites(const struct fixture *f, const struct decoded *d)
{
	const struct cfg *c = &f->c;
	uint32_t i, e, p, b = UINT32_MAX, nlive = 0;

	for (i = 0; i < c->ninsns && b == UINT32_MAX; i++)
		if (c->insns[i].kind == CFG_I_JCC)
			b = c->insns[i].block;
	CU_ASSERT_FATAL(b != UINT32_MAX);
	for (p = 0; p < f->cp.len; p++) {
		int live = 0;

		if (!d->seq_ctr[p])
			continue;
		for (e = c->blocks[b].first_succ; e < c->blocks[b].first_succ + c->blocks[b].nsucc; e++)
			live |= f->edge_counter[e] == (uint32_t)(d->seq_ctr[p] - 1);
		nlive += live;
		CU_ASSERT_EQUAL(d->seq_save[p], live);
	}
	CU_ASSERT_EQUAL(nlive, 2);
}

/*
 * Flags live: saved around the increment, and the CFA in effect is the
 * original's + 8 for each push in effect (pushf, push of a register no
 * dead one could replace) exactly while it is (sp-based), the original's
 * everywhere for bp.
 */
static void test_flags_live_orc(void)
{
	static const uint8_t regs[2] = { ORC_SP, ORC_BP };
	struct fixture f;
	struct decoded d;
	uint32_t r, p;
	uint8_t reg;

	for (r = 0; r < 2; r++) {
		setup(&f, flags_src, "flags", regs[r]);
		CU_ASSERT_EQUAL_FATAL(instrument(&f, 1), 0);
		CU_ASSERT(f.cp.nflags_saved > 0);
		CU_ASSERT_EQUAL_FATAL(decode_copy(&f, &d), 0);
		CU_ASSERT_EQUAL(d.nsave, f.cp.nflags_saved);
		check_saved_sites(&f, &d);
		/* each push a sequence made and not yet undone: 8 more (sp) */
		for (p = 0; p < f.cp.len; p++) {
			int16_t sp = orc_sp_at(&f.cp, p, &reg);

			CU_ASSERT_EQUAL(reg, regs[r]);
			CU_ASSERT_EQUAL(sp, regs[r] == ORC_SP ? 8 + 8 * d.depth[p] : 8);
		}
		decoded_free(&d);
		teardown(&f);
	}
}

/*
 * The ORC layouts of the two kernels: a call frame's type bits are 0 in
 * 6.1's (type:2, ORC_TYPE_CALL 0) and 2 from 6.4 on (type:3,
 * ORC_TYPE_CALL 2). Either way the pushes are accepted and every entry of
 * the copy keeps the type; where the site's entry has another type than
 * the function's first (6.4's REGS, 3), a push is refused.
 */
static void test_orc_layouts(void)
{
	static const uint8_t call_type[2] = { 0, 2 };
	struct fixture f;
	uint32_t t, k;

	for (t = 0; t < 2; t++) {
		setup(&f, flags_src, "flags", ORC_SP);
		f.cp.orc[0].orc[5] = call_type[t];
		CU_ASSERT_EQUAL_FATAL(instrument(&f, 1), 0);
		CU_ASSERT(f.cp.nflags_saved > 0);
		CU_ASSERT(f.cp.norc > 1);
		for (k = 0; k < f.cp.norc; k++)
			CU_ASSERT_EQUAL(f.cp.orc[k].orc[5] & 7, call_type[t]);
		teardown(&f);
	}
	setup(&f, flags_src, "flags", ORC_SP);
	f.cp.orc = realloc(f.cp.orc, 2 * sizeof(*f.cp.orc));
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.cp.orc);
	f.cp.orc[0].orc[5] = 2;
	f.cp.orc[1] = f.cp.orc[0];
	f.cp.orc[1].ip = f.in.addr + 1;
	f.cp.orc[1].orc[5] = 3;
	f.cp.norc = 2;
	CU_ASSERT_EQUAL(instrument(&f, 1), -PT_EREFUSED);
	CU_ASSERT(f.cp.refusal && (!strcmp(f.cp.refusal, "inline-flags-live") ||
				   !strcmp(f.cp.refusal, "inline-no-register")));
	teardown(&f);
}

/*
 * A CFA on another register where a sequence must push (the flags live, or
 * no register dead): refused, whether the increment is a fall-through's or
 * a stub's (each edge counted alone), the flags' sites as inline-flags-live;
 * where nothing is pushed: accepted. Where a register is dead everywhere,
 * nothing is.
 */
static void test_push_refused(void)
{
	struct fixture f;
	uint32_t e, nlive = 0, nok = 0;

	setup(&f, flags_src, "flags", ORC_R10);
	CU_ASSERT_EQUAL(instrument(&f, 1), -PT_EREFUSED);
	CU_ASSERT(f.cp.refusal && (!strcmp(f.cp.refusal, "inline-flags-live") ||
				   !strcmp(f.cp.refusal, "inline-no-register")));
	CU_ASSERT_EQUAL(f.cp.len, f.cp.orig_len);	/* unchanged */
	for (e = 0; e < f.c.nedges; e++) {
		const struct cfg_block *src = &f.c.blocks[f.c.edges[e].src];
		const struct cfg_insn *last = &f.c.insns[src->first_insn + src->ninsn - 1];
		int live = last->kind == CFG_I_JCC && last->addr == f.c.insns[2].addr;
		int err;

		memset(f.edge_counter, 0xff, f.c.nedges * sizeof(*f.edge_counter));
		f.edge_counter[e] = 0;
		f.cp.refusal = NULL;
		err = inline_counters_insert(&f.in, &f.c, &f.cp, f.edge_counter, INLINE_NONE, 1);
		CU_ASSERT(err == 0 || err == -PT_EREFUSED);
		if (live)
			CU_ASSERT(err && !strcmp(f.cp.refusal, "inline-flags-live"));
		if (err && !live)
			CU_ASSERT(!strcmp(f.cp.refusal, "inline-no-register"));
		nlive += live;
		if (!err) {	/* nothing pushed; back to the plain copy for the next edge */
			CU_ASSERT_EQUAL(f.cp.nflags_saved + f.cp.nregs_saved, 0);
			nok++;
			teardown(&f);
			setup(&f, flags_src, "flags", ORC_R10);
		}
	}
	CU_ASSERT_EQUAL(nlive, 2);	/* je's fall-through and taken edges */
	CU_ASSERT(nok > 0);		/* mov $1, %eax: rax is dead before it */
	teardown(&f);
	setup(&f, loop_src, "loop", ORC_R10);	/* rax and rdi live throughout */
	CU_ASSERT_EQUAL(instrument(&f, 1), -PT_EREFUSED);
	CU_ASSERT(f.cp.refusal && !strcmp(f.cp.refusal, "inline-no-register"));
	teardown(&f);
	setup(&f, dead_src, "dead", ORC_R10);
	CU_ASSERT_EQUAL_FATAL(instrument(&f, 1), 0);
	CU_ASSERT_EQUAL(f.cp.nflags_saved + f.cp.nregs_saved, 0);
	check_copy(&f);
	teardown(&f);
}

/*
 * Key sites and a static call under counters: every edge counted. Each key
 * site becomes a 5-byte site in its initial state whose entry names its new
 * place; a counted jump edge goes through a stub (incq, then jmp to the
 * target's new place), the static-call site's entry names its call.
 */
static void test_keys_calls(void)
{
	static const uint8_t code[] = {
		0x0f, 0x1f, 0x44, 0x00, 0x00,		/* 0: __fentry__ */
		0xeb, 0x0a,				/* 5: key1, jmp8 to 0x11 (live: on) */
		0x0f, 0x1f, 0x44, 0x00, 0x00,		/* 7: key2, nop5 to 0x11 (live: off) */
		0xe8, 0x00, 0x10, 0x00, 0x00,		/* c: a static call (to c + 5 + 0x1000) */
		0xc3, 0xcc, 0xcc };
	const uint64_t A = 0xffffffff81000000ull;
	struct cfg_key_site ks[2] = {
		{ .code = A + 5, .target = A + 0x11, .key = 0xffffffff82000100ull, .init_jump = 0 },
		{ .code = A + 7, .target = A + 0x11, .key = 0xffffffff82000200ull, .init_jump = 1 } };
	uint64_t site = A + 0xc, key = 0xffffffff82000300ull;
	struct static_calls sc = { &site, 1, &key };
	struct inline_env env = { &sc, 0xffffffff80000000ull, 0xffffffffc0000000ull };
	struct cfg_input in = { .name = "keys", .addr = A, .code = code, .len = sizeof(code),
				.keys = ks, .nkeys = 2 };
	struct inline_copy cp;
	struct cfg c;
	uint32_t *ctr, e, k, ret_at = 0;
	uint8_t len, save, reg, *depth;

	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, &c), 0);
	static_calls_mark(&sc, &c);
	CU_ASSERT_EQUAL_FATAL(inline_copy_build(&in, &c, &env, &cp), 0);
	cp.orc = calloc(1, sizeof(*cp.orc));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cp.orc);
	cp.orc[0].ip = A;
	orc_set(cp.orc[0].orc, 8, 5);
	cp.norc = 1;
	ctr = calloc(c.nedges + 1, sizeof(*ctr));
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctr);
	for (e = 0; e < c.nedges; e++)
		ctr[e] = e;
	CU_ASSERT_EQUAL_FATAL(inline_counters_insert(&in, &c, &cp, ctr, c.nedges, c.nedges + 1), 0);
	/* the ret's new place: the last 0xc3 before the stubs */
	for (k = 0; k < cp.len; k++)
		if (cp.code[k] == 0xc3)
			ret_at = k;
	depth = calloc(cp.len + 1, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(depth);
	CU_ASSERT_EQUAL_FATAL(cp.nkeys, 2);
	for (k = 0; k < 2; k++) {
		const struct inline_key *ky = &cp.keys[k];
		uint32_t at = (uint32_t)(ky->code - A), t = (uint32_t)(ky->target - A);
		int32_t d;

		CU_ASSERT_EQUAL(ky->len, 5);
		if (ky->init_jump) {
			CU_ASSERT_EQUAL(cp.code[at], 0xe9);
			memcpy(&d, cp.code + at + 1, 4);
			CU_ASSERT_EQUAL(at + 5 + d, t);
		} else {
			CU_ASSERT(!memcmp(cp.code + at, "\x0f\x1f\x44\x00\x00", 5));
		}
		/*
		 * the jump edge is counted: the target is a stub, a sequence then
		 * jmp to the ret's block, whose exit edge's sequence precedes the ret
		 */
		CU_ASSERT_FATAL(seq_at(&cp, t, &len, &save, &reg, depth) >= 0);
		CU_ASSERT_FATAL(t + len + 5 <= cp.len);
		CU_ASSERT_EQUAL(cp.code[t + len], 0xe9);
		memcpy(&d, cp.code + t + len + 1, 4);
		t += len + 5 + d;
		CU_ASSERT_FATAL(t < cp.len && seq_at(&cp, t, &len, &save, &reg, depth) >= 0);
		CU_ASSERT_EQUAL(t + len, ret_at);
	}
	CU_ASSERT_EQUAL(cp.keys[0].init_jump, 0);
	CU_ASSERT_EQUAL(cp.keys[1].init_jump, 1);
	CU_ASSERT_EQUAL_FATAL(cp.ncalls, 1);
	CU_ASSERT_EQUAL(cp.code[cp.calls[0].addr - A], 0xe8);
	free(depth);
	free(ctr);
	inline_copy_free(&cp);
	cfg_free(&c);
}

/*
 * Whether the call at p is a site's: 1 to pt_inline_stage (an INLINE_STAGE
 * relocation), 0 to pt_inline_hit (INLINE_HIT), else -1.
 */
static int site_call_at(const struct inline_copy *cp, uint32_t p)
{
	if (reloc_at(cp, p + 1, INLINE_STAGE))
		return 1;
	return reloc_at(cp, p + 1, INLINE_HIT) ? 0 : -1;
}

/*
 * A probe plan's sites as calls: the copy decoded linearly is the
 * original's instructions in order with a `call pt_inline_hit` (an
 * INLINE_HIT relocation; `call pt_inline_stage`, INLINE_STAGE, for a
 * staged site) right before each site's instruction (a site at
 * the __fentry__ site: before the first instruction after it), a site on a
 * Jcc's fall-through right after the Jcc, one on its taken side in a stub
 * (the call, then a jmp to the target's place); branches reach their
 * targets' instructions past the calls; the address table names every
 * instruction's place and each site's call's return, sorted.
 */
static void test_sites(void)
{
	struct fixture f;
	ZydisDecoder dec;
	struct inline_site sites[16];
	uint32_t nsites = 0, i, k, p, ncalls = 0, njcc = 0, *opos, stub_calls = 0;
	int *site_before;

	setup(&f, loop_src, "loop", ORC_SP);
	for (i = 0; i < f.c.ninsns && nsites < 16; i++) {
		/* every other one staged */
		if (f.c.insns[i].kind == CFG_I_JCC)	/* the first on its taken side, then fall */
			sites[nsites] = (struct inline_site){ f.c.insns[i].addr,
							      njcc++ ? INLINE_FALL : INLINE_TAKEN,
							      nsites % 2 };
		else if (i % 2 == 0)	/* the __fentry__ site among them */
			sites[nsites] = (struct inline_site){ f.c.insns[i].addr, INLINE_AT,
							      nsites % 2 };
		else
			continue;
		nsites++;
	}
	CU_ASSERT_FATAL(njcc >= 2);
	CU_ASSERT_EQUAL_FATAL(inline_sites_insert(&f.in, &f.c, &f.cp, sites, nsites), 0);
	opos = calloc(f.c.ninsns + 1, sizeof(*opos));
	site_before = calloc(f.c.ninsns + 1, sizeof(*site_before));
	CU_ASSERT_FATAL(opos && site_before);
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (p = 0, i = 0; p < f.cp.len;) {
		ZydisDecodedInstruction zn;

		if (depth_at(&f.cp, p)) {	/* the activations' count: test_kept_calls */
			p += depth_len(&f.cp, p);
			continue;
		}
		if (f.cp.code[p] == 0xe8 && site_call_at(&f.cp, p) >= 0) {
			if (i < f.c.ninsns)
				site_before[i]++;
			else	/* a stub: the call, then a jmp */
				stub_calls += f.cp.code[p + 5] == 0xe9;
			ncalls++;
			p += 5;
			continue;
		}
		if (i == f.c.ninsns) {
			CU_ASSERT_EQUAL_FATAL(f.cp.code[p], 0xe9);
			p += 5;
			continue;
		}
		CU_ASSERT_FATAL(ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, f.cp.code + p,
									    f.cp.len - p, &zn)));
		if (f.c.insns[i].kind != CFG_I_JCC && f.c.insns[i].kind != CFG_I_JMP)
			CU_ASSERT(zn.length == f.c.insns[i].len &&
				  !memcmp(f.cp.code + p, f.in.code + (f.c.insns[i].addr - f.in.addr),
					  zn.length));
		opos[i++] = p;
		p += zn.length;
	}
	CU_ASSERT_EQUAL(i, f.c.ninsns);
	CU_ASSERT_EQUAL(ncalls, nsites);
	CU_ASSERT_EQUAL(stub_calls, 1);
	/* every site's call where it says */
	for (k = 0; k < nsites; k++) {
		uint32_t j = 0;

		while (f.c.insns[j].addr != sites[k].addr)
			j++;
		if (sites[k].edge == INLINE_TAKEN) {
			uint32_t t = rel_target(&f.cp, opos[j], 6);

			CU_ASSERT(f.cp.code[t] == 0xe8 && site_call_at(&f.cp, t) == sites[k].staged);
			continue;
		}
		if (sites[k].edge == INLINE_FALL || f.c.insns[j].kind == CFG_I_FENTRY)
			j++;
		CU_ASSERT_EQUAL(site_before[j], 1);
		p = opos[j] - 5 - dec_before(&f.cp, opos[j]);
		CU_ASSERT(f.cp.code[p] == 0xe8 && site_call_at(&f.cp, p) == sites[k].staged);
	}
	/* branches: past the calls, to the original target's instruction */
	for (i = 0; i < f.c.ninsns; i++) {
		uint32_t t, j;

		if (f.c.insns[i].kind != CFG_I_JCC && f.c.insns[i].kind != CFG_I_JMP)
			continue;
		t = rel_target(&f.cp, opos[i], f.c.insns[i].kind == CFG_I_JCC ? 6 : 5);
		if (t > opos[f.c.ninsns - 1])	/* the stub: its call, then a jmp */
			t = rel_target(&f.cp, t + 5, 5);
		for (j = 0; j < f.c.ninsns && f.c.insns[j].addr != f.c.insns[i].target; j++)
			;
		CU_ASSERT_FATAL(j < f.c.ninsns);
		p = dec_before(&f.cp, opos[j]);
		CU_ASSERT(t + p == opos[j] || (t + 5 + p == opos[j] && site_before[j] &&
					       f.c.insns[j - 1].kind != CFG_I_JCC));
	}
	/* the table: each instruction's place, each site's return */
	for (i = 0; i < f.c.ninsns; i++) {
		int found = 0;

		for (k = 0; k < f.cp.naddrs; k++)
			found |= f.cp.addrs[k].copy == opos[i] && !f.cp.addrs[k].site &&
				 f.cp.addrs[k].orig == f.c.insns[i].addr;
		CU_ASSERT(found);
	}
	for (k = 0, p = 0; k < f.cp.naddrs; k++) {
		if (!f.cp.addrs[k].site)
			continue;
		p++;
		CU_ASSERT(f.cp.code[f.cp.addrs[k].copy - 5] == 0xe8);
		for (i = 0; i < nsites && sites[i].addr != f.cp.addrs[k].orig; i++)
			;
		CU_ASSERT(i < nsites);
	}
	CU_ASSERT_EQUAL(p, nsites);
	for (k = 1; k < f.cp.naddrs; k++)
		CU_ASSERT(f.cp.addrs[k - 1].copy <= f.cp.addrs[k].copy);
	free(opos);
	free(site_before);
	teardown(&f);
}

/*
 * The count up right before the first body instruction (at body) and down
 * right before the ret (at ret), each with the slot of its depth: the up's
 * push of the word moves the CFA by 8 until its pop (an sp-based ORC), and
 * both use the one register they save where it is not dead.
 */
static void check_counts(const struct inline_copy *cp, uint32_t body, uint32_t ret)
{
	struct count_seq up, down;
	uint32_t n = count_before(cp, body, 1), m = count_before(cp, ret, -1);
	int16_t base;
	uint8_t reg;
	int saves;

	CU_ASSERT_FATAL(n && m);
	count_at(cp, body - n, &up);
	count_at(cp, ret - m, &down);
	base = orc_sp_at(cp, body - n, &reg);
	CU_ASSERT_EQUAL(reg, ORC_SP);
	saves = up.save + (up.pushed >= 0);
	CU_ASSERT_EQUAL(orc_sp_at(cp, up.push_end - 1, &reg), base + 8 * saves);
	CU_ASSERT_EQUAL(orc_sp_at(cp, up.push_end, &reg), base + 8 * (saves + 1));
	CU_ASSERT_EQUAL(orc_sp_at(cp, up.pop_end, &reg), base + 8 * saves);
	CU_ASSERT_EQUAL(orc_sp_at(cp, body, &reg), base);
	CU_ASSERT_EQUAL(orc_sp_at(cp, ret, &reg), orc_sp_at(cp, ret - m, &reg));
	CU_ASSERT(down.reg != ZYDIS_REGISTER_RAX || down.pushed >= 0);	/* rax: the return value */
}

/*
 * The frames copies keep (docs/inline.md, "Frames the copies keep"): right
 * before each call that returns, after a site's call there, `mov %rsp,
 * %gs:pt_inline_frame(%rip)`; where it returns, before anything else, `movq
 * $0, %gs:pt_inline_frame(%rip)`; both a PC32 against pt_inline_frame
 * (INLINE_FRAME) with the addend of their field's distance from the end. The
 * call's return address stands for the next instruction, a branch to that
 * instruction lands past the clear (before the site's call and the store
 * of the call there), and the site's call returns to the store.
 */
static void test_kept_calls(void)
{
	struct fixture f;
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct inline_site site;
	uint32_t i, k, p, ncalls = 0, ndepth = 0, *opos;
	const struct inline_reloc *r;

	setup(&f, calls_src, "calls", ORC_SP);
	for (i = 0; i < f.c.ninsns && f.c.insns[i].kind != CFG_I_CALL_INDIRECT; i++)
		;
	CU_ASSERT_FATAL(i < f.c.ninsns);
	site = (struct inline_site){ f.c.insns[i].addr, INLINE_AT, 0 };
	CU_ASSERT_EQUAL_FATAL(inline_sites_insert(&f.in, &f.c, &f.cp, &site, 1), 0);
	CU_ASSERT_EQUAL(f.cp.nkept_calls, 2);
	opos = calloc(f.c.ninsns + 1, sizeof(*opos));
	CU_ASSERT_PTR_NOT_NULL_FATAL(opos);
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (p = 0, i = 0; p < f.cp.len && i < f.c.ninsns;) {
		const struct cfg_insn *ci = &f.c.insns[i];
		int call = ci->kind == CFG_I_CALL || ci->kind == CFG_I_CALL_INDIRECT;

		if (depth_at(&f.cp, p)) {	/* up at the entry, down at the ret: below */
			ndepth++;
			p += depth_len(&f.cp, p);
			continue;
		}
		if (f.cp.code[p] == 0xe8 && reloc_at(&f.cp, p + 1, INLINE_HIT)) {
			CU_ASSERT_EQUAL(ci->addr, site.addr);
			p += 5;
			continue;
		}
		if (call) {	/* the store: gs, RIP-relative, from rsp */
			CU_ASSERT_FATAL(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, f.cp.code + p,
									     f.cp.len - p, &zi, ops)));
			CU_ASSERT(zi.mnemonic == ZYDIS_MNEMONIC_MOV && zi.length == 8 &&
				  ops[0].mem.segment == ZYDIS_REGISTER_GS &&
				  ops[0].mem.base == ZYDIS_REGISTER_RIP &&
				  ops[1].reg.value == ZYDIS_REGISTER_RSP);
			r = reloc_at(&f.cp, p + 4, INLINE_FRAME);
			CU_ASSERT(r && r->type == R_X86_64_PC32 && r->addend == -4);
			p += zi.length;
		}
		CU_ASSERT_FATAL(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, f.cp.code + p,
								     f.cp.len - p, &zi, ops)));
		opos[i] = p;
		p += zi.length;
		if (call) {	/* the clear where it returns: gs, RIP-relative, 0 */
			ncalls++;
			CU_ASSERT_FATAL(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, f.cp.code + p,
									     f.cp.len - p, &zi, ops)));
			CU_ASSERT(zi.mnemonic == ZYDIS_MNEMONIC_MOV && zi.length == 12 &&
				  ops[0].mem.segment == ZYDIS_REGISTER_GS &&
				  ops[0].mem.base == ZYDIS_REGISTER_RIP &&
				  ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && !ops[1].imm.value.u);
			r = reloc_at(&f.cp, p + 4, INLINE_FRAME);
			CU_ASSERT(r && r->type == R_X86_64_PC32 && r->addend == -8);
			/* the return address stands for the next instruction */
			for (k = 0; k < f.cp.naddrs && (f.cp.addrs[k].copy != opos[i] + ci->len ||
							f.cp.addrs[k].site); k++)
				;
			CU_ASSERT(k < f.cp.naddrs && f.cp.addrs[k].orig == f.c.insns[i + 1].addr);
			p += zi.length;
		}
		i++;
	}
	CU_ASSERT_EQUAL(i, f.c.ninsns);
	CU_ASSERT_EQUAL(ncalls, 2);
	/* the activation counts itself after the __fentry__ site and uncounts at its ret */
	CU_ASSERT_EQUAL(ndepth, 2);
	CU_ASSERT_EQUAL(f.c.insns[0].kind, CFG_I_FENTRY);
	check_counts(&f.cp, opos[1], opos[f.c.ninsns - 1]);
	CU_ASSERT_EQUAL(f.c.insns[f.c.ninsns - 1].kind, CFG_I_RET);
	for (i = 0; i < f.c.ninsns; i++) {
		if (f.c.insns[i].kind == CFG_I_JCC)	/* past the clear, to the site's call */
			CU_ASSERT(rel_target(&f.cp, opos[i], 6) == opos[i + 2] - 8 - 5);
		if (f.c.insns[i].addr != site.addr)
			continue;
		/* the site's call returns to the store */
		for (k = 0; k < f.cp.naddrs && !f.cp.addrs[k].site; k++)
			;
		CU_ASSERT(k < f.cp.naddrs && f.cp.addrs[k].copy == opos[i] - 8 &&
			  f.cp.addrs[k].orig == site.addr);
	}
	free(opos);
	teardown(&f);
}

/*
 * A conditional tail call uncounts its activation on the way out: the jne
 * goes to a stub, `decl %gs:pt_inline_depth(%rip)` (and its jns over the
 * clear of pt_inline_depth_known) then a jmp that carries
 * the jne's relocation to the outside target; the fall-through path
 * uncounts before its ret, once.
 */
static void test_depth_tail(void)
{
	struct fixture f;
	uint32_t i, p, jcc = UINT32_MAX, ret = UINT32_MAX, t;
	const struct inline_reloc *r;
	struct count_seq q;

	setup(&f, tail_src, "tail", ORC_SP);
	CU_ASSERT_EQUAL_FATAL(inline_sites_insert(&f.in, &f.c, &f.cp, NULL, 0), 0);
	for (i = 0, p = 0; i < f.c.ninsns; i++)
		if (f.c.insns[i].kind == CFG_I_JCC)
			jcc = i;
	CU_ASSERT_FATAL(jcc != UINT32_MAX && (f.c.insns[jcc].flags & CFG_IF_LEAVES));
	/* the copy from the start: nop5, the count up, test, jne rel32 to the stub */
	CU_ASSERT_EQUAL_FATAL(depth_at(&f.cp, 5), 1);
	p = 5 + depth_len(&f.cp, 5) + 2;
	CU_ASSERT_FATAL(f.cp.code[p] == 0x0f && f.cp.code[p + 1] == 0x85);
	t = rel_target(&f.cp, p, 6);
	/* the stub: the count down (everything live on the way out: a register pushed) */
	CU_ASSERT_EQUAL_FATAL(count_at(&f.cp, t, &q), -1);
	CU_ASSERT(q.pushed >= 0);
	t += q.len;	/* past it, to the jmp */
	CU_ASSERT_FATAL(t + 5 <= f.cp.len);
	CU_ASSERT_EQUAL(f.cp.code[t], 0xe9);
	for (i = 0, r = NULL; i < f.cp.nrelocs; i++)	/* the jne's, on the jmp */
		if (f.cp.relocs[i].off == t + 1)
			r = &f.cp.relocs[i];
	CU_ASSERT(r && r->addend == -4 && r->target == f.in.addr + f.in.len);
	/* the fall-through: xor, the count down, ret */
	for (p += 6, i = 0; p < t; p++)
		if (f.cp.code[p] == 0xc3 && dec_before(&f.cp, p))
			ret = p;
	CU_ASSERT_FATAL(ret != UINT32_MAX);
	teardown(&f);
}

UNIT_SUITE(inline_counters,
	   { "the copy is the original's stream; every path counts each edge once",
	     test_stream_and_paths },
	   { "flags live: pushf/popf, the ORC CFA moves by 8 between them (sp), not at all (bp)",
	     test_flags_live_orc },
	   { "a push where the CFA is on another register: inline-flags-live, inline-no-register",
	     test_push_refused },
	   { "6.1's and 6.4's ORC layouts: a call frame's type as the function's first entry's",
	     test_orc_layouts },
	   { "key sites and a static call move with their instructions, jump edges through stubs",
	     test_keys_calls },
	   { "a probe plan's sites as calls before their instructions; the address table",
	     test_sites },
	   { "a call that returns keeps its frame: a store before it, a clear where it returns",
	     test_kept_calls },
	   { "a conditional tail call uncounts its activation in a stub on the taken side",
	     test_depth_tail })
