// SPDX-License-Identifier: GPL-2.0
/*
 * Witness words by the last witness written (encoding.h; FORMAT.md,
 * "Witness words by context"): a word per context row, the row named by the witness
 * the module wrote last. After a witness, the decoder's walk is fixed up
 * to its next read: the first predicate on it (its row of next[]), or the
 * one witness whose emission the walk meets first, or EXIT. So the module
 * can know the row of the word it writes next from the witness it wrote
 * last (ctx_next[], and the entry's for an activation's first word), and a
 * word has to be prefix-free only among that row's words, sized by that
 * row's weights: the row-wide words of row_words.c give a witness the
 * longest length any of its rows needs, these give it what each row
 * needs, and a witness that is the only one its context allows costs one
 * bit.
 *
 * Rows: 0..npred-1 the predicates' rows, npred + c - 1 the row where only
 * code c can come. Only rows some ctx_next[] names get words.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/huffman.h>

#include "encoding_internal.h"

/*
 * The row of the decoder's first read on the walk from v (vertex_first:
 * entering v, whose vertex emission comes first), or ENC_CTX_NONE when
 * the walk meets EXIT (or runs on without a read: an emission-free loop).
 */
static uint32_t walk_row(const struct graph *g, const struct encoding *enc, uint32_t v,
			 int vertex_first)
{
	uint32_t steps, e;

	for (steps = 0; steps <= g->nv; steps++) {
		if (vertex_first && enc->vertex_nbits && enc->vertex_nbits[v])
			return enc->npred + enc->vertex_code[v] - 1;
		vertex_first = 1;
		if (v == g->exit || g->out_start[v + 1] == g->out_start[v])
			return ENC_CTX_NONE;
		if (g->out_start[v + 1] - g->out_start[v] >= 2)
			return enc->pred_row[v];
		e = g->out_edges[g->out_start[v]];
		if (enc->edge_nbits[e])
			return enc->npred + enc->edge_code[e] - 1;
		v = g->edges[e].dst;
	}
	return ENC_CTX_NONE;
}

int encoding_ctx_next(const struct graph *g, const struct encoding *enc, uint32_t *next)
{
	uint32_t c;

	if (enc->kind != PT_ENC_WITNESS || !enc->pred_row || !enc->wit_edge)
		return -PT_EINVAL;
	next[0] = walk_row(g, enc, g->entry, 1);
	for (c = 1; c <= enc->nemit; c++) {
		uint32_t e = enc->wit_edge[c];

		if (e != GRAPH_NONE)
			next[c] = walk_row(g, enc, g->edges[e].dst, 1);
		else
			next[c] = walk_row(g, enc, enc->wit_vertex[c], 0);
		if (next[c] != ENC_CTX_NONE && next[c] >= enc->npred + enc->nemit)
			return -PT_EINVAL;
	}
	return 0;
}

/* The members of context row r (codes, ascending); returns how many. */
static uint32_t row_members(const struct encoding *enc, uint32_t r, uint32_t *code)
{
	size_t cols = (size_t)enc->nwit + 1;
	uint32_t c, n = 0;

	if (r >= enc->npred) {
		code[0] = r - enc->npred + 1;
		return 1;
	}
	for (c = 1; c <= enc->nemit; c++)
		if (enc->next[r * cols + c] != GRAPH_NONE)
			code[n++] = c;
	return n;
}

struct cword {
	uint32_t row, code;
	uint8_t nbits;
	uint64_t value, key;	/* key: the word in reading order, left-aligned */
};

static int by_row_word(const void *a, const void *b)
{
	const struct cword *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->nbits != y->nbits)
		return x->nbits < y->nbits ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

static int by_row_key(const void *a, const void *b)
{
	const struct cword *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->nbits < y->nbits ? -1 : x->nbits > y->nbits;
}

/*
 * Installs next[] and the words w[0..n) (any order) as the encoding's
 * context tables, after checking them against its rows: each row next[]
 * names has one word for each of its members and nothing else, prefix-free
 * among them; no other row has words. Takes next. Returns 0, -PT_EINVAL,
 * -PT_ENOMEM.
 */
