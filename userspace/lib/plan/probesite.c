// SPDX-License-Identifier: GPL-2.0
/* Probe sites for CFG edges and their jump-optimizability; see probesite.h. */
#include <stdlib.h>
#include <string.h>

#include <pathtrace_abi.h>
#include <pathtrace/error.h>
#include <pathtrace/probesite.h>

#define JMP32_LEN 5

static int in_main(const struct cfg *c, uint64_t a)
{
	return a >= c->addr && a < c->addr + c->len;
}

/* [start, end) of the symbol (main or .cold part) holding a. */
static void region_of(const struct cfg *c, uint64_t a, uint64_t *start, uint64_t *end)
{
	if (in_main(c, a) || !c->cold_addr) {
		*start = c->addr;
		*end = c->addr + c->len;
	} else {
		*start = c->cold_addr;
		*end = c->cold_addr + c->cold_len;
	}
}

/*
 * An indirect jump as insn_is_indirect_jump() sees it: jmp *r/m, or a jmp
 * or jcc into the retpoline thunks (an indirect tail call either way).
 */
static int indirect_jump(const struct cfg_insn *in)
{
	int thunk = in->target_name && !strncmp(in->target_name, "__x86_indirect_", 15);

	/* a direct one names its callee (its address is 0 only in a .ko) */
	if (in->kind == CFG_I_TAIL_CALL)
		return !in->target && (!in->target_name || thunk);
	return in->kind == CFG_I_JCC && (in->flags & CFG_IF_LEAVES) && thunk;
}

/*
 * can_optimize() refuses a whole symbol with any exception-table entry or
 * any indirect jump.
 */
static int region_unoptimizable(const struct cfg *c, uint64_t start, uint64_t end)
{
	uint32_t i;

	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr >= start && c->insns[i].addr < end &&
		    ((c->insns[i].flags & CFG_IF_FAULT_FIXUP) || indirect_jump(&c->insns[i])))
			return 1;
	return 0;
}

/* The function's first instruction if it is an ENDBR (CFG_IF_ENTRY_ENDBR), else NULL. */
static const struct cfg_insn *entry_endbr(const struct cfg *c)
{
	uint32_t i;

	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr == c->addr)
			return (c->insns[i].flags & CFG_IF_ENTRY_ENDBR) ? &c->insns[i] : NULL;
	return NULL;
}

int probesite_probeable(const struct cfg *c, uint32_t i)
{
	const struct cfg_insn *in = &c->insns[i];
	const struct cfg_insn *e = entry_endbr(c);

	if (in->flags & CFG_IF_STATIC_CALL)
		return 0;	/* static_call_text_reserved: kprobes refuse it */
	/*
	 * kprobes moves a probe at an ENDBR entry onto the next instruction:
	 * that one's probe is the entry's (two would be one aggregate kprobe,
	 * whose handlers run in its order, not the plan's).
	 */
	if (e && in->addr == e->addr + e->len)
		return 0;
	switch (in->kind) {
	case CFG_I_BUG:
	case CFG_I_WARN:
	case CFG_I_KEY:		/* jump_label_text_reserved: kprobes refuse it */
		return 0;
	case CFG_I_FENTRY:
		return in->addr == c->addr;
	default:
		return 1;
	}
}

/*
 * Whether the function starts with its __fentry__ site (not every one
 * does), or with an ENDBR and then its __fentry__ site (CONFIG_X86_KERNEL_IBT).
 */
static int has_fentry(const struct cfg *c)
{
	const struct cfg_insn *e = entry_endbr(c);
	uint64_t a = e ? e->addr + e->len : c->addr;
	uint32_t i;

	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr == a)
			return c->insns[i].kind == CFG_I_FENTRY;
	return 0;
}

int probesite_ftrace(const struct cfg *c, uint32_t i)
{
	const struct cfg_insn *in = &c->insns[i];

	return in->addr == c->addr && (in->kind == CFG_I_FENTRY ||
				       ((in->flags & CFG_IF_ENTRY_ENDBR) && has_fentry(c)));
}

