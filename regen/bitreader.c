// SPDX-License-Identifier: GPL-2.0
/* regen_read_bits: LSB-first bit reading across 64-bit words; the context of witness words (regen.h). */
#include "bitreader.h"

uint64_t regen_read_bits(struct regen_bitreader *br, unsigned int n)
{
	return br_read(br, n);
}

uint64_t regen_seg_limit(struct regen_bitreader *br, uint64_t pos)
{
	return br_seg_limit(br, pos);
}

uint64_t regen_reset_limit(struct regen_bitreader *br, uint64_t pos)
{
	return br_reset_limit(br, pos);
}

void regen_ctx_set(struct regen_bitreader *br, uint32_t func, uint32_t row, uint64_t pos)
{
	br_ctx_set(br, func, row, pos);
}

uint32_t regen_ctx_row(const struct regen_bitreader *br, uint32_t func)
{
	return br_ctx_row(br, func);
}

uint32_t regen_ctx_row_of(const struct regen_func *f, const struct regen_bitreader *br)
{
	return br_ctx_row_of(f, br);
}

int regen_at_seg_start(const struct regen_bitreader *br)
{
	uint32_t lo = 0, hi = br->nseg_starts;

	while (lo < hi) {	/* the first segment start at or after pos */
		uint32_t mid = lo + (hi - lo) / 2;

		if (br->seg_starts[mid] < br->pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < br->nseg_starts && br->seg_starts[lo] == br->pos;
}
