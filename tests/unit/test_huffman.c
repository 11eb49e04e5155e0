// SPDX-License-Identifier: GPL-2.0
/*
 * huffman_code: prefix-free in reading order (LSB first), the all-zero
 * word reserved, complete (Kraft sum 1 with the reserved word), shorter
 * words for heavier symbols, balanced for equal weights, within
 * HUFFMAN_MAX_BITS for any weights, deterministic; huffman_lengths the
 * same without the reserved word.
 */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/error.h>
#include <pathtrace/huffman.h>

#include "unit.h"

/* Checks one code; returns 1 when every property holds. */
static int code_ok(const uint64_t *w, uint32_t n, const uint8_t *nb, const uint64_t *v)
{
	uint32_t i, j, longest = 0;
	double kraft = 0;

	for (i = 0; i < n; i++) {
		if (nb[i] < 1 || nb[i] > HUFFMAN_MAX_BITS || !v[i] || v[i] >> nb[i])
			return 0;
		if (nb[i] > longest)
			longest = nb[i];
		kraft += 1.0 / (double)(1ull << nb[i]);
		for (j = 0; j < n; j++) {
			if (j == i || nb[j] > nb[i])
				continue;
			if ((v[i] & ((1ull << nb[j]) - 1)) == v[j])
				return 0;	/* j's word starts i's */
			if (w[i] > w[j] && nb[i] > nb[j] + 1 && w[i] / 2 > w[j] + 1)
				return 0;	/* much heavier, yet longer */
		}
	}
	/* the reserved all-zero word of the longest length completes the code */
	kraft += 1.0 / (double)(1ull << longest);
	return kraft > 0.999999 && kraft < 1.000001;
}

static void test_small(void)
{
	uint64_t w1[1] = { 7 }, w3[3] = { 5, 5, 10 }, w4[4] = { 1, 1, 1, 1 }, v[4];
	uint8_t nb[4];

	CU_ASSERT_EQUAL_FATAL(huffman_code(w1, 1, nb, v), 0);
	CU_ASSERT_EQUAL(nb[0], 1);
	CU_ASSERT_EQUAL(v[0], 1);
	CU_ASSERT_EQUAL_FATAL(huffman_code(w3, 3, nb, v), 0);
	CU_ASSERT_EQUAL(nb[2], 1);
	CU_ASSERT(code_ok(w3, 3, nb, v));
	/* equal weights over 4 + 1 words: three of 2 bits, one of 3 beside the reserved one */
	CU_ASSERT_EQUAL_FATAL(huffman_code(w4, 4, nb, v), 0);
	CU_ASSERT_EQUAL(nb[0] + nb[1] + nb[2] + nb[3], 9);
	CU_ASSERT(code_ok(w4, 4, nb, v));
	CU_ASSERT_EQUAL(huffman_code(w4, 0, nb, v), -PT_EINVAL);
	CU_ASSERT_EQUAL(huffman_code(NULL, 2, nb, v), -PT_EINVAL);
}

/* Fibonacci weights would make 80-bit words: flattened to the limit. */
static void test_length_limit(void)
{
	uint64_t w[80], v[80];
	uint8_t nb[80];
	uint32_t i;

	w[0] = w[1] = 1;
	for (i = 2; i < 80; i++)
		w[i] = w[i - 1] + w[i - 2] < w[i - 1] ? UINT64_MAX : w[i - 1] + w[i - 2];
	CU_ASSERT_EQUAL_FATAL(huffman_code(w, 80, nb, v), 0);
	for (i = 0; i < 80; i++)
		CU_ASSERT(nb[i] >= 1 && nb[i] <= HUFFMAN_MAX_BITS);
	CU_ASSERT(code_ok(w, 80, nb, v));
}

