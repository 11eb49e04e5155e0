// SPDX-License-Identifier: GPL-2.0
/*
 * huffman - length-limited prefix codes with a reserved all-zero word
 * (huffman.h). Code lengths by Huffman's two-queue merge over the symbols
 * plus one reserved symbol of weight 0 (the least, so its word is one of
 * the longest); canonical codes in order of length, complemented so that
 * the reserved symbol, last, gets the all-zero word; each word reversed
 * so that its first bit is the first one written (LSB first).
 */
#include <stdlib.h>

#include <pathtrace/error.h>
#include <pathtrace/huffman.h>

/* Weights are scaled down under this, so that sums of 2^32 of them fit. */
#define WEIGHT_MAX (1ull << 30)

struct leaf {
	uint64_t w;
	uint32_t sym;
};

static int by_weight(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return x->sym < y->sym ? 1 : x->sym > y->sym ? -1 : 0;	/* the lower index merges last */
}

/*
 * The Huffman tree of w[0..m-1] (m >= 2): node i < m is leaf lv[i], nodes
 * m .. 2m-2 are merges, each after its children, the root last. Sets
 * depth[node]; returns the deepest leaf's depth.
 */
static unsigned int huffman_depths(const uint64_t *w, uint32_t m, struct leaf *lv, uint64_t *nw,
				   uint32_t *parent, unsigned int *depth)
{
	uint32_t i, q1 = 0, q2 = m, next = m;
	unsigned int deepest = 0;

	for (i = 0; i < m; i++)
		lv[i] = (struct leaf){ w[i], i };
	qsort(lv, m, sizeof(*lv), by_weight);
	for (i = 0; i < m; i++)
		nw[i] = lv[i].w;
	while (next < 2 * m - 1) {
		uint32_t pick[2], k;

		for (k = 0; k < 2; k++) {
			if (q1 < m && (q2 == next || nw[q1] <= nw[q2]))
				pick[k] = q1++;
			else
				pick[k] = q2++;
		}
		nw[next] = nw[pick[0]] + nw[pick[1]];
		parent[pick[0]] = parent[pick[1]] = next++;
	}
	depth[2 * m - 2] = 0;
	for (i = 2 * m - 2; i-- > 0;) {
		depth[i] = depth[parent[i]] + 1;
		if (i < m && depth[i] > deepest)
			deepest = depth[i];
	}
	return deepest;
}

uint64_t huffman_reading_order(uint64_t v, unsigned int n)
{
	/* all 64 bits reversed (pairs, nibbles, bytes), then the low n's moved down */
	v = (v >> 1 & 0x5555555555555555ull) | (v & 0x5555555555555555ull) << 1;
	v = (v >> 2 & 0x3333333333333333ull) | (v & 0x3333333333333333ull) << 2;
	v = (v >> 4 & 0x0f0f0f0f0f0f0f0full) | (v & 0x0f0f0f0f0f0f0f0full) << 4;
	v = __builtin_bswap64(v);
	return n ? v >> (64 - (n < 64 ? n : 64)) : 0;
}

/*
 * Length-limited Huffman lengths of m symbols into len[m]: the n = m or
 * m - 1 real ones by weight[] (scaled under WEIGHT_MAX, each above 0),
 * and with reserve the last one of weight 0. Returns 0 or -PT_ENOMEM.
 */
static int limited_lengths(const uint64_t *weight, uint32_t m, int reserve, uint8_t *len)
{
	uint32_t n = reserve ? m - 1 : m, i;
	uint64_t *w = malloc(m * sizeof(*w)), *nw = malloc(2 * (size_t)m * sizeof(*nw)), top = 0;
	unsigned int shift = 0;
	uint32_t *parent = malloc(2 * (size_t)m * sizeof(*parent));
	unsigned int *depth = malloc(2 * (size_t)m * sizeof(*depth));
	struct leaf *lv = malloc(m * sizeof(*lv));
	int err = -PT_ENOMEM;

	if (!w || !nw || !parent || !depth || !lv)
		goto out;
	for (i = 0; i < n; i++)
		top = weight[i] > top ? weight[i] : top;
	while (top >> shift > WEIGHT_MAX)
		shift++;	/* scaled, not clamped: heavy weights keep their ratios */
	for (i = 0; i < n; i++)
		w[i] = (weight[i] >> shift) + 1;
	if (reserve)
		w[n] = 0;	/* the reserved word */
	while (huffman_depths(w, m, lv, nw, parent, depth) > HUFFMAN_MAX_BITS)
		for (i = 0; i < n; i++)	/* flatten, keeping every real symbol above 0 */
			w[i] = (w[i] >> 1) | 1;
	for (i = 0; i < m; i++)
		len[lv[i].sym] = (uint8_t)depth[i];
	err = 0;
out:
	free(w);
	free(nw);
	free(parent);
	free(depth);
	free(lv);
	return err;
}

struct canon {
	uint8_t len;
	uint32_t sym;
};

static int by_length(const void *a, const void *b)
{
	const struct canon *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

int huffman_code(const uint64_t *weight, uint32_t n, uint8_t *nbits, uint64_t *value)
{
	uint32_t m = n + 1, i;
	uint64_t code = 0;
	uint8_t *len = NULL;
	struct canon *c = NULL;
	unsigned int prev;
	int err = -PT_ENOMEM;

	if (!weight || !nbits || !value || !n || n >= (1ull << HUFFMAN_MAX_BITS) - 1)
		return -PT_EINVAL;
	len = malloc(m);
	c = malloc(m * sizeof(*c));
	if (!len || !c || limited_lengths(weight, m, 1, len))
		goto out;
	for (i = 0; i < m; i++)
		c[i] = (struct canon){ len[i], i == n ? UINT32_MAX : i };
	qsort(c, m, sizeof(*c), by_length);
	prev = c[0].len;
	for (i = 0; i < m; i++) {
		code <<= c[i].len - prev;
		prev = c[i].len;
		if (c[i].sym != UINT32_MAX) {
			uint64_t mask = c[i].len >= 64 ? ~0ull : (1ull << c[i].len) - 1;

			nbits[c[i].sym] = c[i].len;
			value[c[i].sym] = huffman_reading_order(~code & mask, c[i].len);
		}
		code++;
	}
	err = 0;
out:
	free(len);
	free(c);
	return err;
}

int huffman_canonical(const uint8_t *nbits, uint32_t n, uint64_t *value)
{
	struct canon *c;
	uint64_t code = 0;
	unsigned int prev;
	uint32_t i;

	if (!nbits || !value || !n)
		return -PT_EINVAL;
	c = malloc((size_t)n * sizeof(*c));
	if (!c)
		return -PT_ENOMEM;
	for (i = 0; i < n; i++)
		c[i] = (struct canon){ nbits[i], i };
	qsort(c, n, sizeof(*c), by_length);
	prev = c[0].len;
	for (i = 0; i < n; i++) {
		code <<= c[i].len - prev;
		prev = c[i].len;
		value[c[i].sym] = huffman_reading_order(code++, c[i].len);
	}
	free(c);
	return 0;
}

int huffman_lengths(const uint64_t *weight, uint32_t n, uint8_t *nbits)
{
	if (!weight || !nbits || !n || n > UINT32_MAX / 2)
		return -PT_EINVAL;
	if (n == 1) {
		nbits[0] = 1;
		return 0;
	}
	return limited_lengths(weight, n, 0, nbits);
}
