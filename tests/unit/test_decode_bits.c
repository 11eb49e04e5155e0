// SPDX-License-Identifier: GPL-2.0
/*
 * The bit-tracing decoder (regen/decode_bits.c) by itself: Fig. 1's loop
 * traced by bits (one bit per two-way branch, its out-edge's index) comes
 * back edge by edge; a hand-built encoding with a separator, a three-way
 * branch and a vertex emission is read and checked, and every bit string
 * that cannot come from it is refused.
 */
#include <stdio.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>

#include "decode_walk.h"
#include "paper_graphs.h"
#include "unit.h"

/* The index of edge e among its source's out-edges. */
static uint32_t out_index(const struct graph *g, uint32_t e)
{
	uint32_t v = g->edges[e].src, k;

	for (k = g->out_start[v]; k < g->out_start[v + 1]; k++)
		if (g->out_edges[k] == e)
			return k - g->out_start[v];
	return UINT32_MAX;
}

/* P Q A R C P Q B R EXIT: two trips through the loop, one by A, one by B. */
static void test_fig1_walk(void)
{
	static const uint32_t walk[] = { F1_PQ, F1_QA, F1_AR, F1_RC, F1_CP,
					 F1_PQ, F1_QB, F1_BR, F1_REXIT };
	const uint32_t n = sizeof(walk) / sizeof(walk[0]);
	struct encoding enc;
	struct regen_func f;
	struct dw_bits b;
	struct graph g;
	uint32_t i, nbranch = 0;

	pg_fig1(&g);
	CU_ASSERT_FATAL(encoding_bits(&g, &enc) == 0);
	memset(&f, 0, sizeof(f));
	f.g = &g;
	f.ops = &regen_decode_bits_ops;
	f.model = &enc;
	memset(&b, 0, sizeof(b));
	for (i = 0; i < n; i++) {
		uint32_t e = walk[i];

		if (graph_out_degree(&g, g.edges[e].src) < 2) {
			CU_ASSERT_EQUAL(enc.edge_nbits[e], 0);	/* no call: no separator */
			continue;
		}
		CU_ASSERT_EQUAL(enc.edge_nbits[e], 1);
		dw_emit(&b, 1, out_index(&g, e));
		nbranch++;
	}
	CU_ASSERT_EQUAL(nbranch, 6);
	CU_ASSERT_EQUAL(b.n, nbranch);
	dw_check_walk(&f, &b, walk, n);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * ENTRY -e0-> S, a three-way branch S -e1/e2/e3-> X Y Z, each on to EXIT
 * (Z through W). e0 carries a 3-bit separator of value 5, the branch 2
 * bits, and entering X emits 1 bit of value 1.
 */
enum { V_ENTRY, V_EXIT, V_S, V_X, V_Y, V_Z, V_W, NV };

static void hand_encoding(struct graph *g, struct encoding *enc, uint8_t *enb, uint64_t *ev,
			  uint8_t *vnb, uint64_t *vv)
{
	static const uint32_t e[][2] = {
		{ V_ENTRY, V_S }, { V_S, V_X }, { V_S, V_Y }, { V_S, V_Z },
		{ V_X, V_EXIT }, { V_Y, V_EXIT }, { V_Z, V_W }, { V_W, V_EXIT },
	};
	uint32_t k;

	pg_build(g, NV, e, 8, V_ENTRY, V_EXIT, NULL);
	memset(enc, 0, sizeof(*enc));
	memset(enb, 0, 8);
	memset(ev, 0, 8 * sizeof(*ev));
	memset(vnb, 0, NV);
	memset(vv, 0, NV * sizeof(*vv));
	enb[0] = 3;
	ev[0] = 5;
	for (k = 1; k <= 3; k++)
		enb[k] = 2;
	vnb[V_X] = 1;
	vv[V_X] = 1;
	enc->kind = PT_ENC_BITS;
	enc->nv = NV;
	enc->ne = 8;
	enc->edge_nbits = enb;
	enc->edge_value = ev;
	enc->vertex_nbits = vnb;
	enc->vertex_value = vv;
}

struct hand_case {
	unsigned int nbits[3];
	uint64_t value[3];
	int64_t want;		/* edges walked, or the refusal */
	uint32_t walk[4];
	uint64_t pos;
};

static void test_hand_encoding(void)
{
	static const struct hand_case cases[] = {
		/* separator 5, index 0 (S->X), X's vertex bit */
		{ { 3, 2, 1 }, { 5, 0, 1 }, 3, { 0, 1, 4 }, 6 },
		{ { 3, 2 }, { 5, 1 }, 3, { 0, 2, 5 }, 5 },
		{ { 3, 2 }, { 5, 2 }, 4, { 0, 3, 6, 7 }, 5 },
		/* no fourth out-edge */
		{ { 3, 2 }, { 5, 3 }, -PT_EFORMAT, { 0 }, 5 },
		/* a separator of another value */
		{ { 3, 2, 1 }, { 4, 0, 1 }, -PT_EFORMAT, { 0 }, 3 },
		/* X's vertex emission of another value */
		{ { 3, 2, 1 }, { 5, 0, 0 }, -PT_EFORMAT, { 0 }, 6 },
		/* the bits end in the separator, the branch, before the vertex bit */
		{ { 2 }, { 1 }, -PT_ETRUNC, { 0 }, 0 },
		{ { 3, 1 }, { 5, 0 }, -PT_ETRUNC, { 0 }, 3 },
		{ { 3, 2 }, { 5, 0 }, -PT_ETRUNC, { 0 }, 5 },
	};
	uint64_t ev[8], vv[NV];
	uint8_t enb[8], vnb[NV];
	struct encoding enc;
	struct regen_func f;
	struct graph g;
	uint32_t c, k;

	hand_encoding(&g, &enc, enb, ev, vnb, vv);
	memset(&f, 0, sizeof(f));
	f.g = &g;
	f.ops = &regen_decode_bits_ops;
	f.model = &enc;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct hand_case *hc = &cases[c];
		uint32_t got[8];
		struct dw_bits b;
		uint64_t pos;
		int64_t r;

		memset(&b, 0, sizeof(b));
		for (k = 0; k < 3; k++)
			dw_emit(&b, hc->nbits[k], hc->value[k]);
		r = dw_walk(&f, &b, 0, got, 8, &pos);
		CU_ASSERT_EQUAL(r, hc->want);
		if (r != hc->want)
			fprintf(stderr, "decode_bits: case %u: %lld, not %lld\n", c, (long long)r,
				(long long)hc->want);
		if (r > 0)
			CU_ASSERT(!memcmp(got, hc->walk, (size_t)r * sizeof(*got)));
		if (r != -PT_ETRUNC)
			CU_ASSERT_EQUAL(pos, hc->pos);
	}
	graph_free(&g);
}

UNIT_SUITE(decode_bits,
	   { "Fig. 1 traced by bits comes back edge by edge", test_fig1_walk },
	   { "separators, a three-way branch, vertex bits; refusals", test_hand_encoding })
