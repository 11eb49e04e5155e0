// SPDX-License-Identifier: GPL-2.0
/*
 * Witness words by the last witness written (last_witness_words.c): the
 * rows the decoder reads next, the words per row shaped by the branch shares along the way,
 * one-bit words where only one witness can come, and the regenerator's
 * check of a plan's tables against its own.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/encoding.h>
#include <pathtrace/error.h>
#include <pathtrace/huffman.h>
#include <pathtrace_abi.h>

#include "paper_graphs.h"
#include "unit.h"

/* A row's words are prefix-free and name its members once each. */
static int row_ok(const struct encoding *enc, uint32_t row, const uint32_t *members, uint32_t m)
{
	uint32_t i, j, first = enc->ctx_start[row], end = enc->ctx_start[row + 1];

	if (end - first != m)
		return 0;
	for (i = 0; i < m; i++) {
		for (j = first; j < end && enc->ctx_code[j] != members[i]; j++)
			;
		if (j == end)
			return 0;
	}
	for (i = first; i < end; i++)
		for (j = first; j < end; j++) {
			uint8_t n = enc->ctx_nbits[i] < enc->ctx_nbits[j] ? enc->ctx_nbits[i] :
									    enc->ctx_nbits[j];

			if (i != j && ((enc->ctx_value[i] ^ enc->ctx_value[j]) &
				       ((1ull << n) - 1)) == 0)
				return 0;	/* one is a prefix of the other (LSB first) */
		}
	return 1;
}

/* The bits of code's word in row (0: none). */
static unsigned int word_bits(const struct encoding *enc, uint32_t row, uint32_t code)
{
	uint8_t nb = 0;
	uint64_t v;

	return encoding_ctx_word(enc, row, code, &nb, &v) ? 0 : nb;
}

/*
 * 0 -> 1 | 2 -> 3 -> 4 (-> 5) | 6 -> 7 -> EXIT(8): witnesses on both arms
 * of each branch, and one on 4 -> 5 right after the witness of 3 -> 4. Read
 * at 0 come codes 1, 2 (0->1, 0->2); after either, the read at 3 (codes 3,
 * 5: 3->4, 3->6); after 3->4 only 4->5 (code 4) can come; after 4->5 and
 * 3->6, EXIT.
 */
static const uint32_t chain_e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, 4 },
				       { 4, 5 }, { 3, 6 }, { 5, 7 }, { 6, 7 }, { 7, 8 } };

static const uint8_t chain_nb[10] = { 1, 1, 0, 0, 1, 1, 1, 0, 0, 0 };
static const uint64_t chain_val[10] = { 0, 1, 0, 0, 0, 1, 1, 0, 0, 0 };

static void chain_encoding(const struct graph *g, struct encoding *enc)
{
	CU_ASSERT_FATAL(encoding_from_emissions(g, PT_ENC_WITNESS, chain_nb, chain_val,
						ENC_F_SINGLE_PROCEDURE, enc) == 0);
}

static void chain(struct graph *g, struct encoding *enc)
{
	pg_build(g, 9, chain_e, 10, 0, 8, NULL);
	chain_encoding(g, enc);
}

