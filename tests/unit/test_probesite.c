// SPDX-License-Identifier: GPL-2.0
/* Probe sites: DST / SRC / BRANCH choice, costs and the optprobe rules. */
#include <pathtrace_abi.h>
#include <pathtrace/error.h>
#include <pathtrace/probesite.h>

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

	fx_loop_cold(&c);
	/* fentry and its first 5 bytes */
	CU_ASSERT_EQUAL(probesite_window(&c, 0), 0);
	/* 0x2005 mov + 0x2008: a jump target inside the window */
	CU_ASSERT_EQUAL(probesite_window(&c, 1), 0);
	/* 0x2011 add(3) + 0x2014 cmp(3): six plain bytes */
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 6);
	/* 0x2014 cmp + jcc: a conditional jump is not boostable */
	CU_ASSERT_EQUAL(probesite_window(&c, 6), 0);
	/* 0x2019 mov + ret, 0x3000 mov + jmp: not plain */
	CU_ASSERT_EQUAL(probesite_window(&c, 8), 0);
	CU_ASSERT_EQUAL(probesite_window(&c, 10), 0);
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
	/* an exception-table entry anywhere in the symbol: none at all */
	c.insns[9].flags |= CFG_IF_FAULT_FIXUP;
	CU_ASSERT_EQUAL(probesite_window(&c, 5), 0);
	CU_ASSERT_EQUAL(probesite_window(&c, 2), 0);
	fx_cfg_free(&c);
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

UNIT_SUITE(probesite,
	   { "DST, SRC and BRANCH sites with costs", test_edge_sites },
	   { "entry block counts its caller; cold part", test_entry_counts_its_caller },
	   { "jump-optimization windows", test_windows },
	   { "unprobeable instructions and edges", test_unprobeable })
