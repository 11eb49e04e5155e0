// SPDX-License-Identifier: GPL-2.0
/*
 * chord_bound: the chords' hits of the spanning tree best for measured
 * counts, worked by hand on the call diamond of plan_fixture.
 */
#include <pathtrace/chord_bound.h>
#include <pathtrace/error.h>
#include <pathtrace/graph.h>
#include <pathtrace/probesite.h>

#include "plan_fixture.h"
#include "unit.h"

/*
 * B0 (Jcc) -> B2 taken (edge 0, a critical edge: an int3 at the Jcc
 * firing on all of B0's 100 runs), B0 -> B1 fall (edge 1, at B1's entry:
 * 70), B1 (call) -> B2 (edge 2, in B1: 70), B2 -> EXIT (edge 3, in B2:
 * 100). With EXIT->ENTRY in the tree, B0-B2-EXIT and B0-B1-B2-EXIT are
 * cycles; two chords break them, the cheapest pairs cost 100 + 70. Ties
 * go to the lower edge id, so the tree is {0, 1}: chords 2 and 3, both
 * observed in their source block.
 */
static void test_call_diamond(void)
{
	static const uint64_t edge[4] = { 30, 70, 70, 100 }, block[3] = { 100, 70, 100 };
	struct probesite s[4];
	struct chord_bound cb;
	struct cfg c;
	struct graph g;

	fx_call_diamond(&c);
	CU_ASSERT_EQUAL_FATAL(cfg_to_graph(&c, &g), 0);
	CU_ASSERT_EQUAL_FATAL(chord_bound(&c, &g, edge, block, PLAN_COSTS_KPROBES, &cb), 0);
	CU_ASSERT_EQUAL(cb.chords, 2);
	CU_ASSERT_EQUAL(cb.sites, 2);
	CU_ASSERT_EQUAL(cb.hits, 170);
	CU_ASSERT_EQUAL(cb.branch_hits, 0);
	CU_ASSERT_EQUAL(cb.unobservable, 0);
	/* optimizable: the sites whose own window qualifies (probesite_edges) */
	CU_ASSERT_EQUAL_FATAL(probesite_edges(&c, edge, s), 0);
	CU_ASSERT_EQUAL(cb.optimizable_hits, (s[2].window_ok ? 70u : 0u) + (s[3].window_ok ? 100u : 0u));

	/*
	 * B1 never runs: its edges cost nothing as chords, but B0 -> B2 ->
	 * EXIT closes a cycle with EXIT->ENTRY, so one of its edges is a
	 * chord all the same: 100 hits, the int3 at B0 or the probe in B2.
	 */
	{
		static const uint64_t e2[4] = { 100, 0, 0, 100 }, b2[3] = { 100, 0, 100 };

		CU_ASSERT_EQUAL_FATAL(chord_bound(&c, &g, e2, b2, PLAN_COSTS_KPROBES, &cb), 0);
		CU_ASSERT_EQUAL(cb.chords, 2);
		CU_ASSERT_EQUAL(cb.hits, 100);
	}
	/*
	 * B0 -> B2 rare, B2 -> EXIT as before: the branch is the cheap
	 * chord only when B0 itself is rare; here B0 runs 100 times, so
	 * an int3 there costs 100 and the tree keeps it.
	 */
	{
		static const uint64_t e3[4] = { 1, 99, 99, 100 }, b3[3] = { 100, 99, 100 };

		CU_ASSERT_EQUAL_FATAL(chord_bound(&c, &g, e3, b3, PLAN_COSTS_KPROBES, &cb), 0);
		CU_ASSERT_EQUAL(cb.hits, 199);	/* edge 2 (99) and edge 3 (100) */
		CU_ASSERT_EQUAL(cb.branch_hits, 0);
		/*
		 * Code on edges (an inline copy): the branch's taken edge
		 * costs its own 1 run, so the tree keeps edges 1 and 3 and
		 * the chords are edge 0 (1, at the Jcc, on its taken edge
		 * only) and edge 2 (99): 100, where probes need 199.
		 */
		CU_ASSERT_EQUAL_FATAL(chord_bound(&c, &g, e3, b3, PLAN_COSTS_EDGES, &cb), 0);
		CU_ASSERT_EQUAL(cb.chords, 2);
		CU_ASSERT_EQUAL(cb.sites, 2);
		CU_ASSERT_EQUAL(cb.hits, 100);
		CU_ASSERT_EQUAL(cb.branch_hits, 1);
	}
	CU_ASSERT_EQUAL(chord_bound(&c, &g, NULL, block, PLAN_COSTS_KPROBES, &cb), -PT_EINVAL);
	graph_free(&g);
	fx_cfg_free(&c);
}

UNIT_SUITE(chord_bound,
	   { "the call diamond's bound, worked by hand", test_call_diamond })