static void test_random(void)
{
	uint64_t rng = unit_seed() * 2654435761u + 1, w[300], v[300], v2[300];
	uint8_t nb[300], nb2[300];
	uint32_t round, i, ok = 0;

	for (round = 0; round < 200; round++) {
		uint32_t n = 1 + (uint32_t)(rng % 300);

		for (i = 0; i < n; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			/* skewed: most rare, a few hot, as witnesses of kernel code */
			w[i] = (rng >> 33) % 4 ? (rng >> 40) % 8 : (rng >> 20) % 1000000;
		}
		CU_ASSERT_EQUAL_FATAL(huffman_code(w, n, nb, v), 0);
		CU_ASSERT_EQUAL_FATAL(huffman_code(w, n, nb2, v2), 0);
		ok += code_ok(w, n, nb, v) && !memcmp(nb, nb2, n) && !memcmp(v, v2, n * 8);
	}
	CU_ASSERT_EQUAL(ok, 200);
}

/*
 * huffman_lengths: no word reserved, so the lengths fill the code tree
 * (Kraft sum exactly 1), within the limit, heavier never longer.
 */
static void test_lengths(void)
{
	uint64_t rng = unit_seed() * 0x9e3779b97f4a7c15ull + 7, w[300], one = 3;
	uint64_t two[2] = { 1, 1000 }, four[4] = { 5, 5, 5, 5 };
	uint8_t nb[300];
	uint32_t round, i, j, ok = 0;

	CU_ASSERT_EQUAL_FATAL(huffman_lengths(&one, 1, nb), 0);
	CU_ASSERT_EQUAL(nb[0], 1);
	CU_ASSERT_EQUAL_FATAL(huffman_lengths(two, 2, nb), 0);
	CU_ASSERT(nb[0] == 1 && nb[1] == 1);
	CU_ASSERT_EQUAL_FATAL(huffman_lengths(four, 4, nb), 0);
	CU_ASSERT(nb[0] == 2 && nb[1] == 2 && nb[2] == 2 && nb[3] == 2);
	CU_ASSERT_EQUAL(huffman_lengths(four, 0, nb), -PT_EINVAL);
	CU_ASSERT_EQUAL(huffman_lengths(NULL, 2, nb), -PT_EINVAL);
	for (round = 0; round < 200; round++) {
		uint32_t n = 2 + (uint32_t)(rng % 299), good = 1;
		double kraft = 0;

		for (i = 0; i < n; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			w[i] = (rng >> 33) % 4 ? (rng >> 40) % 8 : (rng >> 20) % 1000000;
		}
		CU_ASSERT_EQUAL_FATAL(huffman_lengths(w, n, nb), 0);
		for (i = 0; i < n; i++) {
			good &= nb[i] >= 1 && nb[i] <= HUFFMAN_MAX_BITS;
			kraft += 1.0 / (double)(1ull << nb[i]);
			for (j = 0; j < n; j++)
				good &= !(w[i] > w[j] && nb[i] > nb[j]);
		}
		ok += good && kraft > 0.999999 && kraft < 1.000001;
	}
	CU_ASSERT_EQUAL(ok, 200);
}

/* Canonical words: shortest first, ties by index, LSB first; 0/1 0/1 0/1 by hand. */
static void test_canonical(void)
{
	static const uint8_t len[] = { 3, 1, 3, 2 };
	uint64_t v[4];

	CU_ASSERT_EQUAL_FATAL(huffman_canonical(len, 4, v), 0);
	CU_ASSERT_EQUAL(v[1], 0x0);	/* 0 */
	CU_ASSERT_EQUAL(v[3], 0x1);	/* 10, read first bit first: LSB 1 */
	CU_ASSERT_EQUAL(v[0], 0x3);	/* 110 */
	CU_ASSERT_EQUAL(v[2], 0x7);	/* 111 */
	CU_ASSERT_EQUAL(huffman_canonical(len, 0, v), -PT_EINVAL);
	CU_ASSERT_EQUAL(huffman_canonical(NULL, 4, v), -PT_EINVAL);
}

UNIT_SUITE(huffman,
	   { "canonical words from lengths", test_canonical },
	   { "small codes: one symbol, weights, balance, bad arguments", test_small },
	   { "length limit under Fibonacci weights", test_length_limit },
	   { "random weights: prefix-free, complete, ordered, deterministic", test_random },
	   { "lengths alone: complete without a reserved word", test_lengths })
