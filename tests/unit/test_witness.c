// SPDX-License-Identifier: GPL-2.0
/*
 * Witness placement and bit tracing: the paper's Fig. 14 witness sets and
 * its Fig. 15 regeneration of the trace (t, u, v, EOF); the text's
 * counter-example without t; blocking witnesses for the multiprocedure case
 * (Section 4.2), placed as far from the call as possible; bit tracing's
 * branch codes and call separators.
 */
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace_abi.h>

#include "paper_graphs.h"
#include "unit.h"

enum { T = 1, U = 2, V = 3, EOF_W = 0 };

static uint32_t next_of(const struct encoding *enc, uint32_t v, uint32_t w)
{
	return enc->next[(size_t)enc->pred_row[v] * (enc->nwit + 1) + w];
}

static void fig14_emissions(uint8_t *nb, uint64_t *val, int with_t)
{
	memset(nb, 0, F14_NE);
	memset(val, 0, F14_NE * sizeof(*val));
	nb[F14_PA] = with_t ? 2 : 0;
	val[F14_PA] = with_t ? T : 0;
	nb[F14_BA] = 2;
	val[F14_BA] = with_t ? U : 1;
	nb[F14_BC] = 2;
	val[F14_BC] = with_t ? V : 2;
}

/* Fig. 15, single procedure, with EOF, driven by the witness-set table. */
static uint32_t fig15(const struct graph *g, const struct encoding *enc, const uint32_t *trace,
		      uint32_t ntrace, uint32_t *out, uint32_t max)
{
	uint32_t pc = g->entry, n = 0, i = 0, wit = trace[i++], e;

	out[n++] = pc;
	do {
		if (graph_out_degree(g, pc) < 2)
			e = g->out_edges[g->out_start[pc]];
		else
			e = next_of(enc, pc, wit);
		if (e == GRAPH_NONE)
			return 0;
		if (enc->edge_nbits[e])
			wit = i < ntrace ? trace[i++] : EOF_W;
		pc = g->edges[e].dst;
		out[n++] = pc;
	} while (pc != g->exit && n < max);
	return n;
}

static void test_fig14_regeneration(void)
{
	static const uint32_t trace[] = { T, U, V, EOF_W };
	static const uint32_t expect[] = { F14_P, F14_A, F14_C, F14_P, F14_B, F14_A, F14_C,
					   F14_P, F14_B, F14_C, F14_EXIT };
	struct graph g;
	struct encoding enc;
	uint8_t nb[F14_NE];
	uint64_t val[F14_NE];
	uint32_t out[32], n, i;

	pg_fig14(&g, 0);
	fig14_emissions(nb, val, 1);
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, val,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	/* witness(P, A) = {t}; u and v lie beyond P->B */
	CU_ASSERT_EQUAL(next_of(&enc, F14_P, T), F14_PA);
	CU_ASSERT_EQUAL(next_of(&enc, F14_P, U), F14_PB);
	CU_ASSERT_EQUAL(next_of(&enc, F14_P, V), F14_PB);
	CU_ASSERT_EQUAL(next_of(&enc, F14_P, EOF_W), GRAPH_NONE);
	/* "u is a member of witness(C, P) but not witness(C, EXIT)" */
	CU_ASSERT_EQUAL(next_of(&enc, F14_C, U), F14_CP);
	CU_ASSERT_EQUAL(next_of(&enc, F14_C, EOF_W), F14_CEXIT);
	CU_ASSERT_EQUAL(next_of(&enc, F14_B, U), F14_BA);
	CU_ASSERT_EQUAL(next_of(&enc, F14_B, V), F14_BC);
	/* C reaches EXIT witness-free: no blocking property (single procedure only) */
	encoding_free(&enc);
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, val, 0, &enc), -PT_EINVAL);
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, val,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	n = fig15(&g, &enc, trace, 4, out, 32);
	CU_ASSERT_EQUAL_FATAL(n, sizeof(expect) / sizeof(expect[0]));
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(out[i], expect[i]);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * Without t, witness(P, A) = {u, v, EOF} and witness(P, B) = {u, v} meet,
 * and (P A C P B C EXIT) and (P B C EXIT) both write (v, EOF): refused.
 */