uint32_t probesite_window_why(const struct cfg *c, uint32_t i, enum probesite_why *why)
{
	const struct cfg_insn *first = &c->insns[i];
	uint64_t start, end, a = first->addr, next = a;
	enum probesite_why w = PROBESITE_WHY_SHORT;
	uint32_t j;

	region_of(c, a, &start, &end);
	if (start == c->addr && a < c->addr + JMP32_LEN && has_fentry(c)) {
		w = PROBESITE_WHY_FENTRY;	/* the fentry site: an ftrace-based probe */
		goto no;
	}
	if (region_unoptimizable(c, start, end)) {
		w = PROBESITE_WHY_SYMBOL;
		goto no;
	}
	for (j = i; j < c->ninsns && next < a + JMP32_LEN; j++) {
		const struct cfg_insn *in = &c->insns[j];

		if (in->addr != next || in->addr + in->len > end)
			goto no;	/* the part ends (or the listing has a hole) */
		/*
		 * A static-call site is rewritten at run time: not copied into
		 * a window. A ret may end one (can_boost takes 0xc3; the jump
		 * back after the copy is never reached).
		 */
		if (in->kind == CFG_I_CALL || in->kind == CFG_I_CALL_INDIRECT ||
		    in->kind == CFG_I_CALL_NORETURN || in->kind == CFG_I_FENTRY) {
			w = PROBESITE_WHY_CALL;
			goto no;
		}
		if (in->kind != CFG_I_PLAIN && in->kind != CFG_I_RET &&
		    in->kind != CFG_I_BUG && in->kind != CFG_I_WARN) {
			w = PROBESITE_WHY_JUMP;
			goto no;
		}
		if (in->kind != CFG_I_PLAIN && in->kind != CFG_I_RET) {
			w = PROBESITE_WHY_INSN;	/* ud2 */
			goto no;
		}
		if (in->flags & (CFG_IF_OPTPROBE_UNSAFE | CFG_IF_STATIC_CALL)) {
			w = PROBESITE_WHY_INSN;
			goto no;
		}
		if (j != i && (in->flags & CFG_IF_BRANCH_TARGET)) {
			w = PROBESITE_WHY_TARGET;
			goto no;
		}
		next += in->len;
	}
	if (next < a + JMP32_LEN)
		goto no;
	/* insn_jump_into_range() also refuses a target exactly at a + 5. */
	for (; j < c->ninsns && c->insns[j].addr <= a + JMP32_LEN; j++) {
		if (c->insns[j].flags & CFG_IF_BRANCH_TARGET) {
			w = PROBESITE_WHY_TARGET;
			goto no;
		}
	}
	if (why)
		*why = PROBESITE_OPTIMIZABLE;
	return (uint32_t)(next - a);
no:
	if (why)
		*why = w;
	return 0;
}

uint32_t probesite_window(const struct cfg *c, uint32_t i)
{
	return probesite_window_why(c, i, NULL);
}

const char *probesite_why_name(enum probesite_why why)
{
	static const char *const names[PROBESITE_WHY_NR] = {
		[PROBESITE_OPTIMIZABLE] = "optimizable",
		[PROBESITE_WHY_FENTRY] = "the fentry site (an ftrace-based probe)",
		[PROBESITE_WHY_SYMBOL] = "its symbol has a fixup or an indirect jump",
		[PROBESITE_WHY_CALL] = "a call in the window",
		[PROBESITE_WHY_JUMP] = "a jump in the window",
		[PROBESITE_WHY_INSN] = "an instruction kprobes will not copy",
		[PROBESITE_WHY_TARGET] = "a jump target in or right after the window",
		[PROBESITE_WHY_SHORT] = "the code ends within 5 bytes",
	};

	return why < PROBESITE_WHY_NR ? names[why] : "?";
}

uint32_t probesite_mark_optimizable(const struct cfg *c, const uint32_t *insns, uint32_t n,
				    uint8_t *opt)
{
	uint64_t busy_until = 0;
	uint32_t k, count = 0;

	for (k = 0; k < n; k++) {
		uint64_t a = c->insns[insns[k]].addr;
		uint32_t w = probesite_window(c, insns[k]);

		opt[k] = 0;
		if (!w || a < busy_until)
			continue;
		if (k + 1 < n && c->insns[insns[k + 1]].addr < a + w)
			continue;	/* another probe inside the copied window */
		opt[k] = 1;
		busy_until = a + w;
		count++;
	}
	return count;
}

