// SPDX-License-Identifier: GPL-2.0
/*
 * Section 5 heuristic weighting. Expected weights are worked out by hand
 * from the paper's rules (1)-(3), not taken from the implementation.
 */
#include <pathtrace/error.h>
#include <pathtrace/weight.h>

#include "paper_graphs.h"
#include "unit.h"

#define W(x) ((uint64_t)((x) * (double)WEIGHT_ONE + 0.5))

/* Flow law at every vertex, with EXIT->ENTRY weighing WEIGHT_ONE. */
static void assert_kirchhoff(const struct graph *g, const uint64_t *w)
{
	uint32_t v, k;

	for (v = 0; v < g->nv; v++) {
		uint64_t in = v == g->entry ? WEIGHT_ONE : 0, out = v == g->exit ? WEIGHT_ONE : 0;

		for (k = g->in_start[v]; k < g->in_start[v + 1]; k++)
			in += w[g->in_edges[k]];
		for (k = g->out_start[v]; k < g->out_start[v + 1]; k++)
			out += w[g->out_edges[k]];
		CU_ASSERT_EQUAL(in, out);
	}
}

/*
 * The Fig. 1 loop (while P { Q: if A else B; R: if break; C }): P weighs 1,
 * its two loop exits share it (1/2 each), P->Q gets 10 - 1/2, the branches
 * of Q split it, R passes 9.5 - 1/2 on to C and back to P.
 */
static void test_while_with_break(void)
{
	struct graph g;
	uint64_t w[F1_NE];
	uint8_t back[F1_NE], exits[F1_NE];

	pg_fig1(&g);
	CU_ASSERT_FATAL(weight_heuristic(&g, w) == 0);
	CU_ASSERT_EQUAL(w[F1_PEXIT], W(0.5));
	CU_ASSERT_EQUAL(w[F1_REXIT], W(0.5));
	CU_ASSERT_EQUAL(w[F1_PQ], W(9.5));
	CU_ASSERT_EQUAL(w[F1_QA], W(4.75));
	CU_ASSERT_EQUAL(w[F1_QB], W(4.75));
	CU_ASSERT_EQUAL(w[F1_AR], W(4.75));
	CU_ASSERT_EQUAL(w[F1_BR], W(4.75));
	CU_ASSERT_EQUAL(w[F1_RC], W(9));
	CU_ASSERT_EQUAL(w[F1_CP], W(9));
	assert_kirchhoff(&g, w);
	CU_ASSERT_FATAL(weight_loops(&g, back, exits) == 0);
	CU_ASSERT(back[F1_CP] && !back[F1_PQ]);
	CU_ASSERT(exits[F1_PEXIT] && exits[F1_REXIT] && !exits[F1_RC]);
	graph_free(&g);
}

/*
 * Priors split what rule (3) hands out: the same loop with Q's branch to A
 * given prior 3 and to B prior 1 splits P->Q's 9.5 as 7.125 / 2.375; rule
 * (2)'s loop exits keep their share; all-equal priors are the plain
 * heuristic.
 */
static void test_priors(void)
{
	struct graph g;
	uint64_t w[F1_NE], plain[F1_NE];
	double prior[F1_NE];
	uint32_t e;

	pg_fig1(&g);
	for (e = 0; e < F1_NE; e++)
		prior[e] = 1.0;
	CU_ASSERT_FATAL(weight_heuristic(&g, plain) == 0);
	CU_ASSERT_FATAL(weight_heuristic_prior(&g, prior, w) == 0);
	for (e = 0; e < F1_NE; e++)
		CU_ASSERT_EQUAL(w[e], plain[e]);
	prior[F1_QA] = 3.0;
	CU_ASSERT_FATAL(weight_heuristic_prior(&g, prior, w) == 0);
	CU_ASSERT_EQUAL(w[F1_PEXIT], W(0.5));
	CU_ASSERT_EQUAL(w[F1_PQ], W(9.5));
	CU_ASSERT_EQUAL(w[F1_QA], W(7.125));
	CU_ASSERT_EQUAL(w[F1_QB], W(2.375));
	CU_ASSERT_EQUAL(w[F1_RC], W(9));
	assert_kirchhoff(&g, w);
	graph_free(&g);
}

/* Nested loops multiply: the inner body runs LOOP_MULTIPLIER^2 times. */
static void test_nested_loops(void)
{
	/* 0 -> H1; H1 -> H2 | EXIT; H2 -> B | L; B -> H2; L -> H1 */
	enum { EN, H1, H2, B, L, X };
	static const uint32_t e[][2] = {
		{ EN, H1 }, { H1, H2 }, { H1, X }, { H2, B }, { H2, L }, { B, H2 }, { L, H1 },
	};
	struct graph g;
	uint64_t w[7];

	pg_build(&g, 6, e, 7, EN, X, NULL);
	CU_ASSERT_FATAL(weight_heuristic(&g, w) == 0);
	CU_ASSERT_EQUAL(w[0], W(1));
	CU_ASSERT_EQUAL(w[2], W(1));	/* the outer loop's only exit */
	CU_ASSERT_EQUAL(w[1], W(9));	/* 10 * 1 - 1 */
	CU_ASSERT_EQUAL(w[4], W(9));	/* the inner loop's exit gets its entry's 9 */
	CU_ASSERT_EQUAL(w[3], W(81));	/* 10 * 9 - 9 */
	CU_ASSERT_EQUAL(w[5], W(81));
	CU_ASSERT_EQUAL(w[6], W(9));
	assert_kirchhoff(&g, w);
	graph_free(&g);
}

/* An irreducible cycle has no back edge (no header dominates it) and no multiplier. */
static void test_irreducible(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 1 }, { 1, 3 } };
	struct graph g;
	uint64_t w[5];
	uint8_t back[5];
	uint32_t i;

	pg_build(&g, 4, e, 5, 0, 3, NULL);
	CU_ASSERT_FATAL(weight_heuristic(&g, w) == 0);
	CU_ASSERT_FATAL(weight_loops(&g, back, NULL) == 0);
	for (i = 0; i < 5; i++) {
		CU_ASSERT(!back[i]);
		CU_ASSERT(w[i] > 0 && w[i] <= W(1));
	}
	graph_free(&g);
}

static void test_exact(void)
{
	struct graph g;
	static const uint64_t cnt[F1_NE] = { 3, 1, 2, 1, 2, 1, 3, 0, 3 };
	uint64_t w[F1_NE];
	uint32_t i;

	pg_fig1(&g);
	CU_ASSERT_FATAL(weight_exact(&g, cnt, w) == 0);
	for (i = 0; i < F1_NE; i++)
		CU_ASSERT_EQUAL(w[i], cnt[i] * WEIGHT_ONE);
	CU_ASSERT_EQUAL(weight_exact(&g, NULL, w), -PT_EINVAL);
	graph_free(&g);
}

UNIT_SUITE(weight,
	   { "while loop with break (Fig. 1 shape)", test_while_with_break },
	   { "branch priors split rule (3)'s share", test_priors },
	   { "nested loops multiply", test_nested_loops },
	   { "irreducible cycle", test_irreducible },
	   { "exact weighting", test_exact })