static void test_fig14_without_t(void)
{
	struct graph g;
	struct encoding enc;
	uint8_t nb[F14_NE];
	uint64_t val[F14_NE];

	pg_fig14(&g, 0);
	fig14_emissions(nb, val, 0);
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, val,
						ENC_F_SINGLE_PROCEDURE, &enc), -PT_EINVAL);
	graph_free(&g);
}

/*
 * Section 4.2: B contains a call. Blocking witnesses go first: P->B (the
 * last predicate before the call) and C->EXIT; B's own out-edges (a call
 * vertex is treated like a predicate) reach predicate C before any call or
 * EXIT, so they need none; the tree completes the rest.
 */
static unsigned int ceil_log2(uint32_t n)
{
	unsigned int b = 0;

	while ((1ull << b) < n)
		b++;
	return b;
}

static void test_fig14_multiprocedure(void)
{
	static const uint64_t w[F14_NE] = { 10, 10, 10, 10, 10, 10, 10 };
	struct graph g;
	struct encoding enc;
	uint32_t e, bad = 0;

	pg_fig14(&g, GRAPH_V_CALL);
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	CU_ASSERT_EQUAL(enc.edge_role[F14_PB], ENC_ROLE_BLOCKING);
	/* B's out-edges lead to predicate C first: no blocker, but the triangle B A C needs a chord */
	CU_ASSERT(enc.edge_role[F14_BA] != ENC_ROLE_BLOCKING);
	CU_ASSERT(enc.edge_role[F14_BC] != ENC_ROLE_BLOCKING);
	CU_ASSERT(enc.edge_role[F14_BA] == ENC_ROLE_CHORD || enc.edge_role[F14_BC] == ENC_ROLE_CHORD ||
		  enc.edge_role[F14_AC] == ENC_ROLE_CHORD);
	CU_ASSERT_EQUAL(enc.edge_role[F14_CEXIT], ENC_ROLE_BLOCKING);
	CU_ASSERT_EQUAL(encoding_check_blocking(&g, enc.edge_nbits, &bad), 0);
	/*
	 * equal weights: words prefix-free per predicate (row_words.c),
	 * never longer than the paper's ceil(log2(|Ewit| + 1)) bits
	 */
	for (e = 0; e < F14_NE; e++)
		CU_ASSERT(enc.edge_nbits[e] <= ceil_log2(enc.nwit + 1u));
	CU_ASSERT(enc.width >= 1 && enc.width <= ceil_log2(enc.nwit + 1u));
	encoding_free(&enc);
	graph_free(&g);
}

