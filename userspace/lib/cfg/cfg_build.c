// SPDX-License-Identifier: GPL-2.0
/*
 * cfg_build - recover one function's CFG from its machine code.
 *
 * Recursive traversal from the entry (not a linear sweep): only reachable
 * code is decoded, so padding, int3 after returns and dead code never
 * become blocks. Every byte remembers the instruction that covers it, which
 * is how a jump into the middle of an instruction is caught whichever of
 * the two is decoded first. Decoding is Zydis'; the kind of each
 * instruction comes from its mnemonic and the names the caller provides.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <pathtrace/cfg.h>
#include <pathtrace/error.h>
#include <pathtrace/kprobe_boost.h>

#define CFG_MAX_PART (16u << 20)	/* larger parts are refused, not decoded */
/*
 * Returns go through __x86_return_thunk, which live code may have patched
 * to a mitigation's thunk (retbleed_return_thunk, srso_return_thunk,
 * srso_alias_return_thunk, its_return_thunk, ...): all end "return_thunk".
 * Indirect branches go through __x86_indirect_thunk_<reg> (or an ITS
 * variant, __x86_indirect_its_thunk_<reg>).
 */
#define INDIRECT_THUNK "__x86_indirect_"
/* The padding before a function (CONFIG_PREFIX_SYMBOLS): __pfx_NAME. */
#define PADDING_PREFIX "__pfx_"

struct part {
	uint64_t addr;
	const uint8_t *code;
	uint32_t len;
	int32_t *owner;		/* per byte: index of the instruction covering it, or -1 */
};

struct builder {
	const struct cfg_input *in;
	struct cfg *c;
	ZydisDecoder dec;
	struct part part[2];
	struct cfg_insn *insns;	/* in discovery order */
	uint32_t ninsns, cap_insns;
	uint64_t *work;
	uint32_t nwork, cap_work;
	uint64_t first_ijmp;	/* first indirect jmp taken as a tail call, or 0 */
	uint64_t taken_at;	/* an instruction taking an address inside, or 0 */
	uint64_t taken;		/* the address it takes */
};

static int refuse(struct builder *b, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Why an indirect jmp is not known to leave, for a refusal's detail. */
static const char *ijmp_unproven(const struct cfg_input *in)
{
	return in->ijmp_unproven ? in->ijmp_unproven :
	       "the source cannot prove it leaves the function";
}

static int refuse(struct builder *b, const char *tag, const char *fmt, ...)
{
	va_list ap;

	b->c->refusal = tag;
	va_start(ap, fmt);
	vsnprintf(b->c->detail, sizeof(b->c->detail), fmt, ap);
	va_end(ap);
	return -PT_EREFUSED;
}

static int part_of(const struct builder *b, uint64_t addr)
{
	int p;

	for (p = 0; p < 2; p++)
		if (b->part[p].len && addr >= b->part[p].addr &&
		    addr - b->part[p].addr < b->part[p].len)
			return p;
	return -1;
}

/* "name+0xoff" or "name.cold+0xoff" for details. */
static const char *where(const struct builder *b, uint64_t addr, char *buf, size_t n)
{
	int p = part_of(b, addr);
	const char *name = b->in->name ? b->in->name : "?";

	if (p < 0)
		snprintf(buf, n, "0x%" PRIx64, addr);
	else
		snprintf(buf, n, "%s%s+0x%" PRIx64, name, p ? ".cold" : "",
			 addr - b->part[p].addr);
	return buf;
}

/* Up to 8 code bytes in hex, for details. */
static const char *hexbytes(const uint8_t *p, uint32_t n, char *buf)
{
	uint32_t i;

	if (n > 8)
		n = 8;
	buf[0] = 0;
	for (i = 0; i < n; i++)
		sprintf(buf + (i ? 3 * i - 1 : 0), i ? " %02x" : "%02x", p[i]);
	return buf;
}

/*
 * The instruction at addr materialises ref: if that is an address inside
 * the function (its entry aside: a jmp there is a call of it), remember the
 * first such instruction.
 */
static void note_taken(struct builder *b, uint64_t addr, uint64_t ref)
{
	if (!b->taken_at && ref != b->in->addr && part_of(b, ref) >= 0) {
		b->taken_at = addr;
		b->taken = ref;
	}
}

static int push_work(struct builder *b, uint64_t addr)
{
	if (b->nwork == b->cap_work) {
		uint32_t ncap = b->cap_work ? 2 * b->cap_work : 64;
		uint64_t *nw = realloc(b->work, ncap * sizeof(*nw));

		if (!nw)
			return -PT_ENOMEM;
		b->work = nw;
		b->cap_work = ncap;
	}
	b->work[b->nwork++] = addr;
	return 0;
}

static int cc_of(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_JO: return 0x0;
	case ZYDIS_MNEMONIC_JNO: return 0x1;
	case ZYDIS_MNEMONIC_JB: return 0x2;
	case ZYDIS_MNEMONIC_JNB: return 0x3;
	case ZYDIS_MNEMONIC_JZ: return 0x4;
	case ZYDIS_MNEMONIC_JNZ: return 0x5;
	case ZYDIS_MNEMONIC_JBE: return 0x6;
	case ZYDIS_MNEMONIC_JNBE: return 0x7;
	case ZYDIS_MNEMONIC_JS: return 0x8;
	case ZYDIS_MNEMONIC_JNS: return 0x9;
	case ZYDIS_MNEMONIC_JP: return 0xa;
	case ZYDIS_MNEMONIC_JNP: return 0xb;
	case ZYDIS_MNEMONIC_JL: return 0xc;
	case ZYDIS_MNEMONIC_JNL: return 0xd;
	case ZYDIS_MNEMONIC_JLE: return 0xe;
	case ZYDIS_MNEMONIC_JNLE: return 0xf;
	default: return -1;
	}
}

