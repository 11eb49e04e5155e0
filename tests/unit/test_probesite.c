// SPDX-License-Identifier: GPL-2.0
/* Probe sites: DST / SRC / BRANCH choice, costs and the optprobe rules. */
#include <stdio.h>
#include <string.h>

#include <pathtrace_abi.h>
#include <pathtrace/elfobj.h>
#include <pathtrace/error.h>
#include <pathtrace/probesite.h>
#include <pathtrace/static_calls.h>

#include "cfg_asm.h"
#include "plan_fixture.h"
#include "unit.h"

static void test_edge_sites(void)
{
	struct cfg c;
	struct probesite s[4];
	static const uint64_t w[4] = { 30, 70, 70, 100 };

	fx_call_diamond(&c);
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, w, s), 0);
	/* B0 -> B2 taken: B0 has two successors, B2 two predecessors */
	CU_ASSERT_EQUAL(s[0].how, PROBESITE_BRANCH);
	CU_ASSERT_EQUAL(s[0].insn, 3);
	CU_ASSERT_EQUAL(s[0].cond, 4);
	CU_ASSERT_EQUAL(s[0].when, PT_WHEN_TAKEN);
	/* a jcc is never boostable: int3 cost of B0's whole frequency */
	CU_ASSERT_EQUAL(s[0].cost, (30 + 70) * PROBESITE_INT3_FACTOR);
	/* B0 -> B1: B1 has one predecessor, its first instruction */
	CU_ASSERT_EQUAL(s[1].how, PROBESITE_DST);
	CU_ASSERT_EQUAL(s[1].insn, 4);
	CU_ASSERT(s[1].window_ok);
	CU_ASSERT_EQUAL(s[1].cost, 70);
	/* B1 -> B2 after the call: B1 has one successor */
	CU_ASSERT_EQUAL(s[2].how, PROBESITE_SRC);
	CU_ASSERT_EQUAL(c.insns[s[2].insn].block, 1);
	CU_ASSERT(s[2].window_ok);
	/* B2 -> EXIT */
	CU_ASSERT_EQUAL(s[3].how, PROBESITE_SRC);
	CU_ASSERT_EQUAL(s[3].insn, 7);
	CU_ASSERT_EQUAL(s[3].cond, PT_COND_NONE);
	fx_cfg_free(&c);
}

static void test_entry_counts_its_caller(void)
{
	struct cfg c;
	struct probesite s[7];

	fx_loop_cold(&c);
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, s), 0);
	/* B0 -> B1: B1 has two predecessors, B0 one successor: in B0, and
	 * the fentry site (probed for ENTER anyway) is preferred */
	CU_ASSERT_EQUAL(s[0].how, PROBESITE_SRC);
	CU_ASSERT_EQUAL(s[0].insn, 0);
	CU_ASSERT_EQUAL(s[0].cost, PROBESITE_FTRACE_FACTOR);
	/* back edge B2 -> B1 taken: critical */
	CU_ASSERT_EQUAL(s[3].how, PROBESITE_BRANCH);
	CU_ASSERT_EQUAL(s[3].cond, 0xc);
	/* B2 -> B3 fall-through: B3 has two predecessors */
	CU_ASSERT_EQUAL(s[4].how, PROBESITE_BRANCH);
	CU_ASSERT_EQUAL(s[4].when, PT_WHEN_NOT_TAKEN);
	/* B1 -> cold B4: one predecessor: at 0x3000 */
	CU_ASSERT_EQUAL(s[1].how, PROBESITE_DST);
	CU_ASSERT_EQUAL(c.insns[s[1].insn].addr, 0x3000);
	fx_cfg_free(&c);
}