/* Fig. 16: the blocker sits right after the predicate, not before the call. */
static void test_blocker_far_from_call(void)
{
	/* 0 -> 1 | 4; 1 -> 2 -> 3(call) -> 4 -> EXIT(5) */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 4 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 5 } };
	static const uint32_t fl[6] = { [3] = GRAPH_V_CALL };
	static const uint64_t w[6] = { 5, 5, 5, 5, 5, 10 };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 6, e, 6, 0, 5, fl);
	/* the paper's placement: every blocker and chord, none dropped after */
	CU_ASSERT_FATAL(encoding_witness_flags(&g, w, ENC_F_TREE_ONLY, &enc) == 0);
	CU_ASSERT_EQUAL(enc.edge_role[0], ENC_ROLE_BLOCKING);	/* 0->1 */
	CU_ASSERT_EQUAL(enc.edge_role[2], ENC_ROLE_NONE);	/* 1->2 */
	CU_ASSERT_EQUAL(enc.edge_role[3], ENC_ROLE_NONE);	/* 2->3 */
	/* 0->4 reaches EXIT; 3->4 leaves the call for EXIT but cannot emit
	 * (its probe would fire before the call: 4 has two predecessors), so
	 * 4->EXIT blocks instead */
	CU_ASSERT_EQUAL(enc.edge_role[1], ENC_ROLE_BLOCKING);
	CU_ASSERT_EQUAL(enc.edge_role[4], ENC_ROLE_NONE);
	CU_ASSERT_EQUAL(enc.edge_role[5], ENC_ROLE_BLOCKING);
	CU_ASSERT_EQUAL(enc.nwit, 3);
	/*
	 * Words by context: predicate 0 chooses between 0->1 and 0->4, one bit;
	 * 4->EXIT is read where nothing else can come (after 0->4), one bit,
	 * and may share a word with either. A function-wide code needed 2 bits
	 * each (3 witnesses and the reserved word).
	 */
	CU_ASSERT_EQUAL(enc.width, 1);
	CU_ASSERT(enc.edge_nbits[0] == 1 && enc.edge_nbits[1] == 1 && enc.edge_nbits[5] == 1);
	CU_ASSERT(enc.edge_value[0] != enc.edge_value[1]);
	CU_ASSERT_EQUAL(enc.word_start[enc.pred_row[0] + 1] - enc.word_start[enc.pred_row[0]], 2);
	encoding_free(&enc);
	/*
	 * 0->4 blocks nothing 4->EXIT does not: without it predicate 0 reads
	 * 0->1 or 4->EXIT, and the call's way out still meets 4->EXIT before
	 * EXIT (witness_prune.c). The trace set keeps 2 of the 3.
	 */
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	CU_ASSERT_EQUAL(enc.nwit, 2);
	CU_ASSERT(enc.edge_nbits[0] && !enc.edge_nbits[1] && enc.edge_nbits[5]);
	CU_ASSERT_EQUAL(encoding_check_blocking(&g, enc.edge_nbits, NULL), 0);
	encoding_free(&enc);
	/* counted weights change nothing where a branch has two witnesses */
	{
		struct encoding_opts o = { .flags = ENC_F_TREE_ONLY, .code_weight = w };

		CU_ASSERT_FATAL(encoding_witness_opts(&g, w, &o, &enc) == 0);
		CU_ASSERT(enc.edge_nbits[0] == 1 && enc.edge_nbits[1] == 1 &&
			  enc.edge_nbits[5] == 1);
		CU_ASSERT_EQUAL(enc.width, 1);
	}
	encoding_free(&enc);
	graph_free(&g);
}

/* A call straight into a call vertex with another predecessor: refused. */
static void test_timing_refusal(void)
{
	/* 0 -> 1 | 2; 1(call) -> 2(call) -> 3 -> EXIT(4) */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 3 }, { 3, 4 } };
	static const uint32_t fl[5] = { [1] = GRAPH_V_CALL, [2] = GRAPH_V_CALL };
	static const uint64_t w[5] = { 1, 1, 1, 1, 1 };
	struct graph g;
	struct encoding enc;
	uint8_t nb[5] = { 0, 0, 1, 0, 0 };
	uint64_t val[5] = { 0, 0, 1, 0, 0 };

	pg_build(&g, 5, e, 5, 0, 4, fl);
	CU_ASSERT(!encoding_edge_can_emit(&g, 2));
	CU_ASSERT(encoding_edge_can_emit(&g, 3));
	CU_ASSERT_EQUAL(encoding_witness(&g, w, &enc), -PT_EREFUSED);
	CU_ASSERT_EQUAL(encoding_bits(&g, &enc), -PT_EREFUSED);
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_BITS, nb, val, ENC_F_SINGLE_PROCEDURE,
						&enc), -PT_EINVAL);
	/* with vertex emissions: entering 2 emits (before 2's call), from 0 or 1 */
	CU_ASSERT_FATAL(encoding_bits_flags(&g, ENC_F_VERTEX_EMIT, &enc) == 0);
	CU_ASSERT_EQUAL(enc.vertex_nbits[2], 1);
	CU_ASSERT_EQUAL(enc.edge_nbits[2], 0);
	CU_ASSERT_EQUAL(encoding_check_blocking_v(&g, enc.edge_nbits, enc.vertex_nbits, NULL), 0);
	CU_ASSERT_EQUAL(encoding_check_blocking(&g, enc.edge_nbits, NULL), -PT_EINVAL);
	encoding_free(&enc);
	CU_ASSERT_FATAL(encoding_witness_flags(&g, w, ENC_F_VERTEX_EMIT, &enc) == 0);
	CU_ASSERT(enc.vertex_nbits[2] != 0);
	CU_ASSERT_EQUAL(enc.wit_vertex[enc.vertex_code[2]], 2);
	CU_ASSERT_EQUAL(enc.edge_nbits[2], 0);
	/* predicate 0: toward 2's vertex witness along 0->2 (1 -> 2 passes 1's call) */
	CU_ASSERT_EQUAL(enc.next[(size_t)enc.pred_row[0] * (enc.nwit + 1) + enc.vertex_code[2]],
			enc.edge_nbits[1] ? GRAPH_NONE : 1);
	CU_ASSERT_EQUAL(encoding_check_blocking_v(&g, enc.edge_nbits, enc.vertex_nbits, NULL), 0);
	encoding_free(&enc);
	graph_free(&g);
}