static const struct cfg_key_site *key_at(const struct cfg_input *in, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < in->nkeys; i++)
		if (in->keys[i].code == addr)
			return &in->keys[i];
	return NULL;
}

static const struct cfg_fixup *fixup_at(const struct cfg_input *in, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < in->nfixups; i++)
		if (in->fixups[i].insn == addr)
			return &in->fixups[i];
	return NULL;
}

static int warn_at(const struct cfg_input *in, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < in->nbugs; i++)
		if (in->bugs[i].addr == addr)
			return in->bugs[i].warning;
	/*
	 * A ud2 without a bug-table entry is not a WARN: handle_bug() finds
	 * no entry and the trap dies (oops), so the path ends.
	 */
	return 0;
}

static int is_nop5(const uint8_t *p)
{
	return p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x44 && p[3] == 0 && p[4] == 0;
}

/*
 * The 4 bytes the kernel's is_endbr() takes for an ENDBR: endbr64, endbr32,
 * or the poison apply_seal_endbr writes over one no indirect call uses
 * (Debian's 6.12 seals them even where the CPU has no IBT, as under QEMU
 * TCG): "osp nopl (%rax)", or "nopl -42(%rax)" in kernels before it.
 */
static int is_endbr(const uint8_t *p)
{
	return (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && (p[3] == 0xfa || p[3] == 0xfb)) ||
	       (p[0] == 0x66 && p[1] == 0x0f && p[2] == 0x1f && p[3] == 0x00) ||
	       (p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x40 && p[3] == 0xd6);
}

/*
 * Where the function's __fentry__ site would be: at its entry, or after
 * the ENDBR that starts it under CONFIG_X86_KERNEL_IBT (Debian's 6.12).
 */
static uint64_t fentry_site(const struct builder *b)
{
	const struct part *p = &b->part[0];

	if (p->addr == b->in->addr && p->len >= 9 && is_endbr(p->code))
		return p->addr + 4;
	return b->in->addr;
}

/* A plain direct call or jmp's destination: from its relocation or its displacement. */
static int branch_dest(struct builder *b, const ZydisDecodedInstruction *zi,
		       const ZydisDecodedOperand *op, uint64_t addr, uint64_t *target,
		       const char **name)
{
	const struct cfg_names *nm = &b->in->names;
	char w[96];
	ZyanU64 t = 0;
	int rc = 0;

	*target = 0;
	*name = NULL;
	if (nm->branch_reloc)
		rc = nm->branch_reloc(nm->ctx, addr, zi->length, target, name);
	if (rc < 0)
		return refuse(b, "bad-reloc", "%s: unsupported relocation on a branch",
			      where(b, addr, w, sizeof(w)));
	if (rc == 0) {
		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, op, addr, &t)))
			return refuse(b, "undecodable", "%s: no branch target",
				      where(b, addr, w, sizeof(w)));
		*target = t;
	} else if (!*target && !*name) {
		return refuse(b, "bad-reloc", "%s: relocation names nothing",
			      where(b, addr, w, sizeof(w)));
	}
	if (*target && part_of(b, *target) < 0 && !*name && nm->name_at)
		*name = nm->name_at(nm->ctx, *target);
	return 0;
}

static int add_insn(struct builder *b, const struct cfg_insn *ins)
{
	struct part *p = &b->part[part_of(b, ins->addr)];
	uint32_t i, off = ins->addr - p->addr;

	if (b->ninsns == b->cap_insns) {
		uint32_t ncap = b->cap_insns ? 2 * b->cap_insns : 64;
		struct cfg_insn *n = realloc(b->insns, ncap * sizeof(*n));

		if (!n)
			return -PT_ENOMEM;
		b->insns = n;
		b->cap_insns = ncap;
	}
	b->insns[b->ninsns] = *ins;
	for (i = 0; i < ins->len; i++)
		p->owner[off + i] = b->ninsns;
	b->ninsns++;
	return 0;
}

/*
 * Whether everything from off to the end of part p is padding: int3 or
 * nop instructions, none of them decoded as code already.
 */
static int only_padding(struct builder *b, const struct part *p, uint32_t off)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	while (off < p->len) {
		if (p->owner[off] >= 0 || p->code[off] != 0xcc) {
			if (p->owner[off] >= 0 ||
			    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&b->dec, p->code + off, p->len - off,
								 &zi, ops)) ||
			    zi.mnemonic != ZYDIS_MNEMONIC_NOP)
				return 0;
			off += zi.length;
			continue;
		}
		off++;
	}
	return 1;
}

