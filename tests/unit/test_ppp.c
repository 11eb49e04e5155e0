// SPDX-License-Identifier: GPL-2.0
/*
 * Preferential path profiling: the paper's example (its Figure 3: paths
 * sacdt, sact, sbct get 0, 1, 2; sabct and sbcdt alias sacdt and sact and
 * the Ball-Larus register tells them apart), and on random graphs: ids of
 * interesting paths are unique, the chord increments give the same ids,
 * and classification is exact.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/pathnum.h>
#include <pathtrace/ppp.h>

#include "unit.h"

enum { S, A, B, C, D, T };

/* Figure 3's DAG with out-edges in the order that gives its Ball-Larus
 * numbers (sacdt 0, sact 1, sbcdt 4, sbct 5). */
static void fig3(struct graph *g)
{
	static const uint32_t e[][2] = {
		{ S, A }, { S, B }, { A, C }, { A, B }, { B, C }, { C, D }, { C, T }, { D, T },
	};
	uint32_t i;

	graph_init(g);
	for (i = 0; i < 6; i++)
		graph_add_vertex(g, 0);
	for (i = 0; i < 8; i++)
		graph_add_edge(g, e[i][0], e[i][1]);
	graph_finish(g, S, T);
}

/* The Ball-Larus number of a vertex sequence. */
static uint64_t bl_of(const struct pathnum *pn, const uint32_t *vs, uint32_t n)
{
	uint64_t s = 0;
	uint32_t i, k;

	for (i = 0; i + 1 < n; i++)
		for (k = pn->dag.out_start[vs[i]]; k < pn->dag.out_start[vs[i] + 1]; k++)
			if (pn->dag.edges[pn->dag.out_edges[k]].dst == vs[i + 1])
				s += pn->val[pn->dag.out_edges[k]];
	return s;
}

static void test_paper_example(void)
{
	static const uint32_t sacdt[] = { S, A, C, D, T }, sact[] = { S, A, C, T },
			      sbct[] = { S, B, C, T }, sabct[] = { S, A, B, C, T },
			      sbcdt[] = { S, B, C, D, T };
	struct graph g;
	struct pathnum pn;
	struct ppp pp;
	uint64_t I[3];

	fig3(&g);
	CU_ASSERT_EQUAL_FATAL(pathnum_build(&pn, &g, NULL, NULL), 0);
	CU_ASSERT_EQUAL(pn.npaths, 6);
	I[0] = bl_of(&pn, sacdt, 5);
	I[1] = bl_of(&pn, sact, 4);
	I[2] = bl_of(&pn, sbct, 4);
	/* Section 2.3: "The Ball-Larus identifiers ... are 0, 1 and 5" */
	CU_ASSERT(I[0] == 0 && I[1] == 1 && I[2] == 5);
	CU_ASSERT_EQUAL(bl_of(&pn, sbcdt, 5), 4);
	CU_ASSERT_EQUAL_FATAL(ppp_build(&pp, &pn, I, 3), 0);
	CU_ASSERT_EQUAL(pp.id[0], 0);
	CU_ASSERT_EQUAL(pp.id[1], 1);
	CU_ASSERT_EQUAL(pp.id[2], 2);
	CU_ASSERT_EQUAL(pp.min_id, 0);
	CU_ASSERT_EQUAL(pp.max_id, 2);
	CU_ASSERT(pp.gamma == 1.0);
	/* the weights of Figure 3(b) as computed by Figure 10 */
	CU_ASSERT_EQUAL(pp.w[1], 2);	/* s->b */
	CU_ASSERT_EQUAL(pp.w[4], -1);	/* b->c */
	CU_ASSERT_EQUAL(pp.w[6], 1);	/* c->t */
	CU_ASSERT_EQUAL(pp.w[0] | pp.w[2] | pp.w[3] | pp.w[5] | pp.w[7], 0);
	/* the aliases: sabct -> 0 (sacdt), sbcdt -> 1 (sact) */
	{
		uint32_t e[8];
		int n = pathnum_decode(&pn, bl_of(&pn, sabct, 5), e, 8);

		CU_ASSERT_EQUAL(ppp_path_id(&pp, e, n), 0);
		CU_ASSERT_EQUAL(ppp_classify(&pp, 0, bl_of(&pn, sabct, 5)), -1);
		n = pathnum_decode(&pn, 4, e, 8);
		CU_ASSERT_EQUAL(ppp_path_id(&pp, e, n), 1);
		CU_ASSERT_EQUAL(ppp_classify(&pp, 1, 4), -1);
	}
	CU_ASSERT_EQUAL(ppp_classify(&pp, 0, 0), 0);
	CU_ASSERT_EQUAL(ppp_classify(&pp, 1, 1), 1);
	CU_ASSERT_EQUAL(ppp_classify(&pp, 2, 5), 2);
	CU_ASSERT_EQUAL(ppp_classify(&pp, 3, 5), -1);
	ppp_free(&pp);
	/* refusals */
	I[1] = I[0];
	CU_ASSERT_EQUAL(ppp_build(&pp, &pn, I, 3), -PT_EINVAL);
	I[1] = 6;
	CU_ASSERT_EQUAL(ppp_build(&pp, &pn, I, 3), -PT_EINVAL);
	CU_ASSERT_EQUAL(ppp_build(&pp, &pn, I, 0), -PT_EINVAL);
	pathnum_free(&pn);
	graph_free(&g);
}

