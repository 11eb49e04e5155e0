// SPDX-License-Identifier: GPL-2.0
/* regen_read_bits: LSB-first bit reading across 64-bit words (regen.h). */
#include "regen.h"

uint64_t regen_read_bits(struct regen_bitreader *br, unsigned int n)
{
	uint64_t w, off, v;

	if (n == 0)
		return 0;
	if (n > 64 || br->pos > br->nbits || br->nbits - br->pos < n) {
		br->eof = 1;
		return 0;
	}
	w = br->pos >> 6;
	off = br->pos & 63;
	v = br->bits[w] >> off;
	if (off + n > 64)
		v |= br->bits[w + 1] << (64 - off);
	if (n < 64)
		v &= (1ull << n) - 1;
	br->pos += n;
	return v;
}