/* One instruction as decode_one classifies it. */
struct decoded {
	uint64_t addr;
	int pi;			/* its part */
	struct part *p;
	uint32_t off;		/* in its part */
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct cfg_insn ins;	/* what it becomes */
	int fall;		/* execution continues after it */
};

static const char *mnemonic(const struct decoded *d)
{
	return ZydisMnemonicGetString(d->zi.mnemonic);
}

/*
 * Zydis' decoding of the instruction at d->addr, refused when it crosses
 * the end of its part, does not decode or overlaps one decoded before.
 */
static int decode_insn(struct builder *b, struct decoded *d)
{
	const struct part *p = d->p;
	char w[96], hx[32];
	ZyanStatus st;
	uint32_t i;

	st = ZydisDecoderDecodeFull(&b->dec, p->code + d->off, p->len - d->off, &d->zi, d->ops);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return refuse(b, "runs-off-end", "%s: instruction %s... crosses the end",
			      where(b, d->addr, w, sizeof(w)),
			      hexbytes(p->code + d->off, p->len - d->off, hx));
	if (!ZYAN_SUCCESS(st))
		return refuse(b, "undecodable", "%s: cannot decode %s",
			      where(b, d->addr, w, sizeof(w)),
			      hexbytes(p->code + d->off, p->len - d->off, hx));
	for (i = 0; i < d->zi.length; i++)
		if (p->owner[d->off + i] >= 0)
			return refuse(b, "mid-insn-target",
				      "%s: %s overlaps the instruction at %s",
				      where(b, d->addr, w, sizeof(w)), mnemonic(d),
				      where(b, b->insns[p->owner[d->off + i]].addr, hx, sizeof(hx)));
	return 0;
}

/*
 * Marks RIP-relative operands, and notes an address inside the function
 * that d's operands take (note_taken): a computed-goto label, after which
 * an indirect jmp may land inside and is no tail call.
 */
static void note_operands(struct builder *b, struct decoded *d)
{
	const struct cfg_names *nm = &b->in->names;
	const ZydisDecodedOperand *ops = d->ops;
	const char *name;
	uint64_t target;
	uint32_t i;

	for (i = 0; i < d->zi.operand_count_visible; i++) {
		ZyanU64 ref;

		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY || ops[i].mem.base != ZYDIS_REGISTER_RIP)
			continue;
		d->ins.flags |= CFG_IF_RIP_RELATIVE;
		/* an unrelocated RIP-relative reference into the function */
		if ((!nm->branch_reloc ||
		     !nm->branch_reloc(nm->ctx, d->addr, d->zi.length, &target, &name)) &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d->zi, &ops[i], d->addr, &ref)))
			note_taken(b, d->addr, ref);
	}
	for (i = 0; i < d->zi.operand_count_visible; i++) {
		/* The same for an absolute address as an immediate (mov $label, %reg). */
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && !ops[i].imm.is_relative)
			note_taken(b, d->addr, ops[i].imm.is_signed ? (uint64_t)ops[i].imm.value.s :
				   ops[i].imm.value.u);
		/*
		 * And as a displacement (lea label(,%rdi,8), mov table(%rax)):
		 * non-PIC code may address its own bytes that way. Only
		 * kernel-half values: in a .ko's unrelocated code a small
		 * displacement could match a section offset, and a relocated
		 * one is taken_inside's to find.
		 */
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.base != ZYDIS_REGISTER_RIP &&
		    ops[i].mem.disp.has_displacement && ops[i].mem.disp.value < 0)
			note_taken(b, d->addr, (uint64_t)ops[i].mem.disp.value);
	}
}

/* A static key site: a 2- or 5-byte jmp to the key's target, or a nop. */
static int classify_key(struct builder *b, struct decoded *d, const struct cfg_key_site *key)
{
	int is_jmp = d->zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
		     d->ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	int is_nop = d->zi.mnemonic == ZYDIS_MNEMONIC_NOP;
	const char *name;
	uint64_t target;
	char w[96];
	int err;

	if ((!is_jmp && !is_nop) || (d->zi.length != 2 && d->zi.length != 5))
		return refuse(b, "bad-static-key", "%s: key site is %s (%u bytes)",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d), d->zi.length);
	if (part_of(b, key->target) < 0)
		return refuse(b, "bad-static-key", "%s: key target 0x%" PRIx64
			      " outside the function", where(b, d->addr, w, sizeof(w)),
			      key->target);
	if (is_jmp) {
		err = branch_dest(b, &d->zi, &d->ops[0], d->addr, &target, &name);
		if (err)
			return err;
		if (target != key->target)
			return refuse(b, "bad-static-key",
				      "%s: jmp to 0x%" PRIx64 " but key target 0x%" PRIx64,
				      where(b, d->addr, w, sizeof(w)), target, key->target);
	}
	d->ins.kind = CFG_I_KEY;
	d->ins.target = key->target;
	d->ins.flags |= CFG_IF_OPTPROBE_UNSAFE;
	d->ins.cc = is_jmp ? CFG_KEY_ON : 0;
	return push_work(b, key->target);
}

