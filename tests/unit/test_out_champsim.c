// SPDX-License-Identifier: GPL-2.0
/*
 * --format champsim: a known execution (the simulated run's truth, nested
 * calls included) through the ChampSim writer; the output is decoded back
 * record by record as ChampSim reads it (64-byte little-endian struct
 * input_instr, inc/trace_instruction.h) and checked against the executed
 * instruction sequence: ip, branch flag, outcome of each Jcc (from the
 * truth's next edge), and the branch type ChampSim itself derives from the
 * registers (its rules in inc/instruction.h, restated here: rsp = 6,
 * flags = 25, rip = 26).
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>

#include "champsim_record.h"
#include "pathtrace_abi.h"
#include "regen_trace.h"
#include "unit.h"

#define REC CS_RECORD_SIZE

/* ChampSim's names, short (champsim_record.h) */
enum cs_type {
	DIRECT_JUMP = CS_DIRECT_JUMP, INDIRECT = CS_INDIRECT, CONDITIONAL = CS_CONDITIONAL,
	DIRECT_CALL = CS_DIRECT_CALL, INDIRECT_CALL = CS_INDIRECT_CALL, RETURN = CS_RETURN,
	OTHER = CS_OTHER, NOT_BRANCH = CS_NOT_BRANCH
};

static void decode(const uint8_t *p, struct cs_record *r)
{
	cs_record_decode(p, r);
}

static enum cs_type classify(const struct cs_record *r)
{
	return (enum cs_type)cs_record_branch(r);
}

/*
 * What ChampSim must see for cfg kind k at call depth depth: an outermost
 * activation's call is not in the output (untraced code made it), so its
 * return is a non-branch that pops nothing.
 */
static enum cs_type expected_type(uint8_t k, uint32_t depth)
{
	switch (k) {
	case CFG_I_JCC:
		return CONDITIONAL;
	case CFG_I_JMP:
	case CFG_I_TAIL_CALL:
		return DIRECT_JUMP;
	case CFG_I_CALL:
	case CFG_I_CALL_NORETURN:
		return DIRECT_CALL;
	case CFG_I_RET:
		return depth ? RETURN : NOT_BRANCH;
	default:
		return NOT_BRANCH;
	}
}