/* Random graphs, random interesting subsets: every property of ppp.h. */
static void test_random(void)
{
	unsigned int seed = (unsigned int)unit_seed(), t, graphs = 0;
	double worst = 1.0;

	srand(seed);
	for (t = 0; t < 1500; t++) {
		struct graph g;
		struct pathnum pn;
		struct ppp pp;
		uint32_t nv = 3 + rand() % 12, v, i, n = 0;
		uint64_t *I, id, limit;
		uint32_t e[64];

		graph_init(&g);
		for (v = 0; v < nv; v++)
			graph_add_vertex(&g, 0);
		for (v = 0; v + 1 < nv; v++) {
			graph_add_edge(&g, v, v + 1 + rand() % (nv - v - 1));
			if (rand() % 2)
				graph_add_edge(&g, v, rand() % nv);	/* loops too */
		}
		graph_finish(&g, 0, nv - 1);
		if (pathnum_build(&pn, &g, NULL, NULL)) {
			graph_free(&g);
			continue;
		}
		limit = pn.npaths < 200 ? pn.npaths : 200;
		I = malloc(limit * sizeof(*I));
		for (id = 0; id < limit; id++)
			if (rand() % 3 == 0)
				I[n++] = id;
		if (!n)
			I[n++] = limit - 1;
		if (ppp_build(&pp, &pn, I, n) == 0) {
			graphs++;
			if (pp.gamma > worst)
				worst = pp.gamma;
			for (id = 0; id < limit; id++) {
				int len = pathnum_decode(&pn, id, e, 64);
				int64_t pid = ppp_path_id(&pp, e, len), byinc = 0, want = -1;
				int k;

				for (k = 0; k < len; k++)
					byinc += pp.inc[e[k]];
				CU_ASSERT_EQUAL(byinc, pid);	/* same chords as Ball-Larus */
				for (i = 0; i < n; i++)
					if (I[i] == id)
						want = i;
				if (want >= 0)
					CU_ASSERT_EQUAL(pp.id[want], pid);
				CU_ASSERT_EQUAL(ppp_classify(&pp, pid, id), want);
			}
			for (i = 0; i < n; i++)	/* unique ids */
				CU_ASSERT_EQUAL(ppp_classify(&pp, pp.id[i], I[i]), i);
			ppp_free(&pp);
		}
		free(I);
		pathnum_free(&pn);
		graph_free(&g);
	}
	CU_ASSERT(graphs > 1000);
	fprintf(stderr, "[ppp: %u graphs, worst gamma %.2f, seed %u] ", graphs, worst, seed);
}

UNIT_SUITE(ppp,
	   { "paper example: 0, 1, 2 and aliases", test_paper_example },
	   { "random graphs: unique ids, exact classification", test_random })
