// SPDX-License-Identifier: GPL-2.0
/*
 * Witness words per row (row_words.c): prefix-free within each
 * predicate's row, shared across rows, Kraft-complete per row with equal
 * weights, shaped by weights, and read back from a plan's emissions.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace_abi.h>

#include "paper_graphs.h"
#include "unit.h"

/* Sum over a row's words of 2^-nbits. */
static double row_kraft(const struct encoding *enc, uint32_t row)
{
	double k = 0;
	uint32_t i;

	for (i = enc->word_start[row]; i < enc->word_start[row + 1]; i++)
		k += 1.0 / (double)(1ull << enc->word_nbits[i]);
	return k;
}

/*
 * Two branches in sequence, each between two witnesses:
 * 0 -> 1 | 2 -> 3 -> 4 | 5 -> 6 -> EXIT(7). Read at 0, only 0->1 or 0->2
 * can come; read at 3, only 3->4 or 3->5.
 */
static const uint32_t two_e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 },
				     { 3, 4 }, { 3, 5 }, { 4, 6 }, { 5, 6 }, { 6, 7 } };

static void test_shared_words(void)
{
	uint8_t nb[9] = { 1, 1, 0, 0, 1, 1, 0, 0, 0 };
	uint64_t shared[9] = { 0, 1, 0, 0, 0, 1, 0, 0, 0 };
	uint64_t clash[9] = { 0, 1, 0, 0, 1, 1, 0, 0, 0 };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 8, two_e, 9, 0, 7, NULL);
	/* 0->1 and 3->4 both write a 0: never read at the same predicate */
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, shared,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	CU_ASSERT_EQUAL(enc.width, 1);
	CU_ASSERT_EQUAL(enc.word_start[enc.pred_row[0] + 1] - enc.word_start[enc.pred_row[0]], 2);
	CU_ASSERT_EQUAL(enc.word_start[enc.pred_row[3] + 1] - enc.word_start[enc.pred_row[3]], 2);
	CU_ASSERT(row_kraft(&enc, enc.pred_row[0]) == 1.0);
	encoding_free(&enc);
	/* 3->4 and 3->5 with one word: predicate 3 could not tell them apart */
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, clash,
						ENC_F_SINGLE_PROCEDURE, &enc), -PT_EINVAL);
	/* 0->1 a prefix ("0") of 0->2 ("00"): refused */
	nb[1] = 2;
	shared[1] = 0;
	CU_ASSERT_EQUAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, shared,
						ENC_F_SINGLE_PROCEDURE, &enc), -PT_EINVAL);
	graph_free(&g);
}

/*
 * The planner on two branches split by a call: 0 -> 1 | 2 -> 3(call) -> 4
 * -> 5 | 6 -> 7 -> EXIT(8). Each branch blocks (the call, EXIT) with its own
 * two witnesses: four witnesses, one bit each, where one code over the
 * function spent 2-3 bits on each.
 */
static void test_planner_blocked_branches(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 },
					 { 4, 5 }, { 4, 6 }, { 5, 7 }, { 6, 7 }, { 7, 8 } };
	static const uint32_t fl[9] = { [3] = GRAPH_V_CALL };
	static const uint64_t w[10] = { 5, 5, 5, 5, 10, 5, 5, 5, 5, 10 };
	struct graph g;
	struct encoding enc;
	uint32_t k;

	pg_build(&g, 9, e, 10, 0, 8, fl);
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	CU_ASSERT_EQUAL(enc.nwit, 4);
	CU_ASSERT_EQUAL(enc.width, 1);
	for (k = 0; k < g.ne; k++)
		CU_ASSERT(enc.edge_nbits[k] == (k == 0 || k == 1 || k == 5 || k == 6));
	CU_ASSERT(enc.edge_value[0] != enc.edge_value[1] && enc.edge_value[5] != enc.edge_value[6]);
	CU_ASSERT(row_kraft(&enc, enc.pred_row[0]) == 1.0 && row_kraft(&enc, enc.pred_row[4]) == 1.0);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * Reading ahead: 0 -> 1 | 2 -> 3 -> 4 | 5 -> 6 -> EXIT. The chord 2->3 and
 * the blockers 3->4, 3->5 (EXIT) are all read at 0 (0->1 -> 3 has no
 * witness), only the blockers at 3: the row at 0 is complete with 1+2+2
 * bits, and the chord, alone at its branch, gets the one-bit word.
 */