/* Bit tracing: index codes at a multiway branch, separators between calls. */
static void test_bits(void)
{
	/* 0 -> 1|2|3; 1,2,3 -> 4(call) -> 5(call) -> 6 -> 7(call) -> 8 -> 9 | EXIT(10); 9 -> EXIT */
	static const uint32_t e[][2] = {
		{ 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 4 }, { 2, 4 }, { 3, 4 }, { 4, 5 },
		{ 5, 6 }, { 6, 7 }, { 7, 8 }, { 8, 9 }, { 8, 10 }, { 9, 10 },
	};
	static const uint32_t fl[11] = { [4] = GRAPH_V_CALL, [5] = GRAPH_V_CALL,
					 [7] = GRAPH_V_CALL };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 11, e, 13, 0, 10, fl);
	CU_ASSERT_FATAL(encoding_bits(&g, &enc) == 0);
	CU_ASSERT_EQUAL(enc.edge_nbits[0], 2);
	CU_ASSERT_EQUAL(enc.edge_value[0], 0);
	CU_ASSERT_EQUAL(enc.edge_value[1], 1);
	CU_ASSERT_EQUAL(enc.edge_value[2], 2);
	CU_ASSERT_EQUAL(enc.edge_nbits[3], 0);
	CU_ASSERT_EQUAL(enc.edge_role[6], ENC_ROLE_SEPARATOR);	/* call 4 -> call 5 */
	CU_ASSERT_EQUAL(enc.edge_role[7], ENC_ROLE_SEPARATOR);	/* call 5 -> 6 -> call 7 */
	CU_ASSERT_EQUAL(enc.edge_nbits[9], 0);			/* call 7 -> predicate 8 */
	CU_ASSERT_EQUAL(enc.edge_nbits[10], 1);
	CU_ASSERT_EQUAL(enc.edge_nbits[12], 0);
	CU_ASSERT_EQUAL(encoding_check_blocking(&g, enc.edge_nbits, NULL), 0);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * Emissions read back from a plan: witness words of different lengths
 * decode when prefix-free in reading order (LSB first); a word that is the
 * low bits of another is refused. A zero word is a word like any other.
 */
/* What a witness encoding costs at these site costs: its edge witnesses' and vertex witnesses'. */
static uint64_t witness_cost(const struct graph *g, const struct encoding *enc, const uint64_t *cost,
			     const uint64_t *vcost)
{
	uint64_t sum = 0;
	uint32_t e, v;

	for (e = 0; e < g->ne; e++)
		sum += enc->edge_nbits[e] ? cost[e] : 0;
	for (v = 0; enc->vertex_nbits && v < g->nv; v++)
		sum += enc->vertex_nbits[v] ? vcost[v] : 0;
	return sum;
}