static void check_seed(uint64_t seed)
{
	struct rt_case c;
	struct out_writer w = { .ops = &out_champsim_ops };
	struct out_writer *ws[1] = { &w };
	char *buf = NULL;
	size_t len = 0;
	uint64_t expect, i, k = 0, t;
	int ok_ip = 1, ok_branch = 1, ok_taken = 1, ok_type = 1, ok_mem = 1;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_TRACE, PT_ENC_BITS, 0), 0);
	w.m = &c.m;
	w.fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL_FATAL(rt_feed_truth(&c, ws, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	expect = rt_truth_insns(&c);
	CU_ASSERT_EQUAL(len % REC, 0);
	CU_ASSERT_EQUAL(len / REC, expect);
	for (t = 0; t < RT_NTASKS && len / REC == expect; t++) {
		uint32_t depth = 0;	/* activations open in this task */

		for (i = 0; i < c.t.nev; i++) {
			const struct sim_event *te = &c.t.ev[i];
			const struct pr_func *f;
			const struct cfg_block *b;
			uint32_t j;

			if (c.t.ev[i].owner != RT_TASK(t))
				continue;
			depth += te->type == REGEN_EV_ENTER;
			depth -= te->type == REGEN_EV_EXIT && depth;
			if (te->type != REGEN_EV_BLOCK)
				continue;
			f = pr_model_func(&c.m, te->func);
			b = &f->cfg.blocks[te->block];
			for (j = 0; j < b->ninsn; j++, k++) {
				const struct cfg_insn *in = &f->cfg.insns[b->first_insn + j];
				struct cs_record r;
				enum cs_type want = expected_type(in->kind, depth - 1);

				decode((const uint8_t *)buf + k * REC, &r);
				ok_ip &= r.ip == in->addr;
				ok_branch &= r.is_branch == (want != NOT_BRANCH);
				ok_type &= classify(&r) == want;
				ok_mem &= !r.dmem[0] && !r.dmem[1] && !r.smem[0] && !r.smem[3];
				if (in->kind == CFG_I_JCC) {
					/* The outcome: the edge by which this activation left the block. */
					uint64_t n2;
					int taken = -1;

					for (n2 = i + 1; n2 < c.t.nev; n2++) {
						const struct sim_event *nx = &c.t.ev[n2];

						if (c.t.ev[n2].owner != RT_TASK(t) || nx->func != te->func)
							continue;
						if (nx->type == REGEN_EV_BLOCK)
							taken = f->cfg.edges[nx->edge].kind == CFG_E_TAKEN;
						else if (nx->type == REGEN_EV_EXIT)
							taken = f->cfg.edges[f->exit_edge[te->block]].kind == CFG_E_TAKEN;
						break;
					}
					ok_taken &= taken == r.branch_taken;
				} else if (want != NOT_BRANCH) {
					ok_taken &= r.branch_taken == 1;
				} else {
					ok_taken &= r.branch_taken == 0;
				}
			}
		}
	}
	CU_ASSERT(ok_ip);
	CU_ASSERT(ok_branch);
	CU_ASSERT(ok_taken);
	CU_ASSERT(ok_type);
	CU_ASSERT(ok_mem);
	CU_ASSERT(expect > 0);
	free(buf);
	rt_case_free(&c);
}

static void test_records_match_execution(void)
{
	uint64_t seed = unit_seed();
	unsigned int i;

	for (i = 0; i < 6; i++)
		check_seed(seed * 17 + i);
}

/*
 * Untraced code around traced functions, by hand: F calls untraced U
 * (which calls traced T), then T directly, then tail-calls untraced U2;
 * G calls F, and U2 calls T before it returns for F; U tail-calls T. Every record's ip
 * and ChampSim type are fixed by the model in docs/pathregen.md.
 */
#define B 0xffffffff81000000ull
#define F_AT B
#define T_AT (B + 0x100)
#define G_AT (B + 0x200)
#define U_AT (B + 0x1000)
#define U2_AT (B + 0x2000)

static const char *hand_name_at(void *ctx, uint64_t a)
{
	(void)ctx;
	return a == U_AT ? "untraced_u" : a == U2_AT ? "untraced_u2" : a == T_AT ? "t" :
	       a == F_AT ? "f" : NULL;
}

static void put_rel(uint8_t *p, uint8_t op, uint64_t at, uint64_t target)
{
	int32_t d = (int32_t)(target - (at + 5));

	p[0] = op;
	memcpy(p + 1, &d, 4);
}

static int hand_func(struct pr_func *f, uint32_t id, const char *name, uint64_t addr,
		     const uint8_t *code, uint32_t len)
{
	struct cfg_input in = { .name = name, .addr = addr, .code = code, .len = len,
				.names = { .name_at = hand_name_at } };
	uint8_t *copy = malloc(len);

	if (!copy || pr_func_init(f, id, name, strlen(name))) {
		free(copy);
		return -1;
	}
	memcpy(copy, code, len);
	f->code = copy;
	f->addr = addr;
	f->len = len;
	return cfg_build(&in, &f->cfg) || pr_func_derive(f) ? -1 : 0;
}

struct want {
	uint64_t ip;
	enum cs_type type;
};

static void check_hand(const struct pr_model *m, const struct regen_event *ev, uint64_t nev,
		       const struct want *want, unsigned int nwant)
{
	struct out_writer w = { .ops = &out_champsim_ops, .m = m };
	struct out_writer *ws[1] = { &w };
	struct regen_stream s = { .owner = 1 };
	struct out_stream st = { .s = &s };
	char *buf = NULL;
	size_t len = 0;
	uint64_t ras[16];
	unsigned int i, depth = 0, ok = 1;

	w.fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	CU_ASSERT_EQUAL(out_open_all(ws, 1), 0);
	CU_ASSERT_EQUAL(out_walk_events(m, &st, ev, nev, ws, 1), 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	CU_ASSERT_EQUAL(len, (size_t)nwant * REC);
	for (i = 0; i < nwant && len == (size_t)nwant * REC; i++) {
		struct cs_record r;
		enum cs_type t;

		decode((const uint8_t *)buf + (size_t)i * REC, &r);
		t = classify(&r);
		if (r.ip != want[i].ip || t != want[i].type) {
			fprintf(stderr, "champsim by hand: record %u: ip %#llx type %d, want %#llx type %d\n",
				i, (unsigned long long)r.ip, t, (unsigned long long)want[i].ip,
				want[i].type);
			ok = 0;
		}
		/* ChampSim's return-address stack: every call here is 5 bytes */
		if (t == DIRECT_CALL && depth < 16)
			ras[depth++] = r.ip + 5;
		if (t == RETURN) {
			ok &= depth > 0 && i + 1 < nwant && want[i + 1].ip == ras[depth - 1];
			depth -= depth > 0;
		}
	}
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(depth, 0);
	free(buf);
}

static void test_untraced_code(void)
{
	uint8_t fc[15], gc[6], tc[1] = { 0xc3 };
	struct pr_model m = { 0 };
	struct regen_marker mk[7] = {
		{ .type = REGEN_M_ENTER, .func = 1, .value = 0xffffffff82000000ull },	/* F, outermost */
		{ .type = REGEN_M_ENTER, .func = 2, .value = U_AT + 0x20 },	/* T, called by U */
		{ .type = REGEN_M_ENTER, .func = 2, .value = F_AT + 10 },	/* T, called by F */
		{ .type = REGEN_M_ENTER, .func = 3, .value = 0xffffffff82000000ull },	/* G, outermost */
		{ .type = REGEN_M_ENTER, .func = 1, .value = G_AT + 5 },	/* F, called by G */
		{ .type = REGEN_M_ENTER, .func = 2, .value = U2_AT + 0x10 },	/* T, called by U2 */
		{ .type = REGEN_M_ENTER, .func = 2, .value = F_AT + 5 },	/* T, U jumped to it */
	};
#define E(t, fn, b, mi) { .type = REGEN_EV_##t, .func = fn, .block = b, \
			  .marker = (mi) >= 0 ? &mk[(mi) < 0 ? 0 : (mi)] : NULL }
	const struct regen_event one[] = {
		E(ENTER, 1, 0, 0), E(BLOCK, 1, 0, -1),
		E(ENTER, 2, 0, 1), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 1, 1, -1),
		E(ENTER, 2, 0, 2), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 1, 2, -1), E(EXIT, 1, 0, -1),
	};
	const struct want want_one[] = {
		{ F_AT, DIRECT_CALL }, { U_AT, NOT_BRANCH },	/* U's entry, then the T it calls */
		{ T_AT, NOT_BRANCH },				/* T's call is not in the output */
		{ U_AT, RETURN },				/* U returns after F's call */
		{ F_AT + 5, DIRECT_CALL }, { T_AT, RETURN },
		{ F_AT + 10, DIRECT_JUMP }, { U2_AT, NOT_BRANCH },	/* F is outermost */
	};
	const struct regen_event two[] = {
		E(ENTER, 3, 0, 3), E(BLOCK, 3, 0, -1),
		E(ENTER, 1, 0, 4), E(BLOCK, 1, 0, -1), E(BLOCK, 1, 1, -1),
		E(ENTER, 2, 0, 2), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 1, 2, -1), E(EXIT, 1, 0, -1),
		E(ENTER, 2, 0, 5), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 3, 1, -1), E(EXIT, 3, 0, -1),
	};
	const struct want want_two[] = {
		{ G_AT, DIRECT_CALL }, { F_AT, DIRECT_CALL }, { U_AT, RETURN },	/* U: nothing traced */
		{ F_AT + 5, DIRECT_CALL }, { T_AT, RETURN },
		{ F_AT + 10, DIRECT_JUMP }, { U2_AT, NOT_BRANCH },	/* U2's entry: it calls T */
		{ T_AT, NOT_BRANCH }, { U2_AT, RETURN },	/* U2 returns for F's call, to G */
		{ G_AT + 5, NOT_BRANCH },			/* G is outermost */
	};
	const struct regen_event three[] = {
		E(ENTER, 1, 0, 0), E(BLOCK, 1, 0, -1),
		E(ENTER, 2, 0, 6), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 1, 1, -1),
		E(ENTER, 2, 0, 2), E(BLOCK, 2, 0, -1), E(EXIT, 2, 0, -1),
		E(BLOCK, 1, 2, -1), E(EXIT, 1, 0, -1),
	};
	const struct want want_three[] = {
		{ F_AT, DIRECT_CALL }, { U_AT, DIRECT_JUMP },	/* U's tail call to T */
		{ T_AT, RETURN },				/* T returns for F's call */
		{ F_AT + 5, DIRECT_CALL }, { T_AT, RETURN },
		{ F_AT + 10, DIRECT_JUMP }, { U2_AT, NOT_BRANCH },
	};