static void test_windows(void)
{
	struct cfg c;
	uint32_t probes[2] = { 5, 6 };
	uint8_t opt[2];
	enum probesite_why why;

	fx_loop_cold(&c);
	/* fentry and its first 5 bytes */
	CU_ASSERT_EQUAL(probesite_window(&c, 0), 0);
	CU_ASSERT_EQUAL(probesite_window_why(&c, 0, &why), 0);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_FENTRY);
	/* 0x2005 mov + 0x2008: a jump target inside the window */
	CU_ASSERT_EQUAL(probesite_window(&c, 1), 0);
	probesite_window_why(&c, 1, &why);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_TARGET);
	/* 0x2011 add(3) + 0x2014 cmp(3): six plain bytes */
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	CU_ASSERT_EQUAL(probesite_window_why(&c, 5, &why), 6);
	CU_ASSERT_EQUAL(why, PROBESITE_OPTIMIZABLE);
	/* 0x2014 cmp + jcc: a conditional jump is not boostable */
	CU_ASSERT_EQUAL(probesite_window(&c, 6), 0);
	probesite_window_why(&c, 6, &why);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_JUMP);
	/* a call is not boostable either; a fixup anywhere refuses the symbol */
	c.insns[6].kind = CFG_I_CALL;	/* the cmp */
	probesite_window_why(&c, 6, &why);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_CALL);
	c.insns[6].kind = CFG_I_PLAIN;
	c.insns[2].flags |= CFG_IF_FAULT_FIXUP;
	CU_ASSERT_EQUAL(probesite_window_why(&c, 5, &why), 0);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_SYMBOL);
	c.insns[2].flags &= ~CFG_IF_FAULT_FIXUP;
	/*
	 * 0x2019 mov(4) + ret: a ret may end a window (can_boost takes 0xc3,
	 * as getname_flags+0x36 "pop; pop; pop; ret" was optimized in 6.1),
	 * not a return-thunk jmp (flagged unsafe); 0x3000 mov + jmp: never
	 */
	CU_ASSERT_EQUAL(probesite_window(&c, 8), 5);
	c.insns[9].flags |= CFG_IF_OPTPROBE_UNSAFE;
	CU_ASSERT_EQUAL(probesite_window(&c, 8), 0);
	probesite_window_why(&c, 8, &why);
	CU_ASSERT_EQUAL(why, PROBESITE_WHY_INSN);
	c.insns[9].flags &= ~CFG_IF_OPTPROBE_UNSAFE;
	CU_ASSERT_EQUAL(probesite_window(&c, 10), 0);
	/* no __fentry__ site (notrace): a probe at +0 is an ordinary one */
	c.insns[0].kind = CFG_I_PLAIN;
	CU_ASSERT_EQUAL(probesite_window(&c, 0), 5);
	c.insns[1].flags |= CFG_IF_BRANCH_TARGET;	/* 0x2005 = 0x2000 + 5 */
	CU_ASSERT_EQUAL(probesite_window(&c, 0), 0);
	c.insns[1].flags &= ~CFG_IF_BRANCH_TARGET;
	c.insns[0].kind = CFG_I_FENTRY;
	/* 0x2008 mov(4) + cmp(3): 0x200d is no target, but 0x2008 itself may be */
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 7);
	/* two probes 3 bytes apart: the first's window holds the second */
	CU_ASSERT_EQUAL(probesite_mark_optimizable(&c, probes, 2, opt), 0);
	CU_ASSERT(!opt[0] && !opt[1]);
	probes[0] = 2;	/* 0x2008 (7 bytes) and 0x2011 (6 bytes): apart */
	probes[1] = 5;
	CU_ASSERT_EQUAL(probesite_mark_optimizable(&c, probes, 2, opt), 2);
	/* a target exactly at addr + 5 (inclusive check in the kernel) */
	c.insns[3].flags |= CFG_IF_BRANCH_TARGET;	/* 0x200c, inside */
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 0);
	c.insns[3].flags &= ~CFG_IF_BRANCH_TARGET;
	c.insns[4].flags |= CFG_IF_BRANCH_TARGET;	/* 0x200f > 0x2008 + 5 */
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 7);
	c.insns[6].flags |= CFG_IF_BRANCH_TARGET;	/* 0x2014 = 0x2011 + 3 */
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	c.insns[6].flags &= ~CFG_IF_BRANCH_TARGET;
	/* the optprobe-unsafe flag of the CFG recovery */
	c.insns[6].flags |= CFG_IF_OPTPROBE_UNSAFE;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	c.insns[6].flags &= ~CFG_IF_OPTPROBE_UNSAFE;
	/*
	 * An indirect jump anywhere in the symbol (insn_is_indirect_jump):
	 * none at all; a direct tail call is no indirect jump, and the .cold
	 * part is a symbol of its own.
	 */
	c.insns[11].kind = CFG_I_TAIL_CALL;	/* 0x3004, the .cold part's jmp */
	c.insns[11].target = 0;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	c.insns[11].kind = CFG_I_JMP;
	c.insns[9].kind = CFG_I_TAIL_CALL;	/* 0x201d, the main part's ret */
	c.insns[9].target = 0x5000;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	c.insns[9].target = 0;		/* a .ko's call of another module */
	c.insns[9].target_name = "kvfree";
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	c.insns[9].target_name = "__x86_indirect_thunk_rax";
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	c.insns[9].target_name = NULL;	/* jmp *%rax */
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 0);
	c.insns[9].kind = CFG_I_RET;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	/* an exception-table entry anywhere in the symbol: none at all */
	c.insns[9].flags |= CFG_IF_FAULT_FIXUP;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 0);
	fx_cfg_free(&c);
}