static void test_next_rows(void)
{
	struct graph g;
	struct encoding enc;
	uint32_t next[6], r0, r3, m0[2] = { 1, 2 }, m3[2] = { 3, 5 }, forced;

	chain(&g, &enc);
	CU_ASSERT_FATAL(enc.nemit == 5);
	CU_ASSERT_EQUAL(enc.edge_code[4], 3);
	CU_ASSERT_EQUAL(enc.edge_code[5], 4);
	r0 = enc.pred_row[0];
	r3 = enc.pred_row[3];
	forced = enc.npred + 4 - 1;	/* only code 4 can come */
	CU_ASSERT_EQUAL_FATAL(encoding_ctx_next(&g, &enc, next), 0);
	CU_ASSERT_EQUAL(next[0], r0);		/* entry: the read at 0 */
	CU_ASSERT_EQUAL(next[1], r3);		/* 0->1: through 1 to the read at 3 */
	CU_ASSERT_EQUAL(next[2], r3);
	CU_ASSERT_EQUAL(next[3], forced);	/* 3->4: 4->5 comes before any predicate */
	CU_ASSERT_EQUAL(next[4], ENC_CTX_NONE);	/* 4->5: on to EXIT */
	CU_ASSERT_EQUAL(next[5], ENC_CTX_NONE);

	CU_ASSERT_EQUAL_FATAL(encoding_ctx_build(&g, &enc, NULL), 0);
	CU_ASSERT(!memcmp(enc.ctx_next, next, sizeof(next)));
	CU_ASSERT(row_ok(&enc, r0, m0, 2));
	CU_ASSERT(row_ok(&enc, r3, m3, 2));
	/* a row of one member: one bit, where the row-wide word is the witness's own */
	CU_ASSERT(row_ok(&enc, forced, (uint32_t[]){ 4 }, 1));
	CU_ASSERT_EQUAL(word_bits(&enc, forced, 4), 1);
	/* rows no code leads to have no words */
	CU_ASSERT_EQUAL(enc.ctx_start[enc.npred + 1] - enc.ctx_start[enc.npred], 0);
	CU_ASSERT_EQUAL(enc.ctx_start[enc.nctx_rows], 5);
	encoding_free(&enc);
	graph_free(&g);
}

/*
 * 0 -> 1 | 2, 1 -> 3 | 4, all to 5 -> EXIT(6): no witness on 0 -> 1, so the
 * read at 0 is one of 0->2, 1->3, 1->4 (codes 1, 2, 3), and how often each
 * comes is the product of the shares at 0 and at 1 along its path.
 */
static void test_rows_shaped_by_path_shares(void)
{
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 1, 4 },
					 { 2, 5 }, { 3, 5 }, { 4, 5 }, { 5, 6 } };
	static const uint8_t nb[8] = { 0, 2, 2, 2, 0, 0, 0, 0 };
	static const uint64_t val[8] = { 0, 0, 1, 2, 0, 0, 0, 0 };
	/*
	 * 0->2 likely at 0, though 1->3 ran more often in all (a loop below
	 * 1, say): 0->2's word is 1 bit; then 0->1 likely: 1->3's
	 */
	static const uint64_t w_left[8] = { 1, 1000, 100000, 1, 1, 1, 1, 1 };
	static const uint64_t w_deep[8] = { 1000, 1, 1000, 1, 1, 1, 1, 1 };
	struct graph g;
	struct encoding enc;
	uint32_t r;

	pg_build(&g, 7, e, 8, 0, 6, NULL);
	CU_ASSERT_FATAL(encoding_from_emissions(&g, PT_ENC_WITNESS, nb, val,
						ENC_F_SINGLE_PROCEDURE, &enc) == 0);
	r = enc.pred_row[0];
	CU_ASSERT_EQUAL_FATAL(encoding_ctx_build(&g, &enc, w_left), 0);
	CU_ASSERT(row_ok(&enc, r, (uint32_t[]){ 1, 2, 3 }, 3));
	CU_ASSERT_EQUAL(word_bits(&enc, r, 1), 1);
	CU_ASSERT_EQUAL(word_bits(&enc, r, 2), 2);
	CU_ASSERT_EQUAL(word_bits(&enc, r, 3), 2);
	/* by counts alone 1->3 would win both times: the shares on the way decide */
	CU_ASSERT_EQUAL_FATAL(encoding_ctx_build(&g, &enc, w_deep), 0);
	CU_ASSERT_EQUAL(word_bits(&enc, r, 2), 1);
	CU_ASSERT_EQUAL(word_bits(&enc, r, 1), 2);
	/* no weights: equal shares, 0->2 half the time */
	CU_ASSERT_EQUAL_FATAL(encoding_ctx_build(&g, &enc, NULL), 0);
	CU_ASSERT_EQUAL(word_bits(&enc, r, 1), 1);
	encoding_free(&enc);
	graph_free(&g);
}

