// SPDX-License-Identifier: GPL-2.0
/*
 * The path-number decoder (regen/decode_paths.c) by itself. Its contract,
 * checked without its numbering's values: the numbers below the function's
 * path count decode one to one onto its paths (a DAG of three paths; Fig.
 * 1's loop, two numbers per walk around it, the walk P Q A R C P Q B R
 * EXIT among them), a PARTIAL sum adds to the number read, and numbers,
 * widths and positions no plan writes are refused.
 */
#include <stdio.h>
#include <string.h>

#include <pathtrace/error.h>

#include "decode_paths.h"
#include "decode_walk.h"
#include "paper_graphs.h"
#include "unit.h"

/* The walk goes edge by edge from the entry to EXIT. */
static int chained(const struct graph *g, const uint32_t *walk, uint32_t n)
{
	uint32_t v = g->entry, i;

	for (i = 0; i < n; i++) {
		if (walk[i] >= g->ne || g->edges[walk[i]].src != v)
			return 0;
		v = g->edges[walk[i]].dst;
	}
	return v == g->exit;
}

static void model_func(struct regen_func *f, const struct graph *g, struct paths_model **m)
{
	CU_ASSERT_FATAL(decode_paths_model(g, -1, m) == 0);
	memset(f, 0, sizeof(*f));
	f->g = g;
	f->ops = &regen_decode_paths_ops;
	f->model = *m;
}

/* ENTRY branches three ways, to EXIT directly (X, Y) or through W: three paths. */
enum { V_ENTRY, V_EXIT, V_X, V_Y, V_Z, V_W, NV };

static void test_dag_one_to_one(void)
{
	static const uint32_t e[][2] = {
		{ V_ENTRY, V_X }, { V_ENTRY, V_Y }, { V_ENTRY, V_Z },
		{ V_X, V_EXIT }, { V_Y, V_EXIT }, { V_Z, V_W }, { V_W, V_EXIT },
	};
	static const uint32_t paths[3][3] = { { 0, 3 }, { 1, 4 }, { 2, 5, 6 } };
	static const uint32_t plen[3] = { 2, 2, 3 };
	struct paths_model *m, *bad;
	uint32_t got[3][8], seen[3] = { 0 }, id, p;
	uint64_t state[REGEN_STATE_WORDS] = { 0 };
	struct regen_bitreader br;
	struct regen_func f;
	struct graph g;
	int64_t partial = 0;

	pg_build(&g, NV, e, 7, V_ENTRY, V_EXIT, NULL);
	model_func(&f, &g, &m);
	CU_ASSERT_EQUAL_FATAL(m->pn.npaths, 3);
	CU_ASSERT_EQUAL_FATAL(m->pn.width, 2);
	for (id = 0; id < 3; id++) {
		struct dw_bits b = { { 0 }, 0 };
		uint64_t pos;
		int64_t r;

		dw_emit(&b, 2, id);
		r = dw_walk(&f, &b, 0, got[id], 8, &pos);
		CU_ASSERT_FATAL(r > 0);
		CU_ASSERT_EQUAL(pos, 2);
		CU_ASSERT(chained(&g, got[id], (uint32_t)r));
		for (p = 0; p < 3; p++)
			if (r == plen[p] && !memcmp(got[id], paths[p], plen[p] * sizeof(uint32_t)))
				seen[p]++;
		/* the same number less a PARTIAL sum of 3 (mod 4) pending */
		memset(&b, 0, sizeof(b));
		dw_emit(&b, 2, (id + 1) & 3);
		{
			uint32_t again[8];

			CU_ASSERT_EQUAL(dw_walk(&f, &b, 3, again, 8, &pos), r);
			CU_ASSERT(!memcmp(again, got[id], (size_t)r * sizeof(uint32_t)));
		}
	}
	for (p = 0; p < 3; p++)
		CU_ASSERT_EQUAL(seen[p], 1);	/* each path exactly once */
	{
		struct dw_bits b = { { 0 }, 0 };
		uint64_t pos;

		dw_emit(&b, 2, 3);	/* beyond the paths */
		CU_ASSERT_EQUAL(dw_walk(&f, &b, 0, got[0], 8, &pos), -PT_EFORMAT);
		b.n = 1;		/* half a number */
		CU_ASSERT_EQUAL(dw_walk(&f, &b, 0, got[0], 8, &pos), -PT_ETRUNC);
	}
	/* EXIT has no out-edge to choose */
	memset(&br, 0, sizeof(br));
	f.ops->begin(&f, state);
	CU_ASSERT_EQUAL(f.ops->next_edge(&f, state, &br, V_EXIT, &partial), -PT_EINVAL);
	/* a number read is pending until its path ends */
	{
		struct dw_bits b = { { 0 }, 0 };

		dw_emit(&b, 2, 2);
		br.bits = b.w;
		br.nbits = b.n;
		CU_ASSERT(!f.ops->pending(&f, state));
		CU_ASSERT(f.ops->next_edge(&f, state, &br, V_ENTRY, &partial) >= 0);
		CU_ASSERT(f.ops->pending(&f, state));
	}
	/* a plan whose PATH_EMIT width is not the numbering's */
	CU_ASSERT_EQUAL(decode_paths_model(&g, 3, &bad), -PT_EFORMAT);
	CU_ASSERT_PTR_NULL(bad);
	decode_paths_model_free(m);
	graph_free(&g);
}