static int is_indirect_thunk(const char *name)
{
	return !strncmp(name, INDIRECT_THUNK, strlen(INDIRECT_THUNK));
}

/* An indirect jmp the source proves leaves (in->indirect_jumps_leave): a tail call. */
static void indirect_tail_call(struct builder *b, const struct decoded *d)
{
	if (!b->first_ijmp)
		b->first_ijmp = d->addr;
}

/*
 * A jmp: inside the function, a jump; out of it, a tail call (an
 * indirect one through a thunk, if the source proves those leave) or a
 * return through the return thunk.
 */
static int classify_jmp(struct builder *b, struct decoded *d)
{
	const struct cfg_input *in = b->in;
	const char *name;
	uint64_t target;
	char w[96], hx[32];
	int err;

	d->fall = 0;
	if (d->zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return refuse(b, "special-control", "%s: far jmp", where(b, d->addr, w, sizeof(w)));
	if (d->ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		if (!in->indirect_jumps_leave)
			return refuse(b, "indirect-jump", "%s: jmp through %s [%s] (%s)",
				      where(b, d->addr, w, sizeof(w)),
				      d->ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER ?
				      "a register" : "memory",
				      hexbytes(d->p->code + d->off, d->zi.length, hx),
				      ijmp_unproven(in));
		d->ins.kind = CFG_I_TAIL_CALL;
		indirect_tail_call(b, d);
		return 0;
	}
	err = branch_dest(b, &d->zi, &d->ops[0], d->addr, &target, &name);
	if (err)
		return err;
	if (part_of(b, target) >= 0) {
		d->ins.kind = CFG_I_JMP;
		d->ins.target = target;
		return push_work(b, target);
	}
	if (!name)
		return refuse(b, "jump-outside", "%s: jmp to 0x%" PRIx64
			      ", not a function", where(b, d->addr, w, sizeof(w)), target);
	if (is_indirect_thunk(name)) {
		if (!in->indirect_jumps_leave)
			return refuse(b, "indirect-jump", "%s: jmp %s (%s)",
				      where(b, d->addr, w, sizeof(w)), name, ijmp_unproven(in));
		target = 0;	/* an indirect tail call */
		indirect_tail_call(b, d);
	}
	if (!strcmp(name, "kprobe_optinsn_page") || !strcmp(name, "kprobe_insn_page"))
		return refuse(b, "kprobe-present", "%s: jmp %s (an optimized kprobe "
			      "patched this code)", where(b, d->addr, w, sizeof(w)), name);
	if (!strncmp(name, PADDING_PREFIX, strlen(PADDING_PREFIX)))
		return refuse(b, "call-depth", "%s: jmp %s (call-depth accounting in the "
			      "callee's padding: not modelled)", where(b, d->addr, w, sizeof(w)),
			      name);
	d->ins.kind = cfg_is_return_thunk(name) ? CFG_I_RET : CFG_I_TAIL_CALL;
	d->ins.target = target;
	d->ins.target_name = name;
	return 0;
}

/*
 * A call: the fentry call at the entry, an indirect call (through a
 * register, memory or a thunk), a call that never returns (by the
 * source's names) or a plain call; recursion targets the entry.
 */
static int classify_call(struct builder *b, struct decoded *d)
{
	const struct cfg_input *in = b->in;
	const struct cfg_names *nm = &in->names;
	const char *name;
	uint64_t target;
	char w[96];
	int err;

	if (d->zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return refuse(b, "special-control", "%s: far call", where(b, d->addr, w, sizeof(w)));
	if (d->ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		d->ins.kind = CFG_I_CALL_INDIRECT;
		return 0;
	}
	err = branch_dest(b, &d->zi, &d->ops[0], d->addr, &target, &name);
	if (err)
		return err;
	/*
	 * Call-depth tracking (retbleed=stuff) makes calls enter their
	 * callee through accounting code in its padding: which function
	 * that enters, and when, is not modelled.
	 */
	if (name && !strncmp(name, PADDING_PREFIX, strlen(PADDING_PREFIX)))
		return refuse(b, "call-depth", "%s: call %s (call-depth accounting in the "
			      "callee's padding: not modelled)", where(b, d->addr, w, sizeof(w)),
			      name);
	/* A recursive call targets the entry; anything else inside is not a call. */
	if (part_of(b, target) >= 0 && target != in->addr)
		return refuse(b, "special-control", "%s: call into the function's body",
			      where(b, d->addr, w, sizeof(w)));
	d->ins.target = target;
	d->ins.target_name = name ? name : (target == in->addr ? in->name : NULL);
	if (d->addr == fentry_site(b) && d->zi.length == 5 &&
	    (!name || !strcmp(name, "__fentry__") || !strncmp(name, "ftrace_", 7))) {
		d->ins.kind = CFG_I_FENTRY;
	} else if (name && is_indirect_thunk(name)) {
		d->ins.kind = CFG_I_CALL_INDIRECT;
		d->ins.target = 0;
	} else if (name && nm->is_noreturn && nm->is_noreturn(nm->ctx, name)) {
		d->ins.kind = CFG_I_CALL_NORETURN;
		d->fall = 0;
	} else {
		d->ins.kind = CFG_I_CALL;
	}
	return 0;
}

/*
 * A conditional jump (condition code cc): inside the function, a branch;
 * out of it, a conditional tail call (CFG_IF_LEAVES) to a named function.
 */
static int classify_jcc(struct builder *b, struct decoded *d, int cc)
{
	const struct cfg_input *in = b->in;
	const char *name;
	uint64_t target;
	char w[96];
	int err;

	err = branch_dest(b, &d->zi, &d->ops[0], d->addr, &target, &name);
	if (err)
		return err;
	d->ins.kind = CFG_I_JCC;
	d->ins.cc = cc;
	d->ins.target = target;
	if (part_of(b, target) >= 0)
		return push_work(b, target);
	if (!name)
		return refuse(b, "jump-outside", "%s: %s to 0x%" PRIx64 ", not a function",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d), target);
	if (is_indirect_thunk(name) && !in->indirect_jumps_leave)
		return refuse(b, "indirect-jump", "%s: %s %s (%s)",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d), name,
			      ijmp_unproven(in));
	d->ins.flags |= CFG_IF_LEAVES;
	d->ins.target_name = name;
	if (is_indirect_thunk(name))
		indirect_tail_call(b, d);
	return 0;
}