/* The tables as a plan carries them: next rows and words sorted by (row, code). */
static uint32_t export(const struct encoding *enc, struct pt_ctx_word *w)
{
	uint32_t r, i, n = 0;

	for (r = 0; r < enc->nctx_rows; r++)
		for (i = enc->ctx_start[r]; i < enc->ctx_start[r + 1]; i++)
			w[n++] = (struct pt_ctx_word){ .row = r, .code = enc->ctx_code[i],
						       .value = (uint32_t)enc->ctx_value[i],
						       .nbits = enc->ctx_nbits[i] };
	return n;
}

static void test_bind_checks_the_plan(void)
{
	struct graph g;
	struct encoding built, read;
	struct pt_ctx_word w[16], bad[16];
	uint32_t next[6], badnext[6], n, i, r3;

	chain(&g, &built);
	CU_ASSERT_EQUAL_FATAL(encoding_ctx_build(&g, &built, NULL), 0);
	memcpy(next, built.ctx_next, sizeof(next));
	n = export(&built, w);
	CU_ASSERT_FATAL(n == 5 && n < 16);
	r3 = built.pred_row[3];

	chain_encoding(&g, &read);
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, w, n), 0);
	CU_ASSERT_EQUAL(read.ctx_start[read.nctx_rows], n);
	for (i = 0; i < read.nctx_rows; i++)
		CU_ASSERT_EQUAL(read.ctx_start[i], built.ctx_start[i]);
	CU_ASSERT(!memcmp(read.ctx_next, next, sizeof(next)));

	/* a next row the CFG does not give */
	memcpy(badnext, next, sizeof(next));
	badnext[3] = r3;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, badnext, 6, w, n), -PT_EINVAL);
	CU_ASSERT_PTR_NULL(read.ctx_next);	/* refused: no tables left behind */
	/* the wrong count of next rows */
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 5, w, n), -PT_EINVAL);
	/* a member without its word */
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, w, n - 1), -PT_EINVAL);
	/* a word for a code that is not in its row */
	memcpy(bad, w, sizeof(w));
	for (i = 0; i < n; i++)
		if (bad[i].row == r3 && bad[i].code == 5)
			bad[i].code = 1;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	/* two words of a row, one a prefix of the other */
	memcpy(bad, w, sizeof(w));
	for (i = 0; i < n; i++)
		if (bad[i].row == r3) {
			bad[i].nbits = bad[i].code == 3 ? 1 : 2;
			bad[i].value = bad[i].code == 3 ? 0 : 2;	/* "0" and "01" */
		}
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	/* a word of no bits, one too long, a value that does not fit */
	memcpy(bad, w, sizeof(w));
	bad[0].nbits = 0;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	bad[0].nbits = PT_CTX_WORD_MAX_BITS + 1;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	memcpy(bad, w, sizeof(w));
	bad[0].value = 1u << bad[0].nbits;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	/* words for a row no code leads to */
	memcpy(bad, w, sizeof(w));
	bad[n] = (struct pt_ctx_word){ .row = read.npred, .code = 1, .value = 0, .nbits = 1 };
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n + 1), -PT_EINVAL);
	/* reserved bytes */
	memcpy(bad, w, sizeof(w));
	bad[1].reserved1 = 1;
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, bad, n), -PT_EINVAL);
	/* and the good tables still bind after all that */
	CU_ASSERT_EQUAL(encoding_ctx_bind(&g, &read, next, 6, w, n), 0);
	encoding_free(&built);
	encoding_free(&read);
	graph_free(&g);
}

UNIT_SUITE(last_witness_words,
	   { "next rows: the predicate read next, a forced witness, EXIT", test_next_rows },
	   { "a row's words by the branch shares on the way to each witness",
	     test_rows_shaped_by_path_shares },
	   { "the regenerator refuses a plan's tables that its CFG does not give",
	     test_bind_checks_the_plan })