static int ctx_install(struct encoding *enc, uint32_t *next, struct cword *w, uint32_t n)
{
	uint32_t nrows = enc->npred + enc->nemit, i, j, r, m;
	uint32_t *code = malloc(((size_t)enc->nemit + 1) * sizeof(*code));
	uint8_t *named = calloc((size_t)nrows + 1, 1);
	int err = -PT_EINVAL;

	enc_ctx_free(enc);
	enc->ctx_next = next;
	enc->nctx_rows = nrows;
	enc->ctx_start = calloc((size_t)nrows + 1, sizeof(*enc->ctx_start));
	enc->ctx_nbits = malloc((size_t)n + 1);
	enc->ctx_value = malloc(((size_t)n + 1) * sizeof(*enc->ctx_value));
	enc->ctx_code = malloc(((size_t)n + 1) * sizeof(*enc->ctx_code));
	if (!code || !named || !enc->ctx_start || !enc->ctx_nbits || !enc->ctx_value ||
	    !enc->ctx_code) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (i = 0; i <= enc->nemit; i++)
		if (next[i] != ENC_CTX_NONE)
			named[next[i]] = 1;
	for (i = 0; i < n; i++) {
		if (w[i].row >= nrows || !named[w[i].row] || !w[i].nbits ||
		    w[i].nbits > PT_CTX_WORD_MAX_BITS || (w[i].value >> w[i].nbits))
			goto out;
		w[i].key = huffman_reading_order(w[i].value, 64);
	}
	/* prefix-free within each row: in reading order a prefix sorts right before */
	qsort(w, n, sizeof(*w), by_row_key);
	for (i = 1; i < n; i++)
		if (w[i].row == w[i - 1].row &&
		    (w[i].key & (~0ull << (64 - w[i - 1].nbits))) == w[i - 1].key)
			goto out;
	qsort(w, n, sizeof(*w), by_row_word);
	for (i = 0, r = 0; r < nrows; r++) {
		enc->ctx_start[r] = i;
		if (!named[r])
			continue;
		m = row_members(enc, r, code);
		for (j = 0; j < m; j++) {
			uint32_t k;

			/* the row's words name each member once */
			for (k = i; k < n && w[k].row == r && w[k].code != code[j]; k++)
				;
			if (k == n || w[k].row != r)
				goto out;
		}
		for (j = 0; i < n && w[i].row == r; i++, j++) {
			enc->ctx_nbits[i] = w[i].nbits;
			enc->ctx_value[i] = w[i].value;
			enc->ctx_code[i] = w[i].code;
		}
		if (j != m)
			goto out;
	}
	enc->ctx_start[nrows] = i;
	err = i == n ? 0 : -PT_EINVAL;
out:
	free(code);
	free(named);
	if (err) {
		next = NULL;	/* freed by enc_ctx_free */
		enc_ctx_free(enc);
	}
	return err;
}

/*
 * How often a read at predicate v (row r) is code c, relative to the
 * row's other members: the product of the branch shares (edge weight over
 * the weight of its source's out-edges; equal shares without weights)
 * along the one emission-free path from v to c's emission, scaled to
 * 2^30. A code's count over the whole function says little about one
 * row: a loop's exit witness is rare at the loop test and certain after
 * it.
 */
static uint64_t flow_weight(const struct graph *g, const struct encoding *enc,
			    const uint64_t *edge_weight, uint32_t v, uint32_t c)
{
	size_t cols = (size_t)enc->nwit + 1;
	double share = 1.0;
	uint32_t steps, e, k;

	for (steps = 0; steps <= g->nv; steps++) {
		uint32_t first = g->out_start[v], deg = g->out_start[v + 1] - first;

		if (deg >= 2) {
			double sum = 0;

			if (enc->pred_row[v] == GRAPH_NONE)
				break;
			e = enc->next[enc->pred_row[v] * cols + c];
			if (e == GRAPH_NONE)
				break;
			for (k = first; k < first + deg; k++)
				sum += edge_weight ? (double)edge_weight[g->out_edges[k]] : 1.0;
			share *= sum > 0 ? (edge_weight ? (double)edge_weight[e] : 1.0) / sum :
				 1.0 / deg;
		} else if (deg == 1) {
			e = g->out_edges[first];
		} else {
			break;
		}
		if (enc->wit_edge[c] == e || enc->wit_vertex[c] == g->edges[e].dst)
			break;
		v = g->edges[e].dst;
	}
	share *= (double)(1u << 30);
	return share >= 1.0 ? (uint64_t)share : 1;
}

/* Canonical words for lengths len[0..m) (prefix-free, LSB first). */
static void canonical(const uint8_t *len, uint32_t m, uint32_t *order, uint64_t *value)
{
	uint64_t key = 0;
	uint32_t i, j;
	uint8_t prev = 0;

	for (i = 0; i < m; i++)
		order[i] = i;
	for (i = 1; i < m; i++)	/* insertion sort by (len, index): rows are short */
		for (j = i; j > 0 && len[order[j - 1]] > len[order[j]]; j--) {
			uint32_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		uint32_t s = order[i];

		if (i)
			key = (key + 1) << (len[s] - prev);
		prev = len[s];
		value[s] = huffman_reading_order(key, len[s]);
	}
}