/*
 * Any other instruction: plain, unless it transfers control in a way a
 * CFG cannot follow (interrupts, system calls, transactions, VM entry).
 */
static int classify_plain(struct builder *b, const struct decoded *d)
{
	char w[96];

	switch (d->zi.meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
		return refuse(b, "special-control", "%s: %s", where(b, d->addr, w, sizeof(w)),
			      mnemonic(d));
	default:
		break;
	}
	/* These do not continue at the next instruction (vmread and the like do). */
	if (d->zi.mnemonic == ZYDIS_MNEMONIC_XBEGIN ||
	    d->zi.mnemonic == ZYDIS_MNEMONIC_VMLAUNCH ||
	    d->zi.mnemonic == ZYDIS_MNEMONIC_VMRESUME)
		return refuse(b, "special-control", "%s: %s", where(b, d->addr, w, sizeof(w)),
			      mnemonic(d));
	return 0;
}

/* d's kind (and target, flags) by its mnemonic; d->fall whether it falls through. */
static int classify(struct builder *b, struct decoded *d)
{
	const struct cfg_input *in = b->in;
	char w[96];
	int cc;

	switch (d->zi.mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		return classify_jmp(b, d);
	case ZYDIS_MNEMONIC_CALL:
		return classify_call(b, d);
	case ZYDIS_MNEMONIC_RET:
		if (d->zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return refuse(b, "special-control", "%s: far ret",
				      where(b, d->addr, w, sizeof(w)));
		d->ins.kind = CFG_I_RET;
		d->fall = 0;
		return 0;
	case ZYDIS_MNEMONIC_UD2:
		d->ins.kind = warn_at(in, d->addr) ? CFG_I_WARN : CFG_I_BUG;
		d->fall = d->ins.kind == CFG_I_WARN;
		return 0;
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
		/* Only ud2 is a bug trap in 6.1 (is_valid_bugaddr): these die. */
		d->ins.kind = CFG_I_BUG;
		d->fall = 0;
		return 0;
	case ZYDIS_MNEMONIC_INT3:
		return refuse(b, "int3-reached", "%s: execution reaches int3 (a breakpoint, "
			      "or a call before it that never returns)",
			      where(b, d->addr, w, sizeof(w)));
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return refuse(b, "loop-insn", "%s: %s branches on rcx, not flags",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d));
	case ZYDIS_MNEMONIC_NOP:
		if (d->addr == fentry_site(b) && d->zi.length == 5 && is_nop5(d->p->code + d->off))
			d->ins.kind = CFG_I_FENTRY;
		return 0;
	default:
		cc = cc_of(d->zi.mnemonic);
		return cc < 0 ? classify_plain(b, d) : classify_jcc(b, d, cc);
	}
}

/* An exception fixup elsewhere than the next instruction: d may continue there. */
static int add_fixup(struct builder *b, struct decoded *d)
{
	const struct cfg_fixup *fx = fixup_at(b->in, d->addr);
	char w[96];

	if (!fx || fx->fixup == d->addr + d->zi.length)
		return 0;
	if (d->ins.kind != CFG_I_PLAIN)
		return refuse(b, "bad-fixup", "%s: exception fixup on a %s",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d));
	if (part_of(b, fx->fixup) < 0)
		return refuse(b, "bad-fixup", "%s: fixup 0x%" PRIx64 " outside the function",
			      where(b, d->addr, w, sizeof(w)), fx->fixup);
	d->ins.flags |= CFG_IF_FAULT_FIXUP;
	d->ins.target = fx->fixup;
	return push_work(b, fx->fixup);
}

