// SPDX-License-Identifier: GPL-2.0
/*
 * Witness words per row (encoding_internal.h): one word per witness,
 * prefix-free within each row of next[] it is in. The decoder reads a
 * witness's word at a predicate (pathregen's witness decoder), where only the
 * witnesses first met on the emission-free paths ahead can come next: a
 * row of next[]. So the words have to be prefix-free only within each row,
 * not over the whole function, and a witness can share its word with every
 * witness it never meets in a row. Where the 1994 paper spends
 * ceil(log2(|Ewit| + 1)) bits on every witness, a branch between two
 * witnesses then costs one bit.
 *
 * Lengths: Huffman over each row's weights (no word reserved, none under
 * 2^-ENC_WORD_SPREAD of the row's heaviest); a witness takes the longest
 * length its rows give it, so each row keeps sum(2^-len) <= 1. Words:
 * shortest first, each the first word in reading order that is no prefix
 * of, and has no prefix among, the words already given to the witnesses
 * that share a row with it; one bit longer when none of its length is
 * free, and another try when none of any length is (ASSIGN_TRIES).
 */
#include <stdlib.h>

#include <pathtrace/error.h>
#include <pathtrace/huffman.h>

#include "encoding_internal.h"

struct span {
	uint64_t lo, hi;	/* [lo, hi) of the words of one length, in reading order */
};

static int by_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Rows as lists of codes, and each code's rows. */
struct rows {
	uint32_t *start, *code;		/* npred + 1; members of row r: code[start[r] ..] */
	uint32_t *cstart, *crow;	/* nemit + 2; rows of code c: crow[cstart[c] ..] */
};

static void rows_free(struct rows *r)
{
	free(r->start);
	free(r->code);
	free(r->cstart);
	free(r->crow);
}

static int rows_build(const struct encoding *enc, struct rows *r)
{
	size_t cols = (size_t)enc->nwit + 1, n = 0;
	uint32_t row, c;

	r->start = calloc((size_t)enc->npred + 1, sizeof(*r->start));
	r->cstart = calloc((size_t)enc->nemit + 2, sizeof(*r->cstart));
	for (row = 0; r->start && r->cstart && row < enc->npred; row++)
		for (c = 1; c <= enc->nemit; c++)
			if (enc->next[row * cols + c] != GRAPH_NONE) {
				n++;
				r->cstart[c + 1]++;
			}
	r->code = malloc((n + 1) * sizeof(*r->code));
	r->crow = malloc((n + 1) * sizeof(*r->crow));
	if (!r->start || !r->cstart || !r->code || !r->crow)
		return -PT_ENOMEM;
	for (c = 1; c <= enc->nemit; c++)
		r->cstart[c + 1] += r->cstart[c];
	n = 0;
	for (row = 0; row < enc->npred; row++) {
		r->start[row] = (uint32_t)n;
		for (c = 1; c <= enc->nemit; c++)
			if (enc->next[row * cols + c] != GRAPH_NONE) {
				r->code[n++] = c;
				r->crow[r->cstart[c]++] = row;
			}
	}
	r->start[enc->npred] = (uint32_t)n;
	for (c = enc->nemit + 1; c > 1; c--)	/* cstart[c] had moved to c's end */
		r->cstart[c] = r->cstart[c - 1];
	r->cstart[1] = 0;
	return 0;
}

/* Per code, the longest Huffman length of any of its rows (1 in none). */
static int row_lengths(const struct rows *r, uint32_t npred, const uint64_t *weight,
		       uint32_t nemit, uint8_t *len)
{
	uint32_t row, i, most = 0;
	uint64_t *w;
	uint8_t *l;
	int err = 0;

	for (row = 0; row < npred; row++)
		if (r->start[row + 1] - r->start[row] > most)
			most = r->start[row + 1] - r->start[row];
	w = malloc(((size_t)most + 1) * sizeof(*w));
	l = malloc((size_t)most + 1);
	if (!w || !l) {
		free(w);
		free(l);
		return -PT_ENOMEM;
	}
	for (i = 1; i <= nemit; i++)
		len[i] = 1;
	for (row = 0; row < npred && !err; row++) {
		uint32_t m = r->start[row + 1] - r->start[row];
		const uint32_t *code = r->code + r->start[row];

		if (m < 2)
			continue;
		for (i = 0; i < m; i++)
			w[i] = weight ? weight[code[i] - 1] : 1;
		enc_spread_floor(w, m);
		err = huffman_lengths(w, m, l);
		for (i = 0; i < m && !err; i++)
			if (l[i] > len[code[i]])
				len[code[i]] = l[i];
	}
	free(w);
	free(l);
	return err;
}

struct order_key {
	const uint8_t *len, *early;	/* early: failed before, so words first */
};