static void test_planner_read_ahead(void)
{
	static const uint64_t w[9] = { 9, 1, 9, 1, 1, 9, 1, 9, 10 };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 8, two_e, 9, 0, 7, NULL);
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	CU_ASSERT_EQUAL(enc.edge_role[3], ENC_ROLE_CHORD);
	CU_ASSERT_EQUAL(enc.edge_nbits[3], 1);
	CU_ASSERT(enc.edge_nbits[4] == 2 && enc.edge_nbits[5] == 2);
	CU_ASSERT_EQUAL(enc.word_start[enc.pred_row[0] + 1] - enc.word_start[enc.pred_row[0]], 3);
	CU_ASSERT(row_kraft(&enc, enc.pred_row[0]) == 1.0);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * A four-way choice 0 -> 1 | 2 | 3 | 4 -> EXIT(5) with a fifth path
 * 0 -> 5: equal weights give a complete code over the row (Kraft sum 1,
 * lengths 2 and 3); skewed ones give the heavy witness the shortest word.
 */
static void test_weights_shape_a_row(void)
{
	static const uint32_t e5[][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 0, 5 },
					  { 1, 5 }, { 2, 5 }, { 3, 5 }, { 4, 5 } };
	static const uint64_t w[9] = { 1000, 10, 10, 10, 10, 1000, 10, 10, 10 };
	struct encoding_opts o = { .code_weight = w };
	struct graph g;
	struct encoding enc;
	uint32_t row, e, heavy = GRAPH_NONE;

	pg_build(&g, 6, e5, 9, 0, 5, NULL);
	CU_ASSERT_FATAL(encoding_witness(&g, w, &enc) == 0);
	row = enc.pred_row[0];
	CU_ASSERT_FATAL(row != GRAPH_NONE);
	CU_ASSERT(row_kraft(&enc, row) > 0.999 && row_kraft(&enc, row) < 1.001);
	CU_ASSERT(enc.width <= 3);
	encoding_free(&enc);
	CU_ASSERT_FATAL(encoding_witness_opts(&g, w, &o, &enc) == 0);
	/* the witness on the way of 0 -> 1 -> 5 (0->1 or 1->5) is the likeliest */
	for (e = 0; e < g.ne; e++)
		if (enc.edge_nbits[e] && (e == 0 || e == 5))
			heavy = e;
	CU_ASSERT_FATAL(heavy != GRAPH_NONE);
	CU_ASSERT_EQUAL(enc.edge_nbits[heavy], 1);
	CU_ASSERT(row_kraft(&enc, enc.pred_row[0]) <= 1.0);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * Weights a billion to one: the rare witnesses' words stay within a few
 * bits of ENC_WORD_SPREAD (10) instead of growing to 32.
 */
static void test_weight_spread(void)
{
	static const uint32_t e5[][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 0, 5 },
					  { 1, 5 }, { 2, 5 }, { 3, 5 }, { 4, 5 } };
	static const uint64_t w[9] = { 1000000000000ull, 1, 1, 1, 1, 1000000000000ull, 1, 1, 1 };
	struct encoding_opts o = { .code_weight = w };
	struct graph g;
	struct encoding enc;

	pg_build(&g, 6, e5, 9, 0, 5, NULL);
	CU_ASSERT_FATAL(encoding_witness_opts(&g, w, &o, &enc) == 0);
	CU_ASSERT(enc.width >= 3 && enc.width <= 12);
	CU_ASSERT_EQUAL(enc.word_min, 1);
	encoding_free(&enc);
	graph_free(&g);
}

UNIT_SUITE(row_words,
	   { "words shared across predicates, prefix-free within one", test_shared_words },
	   { "planner: one bit a branch where a call splits them", test_planner_blocked_branches },
	   { "planner: words read ahead across a branch", test_planner_read_ahead },
	   { "a row's words: complete with equal weights, shaped by counts",
	     test_weights_shape_a_row },
	   { "skewed weights: no word past a few bits over the spread", test_weight_spread })