int encoding_ctx_build(const struct graph *g, struct encoding *enc, const uint64_t *edge_weight)
{
	uint32_t *row_vertex = NULL, v;
	uint32_t nrows = enc->npred + enc->nemit, r, i, m, n = 0, most = 1;
	uint32_t *next = malloc(((size_t)enc->nemit + 1) * sizeof(*next));
	uint8_t *named = calloc((size_t)nrows + 1, 1), *len = NULL;
	uint32_t *code = NULL, *order = NULL;
	uint64_t *w = NULL, *val = NULL;
	struct cword *cw = NULL;
	size_t total = 0;
	int err = -PT_ENOMEM;

	if (!next || !named)
		goto out;
	err = encoding_ctx_next(g, enc, next);
	if (err)
		goto out;
	for (i = 0; i <= enc->nemit; i++)
		if (next[i] != ENC_CTX_NONE)
			named[next[i]] = 1;
	err = -PT_ENOMEM;
	code = malloc(((size_t)enc->nemit + 1) * sizeof(*code));
	if (!code)
		goto out;
	for (r = 0; r < nrows; r++)
		if (named[r]) {
			m = row_members(enc, r, code);
			total += m;
			if (m > most)
				most = m;
		}
	cw = malloc((total + 1) * sizeof(*cw));
	row_vertex = malloc(((size_t)enc->npred + 1) * sizeof(*row_vertex));
	if (!row_vertex)
		goto out;
	for (v = 0; v < g->nv; v++)
		if (enc->pred_row[v] != GRAPH_NONE && enc->pred_row[v] < enc->npred)
			row_vertex[enc->pred_row[v]] = v;
	order = malloc(((size_t)most + 1) * sizeof(*order));
	w = malloc(((size_t)most + 1) * sizeof(*w));
	val = malloc(((size_t)most + 1) * sizeof(*val));
	len = malloc((size_t)most + 1);
	if (!cw || !order || !w || !val || !len)
		goto out;
	err = 0;
	for (r = 0; r < nrows && !err; r++) {
		if (!named[r])
			continue;
		m = row_members(enc, r, code);
		if (!m)		/* only entry witnesses come: no bits are read */
			continue;
		for (i = 0; i < m; i++)
			w[i] = r < enc->npred ?
			       flow_weight(g, enc, edge_weight, row_vertex[r], code[i]) : 1;
		enc_spread_floor(w, m);
		err = huffman_lengths(w, m, len);	/* one member: 1 bit */
		if (err)
			break;
		canonical(len, m, order, val);
		for (i = 0; i < m; i++)
			cw[n++] = (struct cword){ r, code[i], len[i], val[i], 0 };
	}
	if (!err) {
		err = ctx_install(enc, next, cw, n);
		next = NULL;	/* taken, or freed */
	}
out:
	free(row_vertex);
	free(next);
	free(named);
	free(code);
	free(order);
	free(w);
	free(val);
	free(len);
	free(cw);
	return err;
}

int encoding_ctx_bind(const struct graph *g, struct encoding *enc, const uint32_t *next,
		      uint32_t nnext, const struct pt_ctx_word *words, uint32_t nwords)
{
	uint32_t *mine = malloc(((size_t)enc->nemit + 1) * sizeof(*mine));
	struct cword *cw = malloc(((size_t)nwords + 1) * sizeof(*cw));
	uint32_t i;
	int err = -PT_ENOMEM;

	enc_ctx_free(enc);	/* refused or not, no earlier tables stay */
	if (!mine || !cw)
		goto fail;
	err = -PT_EINVAL;
	if (nnext != enc->nemit + 1 || encoding_ctx_next(g, enc, mine))
		goto fail;
	/* the plan's rows must be the ones this CFG and these emissions give */
	if (memcmp(mine, next, (size_t)nnext * sizeof(*mine)))
		goto fail;
	for (i = 0; i < nwords; i++) {
		if (!words[i].code || words[i].code > enc->nemit || words[i].reserved0 ||
		    words[i].reserved1)
			goto fail;
		cw[i] = (struct cword){ words[i].row, words[i].code, words[i].nbits,
					words[i].value, 0 };
	}
	err = ctx_install(enc, mine, cw, nwords);
	free(cw);
	return err;
fail:
	free(mine);
	free(cw);
	return err;
}

int encoding_ctx_word(const struct encoding *enc, uint32_t row, uint32_t code, uint8_t *nbits,
		      uint64_t *value)
{
	uint32_t i;

	if (!enc->ctx_next || row >= enc->nctx_rows)
		return -PT_EINVAL;
	for (i = enc->ctx_start[row]; i < enc->ctx_start[row + 1]; i++)
		if (enc->ctx_code[i] == code) {
			*nbits = enc->ctx_nbits[i];
			*value = enc->ctx_value[i];
			return 0;
		}
	return -PT_EINVAL;
}