/*
 * An ENDBR entry (CONFIG_X86_KERNEL_IBT): kprobes moves a probe there onto
 * the __fentry__ site after it, so the entry is the one ftrace-based site
 * and the fentry site is none of its own.
 */
static void test_ibt_entry(void)
{
	static const char text[] =
		"	.text\n	.globl ibt\n	.type ibt,@function\nibt:\n"
		"	endbr64\n"			/* 0 */
		"	call __fentry__\n"		/* 4 */
		"	test %edi,%edi\n"		/* 9 */
		"	je 1f\n"			/* b */
		"	mov $1,%eax\n"			/* d */
		"1:	jmp __x86_return_thunk\n"	/* 12 */
		"	.size ibt, .-ibt\n";
	struct probesite s;
	struct cfg c;

	CU_ASSERT_EQUAL_FATAL(cfg_asm_build(text, "ibt", &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.insns[1].addr, c.addr + 4);
	CU_ASSERT(probesite_probeable(&c, 0));
	CU_ASSERT(probesite_ftrace(&c, 0));
	CU_ASSERT(!probesite_probeable(&c, 1));
	CU_ASSERT(!probesite_ftrace(&c, 1));
	CU_ASSERT(probesite_probeable(&c, 2) && !probesite_ftrace(&c, 2));
	CU_ASSERT_EQUAL(probesite_window(&c, 0), 0);
	CU_ASSERT_EQUAL_FATAL(probesite_in_block(&c, 0, NULL, &s), 0);
	CU_ASSERT_EQUAL(s.insn, 0);
	cfg_free(&c);
}

static void test_unprobeable(void)
{
	struct cfg c;
	struct probesite s[7];

	fx_loop_cold(&c);
	c.insns[5].kind = CFG_I_BUG;
	CU_ASSERT(!probesite_probeable(&c, 5));
	c.insns[5].kind = CFG_I_KEY;
	CU_ASSERT(!probesite_probeable(&c, 5));
	c.insns[5].kind = CFG_I_PLAIN;
	/* make B1's branch a static key: its critical edges cannot be seen */
	c.insns[4].kind = CFG_I_KEY;
	c.edges[1].kind = CFG_E_KEY_JUMP;
	c.edges[2].kind = CFG_E_KEY_FALL;
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, s), 0);
	CU_ASSERT_EQUAL(s[1].how, PROBESITE_DST);	/* cold block: one predecessor */
	/* B1 -> B2: B2 has one predecessor too */
	CU_ASSERT_EQUAL(s[2].how, PROBESITE_DST);
	c.edges[3].dst = 2;	/* now B2 has two predecessors (self loop) */
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, s), 0);
	CU_ASSERT_EQUAL(s[2].how, PROBESITE_NONE);
	CU_ASSERT_EQUAL(s[2].cost, PROBESITE_COST_NONE);
	fx_cfg_free(&c);
}

