/* SPDX-License-Identifier: GPL-2.0 */
/*
 * huffman - prefix codes for witness codes (issue: entropy-coded traces):
 * the likelier a witness, the fewer bits it costs, as the 1994 paper's
 * fixed-width codes cannot.
 *
 * The codes are written LSB first, like every emission (encoding.h), so
 * a code is prefix-free in that order: no code's value is the low bits of
 * a longer one's. The all-zero word of the longest length is reserved and
 * never assigned (as code 0 was with fixed widths), so a run of zero bits
 * is never a code. With equal weights the lengths are those of a balanced
 * tree over n + 1 words: ceil(log2(n + 1)) bits or one less.
 */
#ifndef PATHTRACE_HUFFMAN_H
#define PATHTRACE_HUFFMAN_H

#include <stdint.h>

/* Longest code huffman_code makes; it flattens the weights until it fits. */
#define HUFFMAN_MAX_BITS 32

/*
 * Codes for n symbols of weights weight[0..n-1] (expected uses; 0 counts as
 * the least): nbits[i] (1..HUFFMAN_MAX_BITS) and value[i]. Deterministic:
 * ties go to the lower index. Returns 0; -PT_EINVAL for n == 0 or n >=
 * 2^HUFFMAN_MAX_BITS - 1, or NULL arrays; -PT_ENOMEM.
 */
int huffman_code(const uint64_t *weight, uint32_t n, uint8_t *nbits, uint64_t *value);

/*
 * The lengths alone of a Huffman code for n symbols, with no word reserved
 * (their words fill the code tree: the sum of 2^-nbits[i] is 1), limited to
 * HUFFMAN_MAX_BITS like huffman_code; one symbol gets 1 bit. Returns 0;
 * -PT_EINVAL for n == 0 or n > 2^31 - 1, or NULL arrays; -PT_ENOMEM.
 */
int huffman_lengths(const uint64_t *weight, uint32_t n, uint8_t *nbits);

/*
 * Canonical words for n symbols of lengths nbits[] (a prefix code's, e.g.
 * huffman_lengths'; 1..64 bits): shortest first, ties by index, written LSB
 * first into value[]. Returns 0; -PT_EINVAL for n == 0 or NULL arrays;
 * -PT_ENOMEM.
 */
int huffman_canonical(const uint8_t *nbits, uint32_t n, uint64_t *value);

/*
 * The low n bits of v reversed (n <= 64): a word's value (LSB first, as
 * written) as the number its bits make in reading order, and back.
 */
uint64_t huffman_reading_order(uint64_t v, unsigned int n);

#endif
