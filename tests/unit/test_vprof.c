// SPDX-License-Identifier: GPL-2.0
/*
 * Vprof(Ecnt): the Fig. 11 heuristic on Fig. 4 (cost 59, only e->f's
 * counter removed, through the pipeless cycle {a->b, e->b, e->f, a->f}),
 * the Fig. 8 vertex counts, and Fig. 4(a)'s 124 for vertex counters found
 * by an independent brute-force oracle (linear algebra over the flows).
 */
#include <math.h>
#include <string.h>

#include <pathtrace/eprof.h>
#include <pathtrace/error.h>

#include "paper_graphs.h"
#include "unit.h"

static void test_fig4c_heuristic(void)
{
	struct graph g;
	struct counters c;
	uint64_t cnt[F4_NE], vert[F4_NV];
	static const uint64_t truth[F4_NV] = {
		[F4_A] = 6, [F4_B] = 53, [F4_C] = 43, [F4_D] = 22, [F4_E] = 53,
		[F4_F] = 6, [F4_G] = 3, [F4_H] = 3, [F4_EXIT] = 6,
	};
	uint32_t k, e, removed = 0;

	pg_fig4(&g);
	CU_ASSERT_FATAL(vprof_place(&g, fig4_weight, &c) == 0);
	CU_ASSERT_EQUAL(c.cost, 59);
	for (e = 0; e < F4_NE; e++)
		removed += c.removed[e];
	CU_ASSERT_EQUAL(removed, 1);
	CU_ASSERT(c.removed[F4_EF]);
	CU_ASSERT(c.in_tree[F4_AB] && c.in_tree[F4_EB] && c.in_tree[F4_AF]);
	for (k = 0; k < c.ncounters; k++)
		cnt[k] = fig4_weight[c.edge[k]];
	CU_ASSERT_FATAL(vprof_counts(&g, &c, cnt, NULL, vert) == 0);
	for (k = 0; k < F4_NV; k++)
		CU_ASSERT_EQUAL(vert[k], truth[k]);
	/* a placement without edge counts cannot give edges */
	CU_ASSERT_EQUAL(eprof_counts(&g, &c, cnt, NULL, vert, NULL), -PT_EINVAL);
	counters_free(&c);
	graph_free(&g);
}

/* Rank of rows (n columns) by Gaussian elimination; entries are small integers. */
static int rank_of(double (*m)[16], int rows, int n)
{
	double a[32][16];
	int r = 0, c, i, j, p;

	memcpy(a, m, sizeof(double) * 16 * rows);
	for (c = 0; c < n && r < rows; c++) {
		for (p = r; p < rows && fabs(a[p][c]) < 1e-9; p++)
			;
		if (p == rows)
			continue;
		for (j = 0; j < n; j++) {
			double t = a[r][j];

			a[r][j] = a[p][j];
			a[p][j] = t;
		}
		for (i = 0; i < rows; i++) {
			double f = a[i][c] / a[r][c];

			if (i == r || fabs(a[i][c]) < 1e-9)
				continue;
			for (j = 0; j < n; j++)
				a[i][j] -= f * a[r][j];
		}
		r++;
	}
	return r;
}

/*
 * Fig. 4(a): the cheapest set of vertex counters from which every vertex
 * count follows for every execution. A vertex's count is a linear function
 * of the flow; a set determines all counts iff adding the others' functions
 * does not raise the rank. The flows are the null space of the incidence
 * matrix (with EXIT->a), computed here by elimination.
 */