/*
 * What falls through to the end of its part: a call followed by nothing
 * but padding, or by nothing at all (a live function's size reaches the
 * next symbol), is the function's last instruction, one that never returns;
 * anything else falls off the end and is refused.
 */
static int check_fall_off(struct builder *b, struct decoded *d)
{
	uint32_t end = d->off + d->zi.length;
	int call = d->ins.kind == CFG_I_CALL || d->ins.kind == CFG_I_CALL_INDIRECT;
	char w[96];

	if (!d->fall || end > d->p->len)
		return 0;
	if (call && (end == d->p->len || only_padding(b, d->p, end))) {
		d->ins.kind = CFG_I_CALL_NORETURN;
		d->ins.flags |= CFG_IF_NORETURN_INFERRED;
		d->fall = 0;
		return 0;
	}
	if (end == d->p->len)
		return refuse(b, "runs-off-end", "%s: %s falls off the end of %s",
			      where(b, d->addr, w, sizeof(w)), mnemonic(d),
			      d->pi ? "the .cold part" : "the function");
	return 0;
}

/*
 * Decodes the instruction at addr (not yet decoded) and classifies it.
 * *next is where execution continues sequentially, or 0 if it does not.
 */
static int decode_one(struct builder *b, uint64_t addr, uint64_t *next)
{
	const struct cfg_key_site *key;
	struct decoded d;
	int err;

	memset(&d, 0, sizeof(d));
	d.addr = addr;
	d.pi = part_of(b, addr);
	d.p = &b->part[d.pi];
	d.off = addr - d.p->addr;
	d.fall = 1;
	err = decode_insn(b, &d);
	if (err)
		return err;
	d.ins.addr = addr;
	d.ins.len = d.zi.length;
	d.ins.kind = CFG_I_PLAIN;
	d.ins.block = UINT32_MAX;
	if (addr == b->in->addr && d.zi.length == 4 && is_endbr(d.p->code + d.off))
		d.ins.flags |= CFG_IF_ENTRY_ENDBR;
	note_operands(b, &d);

	key = key_at(b->in, addr);
	if (key) {
		/* a key site is a jump or a nop, nothing else: no fixup, no end check */
		err = classify_key(b, &d, key);
	} else {
		err = classify(b, &d);
		if (!err)
			err = add_fixup(b, &d);
		/* what opt.c will not copy into its window (ud2 among them) */
		if (!err && kprobe_window_unsafe(&d.ins, d.p->code + d.off, d.p->len - d.off))
			d.ins.flags |= CFG_IF_OPTPROBE_UNSAFE;
		if (!err)
			err = check_fall_off(b, &d);
	}
	if (err)
		return err;
	*next = d.fall ? addr + d.zi.length : 0;
	return add_insn(b, &d.ins);
}

/* Decodes everything reachable from the entry. */
static int traverse(struct builder *b)
{
	char w[96];
	int err;

	err = push_work(b, b->in->addr);
	while (!err && b->nwork) {
		uint64_t addr = b->work[--b->nwork], next = 0;

		for (;;) {
			int pi = part_of(b, addr);
			struct part *p;
			int32_t o;

			if (pi < 0)
				return refuse(b, "jump-outside", "0x%" PRIx64 " is outside", addr);
			p = &b->part[pi];
			o = p->owner[addr - p->addr];
			if (o >= 0) {
				if (b->insns[o].addr != addr)
					return refuse(b, "mid-insn-target",
						      "%s is inside the instruction at %s",
						      where(b, addr, w, sizeof(w)),
						      where(b, b->insns[o].addr, w + 48, 48));
				break;
			}
			err = decode_one(b, addr, &next);
			if (err || !next)
				break;
			addr = next;
		}
	}
	return err;
}

static int ends_block(const struct cfg_insn *i)
{
	switch (i->kind) {
	case CFG_I_PLAIN:
		return !!(i->flags & CFG_IF_FAULT_FIXUP);
	case CFG_I_FENTRY:
		return 0;
	default:
		return 1;
	}
}

static uint32_t insn_index(const struct builder *b, uint64_t addr)
{
	int pi = part_of(b, addr);

	if (pi < 0 || b->part[pi].owner[addr - b->part[pi].addr] < 0)
		return UINT32_MAX;
	return b->part[pi].owner[addr - b->part[pi].addr];
}