/*
 * A loop whose two hot predicates (1, 2) branch into each other: every
 * edge between them is critical, observed by an int3 at its branch on
 * every run of the branch (site cost 10 x its block's runs). With the
 * blocks' entry costs (encoding_opts.vertex_cost), a predicate with
 * several predecessors takes a vertex witness (one probe at its entry)
 * where the chord would have cost such an int3; without them, an edge
 * witness on the chord.
 */
static void test_vertex_chord(void)
{
	enum { N_ENTRY, N_1, N_2, N_3, N_4, N_EXIT, NV };
	static const uint32_t edges[][2] = {
		{ N_ENTRY, N_1 }, { N_1, N_2 }, { N_1, N_3 }, { N_3, N_2 },
		{ N_3, N_4 }, { N_2, N_1 }, { N_2, N_4 }, { N_4, N_EXIT },
	};
	/* runs: 1 and 2 100 times, 3 50 times; a branch edge costs 10 x its source's runs */
	static const uint64_t cost[] = { 1, 1000, 1000, 500, 500, 1000, 1000, 1 };
	static const uint64_t vcost[NV] = { 1, 100, 100, 50, 2, UINT64_MAX };
	struct encoding_opts with = { .flags = ENC_F_VERTEX_EMIT | ENC_F_TREE_ONLY, .vertex_cost = vcost };
	struct encoding_opts without = { .flags = ENC_F_VERTEX_EMIT | ENC_F_TREE_ONLY };
	struct encoding a, b;
	struct graph g;
	uint32_t v, nvert = 0;

	pg_build(&g, NV, edges, sizeof(edges) / sizeof(edges[0]), N_ENTRY, N_EXIT, NULL);
	CU_ASSERT_EQUAL_FATAL(encoding_witness_opts(&g, cost, &with, &a), 0);
	CU_ASSERT_EQUAL_FATAL(encoding_witness_opts(&g, cost, &without, &b), 0);
	for (v = 0; v < NV; v++)
		nvert += a.vertex_nbits[v] != 0;
	/* only a merging predicate can: 1 (from ENTRY and 2) or 2 (from 1 and 3) */
	CU_ASSERT(nvert >= 1);
	CU_ASSERT(!a.vertex_nbits[N_ENTRY] && !a.vertex_nbits[N_3] && !a.vertex_nbits[N_4] &&
		  !a.vertex_nbits[N_EXIT]);
	for (v = 0; v < NV; v++)
		CU_ASSERT_EQUAL(b.vertex_nbits[v], 0);
	CU_ASSERT(witness_cost(&g, &a, cost, vcost) < witness_cost(&g, &b, cost, vcost));
	CU_ASSERT_EQUAL(a.nwit, b.nwit);	/* as many witnesses: one moved to a vertex */
	encoding_free(&a);
	encoding_free(&b);
	graph_free(&g);
}

static void test_prefix_words(void)
{
	/* 0 -> 1 | 2; 1, 2 -> EXIT(3) */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 } };
	uint8_t nb[4] = { 1, 2, 0, 0 };
	uint64_t good[4] = { 1, 2, 0, 0 }, prefix[4] = { 1, 3, 0, 0 }, zero[4] = { 0, 1, 0, 0 };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 4, e, 4, 0, 3, NULL);
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, good,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	CU_ASSERT_EQUAL(enc.word_min, 1);
	CU_ASSERT_EQUAL(enc.width, 2);
	CU_ASSERT(enc.edge_code[0] && enc.edge_code[1] && enc.edge_code[0] != enc.edge_code[1]);
	encoding_free(&enc);
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, prefix,
						ENC_F_SINGLE_PROCEDURE, &enc), -PT_EINVAL);
	nb[0] = 2;
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, zero,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	CU_ASSERT_EQUAL(enc.word_min, 2);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * Fig. 4's pipeless cycle {a->b, e->b, e->f, a->f} is neither a diamond
 * nor a directed cycle: Trace(Ewit) does not need it broken (Section 4.1),
 * though every spanning tree leaves one of its edges a chord. The planner
 * drops that witness (witness_prune.c), as the paper's Fig. 11 drops
 * counters for Vprof(Ecnt).
 */