#undef E

	put_rel(fc, 0xe8, F_AT, U_AT);
	put_rel(fc + 5, 0xe8, F_AT + 5, T_AT);
	put_rel(fc + 10, 0xe9, F_AT + 10, U2_AT);
	put_rel(gc, 0xe8, G_AT, F_AT);
	gc[5] = 0xc3;
	m.funcs = calloc(3, sizeof(*m.funcs));
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.funcs);
	m.nfuncs = 3;
	CU_ASSERT_EQUAL_FATAL(hand_func(&m.funcs[0], 1, "f", F_AT, fc, sizeof(fc)), 0);
	CU_ASSERT_EQUAL_FATAL(hand_func(&m.funcs[1], 2, "t", T_AT, tc, sizeof(tc)), 0);
	CU_ASSERT_EQUAL_FATAL(hand_func(&m.funcs[2], 3, "g", G_AT, gc, sizeof(gc)), 0);
	CU_ASSERT_EQUAL_FATAL(m.funcs[0].cfg.nblocks, 3);
	CU_ASSERT_EQUAL_FATAL(pr_model_finish(&m), 0);
	check_hand(&m, one, sizeof(one) / sizeof(one[0]), want_one,
		   sizeof(want_one) / sizeof(want_one[0]));
	check_hand(&m, two, sizeof(two) / sizeof(two[0]), want_two,
		   sizeof(want_two) / sizeof(want_two[0]));
	check_hand(&m, three, sizeof(three) / sizeof(three[0]), want_three,
		   sizeof(want_three) / sizeof(want_three[0]));
	pr_model_free(&m);
}