static void test_fig4a_vertex_counters(void)
{
	struct graph g;
	double inc[F4_NV][16], basis[16][16], fn[F4_NV][16], rows[32][16];
	int pivcol[F4_NV], npiv = 0, nb = 0, ne = F4_NE + 1, r, c, i, j;
	uint64_t vw[F4_NV] = { 0 }, best = UINT64_MAX;
	uint32_t s, k;

	pg_fig4(&g);
	memset(inc, 0, sizeof(inc));
	for (k = 0; k <= F4_NE; k++) {
		uint32_t src = k == F4_NE ? F4_EXIT : g.edges[k].src;
		uint32_t dst = k == F4_NE ? F4_A : g.edges[k].dst;

		inc[dst][k] += 1;
		inc[src][k] -= 1;
		if (k < F4_NE)
			vw[dst] += fig4_weight[k];
	}
	vw[F4_A] += 6;
	/* reduced row echelon form of the incidence matrix */
	for (c = 0, r = 0; c < ne && r < F4_NV; c++) {
		int p;

		for (p = r; p < F4_NV && fabs(inc[p][c]) < 1e-9; p++)
			;
		if (p == F4_NV)
			continue;
		for (j = 0; j < ne; j++) {
			double t = inc[r][j];

			inc[r][j] = inc[p][j];
			inc[p][j] = t;
		}
		for (j = ne - 1; j >= 0; j--)
			inc[r][j] /= inc[r][c];
		for (i = 0; i < F4_NV; i++) {
			double f = inc[i][c];

			if (i == r || fabs(f) < 1e-9)
				continue;
			for (j = 0; j < ne; j++)
				inc[i][j] -= f * inc[r][j];
		}
		pivcol[npiv++] = c;
		r++;
	}
	for (c = 0; c < ne; c++) {
		for (i = 0; i < npiv && pivcol[i] != c; i++)
			;
		if (i < npiv)
			continue;
		memset(basis[nb], 0, sizeof(basis[nb]));
		basis[nb][c] = 1;
		for (i = 0; i < npiv; i++)
			basis[nb][pivcol[i]] = -inc[i][c];
		nb++;
	}
	CU_ASSERT_EQUAL(nb, ne - (F4_NV - 1));
	/* count of v on basis flow b: inflow of v */
	for (k = 0; k < F4_NV; k++) {
		for (i = 0; i < nb; i++) {
			fn[k][i] = k == F4_A ? basis[i][F4_NE] : 0;
			for (j = 0; j < F4_NE; j++)
				if (g.edges[j].dst == k)
					fn[k][i] += basis[i][j];
		}
	}
	for (s = 0; s < (1u << F4_NV); s++) {
		int n = 0, rs, ra;
		uint64_t cost = 0;

		for (k = 0; k < F4_NV; k++) {
			if (s & (1u << k)) {
				memcpy(rows[n++], fn[k], sizeof(fn[k]));
				cost += vw[k];
			}
		}
		if (cost >= best)
			continue;
		rs = n ? rank_of(rows, n, nb) : 0;
		for (k = 0; k < F4_NV; k++)
			memcpy(rows[n + k], fn[k], sizeof(fn[k]));
		ra = rank_of(rows, n + F4_NV, nb);
		if (rs == ra)
			best = cost;
	}
	CU_ASSERT_EQUAL(best, 124);	/* 53 + 43 + 22 + 2 * 3 */
	graph_free(&g);
}

/* Parallel edges form a pipeless 2-cycle: one of their counters goes. */
static void test_parallel_edges(void)
{
	static const uint32_t e[4][2] = { { 0, 1 }, { 0, 1 }, { 1, 2 }, { 0, 2 } };
	static const uint64_t w[4] = { 10, 4, 9, 1 };
	struct graph g;
	struct counters c;
	uint64_t cnt[4], vert[3];
	uint32_t k;

	pg_build(&g, 3, e, 4, 0, 2, NULL);
	CU_ASSERT_FATAL(vprof_place(&g, w, &c) == 0);
	CU_ASSERT(c.removed[1]);
	CU_ASSERT_EQUAL(c.ncounters, 2);	/* 1->2 and 0->2 */
	for (k = 0; k < c.ncounters; k++)
		cnt[k] = c.edge[k] == 3 ? 2 : 3;	/* 3x 0->1->2 (either 0->1), 2x 0->2 */
	CU_ASSERT_FATAL(vprof_counts(&g, &c, cnt, NULL, vert) == 0);
	CU_ASSERT_EQUAL(vert[0], 5);
	CU_ASSERT_EQUAL(vert[1], 3);
	CU_ASSERT_EQUAL(vert[2], 5);
	counters_free(&c);
	graph_free(&g);
}

UNIT_SUITE(vprof,
	   { "Fig. 4(c): heuristic cost 59, vertex counts", test_fig4c_heuristic },
	   { "Fig. 4(a): vertex counters cost 124 (oracle)", test_fig4a_vertex_counters },
	   { "parallel edges: pipeless 2-cycle", test_parallel_edges })