static void test_pipeless_cycle(void)
{
	struct encoding tree, pruned;
	struct graph g;
	uint32_t e;

	pg_fig4(&g);
	CU_ASSERT_FATAL(encoding_witness_flags(&g, fig4_weight, ENC_F_TREE_ONLY, &tree) == 0);
	CU_ASSERT_FATAL(encoding_witness(&g, fig4_weight, &pruned) == 0);
	for (e = 0; e < F4_NE; e++)
		CU_ASSERT(!pruned.edge_nbits[e] || tree.edge_nbits[e]);
	CU_ASSERT_EQUAL(pruned.nwit + 1, tree.nwit);
	/* the tree's chord on the cycle (e->f, the cheapest) is gone: all four edges silent */
	CU_ASSERT(tree.edge_nbits[F4_EF] != 0);
	CU_ASSERT(!pruned.edge_nbits[F4_AB] && !pruned.edge_nbits[F4_AF] &&
		  !pruned.edge_nbits[F4_EB] && !pruned.edge_nbits[F4_EF]);
	CU_ASSERT_EQUAL(encoding_check_blocking(&g, pruned.edge_nbits, NULL), 0);
	encoding_free(&tree);
	encoding_free(&pruned);
	graph_free(&g);
}

/*
 * An endless loop without a branch or a call in it (1: pause; jmp 1b):
 * no predicate sees its cycle and the blocking check has no call to
 * block, yet without its witness the decoder would walk it forever
 * without a bit. Pruning keeps it.
 */
static void test_endless_loop(void)
{
	/* 0 -> 1 | EXIT(3); 1 -> 2 -> 1 */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 3 }, { 1, 2 }, { 2, 1 } };
	static const uint64_t w[4] = { 5, 5, 50, 50 };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 4, e, 4, 0, 3, NULL);
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	CU_ASSERT(enc.edge_nbits[2] || enc.edge_nbits[3]);
	encoding_free(&enc);
	/*
	 * A plan read back without that witness (a trace file's, however it
	 * came about) is refused: its decoder would walk the loop for ever.
	 */
	{
		static const uint8_t nb_without[4] = { 1, 1, 0, 0 }, nb_with[4] = { 2, 2, 0, 2 };
		static const uint64_t val_without[4] = { 0, 1, 0, 0 }, val_with[4] = { 0, 1, 0, 2 };

		CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb_without, val_without,
							0, &enc), -PT_EINVAL);
		CU_ASSERT_EQUAL_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb_with, val_with,
							      0, &enc), 0);
		encoding_free(&enc);
	}
	graph_free(&g);
}

UNIT_SUITE(witness,
	   { "an endless loop keeps its witness; a plan without it is refused", test_endless_loop },
	   { "Fig. 4: a pipeless cycle needs no witness", test_pipeless_cycle },
	   { "prefix-free witness words of several lengths; prefixes refused", test_prefix_words },
	   { "Fig. 14/15: witness sets and regeneration of (t, u, v, EOF)",
	     test_fig14_regeneration },
	   { "Fig. 14 without t: overlapping witness sets refused", test_fig14_without_t },
	   { "Section 4.2: Fig. 14 with a call in B", test_fig14_multiprocedure },
	   { "Fig. 16: blockers as far from the call as possible", test_blocker_far_from_call },
	   { "timing rule: emissions after a call only where observable", test_timing_refusal },
	   { "Section 6.2: bit tracing codes and separators", test_bits },
	   { "a merging predicate's vertex witness where a chord would be a hot int3", test_vertex_chord })