uint64_t probesite_block_freq(const struct cfg *c, const uint64_t *weight, uint32_t b)
{
	const struct cfg_block *bl = &c->blocks[b];
	uint64_t f = 0;
	uint32_t k;

	if (!weight)
		return 1;
	for (k = bl->first_succ; k < bl->first_succ + bl->nsucc; k++)
		f = f + weight[k] < f ? UINT64_MAX : f + weight[k];
	return f ? f : 1;
}

static uint64_t scaled(uint64_t freq, uint64_t factor)
{
	if (freq > PROBESITE_COST_NONE / 16 / factor)
		return PROBESITE_COST_NONE / 16;
	return freq * factor;
}

static void set_site(const struct cfg *c, struct probesite *s, uint32_t i, uint8_t how,
		     uint64_t freq)
{
	s->insn = i;
	s->how = how;
	s->window_ok = probesite_window(c, i) != 0;
	if (probesite_ftrace(c, i))
		s->cost = scaled(freq, PROBESITE_FTRACE_FACTOR);
	else
		s->cost = scaled(freq, s->window_ok ? 1 : PROBESITE_INT3_FACTOR);
}

int probesite_in_block(const struct cfg *c, uint32_t b, const uint64_t *weight,
		       struct probesite *out)
{
	const struct cfg_block *bl = &c->blocks[b];
	uint64_t freq = probesite_block_freq(c, weight, b);
	uint32_t i, best = PROBESITE_NO_INSN;
	int best_rank = 0;

	/* Rank: the fentry site (probed for ENTER anyway), then optimizable,
	 * then any probeable instruction; earliest wins ties. */
	for (i = bl->first_insn; i < bl->first_insn + bl->ninsn; i++) {
		int rank;

		if (!probesite_probeable(c, i))
			continue;
		if (probesite_ftrace(c, i))
			rank = 3;
		else if (probesite_window(c, i))
			rank = 2;
		else
			rank = 1;
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	memset(out, 0, sizeof(*out));
	out->cond = PT_COND_NONE;
	if (best == PROBESITE_NO_INSN) {
		out->insn = PROBESITE_NO_INSN;
		out->cost = PROBESITE_COST_NONE;
		return -PT_ENOENT;
	}
	set_site(c, out, best, PROBESITE_SRC, freq);
	return 0;
}

int probesite_edges(const struct cfg *c, const uint64_t *weight, struct probesite *out)
{
	uint32_t *npred, e;

	if (!c || !c->nblocks)
		return -PT_EINVAL;
	npred = calloc((size_t)c->nblocks + 1, sizeof(*npred));
	if (!npred)
		return -PT_ENOMEM;
	npred[0] = 1;	/* the caller */
	for (e = 0; e < c->nedges; e++)
		npred[c->edges[e].dst]++;
	for (e = 0; e < c->nedges; e++) {
		const struct cfg_edge *ce = &c->edges[e];
		const struct cfg_block *p = &c->blocks[ce->src];
		struct probesite *s = &out[e];
		uint64_t w = weight ? weight[e] : 1;
		uint32_t last = p->first_insn + p->ninsn - 1;

		memset(s, 0, sizeof(*s));
		s->insn = PROBESITE_NO_INSN;
		s->cond = PT_COND_NONE;
		s->when = PT_WHEN_ALWAYS;
		s->cost = PROBESITE_COST_NONE;
		if (!w)
			w = 1;
		if (ce->dst < c->nblocks && npred[ce->dst] == 1 &&
		    probesite_probeable(c, c->blocks[ce->dst].first_insn)) {
			set_site(c, s, c->blocks[ce->dst].first_insn, PROBESITE_DST, w);
		} else if (p->nsucc == 1) {
			if (!probesite_in_block(c, ce->src, NULL, s)) {
				uint32_t i = s->insn;

				set_site(c, s, i, PROBESITE_SRC, w);
			}
		} else if (p->nsucc == 2 && c->insns[last].kind == CFG_I_JCC &&
			   (ce->kind == CFG_E_TAKEN || ce->kind == CFG_E_FALL)) {
			set_site(c, s, last, PROBESITE_BRANCH,
				 probesite_block_freq(c, weight, ce->src));
			s->cond = c->insns[last].cc;
			s->when = ce->kind == CFG_E_TAKEN ? PT_WHEN_TAKEN : PT_WHEN_NOT_TAKEN;
		}
	}
	free(npred);
	return 0;
}
