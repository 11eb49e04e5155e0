// SPDX-License-Identifier: GPL-2.0
/*
 * The witness decoder (regen/decode_witness.c, the 1994 paper's Fig. 15)
 * by itself, on Fig. 14 (P A B C EXIT; P, B, C predicates): the execution
 * P A C P B A C P B C EXIT, written as the module writes it (each
 * emitting edge's word), comes back edge by edge, with B a plain vertex
 * and with B a call vertex (then the witnesses block the call); a stream
 * cut short runs out (-PT_ETRUNC); a word no witness ahead has is refused.
 */
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>

#include "decode_walk.h"
#include "paper_graphs.h"
#include "unit.h"

static const uint32_t walk14[] = { F14_PA, F14_AC, F14_CP, F14_PB, F14_BA, F14_AC,
				   F14_CP, F14_PB, F14_BC, F14_CEXIT };
#define NWALK14 (sizeof(walk14) / sizeof(walk14[0]))

static void fig14_func(struct graph *g, struct encoding *enc, struct regen_func *f,
		       uint32_t b_flags)
{
	static const uint64_t w[F14_NE] = { 1, 1, 1, 1, 1, 1, 1 };

	pg_fig14(g, b_flags);
	CU_ASSERT_FATAL(encoding_witness(g, w, enc) == 0);
	memset(f, 0, sizeof(*f));
	f->g = g;
	f->ops = &regen_decode_witness_ops;
	f->model = enc;
}

/* walk14's emissions into b; the number of emitting edges. */
static uint32_t emit_walk(const struct encoding *enc, struct dw_bits *b)
{
	uint32_t i, n = 0;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < NWALK14; i++) {
		uint32_t e = walk14[i];

		if (enc->edge_nbits[e]) {
			dw_emit(b, enc->edge_nbits[e], enc->edge_value[e]);
			n++;
		}
	}
	return n;
}

static void check_walk(uint32_t b_flags)
{
	struct encoding enc;
	struct regen_func f;
	struct dw_bits b;
	struct graph g;
	uint32_t nemit;

	fig14_func(&g, &enc, &f, b_flags);
	nemit = emit_walk(&enc, &b);
	CU_ASSERT(nemit >= 3);
	dw_check_walk(&f, &b, walk14, NWALK14);
	encoding_free(&enc);
	graph_free(&g);
}

static void test_fig14_walk(void)
{
	check_walk(0);
}

static void test_fig14_call_walk(void)
{
	check_walk(GRAPH_V_CALL);
}

/*
 * A code read ahead at a predicate is pending until its edge: the path to
 * it ran. After P B C (B's witness read at P, consumed on B->C), C reads
 * its own word; one its row does not have is refused.
 */
static void test_refusals(void)
{
	uint64_t state[REGEN_STATE_WORDS] = { 0 };
	struct regen_bitreader br;
	struct encoding enc;
	struct regen_func f;
	struct dw_bits b;
	struct graph g;
	uint32_t row, k, got[32];
	uint64_t pos, none = UINT64_MAX;
	int64_t partial = 0, e;
	unsigned int nbits = 0;

	fig14_func(&g, &enc, &f, 0);
	/* a word of C's width that C's row lacks */
	row = enc.pred_row[F14_C];
	CU_ASSERT_FATAL(row != GRAPH_NONE);
	for (nbits = enc.word_nbits[enc.word_start[row]], none = 0; none < 1ull << nbits; none++) {
		for (k = enc.word_start[row]; k < enc.word_start[row + 1]; k++)
			if (enc.word_nbits[k] == nbits && enc.word_value[k] == none)
				break;
		if (k == enc.word_start[row + 1])
			break;
	}
	CU_ASSERT_FATAL(none < 1ull << nbits);
	CU_ASSERT_FATAL(enc.edge_nbits[F14_BC] && !enc.edge_nbits[F14_PB]);
	memset(&b, 0, sizeof(b));
	dw_emit(&b, enc.edge_nbits[F14_BC], enc.edge_value[F14_BC]);
	dw_emit(&b, nbits, none);
	CU_ASSERT_EQUAL(dw_walk(&f, &b, 0, got, 32, &pos), -PT_EFORMAT);

	/* the pending code, step by step */
	memset(&br, 0, sizeof(br));
	br.bits = b.w;
	br.nbits = b.n;
	f.ops->begin(&f, state);
	CU_ASSERT(!f.ops->pending(&f, state));
	e = f.ops->next_edge(&f, state, &br, F14_P, &partial);
	CU_ASSERT_EQUAL(e, F14_PB);
	CU_ASSERT(f.ops->pending(&f, state));
	e = f.ops->next_edge(&f, state, &br, F14_B, &partial);
	CU_ASSERT_EQUAL(e, F14_BC);
	CU_ASSERT(!f.ops->pending(&f, state));
	CU_ASSERT_EQUAL(f.ops->next_edge(&f, state, &br, F14_C, &partial), -PT_EFORMAT);
	/* EXIT is no vertex to leave */
	CU_ASSERT_EQUAL(f.ops->next_edge(&f, state, &br, F14_EXIT, &partial), -PT_EFORMAT);
	encoding_free(&enc);
	graph_free(&g);
}

UNIT_SUITE(decode_witness,
	   { "Fig. 14: the execution comes back from its witnesses", test_fig14_walk },
	   { "Fig. 14, B a call vertex: the same from the blocking witnesses",
	     test_fig14_call_walk },
	   { "pending codes; a word no witness ahead has", test_refusals })
