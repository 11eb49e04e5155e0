// SPDX-License-Identifier: GPL-2.0
/*
 * Eprof(Ecnt): the paper's Fig. 4(b) placement and cost, the Fig. 5(a)
 * propagation order, the Fig. 7 early-exit error and its correction, and
 * refusal of counts no execution can produce.
 */
#include <string.h>

#include <pathtrace/eprof.h>
#include <pathtrace/error.h>

#include "paper_graphs.h"
#include "unit.h"

/* Fig. 4(b): cost 22 + 21 + 10 + 3*3 = 62 with |E| - (|V| - 1) counters. */
static void test_fig4b_cost(void)
{
	static const uint32_t chords[] = { F4_CE, F4_BE, F4_DE, F4_EF, F4_FG, F4_FH };
	struct graph g;
	struct counters c;
	uint32_t i;

	pg_fig4(&g);
	CU_ASSERT_FATAL(eprof_place(&g, fig4_weight, &c) == 0);
	CU_ASSERT_EQUAL(c.cost, 62);
	CU_ASSERT_EQUAL(c.ncounters, (F4_NE + 1) - (F4_NV - 1));
	for (i = 0; i < sizeof(chords) / sizeof(chords[0]); i++)
		CU_ASSERT(c.counter[chords[i]] != GRAPH_NONE);
	/* the unmeasured a->f comes from f's flow law: f->g + f->h - e->f */
	CU_ASSERT(c.in_tree[F4_AF]);
	counters_free(&c);
	graph_free(&g);
}

/* Treating Fig. 4's weights as an execution's counts: every edge comes back. */
static void test_fig4_propagation(void)
{
	struct graph g;
	struct counters c;
	uint64_t cnt[F4_NE], edges[F4_NE], act = 0;
	uint32_t k, e;

	pg_fig4(&g);
	CU_ASSERT_FATAL(eprof_place(&g, fig4_weight, &c) == 0);
	for (k = 0; k < c.ncounters; k++)
		cnt[k] = fig4_weight[c.edge[k]];
	CU_ASSERT_FATAL(eprof_counts(&g, &c, cnt, NULL, edges, &act) == 0);
	for (e = 0; e < F4_NE; e++)
		CU_ASSERT_EQUAL(edges[e], fig4_weight[e]);
	CU_ASSERT_EQUAL(act, 6);	/* a = f = EXIT = g + h */
	CU_ASSERT_EQUAL(edges[F4_AF], edges[F4_FG] + edges[F4_FH] - edges[F4_EF]);
	counters_free(&c);
	graph_free(&g);
}

/*
 * Fig. 5(a)/Fig. 7 on the Fig. 1 loop: counters on P->Q, Q->A (and the two
 * exits). The execution P Q A stops at A (divide by zero): without the
 * early-exit edge the flow law gives A->R a count of one; with it, zero.
 */
static void test_fig7_early_exit(void)
{
	static const uint64_t w[F1_NE] = {
		[F1_PQ] = 1, [F1_PEXIT] = 1, [F1_QA] = 1, [F1_REXIT] = 1,
		[F1_QB] = 10, [F1_AR] = 10, [F1_BR] = 10, [F1_RC] = 10, [F1_CP] = 10,
	};
	struct graph g;
	struct counters c;
	uint64_t cnt[F1_NE], edges[F1_NE], early[F1_NV] = { 0 }, act = 0;
	uint32_t k, e;

	pg_fig1(&g);
	CU_ASSERT_FATAL(eprof_place(&g, w, &c) == 0);
	CU_ASSERT_EQUAL(c.ncounters, 4);
	CU_ASSERT(c.counter[F1_PQ] != GRAPH_NONE && c.counter[F1_QA] != GRAPH_NONE);
	CU_ASSERT(c.in_tree[F1_QB] && c.in_tree[F1_BR] && c.in_tree[F1_AR]);
	for (k = 0; k < c.ncounters; k++)
		cnt[k] = c.edge[k] == F1_PQ || c.edge[k] == F1_QA;
	/* Fig. 7(a): the propagation believes Kirchhoff's law and is off by one */
	CU_ASSERT_FATAL(eprof_counts(&g, &c, cnt, NULL, edges, &act) == 0);
	CU_ASSERT_EQUAL(edges[F1_AR], 1);
	/* Fig. 7(b): the edge A->EXIT with count one siphons the flow off */
	early[F1_A] = 1;
	CU_ASSERT_FATAL(eprof_counts(&g, &c, cnt, early, edges, &act) == 0);
	for (e = 0; e < F1_NE; e++)
		CU_ASSERT_EQUAL(edges[e], e == F1_PQ || e == F1_QA);
	CU_ASSERT_EQUAL(act, 1);
	counters_free(&c);
	graph_free(&g);
}

/* Counts that break the flow law are refused, not repaired. */
static void test_refuses_impossible_counts(void)
{
	static const uint64_t w[F1_NE] = {
		[F1_PQ] = 1, [F1_PEXIT] = 1, [F1_QA] = 1, [F1_REXIT] = 1,
		[F1_QB] = 10, [F1_AR] = 10, [F1_BR] = 10, [F1_RC] = 10, [F1_CP] = 10,
	};
	struct graph g;
	struct counters c;
	uint64_t cnt[F1_NE], edges[F1_NE];
	uint32_t k;

	pg_fig1(&g);
	CU_ASSERT_FATAL(eprof_place(&g, w, &c) == 0);
	/* Q->A taken more often than Q was entered: Q->B would be negative */
	for (k = 0; k < c.ncounters; k++)
		cnt[k] = c.edge[k] == F1_QA ? 5 : 0;
	CU_ASSERT_EQUAL(eprof_counts(&g, &c, cnt, NULL, edges, NULL), -PT_EINVAL);
	counters_free(&c);
	graph_free(&g);
}

UNIT_SUITE(eprof,
	   { "Fig. 4(b): cost 62", test_fig4b_cost },
	   { "Fig. 4/5: propagation recovers every edge", test_fig4_propagation },
	   { "Fig. 7: early exit error and correction", test_fig7_early_exit },
	   { "impossible counts refused", test_refuses_impossible_counts })