/*
 * The shape kprobes refused in 6.1's vfs_write+0x121 and five others:
 * preempt_enable()'s unlikely __preempt_schedule() is a static call
 * patched to a 5-byte nop, alone in a block with a jmp back.
 *   0x1000 nop5 (fentry)  0x1005 test %rax,%rax  0x1008 je 0x1011
 *   0x100a nop5 (static-call site)  0x100f jmp 0x1011  0x1011 ret
 */
static const uint8_t vfs_write_like[] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x07,
	0x0f, 0x1f, 0x44, 0x00, 0x00, 0xeb, 0x00, 0xc3,
};

/* The same without the jmp: the site's block has nothing else to probe. */
static const uint8_t site_alone[] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48, 0x85, 0xc0, 0x74, 0x05,
	0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3,
};

static void build(struct cfg *c, const uint8_t *code, uint32_t len)
{
	struct cfg_input in;

	memset(&in, 0, sizeof(in));
	in.name = "f";
	in.addr = 0x1000;
	in.code = code;
	in.len = len;
	memset(c, 0, sizeof(*c));
	CU_ASSERT_EQUAL_FATAL(cfg_build(&in, c), 0);
}

static uint32_t insn_at(const struct cfg *c, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < c->ninsns; i++)
		if (c->insns[i].addr == addr)
			return i;
	return PROBESITE_NO_INSN;
}

static void test_static_call_sites(void)
{
	uint64_t one[] = { 0x100a }, straddle[] = { 0x1008 };
	struct static_calls sc = { one, 1, NULL };
	struct probesite s[8], before[8];
	struct cfg c;
	uint32_t e, site, jmp;

	build(&c, vfs_write_like, sizeof(vfs_write_like));
	CU_ASSERT_EQUAL_FATAL(c.nblocks, 3);
	site = insn_at(&c, 0x100a);
	jmp = insn_at(&c, 0x100f);
	CU_ASSERT_FATAL(site != PROBESITE_NO_INSN && jmp != PROBESITE_NO_INSN);
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, before), 0);
	/* unmarked, the planner's first choice for B0 -> B1 is the site itself */
	for (e = 0; e < c.nedges; e++)
		if (c.edges[e].src == 0 && c.edges[e].dst == 1)
			CU_ASSERT_EQUAL(before[e].insn, site);

	/* the site's 5 bytes cover the nop only, not the jmp right after */
	CU_ASSERT_EQUAL(static_calls_mark(&sc, &c), 1);
	CU_ASSERT(c.insns[site].flags & CFG_IF_STATIC_CALL);
	CU_ASSERT(!(c.insns[jmp].flags & CFG_IF_STATIC_CALL));
	CU_ASSERT(!probesite_probeable(&c, site));
	CU_ASSERT(probesite_probeable(&c, jmp));
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, s), 0);
	for (e = 0; e < c.nedges; e++) {
		const struct cfg_edge *ce = &c.edges[e];

		CU_ASSERT(s[e].insn == PROBESITE_NO_INSN || probesite_probeable(&c, s[e].insn));
		CU_ASSERT(s[e].insn != site);
		if (ce->src == 0 && ce->dst == 1) {	/* at the branch instead, not taken */
			CU_ASSERT_EQUAL(s[e].how, PROBESITE_BRANCH);
			CU_ASSERT_EQUAL(s[e].insn, insn_at(&c, 0x1008));
			CU_ASSERT_EQUAL(s[e].when, PT_WHEN_NOT_TAKEN);
		}
		if (ce->src == 1) {	/* anywhere in B1: the jmp */
			CU_ASSERT_EQUAL(s[e].how, PROBESITE_SRC);
			CU_ASSERT_EQUAL(s[e].insn, jmp);
		}
	}
	/* no jump-optimization window may copy a site either */
	c.insns[site].flags &= ~CFG_IF_STATIC_CALL;
	sc.site = straddle;	/* overlaps the je (2 bytes) and the nop's first 3 */
	CU_ASSERT_EQUAL(static_calls_mark(&sc, &c), 2);
	CU_ASSERT(!probesite_probeable(&c, insn_at(&c, 0x1008)));
	CU_ASSERT(!probesite_probeable(&c, site));
	CU_ASSERT(!(c.insns[insn_at(&c, 0x1005)].flags & CFG_IF_STATIC_CALL));
	cfg_free(&c);

	/* a block holding only the site: its out-edge cannot be observed */
	build(&c, site_alone, sizeof(site_alone));
	sc.site = one;
	CU_ASSERT_EQUAL(static_calls_mark(&sc, &c), 1);
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, NULL, s), 0);
	for (e = 0; e < c.nedges; e++)
		if (c.edges[e].src == 1) {
			CU_ASSERT_EQUAL(s[e].how, PROBESITE_NONE);
			CU_ASSERT_EQUAL(s[e].cost, PROBESITE_COST_NONE);
		}
	cfg_free(&c);
}