static int cmp_insn(const void *x, const void *y)
{
	const struct cfg_insn *a = x, *b = y;

	/* main part first: make_blocks sorts with block holding the part */
	if (a->block != b->block)
		return a->block < b->block ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Sorts instructions (main then cold), cuts blocks and adds edges. */
static int make_blocks(struct builder *b)
{
	struct cfg *c = b->c;
	uint32_t i, j, nb = 0, ne = 0, p;

	/* Until blocks are cut, an instruction's block is its part: main sorts first. */
	for (i = 0; i < b->ninsns; i++)
		b->insns[i].block = part_of(b, b->insns[i].addr);
	qsort(b->insns, b->ninsns, sizeof(*b->insns), cmp_insn);
	for (p = 0; p < 2; p++)
		for (i = 0; i < b->part[p].len; i++)
			b->part[p].owner[i] = -1;
	for (i = 0; i < b->ninsns; i++) {
		struct part *pt = &b->part[part_of(b, b->insns[i].addr)];

		for (j = 0; j < b->insns[i].len; j++)
			pt->owner[b->insns[i].addr - pt->addr + j] = i;
	}
	/* Branch targets. */
	for (i = 0; i < b->ninsns; i++) {
		struct cfg_insn *ins = &b->insns[i];
		uint32_t t;

		if (!(ins->kind == CFG_I_JCC || ins->kind == CFG_I_JMP || ins->kind == CFG_I_KEY ||
		      (ins->flags & CFG_IF_FAULT_FIXUP)) || (ins->flags & CFG_IF_LEAVES))
			continue;
		t = insn_index(b, ins->target);
		if (t == UINT32_MAX || b->insns[t].addr != ins->target)
			return refuse(b, "mid-insn-target", "target 0x%" PRIx64 " of 0x%" PRIx64
				      " is not an instruction", ins->target, ins->addr);
		b->insns[t].flags |= CFG_IF_BRANCH_TARGET;
	}
	/* Leaders. */
	for (i = 0; i < b->ninsns; i++) {
		struct cfg_insn *ins = &b->insns[i], *prev = i ? &b->insns[i - 1] : NULL;
		int lead = !prev || (ins->flags & CFG_IF_BRANCH_TARGET) || ends_block(prev) ||
			   prev->addr + prev->len != ins->addr ||
			   part_of(b, prev->addr) != part_of(b, ins->addr);

		if (lead)
			nb++;
		ins->block = nb - 1;
	}
	c->blocks = calloc(nb, sizeof(*c->blocks));
	c->edges = calloc(2 * (size_t)nb, sizeof(*c->edges));
	if (!c->blocks || !c->edges)
		return -PT_ENOMEM;
	for (i = 0; i < b->ninsns; i++) {
		struct cfg_block *bl = &c->blocks[b->insns[i].block];

		if (!bl->ninsn) {
			bl->addr = b->insns[i].addr;
			bl->first_insn = i;
			if (part_of(b, b->insns[i].addr) == 1)
				bl->flags |= CFG_BF_COLD;
		}
		bl->ninsn++;
		bl->size += b->insns[i].len;
	}
	c->blocks[0].flags |= CFG_BF_ENTRY;
	for (i = 0; i < nb; i++) {
		struct cfg_block *bl = &c->blocks[i];
		const struct cfg_insn *last = &b->insns[bl->first_insn + bl->ninsn - 1];
		uint32_t next = insn_index(b, last->addr + last->len);
		uint32_t tgt = UINT32_MAX;
		uint8_t k[2];
		uint32_t d[2], n = 0, e;

		if (last->target && !(last->flags & CFG_IF_LEAVES) &&
		    part_of(b, last->target) >= 0)
			tgt = insn_index(b, last->target);
		next = next == UINT32_MAX ? UINT32_MAX : b->insns[next].block;
		tgt = tgt == UINT32_MAX ? UINT32_MAX : b->insns[tgt].block;
		switch (last->kind) {
		case CFG_I_JCC:
			k[0] = CFG_E_FALL; d[0] = next;
			k[1] = CFG_E_TAKEN; d[1] = (last->flags & CFG_IF_LEAVES) ? nb : tgt;
			n = 2;
			break;
		case CFG_I_JMP:
			k[0] = CFG_E_JUMP; d[0] = tgt; n = 1;
			break;
		case CFG_I_KEY:
			k[0] = CFG_E_KEY_FALL; d[0] = next;
			k[1] = CFG_E_KEY_JUMP; d[1] = tgt;
			n = 2;
			break;
		case CFG_I_CALL:
		case CFG_I_CALL_INDIRECT:
			k[0] = CFG_E_CALL_RETURN; d[0] = next; n = 1;
			bl->flags |= CFG_BF_CALL;
			break;
		case CFG_I_CALL_NORETURN:
		case CFG_I_RET:
		case CFG_I_TAIL_CALL:
		case CFG_I_BUG:
			k[0] = CFG_E_EXIT; d[0] = nb; n = 1;
			break;
		default:	/* plain, fentry, WARN */
			k[0] = CFG_E_FALL; d[0] = next; n = 1;
			if (last->flags & CFG_IF_FAULT_FIXUP) {
				k[1] = CFG_E_FIXUP; d[1] = tgt; n = 2;
			}
			break;
		}
		bl->first_succ = ne;
		bl->nsucc = n;
		for (e = 0; e < n; e++) {
			if (d[e] == UINT32_MAX)	/* traversal guarantees this; keep it loud */
				return refuse(b, "internal", "block at 0x%" PRIx64
					      " has a successor with no block", bl->addr);
			c->edges[ne].src = i;
			c->edges[ne].dst = d[e];
			c->edges[ne].kind = k[e];
			ne++;
		}
	}
	c->nblocks = nb;
	c->nedges = ne;
	c->ninsns = b->ninsns;
	c->insns = b->insns;
	b->insns = NULL;
	return 0;
}

/* Whether the decoded instruction transfers control other than by a call. */
static int diverts(const ZydisDecodedInstruction *zi)
{
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
		return 1;
	default:
		return zi->mnemonic == ZYDIS_MNEMONIC_UD2 || zi->mnemonic == ZYDIS_MNEMONIC_UD0 ||
		       zi->mnemonic == ZYDIS_MNEMONIC_UD1 || zi->mnemonic == ZYDIS_MNEMONIC_INT3;
	}
}