/* The insn of the model at ip, or NULL. */
static const struct cfg_insn *insn_at_ip(const struct pr_model *m, uint64_t ip)
{
	uint32_t i, k;

	for (i = 0; i < m->nfuncs; i++)
		for (k = 0; k < m->funcs[i].cfg.ninsns; k++)
			if (m->funcs[i].cfg.insns[k].addr == ip)
				return &m->funcs[i].cfg.insns[k];
	return NULL;
}

/*
 * Gaps, as the engine reports them after a loss: after some blocks the
 * stream has a GAP and nothing until the next outermost ENTER. No branch
 * may then be followed by a record that is not where it went: a jump
 * inside the function is held like a Jcc, and a block holding nothing but
 * such a branch holds what led to it (t-loss found both: a jump, then a
 * Jcc into a block that is just a jump, each followed by a gap).
 */
static void check_gaps(uint64_t seed, uint64_t *after_jump, uint64_t *after_goto_only,
		       uint64_t *checked)
{
	struct rt_case c;
	struct out_writer w = { .ops = &out_champsim_ops };
	struct out_writer *ws[1] = { &w };
	size_t ends[RT_NTASKS], len = 0;
	char *buf = NULL;
	uint64_t t, i, nev, k = 0;
	int ok = 1, err;

	CU_ASSERT_EQUAL_FATAL(rt_case_make(&c, seed, 4, PT_MODE_TRACE, PT_ENC_BITS, 0), 0);
	w.m = &c.m;
	w.fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w.fp);
	err = out_open_all(ws, 1);
	for (t = 0; t < RT_NTASKS && !err; t++) {
		struct regen_stream s = { .owner = RT_TASK(t) };
		struct out_stream st = { .s = &s, .index = (uint32_t)t };
		struct regen_event *ev = rt_truth_events(&c.t, RT_TASK(t), &nev);
		struct regen_event *cut = calloc(2 * nev + 1, sizeof(*cut));
		uint64_t n = 0, skip = 0;

		CU_ASSERT_FATAL(ev != NULL && cut != NULL);
		for (i = 0; i < nev; i++) {
			const struct pr_func *f = pr_model_func(&c.m, ev[i].func);
			const struct cfg_block *b;
			const struct cfg_insn *last;

			if (skip && !(ev[i].type == REGEN_EV_ENTER && ev[i].depth == 0))
				continue;
			skip = 0;
			cut[n++] = ev[i];
			if (ev[i].type != REGEN_EV_BLOCK || !f)
				continue;
			b = &f->cfg.blocks[ev[i].block];
			last = &f->cfg.insns[b->first_insn + b->ninsn - 1];
			/* a gap after every jump block, and after every third other block */
			if (last->kind != CFG_I_JMP && ++k % 3)
				continue;
			*after_jump += last->kind == CFG_I_JMP;
			*after_goto_only += last->kind == CFG_I_JMP && b->ninsn == 1;
			cut[n++] = (struct regen_event){ .type = REGEN_EV_GAP, .func = UINT32_MAX,
							 .depth = ev[i].depth, .reason = -PT_EKERNEL };
			skip = 1;
		}
		err = out_walk_events(&c.m, &st, cut, n, ws, 1);
		fflush(w.fp);
		ends[t] = len;
		free(cut);
		free(ev);
	}
	CU_ASSERT_EQUAL(err, 0);
	CU_ASSERT_EQUAL(out_close_all(ws, 1), 0);
	fclose(w.fp);
	CU_ASSERT_EQUAL_FATAL(len % REC, 0);
	for (t = 0, i = 0; i < len / REC; i++) {
		struct cs_record r, nx;
		const struct cfg_insn *in;

		while (t < RT_NTASKS && (i + 1) * REC > ends[t])
			t++;
		decode((const uint8_t *)buf + i * REC, &r);
		in = insn_at_ip(&c.m, r.ip);
		if (!in || !r.is_branch || !r.branch_taken ||
		    (in->kind != CFG_I_JMP && in->kind != CFG_I_JCC) || !in->target)
			continue;
		if (t < RT_NTASKS && (i + 1) * REC == ends[t])
			continue;	/* the stream's last record: nothing follows it */
		decode((const uint8_t *)buf + (i + 1) * REC, &nx);
		ok &= nx.ip == in->target;
		(*checked)++;
	}
	CU_ASSERT(ok);
	free(buf);
	rt_case_free(&c);
}