/*
 * A module's .static_call_sites, read from its relocations: every site is
 * the start of a call or tail call (`call __SCT__...`, unpatched in the
 * .ko) in a function of that module. Skipped without the module.
 */
static void test_static_calls_elf(void)
{
	static const char *const kos[] = {
		"net/bluetooth/bluetooth.ko",
		"net/ieee802154/ieee802154.ko",
	};
	struct static_calls sc;
	struct elfobj *o;
	uint32_t k, i, j, found = 0, checked = 0;
	char ko[512];

	CU_ASSERT_EQUAL(static_calls_elf("/nonexistent.ko", &sc), -PT_EIO);
	CU_ASSERT_PTR_NOT_NULL_FATAL(unit_modules_dir());
	for (k = 0; k < sizeof(kos) / sizeof(kos[0]); k++) {
		if (!unit_module_file(kos[k], ko, sizeof(ko)) || static_calls_elf(ko, &sc))
			continue;
		CU_ASSERT_FATAL(elfobj_open(ko, &o) == 0);
		found += sc.n;
		for (i = 0; i < elfobj_nfuncs(o); i++) {
			struct cfg_input in;
			struct cfg c;

			if (elfobj_func(o, i)->parent != ELFOBJ_NONE || elfobj_input(o, i, &in))
				continue;
			memset(&c, 0, sizeof(c));
			if (cfg_build(&in, &c)) {
				cfg_free(&c);
				continue;
			}
			static_calls_mark(&sc, &c);
			for (j = 0; j < sc.n; j++) {
				uint32_t ii = insn_at(&c, sc.site[j]);

				if (sc.site[j] < c.addr || sc.site[j] >= c.addr + c.len)
					continue;
				checked++;
				CU_ASSERT_FATAL(ii != PROBESITE_NO_INSN);
				CU_ASSERT(c.insns[ii].kind == CFG_I_CALL ||
					  c.insns[ii].kind == CFG_I_TAIL_CALL);
				CU_ASSERT(!probesite_probeable(&c, ii));
			}
			cfg_free(&c);
		}
		elfobj_close(o);
		static_calls_free(&sc);
	}
	/* Both modules ship with linux-image-amd64 (tools/install-deps) and have sites. */
	CU_ASSERT(found > 0);
	CU_ASSERT(checked > 0);
}

UNIT_SUITE(probesite,
	   { "DST, SRC and BRANCH sites with costs", test_edge_sites },
	   { "entry block counts its caller; cold part", test_entry_counts_its_caller },
	   { "jump-optimization windows", test_windows },
	   { "unprobeable instructions and edges", test_unprobeable },
	   { "ENDBR entry: one ftrace-based site", test_ibt_entry },
	   { "static-call sites are never probe sites", test_static_call_sites },
	   { "static-call sites of a module's .ko", test_static_calls_elf })