static int by_len(const void *a, const void *b, void *arg)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct order_key *o = arg;

	if (o->early[x] != o->early[y])
		return o->early[x] > o->early[y] ? -1 : 1;
	if (o->len[x] != o->len[y])
		return o->len[x] < o->len[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The first free word of n bits in reading order, given the words of the
 * neighbours (nb of them, in reading order, with their lengths); 0 and *k
 * set, or -1 when all 2^n are taken. sp: room for nb spans.
 */
static int first_free(const uint64_t *nkey, const uint8_t *nlen, uint32_t nb, unsigned int n,
		      struct span *sp, uint64_t *k)
{
	uint64_t at = 0, end = n >= 64 ? ~0ull : 1ull << n;
	uint32_t i;

	for (i = 0; i < nb; i++) {
		if (nlen[i] <= n) {
			sp[i].lo = nkey[i] << (n - nlen[i]);
			sp[i].hi = (nkey[i] + 1) << (n - nlen[i]);
		} else {
			sp[i].lo = nkey[i] >> (nlen[i] - n);
			sp[i].hi = sp[i].lo + 1;
		}
	}
	qsort(sp, nb, sizeof(*sp), by_lo);
	for (i = 0; i < nb && sp[i].lo <= at; i++)
		if (sp[i].hi > at)
			at = sp[i].hi;
	if (at >= end)
		return -1;
	*k = at;
	return 0;
}

/* Scratch of one assignment: a witness's neighbours' words, in reading order. */
struct assign {
	const struct rows *r;
	const uint8_t *len;
	uint64_t *key, *nkey;
	uint8_t *nlen;
	struct span *sp;
};

/* Words in the given order (see the top); 0, or the code no word was free for. */
static uint32_t assign(struct assign *a, const uint32_t *order, uint32_t nemit, uint8_t *nbits,
		       uint64_t *value)
{
	const struct rows *r = a->r;
	uint32_t i, j, q;

	for (i = 0; i < nemit; i++)
		nbits[i] = 0;	/* not given yet */
	for (i = 0; i < nemit; i++) {
		uint32_t c = order[i], nb = 0;
		unsigned int n;
		uint64_t k = 0;

		/* the words of the witnesses that share a row with c, given so far */
		for (j = r->cstart[c]; j < r->cstart[c + 1]; j++) {
			uint32_t row = r->crow[j];

			for (q = r->start[row]; q < r->start[row + 1]; q++) {
				uint32_t y = r->code[q];

				if (y == c || !nbits[y - 1])
					continue;
				a->nkey[nb] = a->key[y];
				a->nlen[nb++] = nbits[y - 1];
			}
		}
		for (n = a->len[c]; n <= HUFFMAN_MAX_BITS; n++)
			if (!first_free(a->nkey, a->nlen, nb, n, a->sp, &k))
				break;
		if (n > HUFFMAN_MAX_BITS)
			return c;
		nbits[c - 1] = (uint8_t)n;
		a->key[c] = k;
		value[c - 1] = huffman_reading_order(k, n);	/* its own inverse */
	}
	return 0;
}

/*
 * Words given in order can box a witness in: rows it shares with two
 * others that took "0" and "1" leave it nothing. Such a witness goes
 * first on the next try, one bit longer; after ASSIGN_TRIES the caller
 * keeps one code over the function (bench-plan's module corpus: 2% of
 * witness plans boxed in on the first try, 0.11% after the last).
 */
#define ASSIGN_TRIES 8

int witness_context_words(const struct encoding *enc, const uint64_t *weight, uint8_t *nbits,
			  uint64_t *value)
{
	uint32_t nemit = enc->nemit, i, j, most = 0, boxed = 0, tries;
	uint8_t *len = calloc((size_t)nemit + 1, 1), *early = calloc((size_t)nemit + 1, 1);
	uint32_t *order = malloc(((size_t)nemit + 1) * sizeof(*order));
	struct order_key ok = { len, early };
	struct rows r = { 0 };
	struct assign a = { .r = &r, .len = len };
	int err;

	a.key = calloc((size_t)nemit + 1, sizeof(*a.key));
	if (!len || !early || !order || !a.key) {
		err = -PT_ENOMEM;
		goto out;
	}
	err = rows_build(enc, &r);
	if (!err)
		err = row_lengths(&r, enc->npred, weight, nemit, len);
	if (err)
		goto out;
	for (i = 1; i <= nemit; i++) {
		uint32_t deg = 0;

		for (j = r.cstart[i]; j < r.cstart[i + 1]; j++)
			deg += r.start[r.crow[j] + 1] - r.start[r.crow[j]];
		if (deg > most)
			most = deg;
		order[i - 1] = i;
	}
	a.nkey = malloc(((size_t)most + 1) * sizeof(*a.nkey));
	a.nlen = malloc((size_t)most + 1);
	a.sp = malloc(((size_t)most + 1) * sizeof(*a.sp));
	if (!a.nkey || !a.nlen || !a.sp) {
		err = -PT_ENOMEM;
		goto out;
	}
	for (tries = 0; tries < ASSIGN_TRIES; tries++) {
		qsort_r(order, nemit, sizeof(*order), by_len, &ok);
		boxed = assign(&a, order, nemit, nbits, value);
		if (!boxed)
			break;
		early[boxed] = 1;
		if (len[boxed] < HUFFMAN_MAX_BITS)
			len[boxed]++;	/* three that share rows pairwise need a 2-bit word */
	}
	err = boxed ? -PT_EOVERFLOW : 0;
out:
	rows_free(&r);
	free(len);
	free(early);
	free(order);
	free(a.key);
	free(a.nkey);
	free(a.nlen);
	free(a.sp);
	return err;
}