/* Refuses when an alternative site in reachable code can change control flow. */
static int check_alternatives(struct builder *b)
{
	const struct cfg_input *in = b->in;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t a, off, k;
	char w[96];

	for (a = 0; a < in->nalts; a++) {
		const struct cfg_alt_site *s = &in->alts[a];
		int reached = 0, pi;

		for (k = 0; k < s->len && !reached; k++) {
			pi = part_of(b, s->addr + k);
			reached = pi >= 0 && b->part[pi].owner[s->addr + k - b->part[pi].addr] >= 0;
		}
		if (!reached)
			continue;
		for (k = 0; k < s->len; k++) {
			int32_t o;

			pi = part_of(b, s->addr + k);
			if (pi < 0)
				continue;
			o = b->part[pi].owner[s->addr + k - b->part[pi].addr];
			if (o >= 0 && b->insns[o].addr == s->addr + k &&
			    b->insns[o].kind != CFG_I_PLAIN && b->insns[o].kind != CFG_I_CALL &&
			    b->insns[o].kind != CFG_I_CALL_INDIRECT)
				return refuse(b, "alternative", "%s: the alternative site's code "
					      "branches; patched at boot it may not",
					      where(b, s->addr, w, sizeof(w)));
		}
		if (!s->repl && s->repl_len)
			return refuse(b, "alternative", "%s: replacement bytes unknown",
				      where(b, s->addr, w, sizeof(w)));
		for (off = 0; off < s->repl_len; off += zi.length) {
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&b->dec, s->repl + off,
								 s->repl_len - off, &zi, ops)))
				return refuse(b, "alternative", "%s: replacement +0x%x undecodable",
					      where(b, s->addr, w, sizeof(w)), off);
			if (diverts(&zi))
				return refuse(b, "alternative", "%s: replacement has %s: control "
					      "flow depends on the CPU", where(b, s->addr, w, sizeof(w)),
					      ZydisMnemonicGetString(zi.mnemonic));
		}
	}
	return 0;
}

int cfg_build(const struct cfg_input *in, struct cfg *c)
{
	struct builder b;
	int err, p;

	if (!c)
		return -PT_EINVAL;
	memset(c, 0, sizeof(*c));
	if (!in || !in->code || !in->len || (in->cold_len && !in->cold_code))
		return -PT_EINVAL;
	memset(&b, 0, sizeof(b));
	b.in = in;
	b.c = c;
	c->name = strdup(in->name ? in->name : "?");
	if (!c->name)
		return -PT_ENOMEM;
	c->addr = in->addr;
	c->len = in->len;
	c->cold_addr = in->cold_len ? in->cold_addr : 0;
	c->cold_len = in->cold_len;
	if (in->len > CFG_MAX_PART || in->cold_len > CFG_MAX_PART)
		return refuse(&b, "too-large", "%u + %u bytes", in->len, in->cold_len);
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&b.dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -PT_EINVAL;
	b.part[0] = (struct part){ in->addr, in->code, in->len, NULL };
	if (in->cold_len)
		b.part[1] = (struct part){ in->cold_addr, in->cold_code, in->cold_len, NULL };
	err = -PT_ENOMEM;
	for (p = 0; p < 2; p++) {
		if (!b.part[p].len)
			continue;
		b.part[p].owner = malloc(b.part[p].len * sizeof(int32_t));
		if (!b.part[p].owner)
			goto out;
		memset(b.part[p].owner, 0xff, b.part[p].len * sizeof(int32_t));
	}
	if (in->cold_len && part_of(&b, in->cold_addr) == 0) {
		err = -PT_EINVAL;	/* overlapping parts */
		goto out;
	}
	err = traverse(&b);
	if (!err && b.first_ijmp && b.taken_at) {
		char w1[96], w2[96], w3[96];

		err = refuse(&b, "indirect-jump", "%s: indirect jmp, and the code at %s takes "
			     "the address %s", where(&b, b.first_ijmp, w1, sizeof(w1)),
			     where(&b, b.taken_at, w2, sizeof(w2)), where(&b, b.taken, w3, sizeof(w3)));
	}
	if (!err)
		err = check_alternatives(&b);
	if (!err)
		err = make_blocks(&b);
out:
	free(b.part[0].owner);
	free(b.part[1].owner);
	free(b.insns);
	free(b.work);
	return err;
}

void cfg_free(struct cfg *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->blocks);
	free(c->insns);
	free(c->edges);
	memset(c, 0, sizeof(*c));
}