static void test_gaps_after_branches(void)
{
	uint64_t seed = unit_seed(), jumps = 0, goto_only = 0, checked = 0;
	unsigned int i;

	/* 8 programs, and more until one has a gap after a block of just a jump */
	for (i = 0; i < 8 || (!goto_only && i < 64); i++)
		check_gaps(seed * 23 + i, &jumps, &goto_only, &checked);
	printf("\nchampsim: %llu gaps after a jump, %llu of them after a block of just the jump; "
	       "%llu taken branches followed by their target\n", (unsigned long long)jumps,
	       (unsigned long long)goto_only, (unsigned long long)checked);
	CU_ASSERT(jumps > 0);
	CU_ASSERT(checked > 0);
	CU_ASSERT(goto_only > 0);
}

static void test_layout(void)
{
	CU_ASSERT_EQUAL(8 + 1 + 1 + 2 + 4 + 2 * 8 + 4 * 8, REC);
}

UNIT_SUITE(out_champsim,
	   { "input_instr is 64 bytes as ChampSim reads it", test_layout },
	   { "records decode to the executed instructions and outcomes", test_records_match_execution },
	   { "untraced callees and tail calls keep calls and returns balanced", test_untraced_code },
	   { "a gap after a branch drops it: no branch lands elsewhere", test_gaps_after_branches })