/*
 * Fig. 1 (entry P, back edge C->P): two numbers make every walk once
 * around the loop and out, P Q {A,B} R C P then P EXIT or P Q {A,B} R
 * EXIT; all (first, second) pairs that decode to such a walk give each
 * of the 2 x 3 walks exactly once.
 */
static void test_fig1_loop(void)
{
	static const uint32_t known[] = { F1_PQ, F1_QA, F1_AR, F1_RC, F1_CP,
					  F1_PQ, F1_QB, F1_BR, F1_REXIT };
	uint32_t walks[64][16], nwalks = 0, lens[64], a, c, w, known_seen = 0;
	struct paths_model *m;
	struct regen_func f;
	struct graph g;
	unsigned int width;

	pg_fig1(&g);
	model_func(&f, &g, &m);
	width = m->pn.width;
	CU_ASSERT_FATAL(width >= 2 && width <= 3);
	for (a = 0; a < 1u << width; a++) {
		for (c = 0; c < 1u << width; c++) {
			struct dw_bits b = { { 0 }, 0 };
			uint32_t got[16];
			uint64_t pos;
			int64_t r;

			dw_emit(&b, width, a);
			dw_emit(&b, width, c);
			r = dw_walk(&f, &b, 0, got, 16, &pos);
			if (r < 0) {
				/* beyond the paths; or around the loop again: a third number */
				CU_ASSERT(r == -PT_EFORMAT || r == -PT_ETRUNC);
				continue;
			}
			CU_ASSERT(chained(&g, got, (uint32_t)r));
			if (pos != 2 * width)
				continue;	/* one number: out at once */
			for (w = 0; w < nwalks; w++)
				if (lens[w] == r && !memcmp(walks[w], got, (size_t)r * sizeof(*got)))
					break;
			CU_ASSERT(w == nwalks);	/* no walk from two pairs */
			if (w < nwalks || nwalks == 64)
				continue;
			memcpy(walks[nwalks], got, (size_t)r * sizeof(*got));
			lens[nwalks++] = (uint32_t)r;
			known_seen += r == sizeof(known) / sizeof(known[0]) &&
				      !memcmp(got, known, sizeof(known));
		}
	}
	CU_ASSERT_EQUAL(nwalks, 6);
	CU_ASSERT_EQUAL(known_seen, 1);
	decode_paths_model_free(m);
	graph_free(&g);
}

UNIT_SUITE(decode_paths,
	   { "a DAG's numbers decode one to one onto its paths; refusals", test_dag_one_to_one },
	   { "Fig. 1: two numbers per walk around the loop, each walk once", test_fig1_loop })
